"""Background tasks: Bash run_in_background, TaskOutput (BashOutput), TaskStop (KillShell)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from codev_ls.tools import _process, tasks
from codev_ls.tools.tasks import TaskManager, _complete_utf8_length
from tests.unit.tools.bash_helpers import (
    make_engine,
    marker_sleep,
    procs_with,
    sandbox_mode,
    wait_until,
)

__all__ = ["sandbox_mode"]  # a fixture


async def start(engine, command: str, **extra) -> str:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    outcome = await engine.run_tool(
        "Bash", {"command": command, "run_in_background": True, **extra}
    )
    assert outcome.status == "success", outcome.text()
    assert time.monotonic() - t0 < 5, "starting a background task must return at once"
    task_id = outcome.meta["taskId"]
    assert task_id in outcome.text()
    return task_id


def new_output(outcome) -> str:  # type: ignore[no-untyped-def]
    return outcome.text().split("New output:\n", 1)[1]


async def test_lifecycle_start_read_complete(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    task_id = await start(engine, "for i in 1 2 3; do echo n$i; sleep 0.2; done; echo err >&2")
    manager = engine.services["tasks"]
    assert isinstance(manager, TaskManager)
    assert manager.get(task_id).running
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id, "block": True})
    assert outcome.status == "success"
    assert outcome.meta["status"] == "completed" and outcome.meta["exitCode"] == 0
    assert "n1\nn2\nn3\nerr" in outcome.text()
    assert "completed (exit code 0)" in outcome.text()
    # Nothing new the second time.
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id})
    assert "No new output since the last read." in outcome.text()
    assert outcome.meta["newBytes"] == 0
    # The whole output stays in its file.
    assert Path(outcome.meta["outputPath"]).read_text() == "n1\nn2\nn3\nerr\n"
    await engine.aclose()


async def test_reads_return_only_new_output(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    task_id = await start(engine, "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second")
    task = engine.services["tasks"].get(task_id)
    assert await asyncio.to_thread(wait_until, lambda: task.sink.total_bytes > 0, 10)
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id})
    assert new_output(outcome) == "first"
    assert outcome.meta["status"] == "running"
    assert "running for" in outcome.text()
    (workspace / "go").touch()
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id, "block": True})
    assert new_output(outcome) == "second"
    await engine.aclose()


async def test_block_times_out_while_running(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    task_id = await start(engine, m)
    t0 = time.monotonic()
    outcome = await engine.run_tool(
        "BashOutput", {"task_id": task_id, "block": True, "timeout": 300}
    )
    assert 0.25 < time.monotonic() - t0 < 5
    assert outcome.meta["status"] == "running"
    assert "Still running" in outcome.text()
    await engine.aclose()
    assert not procs_with(m)


async def test_stop_kills_the_group(workspace: Path, sandbox_mode: str) -> None:
    engine, _bridge = make_engine(workspace)
    m = marker_sleep()
    task_id = await start(engine, f"{m} & {m} & wait")
    assert await asyncio.to_thread(wait_until, lambda: len(procs_with(m)) >= 2, 10)
    outcome = await engine.run_tool("TaskStop", {"task_id": task_id})
    assert outcome.status == "success", outcome.text()
    assert outcome.meta["status"] == "killed"
    assert "stopped" in outcome.text()
    assert not procs_with(m)
    # Stopping it again is an error the model can act on; the alias works too.
    outcome = await engine.run_tool("KillShell", {"task_id": task_id})
    assert outcome.status == "error" and "not running" in outcome.text()
    await engine.aclose()


async def test_failed_and_timed_out_statuses(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    failed = await start(engine, "echo bye; exit 7")
    m = marker_sleep()
    slow = await start(engine, m, timeout=300)
    outcome = await engine.run_tool("TaskOutput", {"task_id": failed, "block": True})
    assert outcome.meta["status"] == "failed" and outcome.meta["exitCode"] == 7
    assert "exit code 7" in outcome.text()
    outcome = await engine.run_tool("TaskOutput", {"task_id": slow, "block": True})
    assert outcome.meta["status"] == "timed_out"
    assert not procs_with(m)
    await engine.aclose()


async def test_unknown_task_id_lists_known_tasks(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool("TaskOutput", {"task_id": "bash_nope"})
    assert outcome.status == "error"
    assert "No background tasks have been started" in outcome.text()
    task_id = await start(engine, "true")
    outcome = await engine.run_tool("TaskStop", {"task_id": "bash_nope"})
    assert outcome.status == "error" and task_id in outcome.text()
    await engine.aclose()


async def test_tasks_end_with_the_engine(
    workspace: Path, sandbox_mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_process, "DEFAULT_GRACE_SECONDS", 0.3)
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    await start(engine, f"{m}")
    await start(engine, f"trap '' TERM; {m}")
    assert await asyncio.to_thread(wait_until, lambda: len(procs_with(m)) >= 2, 10)
    await engine.aclose()
    assert not procs_with(m)
    manager = engine.services["tasks"]
    assert all(t.status == "killed" for t in manager.tasks.values())
    # A closed manager starts nothing new.
    outcome = await engine.run_tool("Bash", {"command": "echo late", "run_in_background": True})
    assert outcome.status == "error" and "shutting down" in outcome.text()
    assert engine.services["sandbox"]._tmp_dirs == {}  # nothing made after the close


async def test_large_new_output_is_previewed(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, _ = make_engine(workspace)
    task_id = await start(engine, "seq 1 100000")
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id, "block": True})
    text = outcome.text()
    assert len(text) < tasks.INLINE_LIMIT_CHARS + 2_000
    assert "\n1\n2\n3\n" in text and "99999\n100000" in text
    assert outcome.meta["outputPath"] in text
    assert outcome.meta["newBytes"] == outcome.meta["totalBytes"]
    outcome = await engine.run_tool("TaskOutput", {"task_id": task_id})
    assert outcome.meta["newBytes"] == 0
    await engine.aclose()


async def test_progress_while_blocking(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    task_id = await start(engine, "echo tick; sleep 2.5; echo tock")
    seen = []
    await engine.run_tool(
        "TaskOutput",
        {"task_id": task_id, "block": True},
        on_update=lambda u: seen.append(u.progress) if hasattr(u, "progress") else None,
    )
    assert seen and seen[0].type == "TaskOutputProgress"
    assert seen[0].message.splitlines()[-1] == "tick"
    await engine.aclose()


def test_complete_utf8_length() -> None:
    data = "aé码😀".encode()
    assert _complete_utf8_length(data) == len(data)
    for cut in range(1, 4):
        partial = data[:-cut]
        assert _complete_utf8_length(partial) == len("aé码".encode())
    assert _complete_utf8_length(b"") == 0
    assert _complete_utf8_length(b"abc") == 3
