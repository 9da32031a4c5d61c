"""An MCP server's tool as a :class:`Tool` of the pool: ``mcp__<server>__<tool>``.

The tool keeps the server's raw JSON schema (``input_json_schema``: the
engine validates input against it with jsonschema), its description and its
annotations: ``readOnlyHint`` → ``is_read_only`` (and only then
``is_concurrency_safe``), ``destructiveHint`` → ``is_destructive``. Annotations
are hints from the server: they may let a read-only tool run in plan mode or
beside others, but never skip a permission question — every MCP tool asks in
default mode until an allow rule (``mcp__server``, ``mcp__server__tool``) or
the user's "Allow for this session" / "Always allow" covers it.

Calls go to the server's connection (``codev_ls.mcp.connection``), which
owns timeouts, progress and cancellation; this module maps the result:
``isError`` results become a :class:`ToolError` (an ``error`` outcome with the
server's text), everything else content blocks (``codev_ls.mcp.content``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from codev_ls.engine.tool import ProgressCallback, Tool, ToolError, ToolResult
from codev_ls.mcp.content import blob_saver, map_result_content, result_text
from codev_ls.permissions.types import PermissionResult, PermissionSubject

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext

# The model APIs take tool names of at most 64 characters from [A-Za-z0-9_-].
MAX_NAME_LEN = 64
# Descriptions longer than this are cut (some servers put whole manuals there).
MAX_DESCRIPTION_CHARS = 2048

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def normalize_name(name: str) -> str:
    """A name part usable in a tool name: unsafe characters become ``_``."""
    return _UNSAFE.sub("_", name) or "_"


def normalize_server_name(name: str) -> str:
    """As :func:`normalize_name`, and no ``__`` inside: rules split tool names on it."""
    return re.sub(r"_{2,}", "_", normalize_name(name))


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, cut with a hash suffix when longer than the APIs allow."""
    full = f"mcp__{normalize_server_name(server)}__{normalize_name(tool)}"
    if len(full) <= MAX_NAME_LEN:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME_LEN - 9]}_{digest}"


class ToolCaller(Protocol):
    """What an MCP tool needs from its server's connection."""

    name: str

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], on_progress: ProgressCallback
    ) -> dict[str, Any]:
        """The ``CallToolResult`` as a dict (camelCase keys); raises ToolError on failure."""
        ...


class McpTool(Tool):
    """One tool of one MCP server."""

    source: ClassVar[Literal["builtin", "mcp"]] = "mcp"
    progress_type = "MCPProgress"

    def __init__(self, caller: ToolCaller, spec: dict[str, Any]) -> None:
        """``spec`` is the server's tool definition as a dict (``tools/list`` item, camelCase)."""
        self.caller = caller
        self.server_name: str = caller.name
        self.mcp_name: str = str(spec["name"])
        self.name = mcp_tool_name(caller.name, self.mcp_name)  # type: ignore[misc]
        schema = spec.get("inputSchema")
        self.input_json_schema = (  # type: ignore[misc]
            schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
        )
        annotations = spec.get("annotations") or {}
        self.title: str = str(spec.get("title") or annotations.get("title") or self.mcp_name)
        self._description = _cut(str(spec.get("description") or ""), MAX_DESCRIPTION_CHARS)
        self._read_only = annotations.get("readOnlyHint") is True
        self._destructive = annotations.get("destructiveHint") is True and not self._read_only
        self.search_hint = f"{self.server_name} {self.title}"[:120]  # type: ignore[misc]
        # Deferral behind ToolSearch is decided for all MCP tools at once (deferral.py).
        self.should_defer = False  # type: ignore[misc]

    # ---- what the model reads

    def description(self) -> str:
        return (
            self._description or f"The {self.mcp_name} tool of the MCP server {self.server_name}."
        )

    def prompt(self) -> str:
        return self.description()

    # ---- traits

    def is_read_only(self, input: Any) -> bool:
        return self._read_only

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._read_only

    def is_destructive(self, input: Any) -> bool:
        return self._destructive

    # ---- permission and rendering

    async def check_permissions(self, input: Any, ctx: ToolUseContext) -> PermissionResult:
        """Always "ask", which only an allow rule (or bypassPermissions) satisfies.

        The server's ``readOnlyHint`` says nothing the user can rely on (the MCP
        spec: never decide tool use on annotations from an untrusted server), so
        in default mode every MCP tool asks until a rule such as ``mcp__server``
        or ``mcp__server__tool`` allows it.
        """
        return PermissionResult.ask(
            f"{self.name} is a tool of the MCP server {self.server_name}; MCP tools ask "
            "before they run unless a rule allows them",
            suggestions=[self.name],
        )

    def permission_subject(self, input: Any, ctx: ToolUseContext) -> PermissionSubject:
        args = json.dumps(input, ensure_ascii=False, indent=2, default=str)
        return PermissionSubject(
            summary=f"call {self.mcp_name} on the MCP server {self.server_name}",
            detail=args,
        )

    def user_facing_name(self, input: Any = None) -> str:
        return f"{self.server_name} - {self.title} (MCP)"

    def get_activity_description(self, input: Any) -> str:
        return f"calling {self.mcp_name}"

    def to_auto_classifier_input(self, input: Any) -> str:
        return f"{self.name} {json.dumps(input, ensure_ascii=False, default=str)}"

    # ---- the call

    async def call(
        self, input: Any, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        arguments = dict(input) if isinstance(input, dict) else {}
        result = await self.caller.call_tool(self.mcp_name, arguments, on_progress)
        if result.get("isError"):
            text = result_text(result) or "(no message)"
            raise ToolError(f"The MCP tool {self.name} reported an error: {text}")
        items = result.get("content") or []
        if all(isinstance(i, dict) and i.get("type") == "text" for i in items):
            return ToolResult(map_result_content(result, server=self.server_name))
        # Binary content may be written to disk: off the event loop.
        content = await asyncio.to_thread(
            map_result_content,
            result,
            server=self.server_name,
            save_blob=blob_saver(ctx.session.data_dir / "mcp-resources"),
        )
        return ToolResult(content)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + "… [description cut]"
