"""Background sub-agents: started by ``Agent(run_in_background=true)``, read with TaskOutput.

A :class:`BackgroundAgent` writes its progress (each step) and, at the end,
its report to an output file in the session's data folder — the same shape as
a background command's output, so TaskOutput reads new output since its last
read and TaskStop interrupts it. The agents live in the engine's task manager
(``engine.services["tasks"]``) when there is one, else in a registry of their
own (``engine.services["agent_tasks"]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.engine.context import AbortSignal

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine


@dataclass
class BackgroundAgent:
    id: str
    description: str
    session_id: str
    output_path: Path
    abort: AbortSignal = field(default_factory=AbortSignal)
    command: str = ""
    kind: str = "agent"
    status: str = "running"  # running / completed / failed / killed
    exit_code: int | None = None
    started_at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    read_offset: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    stop_requested: bool = False
    runner: asyncio.Task[Any] | None = None
    report: str = ""

    @property
    def running(self) -> bool:
        return self.status == "running"

    def elapsed(self) -> float:
        return max(0.0, (self.ended_at or time.monotonic()) - self.started_at)

    def state_line(self) -> str:
        if self.running:
            return f"running for {self.elapsed():.0f}s"
        return f"{self.status} after {self.elapsed():.1f}s"

    def write(self, text: str) -> None:
        with self.output_path.open("a", encoding="utf-8") as fh:
            fh.write(text)

    async def stop(self) -> None:
        """Interrupt the agent and wait until it has ended."""
        self.stop_requested = True
        self.abort.abort("stopped by TaskStop")
        await self.finished.wait()


class AgentTaskRegistry:
    """Background agents when the engine has no task manager of its own."""

    def __init__(self) -> None:
        self.tasks: dict[str, BackgroundAgent] = {}

    def add(self, task: BackgroundAgent) -> None:
        self.tasks[task.id] = task

    def get(self, task_id: str) -> BackgroundAgent | None:
        return self.tasks.get(task_id.strip())

    async def stop(self, task: BackgroundAgent) -> None:
        await task.stop()

    async def aclose(self) -> None:
        running = [t for t in self.tasks.values() if t.running]
        for t in running:
            t.abort.abort("the server is shutting down")
        for t in running:
            if t.runner is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(t.runner), timeout=5)


def registry_of(engine: Engine) -> Any:
    """Where background agents are registered: the task manager (TaskOutput, TaskStop)."""
    try:
        from codev_ls.tools.tasks import get_task_manager
    except ImportError:  # no background tasks in this build: a registry of our own
        get_task_manager = None  # type: ignore[assignment]
    if get_task_manager is not None:
        return get_task_manager(engine)
    registry = engine.services.get("agent_tasks")
    if registry is None:
        registry = engine.services["agent_tasks"] = AgentTaskRegistry()
        engine.on_close(registry.aclose)
    return registry


def start_background(
    engine: Engine,
    *,
    description: str,
    session_id: str,
    output_dir: Path,
    run: Callable[[BackgroundAgent], Awaitable[str]],
) -> BackgroundAgent:
    """Start ``run(task)`` in the background; its return value is the final report."""
    task_id = f"agent_{uuid.uuid4().hex[:8]}"
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f"{task_id}.log"
    path.write_text("", encoding="utf-8")
    task = BackgroundAgent(
        id=task_id,
        description=description,
        session_id=session_id,
        output_path=path,
        command=f"Agent: {description}",
    )
    registry_of(engine).add(task)

    async def runner() -> None:
        try:
            report = await run(task)
            task.report = report
            task.write(f"\n=== Final report ===\n{report}\n")
            task.status = "killed" if task.stop_requested else "completed"
            task.exit_code = 0
        except asyncio.CancelledError:
            task.status = "killed"
            task.exit_code = 1
            raise
        except Exception as exc:
            task.write(f"\n=== The agent failed ===\n{exc}\n")
            task.status = "failed"
            task.exit_code = 1
        finally:
            task.ended_at = time.monotonic()
            task.finished.set()

    task.runner = asyncio.ensure_future(runner())
    return task
