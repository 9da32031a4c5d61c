"""The one permission decision of the lifecycle (stage 5).

``decide`` judges a tool use against the rules and the mode without asking
anyone; ``resolve_permission`` combines that with the tool's own check and a
PreToolUse hook's decision, and asks the user through the bridge when the
answer is "ask".

The order, first match wins::

    1. a bare deny rule naming the tool           → deny
    2. a deny rule matching any part of the use    → deny
    3. plan mode and the use is not read-only      → deny (saying plan mode is on)
    4. the tool says "always ask" (force_ask)      → ask
    5. bypassPermissions                           → allow, except a command line
       not fully understood while deny rules for commands exist → deny
    6. an ask rule matching any part of the use    → ask
    7. every part is covered (allow rules, mode)   → allow, else ask
       (auto mode: the classifier decides what the rules leave open)

A use is cut into *parts*: each simple command of a shell line, each file it
reads or writes (a redirection ``> f`` is a write), the URL, or the tool
itself. Deny and ask rules match if they match any part; the use is allowed
only when every part is covered. What a part needs:

- a simple command: an allow rule for it, or (not in plan/bypass) the built-in
  read-only set — and the whole line must be fully understood by the parser;
- a read: inside the workspace, or a ``Read(...)`` allow rule for the real path;
- a write: an ``Edit(...)``/``Write(...)`` allow rule for the real path, or
  acceptEdits mode inside the workspace. Outside the workspace only a rule
  naming the path allows; protected paths (``.git/``, ``.codev/``, shell rc
  files) only a rule that names them;
- the tool: a bare allow rule, or being read-only.

A hook's ``allow`` skips the prompt but never overrides a deny; its ``ask``
forces a prompt; its ``deny`` refuses. A tool's own ``check_permissions``
answer of ``ask`` (WebFetch's first fetch of a host, Bash without its sandbox)
can be satisfied by an allow rule, never by the mode.
"""

from __future__ import annotations

import glob as _glob
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codev_ls.bridge import PermissionRequest
from codev_ls.permissions import shell
from codev_ls.permissions.gitrepo import repository_problem
from codev_ls.permissions.modes import (
    PLAN_MODE_MESSAGE,
    ClassifierRequest,
    RuleBasedClassifier,
    accepts_edits,
)
from codev_ls.permissions.paths import (
    is_inside,
    lexical_path,
    path_pattern,
    pattern_names_protected,
    protected_reason,
    real_path,
    rule_path_for,
    scan_for_escape,
    scan_for_match,
)
from codev_ls.permissions.rules import (
    READ_RULE_TOOLS,
    WRITE_RULE_TOOLS,
    PermissionRule,
    RuleKind,
    domain_matches,
    parse_rule,
    url_host,
)
from codev_ls.permissions.shell.destructive import is_destructive_words, subcommand_index
from codev_ls.permissions.types import (
    DecisionSource,
    PermissionResult,
    PermissionSubject,
)

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.engine.tool import Tool

log = logging.getLogger(__name__)

__all__ = ["PLAN_MODE_MESSAGE", "ask_user", "decide", "resolve_permission"]

# Glob words expanded to check where they point; more matches than this ask instead.
MAX_GLOB_MATCHES = 1000


# --------------------------------------------------------------------------- parts


@dataclass(slots=True)
class _Path:
    """A file a use touches: as written, and for real."""

    real: Path
    lexical: Path
    # Where it came from, for messages ("`cat x`", "the redirection > out").
    via: str = ""
    # The location is only known at run time (a `$VAR`, an unknown `cd`).
    unknown: bool = False
    is_dir: bool = False
    # A folder the command fills with files whose names only the run knows (`tar x`).
    into: bool = False


@dataclass(slots=True)
class _Part:
    kind: Literal["command", "read", "write", "url", "tool", "own"]
    label: str
    command: shell.SimpleCommand | None = None
    path: _Path | None = None
    covered: str | None = None  # the reason it is covered
    rules: list[PermissionRule] = field(default_factory=list)
    problem: str = ""
    suggestion: str | None = None
    # Not covered for a reason no classifier may wave through (a protected path behind
    # an allow rule, a repository the model could have planted, a link out of the
    # workspace): auto mode asks too.
    must_ask: bool = False


@dataclass(slots=True)
class _Facts:
    subject: PermissionSubject
    read_only: bool
    parsed: shell.ParsedCommand | None = None
    reads: list[_Path] = field(default_factory=list)
    writes: list[_Path] = field(default_factory=list)
    # Files a shell command may touch (args of commands), for deny/ask path rules.
    maybe_reads: list[_Path] = field(default_factory=list)
    maybe_writes: list[_Path] = field(default_factory=list)
    # Reads that belong to a command judged by the read-only set (not by an allow rule).
    command_reads: dict[int, list[_Path]] = field(default_factory=dict)
    # Every path word of each command (by index), and the files each writes by its
    # arguments (`cp a DEST`, `dd of=F`, `tar x` into a folder).
    command_paths: dict[int, list[_Path]] = field(default_factory=dict)
    command_writes: dict[int, list[_Path]] = field(default_factory=dict)
    # Every folder relative paths of the line may be relative to (None: unknown).
    cwds: list[Path | None] = field(default_factory=list)
    # A command in the line that can re-point paths (`ln -s`, `mv`...): where a path
    # leads is then only known when the line runs, so no path is judged in advance.
    reshaper: str | None = None
    # Folders a shell command reads everything under (`grep -r x .`, `rg x`): a deny
    # or ask rule for a file in them applies to the command too.
    recursive: list[_Path] = field(default_factory=list)
    # Folders a tool searches or lists whole (Grep, Glob). Those tools leave out what
    # deny rules forbid themselves; an ask rule for a file in them asks.
    searched: list[_Path] = field(default_factory=list)


# --------------------------------------------------------------------------- decide


async def decide(
    tool: Tool,
    input: Any,
    ctx: ToolUseContext,
    *,
    own: PermissionResult | None = None,
) -> PermissionResult:
    """Rules and mode, without asking: allow, deny or ask, with source, rule and trace."""
    judge = _Judge(tool, input, ctx, own)
    return await judge.run()


