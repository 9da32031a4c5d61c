"""Deferring MCP tools behind ToolSearch when their definitions would crowd the context.

Every tool definition sent with a model request costs context. When the MCP
tools' definitions (name, description, JSON schema) together exceed a share
of the model's context window, they are *deferred*: ``should_defer`` is set
on them, the model session sends only their names, and the model loads a
schema with ToolSearch when it needs one (``Session.discovered_tools``).

The size is computed over ``get_merged_tools()`` (built-ins and MCP tools,
as they are, before dedupe). ``CODEV_TOOL_SEARCH`` sets the policy:
``auto`` (default: defer past 10% of the context), ``auto:N`` (past N%),
``true``/``always`` (always defer MCP tools), ``false``/``never``. The context
window is the model service's ``context_window`` (tokens) when it has one,
else ``CODEV_CONTEXT_WINDOW``, else 200,000. Nothing is deferred while no
ToolSearch tool is in the pool: a deferred tool could not be loaded.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine
    from codev_ls.engine.tool import Tool

log = logging.getLogger(__name__)

DEFAULT_SHARE = 0.10
DEFAULT_CONTEXT_TOKENS = 200_000
# A rough, tokenizer-free estimate: JSON schemas and English prose average ~4 chars a token.
CHARS_PER_TOKEN = 4
TOOL_SEARCH_NAME = "ToolSearch"


def defer_share(environ: Mapping[str, str] | None = None) -> float | None:
    """The share of the context past which MCP tools are deferred (0: always; None: never)."""
    env = os.environ if environ is None else environ
    value = env.get("CODEV_TOOL_SEARCH", "auto").strip().lower()
    if value in ("", "auto"):
        return DEFAULT_SHARE
    if value in ("1", "true", "yes", "on", "always"):
        return 0.0
    if value in ("0", "false", "no", "off", "never"):
        return None
    if value.startswith("auto:"):
        try:
            percent = float(value[5:])
        except ValueError:
            log.warning("CODEV_TOOL_SEARCH=%r is not auto:N; using auto", value)
            return DEFAULT_SHARE
        return max(0.0, percent) / 100.0
    log.warning("CODEV_TOOL_SEARCH=%r is not understood; using auto", value)
    return DEFAULT_SHARE


def context_window_tokens(engine: Engine, environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    model = engine.services.get("model")
    window = getattr(model, "context_window", None)
    if isinstance(window, int) and window > 0:
        return window
    try:
        value = int(env.get("CODEV_CONTEXT_WINDOW", ""))
    except ValueError:
        value = 0
    return value if value > 0 else DEFAULT_CONTEXT_TOKENS


def definition_tokens(tool: Tool) -> int:
    """Estimated tokens of a tool's definition as the model API gets it."""
    try:
        schema = json.dumps(tool.input_schema(), ensure_ascii=False)
        description = tool.description()
    except Exception:
        return 0
    return (len(tool.name) + len(description) + len(schema)) // CHARS_PER_TOKEN


def should_defer_mcp(
    merged: Sequence[Tool], window_tokens: int, share: float | None
) -> tuple[bool, int]:
    """Whether the MCP tools among ``merged`` are to be deferred, and their size in tokens."""
    mcp = [t for t in merged if t.source == "mcp" and not t.always_load]
    size = sum(definition_tokens(t) for t in mcp)
    if share is None or not mcp:
        return False, size
    if not any(t.name == TOOL_SEARCH_NAME for t in merged):
        return False, size
    return size > share * window_tokens, size


def apply_deferral(engine: Engine, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Set ``should_defer`` on the engine's MCP tools; returns what was decided (for status)."""
    merged = engine.merged_tools()
    window = context_window_tokens(engine, environ)
    share = defer_share(environ)
    defer, size = should_defer_mcp(merged, window, share)
    for tool in engine.mcp_tools:
        tool.should_defer = defer and not tool.always_load  # type: ignore[misc]
    return {
        "deferred": defer,
        "mcpToolTokens": size,
        "thresholdTokens": None if share is None else int(share * window),
    }
