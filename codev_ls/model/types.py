"""The provider-neutral shapes of a model exchange.

History is kept in the Anthropic Messages shape (``{"role", "content": [blocks]}``
with ``text``, ``tool_use`` and ``tool_result`` blocks) because that is what
``ToolOutcome.to_tool_result_block`` produces; the OpenAI-compatible provider
converts at its edge. A provider streams :data:`StreamEvent` values and ends
with one :class:`MessageComplete`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Message = dict[str, Any]
Block = dict[str, Any]

StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "other"
]


@dataclass(slots=True)
class ToolSpec:
    """One tool definition as sent to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 8192
    # Mark the system prompt, the tool list and the last message for prompt caching.
    cache: bool = True


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        """Tokens the request and answer occupy in the context window."""
        return (
            self.input_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
            + self.output_tokens
        )


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class ToolUseStart:
    """The model began a tool call (its input is still streaming)."""

    id: str
    name: str


@dataclass(slots=True)
class Retrying:
    """A transient failure: the request is sent again after ``delay`` seconds."""

    attempt: int
    delay: float
    reason: str


@dataclass(slots=True)
class MessageComplete:
    """The whole assistant message, as it goes into the history."""

    content: list[Block]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)

    @property
    def tool_uses(self) -> list[Block]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


StreamEvent = TextDelta | ToolUseStart | Retrying | MessageComplete
