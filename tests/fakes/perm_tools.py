"""Tools and engines for permission and hook tests (an Engine over a temp workspace).

``ShellTool`` is a stand-in for Bash that runs the command with the real
``bash`` (so attack tests can check the disk) and describes it to the
permission system exactly as Bash does (``PermissionSubject.command``).
``FetchTool`` describes a URL and asks on a host's first fetch, as WebFetch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.app import attach_permissions
from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import Tool, ToolResult, build_tool
from codev_ls.permissions.shell import is_read_only_command
from codev_ls.permissions.types import PermissionResult, PermissionSubject
from codev_ls.tools.edit import EditTool
from codev_ls.tools.glob import GlobTool
from codev_ls.tools.read import ReadTool
from codev_ls.tools.write import WriteTool


class ShellInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(description="the command")


class ShellTool(Tool):
    """Runs ``bash -c`` in the session's folder; described like Bash."""

    name = "Bash"
    input_model = ShellInput

    def __init__(self) -> None:
        self.ran: list[str] = []

    def is_read_only(self, input: ShellInput) -> bool:
        return is_read_only_command(input.command)

    def permission_subject(self, input: ShellInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f"run `{input.command}`", command=input.command)

    def to_auto_classifier_input(self, input: ShellInput) -> str:
        return input.command

    async def call(self, input: ShellInput, ctx: ToolUseContext, on_progress: Any) -> ToolResult:
        self.ran.append(input.command)
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            input.command,
            cwd=str(ctx.session.cwd or ctx.root),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        return ToolResult(out.decode(errors="replace"))


class FetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(description="the URL")


class FetchTool(Tool):
    """Describes a URL; its own check asks on the first fetch of a host (as WebFetch)."""

    name = "WebFetch"
    input_model = FetchInput

    def __init__(self) -> None:
        self.known_hosts: set[str] = set()

    def is_read_only(self, input: Any) -> bool:
        return True

    def permission_subject(self, input: FetchInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f"fetch {input.url}", url=input.url)

    async def check_permissions(self, input: FetchInput, ctx: ToolUseContext) -> PermissionResult:
        from urllib.parse import urlsplit

        if urlsplit(input.url).hostname not in self.known_hosts:
            return PermissionResult.ask("first fetch from this host")
        return PermissionResult.allow(input)

    async def call(self, input: FetchInput, ctx: ToolUseContext, on_progress: Any) -> ToolResult:
        return ToolResult(f"fetched {input.url}")


def mcp_tool(name: str, *, read_only: bool = False) -> Tool:
    async def call(input: Any, ctx: Any, on_progress: Any) -> ToolResult:
        return ToolResult(f"{name} ran")

    return build_tool(
        name=name,
        input_json_schema={"type": "object", "properties": {}},
        is_read_only=lambda input: read_only,
        source="mcp",
        call=call,
    )


def all_tools() -> list[Tool]:
    return [
        ReadTool(),
        EditTool(),
        WriteTool(),
        GlobTool(),
        ShellTool(),
        FetchTool(),
        mcp_tool("mcp__srv__do"),
        mcp_tool("mcp__srv__look", read_only=True),
        mcp_tool("mcp__other__do"),
    ]


def write_settings(path: Path, permissions: dict[str, Any] | None = None, **extra: Any) -> Path:
    data: dict[str, Any] = dict(extra)
    if permissions is not None:
        data["permissions"] = permissions
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


EngineFactory = Callable[..., Engine]


def engine_factory(workspace: Path, data_root: Path) -> EngineFactory:
    """Make Engines with settings wired; ``allow=[...]`` etc. go to the project settings."""

    def make(
        *,
        mode: str = "default",
        allow: list[str] | None = None,
        ask: list[str] | None = None,
        deny: list[str] | None = None,
        answers: list[str] | None = None,
        bridge: ScriptedBridge | None = None,
        tools: list[Tool] | None = None,
        explicit_mode: bool = True,
    ) -> Engine:
        perms = {"allow": allow or [], "ask": ask or [], "deny": deny or []}
        if allow or ask or deny:
            write_settings(workspace / ".codev" / "settings.json", perms)
        bridge = bridge or ScriptedBridge(answers=list(answers or []))  # type: ignore[arg-type]
        engine = Engine(
            workspace,
            bridge,
            mode=mode,  # type: ignore[arg-type]
            base_tools=tools if tools is not None else all_tools(),
            data_root=data_root,
        )
        attach_permissions(engine, explicit_mode=explicit_mode)
        return engine

    return make
