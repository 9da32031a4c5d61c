"""What a chat turn reports as it goes (``codev/chatEvent`` of PROTOCOL.md).

``text`` (a delta of the assistant's text), ``toolUse`` (a tool call the model
made), ``toolResult`` (its ToolOutcome), ``done`` (the stop reason, and the
error when the turn failed). ``status`` events (retries, context trimming, a
tool's current step) are an extension of PROTOCOL.md v1
(docs/protocol-extensions.md): informational only, also reported on the turn's
progress; the answer's text never travels in them, so a client that ignores
unknown event types loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codev_ls.engine.outcome import ToolOutcome


@dataclass(slots=True)
class TextEvent:
    delta: str

    def to_protocol(self) -> dict[str, Any]:
        return {"type": "text", "delta": self.delta}


@dataclass(slots=True)
class ToolUseEvent:
    tool_use_id: str
    name: str
    input: dict[str, Any]

    def to_protocol(self) -> dict[str, Any]:
        return {
            "type": "toolUse",
            "toolUseId": self.tool_use_id,
            "name": self.name,
            "input": self.input,
        }


@dataclass(slots=True)
class ToolResultEvent:
    outcome: ToolOutcome

    def to_protocol(self) -> dict[str, Any]:
        return {"type": "toolResult", **self.outcome.to_protocol()}


@dataclass(slots=True)
class StatusEvent:
    message: str

    def to_protocol(self) -> dict[str, Any]:
        return {"type": "status", "message": self.message}


@dataclass(slots=True)
class DoneEvent:
    stop_reason: str
    error: str | None = None

    def to_protocol(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "done", "stopReason": self.stop_reason}
        if self.error:
            data["error"] = self.error
        return data


ChatEvent = TextEvent | ToolUseEvent | ToolResultEvent | StatusEvent | DoneEvent
EventCallback = Callable[[ChatEvent], None]


@dataclass(slots=True)
class TurnResult:
    """The end of one chat turn."""

    session_id: str
    stop_reason: str
    # The assistant's text of this turn (all model steps joined).
    text: str
    error: str | None = None
    turns: int = 0

    def to_protocol(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "sessionId": self.session_id,
            "stopReason": self.stop_reason,
            "text": self.text,
        }
        if self.error:
            data["error"] = self.error
        return data
