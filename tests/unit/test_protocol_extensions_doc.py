"""docs/protocol-extensions.md names every extension the server has beyond PROTOCOL.md v1.

The v1 sets below are PROTOCOL.md's (which lives outside this repository); anything
the code offers on top must be documented, so a new method or outcome field
cannot reach editors undocumented.
"""

from __future__ import annotations

from pathlib import Path

from codev_ls.engine.outcome import ToolOutcome
from codev_ls.lsp_protocol import COMMANDS, CUSTOM_METHODS
from codev_ls.model import events

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol-extensions.md"

V1_METHODS = {
    "codev/listTools",
    "codev/runTool",
    "codev/permissionMode",
    "codev/chat",
    "codev/cancel",
}
V1_COMMANDS = {"codev.listTools", "codev.runTool", "codev.permissionMode", "codev.chat"}
V1_OUTCOME_FIELDS = {"toolUseId", "status", "content", "decisionSource", "persistedPath"}
V1_CHAT_EVENTS = {"text", "toolUse", "toolResult", "done"}


def test_every_extra_method_and_command_is_documented() -> None:
    text = DOC.read_text()
    extra = (set(CUSTOM_METHODS) - V1_METHODS) | (set(COMMANDS) - V1_COMMANDS)
    assert extra  # there are extensions to document
    assert sorted(m for m in extra if f"`{m}`" not in text) == []
    assert '{"cancelled": n}' in text  # codev/cancel's result differs from v1's {}


def test_every_extra_outcome_field_is_documented() -> None:
    text = DOC.read_text()
    fields = {f.alias or name for name, f in ToolOutcome.model_fields.items()}
    assert fields >= V1_OUTCOME_FIELDS
    assert sorted(f for f in fields - V1_OUTCOME_FIELDS if f"`{f}`" not in text) == []


def test_every_extra_chat_event_type_is_documented() -> None:
    text = DOC.read_text()
    samples = [
        events.TextEvent("x"),
        events.ToolUseEvent("t", "Read", {}),
        events.StatusEvent("retrying"),
        events.DoneEvent("end_turn"),
    ]
    types = {e.to_protocol()["type"] for e in samples}
    assert sorted(t for t in types - V1_CHAT_EVENTS if f'"type": "{t}"' not in text) == []
