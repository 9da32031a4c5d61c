"""MCP servers through the real language server: status, tools, prompts, progress, cancel, exit.

The editor (pytest-lsp, both capability presets) talks to ``python -m codev_ls``
over stdio; the MCP servers are real (mcp-server-time, server-everything, the
SDK-built probe and crash scripts in tests/fakes/mcp_servers).
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
from tests.mcp_support import (
    approve_project_servers,
    everything_server,
    pid_alive,
    probe_server,
    script_server,
    started_pids,
    time_server,
    write_mcp_json,
)

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
def _servers_approved() -> None:
    """These tests are about running servers; approving them: test_mcp_approval.py."""
    approve_project_servers()


async def _status_when(
    client: EditorClient, predicate: Any, timeout: float = 60.0
) -> dict[str, Any]:
    """Poll codev/mcpStatus until ``predicate(servers_by_name)`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        status = await client.request("codev/mcpStatus", {})
        servers = {s["name"]: s for s in status["servers"]}
        if predicate(servers):
            return servers
        assert time.monotonic() < deadline, f"timed out; last status: {status}"
        await asyncio.sleep(0.1)


def _settled(servers: dict[str, Any]) -> bool:
    return all(s["state"] != "starting" for s in servers.values())


@pytest.mark.parametrize("preset", PRESETS)
async def test_mcp_tools_join_over_lsp_and_a_failing_server_is_reported_once(
    preset: str, start_editor: StartEditor, workspace: Path
) -> None:
    write_mcp_json(
        workspace, {"time": time_server(), "crashy": script_server("mcp_servers/crash.py")}
    )
    client = await start_editor(preset)
    # The server answers at once, whatever the MCP servers are doing.
    first = await client.request("codev/listTools", {})
    assert {"Read", "Glob"} <= {t["name"] for t in first["tools"]}

    servers = await _status_when(client, _settled)
    assert servers["time"]["state"] == "ready"
    assert servers["time"]["tools"] == ["mcp__time__convert_time", "mcp__time__get_current_time"]
    assert servers["crashy"]["state"] == "failed"
    assert "no API token configured" in servers["crashy"]["error"]

    tools = {t["name"]: t for t in (await client.request("codev/listTools", {}))["tools"]}
    info = tools["mcp__time__get_current_time"]
    assert info["source"] == "mcp" and tools["Read"]["source"] == "builtin"
    assert info["readOnly"] is True and info["concurrencySafe"] is True
    assert info["deferred"] is False
    assert "timezone" in info["inputSchema"]["properties"]
    assert not [n for n in tools if n.startswith("mcp__crashy")]

    # MCP tools ask in default mode; the editor answers "Allow once".
    outcome = await client.run_tool("mcp__time__get_current_time", {"timezone": "Asia/Shanghai"})
    assert outcome["status"] == "success", outcome
    assert '"timezone": "Asia/Shanghai"' in outcome["content"]
    assert outcome["decisionSource"] == "user_temporary"
    (prompt,) = client.prompts
    assert "time - get_current_time (MCP)" in prompt.message
    assert any(
        a.title.startswith("Always allow: mcp__time__get_current_time") for a in prompt.actions
    )

    # One showMessage for the failing server, naming it and why.
    reports = [m for m in client.messages if "MCP server" in m.message]
    assert len(reports) == 1
    assert reports[0].type == types.MessageType.Error
    assert "crashy" in reports[0].message and "no API token configured" in reports[0].message
    by_command = await client.command("codev.mcpStatus")
    assert {s["name"] for s in by_command["servers"]} == {"time", "crashy"}


async def test_mcp_progress_and_cancel_over_lsp(
    start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"everything": everything_server(), "probe": probe_server(probe_dir)})
    client = await start_editor("visual-studio-code", mode="bypassPermissions")
    await _status_when(
        client, lambda s: len(s) == 2 and all(x["state"] == "ready" for x in s.values())
    )

    outcome = await client.run_tool(
        "mcp__everything__trigger-long-running-operation", {"duration": 0.6, "steps": 3}
    )
    assert outcome["status"] == "success", outcome
    (reports,) = client.progress_reports.values()
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin) and "everything" in begin.title
    messages = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert messages and messages[-1] == "3/3"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)

    run = asyncio.ensure_future(
        client.run_tool("mcp__probe__sleep", {"seconds": 30, "tag": "lsp"}, toolUseId="toolu_lsp")
    )
    deadline = time.monotonic() + 30
    while len(client.progress_reports) < 2 or len(list(client.progress_reports.values())[-1]) < 2:
        assert time.monotonic() < deadline, "no progress from the probe"
        await asyncio.sleep(0.05)
    assert (await client.request("codev/cancel", {"toolUseId": "toolu_lsp"}))["cancelled"] == 1
    outcome = await asyncio.wait_for(run, 15)
    assert outcome["status"] == "interrupted"
    while not (probe_dir / "cancelled-lsp").exists():
        assert time.monotonic() < deadline, "the MCP server was not told to cancel"
        await asyncio.sleep(0.05)


async def test_exit_stops_the_mcp_servers(
    start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    client = await start_editor("neovim@v0.11.0")
    await _status_when(client, lambda s: s["probe"]["state"] == "ready")
    (pid,) = started_pids(probe_dir)
    assert pid_alive(pid)
    await client.close()
    assert not pid_alive(pid)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_an_mcp_image_reaches_the_model(
    kind: str, start_editor: StartEditor, workspace: Path
) -> None:
    """server-everything's get-tiny-image in a chat turn: the picture goes to the model as
    an image (Anthropic: in the tool_result; OpenAI: an image_url part after the tool
    message), and the request bodies are valid for each API."""
    from tests.fakes.harness import FakeModel

    write_mcp_json(workspace, {"everything": everything_server()})
    tool = "mcp__everything__get-tiny-image"
    with FakeModel(kind) as model:
        model.push(model.reply((tool, {})), model.reply("A tiny image."))
        client = await start_editor(
            "visual-studio-code",
            mode="bypassPermissions",
            env={**model.env, "CODEV_TOOL_SEARCH": "never"},
        )
        await _status_when(client, lambda s: s["everything"]["state"] == "ready")
        result = await client.request("codev/chat", {"prompt": "show me the tiny image"})
        assert result["stopReason"] == "end_turn", result
        assert not model.problems, model.problems
        body = model.bodies[1]
    if kind == "anthropic":
        blocks = [
            b
            for m in body["messages"]
            for blk in m["content"]
            if blk.get("type") == "tool_result"
            for b in blk["content"]
        ]
        image = next(b for b in blocks if b["type"] == "image")
        assert image["source"]["media_type"] == "image/png"
    else:
        tool_msg, user_msg = body["messages"][-2:]
        assert tool_msg["role"] == "tool" and "sent in the next user message" in tool_msg["content"]
        urls = [p["image_url"]["url"] for p in user_msg["content"] if p["type"] == "image_url"]
        assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
