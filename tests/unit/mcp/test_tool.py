"""An MCP tool definition as a Tool: name, schema, annotations → traits."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codev_ls.engine.tool import InputError
from codev_ls.mcp.tool import MAX_NAME_LEN, McpTool, mcp_tool_name, normalize_server_name
from codev_ls.permissions.rules import PermissionContext, parse_rule

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"path": {"type": "string"}, "depth": {"type": "integer", "minimum": 0}},
    "required": ["path"],
}


def make(spec: dict, server: str = "srv") -> McpTool:
    return McpTool(SimpleNamespace(name=server), spec)


def test_names_follow_mcp__server__tool_and_are_api_safe() -> None:
    assert mcp_tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert mcp_tool_name("my server.v2", "do it/now") == "mcp__my_server_v2__do_it_now"
    # "__" inside a server name would make mcp__a__b rules ambiguous.
    assert normalize_server_name("a__b") == "a_b"
    long = mcp_tool_name("s" * 40, "t" * 40)
    assert len(long) == MAX_NAME_LEN and long.startswith("mcp__sss")
    assert long != mcp_tool_name("s" * 40, "t" * 41)


def test_raw_schema_description_and_source() -> None:
    tool = make({"name": "list", "description": "Lists things.", "inputSchema": SCHEMA})
    assert tool.name == "mcp__srv__list"
    assert tool.source == "mcp"
    assert tool.input_schema() is SCHEMA
    assert tool.description() == "Lists things."
    assert tool.user_facing_name() == "srv - list (MCP)"
    assert tool.progress_type == "MCPProgress"


def test_input_is_validated_against_the_raw_schema() -> None:
    tool = make({"name": "list", "inputSchema": SCHEMA})
    assert tool.parse_input({"path": "/a", "depth": 2}) == {"path": "/a", "depth": 2}
    with pytest.raises(InputError) as exc:
        tool.parse_input({"depth": -1})
    assert "path" in exc.value.message and "depth" in exc.value.message


@pytest.mark.parametrize(
    ("annotations", "read_only", "destructive"),
    [
        (None, False, False),
        ({}, False, False),
        ({"readOnlyHint": True}, True, False),
        ({"readOnlyHint": True, "destructiveHint": True}, True, False),
        ({"readOnlyHint": False, "destructiveHint": True}, False, True),
        ({"destructiveHint": False}, False, False),
    ],
)
def test_annotations_map_to_traits(annotations, read_only, destructive) -> None:
    spec = {"name": "t", "inputSchema": SCHEMA}
    if annotations is not None:
        spec["annotations"] = annotations
    tool = make(spec)
    assert tool.is_read_only({}) is read_only
    assert tool.is_concurrency_safe({}) is read_only  # only read-only tools run side by side
    assert tool.is_destructive({}) is destructive


def test_long_descriptions_are_cut_and_missing_ones_filled() -> None:
    tool = make({"name": "t", "description": "x" * 5000, "inputSchema": SCHEMA})
    assert len(tool.description()) < 2100 and tool.description().endswith("[description cut]")
    assert (
        "t tool of the MCP server srv" in make({"name": "t", "inputSchema": SCHEMA}).description()
    )


def test_permission_subject_shows_the_arguments() -> None:
    tool = make({"name": "delete_repo", "inputSchema": SCHEMA}, server="gh")
    subject = tool.permission_subject({"path": "octo/cat"}, None)  # type: ignore[arg-type]
    assert "delete_repo" in subject.summary and "gh" in subject.summary
    assert '"path": "octo/cat"' in subject.detail
    assert tool.to_auto_classifier_input({"path": "x"}) == 'mcp__gh__delete_repo {"path": "x"}'


def test_deny_rules_name_a_whole_server_or_one_tool() -> None:
    ctx = PermissionContext(deny=[parse_rule("mcp__gh"), parse_rule("mcp__time__convert_time")])
    assert ctx.denies_whole_tool(make({"name": "x", "inputSchema": SCHEMA}, "gh").name)
    assert ctx.denies_whole_tool("mcp__time__convert_time")
    assert ctx.denies_whole_tool("mcp__time__get_current_time") is None
    assert ctx.denies_whole_tool("mcp__ghost__x") is None
