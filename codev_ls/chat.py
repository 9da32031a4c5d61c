"""``codev/chat`` for the editor: the LSP side of a chat turn.

The server's ``codev/chat`` handler (and the ``codev.chat`` command) only
parses the request and calls :func:`run_chat`; the turn itself — model, agent
loop, sessions — is ``codev_ls.model.service`` (``engine.services["model"]``).
This module adds what belongs to the editor: every event carries its
``sessionId`` (``codev/chatEvent``), a client's ``workDoneToken`` becomes the
turn's progress bar, and without a model the answer (and a message) says how
to configure one; the tools keep working.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine

# ``codev/chatEvent`` params: {sessionId, type: text|toolUse|toolResult|status|done, ...}.
# "status" (retries, context trimming, a tool's current step) is an extension of
# PROTOCOL.md v1 and only ever informational: the answer's text always comes as "text"
# events, so a client that ignores unknown types loses nothing.
ChatEventSink = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class ChatRequest:
    """A ``codev/chat`` request, parsed."""

    prompt: str
    session_id: str | None = None
    work_done_token: int | str | None = None


async def run_chat(engine: Engine, request: ChatRequest, emit: ChatEventSink) -> dict[str, Any]:
    """Run one chat turn, streaming events through ``emit``; returns the ``codev/chat`` result."""
    from codev_ls.model.service import ModelService

    service = engine.services.get("model")
    if not isinstance(service, ModelService):
        return _no_model(engine, request, emit)
    session = service.chat_session(request.session_id)
    sid = request.session_id = session.id  # the server cancels the turn by it
    progress_id = f"chat_{sid}_{uuid.uuid4().hex[:8]}"
    use_token = getattr(engine.bridge, "use_client_token", None)
    if request.work_done_token is not None and use_token is not None:
        use_token(progress_id, request.work_done_token)

    def on_event(event: Any) -> None:
        emit({"sessionId": sid, **event.to_protocol()})

    try:
        result = await service.chat(
            request.prompt, session_id=sid, on_event=on_event, progress_id=progress_id
        )
    finally:
        if use_token is not None:
            use_token(progress_id, None)
    return result.to_protocol()


def cancel_chats(engine: Engine, session_id: str | None) -> int:
    """Interrupt the running turn of a chat session (or every one)."""
    from codev_ls.model.service import cancel_chat

    return cancel_chat(engine, session_id)


def _no_model(engine: Engine, request: ChatRequest, emit: ChatEventSink) -> dict[str, Any]:
    from codev_ls.model.errors import NOT_CONFIGURED_MESSAGE

    sid = request.session_id or uuid.uuid4().hex[:16]
    engine.bridge.show_message("error", f"Codev: {NOT_CONFIGURED_MESSAGE}")
    emit({"sessionId": sid, "type": "text", "delta": NOT_CONFIGURED_MESSAGE})
    emit({"sessionId": sid, "type": "done", "stopReason": "error", "error": NOT_CONFIGURED_MESSAGE})
    return {
        "sessionId": sid,
        "stopReason": "error",
        "text": NOT_CONFIGURED_MESSAGE,
        "error": NOT_CONFIGURED_MESSAGE,
    }
