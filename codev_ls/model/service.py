"""``engine.services["model"]``: the model, for the chat, sub-agents and tools.

Present only when a provider is configured (tools that need a model check
``engine.services.get("model")`` and degrade without it). Offers:

- ``await complete(system, prompt, small=True, max_tokens=1024) -> str`` — one
  plain answer (WebFetch applies its prompt with it; summaries use it);
- ``await chat(prompt, session_id=...)`` — one user turn of the agent loop in a
  chat session (``codev/chat``, ``codev-ls chat``), cancellable with
  :meth:`cancel`;
- ``run_turn`` for sub-agents (the Agent tool) with their own session and tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING

from codev_ls.bridge import ProgressEvent
from codev_ls.engine.context import AbortSignal, Session
from codev_ls.model.config import ModelConfig, load_config
from codev_ls.model.errors import ModelError, ModelNotConfigured
from codev_ls.model.events import ChatEvent, EventCallback, StatusEvent, ToolUseEvent, TurnResult
from codev_ls.model.history import SUMMARY_SYSTEM
from codev_ls.model.loop import TurnOptions, run_turn
from codev_ls.model.providers import make_provider
from codev_ls.model.providers.base import Provider, stream_with_retry
from codev_ls.model.types import MessageComplete, ModelRequest

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine

log = logging.getLogger(__name__)


class ModelService:
    def __init__(self, engine: Engine, config: ModelConfig) -> None:
        self.engine = engine
        self.config = config
        self._provider: Provider | None = None
        # Running chat turns by session id: their abort signals.
        self._turns: dict[str, AbortSignal] = {}

    @property
    def context_window(self) -> int:
        """Tokens of the model's context window (MCP deferral sizes against it)."""
        return self.config.context_window

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(self.config)
        return self._provider

    async def aclose(self) -> None:
        for signal in list(self._turns.values()):
            signal.abort("the server is shutting down")
        if self._provider is not None:
            provider, self._provider = self._provider, None
            with contextlib.suppress(Exception):
                await provider.aclose()

    # ---------------------------------------------------------------- one-shot

    async def complete(
        self, system: str, prompt: str, *, small: bool = True, max_tokens: int = 1024
    ) -> str:
        """One answer to ``prompt`` (no tools, no history). Raises :class:`ModelError`."""
        request = ModelRequest(
            model=self.config.small_model if small else self.config.model,
            system=system,
            messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            max_tokens=max_tokens,
            cache=False,
        )
        async for event in stream_with_retry(self.provider, request):
            if isinstance(event, MessageComplete):
                return event.text
        raise ModelError("The model's answer ended without a message.")

    async def summarize(self, transcript: str) -> str:
        return await self.complete(SUMMARY_SYSTEM, transcript, small=False, max_tokens=2048)

    # ---------------------------------------------------------------- chat

    def chat_session(self, session_id: str | None) -> Session:
        """The chat session ``session_id`` (created when new or not given)."""
        if session_id:
            session = self.engine.sessions.get(session_id)
            if session is not None:
                return session
            return self.engine.new_session(id=session_id)
        return self.engine.new_session()

    def is_running(self, session_id: str) -> bool:
        return session_id in self._turns

    def cancel(self, session_id: str | None = None) -> int:
        """Interrupt the running turn of a session (or all); returns how many."""
        targets = [session_id] if session_id else list(self._turns)
        count = 0
        for sid in targets:
            signal = self._turns.get(sid)
            if signal is not None:
                signal.abort("interrupted by the user")
                count += 1
        return count

    async def chat(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        on_event: EventCallback | None = None,
        progress: bool = True,
        progress_id: str | None = None,
    ) -> TurnResult:
        """One user turn in a chat session, with a progress report for the whole turn.

        ``progress_id`` names the turn's progress (the LSP bridge maps a client's
        ``workDoneToken`` to it); by default a fresh ``chat_...`` id.

        Cancelling the calling task (``$/cancelRequest``) interrupts the turn the
        same way :meth:`cancel` does; the turn still ends cleanly (history closed,
        ``done`` sent) before the cancellation goes on.
        """
        session = self.chat_session(session_id)
        sid = session.id
        if sid in self._turns:
            return TurnResult(
                sid,
                "error",
                "",
                "A turn is already running in this chat session; cancel it or wait for it.",
            )
        abort = AbortSignal()
        self._turns[sid] = abort
        turn_id = progress_id or f"chat_{sid}_{uuid.uuid4().hex[:8]}"
        bridge = self.engine.bridge

        def report(event: ChatEvent) -> None:
            if progress:
                message = None
                if isinstance(event, ToolUseEvent):
                    message = f"{event.name}"
                elif isinstance(event, StatusEvent):
                    message = event.message
                if message:
                    with contextlib.suppress(Exception):
                        bridge.report_progress(
                            ProgressEvent("report", turn_id, message=message[:200])
                        )
            if on_event is not None:
                try:
                    on_event(event)
                except Exception:
                    log.exception("chat event listener failed")

        if progress:
            with contextlib.suppress(Exception):
                bridge.report_progress(
                    ProgressEvent(
                        "begin",
                        turn_id,
                        title="Codev: chat",
                        message=_short(prompt),
                        cancel=lambda: abort.abort("cancelled in the editor"),
                    )
                )
        task = asyncio.ensure_future(
            run_turn(self, session, prompt, abort=abort, options=TurnOptions(on_event=report))
        )
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            abort.abort("the request was cancelled")
            with contextlib.suppress(BaseException):
                await task
            raise
        finally:
            self._turns.pop(sid, None)
            if progress:
                with contextlib.suppress(Exception):
                    bridge.report_progress(ProgressEvent("end", turn_id))

    async def run_agent_turn(
        self,
        session: Session,
        prompt: str,
        *,
        abort: AbortSignal,
        options: TurnOptions,
    ) -> TurnResult:
        """A sub-agent's turn (no chat registry, no turn-wide progress)."""
        return await run_turn(self, session, prompt, abort=abort, options=options)


def _short(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def attach_model(engine: Engine, config: ModelConfig | None = None) -> ModelService | None:
    """Put a :class:`ModelService` in ``engine.services["model"]`` when a model is configured."""
    if config is None:
        try:
            config = load_config()
        except ModelNotConfigured:
            return None
    service = ModelService(engine, config)
    engine.services["model"] = service
    engine.on_close(service.aclose)
    return service


async def chat(
    engine: Engine,
    prompt: str,
    *,
    session_id: str | None = None,
    on_event: EventCallback | None = None,
) -> TurnResult:
    """``codev/chat``: one turn, or an error result saying how to configure a model."""
    service = engine.services.get("model")
    if not isinstance(service, ModelService):
        from codev_ls.model.errors import NOT_CONFIGURED_MESSAGE
        from codev_ls.model.events import DoneEvent

        sid = session_id or ""
        if on_event is not None:
            with contextlib.suppress(Exception):
                on_event(DoneEvent("error", NOT_CONFIGURED_MESSAGE))
        return TurnResult(sid, "error", "", NOT_CONFIGURED_MESSAGE)
    return await service.chat(prompt, session_id=session_id, on_event=on_event)


def cancel_chat(engine: Engine, session_id: str | None = None) -> int:
    service = engine.services.get("model")
    if isinstance(service, ModelService):
        return service.cancel(session_id)
    return 0


__all__ = ["ModelService", "attach_model", "cancel_chat", "chat"]
