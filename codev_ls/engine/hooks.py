"""PreToolUse / PostToolUse hooks: the seams of the lifecycle, and the command hooks.

``run_tool_use`` calls a :class:`HookRunner` at stage 4 (before the permission
decision) and stage 8 (after the result is mapped). :class:`NoHooks` passes
straight through; :class:`CommandHookRunner` runs the command hooks configured
in settings (``hooks.PreToolUse`` / ``hooks.PostToolUse``, see PROTOCOL.md):

- a matcher is a regex on the tool name (whole name; ``*`` or empty: every tool);
- each hook is a shell command run with the workspace as cwd, a JSON object on
  stdin (``session_id``, ``cwd``, ``hook_event_name``, ``tool_name``,
  ``tool_input``, ``tool_use_id``, ``permission_mode``; PostToolUse adds
  ``tool_response``) and a timeout (default 60 s); matching hooks run one after
  the other, each seeing the input the previous one updated;
- exit 0: stdout may be a JSON object — PreToolUse
  ``hookSpecificOutput.permissionDecision`` (allow/deny/ask) with
  ``permissionDecisionReason``, ``updatedInput``, ``additionalContext``;
  PostToolUse ``decision: "block"`` with ``reason``,
  ``hookSpecificOutput.additionalContext`` and, for MCP tools,
  ``hookSpecificOutput.updatedMCPToolOutput``;
- exit 2: block — stderr goes to the model;
- any other exit code, a crash, a timeout or unreadable JSON: an error shown to
  the user and logged. A broken PreToolUse hook never lets the tool through
  silently: the user is asked.

Hook processes run in their own process group and are killed (with their
children) on timeout and when the run is interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from codev_ls.engine.tool import Progress, ProgressCallback, Tool, ToolResultContent
from codev_ls.permissions.types import PermissionResult

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.permissions.settings import HookCommand, HookMatcher, SettingsManager

log = logging.getLogger(__name__)

# A hook's stdout/stderr beyond this is cut (a hook is not a data channel).
MAX_HOOK_OUTPUT = 1 << 20


@dataclass(slots=True)
class HookMessage:
    level: str  # "error" | "warning" | "info"
    text: str


@dataclass(slots=True)
class PreToolUseResult:
    messages: list[HookMessage] = field(default_factory=list)
    # A hook's permission decision (source "hook"); None when no hook decided.
    decision: PermissionResult | None = None
    # A replacement for the tool's input (validated again by the schema).
    updated_input: dict[str, Any] | None = None
    # A hook blocked the use (exit 2 or decision "deny" with stop): the reason goes to the model.
    stop: bool = False
    stop_reason: str = ""
    # Text added to the model's context alongside the result.
    additional_context: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PostToolUseResult:
    messages: list[HookMessage] = field(default_factory=list)
    # decision "block": the reason is given to the model with the result.
    block_reason: str | None = None
    # MCP tools only: the hook replaced the tool's output.
    updated_output: ToolResultContent | None = None
    additional_context: list[str] = field(default_factory=list)


class HookRunner(Protocol):
    async def run_pre_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PreToolUseResult: ...

    async def run_post_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        response: ToolResultContent,
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PostToolUseResult: ...


class NoHooks:
    """No hooks configured: every seam passes straight through."""

    async def run_pre_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PreToolUseResult:
        return PreToolUseResult()

    async def run_post_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        response: ToolResultContent,
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PostToolUseResult:
        return PostToolUseResult()


def hook_progress(event: str, command: str) -> Progress:
    return Progress(
        type="HookProgress",
        message=f"{event} hook: {_short(command)}",
        data={"event": event, "command": command},
    )


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- running one hook


@dataclass(slots=True)
class HookRun:
    """What one hook process did."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    # Set when the hook did not finish normally (timeout, could not start).
    failure: str | None = None


