"""The agent loop: ask the model, run the tools it calls, give it the results, repeat.

One call of :func:`run_turn` is one user turn: the prompt joins the session's
history; each model step streams text (``text`` events) and tool calls
(``toolUse``); the calls run through ``Engine.run_batch`` — the one lifecycle,
concurrency-safe ones in parallel — and their outcomes go back to the model
as ``tool_result`` blocks (``toolResult`` events) until the model stops or the
turn limit is hit. An abort (the user's cancel) interrupts the model stream or
the running tools; the history is then closed properly (every ``tool_use``
has its ``tool_result``) and the turn ends with what was done so far.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codev_ls.engine.context import AbortSignal, Session
from codev_ls.engine.execution import ToolUse
from codev_ls.engine.outcome import ProgressUpdate, StartedUpdate, ToolOutcome, ToolUseUpdate
from codev_ls.model.errors import ModelError
from codev_ls.model.events import (
    ChatEvent,
    DoneEvent,
    StatusEvent,
    TextEvent,
    ToolResultEvent,
    ToolUseEvent,
    TurnResult,
)
from codev_ls.model.history import INTERRUPTED_NOTE, bound_context, conversation_of
from codev_ls.model.prompt import build_system_prompt
from codev_ls.model.providers.anthropic import INVALID_JSON_KEY
from codev_ls.model.providers.base import stream_with_retry
from codev_ls.model.tool_defs import tool_specs
from codev_ls.model.types import MessageComplete, ModelRequest, Retrying, TextDelta, ToolUseStart

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine
    from codev_ls.engine.tool import Tool
    from codev_ls.model.service import ModelService


@dataclass
class TurnOptions:
    """What varies between a user's chat and a sub-agent's run."""

    tools: Sequence[Tool] | None = None  # None: the engine's pool
    model: str | None = None
    max_turns: int | None = None
    # Sub-agents: the role text (their definition's body); None for the user's chat.
    agent_prompt: str | None = None
    on_event: Callable[[ChatEvent], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class _Aborted(Exception):
    def __init__(self, partial: list[dict[str, Any]]) -> None:
        self.partial = partial


async def run_turn(
    service: ModelService,
    session: Session,
    prompt: str | list[dict[str, Any]],
    *,
    abort: AbortSignal | None = None,
    options: TurnOptions | None = None,
) -> TurnResult:
    """Run one user turn in ``session``; never raises for model or tool failures."""
    options = options or TurnOptions()
    abort = abort or AbortSignal()
    engine: Engine = service.engine
    config = service.config
    emit = options.on_event or (lambda _e: None)
    conv = conversation_of(session)
    conv.add_user(prompt)
    pool = list(options.tools) if options.tools is not None else engine.tool_pool()
    model = options.model or config.model
    max_turns = options.max_turns or config.max_turns
    texts: list[str] = []
    steps = 0
    stop_reason = "end_turn"
    error: str | None = None

    def finish(reason: str, err: str | None = None) -> TurnResult:
        emit(DoneEvent(reason, err))
        return TurnResult(
            session.id, reason, "\n\n".join(t for t in texts if t.strip()), err, steps
        )

    while True:
        if abort.aborted:
            conv.add_user(INTERRUPTED_NOTE)
            return finish("cancelled")
        if steps >= max_turns:
            return finish("max_turns")
        steps += 1
        mode = session.mode or engine.mode
        specs, deferred = tool_specs(pool, session, config.context_window)
        system = build_system_prompt(
            session, pool, deferred=deferred, mode=mode, agent_prompt=options.agent_prompt
        )
        note = await bound_context(
            conv,
            config.context_window,
            service.summarize,
            overhead_chars=len(system) + sum(len(s.description) + 200 for s in specs),
        )
        if note:
            emit(StatusEvent(f"Context: {note}."))
        request = ModelRequest(model, system, conv.messages, specs, config.max_tokens)
        try:
            message = await _stream_step(service, request, abort, emit)
        except _Aborted as stop:
            conv.add_assistant(stop.partial)
            conv.add_user(INTERRUPTED_NOTE)
            texts.extend(b["text"] for b in stop.partial)
            return finish("cancelled")
        except ModelError as exc:
            error = exc.message
            partial = getattr(exc, "partial", None)
            if partial:
                conv.add_assistant(partial)
                texts.extend(b["text"] for b in partial)
            return finish("error", error)
        conv.record_usage(message.usage.context_tokens)
        texts.append(message.text)
        conv.add_assistant(message.content)
        uses = message.tool_uses
        if not uses:
            stop_reason = message.stop_reason if message.stop_reason != "tool_use" else "end_turn"
            return finish(stop_reason)
        outcomes = await _run_tools(engine, session, pool, uses, abort, emit)
        conv.add_user([o.to_tool_result_block() for o in outcomes])
        if abort.aborted:
            return finish("cancelled")


async def _stream_step(
    service: ModelService,
    request: ModelRequest,
    abort: AbortSignal,
    emit: Callable[[ChatEvent], None],
) -> MessageComplete:
    """One model request, streamed; raises :class:`_Aborted` with the partial text on abort."""
    partial: list[str] = []

    async def consume() -> MessageComplete:
        async for event in stream_with_retry(service.provider, request):
            if isinstance(event, TextDelta):
                partial.append(event.text)
                emit(TextEvent(event.text))
            elif isinstance(event, Retrying):
                emit(
                    StatusEvent(
                        f"Retrying in {event.delay:.1f} s (attempt {event.attempt}): {event.reason}"
                    )
                )
            elif isinstance(event, ToolUseStart):
                pass
            elif isinstance(event, MessageComplete):
                return event
        raise ModelError("The model's answer ended without a message.")

    def partial_blocks() -> list[dict[str, Any]]:
        text = "".join(partial)
        return [{"type": "text", "text": text}] if text.strip() else []

    task = asyncio.ensure_future(consume())
    waiter = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise
    finally:
        waiter.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise _Aborted(partial_blocks())
    try:
        return task.result()
    except ModelError as exc:
        exc.partial = partial_blocks()  # type: ignore[attr-defined]
        raise


async def _run_tools(
    engine: Engine,
    session: Session,
    pool: list[Tool],
    uses: list[dict[str, Any]],
    abort: AbortSignal,
    emit: Callable[[ChatEvent], None],
) -> list[ToolOutcome]:
    """The model's tool calls through the engine (one batch), outcomes in order."""
    ready: list[ToolUse] = []
    early: dict[str, ToolOutcome] = {}
    for block in uses:
        tool_input = block.get("input", {})
        emit(ToolUseEvent(block["id"], block["name"], tool_input))
        if isinstance(tool_input, dict) and INVALID_JSON_KEY in tool_input:
            early[block["id"]] = ToolOutcome(
                tool_use_id=block["id"],
                tool_name=block["name"],
                status="error",
                content=(
                    f"The input of this {block['name']} call was not valid JSON: "
                    f"{str(tool_input[INVALID_JSON_KEY])[:300]}. Call it again with a JSON object."
                ),
            )
            continue
        ready.append(ToolUse(block["id"], block["name"], tool_input))

    def on_update(update: ToolUseUpdate) -> None:
        if isinstance(update, StartedUpdate | ProgressUpdate):
            step = (
                update.title
                if isinstance(update, StartedUpdate)
                else f"{update.progress.message}"[:200]
            )
            emit(StatusEvent(step))

    outcomes: dict[str, ToolOutcome] = dict(early)
    if ready:
        results = await engine.run_batch(
            ready, session=session, abort=abort, on_update=on_update, tools=pool
        )
        for use, outcome in zip(ready, results, strict=True):
            outcomes[use.id] = outcome
    ordered = []
    for block in uses:
        outcome = outcomes.get(block["id"]) or ToolOutcome(
            tool_use_id=block["id"],
            tool_name=block["name"],
            status="interrupted",
            content="[Request interrupted by user for tool use]",
        )
        emit(ToolResultEvent(outcome))
        ordered.append(outcome)
    return ordered
