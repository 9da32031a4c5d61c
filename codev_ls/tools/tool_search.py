"""ToolSearch: load deferred tools' schemas into the session.

Deferred tools (``should_defer``, and MCP tools when there are many) are sent
to the model by name only. ToolSearch finds them by keywords — matching the
name (MCP names split on ``__`` and ``_``), the ``search_hint`` and the
description — or loads exact names with ``select:Name1,Name2``. Loaded tools
join ``session.discovered_tools``: their full schemas are sent with every
request from then on. The result shows the loaded definitions at once, so the
model can call them in its next step.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import ProgressCallback, Tool, ToolResult, ValidationResult
from codev_ls.permissions.types import PermissionSubject

PROMPT = """\
Loads the full schema of deferred tools so that you can call them.
Some tools are listed by name only (see "Deferred tools"): their parameters were not sent to \
you. Before calling one, load it with this tool:
- `select:Name1,Name2` loads those tools by exact name;
- keywords (e.g. "slack message", "database query") find matching tools by name, description \
and hints; `max_results` limits how many are loaded (default 5).
The result shows each loaded tool's definition; from then on you can call it like any other."""


class ToolSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        description='Keywords to search deferred tools for, or "select:Name1,Name2" to load '
        "tools by exact name."
    )
    max_results: int = Field(
        default=5, ge=1, le=50, description="The most tools to load (default 5)."
    )


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return _words(spaced.replace("__", " "))


def score(tool: Tool, terms: list[str]) -> float:
    """How well ``tool`` matches the query terms (0: not at all)."""
    if not terms:
        return 0.0
    name = tool.name.lower()
    name_words = set(_name_words(tool.name))
    hint = set(_words(tool.search_hint))
    try:
        desc = set(_words(tool.description()))
    except Exception:
        desc = set()
    total = 0.0
    matched = 0
    for term in terms:
        s = 0.0
        if term == name:
            s = 10.0
        elif term in name_words:
            s = 5.0
        elif term in name:
            s = 3.0
        if term in hint:
            s = max(s, 4.0)
        elif any(h.startswith(term) for h in hint):
            s = max(s, 2.0)
        if term in desc:
            s = max(s, 2.0)
        elif any(d.startswith(term) for d in desc if len(term) >= 3):
            s = max(s, 1.0)
        if s:
            matched += 1
        total += s
    # Tools matching more of the terms rank first.
    return total * (matched / len(terms))


class ToolSearchTool(Tool):
    name = "ToolSearch"
    search_hint = "find and load deferred tools schemas"
    input_model = ToolSearchInput
    always_load = True

    def description(self) -> str:
        return "Load deferred tools' schemas (by keyword search or select:Name)."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: ToolSearchInput) -> str:
        return f"searching tools for {input.query[:60]}"

    def permission_subject(self, input: ToolSearchInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f"search tools: {input.query[:80]}")

    async def validate_input(self, input: ToolSearchInput, ctx: ToolUseContext) -> ValidationResult:
        if not input.query.strip():
            return ValidationResult.fail('query must not be empty (keywords, or "select:Name").')
        return ValidationResult.success()

    def _deferred(self, ctx: ToolUseContext) -> list[Tool]:
        from codev_ls.model.tool_defs import deferred_names

        window = 200_000
        service = ctx.engine.services.get("model")
        if service is not None:
            window = getattr(getattr(service, "config", None), "context_window", window)
        names = set(deferred_names(ctx.tools, window))
        return [t for t in ctx.tools if t.name in names]

    async def call(
        self, input: ToolSearchInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        from codev_ls.engine.registry import find_tool

        query = input.query.strip()
        deferred = self._deferred(ctx)
        notes: list[str] = []
        if query.lower().startswith("select:"):
            found: list[Tool] = []
            for raw in query[len("select:") :].split(","):
                want = raw.strip()
                if not want:
                    continue
                tool = find_tool(ctx.tools, want)
                if tool is None:
                    notes.append(f"No tool named {want!r}.")
                elif tool not in found:
                    found.append(tool)
            found = found[: input.max_results]
        else:
            terms = _words(query)
            ranked = sorted(
                ((score(t, terms), t.name, t) for t in deferred), key=lambda x: (-x[0], x[1])
            )
            found = [t for s, _, t in ranked if s > 0][: input.max_results]
        if not found:
            names = ", ".join(sorted(t.name for t in deferred)) or "(none)"
            text = (
                " ".join(notes) + f" No deferred tool matches {query!r}. Deferred tools: {names}."
            )
            return ToolResult(text.strip())
        from codev_ls.model.tool_defs import tool_spec

        for tool in found:
            ctx.session.discovered_tools.add(tool.name)
        defs = []
        for tool in found:
            spec = tool_spec(tool, ctx.session)
            defs.append(
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.input_schema,
                }
            )
        text = (
            f"Loaded {len(found)} tool(s): {', '.join(t.name for t in found)}. "
            "Their schemas are sent with your next request; you can call them now.\n"
        )
        if notes:
            text += " ".join(notes) + "\n"
        text += "\n".join(f"<function>{json.dumps(d, ensure_ascii=False)}</function>" for d in defs)
        return ToolResult(text, meta={"loaded": [t.name for t in found]})