class _Judge:
    def __init__(
        self, tool: Tool, input: Any, ctx: ToolUseContext, own: PermissionResult | None
    ) -> None:
        self.tool = tool
        self.input = input
        self.ctx = ctx
        self.own = own
        self.pctx = ctx.engine.permission_context
        self.mode = ctx.mode
        self.root = real_path(ctx.root)
        self.workspace = [self.root, *(real_path(d) for d in self.pctx.additional_dirs)]
        self.cwd = real_path(ctx.session.cwd or ctx.root)
        self.names = (tool.name, *tool.aliases)
        self.trace: list[str] = [f"mode: {self.mode}"]

    # ---------------------------------------------------------------- result helpers

    def _done(self, result: PermissionResult) -> PermissionResult:
        result.trace = [*self.trace, *result.trace]
        if result.behavior == "allow" and result.updated_input is None:
            result.updated_input = self.input
        return result

    def _deny(self, reason: str, rule: PermissionRule | None = None) -> PermissionResult:
        self.trace.append(f"deny: {reason}")
        return self._done(PermissionResult.deny(reason, "config", rule.text if rule else None))

    def _ask(
        self, reason: str, suggestions: list[str] | None = None, rule: str | None = None
    ) -> PermissionResult:
        self.trace.append(f"ask: {reason}")
        return self._done(PermissionResult.ask(reason, suggestions, rule))

    # ---------------------------------------------------------------- the order

    async def run(self) -> PermissionResult:
        self.pctx.refresh()
        tool = self.tool
        whole = next(
            (r for n in self.names if (r := self.pctx.denies_whole_tool(n)) is not None), None
        )
        if whole is not None:
            return self._deny(f"{tool.name} is denied by the rule {whole.describe()}.", whole)
        facts = self._facts()
        # 2. deny rules
        unsure: list[str] = []
        for rule in self.pctx.deny:
            hit = self._match(rule, "deny", facts)
            if hit:
                return self._deny(f"{hit} is denied by the rule {rule.describe()}.", rule)
            reach = self._reaches(rule, facts.recursive, READ_RULE_TOOLS)
            if reach is not None and reach[1]:
                return self._deny(
                    f"{reach[0]} which the rule {rule.describe()} denies. Search with the "
                    f"{_SEARCH_TOOL} tool (it leaves denied files out) or name the folders "
                    "to read.",
                    rule,
                )
            if reach is not None:
                unsure.append(f"{reach[0]} the rule {rule.describe()} denies")
        # 3. plan mode
        if self.mode == "plan" and not facts.read_only:
            return self._deny(PLAN_MODE_MESSAGE.format(tool=tool.name))
        # 4. the tool says: always ask
        if facts.subject.force_ask_reason:
            return self._ask(facts.subject.force_ask_reason)
        # 5. bypass
        if self.mode == "bypassPermissions":
            unchecked = self._unchecked_deny(facts)
            if unchecked is not None:
                assert facts.parsed is not None
                return self._deny(
                    "bypassPermissions mode still holds to the deny rule "
                    f"{unchecked.describe()}, and part of this command cannot be checked "
                    f"against it ({'; '.join(facts.parsed.reasons)}). Write the command so "
                    "that every program it runs is visible.",
                    unchecked,
                )
            self.trace.append("allow: bypassPermissions mode runs everything not denied")
            return self._done(
                PermissionResult.allow(self.input, "bypassPermissions mode", source="config")
            )
        # 6. ask rules
        for rule in self.pctx.ask:
            hit = self._match(rule, "ask", facts)
            if hit:
                return self._ask(
                    f"{hit} needs confirmation by the rule {rule.describe()}", rule=rule.text
                )
            reach = self._reaches(
                rule, [*facts.recursive, *facts.searched], READ_RULE_TOOLS | frozenset(self.names)
            )
            if reach is not None:
                what = "which" if reach[1] else "the"
                return self._ask(
                    f"{reach[0]} {what} the rule {rule.describe()} asks about", rule=rule.text
                )
        if unsure:
            return self._ask("; ".join(unsure))
        # 7. coverage
        parts = self._parts(facts)
        for part in parts:
            self._cover(part, facts)
        uncovered = [p for p in parts if p.covered is None]
        for p in parts:
            self.trace.append(
                f"{p.label}: {'covered — ' + p.covered if p.covered else 'not covered — ' + p.problem}"
            )
        if not uncovered:
            return self._allowed(parts)
        reason = "; ".join(dict.fromkeys(p.problem for p in uncovered))
        suggestions = _dedupe(p.suggestion for p in uncovered)
        if any(p.suggestion is None for p in uncovered):
            suggestions = []  # no single rule would cover it: offer none rather than a wrong one
        if self.mode == "auto":
            verdict = await self._classify(facts, parts, reason)
            if verdict is not None:
                return verdict
        return self._ask(reason, suggestions)

    def _unchecked_deny(self, facts: _Facts) -> PermissionRule | None:
        """A deny rule for commands that a line the parser cannot fully follow (`eval
        "$x"`, `$cmd`, `... | bash`) may slip past. Other modes ask for such a line;
        bypassPermissions, which asks nothing, refuses it instead."""
        parsed = facts.parsed
        if parsed is None or parsed.fully_understood:
            return None
        names = frozenset(self.names)
        return next(
            (r for r in self.pctx.deny if r.specifier is not None and r.is_for(names, fold=True)),
            None,
        )

    def _allowed(self, parts: list[_Part]) -> PermissionResult:
        rules = [r for p in parts for r in p.rules]
        source: DecisionSource = (
            "user_temporary" if any(r.origin == "session" for r in rules) else "config"
        )
        reasons = _dedupe(p.covered for p in parts if p.covered)
        rule_text = ", ".join(_dedupe(r.text for r in rules)) or None
        return self._done(
            PermissionResult.allow(self.input, "; ".join(reasons), source=source, rule=rule_text)
        )

    async def _classify(
        self, facts: _Facts, parts: list[_Part], reason: str
    ) -> PermissionResult | None:
        classifier = self.ctx.engine.services.get("auto_classifier") or RuleBasedClassifier()
        inside = self._all_inside(facts, parts)
        understood = facts.parsed is None or facts.parsed.fully_understood
        request = ClassifierRequest(
            tool_name=self.tool.name,
            classifier_input=_safe_str(lambda: self.tool.to_auto_classifier_input(self.input)),
            read_only=facts.read_only and understood,
            inside_workspace=inside,
            ask_reason=reason,
        )
        try:
            verdict = await classifier.classify(request)
        except Exception as exc:  # a broken classifier asks, never allows
            log.warning("auto-mode classifier failed: %s", exc)
            return None
        self.trace.append(f"auto-mode classifier: {verdict.decision} ({verdict.reason})")
        # What must always ask (protected and outside paths, the tool's own question, a line
        # the parser cannot follow) is not the classifier's to allow.
        open_parts = [p for p in parts if p.covered is None]
        beyond = any(p.kind == "own" or p.must_ask for p in open_parts) or not inside
        if verdict.decision == "allow" and understood and not beyond:
            return self._done(
                PermissionResult.allow(self.input, f"auto mode: {verdict.reason}", source="config")
            )
        if verdict.decision == "deny":
            return self._deny(f"auto mode: {verdict.reason}")
        return None

    def _all_inside(self, facts: _Facts, parts: list[_Part]) -> bool:
        """Whether every path the use may touch — the files a tool names, and every file,
        folder and working folder of a shell line, those only known at run time
        included — is inside the workspace, and none it may write is protected."""
        reads = [
            *facts.reads,
            *facts.maybe_reads,
            *facts.recursive,
            *facts.searched,
            *(p for paths in facts.command_reads.values() for p in paths),
        ]
        writes = [
            *facts.writes,
            *facts.maybe_writes,
            *(p for paths in facts.command_writes.values() for p in paths),
        ]
        writes += [p.path for p in parts if p.path is not None and p.kind == "write"]
        reads += [p.path for p in parts if p.path is not None and p.kind != "write"]
        if any(base is None for base in facts.cwds):
            return False
        for p in reads:
            if p.unknown or not (
                is_inside(p.real, self.workspace)
                or (facts.parsed is None and self._in_session_folder(p.real))
            ):
                return False
        if any(p.unknown or not is_inside(p.real, self.workspace) for p in writes):
            return False
        return not any(protected_reason(p.real) or protected_reason(p.lexical) for p in writes)

    def _in_session_folder(self, path: Path) -> bool:
        """Whether ``path`` is in this session's own data folder (where the engine saves
        large outputs and tells the model to read them back)."""
        try:
            folder = real_path(self.ctx.session.data_dir)
        except OSError:
            return False
        return is_inside(path, [folder])

    # ---------------------------------------------------------------- facts

    def _facts(self) -> _Facts:
        tool = self.tool
        try:
            subject = tool.permission_subject(self.input, self.ctx)
        except Exception as exc:
            log.exception("%s.permission_subject failed", tool.name)
            subject = PermissionSubject(
                summary=tool.name,
                force_ask_reason=f"{tool.name} could not say what it touches ({exc}); "
                "the user decides",
            )
        read_only = _safe_bool(lambda: tool.is_read_only(self.input))
        facts = _Facts(subject=subject, read_only=read_only)
        for p in subject.read_paths:
            facts.reads.append(self._path(p, "read"))
        if subject.command is None:
            facts.searched = [
                _Path(p.real, p.lexical, f"{tool.name}", is_dir=True)
                for p in facts.reads
                if p.is_dir
            ]
        for p in subject.write_paths:
            facts.writes.append(self._path(p, "write"))
        if subject.command is not None:
            self._shell_facts(facts, subject.command)
        for name in ("reads", "writes", "maybe_reads", "maybe_writes"):
            setattr(facts, name, _unique(getattr(facts, name)))
        return facts

    def _path(self, p: Path | str, via: str, cwd: Path | None = None) -> _Path:
        base = cwd or self.cwd
        real = real_path(p, base)
        return _Path(real, lexical_path(p, base), via, is_dir=os.path.isdir(real))

    def _shell_facts(self, facts: _Facts, command: str) -> None:
        parsed = shell.parse_command(command)
        facts.parsed = parsed
        if shell.read_only_problem(parsed) is not None:
            facts.read_only = False
        cwds = self._cwds(parsed)
        facts.cwds = cwds
        for redirect in parsed.redirects:
            via = f"the redirection {redirect.op} {redirect.target}"
            if redirect.writes_file:
                facts.writes.extend(self._shell_paths(redirect.target, redirect.dynamic, cwds, via))
            elif redirect.reads_file:
                facts.reads.extend(self._shell_paths(redirect.target, redirect.dynamic, cwds, via))
        for cmd in parsed.commands:
            if os.path.basename(cmd.name) in FS_RESHAPING and shell.command_problem(cmd):
                facts.reshaper = f"`{_short(cmd.display(), 60)}`"
                break
        for cmd in parsed.commands:
            facts.recursive.extend(self._recursive_folders(cmd, cwds))
        for index, cmd in enumerate(parsed.commands):
            args = shell.path_arguments(cmd)
            via = f"`{cmd.display()}`"
            paths: list[_Path] = []
            for arg in args:
                paths.extend(self._shell_paths(arg.word, arg.dynamic, cwds, via))
            paths.extend(self._working_folders(cmd, cwds, via))
            if cmd.open_args and any(r.reads_file for r in cmd.redirects):
                paths.append(_Path(self.cwd, self.cwd, f"{via} (arguments read from a file)", True))
            elif cmd.open_args and not _fed_by_listing(parsed, cmd):
                paths.append(
                    _Path(
                        self.cwd,
                        self.cwd,
                        f"{via} (xargs passes names only known at run time)",
                        True,
                    )
                )
            elif cmd.open_args:
                escape = self._listing_escape(parsed, cmd, cwds)
                if escape is not None:
                    paths.append(_Path(self.cwd, self.cwd, f"{via} ({escape})", True))
            facts.maybe_reads.extend(paths)
            facts.command_paths[index] = paths
            writes: list[_Path] = []
            for target in shell.write_targets(cmd):
                if target.unknown:
                    writes.append(_Path(self.cwd, self.cwd, f"{via} ({target.unknown})", True))
                    continue
                for found in self._shell_paths(target.word, target.dynamic, cwds, via):
                    found.into = target.into
                    writes.append(found)
            facts.command_writes[index] = writes
            facts.maybe_writes.extend(w for w in writes if not w.unknown)
            if shell.command_problem(cmd, redirects=False) is None:
                facts.command_reads[index] = paths
            else:
                facts.maybe_writes.extend(paths)

    def _working_folders(
        self, cmd: shell.SimpleCommand, cwds: list[Path | None], via: str
    ) -> list[_Path]:
        """A command runs in the line's working folder and reads there without naming it
        (`cd && ls -a`, `cd && grep -r x`, `date --file=.bashrc` after `cd`): a working
        folder outside the workspace, or one only known at run time (`cd -`, `cd "$d"`),
        is a folder the command reads. Programs that read no files (echo, printf, pwd,
        test...) are left out; their globs are judged as paths."""
        if cmd.assignment_only or not cmd.argv:
            return []
        if os.path.basename(cmd.name) in shell.ARGS_NOT_PATHS:
            return []
        out: list[_Path] = []
        for base in cwds:
            if base is None:
                out.append(
                    _Path(
                        self.cwd, self.cwd, f"{via} (run in a folder only known at run time)", True
                    )
                )
            elif not is_inside(base, self.workspace):
                out.append(_Path(base, base, f"{via} (run in {base})", is_dir=True))
        return out

    def _listing_escape(
        self, parsed: shell.ParsedCommand, cmd: shell.SimpleCommand, cwds: list[Path | None]
    ) -> str | None:
        """``find src | xargs cat`` reads what the listing prints: a symbolic link in the
        listed folders that leads out of the workspace (a repository can ship one) is
        read too. What, if anything, says so (None: no such link)."""
        folders: list[tuple[Path, bool, Callable[[str], bool] | None]] = []
        for other in parsed.commands:
            if other is cmd:
                continue
            follows = shell.follows_links(other)
            counts = shell.listed_link_filter(other)
            found = False
            for arg in shell.path_arguments(other):
                for p in self._shell_paths(arg.word, arg.dynamic, cwds, ""):
                    if p.unknown:
                        return f"the listing reads {arg.word}, only known at run time"
                    if p.is_dir:
                        folders.append((p.lexical, follows, counts))
                        found = True
            if not found:
                folders.extend((b, follows, counts) for b in cwds if b is not None)
        for folder, follows, counts in dict.fromkeys(folders):
            scan = scan_for_escape(folder, self.workspace, files_only=not follows, counts=counts)
            if scan.match is not None:
                return (
                    f"the names come from listing {_display(folder, self.root) or '.'}, where "
                    f"{_display(scan.match, self.root)} leads out of the workspace"
                )
            if not scan.complete:
                return f"the names come from listing {folder}, which holds too many files to check"
        return None

    def _recursive_folders(self, cmd: shell.SimpleCommand, cwds: list[Path | None]) -> list[_Path]:
        """The folders ``cmd`` reads everything under (none when it reads no folder whole)."""
        recursive = shell.recursive_read(cmd)
        if recursive is None:
            return []
        words = cmd.layers[0] if cmd.layers else cmd.argv  # `xargs cat`, not `cat`
        via = f"`{_short(' '.join(shell.quote_word(w) for w in words), 60)}`"
        found: list[_Path] = []
        for arg in recursive.folders:
            found.extend(self._shell_paths(arg.word, arg.dynamic, cwds, via))
        existing = [p for p in found if not p.unknown and os.path.lexists(p.real)]
        if recursive.default_cwd and not existing:
            return [_Path(b, b, via, is_dir=True) for b in cwds if b is not None]
        return [p for p in existing if p.is_dir]

    def _cwds(self, parsed: shell.ParsedCommand) -> list[Path | None]:
        """Every folder a relative path in the line may be relative to (None: unknown)."""
        cwds: list[Path | None] = [self.cwd]
        for target in parsed.cd_targets:
            if target is None:
                cwds.append(None)
                continue
            for base in list(cwds):
                if base is not None:
                    cwds.append(real_path(target, base))
        return list(dict.fromkeys(cwds))

    def _shell_paths(
        self, word: str, dynamic: bool, cwds: list[Path | None], via: str
    ) -> list[_Path]:
        out: list[_Path] = []
        if dynamic and not _is_plain_glob(word):
            return [_Path(self.cwd, self.cwd, f"{via} ({word} is only known at run time)", True)]
        for base in cwds:
            if base is None:
                if not os.path.isabs(os.path.expanduser(word)):
                    out.append(
                        _Path(
                            self.cwd,
                            self.cwd,
                            f"{via} ({word} after a `cd` to a folder only known at run time)",
                            True,
                        )
                    )
                    continue
                base = self.cwd
            if dynamic:
                matches = _expand_glob(word, base)
                if matches is None:
                    out.append(_Path(base, base, f"{via} ({word} matches too many files)", True))
                    continue
                out.extend(self._path(m, via, base) for m in matches)
                if not matches:
                    out.append(self._path(word, via, base))
            else:
                out.append(self._path(word, via, base))
        return out

    # ---------------------------------------------------------------- rule matching

    def _match(self, rule: PermissionRule, kind: RuleKind, facts: _Facts) -> str | None:
        """What part of the use ``rule`` matches (for deny/ask), or None."""
        subject = facts.subject
        # Deny and ask rules ignore case (`bash` and `read(.ENV)` still apply).
        if rule.specifier is None:
            return f"{self.tool.name}" if rule.names_tool(self.names, fold=True) else None
        spec = rule.specifier
        own_tool = rule.is_for(frozenset(self.names), fold=True)
        if own_tool:
            if subject.command is not None and facts.parsed is not None:
                for cmd in facts.parsed.commands:
                    if shell.match_rule(spec, cmd, kind):
                        return f"the command `{cmd.display()}`"
                for cmd in facts.parsed.shadows:
                    if shell.match_rule(spec, cmd, kind):
                        outer = facts.parsed.source
                        return (
                            f"the command `{cmd.display()}` (which `{_short(outer, 60)}` may run)"
                        )
            if subject.url is not None and domain_matches(spec, subject.url):
                return f"the URL {subject.url}"
        if rule.is_for(READ_RULE_TOOLS, fold=True) or (own_tool and subject.command is None):
            for p in [*facts.reads, *facts.maybe_reads]:
                if self._path_matches(spec, p, kind):
                    return f"reading {p.lexical}"
        if rule.is_for(WRITE_RULE_TOOLS, fold=True) or (own_tool and subject.command is None):
            for p in [*facts.writes, *facts.maybe_writes]:
                if self._path_matches(spec, p, kind):
                    return f"writing {p.lexical}"
        return None

    def _path_matches(self, spec: str, p: _Path, kind: RuleKind) -> bool:
        if p.unknown:
            return False
        pattern = path_pattern(spec, self.root)
        if kind == "allow":
            return pattern.matches(p.real, is_dir=p.is_dir)
        # Deny and ask also match the path as written (a link named .env, say), and
        # ignore case (`.ENV` is the same file on a case-insensitive disk).
        return pattern.matches_folded(p.real, is_dir=p.is_dir) or pattern.matches_folded(
            p.lexical, is_dir=p.is_dir
        )

    def _reaches(
        self, rule: PermissionRule, folders: list[_Path], tools: frozenset[str]
    ) -> tuple[str, bool] | None:
        """A read of every file under ``folders`` (`grep -r x .`, Grep) that reaches a
        file ``rule`` (a path rule for one of ``tools``) names: what it is, and whether
        such a file was found (False: a folder holds too many files to tell)."""
        if rule.specifier is None or not rule.is_for(tools, fold=True):
            return None
        pattern = path_pattern(rule.specifier, self.root)
        unsure: tuple[str, bool] | None = None
        for folder in folders:
            if not pattern.may_match_under(folder.real):
                continue
            scan = scan_for_match(pattern, folder.real)
            where = _display(folder.real, self.root) or "."
            if scan.match is not None:
                found = _display(scan.match, self.root)
                return f"{folder.via} reads every file under {where}, including {found},", True
            if not scan.complete and unsure is None:
                unsure = (
                    f"{folder.via} reads every file under {where}, which holds too many "
                    "files to check for ones",
                    False,
                )
        return unsure

    def _allow_rule_for(self, pred: Callable[[PermissionRule], bool]) -> PermissionRule | None:
        for rule in self.pctx.allow_rules():
            if pred(rule):
                return rule
        return None

    # ---------------------------------------------------------------- parts

    def _parts(self, facts: _Facts) -> list[_Part]:
        parts: list[_Part] = []
        subject = facts.subject
        parsed = facts.parsed
        if parsed is not None:
            if not parsed.fully_understood:
                parts.append(
                    _Part(
                        "command",
                        f"`{_short(parsed.source)}`",
                        problem="the command is not fully understood ("
                        + "; ".join(parsed.reasons)
                        + "), so no rule or mode can allow it without asking",
                    )
                )
            for cmd in parsed.commands:
                if cmd.assignment_only and shell.command_problem(cmd, redirects=False) is None:
                    continue
                parts.append(_Part("command", f"`{_short(cmd.display())}`", command=cmd))
        for p in facts.reads:
            parts.append(_Part("read", f"reading {p.real}", path=p))
        for p in facts.writes:
            parts.append(_Part("write", f"writing {p.real}", path=p))
        if subject.url is not None:
            parts.append(_Part("url", f"fetching {subject.url}"))
        has_writes = bool(facts.writes)
        if parsed is None and not facts.read_only and not has_writes:
            parts.append(_Part("tool", self.tool.name))
        if (
            parsed is None
            and not facts.read_only
            and has_writes
            and self.tool.name not in (WRITE_RULE_TOOLS)
            and not getattr(self.tool, "edit_preview", False)
        ):
            # A tool that writes files *and* does other things needs the tool allowed too.
            parts.append(_Part("tool", self.tool.name))
        if self.own is not None and self.own.behavior == "ask":
            parts.append(
                _Part("own", f"{self.tool.name} asks itself", problem=self.own.reason or "")
            )
        if not parts:
            parts.append(_Part("tool", self.tool.name))
        return parts

    def _cover(self, part: _Part, facts: _Facts) -> None:
        {
            "command": self._cover_command,
            "read": self._cover_read,
            "write": self._cover_write,
            "url": self._cover_url,
            "tool": self._cover_tool,
            "own": self._cover_own,
        }[part.kind](part, facts)

    def _cover_command(self, part: _Part, facts: _Facts) -> None:
        cmd = part.command
        if cmd is None:
            return  # the "not fully understood" part: nothing covers it
        parsed = facts.parsed
        assert parsed is not None
        if not parsed.fully_understood:
            part.problem = "part of a command that is not fully understood"
            return
        index = parsed.commands.index(cmd)
        if os.path.basename(cmd.name) == "git":
            untrusted = self._untrusted_repository(facts, cmd)
            if untrusted is not None:
                part.problem = f"{part.label} {untrusted}"
                part.must_ask = True
                return
        problem = shell.command_problem(cmd, redirects=False)
        rule = self._allow_rule_for(
            lambda r: (
                r.names_tool(self.names)
                and (
                    r.specifier is None
                    or shell.match_rule(r.specifier, cmd, "allow")
                    or shell.compound_allowed(r.specifier, parsed)
                )
            )
        )
        if rule is not None:
            beyond = self._beyond_rule(cmd, index, rule, facts, read_only=problem is None)
            if beyond is not None:
                # The rule allows the program, not what it is pointed at.
                part.problem = f"{part.label} {beyond}, which {rule.describe()} does not cover"
                part.must_ask = True
                return
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        if problem is None and facts.reshaper and facts.command_reads.get(index):
            part.problem = (
                f"{facts.reshaper} in the same line can change where the files of {part.label} lead"
            )
            return
        if problem is None:
            outside = [
                p
                for p in facts.command_reads.get(index, [])
                if p.unknown or not is_inside(p.real, self.workspace)
            ]
            read_rules = {id(p): self._read_rule(p) for p in outside}
            uncovered = [p for p in outside if read_rules[id(p)] is None]
            if not uncovered:
                escape = self._follows_out(cmd, facts)
                if escape is not None:
                    part.problem = f"{part.label} {escape}"
                    part.must_ask = True
                    return
                part.rules = [r for r in read_rules.values() if r is not None]
                part.covered = "a read-only command" + (
                    f" (reading outside the workspace allowed by {part.rules[0].describe()})"
                    if part.rules
                    else ""
                )
                return
            first = uncovered[0]
            where = first.via if first.unknown else f"{first.real} is outside the workspace"
            part.problem = f"{part.label} reads outside the workspace ({where})"
            part.suggestion = None if first.unknown else self._read_rule_text(first)
            part.must_ask = True
            return
        part.problem = f"{part.label} needs approval ({problem})"
        part.suggestion = _command_rule(cmd, self.tool.name)

    def _untrusted_repository(
        self, facts: _Facts, cmd: shell.SimpleCommand | None = None
    ) -> str | None:
        """Why git, run where this line may run it, could read a repository config the
        model could have written (and run the programs it names), or None. ``git -C
        DIR`` starts git's search in DIR; ``--git-dir=DIR`` names the repository."""
        options = shell.git_global_options(cmd) if cmd is not None else []
        for base in facts.cwds or [self.cwd]:
            if base is None:
                return "runs git in a folder only known at run time"
            start: Path = base
            git_dir: Path | None = None
            for option, value in options:
                if option in ("-C", "--git-dir", "--work-tree") and value is None:
                    return f"runs git with `{option}` naming a folder only known at run time"
                if option == "-C" and value:
                    start = real_path(value, start)
                elif option == "--git-dir" and value:
                    git_dir = real_path(value, start)
            problem = repository_problem(start, self.root, self.workspace, git_dir)
            if problem is not None:
                return problem
        return None

    def _follows_out(self, cmd: shell.SimpleCommand, facts: _Facts) -> str | None:
        """A recursive read that follows symbolic links (`grep -R`, `rg -L`) and finds one
        leading out of the workspace reads outside it: what says so, or None."""
        recursive = shell.recursive_read(cmd)
        if recursive is None or not recursive.follows_links:
            return None
        for folder in self._recursive_folders(cmd, facts.cwds or [self.cwd]):
            scan = scan_for_escape(folder.real, self.workspace)
            if scan.match is not None:
                return (
                    "follows symbolic links, and "
                    f"{_display(scan.match, self.root)} leads out of the workspace"
                )
            if not scan.complete:
                return (
                    f"follows symbolic links in {_display(folder.real, self.root) or '.'}, "
                    "which holds too many files to check for links out of the workspace"
                )
        return None

    def _beyond_rule(
        self,
        cmd: shell.SimpleCommand,
        index: int,
        rule: PermissionRule,
        facts: _Facts,
        *,
        read_only: bool = False,
    ) -> str | None:
        """What a command an allow rule covers touches that the rule cannot grant: a
        protected path, a path outside the workspace, a file it writes whose name is only
        known at run time. Only rules naming the path (an ``Edit(...)`` rule for it, or
        the Bash rule itself spelling the protected part) reach those. None: nothing."""
        for p in facts.command_writes.get(index, []):
            if p.unknown:
                return f"writes a file whose location is only known at run time ({p.via})"
            problem = self._write_beyond(p, rule)
            if problem is not None:
                return problem
        writer = read_only or shell.is_known_writer(cmd)
        for p in facts.command_paths.get(index, []):
            if p.unknown:
                continue  # a run-time word of a program whose arguments are not modelled
            if not writer:
                protected = protected_reason(p.real) or protected_reason(p.lexical)
                if protected and not self._names_protected(rule, p):
                    return f"names {_display(p.real, self.root)} ({protected})"
            if not is_inside(p.real, self.workspace) and not (
                self._read_rule(p) or self._write_rule(p, False)
            ):
                return f"names {p.real}, outside the workspace"
        return None

    def _write_beyond(self, p: _Path, rule: PermissionRule) -> str | None:
        shown = _display(p.real, self.root) or "."
        if p.into:
            roots = [*self.workspace, Path.home().resolve()]
            if any(p.real == r or p.real in r.parents for r in roots) or not is_inside(
                p.real, self.workspace
            ):
                return (
                    f"writes files named only at run time into {shown}, which holds (or may "
                    "come to hold) protected or outside paths"
                )
            if protected_reason(p.real) or protected_reason(p.lexical):
                return f"writes files named only at run time into {shown}, a protected folder"
            return None
        links = _hard_links(p.real)
        if links > 1:
            return f"writes {shown}, which has {links} hard links"
        protected = protected_reason(p.real) or protected_reason(p.lexical)
        if protected and not (self._names_protected(rule, p) or self._write_rule(p, True)):
            return f"writes {shown} ({protected})"
        if not is_inside(p.real, self.workspace) and not self._write_rule(p, bool(protected)):
            return f"writes {p.real}, outside the workspace"
        return None

    def _names_protected(self, rule: PermissionRule, p: _Path) -> bool:
        """A Bash rule that itself spells the protected part (``Bash(cp x .git/hooks/y)``)."""
        spec = rule.specifier or ""
        return bool(spec) and (
            pattern_names_protected(spec, p.real) or pattern_names_protected(spec, p.lexical)
        )

    def _write_rule(self, p: _Path, protected: bool) -> PermissionRule | None:
        """An Edit/Write allow rule for ``p`` (naming the protected part when it must)."""
        return self._allow_rule_for(
            lambda r: (
                r.specifier is not None
                and r.tool_name in WRITE_RULE_TOOLS
                and self._path_matches(r.specifier, p, "allow")
                and (not protected or pattern_names_protected(r.specifier, p.real))
            )
        )

    def _read_rule(self, p: _Path) -> PermissionRule | None:
        if p.unknown:
            return None
        return self._allow_rule_for(
            lambda r: (
                r.specifier is not None
                and (r.tool_name in READ_RULE_TOOLS or r.tool_name in self.names)
                and self._path_matches(r.specifier, p, "allow")
            )
        )

    def _read_rule_text(self, p: _Path) -> str:
        return f"Read({rule_path_for(p.real, self.root)})"

    def _cover_read(self, part: _Part, facts: _Facts) -> None:
        p = part.path
        assert p is not None
        if facts.reshaper:
            part.problem = f"{facts.reshaper} in the same line can change where {p.lexical} leads"
            return
        rule = self._read_rule(p)
        if rule is not None:
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        if p.unknown:
            part.problem = f"it reads a file whose location is only known at run time ({p.via})"
            part.must_ask = True
            return
        if is_inside(p.real, self.workspace):
            part.covered = "a read inside the workspace"
            return
        if facts.parsed is None and self._in_session_folder(p.real):
            part.covered = "a read of this session's own saved output"
            return
        part.problem = f"{p.real} is outside the workspace"
        part.suggestion = self._read_rule_text(p)
        part.must_ask = True

    def _cover_write(self, part: _Part, facts: _Facts) -> None:
        p = part.path
        assert p is not None
        if p.unknown:
            part.problem = f"it writes a file whose location is only known at run time ({p.via})"
            return
        if facts.reshaper:
            part.problem = f"{facts.reshaper} in the same line can change where {p.lexical} leads"
            return
        links = _hard_links(p.real)
        if links > 1:
            part.problem = (
                f"{p.real} has {links} hard links: writing it changes the other names too"
            )
            return
        protected = protected_reason(p.real) or protected_reason(p.lexical)
        inside = is_inside(p.real, self.workspace)
        rule = self._allow_rule_for(
            lambda r: (
                r.specifier is not None
                and (r.tool_name in WRITE_RULE_TOOLS or r.tool_name in self.names)
                and self._path_matches(r.specifier, p, "allow")
                and (not protected or pattern_names_protected(r.specifier, p.real))
            )
        )
        if rule is not None:
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        suggestion = f"Edit({rule_path_for(p.real, self.root)})"
        if protected:
            part.problem = f"{p.real} is protected ({protected}); only a rule naming it allows it"
            part.suggestion = suggestion
            return
        if not inside:
            part.problem = f"writing {p.real}, outside the workspace, always asks"
            part.suggestion = suggestion
            return
        if accepts_edits(self.mode):
            part.covered = "acceptEdits mode: an edit inside the workspace"
            return
        bare = self._allow_rule_for(lambda r: r.specifier is None and r.names_tool(self.names))
        if bare is not None and facts.parsed is None:
            part.covered, part.rules = f"allowed by {bare.describe()}", [bare]
            return
        part.problem = f"writing {_display(p.real, self.root)} needs approval"
        part.suggestion = suggestion

    def _cover_url(self, part: _Part, facts: _Facts) -> None:
        url = facts.subject.url or ""
        rule = self._allow_rule_for(
            lambda r: (
                r.names_tool(self.names)
                and (r.specifier is None or domain_matches(r.specifier, url))
            )
        )
        if rule is not None:
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        if facts.read_only:
            part.covered = f"{self.tool.name} is read-only"
            return
        part.problem = f"fetching {url} needs approval"
        part.suggestion = _domain_rule(self.tool.name, url)

    def _cover_tool(self, part: _Part, facts: _Facts) -> None:
        rule = self._allow_rule_for(lambda r: r.specifier is None and r.names_tool(self.names))
        if rule is not None:
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        if facts.read_only:
            part.covered = f"{self.tool.name} is read-only"
            return
        part.problem = f"{self.tool.name} may change things"
        part.suggestion = self.tool.name

    def _cover_own(self, part: _Part, facts: _Facts) -> None:
        """The tool's own "ask": only an allow rule for this use satisfies it, never the mode."""
        subject = facts.subject
        rule: PermissionRule | None = None
        if facts.parsed is not None and facts.parsed.fully_understood and facts.parsed.commands:
            rules = [
                self._allow_rule_for(
                    lambda r, c=cmd: (
                        r.names_tool(self.names)
                        and (r.specifier is None or shell.match_rule(r.specifier, c, "allow"))
                    )
                )
                for cmd in facts.parsed.commands
            ]
            if all(r is not None for r in rules):
                rule = rules[0]
            else:
                part.suggestion = _dedupe_join(
                    _command_rule(c, self.tool.name) for c in facts.parsed.commands
                )
        elif subject.url is not None:
            rule = self._allow_rule_for(
                lambda r: (
                    r.names_tool(self.names)
                    and r.specifier is not None
                    and domain_matches(r.specifier, subject.url or "")
                )
            )
            part.suggestion = _domain_rule(self.tool.name, subject.url)
        else:
            rule = self._allow_rule_for(lambda r: r.specifier is None and r.names_tool(self.names))
            part.suggestion = self.tool.name
        if rule is not None:
            part.covered, part.rules = f"allowed by {rule.describe()}", [rule]
            return
        part.problem = part.problem or f"{self.tool.name} asks for confirmation"


