"""Progress (workDoneProgress) and interruption: progress cancel, $/cancelRequest, codev/cancel.

``TestSleep`` (tests/e2e/slow_tool.py) is a run of chosen length that reports
"tick N"; the real long runner, Bash, has its own tests in test_lsp_bash.py.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient

pytestmark = pytest.mark.asyncio


def _sleep(seconds: float, **extra: Any) -> dict[str, Any]:
    return {"name": "TestSleep", "input": {"seconds": seconds, "tick": 0.05}, **extra}


async def _wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def _begun(client: EditorClient) -> list[Any]:
    return [
        token
        for token, reports in client.progress_reports.items()
        if any(isinstance(r, types.WorkDoneProgressBegin) for r in reports)
    ]


@pytest.fixture(params=PRESETS)
async def slow(request: pytest.FixtureRequest, start_editor: StartEditor) -> EditorClient:
    return await start_editor(request.param, test_tools=True)


async def test_a_long_run_shows_progress(slow: EditorClient) -> None:
    outcome = await slow.request("codev/runTool", _sleep(1.0))
    assert outcome["status"] == "success"
    [token] = slow.progress_reports
    assert str(token).startswith("codev-")
    reports = slow.progress_reports[token]
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "TestSleep: sleeping 1s"
    assert begin.cancellable is True
    assert isinstance(end, types.WorkDoneProgressEnd)
    messages = [r.message for r in middle if isinstance(r, types.WorkDoneProgressReport)]
    assert messages and all(m.startswith("tick ") for m in messages)
    # Reports are throttled (at most ten a second) but the latest one is shown.
    assert len(messages) <= 12


async def test_a_quick_run_shows_no_progress(start_editor: StartEditor, workspace: Path) -> None:
    client = await start_editor(test_tools=True)
    (workspace / "a.txt").write_text("a\n")
    for _ in range(5):
        outcome = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
        assert outcome["status"] == "success"
    await client.request("codev/runTool", _sleep(0.01))
    assert client.progress_reports == {}


async def test_the_client_token_is_used(start_editor: StartEditor) -> None:
    client = await start_editor(test_tools=True)
    client.progress_reports["mine"] = []  # the client made it (no create request)
    outcome = await client.request("codev/runTool", _sleep(0.6, workDoneToken="mine"))
    assert outcome["status"] == "success"
    assert list(client.progress_reports) == ["mine"]
    kinds = [type(r).__name__ for r in client.progress_reports["mine"]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"


async def test_the_command_token_is_used(start_editor: StartEditor) -> None:
    client = await start_editor("neovim@v0.11.0", test_tools=True)
    client.progress_reports[7] = []
    outcome = await client.command(
        "codev.runTool", "TestSleep", {"seconds": 0.6, "tick": 0.05}, token=7
    )
    assert outcome["status"] == "success"
    assert list(client.progress_reports) == [7]
    assert isinstance(client.progress_reports[7][-1], types.WorkDoneProgressEnd)


async def test_progress_cancel_interrupts_the_run(slow: EditorClient) -> None:
    started = time.monotonic()
    task = slow.request_task("codev/runTool", _sleep(30))
    await _wait_for(lambda: _begun(slow))
    [token] = _begun(slow)
    slow.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    outcome = await asyncio.wait_for(task, 15)
    assert outcome["status"] == "interrupted"
    assert outcome["content"] == "[Request interrupted by user for tool use]"
    assert time.monotonic() - started < 25
    await _wait_for(lambda: isinstance(slow.progress_reports[token][-1], types.WorkDoneProgressEnd))


async def test_cancel_request_interrupts_the_run(slow: EditorClient) -> None:
    task = slow.request_task("codev/runTool", _sleep(30), msg_id="run-1")
    await _wait_for(lambda: _begun(slow))
    slow.cancel_request("run-1")
    outcome = await asyncio.wait_for(task, 15)
    # The cancelled request still gets its answer: the interrupted outcome.
    assert outcome["status"] == "interrupted"


async def test_cancel_request_interrupts_a_command(start_editor: StartEditor) -> None:
    client = await start_editor(test_tools=True)
    task = client.request_task(
        types.WORKSPACE_EXECUTE_COMMAND,
        types.ExecuteCommandParams(
            command="codev.runTool", arguments=["TestSleep", {"seconds": 30, "tick": 0.05}]
        ),
        msg_id="cmd-1",
    )
    await _wait_for(lambda: _begun(client))
    client.cancel_request("cmd-1")
    outcome = await asyncio.wait_for(task, 15)
    assert outcome["status"] == "interrupted"


async def test_codev_cancel_interrupts_the_run(slow: EditorClient) -> None:
    task = slow.request_task("codev/runTool", _sleep(30, toolUseId="toolu_long"))
    await _wait_for(lambda: _begun(slow))
    assert await slow.request("codev/cancel", {"toolUseId": "toolu_long"}) == {"cancelled": 1}
    outcome = await asyncio.wait_for(task, 15)
    assert outcome["status"] == "interrupted"
    assert outcome["toolUseId"] == "toolu_long"


async def test_codev_cancel_without_ids_interrupts_everything(start_editor: StartEditor) -> None:
    client = await start_editor(test_tools=True)
    tasks = [client.request_task("codev/runTool", _sleep(30)) for _ in range(3)]
    await _wait_for(lambda: len(_begun(client)) == 3)
    result = await client.request("codev/cancel", {})
    assert result["cancelled"] >= 3
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 15)
    assert [o["status"] for o in outcomes] == ["interrupted"] * 3


async def test_a_long_run_does_not_hold_up_other_requests(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(test_tools=True)
    (workspace / "a.txt").write_text("a\n")
    slow = client.request_task("codev/runTool", _sleep(5))
    await _wait_for(lambda: _begun(client))
    started = time.monotonic()
    read = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    assert read["status"] == "success"
    assert time.monotonic() - started < 4
    assert not slow.done()
    await client.request("codev/cancel", {})
    assert (await slow)["status"] == "interrupted"


async def test_a_reused_tool_use_id_is_refused_while_running(start_editor: StartEditor) -> None:
    from pygls.exceptions import JsonRpcInvalidParams

    client = await start_editor(test_tools=True)
    first = client.request_task("codev/runTool", _sleep(30, toolUseId="toolu_same"))
    await _wait_for(lambda: _begun(client))
    with pytest.raises(JsonRpcInvalidParams, match="already running"):
        await client.request("codev/runTool", _sleep(1, toolUseId="toolu_same"))
    await client.request("codev/cancel", {"toolUseId": "toolu_same"})
    assert (await first)["status"] == "interrupted"


async def test_shutdown_interrupts_running_commands(start_editor: StartEditor) -> None:
    client = await start_editor(test_tools=True)
    task = client.request_task("codev/runTool", _sleep(60))
    await _wait_for(lambda: _begun(client))
    started = time.monotonic()
    await asyncio.wait_for(client.shutdown_session(), 30)
    assert (await task)["status"] == "interrupted"
    assert client._server is not None and client._server.returncode == 0
    assert time.monotonic() - started < 20
