"""The real long runner over LSP: Bash's progress, its cancellation (the process is gone),
its permission prompt, and a long command never holding up other requests."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient

pytestmark = pytest.mark.asyncio


def _marker() -> str:
    """A sleep duration no other process uses: how the test finds the command's processes."""
    return f"{300 + uuid.uuid4().int % 10_000 / 10_000:.4f}"


def _processes_with(marker: str) -> list[int]:
    """PIDs (any namespace) whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"sleep {marker}" in cmdline and "bash -c" not in cmdline:
            found.append(int(entry))
    return found


async def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def _gone(marker: str, timeout: float = 10.0) -> None:
    await _wait_for(lambda: not _processes_with(marker), timeout)


def _bash(command: str, **extra: Any) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command, "description": "test"}, **extra}


def _begun(client: EditorClient) -> list[Any]:
    return [
        token
        for token, reports in client.progress_reports.items()
        if any(isinstance(r, types.WorkDoneProgressBegin) for r in reports)
    ]


@pytest.fixture(params=PRESETS)
async def shell(request: pytest.FixtureRequest, start_editor: StartEditor) -> EditorClient:
    return await start_editor(request.param, mode="bypassPermissions")


async def test_progress_cancel_kills_the_command(shell: EditorClient) -> None:
    marker = _marker()
    task = shell.request_task("codev/runTool", _bash(f"echo started; sleep {marker}"))
    await _wait_for(lambda: _processes_with(marker) and _begun(shell))
    [token] = _begun(shell)
    begin = shell.progress_reports[token][0]
    assert begin.title.startswith("Bash") and begin.cancellable is True
    shell.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    outcome = await asyncio.wait_for(task, 30)
    assert outcome["status"] == "interrupted", outcome
    await _gone(marker)


async def test_cancel_request_kills_the_command(start_editor: StartEditor) -> None:
    client = await start_editor(mode="bypassPermissions")
    marker = _marker()
    task = client.request_task("codev/runTool", _bash(f"sleep {marker}"), msg_id="bash-1")
    await _wait_for(lambda: _processes_with(marker))
    client.cancel_request("bash-1")
    outcome = await asyncio.wait_for(task, 30)
    assert outcome["status"] == "interrupted"
    await _gone(marker)


async def test_codev_cancel_kills_the_command(start_editor: StartEditor) -> None:
    client = await start_editor("neovim@v0.11.0", mode="bypassPermissions")
    marker = _marker()
    task = client.request_task(
        "codev/runTool", _bash(f"sleep {marker} & sleep {marker}; wait", toolUseId="toolu_sh")
    )
    await _wait_for(lambda: len(_processes_with(marker)) >= 2)
    assert (await client.request("codev/cancel", {"toolUseId": "toolu_sh"}))["cancelled"] == 1
    outcome = await asyncio.wait_for(task, 30)
    assert outcome["status"] == "interrupted"
    # The whole process group, the background child included.
    await _gone(marker)


async def test_bash_reports_its_latest_output(start_editor: StartEditor) -> None:
    client = await start_editor(mode="bypassPermissions")
    outcome = await client.request(
        "codev/runTool", _bash("for i in 1 2 3 4; do echo output-$i; sleep 1; done")
    )
    assert outcome["status"] == "success", outcome
    assert "output-4" in outcome["content"]
    [token] = client.progress_reports
    reports = [
        r.message
        for r in client.progress_reports[token]
        if isinstance(r, types.WorkDoneProgressReport) and r.message
    ]
    assert any("output-" in m for m in reports), reports
    assert isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)


async def test_a_long_command_does_not_hold_up_a_read(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(mode="bypassPermissions")
    (workspace / "a.txt").write_text("a\n")
    marker = _marker()
    task = client.request_task("codev/runTool", _bash(f"sleep {marker}"))
    await _wait_for(lambda: _processes_with(marker))
    started = time.monotonic()
    read = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    assert read["status"] == "success"
    assert time.monotonic() - started < 10
    assert not task.done()
    await client.request("codev/cancel", {})
    assert (await asyncio.wait_for(task, 30))["status"] == "interrupted"
    await _gone(marker)


async def test_shutdown_kills_running_commands(start_editor: StartEditor) -> None:
    client = await start_editor(mode="bypassPermissions")
    marker = _marker()
    task = client.request_task("codev/runTool", _bash(f"sleep {marker}"))
    await _wait_for(lambda: _processes_with(marker))
    await asyncio.wait_for(client.shutdown_session(), 30)
    assert (await task)["status"] == "interrupted"
    await _gone(marker)


async def test_a_lost_editor_kills_running_commands(start_editor: StartEditor) -> None:
    """The editor dies without shutdown: stdin closes, the server cleans up and exits."""
    client = await start_editor(mode="bypassPermissions")
    marker = _marker()
    client.request_task("codev/runTool", _bash(f"sleep {marker}"))
    await _wait_for(lambda: _processes_with(marker))
    server = client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()
    await asyncio.wait_for(server.wait(), 30)
    await _gone(marker)


async def test_the_bash_prompt_shows_the_command(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor("visual-studio-code")
    outcome = await client.request("codev/runTool", _bash("echo hello > greeting.txt"))
    assert outcome["status"] == "success", outcome
    [prompt] = client.prompts
    assert "Bash" in prompt.message and "echo hello > greeting.txt" in prompt.message
    assert (workspace / "greeting.txt").read_text() == "hello\n"