# The tool a search that reaches denied files is pointed to.
_SEARCH_TOOL = "Grep"

# Commands that can make a path lead somewhere else (links, moves, copies over, extraction).
FS_RESHAPING = shell.name_set(
    "ln link mv cp rm rmdir mkdir install rsync tar bsdtar unzip 7z cpio patch git mount "
    "umount bindfs rename"
)


def _fed_by_listing(parsed: shell.ParsedCommand, cmd: shell.SimpleCommand) -> bool:
    """Whether the names xargs passes to ``cmd`` come from listing files below folders
    the line itself names (``find . -name '*.py' | xargs wc -l``), and from nothing else
    (``echo /etc/passwd | xargs cat``, ``xargs -a list cat``)."""
    outer = cmd.layers[0] if cmd.layers else cmd.argv
    if any(w in ("-a", "--arg-file") or w.startswith("--arg-file=") for w in outer):
        return False
    others = [c for c in parsed.commands if c is not cmd]
    return bool(others) and all(shell.lists_workspace_paths(c) for c in others)


def _unique(paths: list[_Path]) -> list[_Path]:
    """The paths without repeats (the same file reached twice is judged once)."""
    seen: set[tuple[Path, Path, bool]] = set()
    out = []
    for p in paths:
        key = (p.real, p.lexical, p.unknown)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _hard_links(path: Path) -> int:
    try:
        st = path.stat()
    except OSError:
        return 1
    return st.st_nlink if not os.path.isdir(path) else 1


