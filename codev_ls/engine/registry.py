"""Which tools exist and which ones the model gets to see.

``get_all_base_tools`` lists the built-ins (feature flags applied);
``get_tools`` narrows them for a permission context (simple mode, deny rules,
REPL mode, ``is_enabled``); ``assemble_tool_pool`` joins MCP tools, built-ins
winning on a name clash, sorted by name so the model's prompt cache stays warm;
``get_merged_tools`` is the plain merge used for size thresholds.

Built-ins are listed by module path and imported on first use: the server's
cold start must not pay for tools it has not offered yet.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codev_ls.engine.config import feature_enabled, feature_opt_in, repl_mode, simple_mode
from codev_ls.engine.tool import Tool
from codev_ls.permissions.rules import PermissionContext


class DuplicateToolError(RuntimeError):
    """Two tools registered under one name (or alias): a programming error."""


@dataclass(frozen=True, slots=True)
class BuiltinEntry:
    """One built-in tool: where its class lives and the flag that gates it."""

    module: str
    cls: str
    flag: str | None = None
    # Off unless CODEV_ENABLE_<FLAG>=1 (experimental tools).
    opt_in: bool = False


# The built-in tools. Each issue that adds a tool adds its line here.
#
# Tools that reach outside the workspace or are extras carry a feature flag named
# after the tool: ``CODEV_DISABLE_WEBSEARCH=1`` (the name in capitals) takes WebSearch
# out of the pool for a whole deployment, whatever the settings files say. The core
# file and shell tools — and those others depend on (ToolSearch loads deferred
# tools, TaskOutput/TaskStop serve Bash's background runs, ExitPlanMode ends plan
# mode) — have none: a deny rule in settings removes them per user or project.
BUILTIN_TOOLS: tuple[BuiltinEntry, ...] = (
    BuiltinEntry("codev_ls.tools.read", "ReadTool"),
    BuiltinEntry("codev_ls.tools.glob", "GlobTool"),
    BuiltinEntry("codev_ls.tools.edit", "EditTool"),
    BuiltinEntry("codev_ls.tools.write", "WriteTool"),
    BuiltinEntry("codev_ls.tools.grep", "GrepTool"),
    BuiltinEntry("codev_ls.tools.notebook_edit", "NotebookEditTool", flag="NotebookEdit"),
    BuiltinEntry("codev_ls.tools.web_search", "WebSearchTool", flag="WebSearch"),
    BuiltinEntry("codev_ls.tools.web_fetch", "WebFetchTool", flag="WebFetch"),
    BuiltinEntry("codev_ls.tools.bash", "BashTool"),
    BuiltinEntry("codev_ls.tools.tasks", "TaskOutputTool"),
    BuiltinEntry("codev_ls.tools.tasks", "TaskStopTool"),
    BuiltinEntry("codev_ls.tools.location.tool", "LocationTool", flag="Location"),
    BuiltinEntry("codev_ls.tools.agent", "AgentTool", flag="Agent"),
    BuiltinEntry("codev_ls.tools.tool_search", "ToolSearchTool"),
    BuiltinEntry("codev_ls.tools.skill", "SkillTool", flag="Skill"),
    BuiltinEntry("codev_ls.tools.ask_user_question", "AskUserQuestionTool", flag="AskUserQuestion"),
    BuiltinEntry("codev_ls.tools.exit_plan_mode", "ExitPlanModeTool"),
)

# Only these in simple mode (CODEV_SIMPLE=1).
SIMPLE_MODE_TOOLS = frozenset({"Bash", "Read", "Edit"})


def _entry_enabled(entry: BuiltinEntry) -> bool:
    if entry.flag is None:
        return True
    return feature_opt_in(entry.flag) if entry.opt_in else feature_enabled(entry.flag)


_INSTANCES: dict[tuple[str, str], Tool] = {}


def _instantiate(entry: BuiltinEntry) -> Tool:
    key = (entry.module, entry.cls)
    tool = _INSTANCES.get(key)
    if tool is None:
        module = importlib.import_module(entry.module)
        tool = getattr(module, entry.cls)()
        _INSTANCES[key] = tool
    return tool


def check_unique(tools: Iterable[Tool]) -> None:
    """Raise :class:`DuplicateToolError` when a name or alias is taken twice."""
    seen: dict[str, str] = {}
    for tool in tools:
        for name in (tool.name, *tool.aliases):
            if name in seen:
                raise DuplicateToolError(
                    f"tool name {name!r} is registered twice ({seen[name]} and {tool.name})"
                )
            seen[name] = tool.name


def get_all_base_tools(entries: Sequence[BuiltinEntry] | None = None) -> list[Tool]:
    """Every built-in tool whose feature flag is on, in registration order."""
    tools = [
        _instantiate(e)
        for e in (BUILTIN_TOOLS if entries is None else entries)
        if _entry_enabled(e)
    ]
    check_unique(tools)
    return tools


def filter_tools_by_deny_rules(tools: Iterable[Tool], ctx: PermissionContext) -> list[Tool]:
    """Drop tools a bare deny rule names (``WebSearch``, ``mcp__server``)."""
    return [t for t in tools if ctx.denies_whole_tool(t.name) is None]


def get_tools(
    permission_context: PermissionContext, base_tools: Sequence[Tool] | None = None
) -> list[Tool]:
    """The built-in tools offered under ``permission_context``."""
    tools = list(get_all_base_tools() if base_tools is None else base_tools)
    # 1. simple mode
    if simple_mode():
        tools = [t for t in tools if t.name in SIMPLE_MODE_TOOLS]
    # 2. deny rules
    tools = filter_tools_by_deny_rules(tools, permission_context)
    # 3. REPL mode hides the primitives the REPL wraps. A seam: no REPL tool exists
    #    yet, so no built-in sets repl_only_primitive (tested with synthetic tools).
    if repl_mode():
        tools = [t for t in tools if not t.repl_only_primitive]
    # 4. is_enabled
    return [t for t in tools if _safe_enabled(t)]


def _safe_enabled(tool: Tool) -> bool:
    try:
        return bool(tool.is_enabled())
    except Exception:
        return False


def assemble_tool_pool(
    permission_context: PermissionContext,
    mcp_tools: Sequence[Tool] = (),
    base_tools: Sequence[Tool] | None = None,
) -> list[Tool]:
    """Built-ins plus MCP tools: deny-filtered, deduplicated (built-ins win), sorted by name."""
    builtins = get_tools(permission_context, base_tools)
    extra = filter_tools_by_deny_rules(mcp_tools, permission_context)
    extra = [t for t in extra if _safe_enabled(t)]
    by_name: dict[str, Tool] = {}
    for tool in [*builtins, *extra]:
        by_name.setdefault(tool.name, tool)
    return sorted(by_name.values(), key=lambda t: t.name)


def get_merged_tools(
    permission_context: PermissionContext,
    mcp_tools: Sequence[Tool] = (),
    base_tools: Sequence[Tool] | None = None,
) -> list[Tool]:
    """Built-ins and MCP tools merged as they are: no dedupe, no sort."""
    return [*get_tools(permission_context, base_tools), *mcp_tools]


def find_tool(tools: Iterable[Tool], name: str) -> Tool | None:
    """A tool by name, then by alias."""
    tools = list(tools)
    for tool in tools:
        if tool.name == name:
            return tool
    for tool in tools:
        if name in tool.aliases:
            return tool
    return None
