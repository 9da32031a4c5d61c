"""``codev/chat``: one model turn for the editor — the seam the model issue fills.

The server's ``codev/chat`` handler (and the ``codev.chat`` command) only
parses the request and calls :func:`run_chat`; everything about models, the
agent loop and chat sessions lives behind it. Until a model provider is
configured (``engine.services["model"]``), the answer says how to configure
one; the tools keep working.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine

NO_MODEL_MESSAGE = (
    "No model is configured, so Codev cannot chat (the tools still work). "
    "Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy) to use Claude, or "
    "CODEV_PROVIDER=openai with OPENAI_API_KEY and OPENAI_BASE_URL for any "
    "OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, DeepSeek, Qwen...); "
    "CODEV_MODEL picks the model. Then restart the Codev language server."
)

# ``codev/chatEvent`` params: {sessionId, type: text|toolUse|toolResult|done, ...}.
ChatEventSink = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class ChatRequest:
    """A ``codev/chat`` request, parsed."""

    prompt: str
    session_id: str | None = None
    work_done_token: int | str | None = None


@dataclass(slots=True)
class ChatResult:
    """The ``codev/chat`` result."""

    session_id: str
    stop_reason: str
    text: str

    def to_protocol(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "stopReason": self.stop_reason, "text": self.text}


async def run_chat(engine: Engine, request: ChatRequest, emit: ChatEventSink) -> ChatResult:
    """Run one chat turn, streaming events through ``emit``; returns the turn's result."""
    session = engine.sessions.get(request.session_id or "")
    if session is None:
        kwargs = {"id": request.session_id} if request.session_id else {}
        session = engine.new_session(**kwargs)
    if engine.services.get("model") is None:
        engine.bridge.show_message("error", NO_MODEL_MESSAGE)
        emit({"sessionId": session.id, "type": "text", "delta": NO_MODEL_MESSAGE})
        emit({"sessionId": session.id, "type": "done", "stopReason": "error"})
        return ChatResult(session.id, "error", NO_MODEL_MESSAGE)
    # The model issue replaces this with the agent loop.
    emit({"sessionId": session.id, "type": "done", "stopReason": "error"})
    return ChatResult(session.id, "error", "The chat loop is not available in this build.")