# --------------------------------------------------------------------------- suggestions

# Programs whose second word is a subcommand worth keeping in the rule (`git push:*`).
_SUBCOMMAND_TOOLS = shell.name_set(
    "git npm pnpm yarn bun cargo go docker podman kubectl helm make pip pip3 uv poetry "
    "gh terraform apt apt-get brew systemctl dotnet mvn gradle deno npx rustup conda"
)
_RUN_TOOLS = shell.name_set("npm pnpm yarn bun")
_INTERPRETERS = shell.name_set("python python3 node ruby perl php bash sh zsh deno bun tsx ts-node")


def _command_rule(cmd: shell.SimpleCommand, tool_name: str) -> str | None:
    """The generalised rule for a simple command, for "Always allow": its program and
    subcommand as a prefix (``Bash(npm run test:*)``, ``Bash(git -C . push:*)``).

    Never broader than the use shows is safe: a program with subcommands is kept
    with its subcommand (after its global options, as written: a prefix rule must
    match the command it was offered for), never as ``git:*``; a destructive
    command (``rm -rf build``, ``kubectl delete pod x``) is offered only as itself;
    an interpreter only with its script. None: no sensible rule.
    """
    words = cmd.static_prefix()
    if not words or cmd.escalated:
        return None
    if any(not shell.is_safe_env_name(k) for k, _ in cmd.env):
        return None  # `PATH=x ls` is asked about each time, never kept as a rule
    name = words[0]
    exact = len(words) == len(cmd.argv) and not cmd.open_args
    if is_destructive_words(cmd.argv):
        if not exact:
            return None
        return f"{tool_name}({' '.join(shell.quote_word(w) for w in words)})"
    keep = [name]
    if name in _INTERPRETERS and len(words) > 1 and not words[1].startswith("-"):
        keep.append(words[1])  # `python scripts/x.py:*`, never `python:*`
    elif name in _SUBCOMMAND_TOOLS:
        index = subcommand_index(words) if len(words) > 1 else None
        if index is None:
            # No subcommand, or options whose meaning is not known: only this command.
            if not exact:
                return None
            return f"{tool_name}({' '.join(shell.quote_word(w) for w in words)})"
        keep = list(words[: index + 1])
        sub = words[index]
        if name in _RUN_TOOLS and sub in ("run", "run-script", "exec") and len(words) > index + 1:
            keep.append(words[index + 1])
    if name in _INTERPRETERS and len(keep) == 1:
        return None  # `python:*` would allow any code
    text = " ".join(shell.quote_word(w) for w in keep)
    return f"{tool_name}({text}:*)"


