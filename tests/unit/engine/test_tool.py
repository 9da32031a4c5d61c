"""The Tool abstraction: build_tool's safe defaults, schemas, input errors."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.tool import InputError, Tool, ToolResult, build_tool


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="a path")
    count: int = Field(default=1, ge=1, description="how many")


async def test_build_tool_fills_the_safe_defaults() -> None:
    tool = build_tool(name="Thing", input_model=_Input)
    inp = tool.parse_input({"path": "x"})
    assert tool.is_enabled() is True
    assert tool.is_concurrency_safe(inp) is False
    assert tool.is_read_only(inp) is False
    assert tool.is_destructive(inp) is False
    assert tool.to_auto_classifier_input(inp) == ""
    assert tool.user_facing_name(inp) == "Thing"
    assert tool.should_defer is False and tool.always_load is False and tool.strict is False
    assert tool.aliases == ()
    decision = await tool.check_permissions(inp, None)  # type: ignore[arg-type]
    assert decision.behavior == "allow"
    assert decision.updated_input is inp


def test_build_tool_overrides_take_the_methods_arguments_without_self() -> None:
    tool = build_tool(
        name="Ls",
        aliases=["List"],
        is_read_only=lambda inp: inp["path"] == "/",
        description="list things",
        input_json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    assert tool.is_read_only({"path": "/"}) is True
    assert tool.is_read_only({"path": "/x"}) is False
    assert tool.description() == "list things"
    assert tool.aliases == ("List",)
    assert isinstance(tool, Tool)


def test_build_tool_rejects_unknown_fields_and_missing_name() -> None:
    with pytest.raises(TypeError, match="unknown fields: is_readonly"):
        build_tool(name="X", is_readonly=lambda i: True)
    with pytest.raises(TypeError, match="name"):
        build_tool(description="nameless")


def test_input_schema_comes_from_the_pydantic_model() -> None:
    schema = build_tool(name="T", input_model=_Input).input_schema()
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert schema["properties"]["path"]["description"] == "a path"
    assert schema["additionalProperties"] is False
    assert "title" not in schema and "title" not in schema["properties"]["path"]


def test_schema_errors_name_the_offending_fields() -> None:
    tool = build_tool(name="T", input_model=_Input)
    with pytest.raises(InputError) as err:
        tool.parse_input({"count": 0, "bogus": 1})
    text = err.value.message
    assert "`path` is required but missing" in text
    assert "`count`" in text and "greater than or equal to 1" in text
    assert "`bogus` is not a known parameter" in text
    with pytest.raises(InputError, match="JSON object"):
        tool.parse_input(["not", "an", "object"])


def test_raw_json_schema_is_validated() -> None:
    tool = build_tool(
        name="mcp__s__t",
        input_json_schema={
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"],
        },
    )
    assert tool.input_schema()["required"] == ["tz"]
    assert tool.parse_input({"tz": "UTC"}) == {"tz": "UTC"}
    with pytest.raises(InputError, match="'tz' is a required property"):
        tool.parse_input({})
    with pytest.raises(InputError, match="`tz` 5 is not of type 'string'"):
        tool.parse_input({"tz": 5})


def test_result_mapping_to_the_api_block() -> None:
    tool = build_tool(name="T")
    assert tool.map_tool_result_to_block(ToolResult("hi"), "id1") == {
        "type": "tool_result",
        "tool_use_id": "id1",
        "content": "hi",
    }
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "source": {}}]
    mapped = tool.map_tool_result_to_block(ToolResult(blocks, is_error=True), "id2")
    assert mapped["content"] == blocks and mapped["is_error"] is True
    assert tool.map_tool_result_to_block(ToolResult({"a": 1}), "i")["content"] == '{"a": 1}'
