"""A project's MCP servers wait for the user: over LSP (real server, real editor client) and CLI.

The editor is pytest-lsp (both capability presets) talking to
``python -m codev_ls`` over stdio; the MCP server is tests/fakes/mcp_servers/probe.py,
which writes its pid to ``<probe dir>/starts`` the moment it runs — an empty
``starts`` proves it was never spawned. The question is a
``window/showMessageRequest`` whose action titles are PROTOCOL.md's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient
from tests.fakes.harness import FakeModel
from tests.mcp_support import probe_server, started_pids, write_mcp_json

ECHO = "mcp__probe__echo_env"


async def _status_when(client: EditorClient, predicate: Any, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status = await client.request("codev/mcpStatus", {})
        servers = {s["name"]: s for s in status["servers"]}
        if predicate(servers):
            return servers
        assert time.monotonic() < deadline, f"timed out; last status: {status}"
        await asyncio.sleep(0.1)


async def _tool_names(client: EditorClient) -> set[str]:
    return {t["name"] for t in (await client.request("codev/listTools", {}))["tools"]}


def _server_prompts(client: EditorClient) -> list[types.ShowMessageRequestParams]:
    return [p for p in client.prompts if "MCP server" in p.message]


def _local(root: Path) -> Path:
    return root / ".codev" / "settings.local.json"


@pytest.mark.parametrize("preset", PRESETS)
async def test_nothing_runs_before_the_answer_and_allow_once_adds_the_tools(
    preset: str, start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    asked = asyncio.Event()
    answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    async def user(params: types.ShowMessageRequestParams) -> str | None:
        if "MCP server" not in params.message:
            return "Allow once"  # the tool use's own question
        asked.set()
        return await answer

    client = await start_editor(preset)
    client.prompt_answer = user
    await asyncio.wait_for(asked.wait(), 30)

    # The question is up: the server is held, not spawned, its tools absent.
    (prompt,) = _server_prompts(client)
    assert prompt.type == types.MessageType.Warning
    assert [a.title for a in prompt.actions or []] == [
        "Allow once",
        "Always allow: probe (this definition)",
        "Reject",
    ]
    first_line, *rest = prompt.message.splitlines()
    assert (
        first_line == 'Codev wants to start the MCP server "probe" from this project\'s .mcp.json.'
    )
    assert "allow only what you trust" in rest[0]
    assert any(line.startswith("command: ") and "probe.py" in line for line in rest)
    assert f"env: PROBE_DIR={probe_dir}" in rest
    servers = await _status_when(client, lambda s: "probe" in s)
    assert servers["probe"]["state"] == "needs-approval"
    assert "waiting for your answer" in servers["probe"]["reason"]
    assert servers["probe"]["origin"] == "project"
    await asyncio.sleep(0.5)
    assert started_pids(probe_dir) == []
    assert ECHO not in await _tool_names(client)
    # The server answers everything else meanwhile.
    (workspace / "a.txt").write_text("a\n")
    read = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    assert read["status"] == "success"

    answer.set_result("Allow once")
    servers = await _status_when(client, lambda s: s["probe"]["state"] == "ready")
    assert "Allow once" in servers["probe"]["approval"] and "reason" not in servers["probe"]
    assert ECHO in await _tool_names(client)
    outcome = await client.run_tool(ECHO, {"name": "PROBE_DIR"})
    assert outcome["status"] == "success" and str(probe_dir) in outcome["content"]
    assert len(started_pids(probe_dir)) == 1
    assert not _local(workspace).exists()  # Allow once remembers nothing


async def test_always_allow_is_not_asked_again_on_the_next_start(
    start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    first = await start_editor("visual-studio-code")
    first.prompt_answer = "Always allow"
    servers = await _status_when(first, lambda s: s["probe"]["state"] == "ready")
    assert "Always allow" in servers["probe"]["approval"]
    assert len(_server_prompts(first)) == 1
    (entry,) = json.loads(_local(workspace).read_text())["enabledMcpjsonServers"]
    assert entry["name"] == "probe" and len(entry["hash"]) == 16
    await first.close()

    second = await start_editor("neovim@v0.11.0")
    second.prompt_answer = "Reject"  # would reject the server if it were asked
    servers = await _status_when(second, lambda s: s["probe"]["state"] == "ready")
    assert "approved by you (saved in" in servers["probe"]["approval"]
    assert _server_prompts(second) == []
    assert ECHO in await _tool_names(second)
    assert len(started_pids(probe_dir)) == 2


async def test_reject_disables_the_server_and_it_is_never_spawned(
    start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    first = await start_editor("neovim@v0.11.0")
    first.prompt_answer = "Reject"
    servers = await _status_when(first, lambda s: s["probe"]["state"] == "disabled")
    assert "rejected by you" in servers["probe"]["reason"]
    assert "disabledMcpjsonServers" in servers["probe"]["reason"]
    assert json.loads(_local(workspace).read_text())["disabledMcpjsonServers"] == ["probe"]
    await first.close()

    second = await start_editor("visual-studio-code")
    second.prompt_answer = "Allow once"  # would allow it if it were asked
    servers = await _status_when(second, lambda s: "probe" in s)
    assert servers["probe"]["state"] == "disabled"
    await asyncio.sleep(1.0)
    assert _server_prompts(second) == []
    assert (await second.request("codev/mcpStatus", {}))["servers"][0]["state"] == "disabled"
    assert ECHO not in await _tool_names(second)
    assert started_pids(probe_dir) == []


@pytest.mark.parametrize("answer", [None, "error"], ids=["dismissed", "editor-error"])
async def test_no_answer_remembers_nothing_and_bypass_permissions_still_asks(
    answer: str | None, start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    client = await start_editor("visual-studio-code", mode="bypassPermissions")
    client.prompt_answer = answer
    servers = await _status_when(client, lambda s: _server_prompts(client) and "dismissed" in s["probe"].get("reason", ""))  # fmt: skip
    assert servers["probe"]["state"] == "needs-approval"
    assert "asked again when the workspace opens next" in servers["probe"]["reason"]
    assert (await client.request("codev/permissionMode", {}))["mode"] == "bypassPermissions"
    await client.close()
    assert started_pids(probe_dir) == []
    assert not _local(workspace).exists()

    again = await start_editor("visual-studio-code")
    again.prompt_answer = "Reject"
    await _status_when(again, lambda s: s["probe"]["state"] == "disabled")
    assert len(_server_prompts(again)) == 1  # asked again
    assert started_pids(probe_dir) == []


async def test_the_user_can_be_asked_again_without_reopening_the_workspace(
    start_editor: StartEditor, workspace: Path, tmp_path: Path
) -> None:
    """codev/mcpApprove (and the codev.mcpApprove command) asks again, now."""
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    client = await start_editor("neovim@v0.11.0")
    client.prompt_answer = None  # dismiss the question at start-up
    servers = await _status_when(client, lambda s: "dismissed" in s["probe"].get("reason", ""))
    assert "codev/mcpApprove" in servers["probe"]["reason"]
    assert started_pids(probe_dir) == []

    # Asked again: rejected this time (remembered) ...
    client.prompt_answer = "Reject"
    result = await client.request("codev/mcpApprove", {"name": "probe"})
    assert result["server"]["state"] == "disabled"
    assert "was not started: rejected by you" in result["message"]
    assert len(_server_prompts(client)) == 2
    assert json.loads(_local(workspace).read_text())["disabledMcpjsonServers"] == ["probe"]

    # ... and a rejected server too, through the executeCommand mirror.
    client.prompt_answer = "Always allow"
    result = await client.request(
        "workspace/executeCommand",
        types.ExecuteCommandParams(command="codev.mcpApprove", arguments=["probe"]),
    )
    (prompt,) = _server_prompts(client)[2:]
    assert "you asked to be asked again (you had rejected it" in prompt.message
    assert result["server"]["state"] in ("starting", "ready")
    assert "is starting: approved by you (Always allow" in result["message"]
    servers = await _status_when(client, lambda s: s["probe"]["state"] == "ready")
    assert ECHO in await _tool_names(client)
    assert len(started_pids(probe_dir)) == 1
    saved = json.loads(_local(workspace).read_text())
    assert saved["disabledMcpjsonServers"] == []  # Always allow replaced the rejection
    assert [e["name"] for e in saved["enabledMcpjsonServers"]] == ["probe"]

    # Nothing to ask about a running server; an unknown name is the caller's error.
    result = await client.request("codev/mcpApprove", {"name": "probe"})
    assert (
        result["server"]["state"] == "ready" and "is ready: only a project's" in result["message"]
    )
    assert len(_server_prompts(client)) == 3
    with pytest.raises(Exception, match="no MCP server named 'nope'"):
        await client.request("codev/mcpApprove", {"name": "nope"})
    with pytest.raises(Exception, match="`name`"):
        await client.request("codev/mcpApprove", {})


# --------------------------------------------------------------------------- the terminal


def _cli(codev_cmd: list[str], workspace: Path, stdin: str | None, *args: str):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [*codev_cmd, "tool", ECHO, '{"name": "PROBE_DIR"}', "--cwd", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=90,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
    )


def test_the_terminal_runner_asks_on_its_terminal(
    codev_cmd: list[str], workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})

    # --yes answers tool uses, not this: without a terminal the server is not started.
    out = _cli(codev_cmd, workspace, None, "--yes")
    assert out.returncode == 1
    assert "--yes does not approve a project's MCP servers" in out.stderr
    assert f"No such tool available: {ECHO}" in out.stdout
    assert started_pids(probe_dir) == []

    # Answers on stdin: "n" rejects the server (remembered) ...
    out = _cli(codev_cmd, workspace, "n\n")
    assert out.returncode == 1 and '? Start the MCP server "probe"' in out.stderr
    assert "[3] Always allow: probe (this definition)" in out.stderr
    assert started_pids(probe_dir) == []
    out = _cli(codev_cmd, workspace, "1\n1\n")
    assert out.returncode == 1 and "MCP server" not in out.stderr  # not asked again
    assert started_pids(probe_dir) == []

    # ... once un-rejected, "1" allows it once and "1" the tool use.
    _local(workspace).write_text("{}")
    out = _cli(codev_cmd, workspace, "1\n1\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(probe_dir)
    assert len(started_pids(probe_dir)) == 1


def test_chat_asks_before_the_turn(
    fake_anthropic: FakeModel, codev_cmd: list[str], workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(fake_anthropic.env)

    def chat(stdin: str | None, *args: str) -> subprocess.CompletedProcess[str]:
        fake_anthropic.push(fake_anthropic.reply("Hello."))
        return subprocess.run(
            [*codev_cmd, "chat", "hi", "--cwd", str(workspace), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=90,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
        )

    out = chat(None, "--yes")
    assert out.returncode == 0, out.stderr
    assert "--yes does not approve a project's MCP servers" in out.stderr
    assert started_pids(probe_dir) == []

    out = chat("3\n")
    assert out.returncode == 0, out.stderr
    # Asked before the turn: the question comes before the turn's end on stderr.
    assert out.stderr.index('? Start the MCP server "probe"') < out.stderr.index("[chat: end_turn]")
    assert json.loads(_local(workspace).read_text())["enabledMcpjsonServers"][0]["name"] == "probe"
    out = chat(None, "--yes")  # approved: starts without a question, --yes or not
    assert out.returncode == 0, out.stderr
    assert "MCP server" not in out.stderr
