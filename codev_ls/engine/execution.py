"""``run_tool_use``: the one lifecycle every tool use goes through.

The CLI, the LSP server, the agent loop and sub-agents all call it; no stage is
skipped for "internal" callers. It reads top to bottom as the stages:

    1. find the tool (name, then alias)
    2. schema validation (with the ToolSearch hint for deferred tools)
    3. validate_input
    4. PreToolUse hooks
    5. permission decision
    6. call, reporting progress
    7. map the result (persist if large)
    8. PostToolUse hooks
    9. the outcome

Each stage passes on or ends the run with a typed outcome. An interruption (the
abort signal, or the task being cancelled) at any stage ends it with
``interrupted``; an exception in a tool ends it with ``error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codev_ls.engine import telemetry
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.hooks import PostToolUseResult
from codev_ls.engine.outcome import (
    INTERRUPTED_MESSAGE,
    REJECTED_PREFIX,
    MessageUpdate,
    ProgressUpdate,
    StartedUpdate,
    ToolOutcome,
    ToolUseUpdate,
)
from codev_ls.engine.registry import find_tool
from codev_ls.engine.results import PersistError, content_length, persist_large_result
from codev_ls.engine.secrets import redact_outcome
from codev_ls.engine.tool import (
    InputError,
    Progress,
    Tool,
    ToolError,
    ToolInterrupted,
    ToolRejected,
    ToolResult,
    dump_input,
)
from codev_ls.permissions.decide import resolve_permission
from codev_ls.permissions.trust import ask_about_held_settings
from codev_ls.permissions.types import PermissionResult

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ToolUse:
    """A tool use as the model (or a user) asked for it."""

    id: str
    name: str
    input: Any = field(default_factory=dict)


# An interruption raised in any stage ends the run as ``interrupted``: every stage's
# catch-all handler lets these through first (ToolInterrupted is an Exception).
_INTERRUPTIONS = (asyncio.CancelledError, ToolInterrupted)


class _Stop(Exception):
    """Ends the lifecycle early with an outcome."""

    def __init__(self, outcome: ToolOutcome) -> None:
        self.outcome = outcome


async def run_tool_use(
    tool_use: ToolUse, ctx: ToolUseContext
) -> AsyncGenerator[ToolUseUpdate, None]:
    """Run one tool use, yielding progress and messages, ending with one :class:`ToolOutcome`."""
    run = _Run(tool_use, ctx)
    queue: asyncio.Queue[ToolUseUpdate | None] = asyncio.Queue()
    run.emit = queue.put_nowait
    task = asyncio.ensure_future(run.execute())
    task.add_done_callback(lambda _t: queue.put_nowait(None))
    # The abort signal (any thread) cancels the lifecycle wherever it is waiting;
    # ``execute`` turns that into the interrupted outcome after clean-up.
    loop = asyncio.get_running_loop()
    ctx.abort.on_abort(lambda: loop.call_soon_threadsafe(task.cancel))
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            yield item
        outcome = task.result()
    except GeneratorExit:
        # The consumer stopped listening: interrupt the run and clean up, yield nothing more.
        ctx.abort.abort("the run was abandoned")
        await _finish_cancelled(task)
        raise
    except asyncio.CancelledError:
        # The caller cancelled this run to interrupt it: the interrupted outcome is the answer.
        ctx.abort.abort("the run was cancelled")
        await _finish_cancelled(task)
        outcome = run.outcome_interrupted()
    yield outcome


async def _finish_cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel the lifecycle task and wait for its clean-up (killing processes, etc.)."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.shield(task)


def _meta_str(meta: dict[str, Any] | None, key: str) -> str | None:
    value = (meta or {}).get(key)
    return value if isinstance(value, str) and value else None


class _Run:
    """The state of one run: the stages as methods, in order."""

    def __init__(self, tool_use: ToolUse, ctx: ToolUseContext) -> None:
        self.use = tool_use
        self.ctx = ctx
        self.tool: Tool | None = None
        self.input: Any = None
        self.decision: PermissionResult | None = None
        self.emit: Callable[[ToolUseUpdate], None] = lambda _u: None
        self.additional_context: list[str] = []

    # ---------------------------------------------------------------- driver

    async def execute(self) -> ToolOutcome:
        span = telemetry.start_tool_span(self.use.name, self.use.id)  # None unless OTel is on
        outcome = redact_outcome(await self._stages())  # API keys never leave in an outcome
        telemetry.end_tool_span(span, outcome)
        return outcome

    async def _stages(self) -> ToolOutcome:
        try:
            tool = self.stage1_find_tool()
            self.input = self.stage2_schema(tool, self.use.input)
            self._started()
            await self.stage3_validate_input()
            pre = await self.stage4_pre_hooks()
            await self.stage5_permission(pre)
            result = await self.stage6_call()
            content, persisted = await self.stage7_map_result(result)
            content, post = await self.stage8_post_hooks(content)
            return self.stage9_outcome(result, content, persisted, post)
        except _Stop as stop:
            return stop.outcome
        except _INTERRUPTIONS:
            return self.outcome_interrupted()
        except Exception as exc:  # a bug in a stage must still end in an outcome
            return self.outcome_crash("running", exc)

    def _check_abort(self) -> None:
        if self.ctx.abort.aborted:
            raise ToolInterrupted(self.ctx.abort.reason)

    def _title(self) -> str:
        tool = self.tool
        assert tool is not None
        return f"{_call(lambda: tool.user_facing_name(self.input), tool.name)}: " + _call(
            lambda: tool.get_activity_description(self.input), "running"
        )

    def _started(self) -> None:
        tool = self.tool
        assert tool is not None
        self.emit(StartedUpdate(self.use.id, tool.name, self._title(), dump_input(self.input)))

    def _progress(self, progress: Progress) -> None:
        self.emit(ProgressUpdate(self.use.id, progress))

    # ---------------------------------------------------------------- 1. find

    def stage1_find_tool(self) -> Tool:
        tool = find_tool(self.ctx.tools, self.use.name)
        if tool is None:
            names = ", ".join(sorted(t.name for t in self.ctx.tools))
            raise _Stop(
                self.outcome_error(
                    f"No such tool available: {self.use.name}. Available tools: {names}."
                )
            )
        self.tool = tool
        return tool

    # ---------------------------------------------------------------- 2. schema

    def stage2_schema(self, tool: Tool, raw: Any) -> Any:
        try:
            return tool.parse_input(raw)
        except InputError as exc:
            message = exc.message
            # Only when the model really got the name alone (model/tool_defs.py: deferred
            # needs ToolSearch in the pool and no always_load) and has not loaded it since.
            deferred = (
                tool.should_defer
                and not tool.always_load
                and tool.name != "ToolSearch"
                and any(t.name == "ToolSearch" for t in self.ctx.tools)
            )
            if deferred and tool.name not in self.ctx.session.discovered_tools:
                message += (
                    f"\n\nThe schema of {tool.name} was not sent to you: it is a deferred tool. "
                    f'Load it first with ToolSearch (query "select:{tool.name}"), then call it '
                    "again with the parameters its schema names."
                )
            raise _Stop(self.outcome_error(message)) from exc

    # ---------------------------------------------------------------- 3. validate_input

    async def stage3_validate_input(self) -> None:
        assert self.tool is not None
        self._check_abort()
        try:
            verdict = await self.tool.validate_input(self.input, self.ctx)
        except _INTERRUPTIONS:
            raise
        except ToolError as exc:
            raise _Stop(self.outcome_error(exc.message)) from exc
        except Exception as exc:
            raise _Stop(self.outcome_crash("validating the input", exc)) from exc
        if not verdict.ok:
            raise _Stop(self.outcome_error(verdict.message))

    # ---------------------------------------------------------------- 4. PreToolUse hooks

    async def stage4_pre_hooks(self) -> PermissionResult | None:
        assert self.tool is not None
        self._check_abort()
        tool = self.tool
        # The workspace's own settings files may bring hooks and allow rules: they are
        # in force only once the user approved them (permissions/trust.py), asked here,
        # before any hook runs or any rule decides.
        try:
            await ask_about_held_settings(self.ctx)
        except (asyncio.CancelledError, ToolInterrupted):
            raise
        except Exception:
            log.exception("asking about the workspace's settings failed")
        try:
            pre = await self.ctx.engine.hooks.run_pre_tool_use(
                tool, dump_input(self.input), self.ctx, self._progress
            )
        except _INTERRUPTIONS:
            raise
        except Exception as exc:
            # A broken hook is shown to the user; it never silently allows.
            self.emit(
                MessageUpdate(self.use.id, "error", f"PreToolUse hook failed: {exc}", "pre_hooks")
            )
            return PermissionResult.ask("a PreToolUse hook failed, so the user decides")
        for msg in pre.messages:
            self.emit(MessageUpdate(self.use.id, msg.level, msg.text, "pre_hooks"))  # type: ignore[arg-type]
        self.additional_context.extend(pre.additional_context)
        if pre.stop:
            reason = pre.stop_reason or "A PreToolUse hook blocked this tool use."
            self._audit(PermissionResult.deny(reason, "hook"))  # a decision too: logged
            raise _Stop(self.outcome_rejected(reason, "hook", None))
        if pre.updated_input is not None:
            # A hook's input goes through the same checks as the model's: the schema,
            # then the tool's own validate_input (a rewritten path is checked for
            # being read first, a rewritten command for what Bash refuses...).
            self.input = self.stage2_schema(tool, pre.updated_input)
            await self.stage3_validate_input()
            title = self._title()
            self._progress(
                Progress("HookProgress", f"a PreToolUse hook changed the input; now: {title}")
            )
        return pre.decision

    # ---------------------------------------------------------------- 5. permission

    async def stage5_permission(self, hook_decision: PermissionResult | None) -> None:
        assert self.tool is not None
        self._check_abort()
        try:
            decision = await resolve_permission(self.tool, self.input, self.ctx, hook_decision)
        except _INTERRUPTIONS:
            raise
        except Exception as exc:
            raise _Stop(self.outcome_crash("deciding the permission", exc)) from exc
        self.decision = decision
        self._audit(decision)
        if decision.behavior != "allow":
            raise _Stop(self.outcome_rejected(decision.reason, decision.source, decision.rule))
        if decision.updated_input is not None and decision.updated_input is not self.input:
            self.input = decision.updated_input

    def _audit(self, decision: PermissionResult) -> None:
        audit = getattr(self.ctx.engine, "audit", None)
        if audit is None:
            return
        try:
            audit(self.ctx, self.tool, self.input, decision)
        except Exception:
            log.exception("audit log failed")

    # ---------------------------------------------------------------- 6. call

    async def stage6_call(self) -> ToolResult:
        assert self.tool is not None
        self._check_abort()
        try:
            result = await self.tool.call(self.input, self.ctx, self._progress)
        except _INTERRUPTIONS:
            raise
        except ToolRejected as exc:
            # e.g. the edit refused in the editor's preview: the user's decision, logged.
            self._audit(PermissionResult.deny(exc.reason, exc.source, exc.rule))  # type: ignore[arg-type]
            raise _Stop(self.outcome_rejected(exc.reason, exc.source, exc.rule)) from exc
        except ToolError as exc:
            raise _Stop(self.outcome_error(exc.message)) from exc
        except Exception as exc:
            raise _Stop(self.outcome_crash("running", exc)) from exc
        if not isinstance(result, ToolResult):
            result = ToolResult(result)
        return result

    # ---------------------------------------------------------------- 7. map result

    async def stage7_map_result(self, result: ToolResult) -> tuple[Any, str | None]:
        assert self.tool is not None
        try:
            block = self.tool.map_tool_result_to_block(result, self.use.id)
        except _INTERRUPTIONS:
            raise
        except Exception as exc:
            raise _Stop(self.outcome_crash("mapping the result", exc)) from exc
        content = block.get("content", "")
        if result.extra:
            content = _append_text(content, "\n".join(result.extra))
        limit = self.tool.max_result_size_chars
        if limit <= 0 or content_length(content) <= limit:
            return content, None  # the common case: no file, no thread hand-off
        try:
            persisted = await asyncio.to_thread(
                persist_large_result,
                content,
                folder=self.ctx.session.data_dir,
                tool_use_id=self.use.id,
                limit=limit,
            )
        except PersistError as exc:
            raise _Stop(self.outcome_error(str(exc))) from exc
        except OSError as exc:
            raise _Stop(
                self.outcome_error(f"The session's data folder is not writable: {exc}")
            ) from exc
        if persisted is None:
            return content, None
        return persisted.content, str(persisted.path)

    # ---------------------------------------------------------------- 8. PostToolUse hooks

    async def stage8_post_hooks(self, content: Any) -> tuple[Any, PostToolUseResult]:
        assert self.tool is not None
        try:
            post = await self.ctx.engine.hooks.run_post_tool_use(
                self.tool, dump_input(self.input), content, self.ctx, self._progress
            )
        except _INTERRUPTIONS:
            raise
        except Exception as exc:
            self.emit(
                MessageUpdate(self.use.id, "error", f"PostToolUse hook failed: {exc}", "post_hooks")
            )
            return content, PostToolUseResult()
        for msg in post.messages:
            self.emit(MessageUpdate(self.use.id, msg.level, msg.text, "post_hooks"))  # type: ignore[arg-type]
        if post.updated_output is not None and self.tool.source == "mcp":
            content = post.updated_output
        extra = [*self.additional_context, *post.additional_context]
        if post.block_reason:
            extra.append(f"PostToolUse hook feedback: {post.block_reason}")
        if extra:
            content = _append_text(content, "\n".join(extra))
        return content, post

    # ---------------------------------------------------------------- 9. outcome

    def stage9_outcome(
        self, result: ToolResult, content: Any, persisted: str | None, post: PostToolUseResult
    ) -> ToolOutcome:
        d = self.decision
        return ToolOutcome(
            tool_use_id=self.use.id,
            tool_name=self.tool.name if self.tool else self.use.name,
            status="success",
            content=content,
            decision_source=d.source if d else None,
            decision_rule=d.rule if d else None,
            decision_reason=d.reason if d and d.reason else None,
            # A tool that saved its own large output (Bash) says where in meta.
            persisted_path=persisted or _meta_str(result.meta, "persistedPath"),
            is_error=result.is_error or bool(post.block_reason),
            meta=result.meta,
        )

    # ---------------------------------------------------------------- outcome builders

    def _name(self) -> str:
        return self.tool.name if self.tool else self.use.name

    def outcome_error(self, message: str) -> ToolOutcome:
        d = self.decision
        return ToolOutcome(
            tool_use_id=self.use.id,
            tool_name=self._name(),
            status="error",
            content=cut_message(message),
            decision_source=d.source if d else None,
            decision_rule=d.rule if d else None,
        )

    def outcome_crash(self, doing: str, exc: BaseException) -> ToolOutcome:
        log.error("%s failed while %s", self._name(), doing, exc_info=exc)
        detail = str(exc) or type(exc).__name__
        return self.outcome_error(
            f"{self._name()} failed while {doing}: {type(exc).__name__}: {detail}"
        )

    def outcome_rejected(self, reason: str, source: Any, rule: str | None) -> ToolOutcome:
        text = f"{REJECTED_PREFIX}: {reason}" if source == "user_reject" else reason
        return ToolOutcome(
            tool_use_id=self.use.id,
            tool_name=self._name(),
            status="rejected",
            content=text or "Rejected.",
            decision_source=source,
            decision_rule=rule,
            decision_reason=reason or None,
        )

    def outcome_interrupted(self) -> ToolOutcome:
        d = self.decision
        return ToolOutcome(
            tool_use_id=self.use.id,
            tool_name=self._name(),
            status="interrupted",
            content=INTERRUPTED_MESSAGE,
            decision_source=d.source if d else None,
            decision_rule=d.rule if d else None,
        )


MAX_ERROR_CHARS = 8_000


def cut_message(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Keep error messages readable: a message that echoes a huge input is cut in the middle."""
    if len(message) <= limit:
        return message
    half = limit // 2
    return f"{message[:half]}\n… [{len(message) - limit:,} characters cut] …\n{message[-half:]}"


