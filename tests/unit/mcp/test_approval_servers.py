"""The MCP manager with real servers: a project's server starts only once the user allows it.

The server is tests/fakes/mcp_servers/probe.py, which writes its pid to
``<probe dir>/starts`` the moment it runs: an empty ``starts`` proves it was
never spawned. The answers come from a ScriptedBridge (an editor's answers
given in advance) or a TerminalBridge reading a scripted stdin.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from codev_ls.bridge import ScriptedBridge, TerminalBridge
from codev_ls.engine.config import config_dir
from codev_ls.mcp import approval
from tests.mcp_support import (
    probe_server,
    server_status,
    start_engine,
    started_pids,
    write_mcp_json,
)


def _local(root: Path) -> Path:
    return root / ".codev" / "settings.local.json"


async def _run(root: Path, bridge: ScriptedBridge | TerminalBridge, **kwargs):  # type: ignore[no-untyped-def]
    """Start an engine on ``root`` (the .mcp.json as it is), wait for answers and servers."""
    engine, manager, _ = await start_engine(root, bridge=bridge, approve=False, **kwargs)  # type: ignore[arg-type]
    return engine, manager


async def test_dismissed_means_not_started_and_asked_again(workspace: Path, tmp_path: Path) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    bridge = ScriptedBridge(answers=["dismiss"])
    engine, manager = await _run(workspace, bridge)
    try:
        (request,) = bridge.requests
        assert request.kind == "mcp_server" and request.tool_name == "mcp__probe"
        status = server_status(manager, "probe")
        assert status["state"] == "needs-approval"
        assert "dismissed" in status["reason"] and "asked again" in status["reason"]
        assert not [t for t in engine.tool_pool() if t.name.startswith("mcp__probe")]
        outcome = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert outcome.status == "error" and "No such tool" in outcome.text()
    finally:
        await engine.aclose()
    assert started_pids(probe_dir) == []
    assert not _local(workspace).exists()  # nothing remembered

    # Next time: asked again; "Allow once" starts it, and is not remembered either.
    bridge = ScriptedBridge(answers=["allow_once", "allow_once"])  # the server, the tool use
    engine, manager = await _run(workspace, bridge)
    try:
        assert len(bridge.requests) == 1
        status = server_status(manager, "probe")
        assert status["state"] == "ready" and "Allow once" in status["approval"]
        assert "reason" not in status
        outcome = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert outcome.status == "success" and outcome.text() == str(probe_dir)
    finally:
        await engine.aclose()
    assert len(started_pids(probe_dir)) == 1
    assert not _local(workspace).exists()


async def test_reject_is_remembered_and_the_server_never_spawned(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    bridge = ScriptedBridge(answers=["reject"])
    engine, manager = await _run(workspace, bridge)
    try:
        status = server_status(manager, "probe")
        assert status["state"] == "disabled" and "rejected by you" in status["reason"]
        assert str(_local(workspace)) in status["reason"]
    finally:
        await engine.aclose()
    assert json.loads(_local(workspace).read_text())[approval.DISABLED] == ["probe"]

    bridge = ScriptedBridge(default_answer="allow_once")
    engine, manager = await _run(workspace, bridge)
    try:
        assert bridge.requests == []  # not asked again
        status = server_status(manager, "probe")
        assert status["state"] == "disabled" and approval.DISABLED in status["reason"]
        await manager.wait_ready(5)
    finally:
        await engine.aclose()
    assert started_pids(probe_dir) == []


async def test_always_allow_is_remembered_until_the_definition_changes(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    bridge = ScriptedBridge(answers=["allow_always"])
    engine, manager = await _run(workspace, bridge)
    try:
        assert server_status(manager, "probe")["state"] == "ready"
        assert "Always allow" in server_status(manager, "probe")["approval"]
    finally:
        await engine.aclose()
    (entry,) = json.loads(_local(workspace).read_text())[approval.ENABLED]
    assert entry["name"] == "probe" and len(entry["hash"]) == approval.HASH_CHARS

    bridge = ScriptedBridge(default_answer="reject")
    engine, manager = await _run(workspace, bridge)
    try:
        assert bridge.requests == []
        status = server_status(manager, "probe")
        assert status["state"] == "ready" and "approved by you" in status["approval"]
    finally:
        await engine.aclose()
    assert len(started_pids(probe_dir)) == 2

    # The project changes what the server runs with: asked again, and not started on a dismissal.
    write_mcp_json(workspace, {"probe": probe_server(probe_dir, env={"EXTRA": "1"})})
    bridge = ScriptedBridge(answers=["dismiss"])
    engine, manager = await _run(workspace, bridge)
    try:
        (request,) = bridge.requests
        assert "definition changed" in request.reason
        assert "env: EXTRA=1" in request.detail
        assert server_status(manager, "probe")["state"] == "needs-approval"
    finally:
        await engine.aclose()
    assert len(started_pids(probe_dir)) == 2


async def test_bypass_permissions_does_not_approve_a_project_server(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    bridge = ScriptedBridge(answers=["dismiss"])
    engine, manager = await _run(workspace, bridge, mode="bypassPermissions")
    try:
        assert [r.kind for r in bridge.requests] == ["mcp_server"]
        assert server_status(manager, "probe")["state"] == "needs-approval"
    finally:
        await engine.aclose()
    assert started_pids(probe_dir) == []


async def test_user_settings_servers_start_without_asking(workspace: Path, tmp_path: Path) -> None:
    user_dir, project_dir = tmp_path / "user-probe", tmp_path / "project-probe"
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "settings.json").write_text(
        json.dumps({"mcpServers": {"mine": probe_server(user_dir)}})
    )
    write_mcp_json(workspace, {"theirs": probe_server(project_dir)})
    bridge = ScriptedBridge(answers=["reject"])
    engine, manager = await _run(workspace, bridge)
    try:
        assert [r.tool_name for r in bridge.requests] == ["mcp__theirs"]
        mine = server_status(manager, "mine")
        assert mine["state"] == "ready" and mine["origin"] == "user" and "approval" not in mine
        assert server_status(manager, "theirs")["state"] == "disabled"
    finally:
        await engine.aclose()
    assert len(started_pids(user_dir)) == 1 and started_pids(project_dir) == []


async def test_a_project_server_shadowing_a_user_server_is_asked_about(
    workspace: Path, tmp_path: Path
) -> None:
    """The project's entry wins a name clash: it is the project's command, so it asks."""
    user_dir, project_dir = tmp_path / "user-probe", tmp_path / "project-probe"
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "settings.json").write_text(
        json.dumps({"mcpServers": {"probe": probe_server(user_dir)}})
    )
    write_mcp_json(workspace, {"probe": probe_server(project_dir)})
    bridge = ScriptedBridge(answers=["dismiss"])
    engine, manager = await _run(workspace, bridge)
    try:
        assert len(bridge.requests) == 1
        assert server_status(manager, "probe")["state"] == "needs-approval"
    finally:
        await engine.aclose()
    assert started_pids(user_dir) == [] and started_pids(project_dir) == []


async def test_servers_are_asked_about_in_turn(workspace: Path, tmp_path: Path) -> None:
    dirs = {name: tmp_path / name for name in ("a", "b", "c")}
    write_mcp_json(workspace, {name: probe_server(d) for name, d in dirs.items()})
    bridge = ScriptedBridge(answers=["reject", "allow_once", "dismiss"])
    engine, manager = await _run(workspace, bridge)
    try:
        assert [r.tool_name for r in bridge.requests] == ["mcp__a", "mcp__b", "mcp__c"]
        states = {s["name"]: s["state"] for s in manager.status()["servers"]}
        assert states == {"a": "disabled", "b": "ready", "c": "needs-approval"}
        assert sorted(t.name for t in engine.mcp_tools if t.name.endswith("echo_env")) == [
            "mcp__b__echo_env"
        ]
    finally:
        await engine.aclose()
    assert started_pids(dirs["a"]) == [] and started_pids(dirs["c"]) == []
    assert len(started_pids(dirs["b"])) == 1


async def test_the_terminal_asks_and_yes_does_not_answer(workspace: Path, tmp_path: Path) -> None:
    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})

    # --yes without a terminal: tool uses would be allowed, the server is not started.
    err = io.StringIO()
    bridge = TerminalBridge(assume_yes=True, stdin=io.StringIO("1\n"), stderr=err)
    engine, manager = await _run(workspace, bridge)  # type: ignore[arg-type]
    try:
        assert server_status(manager, "probe")["state"] == "needs-approval"
    finally:
        await engine.aclose()
    text = err.getvalue()
    assert 'Start the MCP server "probe" from this project\'s .mcp.json?' in text
    assert "--yes does not approve a project's MCP servers" in text
    assert started_pids(probe_dir) == []

    # On a terminal: "3" is Always allow (saved); the next run asks nothing.
    err = io.StringIO()
    bridge = TerminalBridge(stdin=io.StringIO("3\n"), stderr=err, interactive=True)
    engine, manager = await _run(workspace, bridge)  # type: ignore[arg-type]
    try:
        assert server_status(manager, "probe")["state"] == "ready"
    finally:
        await engine.aclose()
    assert "[3] Always allow: probe (this definition)" in err.getvalue()
    err = io.StringIO()
    bridge = TerminalBridge(assume_yes=True, stdin=io.StringIO(""), stderr=err)
    engine, manager = await _run(workspace, bridge)  # type: ignore[arg-type]
    try:
        assert server_status(manager, "probe")["state"] == "ready"
        assert "MCP server" not in err.getvalue()
    finally:
        await engine.aclose()
    assert len(started_pids(probe_dir)) == 2