def _domain_rule(tool_name: str, url: str | None) -> str | None:
    host = url_host(url or "")
    return f"{tool_name}(domain:{host})" if host else None


def _dedupe(items: Any) -> list[str]:
    return [x for x in dict.fromkeys(i for i in items if i)]


def _dedupe_join(items: Any) -> str | None:
    found = _dedupe(items)
    return ", ".join(found) if found else None


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _is_plain_glob(word: str) -> bool:
    """A word whose only run-time part is a pathname glob (no $, no backticks, no braces)."""
    return not any(c in word for c in "$`{}") and any(c in word for c in "*?[")


def _expand_glob(pattern: str, base: Path) -> list[Path] | None:
    """What a glob word matches from ``base`` (None: too many to check)."""
    try:
        if os.path.isabs(pattern):
            found = _glob.glob(pattern)
        else:
            found = _glob.glob(pattern, root_dir=base)
    except (OSError, ValueError):
        return []
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return [Path(f) if os.path.isabs(f) else base / f for f in found]


def _safe_bool(fn: Callable[[], Any]) -> bool:
    try:
        return bool(fn())
    except Exception:
        return False


def _safe_str(fn: Callable[[], Any]) -> str:
    try:
        return str(fn())
    except Exception:
        return ""


# --------------------------------------------------------------------------- listings


