"""The Engine: one workspace's tools, rules, hooks and sessions, behind one bridge.

The LSP server, the terminal runner and the tests each make one Engine and
call :meth:`Engine.run_tool`; the agent loop calls :meth:`Engine.run_batch`.
Features that keep server-wide state (background tasks, MCP connections, the
model provider) attach themselves in :attr:`Engine.services` and register
their clean-up with :meth:`Engine.on_close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from codev_ls.bridge import EditorBridge, ProgressEvent
from codev_ls.engine.context import AbortSignal, Session, ToolUseContext
from codev_ls.engine.execution import ToolUse, UpdateCallback, drain, run_batch, run_tool_use
from codev_ls.engine.hooks import HookRunner, NoHooks
from codev_ls.engine.outcome import (
    MessageUpdate,
    ProgressUpdate,
    StartedUpdate,
    ToolOutcome,
    ToolUseUpdate,
)
from codev_ls.engine.registry import assemble_tool_pool, get_merged_tools
from codev_ls.engine.tool import Tool
from codev_ls.permissions.rules import PermissionContext
from codev_ls.permissions.types import PermissionMode

log = logging.getLogger(__name__)

CloseCallback = Callable[[], Awaitable[None] | None]
T = TypeVar("T")


class Engine:
    """Hosts the tool engine for one workspace."""

    def __init__(
        self,
        root: Path | str,
        bridge: EditorBridge,
        *,
        mode: PermissionMode = "default",
        base_tools: Sequence[Tool] | None = None,
        data_root: Path | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.bridge = bridge
        self.permission_context = PermissionContext(mode=mode, workspace_root=self.root)
        self.hooks: HookRunner = NoHooks()
        self.mcp_tools: list[Tool] = []
        # Built-ins; None means the registry's own list (tests pass their own).
        self.base_tools = list(base_tools) if base_tools is not None else None
        self.data_root = data_root
        self.session = self.new_session()
        self.sessions: dict[str, Session] = {self.session.id: self.session}
        self.services: dict[str, Any] = {}
        # Called with (ctx, tool, input, decision) after every permission decision.
        self.audit: Callable[..., None] | None = None
        self._close_callbacks: list[CloseCallback] = []
        self._session_end_callbacks: list[Callable[[str], None]] = []
        self._shown: set[str] = set()  # messages already shown to the user (_show_once)
        self._cpu_slots: asyncio.Semaphore | None = None  # made in the running loop
        self._running: dict[str, AbortSignal] = {}
        self._progress_started: set[str] = set()

    # ---------------------------------------------------------------- pool

    @property
    def mode(self) -> PermissionMode:
        return self.permission_context.mode

    def set_mode(self, mode: PermissionMode) -> None:
        self.permission_context.mode = mode

    def tool_pool(self) -> list[Tool]:
        """The tools the model sees: built-ins plus MCP tools, deny-filtered and sorted."""
        self.permission_context.refresh()  # an edited settings file may deny a tool
        return assemble_tool_pool(self.permission_context, self.mcp_tools, self.base_tools)

    def merged_tools(self) -> list[Tool]:
        return get_merged_tools(self.permission_context, self.mcp_tools, self.base_tools)

    # ---------------------------------------------------------------- sessions

    def new_session(self, **kwargs: Any) -> Session:
        session = Session(self.root, data_root=self.data_root, **kwargs)
        if hasattr(self, "sessions"):
            self.sessions[session.id] = session
        return session

    async def cpu_bound(self, fn: Callable[..., T], /, *args: Any) -> T:
        """Run CPU-bound work (numbering lines, decoding) in a thread, at most one per core.

        The default executor has more threads than this machine has cores; CPU-bound
        Python in all of them at once only fights over the interpreter lock, and a
        batch of Reads ran slower than the same Reads one after another.
        """
        if self._cpu_slots is None:
            self._cpu_slots = asyncio.Semaphore(max(1, os.cpu_count() or 1))
        async with self._cpu_slots:
            return await asyncio.to_thread(fn, *args)

    def end_session(self, session_id: str) -> None:
        """A session that will never be resumed (a sub-agent's): drop it and what
        services keep for it (the sandbox's private tmp), so a long-running server
        does not grow with every one."""
        self.sessions.pop(session_id, None)
        for callback in self._session_end_callbacks:
            try:
                callback(session_id)
            except Exception:
                log.exception("clean-up of session %s failed", session_id)

    def on_session_end(self, callback: Callable[[str], None]) -> None:
        self._session_end_callbacks.append(callback)

    def context(
        self,
        *,
        session: Session | None = None,
        tool_use_id: str | None = None,
        abort: AbortSignal | None = None,
        tools: list[Tool] | None = None,
    ) -> ToolUseContext:
        return ToolUseContext(
            engine=self,
            session=session or self.session,
            tool_use_id=tool_use_id or new_tool_use_id(),
            abort=abort or AbortSignal(),
            tools=tools if tools is not None else self.tool_pool(),
        )

    # ---------------------------------------------------------------- running

    async def run_tool(
        self,
        name: str,
        input: Any,
        *,
        session: Session | None = None,
        tool_use_id: str | None = None,
        abort: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        tools: list[Tool] | None = None,
    ) -> ToolOutcome:
        """Run one tool use through the whole lifecycle, with progress on the bridge."""
        ctx = self.context(session=session, tool_use_id=tool_use_id, abort=abort, tools=tools)
        return await self._drive(ToolUse(ctx.tool_use_id, name, input), ctx, on_update)

    async def run_batch(
        self,
        uses: Sequence[ToolUse],
        *,
        session: Session | None = None,
        abort: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
        tools: list[Tool] | None = None,
    ) -> list[ToolOutcome]:
        """One model turn's tool uses (safe ones in parallel), outcomes in order."""
        pool = tools if tools is not None else self.tool_pool()
        parent = abort or AbortSignal()

        def make_ctx(use: ToolUse) -> ToolUseContext:
            return self.context(
                session=session, tool_use_id=use.id, abort=AbortSignal(parent), tools=pool
            )

        contexts: dict[str, ToolUseContext] = {}

        def ctx_for(use: ToolUse) -> ToolUseContext:
            ctx = contexts.get(use.id)
            if ctx is None:
                ctx = contexts[use.id] = make_ctx(use)
                self._running[use.id] = ctx.abort
            return ctx

        forward = self._forwarder(on_update)
        try:
            return await run_batch(uses, ctx_for, forward)
        finally:
            for use in uses:
                self._running.pop(use.id, None)
                self._end_progress(use.id)

    def cancel(self, tool_use_id: str | None = None) -> int:
        """Interrupt one run (or all): returns how many were interrupted."""
        targets = [tool_use_id] if tool_use_id else list(self._running)
        count = 0
        for tid in targets:
            signal = self._running.get(tid)
            if signal is not None:
                signal.abort("interrupted by the user")
                count += 1
        return count

    async def _drive(
        self, use: ToolUse, ctx: ToolUseContext, on_update: UpdateCallback | None
    ) -> ToolOutcome:
        self._running[use.id] = ctx.abort
        try:
            return await drain(run_tool_use(use, ctx), self._forwarder(on_update))
        finally:
            self._running.pop(use.id, None)
            self._end_progress(use.id)

    def _forwarder(self, on_update: UpdateCallback | None) -> UpdateCallback:
        def forward(update: ToolUseUpdate) -> None:
            if isinstance(update, StartedUpdate):
                signal = self._running.get(update.tool_use_id)
                self._progress_started.add(update.tool_use_id)
                self.bridge.report_progress(
                    ProgressEvent(
                        "begin",
                        update.tool_use_id,
                        title=update.title,
                        cancel=(lambda s=signal: s.abort("cancelled in the editor"))
                        if signal
                        else None,
                    )
                )
            elif isinstance(update, ProgressUpdate):
                p = update.progress
                self.bridge.report_progress(
                    ProgressEvent(
                        "report", update.tool_use_id, message=p.message, percentage=p.percentage
                    )
                )
            elif isinstance(update, MessageUpdate):
                self._show_once(update)
            if on_update is not None:
                on_update(update)

        return forward

    def _show_once(self, update: MessageUpdate) -> None:
        """A hook's failure is shown to the user — once per distinct problem, so a
        hook broken for every tool use does not pile up notifications; the rest go
        to the log."""
        first = update.text.splitlines()[0] if update.text else ""
        if update.level == "info" or first in self._shown:
            with contextlib.suppress(Exception):
                self.bridge.show_message("log", f"Codev: {update.text}")
            return
        self._shown.add(first)
        with contextlib.suppress(Exception):
            self.bridge.show_message(update.level, f"Codev: {update.text}")

    def _end_progress(self, tool_use_id: str) -> None:
        if tool_use_id in self._progress_started:
            self._progress_started.discard(tool_use_id)
            with contextlib.suppress(Exception):
                self.bridge.report_progress(ProgressEvent("end", tool_use_id))

    # ---------------------------------------------------------------- shutdown

    def on_close(self, callback: CloseCallback) -> None:
        self._close_callbacks.append(callback)

    async def aclose(self) -> None:
        """Interrupt running tools and run every service's clean-up."""
        self.cancel()
        for callback in reversed(self._close_callbacks):
            try:
                result = callback()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                log.exception("clean-up failed")
        self._close_callbacks.clear()


def new_tool_use_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:24]}"
