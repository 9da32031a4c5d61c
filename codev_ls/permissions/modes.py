"""Permission modes, and the auto mode's classifier.

| mode | behaviour |
| --- | --- |
| ``default`` | read-only tools run; anything else asks, unless a rule decides |
| ``acceptEdits`` | as default, and file edits inside the workspace run without asking |
| ``bypassPermissions`` | everything runs except what a deny rule forbids |
| ``plan`` | only read-only tools run; the rest are refused, saying plan mode is on |
| ``auto`` | a classifier decides; anything it is unsure of asks |

The built-in classifier is rule based: it passes what ``default`` mode
passes (read-only commands, reads in the workspace) and is unsure of
everything else. A model-based classifier plugs in through
``engine.services["auto_classifier"]`` (see :class:`AutoClassifier`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from codev_ls.permissions.types import PERMISSION_MODES, PermissionMode, parse_mode

__all__ = [
    "PERMISSION_MODES",
    "PLAN_MODE_MESSAGE",
    "AutoClassifier",
    "ClassifierRequest",
    "ClassifierVerdict",
    "RuleBasedClassifier",
    "accepts_edits",
    "parse_mode",
]

PLAN_MODE_MESSAGE = (
    "Plan mode is on: {tool} is not read-only, so it cannot run now. "
    "Keep exploring with read-only tools, then present your plan for the user to approve."
)


def accepts_edits(mode: PermissionMode) -> bool:
    """Whether file edits inside the workspace run without asking in ``mode``."""
    return mode == "acceptEdits"


@dataclass(frozen=True, slots=True)
class ClassifierRequest:
    """What the auto-mode classifier sees of one tool use."""

    tool_name: str
    # The tool's ``to_auto_classifier_input()``: the command, the path and a snippet...
    classifier_input: str
    read_only: bool
    # Every path the use touches is inside the workspace (and none is protected).
    inside_workspace: bool
    # Why the rules and the default mode would ask.
    ask_reason: str


@dataclass(frozen=True, slots=True)
class ClassifierVerdict:
    decision: Literal["allow", "ask", "deny"]
    reason: str


@runtime_checkable
class AutoClassifier(Protocol):
    """Decides for auto mode what the rules leave open; unsure means ``ask``."""

    async def classify(self, request: ClassifierRequest) -> ClassifierVerdict: ...


class RuleBasedClassifier:
    """The built-in classifier: read-only uses inside the workspace pass; the rest asks."""

    async def classify(self, request: ClassifierRequest) -> ClassifierVerdict:
        if request.read_only and request.inside_workspace:
            return ClassifierVerdict("allow", "read-only, inside the workspace")
        return ClassifierVerdict(
            "ask", f"the auto-mode classifier is unsure ({request.ask_reason})"
        )