def _append_text(content: Any, text: str) -> Any:
    if isinstance(content, str):
        return f"{content}\n\n{text}" if content else text
    return [*content, {"type": "text", "text": text}]


def _call(fn: Callable[[], str], default: str) -> str:
    try:
        return str(fn())
    except Exception:
        return default


# --------------------------------------------------------------------------- draining, batches


UpdateCallback = Callable[[ToolUseUpdate], None]


async def drain(
    updates: AsyncGenerator[ToolUseUpdate, None], on_update: UpdateCallback | None = None
) -> ToolOutcome:
    """Consume a run's updates, returning its outcome."""
    outcome: ToolOutcome | None = None
    async for update in updates:
        if isinstance(update, ToolOutcome):
            outcome = update
        elif on_update is not None:
            on_update(update)
    assert outcome is not None, "run_tool_use ended without an outcome"
    return outcome


def is_concurrency_safe(tools: Sequence[Tool], use: ToolUse) -> bool:
    """Whether a use may run beside others: the tool says so for this input."""
    tool = find_tool(tools, use.name)
    if tool is None:
        return False
    try:
        return bool(tool.is_concurrency_safe(tool.parse_input(use.input)))
    except Exception:
        return False


def partition_batch(tools: Sequence[Tool], uses: Sequence[ToolUse]) -> list[list[int]]:
    """Group consecutive concurrency-safe uses; every other use is a group of its own."""
    groups: list[list[int]] = []
    for i, use in enumerate(uses):
        safe = is_concurrency_safe(tools, use)
        if safe and groups and groups[-1] and getattr(groups[-1], "safe", False):
            groups[-1].append(i)
            continue
        group: list[int] = _Group([i])
        group.safe = safe  # type: ignore[attr-defined]
        groups.append(group)
    return groups


class _Group(list):  # type: ignore[type-arg]
    safe: bool = False


async def run_batch(
    uses: Sequence[ToolUse],
    make_ctx: Callable[[ToolUse], ToolUseContext],
    on_update: UpdateCallback | None = None,
) -> list[ToolOutcome]:
    """Run one model turn's tool uses: safe ones in parallel, others one at a time, in order.

    Outcomes come back in the order the uses were asked.
    """
    if not uses:
        return []
    tools = make_ctx(uses[0]).tools
    outcomes: list[ToolOutcome | None] = [None] * len(uses)
    for group in partition_batch(tools, uses):
        results = await asyncio.gather(
            *(drain(run_tool_use(uses[i], make_ctx(uses[i])), on_update) for i in group)
        )
        for i, outcome in zip(group, results, strict=True):
            outcomes[i] = outcome
    return [o for o in outcomes if o is not None]
