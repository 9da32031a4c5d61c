"""Servers that crash at start, hang, die mid-call or stop answering: reported once, left out."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

from tests.mcp_support import (
    FAST,
    pid_alive,
    probe_server,
    script_server,
    server_status,
    start_engine,
    started_pids,
    time_server,
)


async def test_crash_hang_and_missing_command_fail_with_reasons_and_are_reported_once(
    workspace: Path,
) -> None:
    servers = {
        "crashy": script_server("mcp_servers/crash.py"),
        "hangs": script_server("mcp_servers/hang.py", startupTimeout=1500),
        "ghost": {"command": "/nonexistent/mcp-server-ghost"},
        "time": time_server(),
    }
    engine, manager, bridge = await start_engine(workspace, servers)
    try:
        crashy = server_status(manager, "crashy")
        assert crashy["state"] == "failed"
        assert "closed the connection" in crashy["error"]
        assert "no API token configured" in crashy["error"]  # the server's own stderr
        hangs = server_status(manager, "hangs")
        assert hangs["state"] == "failed" and "within 1.5 s" in hangs["error"]
        ghost = server_status(manager, "ghost")
        assert ghost["state"] == "failed" and "command not found" in ghost["error"]
        # The good server is unaffected; the failed ones have no tools in the pool.
        assert server_status(manager, "time")["state"] == "ready"
        names = [t.name for t in engine.tool_pool()]
        assert not [n for n in names if n.startswith(("mcp__crashy", "mcp__hangs", "mcp__ghost"))]
        # One message per failing server, each naming it and why.
        errors = [m for level, m in bridge.messages if level == "error"]
        assert len(errors) == 3
        for name, why in (("crashy", "token"), ("hangs", "1.5 s"), ("ghost", "not found")):
            (msg,) = [m for m in errors if f"MCP server {name} " in m]
            assert why in msg
        # Calling a tool of a failed server: an error outcome, not a crash.
        outcome = await engine.run_tool("mcp__crashy__anything", {})
        assert outcome.status == "error" and "No such tool" in outcome.text()
    finally:
        await engine.aclose()
    assert len([m for level, m in bridge.messages if level == "error"]) == 3


async def test_server_that_dies_mid_call_ends_in_error_and_is_restarted(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    engine, manager, bridge = await start_engine(
        workspace, {"probe": probe_server(probe_dir)}, mode="bypassPermissions"
    )
    try:
        (first_pid,) = started_pids(probe_dir)
        stale_tool = next(t for t in engine.tool_pool() if t.name == "mcp__probe__echo_env")
        outcome = await engine.run_tool("mcp__probe__die", {"code": 9})
        assert outcome.status == "error"
        assert "closed the connection while die was running" in outcome.text()
        assert "dying with code 9" in outcome.text()  # its last stderr line
        # Restarted with backoff; its tools come back.
        await manager.wait_ready(20)
        for _ in range(200):
            if server_status(manager, "probe")["state"] == "ready":
                break
            await asyncio.sleep(0.05)
        status = server_status(manager, "probe")
        assert status["state"] == "ready" and status["restarts"] == 1
        pids = started_pids(probe_dir)
        assert len(pids) == 2 and not pid_alive(first_pid)
        ok = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert ok.status == "success" and ok.text() == str(probe_dir)
        # A tool object from before the crash still reaches the restarted server.
        again = await engine.run_tool(
            "mcp__probe__echo_env", {"name": "PROBE_DIR"}, tools=[stale_tool]
        )
        assert again.status == "success"
        # The crash was reported once, as a warning that it restarts.
        (warning,) = [m for level, m in bridge.messages if level == "warning"]
        assert "MCP server probe stopped" in warning and "restarting" in warning
    finally:
        await engine.aclose()
    assert not any(pid_alive(pid) for pid in started_pids(probe_dir))


async def test_a_call_that_takes_too_long_ends_in_an_error_and_the_server_stays(
    workspace: Path, tmp_path: Path
) -> None:
    probe_dir = tmp_path / "probe"
    engine, manager, _ = await start_engine(
        workspace, {"probe": probe_server(probe_dir, timeout=800)}
    )
    try:
        outcome = await engine.run_tool("mcp__probe__sleep", {"seconds": 20, "tag": "slow"})
        assert outcome.status == "error"
        assert "did not answer sleep within 0.8 s" in outcome.text()
        # The timed-out request was cancelled on the server too.
        for _ in range(100):
            if (probe_dir / "cancelled-slow").exists():
                break
            await asyncio.sleep(0.05)
        assert (probe_dir / "cancelled-slow").exists()
        # It still answers pings: it stays ready, no restart.
        await asyncio.sleep(FAST.ping_s + 0.5)
        status = server_status(manager, "probe")
        assert status["state"] == "ready" and status["restarts"] == 0
    finally:
        await engine.aclose()


async def test_a_server_that_stops_answering_is_restarted(workspace: Path, tmp_path: Path) -> None:
    probe_dir = tmp_path / "probe"
    engine, manager, bridge = await start_engine(
        workspace, {"probe": probe_server(probe_dir, timeout=800)}
    )
    try:
        (frozen_pid,) = started_pids(probe_dir)
        outcome = await engine.run_tool("mcp__probe__freeze", {})
        assert outcome.status == "error" and "did not answer freeze" in outcome.text()
        # No ping answer → restarted (the frozen process is killed).
        for _ in range(300):
            if (
                len(started_pids(probe_dir)) == 2
                and server_status(manager, "probe")["state"] == "ready"
            ):
                break
            await asyncio.sleep(0.05)
        status = server_status(manager, "probe")
        assert status["state"] == "ready" and status["restarts"] == 1
        (warning,) = [m for level, m in bridge.messages if level == "warning"]
        assert "stopped answering" in warning
        assert not pid_alive(frozen_pid)
        ok = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert ok.status == "success"
    finally:
        await engine.aclose()


async def test_a_server_that_keeps_dying_is_given_up(workspace: Path, tmp_path: Path) -> None:
    """Ready once, then every restart fails: after max_restarts it is failed, for good."""
    probe_dir = tmp_path / "probe"
    flag = tmp_path / "broken-now"
    # The server starts fine once; after the flag file exists it exits at start.
    wrapper = tmp_path / "flaky.py"
    wrapper.write_text(
        "import os, runpy, sys\n"
        f"if os.path.exists({str(flag)!r}):\n"
        "    print('flaky: refusing to start', file=sys.stderr); sys.exit(1)\n"
        f"sys.argv = [{str(Path(__file__).parents[2] / 'fakes' / 'mcp_servers/probe.py')!r}]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    server = {
        "command": sys.executable,
        "args": [str(wrapper)],
        "env": {"PROBE_DIR": str(probe_dir)},
    }
    probe_dir.mkdir()
    timeouts = dataclasses.replace(FAST, max_restarts=2)
    engine, manager, bridge = await start_engine(
        workspace, {"flaky": server}, timeouts=timeouts, mode="bypassPermissions"
    )
    try:
        assert server_status(manager, "flaky")["state"] == "ready"
        flag.write_text("x")
        outcome = await engine.run_tool("mcp__flaky__die", {})
        assert outcome.status == "error"
        for _ in range(300):
            if server_status(manager, "flaky")["state"] == "failed":
                break
            await asyncio.sleep(0.05)
        status = server_status(manager, "flaky")
        assert status["state"] == "failed"
        assert "gave up after 2 restarts" in status["error"]
        assert "refusing to start" in status["error"]
        assert engine.mcp_tools == []
        # Reported twice, not once per attempt: the first crash (restarting), then the end.
        levels = [level for level, _ in bridge.messages]
        assert levels == ["warning", "error"], bridge.messages
        assert "restarting it" in bridge.messages[0][1]
        assert "keeps failing" in bridge.messages[1][1]
        assert "gave up after 2 restarts" in bridge.messages[1][1]
    finally:
        await engine.aclose()


async def test_close_stops_every_server_process(workspace: Path, tmp_path: Path) -> None:
    dirs = [tmp_path / f"p{i}" for i in range(2)]
    engine, manager, _ = await start_engine(
        workspace, {f"p{i}": probe_server(d) for i, d in enumerate(dirs)}
    )
    pids = [pid for d in dirs for pid in started_pids(d)]
    assert len(pids) == 2 and all(pid_alive(p) for p in pids)
    await engine.aclose()
    assert not any(pid_alive(p) for p in pids)
    assert {s["state"] for s in manager.status()["servers"]} == {"stopped"}
    await manager.aclose()  # idempotent


async def test_close_while_a_server_is_still_starting(workspace: Path) -> None:
    engine, manager, bridge = await start_engine(
        workspace,
        {"hangs": script_server("mcp_servers/hang.py", startupTimeout=60_000)},
        wait=False,
    )
    await asyncio.sleep(0.5)
    assert server_status(manager, "hangs")["state"] == "starting"
    await asyncio.wait_for(engine.aclose(), 10)
    assert server_status(manager, "hangs")["state"] == "stopped"
    assert bridge.messages == []  # stopping is not a failure
