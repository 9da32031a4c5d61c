"""Permission values shared by the engine, the tools and the decision function.

A decision is a value, not a bool: allow / deny(reason) / ask(reason,
suggested rules), with the source that decided it and the rule that matched,
so that outcomes, prompts, the audit log and ``explain`` all say *why*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "auto"]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)

DecisionSource = Literal["config", "hook", "user_temporary", "user_permanent", "user_reject"]
Behavior = Literal["allow", "deny", "ask"]


def parse_mode(value: object) -> PermissionMode | None:
    """The mode named by ``value`` (exact names, case-insensitive), or None."""
    if not isinstance(value, str):
        return None
    for mode in PERMISSION_MODES:
        if mode.lower() == value.strip().lower():
            return mode  # type: ignore[return-value]
    return None


@dataclass(slots=True)
class PermissionResult:
    """A permission decision with its reason, source and matched rule."""

    behavior: Behavior
    updated_input: Any = None
    reason: str = ""
    source: DecisionSource | None = None
    rule: str | None = None
    # Rules offered for "Allow for this session" / "Always allow" when asking.
    suggestions: list[str] = field(default_factory=list)
    # How the decision was reached, step by step (for explain and the audit log).
    trace: list[str] = field(default_factory=list)

    @classmethod
    def allow(
        cls,
        updated_input: Any = None,
        reason: str = "",
        source: DecisionSource | None = None,
        rule: str | None = None,
    ) -> PermissionResult:
        return cls("allow", updated_input, reason, source, rule)

    @classmethod
    def deny(
        cls, reason: str, source: DecisionSource | None = "config", rule: str | None = None
    ) -> PermissionResult:
        return cls("deny", None, reason, source, rule)

    @classmethod
    def ask(
        cls, reason: str, suggestions: list[str] | None = None, rule: str | None = None
    ) -> PermissionResult:
        return cls("ask", None, reason, None, rule, list(suggestions or []))


@dataclass(slots=True)
class PermissionSubject:
    """What one tool use touches, as the tool describes it.

    Tools only describe; ``permissions.decide`` judges. ``summary`` is the line
    a prompt shows ("run `npm test`", "edit src/app.py"), ``detail`` the body
    (a command, a unified diff).
    """

    summary: str
    detail: str = ""
    command: str | None = None
    read_paths: list[Path] = field(default_factory=list)
    write_paths: list[Path] = field(default_factory=list)
    url: str | None = None
    # Always ask, whatever the rules and the mode say (except deny, which wins).
    force_ask_reason: str | None = None
