"""PreToolUse / PostToolUse hooks: the seams of the lifecycle.

``run_tool_use`` calls a :class:`HookRunner` at stage 4 (before the permission
decision) and stage 8 (after the result is mapped). :class:`NoHooks` is the
runner when no hooks are configured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from codev_ls.engine.tool import Progress, ProgressCallback, Tool, ToolResultContent
from codev_ls.permissions.types import PermissionResult

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext


@dataclass(slots=True)
class HookMessage:
    level: str  # "error" | "warning" | "info"
    text: str


@dataclass(slots=True)
class PreToolUseResult:
    messages: list[HookMessage] = field(default_factory=list)
    # A hook's permission decision (source "hook"); None when no hook decided.
    decision: PermissionResult | None = None
    # A replacement for the tool's input (validated again by the schema).
    updated_input: dict[str, Any] | None = None
    # A hook blocked the use (exit 2 or decision "deny" with stop): the reason goes to the model.
    stop: bool = False
    stop_reason: str = ""
    # Text added to the model's context alongside the result.
    additional_context: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PostToolUseResult:
    messages: list[HookMessage] = field(default_factory=list)
    # decision "block": the reason is given to the model with the result.
    block_reason: str | None = None
    # MCP tools only: the hook replaced the tool's output.
    updated_output: ToolResultContent | None = None
    additional_context: list[str] = field(default_factory=list)


class HookRunner(Protocol):
    async def run_pre_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PreToolUseResult: ...

    async def run_post_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        response: ToolResultContent,
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PostToolUseResult: ...


class NoHooks:
    """No hooks configured: every seam passes straight through."""

    async def run_pre_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PreToolUseResult:
        return PreToolUseResult()

    async def run_post_tool_use(
        self,
        tool: Tool,
        tool_input: dict[str, Any],
        response: ToolResultContent,
        ctx: ToolUseContext,
        on_progress: ProgressCallback,
    ) -> PostToolUseResult:
        return PostToolUseResult()


def hook_progress(name: str) -> Progress:
    return Progress(type="HookProgress", message=f"running hook {name}")