def read_deny_rules(ctx: ToolUseContext) -> list[PermissionRule]:
    """The deny rules that name paths to read (``Read(.env)``); usually none.

    Tools filtering many results ask this once and skip the per-result check
    when it is empty (50,000 Grep results need not each become a Path).
    """
    return [
        r
        for r in ctx.engine.permission_context.deny
        if r.specifier is not None and r.is_for(READ_RULE_TOOLS, fold=True)
    ]


def read_denied(
    ctx: ToolUseContext, path: Path, rules: list[PermissionRule] | None = None
) -> PermissionRule | None:
    """The deny rule that forbids reading ``path``, if any.

    A search or listing of a folder is allowed as a whole; the tools use this to
    leave out what a ``Read(...)`` deny rule forbids (``Read(.env)`` and a Glob
    over the workspace). Cheap enough to call per result; ``rules`` (from
    :func:`read_deny_rules`) saves finding them again each time.
    """
    if rules is None:
        rules = read_deny_rules(ctx)
    if not rules:
        return None
    root = real_path(ctx.root)
    p = _Path(real_path(path), lexical_path(path), is_dir=os.path.isdir(path))
    for rule in rules:
        pattern = path_pattern(rule.specifier or "", root)
        if pattern.matches_folded(p.real, is_dir=p.is_dir) or pattern.matches_folded(
            p.lexical, is_dir=p.is_dir
        ):
            return rule
    return None