async def run_hook_command(
    hook: HookCommand,
    payload: dict[str, Any],
    *,
    cwd: str,
    env: dict[str, str],
    abort: Any = None,
) -> HookRun:
    """Run one command hook with ``payload`` as JSON on stdin; kill it on timeout or cancel."""
    try:
        proc = await asyncio.create_subprocess_shell(
            hook.command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(hook.command, None, "", "", f"could not start ({exc})")
    killed = False

    def kill() -> None:
        nonlocal killed
        killed = True
        _kill_group(proc)

    if abort is not None:
        abort.on_abort(kill)
    data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    try:
        out, err = await asyncio.wait_for(_communicate(proc, data), timeout=hook.timeout)
    except TimeoutError:
        kill()
        await _reap(proc)
        return HookRun(hook.command, None, "", "", f"timed out after {hook.timeout:g} s")
    except asyncio.CancelledError:
        kill()
        await asyncio.shield(_reap(proc))
        raise
    if killed:
        return HookRun(hook.command, proc.returncode, "", "", "interrupted")
    return HookRun(
        hook.command,
        proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
    )


async def _communicate(proc: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bytes]:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def feed() -> None:
        try:
            proc.stdin.write(data)  # type: ignore[union-attr]
            await proc.stdin.drain()  # type: ignore[union-attr]
        except (BrokenPipeError, ConnectionResetError):
            pass  # a hook that does not read its stdin is fine
        finally:
            with contextlib.suppress(Exception):
                proc.stdin.close()  # type: ignore[union-attr]

    async def read(stream: asyncio.StreamReader) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while chunk := await stream.read(65536):
            if size < MAX_HOOK_OUTPUT:
                chunks.append(chunk[: MAX_HOOK_OUTPUT - size])
            size += len(chunk)
        return b"".join(chunks)

    _, out, err = await asyncio.gather(feed(), read(proc.stdout), read(proc.stderr))
    await proc.wait()
    return out, err


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, OSError):
        proc.kill()


async def _reap(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=5)


# --------------------------------------------------------------------------- the runner


def matcher_matches(matcher: str, names: tuple[str, ...]) -> bool:
    """``*``/empty: every tool; otherwise a regex matching the whole tool name (or alias)."""
    if matcher in ("", "*"):
        return True
    try:
        pattern = re.compile(matcher)
    except re.error:
        return False
    return any(pattern.fullmatch(n) for n in names)


