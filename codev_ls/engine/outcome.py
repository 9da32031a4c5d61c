"""What a tool use produces: updates while it runs, one outcome at the end.

The outcome's protocol form is ``ToolOutcome`` of PROTOCOL.md (camelCase);
its model form is the API's ``tool_result`` block (errors wrapped as
``<tool_use_error>``, interruptions as the stop message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.tool import Progress, ToolResultContent
from codev_ls.permissions.types import DecisionSource

OutcomeStatus = Literal["success", "error", "rejected", "interrupted"]

INTERRUPTED_MESSAGE = "[Request interrupted by user for tool use]"
REJECTED_PREFIX = "The user doesn't want to proceed with this tool use. The tool use was rejected"


class ToolOutcome(BaseModel):
    """The one result of a tool use."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    tool_use_id: str = Field(alias="toolUseId")
    tool_name: str = Field(default="", alias="toolName")
    status: OutcomeStatus
    content: ToolResultContent
    decision_source: DecisionSource | None = Field(default=None, alias="decisionSource")
    decision_rule: str | None = Field(default=None, alias="decisionRule")
    decision_reason: str | None = Field(default=None, alias="decisionReason")
    persisted_path: str | None = Field(default=None, alias="persistedPath")
    # Set on success when the tool's result is an error for the model (e.g. a hook blocked it).
    is_error: bool = Field(default=False, alias="isError")
    # Tool-specific structured facts for editors (e.g. which hunks of an edit landed).
    meta: dict[str, Any] | None = None

    def to_protocol(self) -> dict[str, Any]:
        """The PROTOCOL.md ``ToolOutcome`` (camelCase, unset fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def to_tool_result_block(self) -> dict[str, Any]:
        """The model API's tool_result block for this outcome."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.tool_use_id}
        if self.status == "success":
            block["content"] = self.content
            if self.is_error:
                block["is_error"] = True
        elif self.status == "error":
            block["content"] = f"<tool_use_error>{self.text()}</tool_use_error>"
            block["is_error"] = True
        else:
            block["content"] = self.text()
            block["is_error"] = True
        return block

    def text(self) -> str:
        """The content as plain text (images shown as placeholders)."""
        if isinstance(self.content, str):
            return self.content
        parts = []
        for b in self.content:
            parts.append(
                str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]"
            )
        return "\n".join(parts)


@dataclass(slots=True)
class StartedUpdate:
    """The tool was found and its input is valid: editors may show a progress bar."""

    tool_use_id: str
    tool_name: str
    title: str
    input: dict[str, Any]


@dataclass(slots=True)
class ProgressUpdate:
    tool_use_id: str
    progress: Progress


@dataclass(slots=True)
class MessageUpdate:
    """A message for the user (hook output, notes), not part of the result."""

    tool_use_id: str
    level: Literal["error", "warning", "info"]
    text: str
    stage: str = ""


ToolUseUpdate = StartedUpdate | ProgressUpdate | MessageUpdate | ToolOutcome
