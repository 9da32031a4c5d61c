"""Permission rules: ``Tool`` or ``Tool(specifier)``, and the context that holds them.

This module knows the rule *syntax* and which tools a bare rule names (used by
the registry to remove denied tools from the pool). What a specifier matches
(commands, paths, hosts) is judged in ``permissions.decide``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from codev_ls.permissions.types import PermissionMode

RuleKind = Literal["allow", "ask", "deny"]

_RULE_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleSyntaxError(ValueError):
    """A rule that cannot be parsed; reported to the user, never silently ignored."""


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One rule as written by the user, with where it came from."""

    tool_name: str
    specifier: str | None = None
    # "user", "project", "local", "session", "cli", ... — for explain and the audit log.
    origin: str = "config"

    @property
    def text(self) -> str:
        return self.tool_name if self.specifier is None else f"{self.tool_name}({self.specifier})"

    def __str__(self) -> str:
        return self.text

    def names_whole_tool(self, tool_name: str) -> bool:
        """True when this rule (without specifier) covers every use of ``tool_name``.

        ``mcp__server`` covers every tool of that server; ``mcp__server__*`` too.
        """
        if self.specifier is not None:
            return False
        if self.tool_name == tool_name:
            return True
        if self.tool_name.startswith("mcp__") and tool_name.startswith("mcp__"):
            rule_parts = self.tool_name.split("__")
            tool_parts = tool_name.split("__")
            if len(rule_parts) == 2 or (len(rule_parts) == 3 and rule_parts[2] in ("", "*")):
                return len(tool_parts) >= 3 and tool_parts[1] == rule_parts[1]
        return False


def parse_rule(text: str, origin: str = "config") -> PermissionRule:
    """Parse ``Tool`` or ``Tool(specifier)``; raises :class:`RuleSyntaxError`."""
    if not isinstance(text, str) or not text.strip():
        raise RuleSyntaxError(f"empty permission rule: {text!r}")
    m = _RULE_RE.match(text)
    if not m:
        raise RuleSyntaxError(
            f"cannot parse permission rule {text!r}: expected `Tool` or `Tool(specifier)`"
        )
    name, spec = m.group(1), m.group(2)
    if spec is not None:
        spec = spec.strip()
        if spec in ("", "*"):
            spec = None  # `Bash()` and `Bash(*)` mean the whole tool
    return PermissionRule(name, spec, origin)


@dataclass(slots=True)
class PermissionContext:
    """The rules and mode in force for a session (the registry filters by it too)."""

    mode: PermissionMode = "default"
    allow: list[PermissionRule] = field(default_factory=list)
    ask: list[PermissionRule] = field(default_factory=list)
    deny: list[PermissionRule] = field(default_factory=list)
    # "Allow for this session" answers, kept in memory until the server stops.
    session_allow: list[PermissionRule] = field(default_factory=list)
    workspace_root: Path | None = None
    additional_dirs: list[Path] = field(default_factory=list)

    def denies_whole_tool(self, tool_name: str) -> PermissionRule | None:
        """The deny rule that removes ``tool_name`` from the pool, if any."""
        for rule in self.deny:
            if rule.names_whole_tool(tool_name):
                return rule
        return None
