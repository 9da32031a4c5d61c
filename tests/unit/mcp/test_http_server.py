"""A streamable HTTP MCP server (built with the SDK, on 127.0.0.1) through the engine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_support import HttpMcpServer, server_status, start_engine


@pytest.fixture
def http_server() -> Iterator[HttpMcpServer]:
    server = HttpMcpServer(token="tok-123")
    yield server
    server.stop()


async def test_http_tools_headers_progress_and_errors(
    workspace: Path, http_server: HttpMcpServer, monkeypatch
) -> None:
    monkeypatch.setenv("PROBE_API_TOKEN", "tok-123")
    servers = {
        "web": {
            "type": "http",
            "url": http_server.url,
            "headers": {"Authorization": "Bearer ${PROBE_API_TOKEN}"},
        }
    }
    engine, manager, bridge = await start_engine(workspace, servers, mode="bypassPermissions")
    try:
        status = server_status(manager, "web")
        assert status["state"] == "ready" and status["transport"] == "http"
        assert status["target"] == http_server.url
        assert "mcp__web__add" in [t.name for t in engine.tool_pool()]

        added = await engine.run_tool("mcp__web__add", {"a": 40, "b": 2})
        assert added.status == "success" and added.text() == "42"

        who = await engine.run_tool("mcp__web__whoami", {})
        assert who.text() == "Bearer tok-123"  # the configured header, with ${VAR} expanded

        countdown = await engine.run_tool("mcp__web__countdown", {"n": 3}, tool_use_id="toolu_cd")
        assert countdown.text() == "liftoff"
        reports = [
            e.message for e in bridge.progress if e.kind == "report" and e.tool_use_id == "toolu_cd"
        ]
        assert reports == ["2 left", "1 left", "0 left"]

        oops = await engine.run_tool("mcp__web__oops", {})
        assert oops.status == "error" and "reported an error" in oops.text()
    finally:
        await engine.aclose()


async def test_http_server_refusing_the_headers_fails_with_the_status(
    workspace: Path, http_server: HttpMcpServer
) -> None:
    servers = {
        "web": {
            "type": "http",
            "url": http_server.url,
            "headers": {"Authorization": "Bearer wrong"},
        }
    }
    engine, manager, bridge = await start_engine(workspace, servers)
    try:
        status = server_status(manager, "web")
        assert status["state"] == "failed"
        assert "HTTP 401" in status["error"]
        ((level, message),) = bridge.messages
        assert level == "error" and "MCP server web failed to start" in message
        assert "wrong" not in message  # header values (secrets) never appear
    finally:
        await engine.aclose()


async def test_nothing_listening_is_a_clear_failure(workspace: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    servers = {"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    engine, manager, _ = await start_engine(workspace, servers)
    try:
        status = server_status(manager, "web")
        assert status["state"] == "failed" and "cannot connect" in status["error"]
    finally:
        await engine.aclose()


async def test_http_server_going_away_and_coming_back(workspace: Path) -> None:
    first = HttpMcpServer()
    servers = {"web": {"type": "http", "url": first.url}}
    engine, manager, bridge = await start_engine(workspace, servers, mode="bypassPermissions")
    second: HttpMcpServer | None = None
    try:
        assert (await engine.run_tool("mcp__web__add", {"a": 1, "b": 1})).text() == "2"
        first.stop()
        gone = await engine.run_tool("mcp__web__add", {"a": 1, "b": 1})
        assert gone.status == "error" and "MCP server web" in gone.text()
        second = HttpMcpServer(port=first.port)
        for _ in range(300):
            if server_status(manager, "web")["state"] == "ready":
                break
            await asyncio.sleep(0.05)
        assert server_status(manager, "web")["state"] == "ready"
        back = await engine.run_tool("mcp__web__add", {"a": 2, "b": 2})
        assert back.status == "success" and back.text() == "4", back.text()
        assert server_status(manager, "web")["restarts"] >= 1
        assert [level for level, _ in bridge.messages] == ["warning"]
    finally:
        await engine.aclose()
        first.stop()
        if second is not None:
            second.stop()
