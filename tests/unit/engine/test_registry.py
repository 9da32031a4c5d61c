"""The registry: which tools exist and which the model sees."""

from __future__ import annotations

import pytest

from codev_ls.engine.registry import (
    BUILTIN_TOOLS,
    BuiltinEntry,
    DuplicateToolError,
    assemble_tool_pool,
    find_tool,
    get_all_base_tools,
    get_merged_tools,
    get_tools,
)
from codev_ls.engine.tool import Tool, build_tool
from codev_ls.permissions.rules import PermissionContext, parse_rule


def _tools(*names: str, **extra: object) -> list[Tool]:
    return [build_tool(name=n, **extra) for n in names]  # type: ignore[arg-type]


def _ctx(*deny: str) -> PermissionContext:
    return PermissionContext(deny=[parse_rule(d) for d in deny])


def test_all_base_tools_are_the_builtins_with_unique_names() -> None:
    tools = get_all_base_tools()
    names = [t.name for t in tools]
    assert "Read" in names and "Glob" in names
    assert len(set(names)) == len(names)


def test_feature_flags_gate_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = (
        BuiltinEntry("codev_ls.tools.read", "ReadTool"),
        BuiltinEntry("codev_ls.tools.glob", "GlobTool", flag="globbing"),
        BuiltinEntry("codev_ls.tools.glob", "GlobTool", flag="experimental", opt_in=True),
    )
    assert [t.name for t in get_all_base_tools(entries[:2])] == ["Read", "Glob"]
    monkeypatch.setenv("CODEV_DISABLE_GLOBBING", "1")
    assert [t.name for t in get_all_base_tools(entries[:2])] == ["Read"]
    # an opt-in tool is off until enabled
    assert [t.name for t in get_all_base_tools(entries[::2])] == ["Read"]
    monkeypatch.setenv("CODEV_ENABLE_EXPERIMENTAL", "1")
    assert [t.name for t in get_all_base_tools(entries[::2])] == ["Read", "Glob"]


def test_builtin_feature_flags_are_named_after_their_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CODEV_DISABLE_<TOOL NAME IN CAPITALS>=1 takes that built-in out (README, "Turning tools off")."""
    flagged = {e.flag: e for e in BUILTIN_TOOLS if e.flag is not None}
    assert {"WebSearch", "WebFetch", "Location", "Agent"} <= set(flagged)
    all_names = [t.name for t in get_all_base_tools()]
    for flag in flagged:
        assert flag in all_names  # the flag is the tool's own name
    monkeypatch.setenv("CODEV_DISABLE_WEBSEARCH", "1")
    monkeypatch.setenv("CODEV_DISABLE_LOCATION", "true")
    names = [t.name for t in get_all_base_tools()]
    assert "WebSearch" not in names and "Location" not in names
    assert names == [n for n in all_names if n not in ("WebSearch", "Location")]
    # The pool the model sees follows (and an unflagged core tool cannot be turned off so).
    monkeypatch.setenv("CODEV_DISABLE_READ", "1")
    pool = [t.name for t in assemble_tool_pool(_ctx())]
    assert "WebSearch" not in pool and "Read" in pool


def test_two_tools_with_one_name_is_an_error_at_start_up() -> None:
    entries = (
        BuiltinEntry("codev_ls.tools.read", "ReadTool"),
        BuiltinEntry("codev_ls.tools.read", "ReadTool"),
    )
    with pytest.raises(DuplicateToolError, match="'Read' is registered twice"):
        get_all_base_tools(entries)


def test_simple_mode_keeps_only_bash_read_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    base = _tools("Bash", "Read", "Edit", "Write", "Grep")
    monkeypatch.setenv("CODEV_SIMPLE", "1")
    assert [t.name for t in get_tools(_ctx(), base)] == ["Bash", "Read", "Edit"]
    monkeypatch.setenv("CODEV_SIMPLE", "0")
    assert len(get_tools(_ctx(), base)) == 5


def test_bare_deny_rules_remove_tools_but_specified_ones_do_not() -> None:
    base = _tools("Bash", "Read", "WebSearch")
    kept = get_tools(_ctx("WebSearch", "Bash(rm:*)"), base)
    assert [t.name for t in kept] == ["Bash", "Read"]


def test_repl_mode_hides_the_primitives(monkeypatch: pytest.MonkeyPatch) -> None:
    base = [
        build_tool(name="Bash", repl_only_primitive=True),
        build_tool(name="Read", repl_only_primitive=True),
        build_tool(name="REPL"),
    ]
    assert len(get_tools(_ctx(), base)) == 3
    monkeypatch.setenv("CODEV_REPL", "1")
    assert [t.name for t in get_tools(_ctx(), base)] == ["REPL"]


def test_disabled_tools_are_left_out_even_when_is_enabled_raises() -> None:
    def broken() -> bool:
        raise RuntimeError("boom")

    base = [
        build_tool(name="On"),
        build_tool(name="Off", is_enabled=lambda: False),
        build_tool(name="Broken", is_enabled=broken),
    ]
    assert [t.name for t in get_tools(_ctx(), base)] == ["On"]


def test_pool_dedupes_with_builtins_winning_and_sorts_by_name() -> None:
    base = _tools("Write", "Bash", "Read")
    builtin_read = base[2]
    mcp = [
        build_tool(name="Read", source="mcp"),
        build_tool(name="mcp__time__now", source="mcp"),
        build_tool(name="mcp__git__log", source="mcp"),
        build_tool(name="Agent", source="mcp"),
    ]
    pool = assemble_tool_pool(_ctx(), mcp, base)
    assert [t.name for t in pool] == [
        "Agent",
        "Bash",
        "Read",
        "Write",
        "mcp__git__log",
        "mcp__time__now",
    ]
    assert next(t for t in pool if t.name == "Read") is builtin_read


def test_pool_applies_deny_rules_to_mcp_tools() -> None:
    mcp = [
        build_tool(name="mcp__time__now", source="mcp"),
        build_tool(name="mcp__time__convert", source="mcp"),
        build_tool(name="mcp__git__log", source="mcp"),
        build_tool(name="mcp__git__commit", source="mcp"),
        build_tool(name="mcp__gitlab__x", source="mcp"),
    ]
    pool = assemble_tool_pool(_ctx("mcp__time", "mcp__git__commit"), mcp, _tools("Read"))
    assert [t.name for t in pool] == ["Read", "mcp__git__log", "mcp__gitlab__x"]


def test_merged_tools_neither_dedupes_nor_sorts() -> None:
    base = _tools("Write", "Read")
    mcp = [build_tool(name="Read", source="mcp"), build_tool(name="mcp__a__b", source="mcp")]
    merged = get_merged_tools(_ctx(), mcp, base)
    assert [t.name for t in merged] == ["Write", "Read", "Read", "mcp__a__b"]


def test_find_tool_by_name_then_alias() -> None:
    tools = [build_tool(name="TaskOutput", aliases=["BashOutput"]), build_tool(name="BashOutput2")]
    assert find_tool(tools, "TaskOutput") is tools[0]
    assert find_tool(tools, "BashOutput") is tools[0]
    assert find_tool(tools, "bashoutput") is None
