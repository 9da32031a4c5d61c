"""MCP tools go through the same lifecycle as built-ins: deny rules, modes, hooks, batches."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.execution import ToolUse
from codev_ls.engine.hooks import NoHooks, PostToolUseResult, PreToolUseResult
from codev_ls.engine.outcome import ProgressUpdate
from codev_ls.engine.tool import ToolResult, build_tool
from codev_ls.permissions.rules import parse_rule
from tests.mcp_support import (
    REPO,
    approve_project_servers,
    probe_server,
    start_engine,
    time_server,
    write_mcp_json,
)


async def test_deny_rules_remove_a_server_or_one_tool_from_the_pool(workspace: Path) -> None:
    engine, _, _ = await start_engine(workspace, {"time": time_server()})
    try:
        pctx = engine.permission_context
        pctx.deny.append(parse_rule("mcp__time__convert_time", origin="user"))
        names = [t.name for t in engine.tool_pool()]
        assert "mcp__time__convert_time" not in names and "mcp__time__get_current_time" in names
        denied = await engine.run_tool(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "10:00", "target_timezone": "UTC"},
        )
        assert denied.status == "error" and "No such tool" in denied.text()

        pctx.deny.append(parse_rule("mcp__time", origin="user"))
        assert not [t for t in engine.tool_pool() if t.name.startswith("mcp__time__")]
        # Even a caller holding an old pool is refused by the permission stage.
        old_pool = engine.merged_tools()
        outcome = await engine.run_tool(
            "mcp__time__get_current_time", {"timezone": "UTC"}, tools=old_pool
        )
        assert outcome.status == "rejected" and "mcp__time" in outcome.text()
    finally:
        await engine.aclose()


async def test_mcp_tools_ask_in_default_mode_until_a_rule_allows_them(workspace: Path) -> None:
    """Even a readOnlyHint tool asks: annotations come from the server and are not trusted."""
    bridge = ScriptedBridge(answers=["reject", "allow_session"], default_answer="reject")
    engine, _, _ = await start_engine(workspace, {"time": time_server()}, bridge=bridge)
    try:
        first = await engine.run_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert first.status == "rejected" and first.decision_source == "user_reject"
        (request,) = bridge.requests
        assert request.tool_name == "mcp__time__get_current_time"
        assert "time - get_current_time (MCP)" in request.message
        assert '"timezone": "UTC"' in request.detail
        assert request.session_rule == "mcp__time__get_current_time"

        second = await engine.run_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert second.status == "success" and second.decision_source == "user_temporary"
        third = await engine.run_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert third.status == "success" and len(bridge.requests) == 2  # the session rule

        # A rule for one tool does not cover the server's others.
        other = await engine.run_tool(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "10:00", "target_timezone": "UTC"},
        )
        assert other.status == "rejected" and len(bridge.requests) == 3

        engine.set_mode("bypassPermissions")
        bypass = await engine.run_tool(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "10:00", "target_timezone": "UTC"},
        )
        assert bypass.status == "success" and len(bridge.requests) == 3
    finally:
        await engine.aclose()


async def test_builtins_win_a_name_clash(workspace: Path) -> None:
    impostor = build_tool(
        name="mcp__time__get_current_time",
        description="a built-in that happens to have this name",
        is_read_only=lambda i: True,
        call=lambda i, c, p: _result("built-in answer"),
    )
    engine, _, _ = await start_engine(workspace, {"time": time_server()}, base_tools=[impostor])
    try:
        pool = [t for t in engine.tool_pool() if t.name == "mcp__time__get_current_time"]
        assert pool == [impostor]
        outcome = await engine.run_tool("mcp__time__get_current_time", {})
        assert outcome.text() == "built-in answer"
    finally:
        await engine.aclose()


async def _result(text: str) -> ToolResult:
    return ToolResult(text)


async def test_plan_mode_runs_read_only_mcp_tools_and_rejects_the_others(
    workspace: Path, tmp_path: Path
) -> None:
    engine, _, bridge = await start_engine(
        workspace, {"probe": probe_server(tmp_path / "probe")}, mode="plan"
    )
    try:
        ok = await engine.run_tool("mcp__probe__echo_env", {"name": "PROBE_DIR"})
        assert ok.status == "success"
        no = await engine.run_tool("mcp__probe__add_tool", {"name": "x"})
        assert no.status == "rejected" and "Plan mode" in no.text()
        # Only the read-only tool got as far as a question.
        assert [r.tool_name for r in bridge.requests] == ["mcp__probe__echo_env"]
    finally:
        await engine.aclose()


class RecordingHooks(NoHooks):
    """A HookRunner (the engine's seam) that records what it saw and rewrites MCP output."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any]] = []

    async def run_pre_tool_use(self, tool, tool_input, ctx, on_progress) -> PreToolUseResult:
        self.seen.append(("pre", tool.name, tool_input))
        return PreToolUseResult()

    async def run_post_tool_use(
        self, tool, tool_input, response, ctx, on_progress
    ) -> PostToolUseResult:
        self.seen.append(("post", tool.name, response))
        return PostToolUseResult(
            updated_output=f"[redacted by hook] was {len(str(response))} chars"
        )


async def test_hooks_see_mcp_tools_and_may_replace_their_output(workspace: Path) -> None:
    engine, _, _ = await start_engine(workspace, {"time": time_server()})
    hooks = RecordingHooks()
    engine.hooks = hooks
    try:
        outcome = await engine.run_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert outcome.status == "success"
        assert outcome.text().startswith("[redacted by hook] was ")
        (pre, post) = hooks.seen
        assert pre == ("pre", "mcp__time__get_current_time", {"timezone": "UTC"})
        assert post[1] == "mcp__time__get_current_time" and '"timezone": "UTC"' in post[2]
    finally:
        await engine.aclose()


async def test_read_only_mcp_tools_run_side_by_side_in_a_batch(
    workspace: Path, tmp_path: Path
) -> None:
    engine, _, _ = await start_engine(workspace, {"probe": probe_server(tmp_path / "probe")})
    try:
        order: list[str] = []

        def on_update(update: Any) -> None:
            if isinstance(update, ProgressUpdate):
                order.append(update.tool_use_id)

        uses = [
            ToolUse("toolu_a", "mcp__probe__sleep", {"seconds": 0.6, "tag": "a"}),
            ToolUse("toolu_b", "mcp__probe__sleep", {"seconds": 0.6, "tag": "b"}),
        ]
        outcomes = await engine.run_batch(uses, on_update=on_update)
        assert [o.status for o in outcomes] == ["success", "success"]
        # Interleaved progress: both calls were running at the same time.
        first_b = order.index("toolu_b")
        last_a = len(order) - 1 - order[::-1].index("toolu_a")
        assert first_b < last_a, order
    finally:
        await engine.aclose()


def test_build_engine_returns_at_once_without_importing_the_sdk(workspace: Path) -> None:
    """The LSP answers while servers start: no SDK import, no waiting, in build_engine."""
    approve_project_servers()
    write_mcp_json(
        workspace,
        {
            "hangs": {
                "command": sys.executable,
                "args": [str(REPO / "tests/fakes/mcp_servers/hang.py")],
                "startupTimeout": 60000,
            }
        },
    )
    code = """
import asyncio, json, sys
from codev_ls.app import build_engine
from codev_ls.bridge import ScriptedBridge

async def main():
    engine = build_engine(sys.argv[1], ScriptedBridge())
    before = "mcp" in sys.modules
    state = engine.services["mcp"].status()["servers"][0]["state"]
    await asyncio.sleep(3)
    after = "mcp" in sys.modules
    state_later = engine.services["mcp"].status()["servers"][0]["state"]
    await engine.aclose()
    print(json.dumps([before, state, after, state_later,
                      engine.services["mcp"].status()["servers"][0]["state"]]))

asyncio.run(main())
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    before, state, after, state_later, final = json.loads(out.stdout)
    assert before is False and state == "starting"
    assert after is True and state_later == "starting"  # still waiting for the hanging server
    assert final == "stopped"


def test_importing_the_app_does_not_import_the_sdk() -> None:
    code = "import sys, codev_ls.app, codev_ls.mcp.manager; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


async def test_no_servers_configured_means_an_idle_manager(workspace: Path) -> None:
    engine, manager, bridge = await start_engine(workspace)
    assert manager.status() == {"servers": [], "problems": [], "deferred": False}
    assert engine.mcp_tools == [] and bridge.messages == []
    assert not (engine.session.data_dir / "mcp-logs").exists()
    await engine.aclose()


async def test_a_malformed_config_file_is_reported_once(workspace: Path) -> None:
    (workspace / ".mcp.json").write_text('{"mcpServers": ')
    engine, manager, bridge = await start_engine(workspace)
    try:
        ((level, message),) = bridge.messages
        assert level == "error" and ".mcp.json" in message and "not valid JSON" in message
        assert manager.status()["problems"][0]["path"].endswith(".mcp.json")
    finally:
        await engine.aclose()
    await asyncio.sleep(0)


async def test_mcp_tools_deferred_behind_tool_search_in_a_built_engine(
    workspace: Path, monkeypatch
) -> None:
    """build_engine wires MCP, the model service and ToolSearch: deferral works across them."""
    from codev_ls.app import build_engine
    from codev_ls.model.tool_defs import tool_specs
    from tests.mcp_support import everything_server

    monkeypatch.setenv("CODEV_TOOL_SEARCH", "always")
    write_mcp_json(workspace, {"everything": everything_server()})
    engine = build_engine(workspace, ScriptedBridge(default_answer="allow_once"))
    try:
        manager = engine.services["mcp"]
        await manager.wait_ready(30)
        assert manager.status()["deferred"] is True
        mcp_tools = [t for t in engine.tool_pool() if t.source == "mcp"]
        assert mcp_tools and all(t.should_defer for t in mcp_tools)
        specs, deferred = tool_specs(engine.tool_pool(), engine.session)
        assert "mcp__everything__echo" in deferred
        assert "mcp__everything__echo" not in [s.name for s in specs]
        assert "ToolSearch" in [s.name for s in specs]

        # A deferred tool called without its schema: the error says to load it first.
        bad = await engine.run_tool("mcp__everything__echo", {"msg": "hi"})
        assert bad.status == "error" and "ToolSearch" in bad.text()
        loaded = await engine.run_tool("ToolSearch", {"query": "select:mcp__everything__echo"})
        assert loaded.status == "success", loaded.content
        assert "mcp__everything__echo" in engine.session.discovered_tools
        specs, _ = tool_specs(engine.tool_pool(), engine.session)
        assert "mcp__everything__echo" in [s.name for s in specs]
        echoed = await engine.run_tool("mcp__everything__echo", {"message": "hi"})
        assert echoed.status == "success" and "hi" in echoed.text()
    finally:
        await engine.aclose()