class CommandHookRunner:
    """Runs the command hooks of the settings at the lifecycle's seams."""

    def __init__(self, settings: SettingsManager) -> None:
        self.settings = settings

    def hooks_for(self, event: str, tool: Tool) -> list[HookCommand]:
        """The hooks that would run for ``tool`` at ``event``, in order, deduplicated."""
        matchers: list[HookMatcher] = self.settings.hooks_for(event)
        names = (tool.name, *tool.aliases)
        seen: set[str] = set()
        out: list[HookCommand] = []
        for m in matchers:
            if not matcher_matches(m.matcher, names):
                continue
            for hook in m.hooks:
                if hook.command not in seen:
                    seen.add(hook.command)
                    out.append(hook)
        return out

    def _env(self, ctx: ToolUseContext) -> dict[str, str]:
        env = dict(os.environ)
        env["CODEV_PROJECT_DIR"] = str(ctx.root)
        env["CLAUDE_PROJECT_DIR"] = str(ctx.root)
        return env

    def _payload(
        self, event: str, tool: Tool, tool_input: dict[str, Any], ctx: ToolUseContext
    ) -> dict[str, Any]:
        return {
            "session_id": ctx.session.id,
            "cwd": str(ctx.session.cwd or ctx.root),
            "hook_event_name": event,
            "tool_name": tool.name,
            "tool_input": tool_input,
            "tool_use_id": ctx.tool_use_id,
            "permission_mode": ctx.mode,
        }

    async def _run(
        self,
        event: str,
        hook: HookCommand,
        payload: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> HookRun:
        on_progress(hook_progress(event, hook.command))
        run = await run_hook_command(
            hook, payload, cwd=str(ctx.root), env=self._env(ctx), abort=ctx.abort
        )
        if run.failure or (run.exit_code not in (0, 2)):
            log.warning(
                "%s hook %r failed: %s", event, hook.command, run.failure or f"exit {run.exit_code}"
            )
        return run

    # ---------------------------------------------------------------- PreToolUse

    async def run_pre_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PreToolUseResult:
        result = PreToolUseResult()
        hooks = self.hooks_for("PreToolUse", tool)
        current = dict(tool_input)
        decisions: list[PermissionResult] = []
        for hook in hooks:
            ctx.check_abort()
            payload = self._payload("PreToolUse", tool, current, ctx)
            run = await self._run("PreToolUse", hook, payload, ctx, on_progress)
            name = _short(hook.command)
            if run.failure or run.exit_code not in (0, 2):
                problem = run.failure or f"exited with code {run.exit_code}"
                text = f"PreToolUse hook `{name}` {problem}" + _stderr_tail(run.stderr)
                result.messages.append(HookMessage("error", text))
                decisions.append(
                    PermissionResult.ask(
                        f"the PreToolUse hook `{name}` {problem}, so the user decides"
                    )
                )
                continue
            if run.exit_code == 2:
                result.stop = True
                result.stop_reason = (
                    run.stderr.strip() or f"Blocked by the PreToolUse hook `{name}`."
                )
                return result
            out = _parse_stdout(run.stdout)
            if isinstance(out, _Unreadable):
                result.messages.append(
                    HookMessage("error", f"PreToolUse hook `{name}` printed unreadable JSON: {out}")
                )
                decisions.append(
                    PermissionResult.ask(
                        f"the PreToolUse hook `{name}` gave an unreadable answer, so the user decides"
                    )
                )
                continue
            if out is None:
                if run.stdout.strip():
                    result.messages.append(HookMessage("info", run.stdout.strip()[:2000]))
                continue
            problem = self._apply_pre(out, name, result, decisions)
            if problem:
                result.messages.append(HookMessage("error", problem))
                decisions.append(PermissionResult.ask(f"{problem}, so the user decides"))
            if result.stop:
                return result
            if result.updated_input is not None:
                current = dict(result.updated_input)
        result.decision = _combine(decisions)
        return result

    def _apply_pre(
        self,
        out: dict[str, Any],
        name: str,
        result: PreToolUseResult,
        decisions: list[PermissionResult],
    ) -> str | None:
        """Apply one hook's JSON answer; a problem with it, or None."""
        if isinstance(out.get("systemMessage"), str):
            result.messages.append(HookMessage("warning", out["systemMessage"]))
        if out.get("continue") is False:
            result.stop = True
            result.stop_reason = str(
                out.get("stopReason") or f"Stopped by the PreToolUse hook `{name}`."
            )
            return None
        specific = out.get("hookSpecificOutput") or {}
        if not isinstance(specific, dict):
            return f"PreToolUse hook `{name}`: hookSpecificOutput must be an object"
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason") or out.get("reason") or ""
        if decision is None and out.get("decision") in ("approve", "block"):
            decision = "allow" if out["decision"] == "approve" else "deny"
        if not isinstance(reason, str):
            reason = str(reason)
        if decision is not None:
            if decision not in ("allow", "deny", "ask"):
                return (
                    f"PreToolUse hook `{name}`: permissionDecision must be allow, deny or ask, "
                    f"got {decision!r}"
                )
            label = reason or f"the PreToolUse hook `{name}` says {decision}"
            if decision == "allow":
                decisions.append(PermissionResult.allow(None, label, source="hook"))
            elif decision == "deny":
                decisions.append(PermissionResult.deny(label, source="hook"))
            else:
                decisions.append(PermissionResult.ask(label))
        updated = specific.get("updatedInput")
        if updated is not None:
            if not isinstance(updated, dict):
                return f"PreToolUse hook `{name}`: updatedInput must be an object"
            result.updated_input = updated
        context = specific.get("additionalContext")
        if isinstance(context, str) and context.strip():
            result.additional_context.append(context)
        return None

    # ---------------------------------------------------------------- PostToolUse

    async def run_post_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        response: ToolResultContent,
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PostToolUseResult:
        result = PostToolUseResult()
        for hook in self.hooks_for("PostToolUse", tool):
            ctx.check_abort()
            payload = self._payload("PostToolUse", tool, tool_input, ctx)
            payload["tool_response"] = (
                result.updated_output if result.updated_output is not None else response
            )
            run = await self._run("PostToolUse", hook, payload, ctx, on_progress)
            name = _short(hook.command)
            if run.failure or run.exit_code not in (0, 2):
                problem = run.failure or f"exited with code {run.exit_code}"
                result.messages.append(
                    HookMessage(
                        "error", f"PostToolUse hook `{name}` {problem}" + _stderr_tail(run.stderr)
                    )
                )
                continue
            if run.exit_code == 2:
                reason = run.stderr.strip() or f"The PostToolUse hook `{name}` objected."
                result.block_reason = _join(result.block_reason, reason)
                continue
            out = _parse_stdout(run.stdout)
            if isinstance(out, _Unreadable):
                result.messages.append(
                    HookMessage(
                        "error", f"PostToolUse hook `{name}` printed unreadable JSON: {out}"
                    )
                )
                continue
            if out is None:
                if run.stdout.strip():
                    result.messages.append(HookMessage("info", run.stdout.strip()[:2000]))
                continue
            problem = self._apply_post(out, name, tool, result)
            if problem:
                result.messages.append(HookMessage("error", problem))
        return result

    def _apply_post(
        self, out: dict[str, Any], name: str, tool: Tool, result: PostToolUseResult
    ) -> str | None:
        if isinstance(out.get("systemMessage"), str):
            result.messages.append(HookMessage("warning", out["systemMessage"]))
        decision = out.get("decision")
        if decision is not None and decision != "block":
            return (
                f'PostToolUse hook `{name}`: decision must be "block" when given, got {decision!r}'
            )
        if decision == "block":
            reason = out.get("reason") or f"The PostToolUse hook `{name}` objected."
            result.block_reason = _join(result.block_reason, str(reason))
        specific = out.get("hookSpecificOutput") or {}
        if not isinstance(specific, dict):
            return f"PostToolUse hook `{name}`: hookSpecificOutput must be an object"
        context = specific.get("additionalContext")
        if isinstance(context, str) and context.strip():
            result.additional_context.append(context)
        if "updatedMCPToolOutput" in specific:
            if tool.source != "mcp":
                return (
                    f"PostToolUse hook `{name}`: updatedMCPToolOutput is only for MCP tools; "
                    f"{tool.name}'s output was kept"
                )
            updated = specific["updatedMCPToolOutput"]
            if isinstance(updated, str) or (
                isinstance(updated, list)
                and all(isinstance(b, dict) and "type" in b for b in updated)
            ):
                result.updated_output = updated
            else:
                result.updated_output = json.dumps(updated, ensure_ascii=False)
        return None


class _Unreadable(str):
    """Why a hook's stdout that looked like JSON could not be read."""


def _parse_stdout(stdout: str) -> dict[str, Any] | _Unreadable | None:
    """A JSON object from stdout; None for plain text; _Unreadable for broken JSON."""
    text = stdout.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _Unreadable(f"{exc.msg} at line {exc.lineno}, column {exc.colno}")
    if not isinstance(data, dict):
        return _Unreadable("expected a JSON object")
    return data


def _combine(decisions: list[PermissionResult]) -> PermissionResult | None:
    """Several hooks' decisions: deny over ask over allow."""
    for behavior in ("deny", "ask", "allow"):
        for d in decisions:
            if d.behavior == behavior:
                return d
    return None


def _join(old: str | None, new: str) -> str:
    return f"{old}\n{new}" if old else new


def _stderr_tail(stderr: str) -> str:
    text = stderr.strip()
    if not text:
        return ""
    return ": " + text[-500:]