# --------------------------------------------------------------------------- resolve


async def resolve_permission(
    tool: Tool,
    input: Any,
    ctx: ToolUseContext,
    hook_decision: PermissionResult | None = None,
) -> PermissionResult:
    """The final decision for one use, asking the user when needed."""
    own = await tool.check_permissions(input, ctx)
    if own.behavior == "deny":
        own.source = own.source or "config"
        return own
    if own.updated_input is not None:
        input = own.updated_input
    decision = await decide(tool, input, ctx, own=own)
    if decision.behavior == "deny":
        return decision
    if hook_decision is not None:
        hook_reason = hook_decision.reason
        if hook_decision.behavior == "deny":
            result = PermissionResult.deny(
                hook_reason or "a PreToolUse hook denied this tool use", source="hook"
            )
            result.trace = [*decision.trace, f"hook: deny ({hook_reason})"]
            return result
        if hook_decision.behavior == "allow" and not _forced_ask(tool, input, ctx):
            result = PermissionResult.allow(
                input, hook_reason or "allowed by a PreToolUse hook", source="hook"
            )
            result.trace = [*decision.trace, f"hook: allow ({hook_reason})"]
            return result
        if hook_decision.behavior == "ask":
            trace = [*decision.trace, f"hook: ask ({hook_reason})"]
            decision = PermissionResult.ask(
                hook_reason or "a PreToolUse hook asks for confirmation",
                suggestions=decision.suggestions if decision.behavior == "ask" else [],
            )
            decision.trace = trace
    if decision.behavior != "ask":
        return decision
    return await ask_user(tool, input, ctx, decision)


