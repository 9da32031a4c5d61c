"""Permission rules: ``Tool`` or ``Tool(specifier)``, and the context that holds them.

What a specifier means depends on what the use touches (its
:class:`~codev_ls.permissions.types.PermissionSubject`):

- a shell command (Bash): ``npm test`` exact, ``npm run test:*`` prefix by
  words — judged per simple command by :mod:`codev_ls.permissions.shell`;
- paths: a gitignore-style pattern (:mod:`codev_ls.permissions.paths`).
  ``Read(...)`` rules apply to what any tool reads (Read, Glob, Grep, a shell
  command's files); ``Edit(...)``/``Write(...)`` rules to what any tool writes
  (Edit, Write, NotebookEdit, a shell redirection ``> file``);
- a URL (WebFetch): ``domain:example.com`` — that host and its subdomains;
- MCP tools are named whole: ``mcp__server`` (every tool of the server) or
  ``mcp__server__tool``.

A bare ``Tool`` names every use of that tool (and, in ``deny``, removes it from
the pool the model sees).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from codev_ls.permissions.types import PermissionMode

RuleKind = Literal["allow", "ask", "deny"]

_RULE_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)

# Rules with a path specifier under these names cover what any tool reads / writes.
READ_RULE_TOOLS = frozenset({"Read"})
WRITE_RULE_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})


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

    def describe(self) -> str:
        """The rule and where it is written, for messages: ``Bash(rm:*) (project settings)``."""
        where = {
            "session": "kept for this session",
            "user": "user settings",
            "project": "project settings",
            "local": "local settings",
        }.get(self.origin, f"{self.origin} settings")
        return f"{self.text} ({where})"

    def names_whole_tool(self, tool_name: str, *, fold: bool = False) -> bool:
        """True when this rule (without specifier) covers every use of ``tool_name``.

        ``mcp__server`` covers every tool of that server; ``mcp__server__*`` too.
        ``fold`` ignores case (deny and ask rules: ``bash`` in deny still stops Bash).
        """
        if self.specifier is not None:
            return False
        mine = self.tool_name.casefold() if fold else self.tool_name
        theirs = tool_name.casefold() if fold else tool_name
        if mine == theirs:
            return True
        if mine.startswith("mcp__") and theirs.startswith("mcp__"):
            rule_parts = mine.split("__")
            tool_parts = theirs.split("__")
            if len(rule_parts) == 2 or (len(rule_parts) == 3 and rule_parts[2] in ("", "*")):
                return len(tool_parts) >= 3 and tool_parts[1] == rule_parts[1]
        return False

    def names_tool(self, names: tuple[str, ...], *, fold: bool = False) -> bool:
        """The rule is written for one of ``names`` (a tool's name and aliases)."""
        if self.specifier is None:
            return any(self.names_whole_tool(n, fold=fold) for n in names)
        if fold:
            return self.tool_name.casefold() in {n.casefold() for n in names}
        return self.tool_name in names

    def is_for(self, tools: frozenset[str], *, fold: bool = False) -> bool:
        """The rule's tool is one of ``tools`` (``READ_RULE_TOOLS``...)."""
        if fold:
            return self.tool_name.casefold() in {t.casefold() for t in tools}
        return self.tool_name in tools


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


def rule_warning(
    rule: PermissionRule, kind: RuleKind, known_tools: frozenset[str] = frozenset()
) -> str | None:
    """Why a rule will not do what it seems to say (shown once when settings load).

    ``known_tools``: the tool names (and aliases) there are; a rule naming none of
    them applies to nothing — said, not silently ignored (MCP names are not checked:
    their servers may start later).
    """
    name = rule.tool_name
    if known_tools and name not in known_tools and not name.startswith("mcp__"):
        same = next((t for t in sorted(known_tools) if t.casefold() == name.casefold()), None)
        if same is not None:
            if kind == "allow":
                return f"rule {rule.text}: tool names are case-sensitive; it allows nothing (did you mean {same}?)"
            return None  # deny and ask rules ignore case: it applies to {same}
        return f"rule {rule.text}: there is no tool named {name}, so it applies to nothing"
    spec = rule.specifier
    if spec is None:
        return None
    if rule.tool_name == "Bash" and spec.startswith("domain:"):
        return f"rule {rule.text}: `domain:` is for WebFetch rules"
    if rule.tool_name == "WebFetch" and not spec.startswith("domain:"):
        return f"rule {rule.text}: WebFetch rules take `domain:HOST`"
    if rule.tool_name.startswith("mcp__"):
        return f"rule {rule.text}: MCP rules name tools (`mcp__server__tool`), without (...)"
    return None


# --------------------------------------------------------------------------- specifiers


def domain_matches(spec: str, url: str) -> bool:
    """``domain:example.com`` matches that host and its subdomains (port and case ignored)."""
    if not spec.startswith("domain:"):
        return False
    want = spec[len("domain:") :].strip().lower().rstrip(".")
    if want.startswith("*."):
        want = want[2:]
    host = url_host(url)
    if not want or host is None:
        return False
    return host == want or host.endswith("." + want)


def url_host(url: str) -> str | None:
    """The host a URL really goes to (userinfo tricks like ``a.com@b.com`` see b.com)."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


# --------------------------------------------------------------------------- context


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
    # Re-reads the settings files when they changed (set by the settings manager).
    reload: Callable[[], None] | None = None

    def refresh(self) -> None:
        """Pick up edited settings files (a cheap mtime check)."""
        if self.reload is not None:
            self.reload()

    def denies_whole_tool(self, tool_name: str) -> PermissionRule | None:
        """The deny rule that removes ``tool_name`` from the pool, if any."""
        for rule in self.deny:
            if rule.names_whole_tool(tool_name, fold=True):
                return rule
        return None

    def allow_rules(self) -> list[PermissionRule]:
        """Settings rules first, then the ones kept for this session."""
        return [*self.allow, *self.session_allow]

    def keep_for_session(self, rule: PermissionRule) -> None:
        if all(r.text != rule.text for r in self.session_allow):
            self.session_allow.append(rule)
