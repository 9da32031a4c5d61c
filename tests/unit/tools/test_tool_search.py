"""ToolSearch: deferred tools are sent by name only until loaded."""

from __future__ import annotations

from typing import Any

from codev_ls.engine.tool import ToolResult, build_tool
from codev_ls.model.tool_defs import deferred_names, tool_specs
from codev_ls.tools.tool_search import ToolSearchTool, score
from tests.fakes.harness import FakeModel


def deferred_tool(
    name: str = "SlackSend",
    hint: str = "send a slack message to a channel",
    description: str = "Send a message to a Slack channel.",
) -> Any:
    async def call(input: dict, ctx: Any, on_progress: Any) -> ToolResult:
        return ToolResult(f"sent {input['text']!r} to {input['channel']}")

    return build_tool(
        name=name,
        description=description,
        search_hint=hint,
        should_defer=True,
        input_json_schema={
            "type": "object",
            "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
            "required": ["channel", "text"],
            "additionalProperties": False,
        },
        is_read_only=lambda input: True,
        call=call,
    )


async def test_deferred_tool_loaded_by_select_then_called(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, extra_tools=[deferred_tool()])
    fake.push(
        fake.reply(("SlackSend", {"message": "hi"})),  # called blind: wrong parameters
        fake.reply(("ToolSearch", {"query": "select:SlackSend"})),
        fake.reply(("SlackSend", {"channel": "#dev", "text": "hi"})),
        fake.reply("Sent."),
    )
    result = await rig.chat("tell #dev hi")
    assert result.stop_reason == "end_turn"
    first, second, third, fourth = fake.bodies
    assert "SlackSend" not in fake.tool_names(first)
    assert "ToolSearch" in fake.tool_names(first)
    assert "- SlackSend" in fake.system(first)
    blind = next(iter(fake.results(second).values()))
    assert 'ToolSearch (query "select:SlackSend")' in blind
    loaded = next(iter(fake.results(third).values()))
    assert "Loaded 1 tool(s): SlackSend" in loaded and '"channel"' in loaded
    assert "SlackSend" in fake.tool_names(third)
    assert "sent 'hi' to #dev" in next(iter(fake.results(fourth).values()))
    session = rig.engine.sessions[result.session_id]
    assert session.discovered_tools == {"SlackSend"}
    # The system prompt did not change when the tool was discovered (prompt cache).
    assert fake.system(first) == fake.system(fourth)


async def test_keyword_search_ranks_and_limits(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    tools = [
        deferred_tool(),
        deferred_tool("JiraCreate", "create a jira issue ticket", "Create an issue in Jira."),
        deferred_tool("SlackRead", "read slack channel history", "Read a Slack channel."),
    ]
    rig = make_rig(fake, extra_tools=tools)
    fake.push(
        fake.reply(("ToolSearch", {"query": "slack message", "max_results": 1})),
        fake.reply(("ToolSearch", {"query": "kubernetes"})),
        fake.reply("ok"),
    )
    result = await rig.chat("find tools")
    assert result.stop_reason == "end_turn"
    first = next(iter(fake.results(fake.bodies[1]).values()))
    assert "Loaded 1 tool(s): SlackSend" in first
    none = next(iter(fake.results(fake.bodies[2]).values()))
    assert "No deferred tool matches" in none and "JiraCreate" in none
    assert rig.engine.sessions[result.session_id].discovered_tools == {"SlackSend"}


def test_score_prefers_name_then_hint() -> None:
    slack = deferred_tool()
    jira = deferred_tool("JiraCreate", "create a jira issue ticket", "Create an issue in Jira.")
    assert score(slack, ["slack"]) > score(jira, ["slack"]) == 0
    assert score(jira, ["ticket"]) > 0


def test_no_toolsearch_means_nothing_deferred(workspace: Any) -> None:
    from codev_ls.engine.context import Session

    tools = [deferred_tool()]
    assert deferred_names(tools) == []
    specs, deferred = tool_specs([*tools, ToolSearchTool()], Session(workspace))
    assert deferred == ["SlackSend"]
    assert [s.name for s in specs] == ["ToolSearch"]
    # Without deferred tools ToolSearch itself is not offered.
    specs, deferred = tool_specs([ToolSearchTool()], Session(workspace))
    assert specs == [] and deferred == []


def test_many_mcp_tools_are_deferred(workspace: Any, monkeypatch: Any) -> None:
    """MCP deferral (mcp/deferral.py) marks the tools; the model sends their names only."""
    from codev_ls.bridge import ScriptedBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.mcp.deferral import apply_deferral
    from codev_ls.model.config import load_config
    from codev_ls.model.service import attach_model

    def mcp(i: int) -> Any:
        return build_tool(
            name=f"mcp__big__tool{i}",
            description="x" * 400,
            source="mcp",
            input_json_schema={"type": "object", "properties": {"a": {"type": "string"}}},
        )

    engine = Engine(workspace, ScriptedBridge())
    config = load_config({"ANTHROPIC_API_KEY": "sk-ant-x", "CODEV_CONTEXT_WINDOW": "20000"})
    attach_model(engine, config)
    engine.mcp_tools = [mcp(i) for i in range(100)]
    assert apply_deferral(engine, {})["deferred"] is True  # sized against the model's window
    specs, deferred = tool_specs(engine.tool_pool(), engine.session, 20_000)
    assert len(deferred) == 100
    assert not any(s.name.startswith("mcp__") for s in specs)
    engine.mcp_tools = [mcp(1)]
    assert apply_deferral(engine, {})["deferred"] is False
    specs, deferred = tool_specs(engine.tool_pool(), engine.session, 20_000)
    assert deferred == [] and "mcp__big__tool1" in [s.name for s in specs]


async def test_schema_hint_only_for_a_tool_really_deferred(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    """The "schema not sent" hint needs ToolSearch in the pool, no always_load, and the
    tool not loaded yet; otherwise the model did get the schema and the hint would lie."""
    rig = make_rig(fake_anthropic)
    slack = deferred_tool()
    pinned = build_tool(
        name="Pinned",
        description="A deferrable tool that is always loaded.",
        should_defer=True,
        always_load=True,
        input_json_schema={
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "required": ["x"],
            "additionalProperties": False,
        },
        is_read_only=lambda input: True,
        call=slack.call,
    )
    search = ToolSearchTool()
    hint = "was not sent to you"

    async def blind(name: str, pool: list[Any]) -> str:
        outcome = await rig.engine.run_tool(name, {"message": "hi"}, tools=pool)
        assert outcome.status == "error"
        return outcome.text()

    assert hint in await blind("SlackSend", [slack, search])
    assert hint not in await blind("SlackSend", [slack])  # no ToolSearch: sent in full
    assert hint not in await blind("Pinned", [pinned, search])  # always loaded
    rig.engine.session.discovered_tools.add("SlackSend")
    assert hint not in await blind("SlackSend", [slack, search])  # loaded already
