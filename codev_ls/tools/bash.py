"""Bash: run a shell command in the workspace, sandboxed, with its output streamed.

- The command runs under ``bash -c`` in the session's working directory; a
  ``cd`` sticks for the next call of the same session. A command that ends
  outside the workspace does not take the session with it: the working
  directory is reset to the workspace root and the result says so (we chose
  reset over asking: it never blocks, and absolute paths still work).
- On Linux it runs inside bubblewrap (``sandbox.py``): filesystem read-only
  except the workspace and a private /tmp, no network unless allowed.
  ``dangerouslyDisableSandbox: true`` always asks the user. Where bwrap cannot
  run, the prompt and every result say so and every command asks.
- stdout and stderr share one pipe (merged in the order written); the output
  goes through bounded memory to a file in the session's data folder; more
  than 30 000 characters come back as a head-and-tail preview plus the file's
  path. The exit code is always reported.
- A timeout, an interruption (the abort signal, a cancelled task) or the end of
  the server kills the command's whole process group.
- After 2 s, progress reports carry the latest output lines and the elapsed time.
- ``run_in_background`` hands the command to the task manager (``tasks.py``)
  and returns its task id at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.files import is_within
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionResult, PermissionSubject
from codev_ls.tools._command import (
    classify_command,
    is_destructive_command,
    is_read_only_command,
    written_paths,
)
from codev_ls.tools._process import GroupProcess, OutputSink, describe_exit
from codev_ls.tools.sandbox import Sandbox, get_sandbox, network_hint, probe_bwrap

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# Output longer than this (characters) is persisted and previewed.
INLINE_LIMIT_CHARS = 30_000
PREVIEW_HEAD_CHARS = 12_000
PREVIEW_TAIL_CHARS = 12_000
# Progress: the first report after this long, then one per interval.
PROGRESS_AFTER_SECONDS = 2.0
PROGRESS_INTERVAL_SECONDS = 1.0
PROGRESS_LINES = 5

DANGEROUS_REASON = (
    "dangerouslyDisableSandbox is set: the command runs outside the sandbox, with full "
    "access to your files and the network"
)

# The shell wrapper: runs the command with `eval`, and on exit records where it ended up.
# The command arrives as an argument, so nothing in it is ever re-quoted. Where the
# directory is recorded is nothing the command can change: the file is opened on a
# descriptor before the command runs (no variable names it), and the EXIT trap writes
# only while that descriptor is still the file whose path (ours, quoted into the trap)
# it was opened as — a command that re-opens the descriptor elsewhere (`exec 63>x`)
# or swaps the file for a link gets nothing written.
CWD_FD = 63
_SHELL_SCRIPT = (
    "exec {fd}>{path} || exit 125; __codev_cmd=$1; set --; "
    "trap '[[ /dev/fd/{fd} -ef {path} ]] && builtin pwd -P >&{fd} 2>/dev/null' EXIT; "
    'eval "unset __codev_cmd; $__codev_cmd"'
)
# Variables of the server's environment that change how bash reads or runs the line
# (start-up files, where `cd x` goes, which options and traces are on): the permission
# system judged the line as a plain `bash -c` reads it.
UNSAFE_SHELL_ENV = (
    "BASH_ENV",
    "ENV",
    "CDPATH",
    "GLOBIGNORE",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_XTRACEFD",
    "PS4",
    "PROMPT_COMMAND",
)

_NETWORK_ERRORS = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Network is unreachable|"
    r"Name or service not known|getaddrinfo|nodename nor servname|Failed to establish a new "
    r"connection|Connection refused|network is unreachable|Could not connect",
    re.IGNORECASE,
)

PROMPT = """\
Runs a shell command (bash) in the workspace and returns its output (stdout and stderr \
merged, in order) and its exit code.

