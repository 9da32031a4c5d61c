"""Background tasks: Bash's ``run_in_background``, TaskOutput (alias BashOutput), TaskStop
(alias KillShell).

The :class:`TaskManager` lives in ``engine.services["tasks"]`` (made on first
use) and closes with the engine: every task still running is killed — its
whole process group — when the server stops. A task's output goes to a file
in its session's data folder from the first byte (memory stays flat), and
TaskOutput reads what is new since its last read from that file.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import Session, ToolUseContext
from codev_ls.engine.tool import (
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._process import GroupProcess, OutputSink, describe_exit

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine

TaskStatus = Literal["running", "completed", "failed", "killed", "timed_out"]

# New output shown inline per read; more comes as head + tail with the file's path.
INLINE_LIMIT_CHARS = 30_000
PREVIEW_HEAD_CHARS = 12_000
PREVIEW_TAIL_CHARS = 12_000
DEFAULT_BLOCK_TIMEOUT_MS = 30_000
MAX_BLOCK_TIMEOUT_MS = 600_000


@dataclass
class BackgroundTask:
    """One command running (or run) in the background."""

    id: str
    command: str
    description: str
    session_id: str
    cwd: Path
    output_path: Path
    sandboxed: bool
    proc: GroupProcess
    sink: OutputSink
    timeout_ms: int | None = None
    started_at: float = field(default_factory=time.monotonic)
    status: TaskStatus = "running"
    exit_code: int | None = None
    # Bytes of the output file already returned by TaskOutput.
    read_offset: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    stop_requested: bool = False

    @property
    def running(self) -> bool:
        return self.status == "running"

    def elapsed(self) -> float:
        end = self.proc.ended_at or time.monotonic()
        return max(0.0, end - self.started_at)

    def state_line(self) -> str:
        """``running for 12s`` / ``completed (exit code 0) after 3.1s``."""
        if self.running:
            return f"running for {self.elapsed():.0f}s"
        code = self.exit_code if self.exit_code is not None else -1
        if self.status == "timed_out":
            return f"timed out after {self.elapsed():.1f}s and was stopped ({describe_exit(code)})"
        if self.status == "killed":
            return f"stopped after {self.elapsed():.1f}s ({describe_exit(code)})"
        return f"{self.status} ({describe_exit(code)}) after {self.elapsed():.1f}s"


class TaskManager:
    """The engine's background tasks."""

    def __init__(self) -> None:
        self.tasks: dict[str, BackgroundTask] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self.closed = False
        _LIVE.add(self)

    # ---------------------------------------------------------------- start / stop

    def start(
        self,
        argv: Sequence[str],
        *,
        command: str,
        description: str,
        cwd: Path,
        env: Mapping[str, str] | None,
        session: Session,
        sandboxed: bool,
        timeout_ms: int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> BackgroundTask:
        """Spawn ``argv`` now (on the loop's thread) and watch it; returns at once.
        ``pass_fds``: descriptors the command gets (the sandbox's; the caller closes them)."""
        if self.closed:
            raise ToolError("The server is shutting down; no new background tasks start.")
        task_id = f"bash_{uuid.uuid4().hex[:8]}"
        output_path = session.data_dir / "tasks" / f"{task_id}.log"
        sink = OutputSink(output_path, keep_bytes=0, always_file=True)
        proc = GroupProcess(argv, cwd=cwd, env=env, sink=sink, pass_fds=pass_fds)
        try:
            proc.start()
        except BaseException:
            sink.close()
            raise
        task = BackgroundTask(
            id=task_id,
            command=command,
            description=description,
            session_id=session.id,
            cwd=cwd,
            output_path=output_path,
            sandboxed=sandboxed,
            proc=proc,
            sink=sink,
            timeout_ms=timeout_ms,
            started_at=proc.started_at,
        )
        self.tasks[task_id] = task
        watcher = asyncio.ensure_future(self._watch(task))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return task

    async def _watch(self, task: BackgroundTask) -> None:
        timed_out = False
        try:
            if task.timeout_ms:
                try:
                    code = await asyncio.wait_for(task.proc.done(), task.timeout_ms / 1000)
                except TimeoutError:
                    timed_out = True
                    code = await task.proc.kill()
            else:
                code = await task.proc.done()
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.ensure_future(task.proc.kill()))
            code = task.proc.returncode if task.proc.returncode is not None else -1
            timed_out = False
        finally:
            task.sink.close()
        task.exit_code = code
        if timed_out:
            task.status = "timed_out"
        elif task.stop_requested or task.proc.killed:
            task.status = "killed"
        else:
            task.status = "completed" if code == 0 else "failed"
        task.finished.set()

    def add(self, task: Any) -> None:
        """Register a task that runs in-process (a background sub-agent, ``model/background.py``).

        It has the fields TaskOutput reads (``id``, ``command``, ``status``,
        ``output_path``, ``read_offset``, ``finished``, ``state_line()``...) and its
        own ``async stop()`` instead of a process.
        """
        if self.closed:
            raise ToolError("The server is shutting down; no new background tasks start.")
        self.tasks[task.id] = task

    def get(self, task_id: str) -> BackgroundTask | None:
        return self.tasks.get(task_id.strip())

    async def stop(self, task: BackgroundTask) -> None:
        """Kill the task's whole process group and wait until it is recorded as stopped."""
        task.stop_requested = True
        if _in_process(task):
            await task.stop()  # type: ignore[attr-defined]
            return
        await task.proc.kill()
        await task.finished.wait()

    async def aclose(self) -> None:
        """Kill every running task (the engine is closing)."""
        self.closed = True
        running = [t for t in self.tasks.values() if t.running]
        for t in running:
            t.stop_requested = True
        if running:
            await asyncio.gather(
                *(t.stop() if _in_process(t) else t.proc.kill() for t in running),  # type: ignore[attr-defined]
                return_exceptions=True,
            )
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.gather(*(t.finished.wait() for t in running)), timeout=5
                )
        _LIVE.discard(self)

    def kill_all_now(self) -> None:
        for t in self.tasks.values():
            if t.running and not _in_process(t):
                t.proc.kill_now()

    def describe_known(self) -> str:
        if not self.tasks:
            return "No background tasks have been started."
        items = [f"{t.id} ({t.status}: {_short(t.command, 60)})" for t in self.tasks.values()]
        return "Known tasks: " + ", ".join(items) + "."

    # ---------------------------------------------------------------- output

    def read_new(self, task: BackgroundTask) -> tuple[str, int]:
        """The output written since the last read (head + tail when large); new bytes.

        Reads only what it returns: a huge output never comes into memory whole.
        """
        try:
            size = os.path.getsize(task.output_path)
        except OSError:
            size = 0
        start = min(task.read_offset, size)
        new = size - start
        if new <= 0:
            return "", 0
        with open(task.output_path, "rb") as fh:
            if new <= INLINE_LIMIT_CHARS * 4:
                fh.seek(start)
                data = fh.read(new)
                if task.running:
                    data = data[: _complete_utf8_length(data)]
                text = data.decode("utf-8", errors="replace")
                if len(text) <= INLINE_LIMIT_CHARS:
                    task.read_offset = start + len(data)
                    return text, len(data)
                head = text[:PREVIEW_HEAD_CHARS]
                tail = text[-PREVIEW_TAIL_CHARS:]
                end = start + len(data)
            else:
                fh.seek(start)
                head = fh.read(PREVIEW_HEAD_CHARS * 4).decode("utf-8", errors="replace")
                head = head[:PREVIEW_HEAD_CHARS]
                fh.seek(size - PREVIEW_TAIL_CHARS * 4)
                tail_bytes = fh.read(PREVIEW_TAIL_CHARS * 4)
                if task.running:
                    tail_bytes = tail_bytes[: _complete_utf8_length(tail_bytes)]
                end = size - PREVIEW_TAIL_CHARS * 4 + len(tail_bytes)
                tail = tail_bytes.decode("utf-8", errors="replace")[-PREVIEW_TAIL_CHARS:]
        task.read_offset = end
        text = (
            f"{head}\n\n… [{end - start:,} bytes of new output; the middle is not shown — the "
            f"whole output is in {task.output_path}; Read or Grep it] …\n\n{tail}"
        )
        return text, end - start


