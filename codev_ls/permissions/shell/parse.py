"""The shell parser: a command line to its simple commands (tree-sitter-bash).

See the package docstring (:mod:`codev_ls.permissions.shell`) for what is
looked through and what makes a parse not fully understood.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


# How deep `bash -c "bash -c '...'"` and friends are followed before giving up.
MAX_DEPTH = 6
# Longer commands are not parsed (never auto-allowed): a guard against pathological input.
MAX_COMMAND_CHARS = 100_000

RedirectKind = Literal["write", "append", "read", "readwrite", "dup", "heredoc", "herestring"]

# Output redirection targets that write no file.
HARMLESS_WRITE_TARGETS = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"}
)


def name_set(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string (keeps long tables short)."""
    return frozenset(text.split())


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection: ``2>&1``, ``> out.txt``, ``< in``, ``<<EOF``."""

    op: str
    # The file (after quote removal) for file redirections; the fd for dups; "" otherwise.
    target: str
    kind: RedirectKind
    fd: int | None = None
    # The target is only known at run time (``> $OUT``).
    dynamic: bool = False

    @property
    def writes_file(self) -> bool:
        """True when this redirection writes (or truncates) a file."""
        return self.kind in ("write", "append", "readwrite") and (
            self.dynamic or self.target not in HARMLESS_WRITE_TARGETS
        )

    @property
    def reads_file(self) -> bool:
        return self.kind in ("read", "readwrite")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command with its words, as the shell would run it.

    ``argv`` is the innermost command after looking through wrappers
    (``timeout 5 rm x`` → ``rm x``); ``layers`` holds every level from the
    outermost down to ``argv`` (``(("timeout","5","rm","x"), ("rm","x"))``).
    Words only known at run time (``$HOME/x``, ``*.py``, ``$(date)``) keep their
    source text and their index is in ``dynamic``.
    """

    argv: tuple[str, ...]
    text: str
    env: tuple[tuple[str, str], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    dynamic: frozenset[int] = frozenset()
    layers: tuple[tuple[str, ...], ...] = ()
    # Names of the wrappers looked through, outermost first ("sudo", "timeout", "bash -c").
    wrappers: tuple[str, ...] = ()
    # More arguments are added at run time (xargs): exact rules cannot match.
    open_args: bool = False
    # A plain assignment or declaration (``X=1``, ``export X=1``), not a program run.
    assignment_only: bool = False

    @property
    def name(self) -> str:
        """The program run (``""`` for a bare assignment or redirection)."""
        return self.argv[0] if self.argv else ""

    @property
    def escalated(self) -> bool:
        """Run through sudo/doas: allow rules must name the wrapper itself."""
        return any(w in ESCALATING_WRAPPERS for w in self.wrappers)

    def is_dynamic(self, index: int) -> bool:
        return index in self.dynamic

    def static_prefix(self) -> tuple[str, ...]:
        """The leading words known before the command runs."""
        out = []
        for i, word in enumerate(self.argv):
            if i in self.dynamic:
                break
            out.append(word)
        return tuple(out)

    def display(self) -> str:
        """The command as words (env prefixes included), for messages."""
        env = [f"{k}={v}" for k, v in self.env]
        return " ".join([*env, *(quote_word(w) for w in self.argv)]) or self.text


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A whole command line: its simple commands and whether the parse is complete."""

    source: str
    commands: tuple[SimpleCommand, ...]
    fully_understood: bool
    reasons: tuple[str, ...] = ()
    # Every redirection in the line, including those on groups (``{ a; b; } > f``).
    redirects: tuple[Redirect, ...] = ()
    # ``cd``/``pushd`` targets met in the line (None: not known before running).
    cd_targets: tuple[str | None, ...] = ()
    # Commands a program of the line *may* run, found by guessing where its own words
    # end (`unshare -r rm x`, `strace -o log rm x`, `su -c 'rm x'`): deny and ask rules
    # match them too; nothing is allowed because of them.
    shadows: tuple[SimpleCommand, ...] = ()

    def write_targets(self) -> list[str]:
        """Files the line writes by redirection (``/dev/null`` and friends left out)."""
        return [r.target for r in self.redirects if r.writes_file and not r.dynamic]

    def read_targets(self) -> list[str]:
        """Files the line reads by redirection (``< file``)."""
        return [r.target for r in self.redirects if r.reads_file and not r.dynamic]

    @property
    def has_dynamic_writes(self) -> bool:
        return any(r.writes_file and r.dynamic for r in self.redirects)


# --------------------------------------------------------------------------- parser


_local = threading.local()


def _parser() -> Parser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


def parse_command(command: str) -> ParsedCommand:
    """Parse a shell command line into its simple commands (cached; thread-safe)."""
    if not isinstance(command, str):
        raise TypeError("parse_command() takes a string")
    return _parse_cached(command)


@lru_cache(maxsize=512)
def _parse_cached(command: str) -> ParsedCommand:
    if len(command) > MAX_COMMAND_CHARS:
        return ParsedCommand(
            command, (), False, (f"the command is longer than {MAX_COMMAND_CHARS} characters",)
        )
    if "\x00" in command:
        return ParsedCommand(command, (), False, ("the command contains a NUL character",))
    if _LONE_SURROGATE.search(command):
        # JSON may carry "\ud800": no byte string (no shell) can hold it.
        return ParsedCommand(command, (), False, ("the command contains a lone surrogate",))
    walker = _Walker()
    walker.parse_script(command, depth=0, layers=(), wrappers=())
    control = _CONTROL_CHARS.search(command)
    if control:
        # tree-sitter takes \r, \v, \f for blanks where bash sees word characters.
        walker.reasons.append(
            f"it contains the control character {control.group(0)!r}, which the parser and "
            "bash read differently"
        )
    return ParsedCommand(
        source=command,
        commands=tuple(walker.commands),
        fully_understood=not walker.reasons,
        reasons=tuple(dict.fromkeys(walker.reasons)),
        redirects=tuple(walker.redirects),
        cd_targets=tuple(walker.cd_targets),
        shadows=tuple(walker.shadows),
    )


# Surrogates that are not surrogateescape's stand-ins for undecodable bytes.
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
_CONTROL_CHARS = re.compile(r"[\x01-\x08\x0b-\x1f\x7f]")


# tree-sitter-bash's scanner (0.25.1, src/scanner.c, `brace_start`) calls the C
# `isdigit()` on the character after `{`, `{12` or `{1..2`: a code point above 255
# indexes past glibc's table and crashes the process (`echo {\U000c7249`).
_SCANNER_TRAP = re.compile(r"(\{[0-9]*(?:\.\.[0-9]*)?)([^\x00-\xff])")


def _scanner_safe(script: str) -> str | None:
    """``script`` with the characters that would crash the scanner replaced by ASCII
    letters of the same UTF-8 length (byte offsets stay true); None when none do."""
    if not _SCANNER_TRAP.search(script):
        return None

    def replace(m: re.Match[str]) -> str:
        size = len(m.group(2).encode("utf-8", "surrogateescape"))
        return m.group(1) + "x" * size

    return _SCANNER_TRAP.sub(replace, script)


@dataclass(slots=True)
class _Word:
    value: str
    dynamic: bool
    source: str


# Node types that only group statements: walk their children.
_CONTAINERS = name_set(
    "program list pipeline subshell compound_statement negated_command if_statement "
    "elif_clause else_clause while_statement for_statement do_group case_statement "
    "case_item"
)
# Tokens and leaves that carry no command.
_IGNORED = name_set(
    "comment && || ; ;; ;& ;;& & | |& ( ) { } ! if then fi elif else while until "
    "for select in do done case esac \n"
)
_STATEMENTS = _CONTAINERS | {
    "command",
    "redirected_statement",
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "test_command",
    "function_definition",
    "c_style_for_statement",
    "ERROR",
}
_WORD_TYPES = name_set(
    "word string raw_string ansi_c_string translated_string concatenation number "
    "simple_expansion expansion command_substitution process_substitution "
    "arithmetic_expansion brace_expression"
)


_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# In `$((...))`, anything but numbers and operators may name code ('a[$(cmd)]', x).
_ARITH_UNKNOWN = name_set(
    "variable_name simple_expansion expansion subscript raw_string string word "
    "ansi_c_string concatenation translated_string"
)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `${!name[@]}`, `${!name[*]}` (an array's keys), `${!prefix*}`, `${!prefix@}` (names):
# listings, not indirection.
_NAME_LISTING = re.compile(r"\$\{![A-Za-z_][A-Za-z0-9_]*(\[[@*]\]|[@*])\}")
_STATIC_INDEX = re.compile(r"[0-9]+|@|\*")
# A literal `[...` followed by something bash expands inside an array subscript.
_SUBSCRIPT_CODE = re.compile(r"\[[^\]]*?(\$[({\[]|`)")


class _Walker:
    """Walks a syntax tree, collecting simple commands and reasons for doubt."""

    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.reasons: list[str] = []
        self.redirects: list[Redirect] = []
        self.cd_targets: list[str | None] = []
        self.shadows: list[SimpleCommand] = []
        self._src = b""
        # Env prefixes of a wrapper whose script is being parsed (`X=1 bash -c '...'`):
        # the commands inside inherit them.
        self._inherited: tuple[tuple[str, str], ...] = ()

    # ---------------------------------------------------------------- scripts

    def parse_script(
        self,
        script: str,
        *,
        depth: int,
        layers: tuple[tuple[str, ...], ...],
        wrappers: tuple[str, ...],
        env: tuple[tuple[str, str], ...] = (),
    ) -> None:
        if depth > MAX_DEPTH:
            self.reasons.append("commands nested too deeply to follow")
            return
        data = script.encode("utf-8", "surrogateescape")
        safe = _scanner_safe(script)
        if safe is not None:
            self.reasons.append(
                "a `{` is followed by a character the bash grammar's scanner cannot read"
            )
        tree = _parser().parse(data if safe is None else safe.encode("utf-8", "surrogateescape"))
        saved, saved_env = self._src, self._inherited
        self._src = data
        self._inherited = (*saved_env, *env)
        try:
            root = tree.root_node
            if root.has_error:
                self.reasons.append(_syntax_error_reason(root))
            self._statement(root, depth, layers, wrappers)
            if _MAY_HOLD_CODE.search(data):
                self._unseen_code(root, depth)
        finally:
            self._src, self._inherited = saved, saved_env

    def _text(self, node: Node) -> str:
        return self._src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    # ---------------------------------------------------------------- statements

    def _statement(
        self,
        node: Node,
        depth: int,
        layers: tuple[tuple[str, ...], ...],
        wrappers: tuple[str, ...],
        extra_redirects: Sequence[Redirect] = (),
    ) -> None:
        kind = node.type
        if kind in _IGNORED or (not node.is_named and kind not in _CONTAINERS):
            return
        if kind == "ERROR" or node.is_missing:
            # Walk into it anyway: deny rules must still see what can be seen.
            for child in node.children:
                if child.type in _STATEMENTS:
                    self._statement(child, depth, layers, wrappers)
                else:
                    self._substitutions(child, depth)
            return
        if kind in _CONTAINERS:
            if kind in ("while_statement", "for_statement") and node.children:
                first = node.children[0].type
                if first == "select":
                    self.reasons.append("`select` loops are not supported")
            if kind == "compound_statement" and node.children and node.children[0].type == "((":
                self._arithmetic_command(node, depth)
                return
            words_here = kind in ("for_statement", "case_statement", "case_item")
            if kind == "for_statement":
                self._for_values(node, depth)
                self._loop_variable(node)
            if kind == "case_statement" or kind == "case_item":
                self._case_words(node, depth)
            for child in node.children:
                if child.type in _WORD_TYPES or child.type in ("variable_name", "extglob_pattern"):
                    if not words_here:
                        # A word where only statements belong: something this module
                        # does not know how bash reads.
                        self.reasons.append(f"unsupported shell syntax ({child.type} in {kind})")
                        self._substitutions(child, depth)
                    continue  # for/case words were walked above
                self._statement(child, depth, layers, wrappers)
            return
        if kind == "redirected_statement":
            self._redirected(node, depth, layers, wrappers)
            return
        if kind == "command":
            self._command(node, depth, layers, wrappers, extra_redirects)
            return
        if kind == "variable_assignment":
            self._standalone_assignments([node], depth)
            return
        if kind == "variable_assignments":
            self._standalone_assignments(
                [c for c in node.children if c.type == "variable_assignment"], depth
            )
            return
        if kind in ("declaration_command", "unset_command"):
            self._declaration(node, depth)
            return
        if kind == "test_command":
            self._test_command(node, depth)
            return
        if kind == "function_definition":
            self.reasons.append(
                "it defines a shell function, which can change what later commands do"
            )
            for child in node.children:
                if child.type not in ("word", "function", "(", ")"):
                    self._statement(child, depth, layers, wrappers)
            return
        if kind == "c_style_for_statement":
            self.reasons.append("C-style `for` loops evaluate arithmetic, which is not analysed")
            for child in node.children:
                self._statement(child, depth, layers, wrappers)
            return
        if kind in _WORD_TYPES:
            # A word where a statement was expected (e.g. inside an ERROR node).
            self._word(node, depth)
            return
        self.reasons.append(f"unsupported shell syntax ({kind})")
        for child in node.children:
            self._statement(child, depth, layers, wrappers)

    def _arithmetic_command(self, node: Node, depth: int) -> None:
        """``(( ... ))``: arithmetic, where a variable's value is evaluated too (and an
        array subscript in it runs the command inside): only numbers are known."""
        self._substitutions(node, depth)
        inner = [c for c in node.children if c.type not in ("((", "))")]
        if any(
            n.type in _ARITH_UNKNOWN or n.type in ("command_substitution", "ERROR")
            for c in inner
            for n in (c, *_descendants(c))
        ):
            self.reasons.append(
                f"the arithmetic command `{_clip(self._text(node))}` evaluates variables, "
                "which can run code"
            )

    def _for_values(self, node: Node, depth: int) -> None:
        for child in node.children:
            if child.type in _WORD_TYPES:
                self._word(child, depth)

    def _loop_variable(self, node: Node) -> None:
        """``for NAME in ...``: each round assigns NAME, as ``NAME=value`` would (``for
        HOME in src`` re-points what ``git`` reads as the global config)."""
        name = next((c for c in node.children if c.type == "variable_name"), None)
        if name is None:
            return
        values = " ".join(self._text(c) for c in node.children if c.type in _WORD_TYPES)
        self._record_assignment(self._text(name), values, f"for {self._text(name)} in …")

    def _case_words(self, node: Node, depth: int) -> None:
        for child in node.children:
            if child.type in _WORD_TYPES:
                self._word(child, depth)

    def _redirected(
        self,
        node: Node,
        depth: int,
        layers: tuple[tuple[str, ...], ...],
        wrappers: tuple[str, ...],
    ) -> None:
        body: Node | None = None
        redirects: list[Redirect] = []
        trailing: list[Node] = []
        for child in node.children:
            if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                redirects.extend(self._redirect(child, depth, trailing))
            elif body is None and child.is_named:
                body = child
            elif child.is_named:
                trailing.append(child)
        self.redirects.extend(redirects)
        if body is not None:
            if body.type == "command":
                starts = frozenset(c.start_byte for c in node.children if c.type in _REDIRECTS)
                self._command(body, depth, layers, wrappers, redirects, starts)
            else:
                self._statement(body, depth, layers, wrappers)
        elif redirects:
            # `> file` alone truncates the file: an empty command with redirections.
            self.commands.append(
                SimpleCommand(argv=(), text=self._text(node), redirects=tuple(redirects))
            )
        for extra in trailing:
            self._statement(extra, depth, layers, wrappers)

    def _redirect(self, node: Node, depth: int, trailing: list[Node]) -> list[Redirect]:
        kind = node.type
        if kind == "heredoc_redirect":
            return self._heredoc(node, depth, trailing)
        if kind == "herestring_redirect":
            for child in node.children:
                if child.type in _WORD_TYPES:
                    self._word(child, depth)
            return [Redirect("<<<", "", "herestring")]
        fd: int | None = None
        op = ""
        dest: Node | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                try:
                    fd = int(self._text(child))
                except ValueError:
                    fd = None
            elif not child.is_named:
                op += child.type
            elif child.type in _WORD_TYPES and dest is None:
                dest = child
            elif child.type == "ERROR":
                self.reasons.append(f"cannot parse the redirection {self._text(node)!r}")
            else:
                trailing.append(child)
        if op in (">&-", "<&-"):
            return [Redirect(op, "-", "dup", fd)]
        if dest is None:
            self.reasons.append(f"cannot parse the redirection {self._text(node)!r}")
            return []
        if dest.type == "process_substitution":
            self._word(dest, depth)
            return [Redirect(op, self._text(dest), "dup", fd)]
        word = self._word(dest, depth)
        if op in (">&", "<&") and (word.value.isdigit() or word.value == "-") and not word.dynamic:
            return [Redirect(op, word.value, "dup", fd)]
        if op in (">", ">|", "&>", ">&"):
            rkind: RedirectKind = "write"
        elif op in (">>", "&>>"):
            rkind = "append"
        elif op == "<":
            rkind = "read"
        elif op == "<>":
            rkind = "readwrite"
        elif op == "<&":
            rkind = "read"
        else:
            self.reasons.append(f"unknown redirection operator {op!r}")
            rkind = "readwrite"
        if word.dynamic and rkind in ("write", "append", "readwrite"):
            self.reasons.append(f"it writes to a file named only at run time ({word.source})")
        return [Redirect(op, word.value, rkind, fd, word.dynamic)]

    def _heredoc(self, node: Node, depth: int, trailing: list[Node]) -> list[Redirect]:
        out: list[Redirect] = []
        found = _heredoc_delimiter(node, self._src)
        quoted = found is not None and found[1]
        self._heredoc_extent(node, found)
        for child in node.children:
            kind = child.type
            if kind == "heredoc_start":
                continue
            elif kind == "heredoc_body":
                if not quoted:
                    # An unquoted body is expanded: `$(...)` in it runs.
                    for part in child.children:
                        if part.type in _WORD_TYPES:
                            self._word(part, depth)
                        elif part.type not in ("heredoc_content",):
                            self._statement(part, depth, (), ())
            elif kind in ("heredoc_end", "heredoc_content") or not child.is_named:
                continue
            elif kind in ("file_redirect", "herestring_redirect"):
                out.extend(self._redirect(child, depth, trailing))
            else:
                # tree-sitter puts what follows `<<EOF` on the same line here (`| sh`, `&& x`).
                trailing.append(child)
        out.append(Redirect("<<", "", "heredoc"))
        return out

    def _heredoc_extent(self, node: Node, found: tuple[str, bool] | None) -> None:
        """A heredoc must end where bash ends it: bash joins an unquoted body's
        continued lines before comparing them with the delimiter (``EO\\⏎F`` ends
        ``<<EOF``), tree-sitter does not. Where the two disagree, what bash runs after
        the heredoc is not what was parsed."""
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        if found is None or start is None or end is None:
            return
        delimiter, quoted = found
        strip = any(c.type == "<<-" for c in node.children)
        bash_end = _bash_heredoc_end(
            self._src, start.end_byte, delimiter, quoted=quoted, strip_tabs=strip
        )
        gap = self._src[bash_end : end.start_byte] if bash_end is not None else b"x"
        if bash_end != end.start_byte and not (strip and gap.strip(b"\t") == b""):
            self.reasons.append(
                f"bash and the shell parser disagree where the heredoc ending in {delimiter!r} "
                "ends (bash joins lines continued by a backslash first)"
            )

    # ---------------------------------------------------------------- commands

    def _command(
        self,
        node: Node,
        depth: int,
        layers: tuple[tuple[str, ...], ...],
        wrappers: tuple[str, ...],
        extra_redirects: Sequence[Redirect] = (),
        redirect_starts: frozenset[int] = frozenset(),
    ) -> None:
        env: list[tuple[str, str]] = list(self._inherited)
        words: list[_Word] = []
        redirects: list[Redirect] = list(extra_redirects)
        trailing: list[Node] = []
        starts = redirect_starts | {c.start_byte for c in node.children if c.type in _REDIRECTS}
        for child in node.children:
            kind = child.type
            if kind in ("word", "concatenation") and child.end_byte in starts:
                fd_var = _FD_VARIABLE.fullmatch(self._text(child))
                if fd_var is not None:
                    # `{NAME}>file`: bash opens a new fd and assigns its number to NAME
                    # (no argument of the command): `echo {PATH}>/dev/null` sets PATH.
                    if fd_var.group(2):
                        self.reasons.append(
                            f"`{self._text(child)}` names an array element, whose subscript "
                            "bash evaluates (which can run code)"
                        )
                    self._substitutions(child, depth)
                    name = fd_var.group(1)
                    self._record_assignment(name, "", f"{self._text(child)}> → {name}")
                    continue
            if kind == "variable_assignment":
                name, value = self._assignment(child, depth)
                env.append((name, value))
            elif kind == "command_name":
                inner = child.children[0] if child.children else child
                words.append(self._word(inner, depth))
            elif kind in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                got = self._redirect(child, depth, trailing)
                redirects.extend(got)
                self.redirects.extend(got)
            elif kind in _WORD_TYPES:
                words.append(self._word(child, depth))
            elif kind == "comment" or not child.is_named:
                if child.type == "$":
                    self.reasons.append('`$"..."` strings are not supported')
                continue
            else:
                self.reasons.append(f"unsupported shell syntax in a command ({kind})")
                self._statement(child, depth, layers, wrappers)
        for extra in trailing:
            self._statement(extra, depth, layers, wrappers)
        self._emit(words, env, redirects, self._text(node), depth, layers, wrappers)

    def _emit(
        self,
        words: list[_Word],
        env: list[tuple[str, str]],
        redirects: list[Redirect],
        text: str,
        depth: int,
        layers: tuple[tuple[str, ...], ...],
        wrappers: tuple[str, ...],
        open_args: bool = False,
    ) -> None:
        """Record one simple command, looking through wrappers to what they run."""
        argv = tuple(w.value for w in words)
        dynamic = frozenset(i for i, w in enumerate(words) if w.dynamic)
        layers = (*layers, argv)
        if words and words[0].dynamic:
            self.reasons.append(f"the command name is only known at run time ({words[0].source})")
        cmd = SimpleCommand(
            argv=argv,
            text=text,
            env=tuple(env),
            redirects=tuple(redirects),
            dynamic=dynamic,
            layers=layers,
            wrappers=wrappers,
            open_args=open_args,
            assignment_only=not words and bool(env) and not redirects,
        )
        if not words or words[0].dynamic:
            self.commands.append(cmd)
            return
        name = words[0].value
        if name in ("cd", "pushd"):
            target = words[1] if len(words) > 1 else None
            if target is None:
                self.cd_targets.append("~" if name == "cd" else None)
            elif target.dynamic or target.value.startswith("-"):
                self.cd_targets.append(None)
            else:
                self.cd_targets.append(target.value)
        elif name == "popd":
            self.cd_targets.append(None)
        elif name == "alias" and any(w.dynamic or "=" in w.value for w in words[1:]):
            self.reasons.append("it defines an alias, which can change what later commands do")
        self._variable_effects(words)
        self._runs_programs(words, env, depth, wrappers)
        if depth > MAX_DEPTH:
            self.reasons.append("commands nested too deeply to follow")
            self.commands.append(cmd)
            return
        inner = _look_through(self, words, depth)
        if inner is None:
            self.commands.append(cmd)
            return
        if inner.kind == "shadow":
            # The program runs a command somewhere in its words, where exactly is not
            # known: it stays the command; each guess is a shadow for deny and ask rules.
            self.commands.append(cmd)
            self._shadows(words, inner, depth)
            return
        if inner.kind == "script":
            if inner.script is None:
                # Nothing to look into: the wrapper stays a command (deny rules naming it apply).
                self.reasons.append(inner.reason or f"`{inner.label}` runs a script not known")
                self.commands.append(cmd)
                return
            self.parse_script(
                inner.script,
                depth=depth + 1,
                layers=layers,
                wrappers=(*wrappers, inner.label),
                env=tuple(env),
            )
            return
        if inner.kind == "unknown":
            self.reasons.append(inner.reason)
            self.commands.append(cmd)
            return
        if inner.kind == "exec":
            # `find ... -exec CMD {} ;`: find itself, and CMD as a command of its own.
            self.commands.append(cmd)
            for sub in inner.subcommands:
                self._emit(sub, list(env), [], text, depth + 1, (), (*wrappers, inner.label))
            return
        # A wrapper running a command with its own words (timeout 5 rm x → rm x).
        self._emit(
            inner.words,
            [*env, *inner.env],
            redirects,
            text,
            depth + 1,
            layers,
            (*wrappers, inner.label),
            open_args or inner.open_args,
        )

    def _shadows(self, words: list[_Word], inner: _Inner, depth: int) -> None:
        """Every command ``words[0]`` may run: each later word that is not an option
        starts one (``chroot / rm x`` → ``/ rm x``, ``rm x``), and a word that is a
        whole script (``su -c 'rm x'``) is parsed as one."""
        if depth + 1 > MAX_DEPTH:
            return
        guess = _Walker()
        guess._inherited = self._inherited
        for i in range(1, len(words)):
            w = words[i]
            if w.dynamic or w.value.startswith("-") or not w.value.strip():
                continue
            if _SCRIPT_LIKE.search(w.value):
                guess.parse_script(w.value, depth=depth + 1, layers=(), wrappers=(inner.label,))
            else:
                guess._emit(words[i:], [], [], w.value, depth + 1, (), (inner.label,))
        self.shadows.extend([*guess.commands, *guess.shadows])

    def _runs_programs(
        self,
        words: list[_Word],
        env: list[tuple[str, str]],
        depth: int,
        wrappers: tuple[str, ...],
    ) -> None:
        """Options that make a program run another one (``tar --to-command='rm x'``,
        ``sort --compress-program=sh``, ``rsync -e CMD``): the command in the value is a
        command of the line, judged like any other (as ``find -exec``'s is). A script
        language's own ways of running commands (``awk``'s ``system()``, ``sed``'s
        ``e``) cannot be followed: the line is then not fully understood."""
        base = os.path.basename(words[0].value)
        found: list[tuple[str, _Word | None, str]] = [
            (label, value, "") for label, value in _program_options(base, words)
        ]
        if base == "git":
            found += [(label, value, "") for label, value in _git_program_config(words)]
            self.reasons.extend(_git_config_problems(words))
        # Env prefixes whose value is a command the program runs (`GIT_SSH_COMMAND='...'`).
        # Only the command's own prefixes: inherited ones were judged where they were set.
        inherited = list(self._inherited)
        own_env = env[len(inherited) :] if env[: len(inherited)] == inherited else env
        for name, value in own_env:
            if name in COMMAND_ENV_VARS and value.strip():
                found.append((f"with {name}", _Word(value, False, value), name))
        for label, value, variable in found:
            if value is None:
                self.reasons.append(f"`{base} {label}` runs a program named only at run time")
                continue
            self.parse_script(
                value.value,
                depth=depth + 1,
                layers=(),
                wrappers=(*wrappers, f"{base} {label}"),
                env=tuple(e for e in env if e[0] != variable),
            )
        if base in _AWKS or (base == "busybox" and len(words) > 1 and words[1].value == "awk"):
            problem = _awk_problem(words[1:] if base != "busybox" else words[2:])
            if problem:
                self.reasons.append(problem)
        elif base in ("sed", "gsed"):
            problem = _sed_problem(words)
            if problem:
                self.reasons.append(problem)

    def _variable_effects(self, words: list[_Word]) -> None:
        """Builtins that set variables or look up names held in values.

        ``printf -v NAME``, ``read NAME``, ``mapfile NAME``, ``getopts OPTS NAME``,
        ``wait -p NAME`` set NAME as an assignment would (``printf -v PATH ...`` re-points every later
        command): each is recorded as a plain assignment, judged like ``NAME=...``.
        A NAME, or the operand of ``test -v``, only known at run time can be an array
        subscript ('a[$(cmd)]'), which bash evaluates — running the command.
        """
        base = os.path.basename(words[0].value)
        names: list[_Word] = []
        if base in ("test", "["):
            for i, w in enumerate(words[1:-1], 1):
                if w.value in ("-v", "-R") and not w.dynamic and words[i + 1].dynamic:
                    self.reasons.append(
                        f"`{base} {w.value} {words[i + 1].source}` evaluates a name only known "
                        "at run time, which can run code"
                    )
            return
        if base == "wait":
            names.extend(_option_value(words, "p", flags="fn"))
        elif base == "printf":
            i = 1
            while i < len(words) and words[i].value.startswith("-") and not words[i].dynamic:
                if words[i].value == "--":
                    break
                if words[i].value == "-v" and i + 1 < len(words):
                    names.append(words[i + 1])
                    i += 2
                    continue
                i += 1
        elif base in ("read", "mapfile", "readarray", "getopts"):
            takes_value = {
                "read": "adeinNptu",
                "mapfile": "dnOsuCc",
                "readarray": "dnOsuCc",
                "getopts": "",
            }[base]
            positional: list[_Word] = []
            array_named = False
            i = 1
            options_done = False
            while i < len(words):
                w = words[i]
                v = w.value
                if not options_done and not w.dynamic and v == "--":
                    options_done = True
                elif not options_done and not w.dynamic and v.startswith("-") and len(v) > 1:
                    letter = v[1]
                    if base in ("mapfile", "readarray") and "C" in v[1:]:
                        self.reasons.append(f"`{base} -C` runs a callback")
                    if letter in takes_value:
                        value = words[i + 1] if len(v) == 2 and i + 1 < len(words) else None
                        if letter == "a" and value is not None:
                            names.append(value)  # `read -a NAME`
                            array_named = True
                        i += 2 if len(v) == 2 else 1
                        continue
                else:
                    positional.append(w)
                i += 1
            if base == "getopts":
                names.extend(positional[1:2])
            elif base == "read":
                if positional or not array_named:
                    names.extend(positional or [_Word("REPLY", False, "REPLY")])
            else:
                names.extend(positional[:1] or [_Word("MAPFILE", False, "MAPFILE")])
        for w in names:
            if w.value in PROMPT_VARS:
                self.reasons.append(f"`{base}` sets {w.value}, which bash expands as code")
                continue
            if w.dynamic or not _NAME.fullmatch(w.value):
                self.reasons.append(
                    f"`{base}` sets a variable named {w.source!r}, which bash can evaluate as code"
                )
                continue
            self._record_assignment(w.value, "", f"{base} → {w.value}")

    def _record_assignment(self, name: str, value: str, text: str) -> None:
        """A variable set by other means than ``NAME=value`` (a loop, ``${NAME:=v}``,
        ``read``, ``wait -p``, ``{NAME}>file``): judged as that assignment would be."""
        self._prompt_check(name, value)
        self.commands.append(
            SimpleCommand(argv=(), text=text, env=((name, value),), assignment_only=True)
        )

    def _unseen_code(self, root: Node, depth: int) -> None:
        """Text of the tree the walk did not descend into that bash would still expand:
        a leaf (tree-sitter reads ``${x#$(cmd)}``'s pattern and ``${x-`cmd`}``'s word as
        one leaf each) or the text between children (an unquoted heredoc's backticks).
        Any ``$(``, backtick, ``${``, ``$[``, ``<(`` or ``>(`` there is code bash runs and
        this module did not see: the line is not fully understood, and the text is parsed
        on its own so that deny and ask rules see what it runs (as shadows)."""
        src = self._src
        found: list[bytes] = []
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _LITERAL_NODES:
                continue
            if (
                kind == "command_substitution"
                and src[node.start_byte : node.start_byte + 1] == b"`"
            ):
                continue  # parsed again as bash reads it (_backticks)
            if kind == "heredoc_redirect" and _quoted_heredoc(node, src):
                continue
            children = node.children
            if not children:
                if node.is_named and _code_opener(src[node.start_byte : node.end_byte]):
                    found.append(src[node.start_byte : node.end_byte])
                continue
            pos = node.start_byte
            for child in children:
                if child.start_byte > pos and _code_opener(src[pos : child.start_byte]):
                    found.append(src[pos : child.start_byte])
                pos = max(pos, child.end_byte)
            if node.end_byte > pos and _code_opener(src[pos : node.end_byte]):
                found.append(src[pos : node.end_byte])
            stack.extend(children)
        for raw in found:
            text = raw.decode("utf-8", "surrogateescape")
            self.reasons.append(
                f"{_clip(text)!r} holds a substitution the shell parser does not see into"
            )
            if depth + 1 > MAX_DEPTH:
                continue
            # Read as a script and as the inside of a double-quoted word (a pattern, a
            # heredoc's text): whichever finds the substitutions.
            quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
            for script in (text, f": {quoted}"):
                guess = _Walker()
                guess._inherited = self._inherited
                guess.parse_script(script, depth=depth + 1, layers=(), wrappers=())
                self.shadows.extend([*guess.commands, *guess.shadows])

    def _assignment(self, node: Node, depth: int) -> tuple[str, str]:
        name = ""
        value_parts: list[str] = []
        seen_eq = False
        for child in node.children:
            if child.type == "variable_name" and not seen_eq:
                name = self._text(child)
            elif child.type == "subscript" and not seen_eq:
                name = self._text(child)
                self.reasons.append("array subscripts are evaluated as arithmetic")
                for part in child.children:
                    if part.type in _WORD_TYPES:
                        self._word(part, depth)
            elif child.type in ("=", "+="):
                seen_eq = True
            elif child.type in _WORD_TYPES:
                value_parts.append(self._word(child, depth).value)
            elif child.type == "array":
                for part in child.children:
                    if part.type in _WORD_TYPES:
                        value_parts.append(self._word(part, depth).value)
            elif child.is_named:
                self.reasons.append(f"unsupported assignment syntax ({child.type})")
        value = "".join(value_parts)
        self._prompt_check(name, value)
        return name, value

    def _prompt_check(self, name: str, value: str) -> None:
        if _prompt_code(name, value):
            self.reasons.append(_PROMPT_REASON.format(name=name))

    def _standalone_assignments(self, nodes: Iterable[Node], depth: int) -> None:
        env = [self._assignment(n, depth) for n in nodes]
        text = " ".join(f"{k}={v}" for k, v in env)
        self.commands.append(
            SimpleCommand(argv=(), text=text, env=tuple(env), assignment_only=True)
        )

    def _declaration(self, node: Node, depth: int) -> None:
        words: list[_Word] = []
        env: list[tuple[str, str]] = []
        for child in node.children:
            if not child.is_named:
                words.append(_Word(child.type, False, child.type))
            elif child.type == "variable_assignment":
                name, value = self._assignment(child, depth)
                env.append((name, value))
                words.append(_Word(f"{name}={value}", False, self._text(child)))
            elif child.type == "variable_name":
                name = self._text(child)
                words.append(_Word(name, False, name))
                if not _declares_functions_or_prints(words):
                    env.append((name, ""))
            elif child.type in _WORD_TYPES:
                word = self._word(child, depth)
                words.append(word)
                self._declared_word(
                    word, env, words[0].value if words else "", _declares_functions_or_prints(words)
                )
            else:
                self.reasons.append(f"unsupported declaration syntax ({child.type})")
        argv = tuple(w.value for w in words)
        dynamic = frozenset(i for i, w in enumerate(words) if w.dynamic)
        self.commands.append(
            SimpleCommand(
                argv=argv,
                text=self._text(node),
                env=tuple(env),
                dynamic=dynamic,
                layers=(argv,),
                assignment_only=True,
            )
        )

    def _declared_word(
        self, word: _Word, env: list[tuple[str, str]], builtin: str, printing: bool = False
    ) -> None:
        """A word operand of ``export``/``declare``/``local``...: quoted or not, bash reads
        it as ``NAME=value`` or ``NAME`` (``export "PATH=/tmp/x"`` sets PATH as
        ``PATH=/tmp/x`` would). A name only known at run time can be PATH, or an array
        subscript bash evaluates (``declare "$x=1"`` with x='a[$(cmd)]' runs cmd)."""
        if not word.dynamic and word.value[:1] in ("-", "+"):
            return  # an option
        name, eq, value = word.value.partition("=")
        if not _NAME.fullmatch(name):
            self.reasons.append(
                f"`{builtin} {_clip(word.source)}` names a variable only known at run time, "
                "which can re-point later commands or run code"
            )
        elif eq:
            self._prompt_check(name, value)
            env.append((name, value))
        elif not printing:
            # `export NAME`: NAME (set by `for NAME in`, `${NAME:=}`, `read NAME`...) now
            # reaches every program started later, as `export NAME=value` would.
            env.append((name, ""))

    def _test_command(self, node: Node, depth: int) -> None:
        """``[[ ... ]]``: a read-only test; words inside may hold substitutions."""
        arithmetic = False
        self._substitutions(node, depth)
        inside = self._text(node).strip()
        inside = inside[2:-2] if inside.startswith("[[") and inside.endswith("]]") else inside
        unquoted = re.sub(r"[\\'\"]", "", inside)
        if _SUBSCRIPT_CODE.search(unquoted):
            self.reasons.append(
                "a word in `[[ ... ]]` can be evaluated as an array subscript (`-v`, "
                "arithmetic), which runs the command inside it"
            )
        for sub in _descendants(node):
            if sub.type == "unary_expression":
                op = sub.child_by_field_name("operator")
                operands = [c for c in sub.children if c.is_named and c != op]
                if (
                    op is not None
                    and self._text(op) in ("-v", "-R")
                    and any(
                        c.type not in ("word", "raw_string") or "$" in self._text(c)
                        for c in operands
                    )
                ):
                    self.reasons.append(
                        f"`{_clip(self._text(sub))}` tests a name only known at run time, "
                        "which can run code"
                    )
            if sub.type == "test_operator" and self._text(sub) in _ARITH_TEST_OPS:
                arithmetic = True
            if sub.type == "binary_expression" and any(
                op.type == "test_operator" and self._text(op) in _ARITH_TEST_OPS
                for op in sub.children
            ):
                # `[[ x -eq 1 ]]` evaluates `x` (a name, a quoted 'a[$(cmd)]') as
                # arithmetic: array subscripts in it run commands. Only numbers are known.
                for side in (sub.child_by_field_name("left"), sub.child_by_field_name("right")):
                    if side is not None and not _INTEGER.fullmatch(self._text(side)):
                        self.reasons.append(
                            f"`[[ ... {self._text(side)} -eq ... ]]` evaluates "
                            f"{self._text(side)!r} as arithmetic, which can run code"
                        )
                        break
        if arithmetic and any(
            s.type in ("simple_expansion", "expansion", "variable_name") for s in _descendants(node)
        ):
            self.reasons.append(
                "`[[ ... -eq ... ]]` evaluates variables as arithmetic, which can run code"
            )
        self.commands.append(SimpleCommand(argv=("[[",), text=self._text(node), layers=(("[[",),)))

    # ---------------------------------------------------------------- words

    def _word(self, node: Node, depth: int) -> _Word:
        """Quote removal for one word; substitutions inside are walked as commands."""
        word = self._word_inner(node, depth)
        if not word.dynamic and _SUBSCRIPT_CODE.search(word.value):
            # Bash evaluates names like 'a[$(cmd)]' as array subscripts in `test -v`,
            # `printf -v`, `read`, `declare`, arithmetic...: the `$(cmd)` runs.
            self.reasons.append(
                f"{word.source!r} can be evaluated as an array subscript, which runs the "
                "command inside it"
            )
        return word

    def _word_inner(self, node: Node, depth: int) -> _Word:
        kind = node.type
        source = self._text(node)
        if kind == "word":
            value, dynamic = _unquoted_word(source)
            return _Word(value, dynamic, source)
        if kind == "number":
            return _Word(source, False, source)
        if kind == "raw_string":
            return _Word(source[1:-1], False, source)
        if kind == "ansi_c_string":
            return _Word(_ansi_c(source[2:-1]), False, source)
        if kind in ("string", "translated_string"):
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type == "string_content":
                    parts.append(_double_quoted(self._text(child)))
                elif child.type in ('"', "$"):
                    continue
                elif child.type in _WORD_TYPES:
                    sub = self._word(child, depth)
                    parts.append(sub.source)
                    dynamic = True
                else:
                    self.reasons.append(f"unsupported syntax in a string ({child.type})")
                    dynamic = True
            return _Word("".join(parts), dynamic, source)
        if kind == "concatenation":
            parts = []
            dynamic = False
            children = node.children
            unquoted = "".join(self._text(c) for c in children if c.type == "word")
            brace = "{" in unquoted and "}" in unquoted and ("," in unquoted or ".." in unquoted)
            for child in children:
                sub = self._word(child, depth) if child.is_named else None
                if sub is None:
                    parts.append(self._text(child))
                    continue
                parts.append(sub.value if not sub.dynamic else sub.source)
                dynamic = dynamic or sub.dynamic
            if brace:
                dynamic = True
            return _Word("".join(parts), dynamic, source)
        if kind == "command_substitution" and source.startswith("`"):
            self._backticks(node, source, depth)
            return _Word(source, True, source)
        if kind in ("command_substitution", "process_substitution"):
            for child in node.children:
                self._statement(child, depth, (), ())
            return _Word(source, True, source)
        if kind == "simple_expansion":
            return _Word(source, True, source)
        if kind == "expansion":
            if any(c.type == "@" for c in node.children) and not _NAME_LISTING.fullmatch(source):
                self.reasons.append(f"`{source}` transforms a value in ways not analysed")
            self._expansion_checks(node, source)
            for sub in _descendants(node):
                index = sub.child_by_field_name("index") if sub.type == "subscript" else None
                if index is not None and not _STATIC_INDEX.fullmatch(self._text(index)):
                    self.reasons.append(
                        f"the array subscript in `{source}` is evaluated as arithmetic, "
                        "which can run code"
                    )
            self._substitutions(node, depth)
            return _Word(source, True, source)
        if kind == "arithmetic_expansion":
            self._substitutions(node, depth)
            if any(s.type in _ARITH_UNKNOWN for s in _descendants(node)):
                self.reasons.append(
                    f"arithmetic over variables ({source}) can run code and is not analysed"
                )
            return _Word(source, True, source)
        if kind == "brace_expression":
            return _Word(source, True, source)
        self.reasons.append(f"unsupported word syntax ({kind})")
        self._substitutions(node, depth)
        return _Word(source, True, source)

    def _backticks(self, node: Node, source: str, depth: int) -> None:
        """```...```: bash first undoes the escapes ``\\` `` ``\\\\`` ``\\$`` (and ``\\"`` inside
        double quotes) in the text between the backticks, then parses what is left as
        a script — so ``echo `echo \\`touch x\\``` runs ``touch x``. tree-sitter reads
        the escaped inner backticks as plain words; the text is parsed again here as
        bash would parse it."""
        if len(source) < 2 or not source.endswith("`"):
            self.reasons.append(f"an unterminated backtick substitution ({_clip(source)})")
            for child in node.children:
                self._statement(child, depth, (), ())
            return
        parent = node.parent
        in_quotes = parent is not None and parent.type in ("string", "translated_string")
        escapable = '`\\$"' if in_quotes else "`\\$"
        body = source[1:-1]
        out: list[str] = []
        i = 0
        while i < len(body):
            ch = body[i]
            if ch == "\\" and i + 1 < len(body) and body[i + 1] in escapable:
                out.append(body[i + 1])
                i += 2
                continue
            out.append(ch)
            i += 1
        self.parse_script("".join(out), depth=depth + 1, layers=(), wrappers=())

    def _expansion_checks(self, node: Node, source: str) -> None:
        """The parts of ``${...}`` where bash evaluates a value it only knows at run time."""
        children = node.children
        if len(children) > 1 and children[1].type == "!" and not _NAME_LISTING.fullmatch(source):
            # `${!x}` reads the variable *named by* x's value: a value like 'a[$(cmd)]'
            # is an array subscript, evaluated as arithmetic, and the command runs.
            self.reasons.append(
                f"the indirect expansion `{_clip(source)}` uses a name only known at run time, "
                "which can run code"
            )
        seen_name = False
        substring = False
        for child in children:
            if (
                child.type in ("variable_name", "subscript", "special_variable_name")
                and not seen_name
            ):
                seen_name = True
                continue
            if not seen_name:
                continue
            if child.type in (":=", "=") and not substring:
                # `${NAME:=value}` / `${NAME=value}` assign NAME when it is unset or empty.
                target = next(
                    (c for c in children if c.type in ("variable_name", "subscript")), None
                )
                if target is not None:
                    name = self._text(target).split("[", 1)[0]
                    operand = source[source.index(child.type, 1) + len(child.type) : -1]
                    self._record_assignment(name, operand, f"{_clip(source)} → {name}")
                continue
            if child.type == ":":
                substring = True  # `${x:offset:length}`: both are arithmetic
                continue
            if substring and child.type not in (":", "}", "number"):
                self.reasons.append(
                    f"the offsets in `{_clip(source)}` are arithmetic over values only known "
                    "at run time, which can run code"
                )
                break

    def _substitutions(self, node: Node, depth: int) -> None:
        """Walk the outermost `$(...)`, backticks and `<(...)` below ``node``."""
        stack = list(node.children)
        while stack:
            cur = stack.pop()
            if cur.type in ("command_substitution", "process_substitution"):
                self._word(cur, depth)
            else:
                stack.extend(cur.children)


_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# `{NAME}` right before a redirection operator: bash stores the new fd's number in NAME.
_FD_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(\[.*\])?\}", re.DOTALL)
# Text that may open a substitution (a fast test before walking the tree for unseen code).
_MAY_HOLD_CODE = re.compile(rb"`|\$[({\[]|[<>]\(")
# Leaves whose text bash takes literally.
_LITERAL_NODES = name_set("raw_string ansi_c_string comment heredoc_start heredoc_end")


def _code_opener(text: bytes) -> bool:
    """Whether ``text`` holds an unescaped backtick, ``$(``, ``${``, ``$[``, ``<(`` or
    ``>(`` (a backslash escapes the next character, as in words and heredoc bodies)."""
    if not _MAY_HOLD_CODE.search(text):
        return False
    i, n = 0, len(text)
    while i < n:
        c = text[i : i + 1]
        if c == b"\\":
            i += 2
            continue
        if c == b"`":
            return True
        if c in (b"$", b"<", b">") and i + 1 < n:
            nxt = text[i + 1 : i + 2]
            if nxt == b"(" or (c == b"$" and nxt in (b"{", b"[")):
                return True
        i += 1
    return False


def _heredoc_delimiter(node: Node, src: bytes) -> tuple[str, bool] | None:
    """A heredoc redirection's delimiter after quote removal, and whether it was
    quoted (a quoted delimiter makes the body literal). None: no delimiter found."""
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    if start is None:
        return None
    raw = src[start.start_byte : start.end_byte].decode("utf-8", "surrogateescape")
    quoted = any(q in raw for q in ("'", '"', "\\"))
    out: list[str] = []
    i = 0
    quote = ""
    while i < len(raw):
        ch = raw[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(raw):
                i += 1
                out.append(raw[i])
            else:
                out.append(ch)
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "\\" and i + 1 < len(raw):
            i += 1
            out.append(raw[i])
        else:
            out.append(ch)
        i += 1
    return "".join(out), quoted


def _quoted_heredoc(node: Node, src: bytes) -> bool:
    found = _heredoc_delimiter(node, src)
    return found is not None and found[1]


def _bash_heredoc_end(
    src: bytes, after: int, delimiter: str, *, quoted: bool, strip_tabs: bool
) -> int | None:
    """Where bash finds the line ending a heredoc whose ``<<WORD`` ends at byte ``after``:
    the start of that line, or None when the input ends first. The body starts after
    the end of the command line; with an unquoted delimiter, a line ending in a
    backslash continues on the next before it is compared (``EO\\⏎F`` is ``EOF``)."""
    newline = src.find(b"\n", after)
    if newline < 0:
        return None
    pos = newline + 1
    want = delimiter.encode("utf-8", "surrogateescape")
    while pos <= len(src):
        start = pos
        line = b""
        while True:
            end = src.find(b"\n", pos)
            piece = src[pos:] if end < 0 else src[pos:end]
            pos = len(src) + 1 if end < 0 else end + 1
            backslashes = len(piece) - len(piece.rstrip(b"\\"))
            if not quoted and backslashes % 2 == 1 and end >= 0:
                line += piece[:-1]
                continue
            line += piece
            break
        if strip_tabs:
            line = line.lstrip(b"\t")
        if line == want:
            return start
        if pos > len(src):
            return None
    return None


def _declares_functions_or_prints(words: list[_Word]) -> bool:
    """``declare -p``/``-f``/``-F``, ``export -p``/``-f``, ``unset -f``: the names are
    printed or are functions, not variables set or exported."""
    return any(
        not w.dynamic and w.value[:1] in ("-", "+") and any(c in "pfF" for c in w.value[1:])
        for w in words[1:]
    )


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _descendants(node: Node) -> Iterable[Node]:
    stack = list(reversed(node.children))
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def _syntax_error_reason(root: Node) -> str:
    for sub in _descendants(root):
        if sub.type == "ERROR" or sub.is_missing:
            line, col = sub.start_point
            what = f"missing {sub.type!r}" if sub.is_missing else "a syntax error"
            return f"the shell parser found {what} at line {line + 1}, column {col + 1}"
    return "the shell parser found a syntax error"


# --------------------------------------------------------------------------- quote removal

_GLOB_CHARS = frozenset("*?[")


def _unquoted_word(text: str) -> tuple[str, bool]:
    """An unquoted word after backslash removal; dynamic when it globs or expands."""
    out: list[str] = []
    dynamic = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 < n:
                if text[i + 1] != "\n":
                    out.append(text[i + 1])
                i += 2
                continue
            i += 1
            continue
        if ch in _GLOB_CHARS or ch == "$" or ch == "`":
            dynamic = True
        out.append(ch)
        i += 1
    value = "".join(out)
    if text.startswith("~"):
        head = value.split("/", 1)[0]
        if head in ("~+", "~-"):
            dynamic = True
        else:
            expanded = os.path.expanduser(value)
            if expanded == value and head != "~":
                dynamic = True  # ~unknownuser
            value = expanded
    return value, dynamic


def _double_quoted(text: str) -> str:
    """Backslash removal inside double quotes: only before $ ` " \\ and newline."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    """Decode the body of ``$'...'`` as bash does."""
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i += 1 + len(m.group(0))
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
            else:
                out.append("\\x")
                i += 2
        elif nxt in "uU":
            width = 4 if nxt == "u" else 8
            m = re.match(rf"[0-9a-fA-F]{{1,{width}}}", body[i + 2 :])
            if m:
                try:
                    out.append(chr(int(m.group(0), 16)))
                except (ValueError, OverflowError):
                    out.append("\ufffd")
                i += 2 + len(m.group(0))
            else:
                out.append("\\" + nxt)
                i += 2
        elif nxt == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def quote_word(word: str) -> str:
    import shlex

    return shlex.quote(word) if word else "''"


# --------------------------------------------------------------------------- look-through

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox sh"})
ESCALATING_WRAPPERS = frozenset({"sudo", "doas", "run0", "pkexec"})


@dataclass(slots=True)
class _Inner:
    kind: Literal["words", "script", "exec", "unknown", "shadow"]
    label: str
    words: list[_Word] = field(default_factory=list)
    env: list[tuple[str, str]] = field(default_factory=list)
    script: str | None = None
    open_args: bool = False
    reason: str = ""
    subcommands: list[list[_Word]] = field(default_factory=list)


def _static(words: Sequence[_Word]) -> bool:
    return all(not w.dynamic for w in words)


def _option_value(words: list[_Word], letter: str, *, flags: str) -> list[_Word]:
    """The values of a builtin's short option ``letter`` (``wait -n -p NAME``, ``-npNAME``),
    read as bash's getopt reads them: options end at ``--`` or the first operand. A word
    only known at run time among the options may be the option itself: returned too."""
    out: list[_Word] = []
    i = 1
    while i < len(words):
        w = words[i]
        if w.dynamic:
            out.append(w)
            i += 1
            continue
        v = w.value
        if v == "--" or not v.startswith("-") or len(v) < 2:
            break
        for j, c in enumerate(v[1:], 1):
            if c == letter:
                rest = v[j + 1 :]
                if rest:
                    out.append(_Word(rest, False, w.source))
                elif i + 1 < len(words):
                    out.append(words[i + 1])
                    i += 1
                break
            if c not in flags:
                break
        i += 1
    return out


def _take_options(
    words: list[_Word],
    start: int,
    *,
    with_value: frozenset[str],
    flags: frozenset[str],
    long_with_value: frozenset[str] = frozenset(),
    long_flags: frozenset[str] = frozenset(),
) -> int | None:
    """Skip a wrapper's options; the index of its command, or None when unsure."""
    i = start
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return None
        v = w.value
        if v == "--":
            return i + 1
        if v.startswith("--"):
            name = v.split("=", 1)[0]
            if name in long_with_value:
                i += 1 if "=" in v else 2
                continue
            if name in long_flags:
                i += 1
                continue
            return None
        if v.startswith("-") and len(v) > 1:
            j = 1
            while j < len(v):
                c = v[j]
                if c in with_value:
                    i += 1 if j + 1 < len(v) else 2
                    break
                if c not in flags:
                    return None
                j += 1
            else:
                i += 1
            continue
        return i
    return i


def _look_through(walker: _Walker, words: list[_Word], depth: int) -> _Inner | None:
    """What a wrapper command runs, or None when ``words`` is not a wrapper."""
    name = words[0].value
    base = os.path.basename(name)
    rest = words[1:]
    if base in SHELLS:
        return _shell_script(words, base)
    if base == "trap":
        return _trap(rest)
    if base == "eval":
        if not rest:
            return None
        if not _static(rest):
            return _Inner("script", "eval", reason="`eval` runs text only known at run time")
        return _Inner("script", "eval", script=" ".join(w.value for w in rest))
    if base in ("nohup", "builtin"):
        return _Inner("words", base, words=rest) if rest else None
    if base == "exec":
        if not rest:
            return None
        i = _take_options(words, 1, with_value=frozenset("a"), flags=frozenset("cl"))
        if i is None:
            return _Inner("unknown", base, reason="`exec` with options not understood")
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base == "command":
        if any(w.value in ("-v", "-V") for w in rest[:1]):
            return None  # `command -v x` looks up x, runs nothing
        i = _take_options(words, 1, with_value=frozenset(), flags=frozenset("p"))
        if i is None:
            return _Inner("unknown", base, reason="`command` with options not understood")
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base == "time":
        i = _take_options(words, 1, with_value=frozenset(), flags=frozenset("p"))
        if i is None:
            return _Inner("unknown", base, reason="`time` with options not understood")
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base == "nice":
        i = _take_options(
            words,
            1,
            with_value=frozenset("n"),
            flags=frozenset("0123456789"),
            long_with_value=frozenset({"--adjustment"}),
        )
        if i is None:
            return _Inner("unknown", base, reason="`nice` with options not understood")
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base == "timeout":
        i = _take_options(
            words,
            1,
            with_value=frozenset("sk"),
            flags=frozenset("v"),
            long_with_value=frozenset({"--signal", "--kill-after"}),
            long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
        )
        if i is None or i >= len(words):
            return _Inner("unknown", base, reason="`timeout` with options not understood")
        # words[i] is the duration
        if i + 1 >= len(words):
            return None
        return _Inner("words", base, words=words[i + 1 :])
    if base == "stdbuf":
        i = _take_options(
            words,
            1,
            with_value=frozenset("ioe"),
            flags=frozenset(),
            long_with_value=frozenset({"--input", "--output", "--error"}),
        )
        if i is None:
            return _Inner("unknown", base, reason="`stdbuf` with options not understood")
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base == "env":
        return _env(words)
    if base == "xargs":
        return _xargs(words)
    if base in ESCALATING_WRAPPERS:
        return _sudo(words, base)
    if base == "watch":
        i = _take_options(
            words,
            1,
            with_value=frozenset("nq"),
            flags=frozenset("bcdegtpwxrC"),
            long_with_value=frozenset({"--interval", "--differences", "--equexit"}),
            long_flags=name_set(
                "--beep --color --no-color --errexit --exec --no-title --precise --chgexit "
                "--no-wrap"
            ),
        )
        if i is None or i >= len(words):
            return _Inner("unknown", base, reason="`watch` with options not understood")
        if not _static(words[i:]):
            return _Inner("script", base, reason="`watch` runs text only known at run time")
        return _Inner("script", base, script=" ".join(w.value for w in words[i:]))
    if base in ("find", "fd", "fdfind"):
        return _find_exec(words, base)
    if base in _SIMPLE_WRAPPERS:
        with_value, flags, positional = _SIMPLE_WRAPPERS[base]
        i = _take_options(words, 1, with_value=frozenset(with_value), flags=frozenset(flags))
        if i is None:
            return _Inner("unknown", base, reason=f"`{base}` with options not understood")
        i += positional  # taskset's mask, chrt's priority
        return _Inner("words", base, words=words[i:]) if i < len(words) else None
    if base in ("source", "."):
        return _Inner("script", base, reason=f"`{base}` runs a script file that is not analysed")
    if base in ("at", "batch"):
        return _Inner("script", base, reason=f"`{base}` reads the commands it runs from stdin")
    if base == "coproc":
        walker.reasons.append("`coproc` runs commands in ways this parser does not follow")
        return _Inner("words", base, words=rest) if rest and not rest[0].dynamic else None
    if base in OPAQUE_RUNNERS:
        return _Inner("shadow", base)
    if base in _EXEC_RUNNERS:
        return _exec_runner(words, base)
    if base == "git":
        return _git_alias(walker, words)
    if base == "busybox":
        # `busybox rm x` runs the applet rm.
        return _Inner("words", base, words=rest) if rest and not rest[0].dynamic else None
    if base == "flock":
        return _flock(walker, words)
    return None


# Programs that run a command given somewhere in their words, with options this
# module does not model: what they run is guessed (shadows, for deny and ask rules).
OPAQUE_RUNNERS = name_set(
    "unshare nsenter chroot firejail bwrap nsjail minijail0 systemd-run run0 runuser su sg "
    "strace ltrace valgrind gdb lldb perf script parallel tmux screen dtach abduco entr "
    "xvfb-run dbus-run-session dbus-launch fakeroot faketime proxychains proxychains4 "
    "torsocks tsocks numactl prlimit cgexec aa-exec setpriv capsh runcon chpst softlimit "
    "envdir setuidgid catchsegv rlwrap daemonize start-stop-daemon sandbox-exec caffeinate "
    "expect direnv mise asdf nix-shell with-contenv retry fish tcsh csh pwsh powershell nu "
    "elvish xonsh yash posh"
)
# Programs that run a command from PATH given after them (and their subcommand): the
# command is looked through when it follows directly (`npx prettier .`, `uv run pytest`).
_EXEC_RUNNERS: dict[str, tuple[str, ...]] = {
    "npx": (),
    "bunx": (),
    "pnpx": (),
    "uvx": (),
    "pipx": ("run",),
    "uv": ("run", "tool"),
    "poetry": ("run",),
    "pipenv": ("run",),
    "pdm": ("run",),
    "hatch": ("run",),
    "rye": ("run",),
    "conda": ("run",),
    "mamba": ("run",),
    "micromamba": ("run",),
    "pnpm": ("exec", "dlx"),
    "yarn": ("exec", "dlx"),
    "npm": ("exec",),
    "bun": ("x", "exec"),
    "bundle": ("exec",),
}
# A word that is a whole shell script rather than one word of a command.
_SCRIPT_LIKE = re.compile(r"[\s;&|<>()`$]")


def _exec_runner(words: list[_Word], base: str) -> _Inner | None:
    """``npx CMD ...``, ``uv run CMD ...``: CMD runs (from PATH, or a package). With
    options first, where the command starts is guessed (shadows)."""
    subs = _EXEC_RUNNERS[base]
    i = 1
    label = base
    if subs:
        if len(words) < 2 or words[1].dynamic or words[1].value not in subs:
            return None
        label = f"{base} {words[1].value}"
        i = 2
        if words[1].value == "tool":  # `uv tool run CMD`
            if len(words) < 3 or words[2].dynamic or words[2].value != "run":
                return None
            label, i = "uv tool run", 3
    if i < len(words) and not words[i].dynamic and words[i].value == "--":
        i += 1
    if i >= len(words):
        return None
    if words[i].dynamic or words[i].value.startswith("-"):
        return _Inner("shadow", label)
    return _Inner("words", label, words=words[i:])


# Options that name a program (or a shell command) for the program to run:
# prog -> [(long option, short letter)]. Long options match by GNU prefix too.
_PROGRAM_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "tar": (
        ("--to-command", ""),
        ("--use-compress-program", "I"),
        ("--info-script", "F"),
        ("--new-volume-script", ""),
        ("--rsh-command", ""),
        ("--rmt-command", ""),
    ),
    "sort": (("--compress-program", ""),),
    "rsync": (("--rsh", "e"), ("--rsync-path", "")),
    "zip": (("--unzip-command", ""),),
    "man": (("--pager", "P"), ("--html", "H")),
    "sdiff": (("--diff-program", ""),),
    "diff3": (("--diff-program", ""),),
    "scp": (("", "S"),),
    "rg": (("--pre", ""), ("--hostname-bin", "")),
}
_PROGRAM_OPTIONS["bsdtar"] = _PROGRAM_OPTIONS["tar"]
_PROGRAM_OPTIONS["gtar"] = _PROGRAM_OPTIONS["tar"]


def _program_options(base: str, words: list[_Word]) -> list[tuple[str, _Word | None]]:
    """The (option, value) pairs of ``words`` that name a program to run (value None:
    only known at run time, or missing)."""
    out: list[tuple[str, _Word | None]] = []
    specs = _PROGRAM_OPTIONS.get(base, ())
    if base in ("tar", "bsdtar", "gtar"):
        out.extend(_tar_checkpoint(words))
    if base in ("ssh", "scp", "sftp", "rsync", "git"):
        out.extend(_ssh_commands(words))
    if not specs:
        return out
    i = 1
    while i < len(words):
        w = words[i]
        v = w.value
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w.dynamic:
            i += 1
            continue
        if v.startswith("--") and len(v) > 2:
            key, eq, _ = v.partition("=")
            for name, _short in specs:
                if name and len(key) > 2 and name.startswith(key):
                    value = _Word(v.split("=", 1)[1], False, v) if eq else nxt
                    out.append((name, value if value is None or not value.dynamic else None))
                    break
        elif v.startswith("-") and len(v) > 1:
            for _name, short in specs:
                if short and short in v[1:]:
                    at = v.index(short, 1)
                    rest = v[at + 1 :]
                    value = _Word(rest, False, v) if rest else nxt
                    out.append((f"-{short}", value if value is None or not value.dynamic else None))
                    break
        i += 1
    return out


# Environment variables whose value is a command line some program runs.
COMMAND_ENV_VARS = name_set(
    "PAGER GIT_PAGER MANPAGER SYSTEMD_PAGER EDITOR VISUAL GIT_EDITOR GIT_SEQUENCE_EDITOR "
    "GIT_SSH_COMMAND GIT_SSH GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS GIT_EXTERNAL_DIFF "
    "LESSOPEN LESSCLOSE BROWSER RSYNC_RSH"
)
# git config keys whose value is a program (or, for aliases, `!` and a shell command).
_GIT_PROGRAM_KEYS = name_set(
    "core.pager core.editor core.sshcommand core.fsmonitor core.askpass diff.external "
    "sequence.editor gpg.program gpg.ssh.program gpg.x509.program credential.helper "
    "web.browser pager.log pager.diff pager.show pager.status pager.branch"
)


def _git_program_config(words: list[_Word]) -> list[tuple[str, _Word | None]]:
    """``git -c core.pager='cmd'``, ``git -c alias.x='!cmd' x``: git runs cmd."""
    out: list[tuple[str, _Word | None]] = []
    for i, w in enumerate(words[1:], 1):
        if w.dynamic:
            continue
        if w.value == "-c" and i + 1 < len(words):
            item = words[i + 1]
        elif w.value.startswith("-c") and len(w.value) > 2:
            item = _Word(w.value[2:], False, w.source)
        else:
            continue
        key, eq, value = item.value.partition("=")
        key = key.casefold()
        program = _git_program_key(key)
        if key.startswith("alias.") and value.startswith("!"):
            program, value = True, value[1:]
        if not program:
            continue
        if item.dynamic:
            out.append((f"-c {key}", None))
        elif eq and value.strip() and value.strip() not in ("true", "false", "cat", "less"):
            out.append((f"-c {key}", _Word(value, False, item.source)))
    return out


# git's global options (before the subcommand) that take a value, as a separate word
# or (long ones) after `=`.
_GIT_GLOBAL_VALUED = name_set(
    "-c -C --git-dir --work-tree --namespace --config-env --super-prefix --exec-path "
    "--list-cmds --attr-source"
)
_GIT_GLOBAL_FLAGS = name_set(
    "-p -P --paginate --no-pager --bare --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-replace-objects "
    "--no-lazy-fetch --no-advice --html-path --man-path --info-path --version --help -v -h"
)
# `git -c KEY=...` keys that only change how git shows or records things (never which
# program runs, which files it reads its configuration from, or where it writes).
_GIT_SAFE_CONFIG = name_set(
    "core.quotepath core.abbrev core.autocrlf core.safecrlf core.filemode core.ignorecase "
    "core.precomposeunicode core.whitespace core.commentchar core.commentstring "
    "user.name user.email author.name author.email committer.name committer.email "
    "commit.gpgsign tag.gpgsign init.defaultbranch safe.barerepository "
    "diff.noprefix diff.mnemonicprefix diff.relative diff.renames diff.algorithm "
    "diff.context diff.interhunkcontext diff.indentheuristic diff.colormoved "
    "diff.statgraphwidth log.showsignature log.decorate log.date log.abbrevcommit "
    "log.follow log.mailmap log.showroot format.pretty status.short status.branch "
    "status.showuntrackedfiles status.relativepaths merge.conflictstyle merge.ff "
    "merge.stat pull.rebase pull.ff rebase.autosquash rebase.autostash rebase.stat "
    "fetch.prune gc.auto gc.autodetach maintenance.auto i18n.commitencoding "
    "i18n.logoutputencoding blame.date blame.coloring grep.linenumber "
    "grep.extendedregexp grep.patterntype branch.sort tag.sort versionsort.suffix "
    "protocol.version"
)
_GIT_SAFE_CONFIG_SECTIONS = ("color.", "advice.", "column.")


def _git_globals(words: list[_Word]) -> tuple[list[tuple[str, _Word | None]], int | None]:
    """git's global options as (option, value) pairs, and the index of the subcommand
    (None: an option not known, or one only known at run time, comes first)."""
    out: list[tuple[str, _Word | None]] = []
    i = 1
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return out, None
        v = w.value
        if not v.startswith("-"):
            return out, i
        key, eq, value = v.partition("=")
        if key in _GIT_GLOBAL_VALUED:
            if eq:
                out.append((key, _Word(value, False, w.source)))
                i += 1
            elif key == "--exec-path":
                out.append((key, None))  # alone: prints where git's programs are
                i += 1
            else:
                out.append((key, words[i + 1] if i + 1 < len(words) else None))
                i += 2
            continue
        if v.startswith("-c") and len(v) > 2 and not v.startswith("--"):
            out.append(("-c", _Word(v[2:], False, w.source)))
            i += 1
            continue
        if v in _GIT_GLOBAL_FLAGS:
            out.append((v, None))
            i += 1
            continue
        return out, None
    return out, None


def git_global_options(cmd: SimpleCommand) -> list[tuple[str, str | None]]:
    """A git command's global options (``-C DIR``, ``--git-dir=DIR``, ``-c K=V``...) as
    (option, value); a value only known at run time is None."""
    words = [_Word(w, i in cmd.dynamic, w) for i, w in enumerate(cmd.argv)]
    return [
        (option, None if value is None or value.dynamic else value.value)
        for option, value in _git_globals(words)[0]
    ]


def _git_config_items(words: list[_Word]) -> list[tuple[str, str, str, _Word]]:
    """``git -c KEY=VALUE`` and ``--config-env KEY=ENVVAR`` among the global options:
    (option, key casefolded, value, the word)."""
    out = []
    for option, value in _git_globals(words)[0]:
        if option in ("-c", "--config-env") and value is not None:
            key, _, rest = value.value.partition("=")
            out.append((option, key.casefold(), rest, value))
    return out


def _git_config_problems(words: list[_Word]) -> list[str]:
    """Why a git line's own configuration (``-c``, ``--config-env``, ``--exec-path=``)
    makes what it runs unknown: a key that is neither harmless, nor a program this
    module parses (``core.pager``, ``alias.x=!cmd``: judged as commands), nor an alias
    of a git subcommand (looked through). ``include.path`` reads a whole config from a
    file; ``core.hooksPath``, ``protocol.ext.allow``, ``core.gitProxy`` and the rest can
    each make git run a program of the line's choosing."""
    problems: list[str] = []
    for option, value in _git_globals(words)[0]:
        if option == "--exec-path" and value is not None:
            problems.append("`git --exec-path=DIR` runs git's programs from DIR")
    for option, key, _value, word in _git_config_items(words):
        if key in _GIT_SAFE_CONFIG or key.startswith(_GIT_SAFE_CONFIG_SECTIONS):
            continue
        if (
            option == "-c"
            and not word.dynamic
            and (_git_program_key(key) or key.startswith("alias."))
        ):
            continue  # parsed as a command (_git_program_config) or looked through
        shown = word.source if word.source.startswith(option) else f"{option} {word.source}"
        problems.append(
            f"`git {_clip(shown, 50)}` sets configuration that can make git run programs or "
            "read configuration not analysed here"
        )
    return problems


def _git_program_key(key: str) -> bool:
    return (
        key in _GIT_PROGRAM_KEYS
        or key.endswith((".textconv", ".command", ".cmd"))
        or key.startswith(("filter.", "pager.", "browser.", "man."))
    )


def _git_alias(walker: _Walker, words: list[_Word]) -> _Inner | None:
    """``git -c alias.p=reset p --hard`` runs ``git reset --hard``: the subcommand
    named by a ``-c alias.NAME=...`` of the line is looked through to what it stands
    for (``!`` aliases are shell commands: :func:`_git_program_config`)."""
    index = _git_globals(words)[1]
    if index is None:
        return None
    sub = words[index].value.casefold()
    alias = None
    for option, key, value, word in _git_config_items(words):
        if option == "-c" and key == f"alias.{sub}" and not word.dynamic:
            alias = value
    if alias is None or alias.lstrip().startswith("!"):
        return None
    import shlex

    try:
        expansion = shlex.split(alias)
    except ValueError:
        return _Inner(
            "unknown", "git alias", reason=f"the git alias `{_clip(alias)}` is not understood"
        )
    if not expansion:
        return None
    inner = [
        *words[:index],
        *(_Word(x, False, x) for x in expansion),
        *words[index + 1 :],
    ]
    return _Inner("words", f"git alias {words[index].value}", words=inner)


def _tar_checkpoint(words: list[_Word]) -> list[tuple[str, _Word | None]]:
    """``tar --checkpoint-action=exec=CMD`` runs CMD at each checkpoint."""
    out: list[tuple[str, _Word | None]] = []
    for i, w in enumerate(words[1:], 1):
        key, eq, value = w.value.partition("=")
        if w.dynamic and "checkpoint-action" in w.source:
            out.append(("--checkpoint-action", None))
        elif len(key) > 2 and "--checkpoint-action".startswith(key):
            if not eq:
                value = words[i + 1].value if i + 1 < len(words) else ""
            if value.startswith("exec="):
                out.append(("--checkpoint-action", _Word(value[5:], False, w.source)))
    return out


def _ssh_commands(words: list[_Word]) -> list[tuple[str, _Word | None]]:
    """``-o ProxyCommand=CMD`` / ``LocalCommand`` (ssh, scp, sftp, rsync via -e) and
    ``ProxyCommand`` in an ``-oProxyCommand`` word: ssh runs CMD on this machine."""
    out: list[tuple[str, _Word | None]] = []
    for i, w in enumerate(words[1:], 1):
        text = w.value
        if text == "-o" and i + 1 < len(words):
            w = words[i + 1]
            text = w.value
        elif text.startswith("-o"):
            text = text[2:]
        else:
            continue
        m = re.match(r"\s*([A-Za-z]+)\s*[=\s]\s*(.*)", text, re.DOTALL)
        if m is None:
            continue
        key, value = m.group(1), m.group(2)
        if key.lower() in ("proxycommand", "localcommand", "knownhostscommand"):
            out.append((f"-o {key}", None if w.dynamic else _Word(value, False, w.source)))
    return out


_AWKS = name_set("awk gawk mawk nawk original-awk")
# What an awk program uses to run commands: system(), pipes to and from commands,
# gawk's @-extensions and indirect calls.
_AWK_RUNS = re.compile(r"\bsystem\s*\(|(?<!\|)\|(?!\|)|@")
_AWK_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _awk_problem(args: list[_Word]) -> str | None:
    """Why an awk command line cannot be followed: its program runs commands (or is
    only known at run time, or comes from a file)."""
    programs: list[_Word] = []
    explicit = False
    positional: _Word | None = None
    i = 0
    while i < len(args):
        w = args[i]
        v = w.value
        nxt = args[i + 1] if i + 1 < len(args) else None
        if w.dynamic:
            if positional is None and not explicit:
                return "the awk program is only known at run time"
            i += 1
            continue
        if v == "--":
            if positional is None and nxt is not None:
                positional = nxt
            break
        key, eq, value = v.partition("=")
        if v.startswith("--"):
            if any(len(key) > 2 and name.startswith(key) for name in _AWK_FILE_OPTIONS):
                return f"`awk {v}` runs a program from a file, which is not analysed"
            if len(key) > 2 and "--source".startswith(key):
                explicit = True
                if eq:
                    programs.append(_Word(value, False, v))
                elif nxt is not None:
                    programs.append(nxt)
                    i += 1
            elif not eq and key in ("--field-separator", "--assign"):
                i += 1
            i += 1
            continue
        if v.startswith("-") and len(v) > 1:
            letter, rest = v[1], v[2:]
            if letter in "fEil":
                return f"`awk {v}` runs a program from a file, which is not analysed"
            if letter == "e":
                explicit = True
                if rest:
                    programs.append(_Word(rest, False, v))
                elif nxt is not None:
                    programs.append(nxt)
                    i += 1
            elif letter in "Fv" and not rest:
                i += 1
            i += 1
            continue
        if positional is None:
            positional = w
        i += 1
    if positional is not None and not explicit:
        programs.append(positional)
    for program in programs:
        if program.dynamic:
            return "the awk program is only known at run time"
        code = _AWK_STRING.sub('""', program.value)
        if _AWK_RUNS.search(code):
            return "the awk program runs commands (system(), a pipe) that are not analysed"
    return None


_AWK_FILE_OPTIONS = ("--file", "--exec", "--include", "--load")


def sed_script_effects(script: str) -> tuple[bool, list[str], bool]:
    """What a sed script does beyond printing: (runs commands, files it writes, parsed).

    ``e`` and ``s///e`` run commands; ``w FILE``, ``W FILE`` and ``s///w FILE``
    write FILE. ``parsed`` is False when the script holds something this reader
    does not know (then nothing about it is assumed).
    """
    runs = False
    writes: list[str] = []
    i, n = 0, len(script)

    def to_eol(j: int) -> tuple[str, int]:
        end = script.find("\n", j)
        end = n if end == -1 else end
        return script[j:end], end

    def skip_delimited(j: int, delim: str) -> int | None:
        while j < n:
            if script[j] == "\\":
                j += 2
                continue
            if script[j] == delim:
                return j + 1
            if script[j] == "\n":
                return None
            j += 1
        return None

    while i < n:
        c = script[i]
        if c in " \t\n;!{}":
            i += 1
            continue
        if c == "#":
            _, i = to_eol(i)
            continue
        # addresses: numbers, $, /re/, \cREc, with , ~ + and I/M flags
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c == "/" or (c == "\\" and i + 1 < n):
            delim = "/" if c == "/" else script[i + 1]
            j = skip_delimited(i + 1 if c == "/" else i + 2, delim)
            if j is None:
                return runs, writes, False
            i = j
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "s" or c == "y":
            if i + 1 >= n:
                return runs, writes, False
            delim = script[i + 1]
            if delim in "\n\\":
                return runs, writes, False
            j = skip_delimited(i + 2, delim)
            j = skip_delimited(j, delim) if j is not None else None
            if j is None:
                return runs, writes, False
            i = j
            if c == "y":
                continue
            while i < n and (script[i] in "gpiImMe" or script[i].isdigit()):
                if script[i] == "e":
                    runs = True
                i += 1
            if i < n and script[i] == "w":
                name, i = to_eol(i + 1)
                writes.append(name.strip())
            continue
        if c in "aic":
            _, i = to_eol(i + 1)  # text to the end of the line (GNU one-liner form)
            continue
        if c in ":btT":
            j = i + 1
            while j < n and script[j] not in ";\n":
                j += 1
            i = j
            continue
        if c in "rRwW":
            name, i = to_eol(i + 1)
            if c in "wW":
                writes.append(name.strip())
            continue
        if c == "e":
            runs = True
            _, i = to_eol(i + 1)
            continue
        if c in "=dDgGhHlnNpPqQxzF":
            i += 1
            if c in "lqQ":
                while i < n and script[i].isdigit():
                    i += 1
            continue
        return runs, writes, False
    return runs, writes, True


def _sed_scripts(words: list[_Word]) -> tuple[list[_Word], bool]:
    """The scripts of a sed command line, and whether one comes from a file (-f)."""
    scripts: list[_Word] = []
    from_file = False
    explicit = False
    first_positional: _Word | None = None
    i = 1
    while i < len(words):
        w = words[i]
        v = w.value
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w.dynamic:
            if first_positional is None:
                first_positional = w
            i += 1
            continue
        key, eq, value = v.partition("=")
        if v.startswith("--") and len(v) > 2:
            if len(key) > 2 and "--expression".startswith(key):
                explicit = True
                if eq:
                    scripts.append(_Word(value, False, v))
                elif nxt is not None:
                    scripts.append(nxt)
                    i += 1
            elif len(key) > 3 and "--file".startswith(key):
                from_file = True
            elif not eq and len(key) > 2 and "--line-length".startswith(key):
                i += 1
            i += 1
            continue
        if v.startswith("-") and len(v) > 1:
            for j in range(1, len(v)):
                letter, rest = v[j], v[j + 1 :]
                if letter == "e":
                    explicit = True
                    if rest:
                        scripts.append(_Word(rest, False, v))
                    elif nxt is not None:
                        scripts.append(nxt)
                        i += 1
                    break
                if letter == "f":
                    from_file = True
                    break
                if letter == "l":
                    if not rest:
                        i += 1
                    break
                if letter in "iI":
                    break  # -i[SUFFIX]: the rest is the suffix
            i += 1
            continue
        if first_positional is None:
            first_positional = w
        i += 1
    if not explicit and not from_file and first_positional is not None:
        scripts.append(first_positional)
    return scripts, from_file


def _sed_problem(words: list[_Word]) -> str | None:
    if any(not w.dynamic and w.value == "--sandbox" for w in words):
        return None  # GNU sed refuses e, r and w in sandbox mode
    scripts, from_file = _sed_scripts(words)
    if from_file:
        return "`sed -f` runs a script from a file, which is not analysed"
    for script in scripts:
        if script.dynamic:
            return "the sed script is only known at run time"
        runs, _, parsed = sed_script_effects(script.value)
        if runs:
            return "the sed script runs commands (`e`), which are not analysed"
        if not parsed:
            return "the sed script holds commands this parser does not know"
    return None


# Wrappers that run the rest of their words as a command: (options with a value,
# flags, positional words before the command).
_SIMPLE_WRAPPERS: dict[str, tuple[str, str, int]] = {
    "setsid": ("", "cfw", 0),
    "ionice": ("cnp", "tu", 0),
    "unbuffer": ("", "p", 0),
    "taskset": ("", "ac", 1),
    "chrt": ("T", "abdefimoprRv", 1),
}


def _flock(walker: _Walker, words: list[_Word]) -> _Inner | None:
    """``flock [opts] FILE CMD...`` / ``flock [opts] FILE -c 'script'``: FILE is created
    (a write), CMD is what runs."""
    i = _take_options(
        words,
        1,
        with_value=frozenset("wEc"),
        flags=frozenset("sxunoFv"),
        long_with_value=frozenset({"--timeout", "--wait", "--conflict-exit-code", "--command"}),
        long_flags=name_set(
            "--shared --exclusive --unlock --nonblock --nb --close --no-fork --verbose"
        ),
    )
    if i is None or i >= len(words):
        return _Inner("unknown", "flock", reason="`flock` with options not understood")
    lock = words[i]
    if not lock.value.isdigit():
        walker.redirects.append(Redirect("flock", lock.value, "append", None, lock.dynamic))
        if lock.dynamic:
            walker.reasons.append(f"`flock` creates a file named only at run time ({lock.source})")
    rest = words[i + 1 :]
    if rest and rest[0].value in ("-c", "--command") and not rest[0].dynamic:
        if len(rest) < 2 or rest[1].dynamic:
            return _Inner(
                "script", "flock -c", reason="`flock -c` runs text only known at run time"
            )
        return _Inner("script", "flock -c", script=rest[1].value)
    return _Inner("words", "flock", words=rest) if rest else None


def _trap(args: list[_Word]) -> _Inner | None:
    """``trap 'script' SIGNAL...``: the script runs when the signal comes (EXIT: when
    the line ends), so it is judged as if it ran. ``trap -p``, ``trap - SIG`` and
    ``trap SIG`` (one word: a reset) run nothing."""
    if args and not args[0].dynamic and args[0].value == "--":
        args = args[1:]
    if len(args) < 2:
        return None
    action = args[0]
    if action.dynamic:
        return _Inner("script", "trap", reason="`trap` runs text only known at run time")
    if action.value == "-" or (action.value.startswith("-") and len(action.value) == 2):
        return None
    return _Inner("script", "trap", script=action.value)


def _shell_script(words: list[_Word], base: str) -> _Inner:
    """``bash -c 'script'``; a shell without -c runs a file or reads stdin."""
    label = f"{base} -c"
    i = 1
    has_c = False
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return _Inner("script", label, reason=f"`{base}` with options only known at run time")
        v = w.value
        if v in ("-o", "-O", "+O", "+o", "--rcfile", "--init-file"):
            i += 2
            continue
        if v.startswith("--"):
            if v in ("--login", "--noprofile", "--norc", "--posix", "--restricted", "--verbose"):
                i += 1
                continue
            return _Inner("script", label, reason=f"`{base} {v}` is not understood")
        if (v.startswith("-") or v.startswith("+")) and len(v) > 1:
            if "c" in v[1:]:
                has_c = True
            if "s" in v[1:]:
                return _Inner("script", label, reason=f"`{base} -s` reads its script from stdin")
            i += 1
            if has_c:
                break
            continue
        break
    if not has_c:
        if i >= len(words):
            return _Inner(
                "script", base, reason=f"`{base}` without -c reads commands from stdin or a tty"
            )
        return _Inner(
            "script", base, reason=f"`{base} {words[i].value}` runs a script file not analysed"
        )
    if i >= len(words):
        return _Inner("script", label, reason=f"`{base} -c` without a script")
    script = words[i]
    if script.dynamic:
        return _Inner("script", label, reason=f"`{base} -c` runs text only known at run time")
    if base == "busybox sh":
        return _Inner("script", label, reason="busybox shells are not analysed")
    return _Inner("script", label, script=script.value)


def _env(words: list[_Word]) -> _Inner | None:
    i = 1
    env: list[tuple[str, str]] = []
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return _Inner("unknown", "env", reason="`env` with words only known at run time")
        v = w.value
        if v in ("-i", "--ignore-environment", "-0", "--null", "-"):
            i += 1
        elif v in ("-u", "--unset"):
            i += 2
        elif v.startswith("--unset=") or (v.startswith("-u") and len(v) > 2) or v == "--":
            i += 1
        elif v.startswith("-"):
            # -S (split string), -C (chdir), -P (path) and the rest change what runs or where.
            return _Inner("unknown", "env", reason=f"`env {v}` is not understood")
        elif "=" in v and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", v):
            name, value = v.split("=", 1)
            if _prompt_code(name, value):
                return _Inner("unknown", "env", reason=_PROMPT_REASON.format(name=name))
            env.append((name, value))
            i += 1
        else:
            break
    if i >= len(words):
        return None  # `env` alone prints the environment
    return _Inner("words", "env", words=words[i:], env=env)


_XARGS_WITH_VALUE = frozenset("IeEdLnPsa")
_XARGS_FLAGS = frozenset("0prtxo")


def _xargs(words: list[_Word]) -> _Inner:
    i = 1
    replace: str | None = None
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return _Inner("unknown", "xargs", reason="`xargs` with options only known at run time")
        v = w.value
        if v == "--":
            i += 1
            break
        if v.startswith("--"):
            name, _, val = v.partition("=")
            if name in (
                "--null",
                "--no-run-if-empty",
                "--verbose",
                "--interactive",
                "--exit",
                "--open-tty",
            ):
                i += 1
                continue
            if name in (
                "--delimiter",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--arg-file",
                "--eof",
                "--process-slot-var",
            ):
                i += 1 if val else 2
                continue
            if name == "--replace":
                replace = val or "{}"
                i += 1
                continue
            return _Inner("unknown", "xargs", reason=f"`xargs {v}` is not understood")
        if v.startswith("-") and len(v) > 1:
            c = v[1]
            if c == "i":
                replace = v[2:] or "{}"
                i += 1
                continue
            if c in ("l",):
                i += 1
                continue
            if c in _XARGS_WITH_VALUE:
                if c == "I":
                    replace = (
                        v[2:] if len(v) > 2 else (words[i + 1].value if i + 1 < len(words) else "")
                    )
                i += 1 if len(v) > 2 else 2
                continue
            if all(ch in _XARGS_FLAGS for ch in v[1:]):
                i += 1
                continue
            return _Inner("unknown", "xargs", reason=f"`xargs {v}` is not understood")
        break
    inner = words[i:] or [_Word("echo", False, "echo")]
    if replace:
        inner = [_Word(w.value, True, w.source) if replace in w.value else w for w in inner]
    return _Inner("words", "xargs", words=inner, open_args=replace is None)


def _sudo(words: list[_Word], base: str) -> _Inner:
    i = _take_options(
        words,
        1,
        with_value=frozenset("ugpCDhrtTUR"),
        flags=frozenset("EHnSPkKbAB"),
        long_with_value=frozenset(
            {"--user", "--group", "--prompt", "--chdir", "--host", "--close-from", "--other-user"}
        ),
        long_flags=name_set(
            "--preserve-env --set-home --non-interactive --stdin --reset-timestamp "
            "--background --askpass --bell"
        ),
    )
    if i is None:
        return _Inner("unknown", base, reason=f"`{base}` with options not understood")
    if i >= len(words):
        return _Inner("unknown", base, reason=f"`{base}` without a command")
    return _Inner("words", base, words=words[i:])


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def _find_exec(words: list[_Word], base: str) -> _Inner | None:
    """The commands ``find -exec`` / ``fd -x`` run, as commands of their own."""
    subs: list[list[_Word]] = []
    markers = _FIND_EXEC if base == "find" else _FD_EXEC
    i = 1
    while i < len(words):
        if words[i].value in markers and not words[i].dynamic:
            j = i + 1
            sub: list[_Word] = []
            while (
                j < len(words)
                and words[j].value not in (";", "+")
                and not (base != "find" and words[j].value.startswith("-") and sub)
            ):
                w = words[j]
                sub.append(_Word(w.value, True, w.source) if "{}" in w.value else w)
                j += 1
            if sub:
                subs.append(sub)
            i = j + 1
            continue
        i += 1
    if not subs:
        return None
    return _Inner("exec", f"{base} -exec", subcommands=subs)


# --------------------------------------------------------------------------- env safety

# Variables a prefix may set without changing what program runs or what it executes.
SAFE_ENV_VARS = name_set(
    "LANG LANGUAGE TZ NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE COLUMNS LINES "
    "TERM CI DEBUG VERBOSE NODE_ENV RUST_BACKTRACE RUST_LOG PYTHONUNBUFFERED "
    "PYTHONDONTWRITEBYTECODE PYTHONIOENCODING PYTHONHASHSEED PYTHONWARNINGS GOOS "
    "GOARCH CGO_ENABLED NPM_CONFIG_LOGLEVEL TIMEFORMAT REPLY MAPFILE OPTARG OPTIND"
)
# Variables bash expands as it prompts or traces (`set -x`): a `$(...)` in them runs.
PROMPT_VARS = name_set("PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND")
_PROMPT_REASON = "{name} holds code bash runs when it prompts or traces commands"


def _prompt_code(name: str, value: str) -> bool:
    """``PS4='$(cmd)'`` runs cmd each time bash traces a command (``set -x``);
    ``PROMPT_COMMAND`` is a command."""
    if name == "PROMPT_COMMAND":
        return bool(value.strip())
    return name in PROMPT_VARS and any(c in value for c in "$`")


_PROXY_VARS = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"})


def is_safe_env_name(name: str, *, standalone: bool = False) -> bool:
    """Whether setting ``name`` cannot change which program runs or what it executes.

    ``PATH``, ``LD_PRELOAD``, ``GIT_*``, ``PAGER``, ``NODE_OPTIONS`` and the like
    can turn a harmless command into any command, so only a known-safe set
    passes. A plain lowercase shell variable (``x=1``, not exported) is safe too.
    """
    if name.startswith("__codev"):
        return False  # the Bash tool's own wrapper variables
    if name in SAFE_ENV_VARS or name.startswith("LC_"):
        return True
    if name == "IFS":
        # As a prefix (`IFS= read -r line`) it only splits that command's input: a
        # program started with it does not take it (bash resets IFS at start-up).
        return not standalone
    return standalone and name.islower() and name not in _PROXY_VARS and "[" not in name