- The working directory persists between calls: a `cd` sticks. It never leaves the \
workspace: a command that ends outside it resets the working directory to the workspace \
root (the result says so). Prefer absolute paths.
- Quote paths that contain spaces: `cd "path with spaces"`.
- `timeout` is in milliseconds (default 120000, max 600000); on timeout the command and \
every process it started are killed.
- Output over 30000 characters is saved to a file; you get its head and tail and the \
file's path (Read or Grep it for the rest).
- `run_in_background: true` starts the command and returns a task id at once: read its \
output with TaskOutput, stop it with TaskStop. Use it for servers and watchers, not `&` \
(processes left running by `&` are stopped when the command ends).
- Commands get no input (stdin is empty); interactive programs must be given flags that \
make them non-interactive (e.g. `git commit -m`, `npm init -y`). Pagers are disabled.
- Prefer the dedicated tools: Glob to find files, Grep to search contents, Read to read \
files, Edit/Write to change them. Use Bash for builds, tests, git and other programs.
- Chain dependent commands with `&&`; use `;` only when later commands should run anyway.
- Write a short `description` (5-10 words) of what the command does."""


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    command: str = Field(description="The shell command to run.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=(
            f"Timeout in milliseconds (max {MAX_TIMEOUT_MS}); default {DEFAULT_TIMEOUT_MS}. "
            "A background task has no timeout unless one is given."
        ),
    )
    description: str | None = Field(
        default=None,
        description=(
            "What the command does in 5-10 words, in active voice, e.g. "
            '"Run the unit tests" or "Install project dependencies".'
        ),
    )
    run_in_background: bool = Field(
        default=False,
        description=(
            "Start the command in the background and return a task id at once; read its "
            "output with TaskOutput and stop it with TaskStop."
        ),
    )
    dangerously_disable_sandbox: bool = Field(
        default=False,
        alias="dangerouslyDisableSandbox",
        description=(
            "Run outside the sandbox (full filesystem and network access). The user is always "
            "asked. Only when a command cannot work sandboxed (e.g. it needs the network "
            "or writes outside the workspace) and the user should decide."
        ),
    )


class BashTool(Tool):
    name = "Bash"
    search_hint = "run shell commands, builds, tests, git"
    input_model = BashInput
    progress_type = "BashProgress"

    # ---------------------------------------------------------------- texts

    def description(self) -> str:
        return "Run a shell command in the workspace (sandboxed) and get its output and exit code."

    def prompt(self) -> str:
        return PROMPT + "\n\n" + _sandbox_prompt()

    def user_facing_name(self, input: Any = None) -> str:
        if isinstance(input, BashInput) and input.dangerously_disable_sandbox:
            return "Bash (no sandbox)"
        return "Bash"

    def get_activity_description(self, input: BashInput) -> str:
        if input.description:
            return input.description
        return f"running {_one_line(input.command, 60)}"

    def render_tool_use_message(self, input: BashInput) -> str:
        extra = " (background)" if input.run_in_background else ""
        return f"$ {_one_line(input.command, 200)}{extra}"

    def to_auto_classifier_input(self, input: BashInput) -> str:
        return input.command

    # ---------------------------------------------------------------- traits

    def is_read_only(self, input: BashInput) -> bool:
        if input.dangerously_disable_sandbox:
            return False
        return is_read_only_command(input.command)

    def is_concurrency_safe(self, input: BashInput) -> bool:
        return self.is_read_only(input)

    def is_destructive(self, input: BashInput) -> bool:
        return is_destructive_command(input.command) or overwrites_files(input.command)

    # ---------------------------------------------------------------- checks

    async def validate_input(self, input: BashInput, ctx: ToolUseContext) -> ValidationResult:
        if not input.command.strip():
            return ValidationResult.fail("command must not be empty.")
        if "\x00" in input.command:
            return ValidationResult.fail("command must not contain NUL characters.")
        return ValidationResult.success()

    def permission_subject(self, input: BashInput, ctx: ToolUseContext) -> PermissionSubject:
        cwd = ctx.session.cwd or ctx.root
        detail = input.command
        if input.description:
            detail = f"{input.command}\n\n# {input.description}"
        sandbox = get_sandbox(ctx.engine)
        force = None
        unavailable = sandbox.unavailable_reason()
        if input.dangerously_disable_sandbox:
            force = DANGEROUS_REASON
            detail += f"\n\n({DANGEROUS_REASON})"
        elif unavailable:
            detail += f"\n\n(no sandbox: {unavailable})"
            if ctx.mode != "bypassPermissions":
                # Every command is confirmed, saved allow rules included: they were given
                # for sandboxed commands. Turning the sandbox off in the settings (or
                # bypassPermissions) is how the user says otherwise.
                force = (
                    f"the sandbox cannot run ({unavailable}), so every command is confirmed; "
                    'turn the sandbox off ("sandbox": {"enabled": false}) to let the '
                    "permission rules decide alone"
                )
        try:
            writes = written_paths(input.command, cwd)
        except Exception:
            writes = []
        return PermissionSubject(
            summary=f"run `{_one_line(input.command, 120)}`",
            detail=detail,
            command=input.command,
            write_paths=writes,
            force_ask_reason=force,
        )

    async def check_permissions(self, input: BashInput, ctx: ToolUseContext) -> PermissionResult:
        """Ask for unsandboxed runs: always with dangerouslyDisableSandbox, and for every
        command where the sandbox should be on but cannot run (unless the user chose
        bypassPermissions)."""
        if input.dangerously_disable_sandbox:
            return PermissionResult.ask(DANGEROUS_REASON)
        reason = get_sandbox(ctx.engine).unavailable_reason()
        if reason and ctx.mode != "bypassPermissions":
            return PermissionResult.ask(
                f"the sandbox cannot run ({reason}), so every command is confirmed"
            )
        return PermissionResult.allow(updated_input=input)

    # ---------------------------------------------------------------- call

    async def call(
        self, input: BashInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        sandbox = get_sandbox(ctx.engine)
        notes: list[str] = []
        cwd = _start_cwd(ctx, notes)
        sandboxed = sandbox.active and not input.dangerously_disable_sandbox
        if not sandboxed:
            notes.extend(_unsandboxed_notes(sandbox, input))
        if input.run_in_background:
            return await self._start_background(input, ctx, sandbox, sandboxed, cwd, notes)

        private_tmp = sandbox.private_tmp(ctx.session)
        cwd_name = f".codev-cwd-{uuid.uuid4().hex[:12]}"
        cwd_host = private_tmp / cwd_name
        cwd_seen = f"/tmp/{cwd_name}" if sandboxed else str(cwd_host)
        argv = shell_argv(input.command, cwd_seen)
        confined = sandbox.wrap(argv, session=ctx.session, cwd=cwd) if sandboxed else None
        if confined is not None:
            argv = confined.argv
        out_path = ctx.session.data_dir / "bash" / f"{_safe_name(ctx.tool_use_id)}.log"
        sink = OutputSink(out_path, keep_bytes=INLINE_LIMIT_CHARS * 4)
        proc = GroupProcess(
            argv,
            cwd=cwd,
            env=command_env(sandboxed),
            sink=sink,
            pass_fds=confined.pass_fds if confined is not None else (),
        )
        try:
            proc.start()
        except OSError as exc:
            raise ToolError(f"The command could not be started: {exc}") from exc
        finally:
            if confined is not None:
                confined.close_fds()

        timeout_ms = input.timeout or DEFAULT_TIMEOUT_MS
        progress = asyncio.ensure_future(_report_progress(proc, sink, on_progress))
        timed_out = False
        completed = False
        try:
            try:
                code = await asyncio.wait_for(proc.done(), timeout_ms / 1000)
                completed = True
            except TimeoutError:
                timed_out = True
                code = await proc.kill()
        except BaseException:
            # Interrupted (the engine cancels this task on abort): stop the whole group first.
            await asyncio.shield(asyncio.ensure_future(proc.kill()))
            raise
        finally:
            progress.cancel()
            sink.close()
            if not completed:
                with contextlib.suppress(OSError):
                    cwd_host.unlink()
            if confined is not None:
                notes.extend(confined.finish())
        if completed:
            _update_cwd(ctx, cwd_host, notes)

        text, persisted = await asyncio.to_thread(_render_output, sink)
        if persisted:
            notes.insert(0, persisted)
        if timed_out:
            status = (
                f"Timed out after {_seconds(timeout_ms)}: the command and every process it "
                f"started were stopped ({describe_exit(code)})."
            )
        else:
            status = f"Exit code: {code}" if code >= 0 else f"Exit: {describe_exit(code)}"
        network_blocked = sandboxed and not sandbox.config.allow_network
        if network_blocked and code != 0 and _NETWORK_ERRORS.search(text):
            notes.append(network_hint())
        parts = [text if text else "(no output)", "", status]
        if notes:
            parts += ["", *notes]
        meta = {
            "exitCode": code,
            "timedOut": timed_out,
            "sandboxed": sandboxed,
            "cwd": str(ctx.session.cwd),
            "outputBytes": sink.total_bytes,
            "outputLines": sink.total_lines,
            "durationMs": int(((proc.ended_at or time.monotonic()) - proc.started_at) * 1000),
            "classification": classify_command(input.command),
        }
        if sink.file_written and sink.error is None:
            meta["outputPath"] = str(out_path)
            meta["persistedPath"] = str(out_path)  # the outcome's persistedPath (PROTOCOL)
        return ToolResult("\n".join(parts), is_error=timed_out or code != 0, meta=meta)

    async def _start_background(
        self,
        input: BashInput,
        ctx: ToolUseContext,
        sandbox: Sandbox,
        sandboxed: bool,
        cwd: Path,
        notes: list[str],
    ) -> ToolResult:
        from codev_ls.tools.tasks import get_task_manager

        argv = shell_argv(input.command, "/dev/null")
        confined = sandbox.wrap(argv, session=ctx.session, cwd=cwd) if sandboxed else None
        if confined is not None:
            argv = confined.argv
            notes = [*confined.finish_before(), *notes]
        manager = get_task_manager(ctx.engine)
        try:
            task = manager.start(
                argv,
                command=input.command,
                description=input.description or "",
                cwd=cwd,
                env=command_env(sandboxed),
                session=ctx.session,
                sandboxed=sandboxed,
                timeout_ms=input.timeout,
                pass_fds=confined.pass_fds if confined is not None else (),
            )
        except OSError as exc:
            raise ToolError(f"The command could not be started: {exc}") from exc
        finally:
            if confined is not None:
                confined.close_fds()
        lines = [
            f"Started in the background as task {task.id}.",
            f'Read its output with TaskOutput (task_id "{task.id}"); stop it with TaskStop.',
            f"Its whole output is also written to {task.output_path}.",
        ]
        if input.timeout:
            lines.append(f"It is stopped after {_seconds(input.timeout)}.")
        else:
            lines.append("It runs until it exits, is stopped, or the server stops.")
        lines += notes
        meta = {"taskId": task.id, "sandboxed": sandboxed, "outputPath": str(task.output_path)}
        return ToolResult("\n".join(lines), meta=meta)


# --------------------------------------------------------------------------- helpers


def overwrites_files(command: str) -> bool:
    """Whether the command replaces a file's content: ``> file`` (not ``>>``), or ``tee``
    without ``-a``. Overwriting throws the old content away, so it counts as destructive."""
    from codev_ls.permissions.shell import parse_command

    try:
        parsed = parse_command(command)
    except Exception:  # not parsed: look for a plain ">" that is not ">>" or a dup
        return bool(re.search(r"(?<![>&0-9])>(?![>&])", command))
    if any(r.kind == "write" and r.writes_file for r in parsed.redirects):
        return True
    for cmd in parsed.commands:
        if cmd.name != "tee":
            continue
        options = [w for w in cmd.argv[1:] if w.startswith("-") and w != "-"]
        appends = any(w == "--append" or (not w.startswith("--") and "a" in w[1:]) for w in options)
        files = [w for w in cmd.argv[1:] if not w.startswith("-") and not w.startswith("/dev/")]
        if files and not appends:
            return True
    return False


def shell_argv(command: str, cwd_file: str) -> list[str]:
    """``bash -c`` running ``command`` and recording its final directory in ``cwd_file``
    (a path this module chose: it is quoted into the wrapper, the command is not)."""
    shell = shutil.which("bash") or "/bin/sh"
    script = _SHELL_SCRIPT.replace("{fd}", str(CWD_FD)).replace("{path}", shlex.quote(cwd_file))
    return [shell, "-c", script, "bash", command]


def command_env(sandboxed: bool) -> dict[str, str]:
    """The command's environment: ours, with pagers and git prompts turned off and the
    variables that would make bash run the line otherwise than it was judged removed."""
    env = dict(os.environ)
    env.update(
        {
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "CODEV_LS": "1",
        }
    )
    if sandboxed:
        env["TMPDIR"] = "/tmp"
    for name in UNSAFE_SHELL_ENV:
        env.pop(name, None)
    return env


def _start_cwd(ctx: ToolUseContext, notes: list[str]) -> Path:
    root = ctx.root
    cwd = ctx.session.cwd or root
    if cwd != root and (not cwd.is_dir() or not is_within(cwd, root)):
        notes.append(
            f"The working directory {cwd} no longer exists (or left the workspace); "
            f"the command ran in the workspace root {root}."
        )
        cwd = root
        ctx.session.cwd = root
    return cwd


def _update_cwd(ctx: ToolUseContext, cwd_file: Path, notes: list[str]) -> None:
    try:
        # Bounded: an unsandboxed command could have swapped the file for anything.
        with open(cwd_file, "rb") as fh:
            recorded = fh.read(8192).decode("utf-8", errors="surrogateescape").strip()
    except OSError:
        return  # the shell did not get to record it (exec, a signal): keep the old one
    finally:
        with contextlib.suppress(OSError):
            cwd_file.unlink()
    if not recorded:
        return
    root = ctx.root
    new = Path(recorded)
    if new.is_absolute() and new.is_dir() and is_within(new, root):
        ctx.session.cwd = Path(os.path.realpath(new))
        return
    ctx.session.cwd = root
    notes.append(
        f"The command ended in {recorded}, outside the workspace; the working directory was "
        f"reset to the workspace root {root}. Use absolute paths (or `cd dir && cmd` in one "
        "command) to work outside it."
    )


def _render_output(sink: OutputSink) -> tuple[str, str]:
    """The text to show and, when the output was persisted, the note saying where."""
    if sink.complete():
        text = bytes(sink.head).decode("utf-8", errors="replace")
        if len(text) <= INLINE_LIMIT_CHARS:
            return _strip_end(text), ""
        sink.write_file_from_memory()
        head_text, tail_text = text[:PREVIEW_HEAD_CHARS], text[-PREVIEW_TAIL_CHARS:]
    else:
        head_text = bytes(sink.head).decode("utf-8", errors="replace")[:PREVIEW_HEAD_CHARS]
        tail_text = bytes(sink.tail).decode("utf-8", errors="replace")[-PREVIEW_TAIL_CHARS:]
    head_text = _cut_to_line_end(head_text)
    tail_text = _cut_to_line_start(tail_text)
    shown = len(head_text) + len(tail_text)
    size = f"{sink.total_bytes:,} bytes, {sink.total_lines:,} lines"
    if sink.error is not None:
        where = (
            f"Output too large to show ({size}); it could not be saved "
            f"({sink.error.strerror or sink.error}), so only its start and end are shown."
        )
    else:
        where = (
            f"Output too large to show ({size}); it was saved to {sink.spill_path}. "
            "Read it with Read (offset/limit) or search it with Grep."
        )
    text = (
        f"{_strip_end(head_text)}\n\n"
        f"… [output cut: about {max(0, sink.total_bytes - shown):,} bytes in the middle "
        f"are not shown] …\n\n{_strip_end(tail_text)}"
    )
    return text, where


def _cut_to_line_end(text: str) -> str:
    nl = text.rfind("\n")
    return text[: nl + 1] if nl >= len(text) * 0.8 else text


def _cut_to_line_start(text: str) -> str:
    nl = text.find("\n")
    return text[nl + 1 :] if 0 <= nl <= len(text) * 0.2 else text


def _strip_end(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


async def _report_progress(
    proc: GroupProcess, sink: OutputSink, on_progress: ProgressCallback
) -> None:
    await asyncio.sleep(PROGRESS_AFTER_SECONDS)
    while proc.running:
        on_progress(progress_report(proc, sink, "BashProgress"))
        await asyncio.sleep(PROGRESS_INTERVAL_SECONDS)


def progress_report(proc: GroupProcess, sink: OutputSink, kind: Any) -> Progress:
    """Elapsed time and the latest output lines (the latest last)."""
    elapsed = time.monotonic() - proc.started_at
    lines = sink.tail_text(PROGRESS_LINES)
    head = f"Running for {elapsed:.0f}s, {sink.total_lines:,} lines of output"
    message = "\n".join([head, *lines]) if lines else f"{head} (no output yet)"
    return Progress(
        kind,
        message,
        data={
            "elapsedSeconds": round(elapsed, 1),
            "totalLines": sink.total_lines,
            "totalBytes": sink.total_bytes,
            "lastLines": lines,
        },
    )


def _sandbox_prompt() -> str:
    """The sandbox's state for the prompt (bwrap is probed once; settings are per workspace)."""
    if os.environ.get("CODEV_SANDBOX", "").strip().lower() in ("0", "false", "no", "off"):
        return (
            "Sandbox: off (CODEV_SANDBOX=0). Commands run with your full permissions; the "
            "user's permission rules decide what runs."
        )
    status = probe_bwrap()
    if not status.available:
        return (
            f"Sandbox: UNAVAILABLE — {status.reason}. Commands run without a sandbox, so the "
            "user is asked to confirm every command, even one a saved allow rule covers "
            "(unless the user turned the sandbox off in the settings, or chose "
            "bypassPermissions)."
        )
    return (
        "Sandbox: on (bubblewrap), unless the user turned it off in the settings. Commands "
        "can write only inside the workspace and /tmp (a private /tmp for this session); the "
        "rest of the filesystem is read-only, and the network is blocked unless the user "
        "allowed it (`sandbox.allowNetwork`); Unix sockets cannot be created (the host's "
        "docker, D-Bus or agent sockets are out of reach). Processes started by a command "
        "end with it. If "
        "a command fails because of the sandbox (read-only file system, no network), say so; "
        "rerunning it with `dangerouslyDisableSandbox: true` asks the user for permission."
    )


def _unsandboxed_notes(sandbox: Sandbox, input: BashInput) -> list[str]:
    if input.dangerously_disable_sandbox:
        return ["(Ran outside the sandbox: dangerouslyDisableSandbox, approved by the user.)"]
    reason = sandbox.unavailable_reason()
    if reason:
        return [f"(Ran without a sandbox: {reason}.)"]
    return []


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.strip().split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _safe_name(text: str) -> str:
    return _SAFE.sub("_", text) or "command"