def _in_process(task: Any) -> bool:
    """A task without a process of its own (a background sub-agent)."""
    return not isinstance(task, BackgroundTask)


def _complete_utf8_length(data: bytes) -> int:
    """The length of ``data`` without a UTF-8 sequence cut at its end (still being written)."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        b = data[n - back]
        if b < 0x80:
            return n  # ASCII: complete
        if b >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return n if back >= need else n - back
    return n


_LIVE: weakref.WeakSet[TaskManager] = weakref.WeakSet()


@atexit.register
def _kill_leftovers() -> None:
    """Last resort: tasks of a server that exits without closing its engine die with it."""
    for manager in list(_LIVE):
        manager.kill_all_now()


def get_task_manager(engine: Engine) -> TaskManager:
    """The engine's task manager, made on first use and closed with the engine."""
    manager = engine.services.get("tasks")
    if manager is None:
        from codev_ls.tools.sandbox import get_sandbox

        # The sandbox (whose private tmp folders the tasks use) must close after the tasks:
        # clean-ups run in reverse order of registration.
        get_sandbox(engine)
        manager = TaskManager()
        engine.services["tasks"] = manager
        engine.on_close(manager.aclose)
    return manager


def _short(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _find_task(task_id: str, ctx: ToolUseContext) -> tuple[TaskManager, BackgroundTask]:
    manager = get_task_manager(ctx.engine)
    task = manager.get(task_id)
    if task is None:
        raise ToolError(f"No background task with id {task_id!r}. {manager.describe_known()}")
    return manager, task


# --------------------------------------------------------------------------- TaskOutput


class TaskOutputInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(
        description="The id of the background task (returned by Bash with run_in_background)."
    )
    block: bool = Field(
        default=False,
        description=(
            "Wait until the task finishes (or `timeout` passes) before returning. "
            "Without it, return at once with whatever is new."
        ),
    )
    timeout: int = Field(
        default=DEFAULT_BLOCK_TIMEOUT_MS,
        ge=0,
        le=MAX_BLOCK_TIMEOUT_MS,
        description=(
            f"With block: the longest wait in milliseconds (default {DEFAULT_BLOCK_TIMEOUT_MS}, "
            f"max {MAX_BLOCK_TIMEOUT_MS})."
        ),
    )


TASK_OUTPUT_PROMPT = """\
Reads the output of a background task (a Bash command started with run_in_background).
- Returns only the output written since your last TaskOutput call for that task, plus its \
status (running, completed, failed, killed, timed_out) and its exit code once it ended.
- `block: true` waits until the task ends or `timeout` ms pass (default 30000).
- Large new output comes as its start and end plus the path of the file holding all of it."""


class TaskOutputTool(Tool):
    name = "TaskOutput"
    aliases = ("BashOutput",)
    search_hint = "read output of a background shell task"
    input_model = TaskOutputInput
    progress_type = "TaskOutputProgress"

    def description(self) -> str:
        return "Read the new output and status of a background task."

    def prompt(self) -> str:
        return TASK_OUTPUT_PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: TaskOutputInput) -> str:
        return f"{'waiting for' if input.block else 'reading'} {input.task_id}"

    def render_tool_use_message(self, input: TaskOutputInput) -> str:
        return f"TaskOutput {input.task_id}{' (waiting)' if input.block else ''}"

    def to_auto_classifier_input(self, input: TaskOutputInput) -> str:
        return input.task_id

    def permission_subject(self, input: TaskOutputInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f"read the output of background task {input.task_id}")

    async def validate_input(self, input: TaskOutputInput, ctx: ToolUseContext) -> ValidationResult:
        manager = get_task_manager(ctx.engine)
        if manager.get(input.task_id) is None:
            return ValidationResult.fail(
                f"No background task with id {input.task_id!r}. {manager.describe_known()}"
            )
        return ValidationResult.success()

    async def call(
        self, input: TaskOutputInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        manager, task = _find_task(input.task_id, ctx)
        if input.block and task.running and input.timeout > 0:
            from codev_ls.tools.bash import PROGRESS_AFTER_SECONDS, progress_report

            async def report() -> None:
                await asyncio.sleep(PROGRESS_AFTER_SECONDS)
                while task.running and not _in_process(task):
                    on_progress(progress_report(task.proc, task.sink, "TaskOutputProgress"))
                    await asyncio.sleep(1.0)

            reporter = asyncio.ensure_future(report())
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(task.finished.wait(), input.timeout / 1000)
            finally:
                reporter.cancel()
        text, new_bytes = await asyncio.to_thread(manager.read_new, task)
        lines = [f"Task {task.id}: {task.state_line()} — `{_short(task.command, 120)}`"]
        if text:
            lines += ["New output:", text.rstrip("\n")]
        else:
            lines.append("No new output since the last read.")
        if input.block and task.running:
            lines.append(f"(Still running after waiting {input.timeout / 1000:g} s.)")
        meta = {
            "taskId": task.id,
            "status": task.status,
            "exitCode": task.exit_code,
            "newBytes": new_bytes,
            "totalBytes": (task.sink.total_bytes if not _in_process(task) else task.read_offset),
            "outputPath": str(task.output_path),
        }
        return ToolResult("\n".join(lines), meta=meta)


# --------------------------------------------------------------------------- TaskStop


class TaskStopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The id of the background task to stop.")


class TaskStopTool(Tool):
    name = "TaskStop"
    aliases = ("KillShell",)
    search_hint = "stop kill a background shell task"
    input_model = TaskStopInput

    def description(self) -> str:
        return "Stop a background task (kills the command and every process it started)."

    def prompt(self) -> str:
        return (
            "Stops a background task started with Bash run_in_background: the command and every "
            "process it started are terminated (SIGTERM, then SIGKILL). Returns its final status."
        )

    def get_activity_description(self, input: TaskStopInput) -> str:
        return f"stopping {input.task_id}"

    def render_tool_use_message(self, input: TaskStopInput) -> str:
        return f"TaskStop {input.task_id}"

    def to_auto_classifier_input(self, input: TaskStopInput) -> str:
        return input.task_id

    def permission_subject(self, input: TaskStopInput, ctx: ToolUseContext) -> PermissionSubject:
        task = get_task_manager(ctx.engine).get(input.task_id)
        what = f" (`{_short(task.command, 80)}`)" if task is not None else ""
        return PermissionSubject(summary=f"stop background task {input.task_id}{what}")

    async def validate_input(self, input: TaskStopInput, ctx: ToolUseContext) -> ValidationResult:
        manager = get_task_manager(ctx.engine)
        task = manager.get(input.task_id)
        if task is None:
            return ValidationResult.fail(
                f"No background task with id {input.task_id!r}. {manager.describe_known()}"
            )
        if not task.running:
            return ValidationResult.fail(
                f"Task {task.id} is not running: it {task.state_line()}. Nothing to stop."
            )
        return ValidationResult.success()

    async def call(
        self, input: TaskStopInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        manager, task = _find_task(input.task_id, ctx)
        if task.running:
            await asyncio.shield(asyncio.ensure_future(manager.stop(task)))
        text = (
            f"Task {task.id} ({_short(task.command, 120)}): {task.state_line()}.\n"
            f"Its output is in {task.output_path} (TaskOutput returns what you have not read yet)."
        )
        meta = {"taskId": task.id, "status": task.status, "exitCode": task.exit_code}
        return ToolResult(text, meta=meta)