def _forced_ask(tool: Tool, input: Any, ctx: ToolUseContext) -> bool:
    try:
        return bool(tool.permission_subject(input, ctx).force_ask_reason)
    except Exception:
        return True


async def ask_user(
    tool: Tool, input: Any, ctx: ToolUseContext, decision: PermissionResult
) -> PermissionResult:
    """Put the question to the user through the bridge and turn the answer into a decision."""
    if getattr(tool, "edit_preview", False) and ctx.bridge.capabilities.edit_preview_approval:
        # The editor's preview of the edit is the approval: the tool applies the edit
        # with needsConfirmation and raises ToolRejected if the user refuses it.
        ctx.edit_preview_approval = True
        result = PermissionResult.allow(
            input, "approved in the editor's edit preview", "user_temporary"
        )
        result.trace = [*decision.trace, "the editor's edit preview is the approval"]
        return result
    try:
        subject = tool.permission_subject(input, ctx)
        summary, detail = subject.summary, subject.detail or (subject.command or "")
    except Exception:
        summary, detail = tool.name, ""
    rules = list(decision.suggestions)
    rule_text = ", ".join(rules) if rules else None
    request = PermissionRequest(
        tool_use_id=ctx.tool_use_id,
        tool_name=tool.name,
        message=f"{_safe_str(lambda: tool.user_facing_name(input)) or tool.name}: {summary}",
        detail=detail,
        reason=decision.reason,
        session_rule=rule_text,
        always_rule=rule_text,
    )
    trace = list(decision.trace)
    try:
        answer = await ctx.bridge.ask_permission(request)
    except Exception as exc:  # a lost editor is a rejection, never an allow
        result = PermissionResult.deny(
            f"The permission question could not be answered ({type(exc).__name__}); rejected.",
            source="user_reject",
        )
        result.trace = [*trace, f"asked the user: no answer ({type(exc).__name__})"]
        return result
    trace.append(f"asked the user: {answer.choice}")
    if answer.choice == "allow_once":
        result = PermissionResult.allow(input, "allowed once by the user", "user_temporary")
    elif answer.choice in ("allow_session", "allow_always") and rules:
        kept = [parse_rule(r, origin="session") for r in rules]
        for rule in kept:
            ctx.engine.permission_context.keep_for_session(rule)
        source: DecisionSource = "user_temporary"
        reason = f"allowed by the user for this session ({rule_text})"
        if answer.choice == "allow_always":
            from codev_ls.permissions.settings import save_always_allow

            error = save_always_allow(ctx.engine, rules)
            if error is None:
                source, reason = "user_permanent", f"always allowed by the user ({rule_text})"
            else:
                ctx.bridge.show_message("error", error)
                reason += f"; not saved: {error}"
        result = PermissionResult.allow(input, reason, source, rule_text)
    elif answer.choice in ("allow_session", "allow_always"):
        # No rule was offered (so none can be kept): this one use only.
        result = PermissionResult.allow(input, "allowed once by the user", "user_temporary")
    else:
        reason = "the user rejected it"
        if answer.feedback:
            reason += f": {answer.feedback}"
        result = PermissionResult.deny(reason, source="user_reject")
    result.trace = trace
    return result
