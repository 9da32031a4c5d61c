"""Deferral of MCP tools behind ToolSearch when their definitions crowd the context."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import build_tool
from codev_ls.mcp.deferral import apply_deferral, defer_share, definition_tokens
from codev_ls.mcp.tool import McpTool

TOOL_SEARCH = build_tool(
    name="ToolSearch", description="Find deferred tools.", is_read_only=lambda i: True
)
READ = build_tool(name="Read", description="Read a file.", is_read_only=lambda i: True)


def mcp_tools(count: int, description_chars: int) -> list[McpTool]:
    caller = SimpleNamespace(name="big")
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "query"}}}
    return [
        McpTool(
            caller,
            {"name": f"tool{i}", "description": "d" * description_chars, "inputSchema": schema},
        )
        for i in range(count)
    ]


def engine_with(root: Path, tools: list, base: list) -> Engine:
    engine = Engine(root, ScriptedBridge(), base_tools=base)
    engine.mcp_tools = tools
    return engine


@pytest.mark.parametrize(
    ("value", "share"),
    [
        ("", 0.10),
        ("auto", 0.10),
        ("auto:25", 0.25),
        ("true", 0.0),
        ("always", 0.0),
        ("false", None),
        ("never", None),
        ("auto:x", 0.10),
        ("banana", 0.10),
    ],
)
def test_policy_from_env(value: str, share: float | None) -> None:
    assert defer_share({"CODEV_TOOL_SEARCH": value}) == share


def test_few_small_tools_are_not_deferred(workspace: Path) -> None:
    engine = engine_with(workspace, mcp_tools(3, 100), [READ, TOOL_SEARCH])
    decision = apply_deferral(engine, {})
    assert decision["deferred"] is False
    assert not any(t.should_defer for t in engine.mcp_tools)


def test_many_large_tools_are_deferred_past_the_threshold(workspace: Path) -> None:
    tools = mcp_tools(60, 2000)  # ~60 × 520 tokens ≈ 31k tokens > 10% of 200k
    engine = engine_with(workspace, tools, [READ, TOOL_SEARCH])
    size = sum(definition_tokens(t) for t in tools)
    assert size > 20_000
    decision = apply_deferral(engine, {})
    assert decision["deferred"] is True and decision["mcpToolTokens"] == size
    assert decision["thresholdTokens"] == 20_000
    assert all(t.should_defer for t in engine.mcp_tools)
    # Built-ins are untouched; the ToolInfo "deferred" flag follows should_defer.
    assert not READ.should_defer and not TOOL_SEARCH.should_defer
    # A larger context window (the model service's) lifts the threshold.
    engine.services["model"] = SimpleNamespace(context_window=1_000_000)
    assert apply_deferral(engine, {})["deferred"] is False
    assert not any(t.should_defer for t in engine.mcp_tools)


def test_threshold_share_and_window_from_env(workspace: Path) -> None:
    engine = engine_with(workspace, mcp_tools(3, 400), [TOOL_SEARCH])
    assert apply_deferral(engine, {"CODEV_TOOL_SEARCH": "auto:1", "CODEV_CONTEXT_WINDOW": "10000"})[
        "deferred"
    ]
    assert apply_deferral(engine, {"CODEV_TOOL_SEARCH": "always"})["deferred"]
    assert not apply_deferral(engine, {"CODEV_TOOL_SEARCH": "never"})["deferred"]


def test_nothing_is_deferred_without_tool_search(workspace: Path) -> None:
    engine = engine_with(workspace, mcp_tools(60, 2000), [READ])
    assert apply_deferral(engine, {})["deferred"] is False
    assert not any(t.should_defer for t in engine.mcp_tools)


def test_always_load_tools_stay(workspace: Path) -> None:
    tools = mcp_tools(2, 10)
    tools[0].always_load = True  # type: ignore[misc]
    engine = engine_with(workspace, tools, [TOOL_SEARCH])
    apply_deferral(engine, {"CODEV_TOOL_SEARCH": "always"})
    assert [t.should_defer for t in tools] == [False, True]
