"""Which tool definitions the model gets: full schemas, or names only (deferred).

Tools marked ``should_defer`` are *deferred* (MCP tools get the mark when
their definitions would take a large part of the context window:
``mcp/deferral.py``): the model sees their names only (listed in the system prompt) until ToolSearch loads them
into ``session.discovered_tools``; from then on their full schemas are sent.
``always_load`` tools are never deferred. Without ToolSearch in the pool
nothing is deferred (there would be no way to load it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from codev_ls.model.types import ToolSpec

if TYPE_CHECKING:
    from codev_ls.engine.context import Session
    from codev_ls.engine.tool import Tool

TOOL_SEARCH = "ToolSearch"


def describe(tool: Tool, session: Session | None = None) -> str:
    """A tool's description for the model; tools that depend on the workspace say so."""
    dynamic = getattr(tool, "description_for", None)
    if dynamic is not None and session is not None:
        try:
            return str(dynamic(session))
        except Exception:
            pass
    try:
        return tool.description()
    except Exception:
        return tool.search_hint or tool.name


def tool_spec(tool: Tool, session: Session | None = None) -> ToolSpec:
    return ToolSpec(tool.name, describe(tool, session), tool.input_schema())


def deferred_names(tools: Sequence[Tool], context_window: int = 200_000) -> list[str]:
    """Names of the tools of ``tools`` that are sent by name only (before discovery)."""
    if not any(t.name == TOOL_SEARCH for t in tools):
        return []
    return [t.name for t in tools if t.should_defer and not t.always_load and t.name != TOOL_SEARCH]


def tool_specs(
    tools: Sequence[Tool], session: Session, context_window: int = 200_000
) -> tuple[list[ToolSpec], list[str]]:
    """(definitions to send, names of the deferred tools) for this session, sorted by name."""
    deferred = deferred_names(tools, context_window)
    hidden = set(deferred) - set(session.discovered_tools)
    specs = [
        tool_spec(t, session)
        for t in sorted(tools, key=lambda t: t.name)
        if t.name not in hidden and (t.name != TOOL_SEARCH or deferred)
    ]
    return specs, deferred
