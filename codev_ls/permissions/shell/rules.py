"""``Bash(...)`` rule specifiers and how they match one simple command.

``npm test`` is exact, ``npm run test:*`` (or ``npm run test *``) a prefix by
whole words. Deny and ask rules err towards matching (any look-through level,
program basename, any case, run-time words may be anything); allow rules
match exactly (static words, the program as written, safe env prefixes only,
sudo only when the rule names it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from codev_ls.permissions.shell.parse import (
    ESCALATING_WRAPPERS,
    ParsedCommand,
    SimpleCommand,
    is_safe_env_name,
    parse_command,
)

# --------------------------------------------------------------------------- rules


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """A ``Bash(...)`` specifier: exact words, a word prefix (``:*``), or a glob."""

    words: tuple[str, ...]
    prefix: bool
    # A pattern with `*` elsewhere (`git * main`): matched against the joined words.
    glob: str | None = None
    # Several simple commands (`Bash(cd x && make)`): the whole line must be exactly these.
    compound: tuple[tuple[str, ...], ...] = ()
    # Env prefixes the rule names (`Bash(FOO=1 npm test)`): allowed to be set as written.
    env: tuple[tuple[str, str], ...] = ()


@lru_cache(maxsize=1024)
def command_pattern(spec: str) -> CommandPattern:
    """Parse a Bash rule specifier (``npm run test:*``, ``git status``, ``*rm*``)."""
    text = spec.strip()
    prefix = False
    if text.endswith(":*") or text.endswith(" *"):
        text, prefix = text[:-2].rstrip(), True
    elif text == "*":
        return CommandPattern((), True)
    if "*" in text:
        return CommandPattern((), False, glob=spec.strip())
    parsed = parse_command(text)
    cmds = [c for c in parsed.commands]
    if len(cmds) == 1 and not cmds[0].redirects and cmds[0].argv:
        words = cmds[0].layers[0] if cmds[0].layers else cmds[0].argv
        return CommandPattern(words, prefix, env=cmds[0].env)
    if len(cmds) > 1 and not prefix:
        return CommandPattern((), False, compound=tuple(c.argv for c in cmds))
    return CommandPattern(tuple(text.split()), prefix)


def _norm_name(name: str) -> str:
    return os.path.basename(name).lower()


def match_rule(spec: str, cmd: SimpleCommand, kind: Literal["allow", "ask", "deny"]) -> bool:
    """Whether the Bash specifier ``spec`` matches the simple command ``cmd``.

    Deny and ask rules match any look-through level, by program basename,
    case-insensitively, and with words only known at run time treated as
    possibly matching: they err towards matching. Allow rules match exactly:
    the static words, the program as written, no unsafe env prefix, no sudo
    unless the rule names it.
    """
    pat = command_pattern(spec)
    if kind == "allow":
        return _allow_matches(pat, cmd)
    return _deny_matches(pat, cmd)


def _deny_matches(pat: CommandPattern, cmd: SimpleCommand) -> bool:
    layers = cmd.layers or (cmd.argv,)
    if pat.glob is not None:
        texts = [" ".join(layer) for layer in layers if layer]
        texts += [" ".join([os.path.basename(layer[0]), *layer[1:]]) for layer in layers if layer]
        texts.append(" ".join(cmd.text.split()))  # as written: `~/.bashrc`, quotes and all
        regexes = {_glob_regex(pat.glob, fold=True), _glob_regex(_expand_home(pat.glob), fold=True)}
        return any(r.fullmatch(t) for r in regexes for t in texts)
    if pat.compound:
        return any(_deny_matches(CommandPattern(words, True), cmd) for words in pat.compound)
    if not pat.words:
        return True
    for layer in layers:
        if not layer:
            continue
        if _norm_name(layer[0]) != _norm_name(pat.words[0]):
            continue
        if _loose_match(pat, cmd, layer):
            return True
    return False


def _is_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1


def _loose_match(pat: CommandPattern, cmd: SimpleCommand, layer: tuple[str, ...]) -> bool:
    """Deny and ask matching, erring towards a match.

    The rule's words are found in order, but options of the line between them
    may be skipped, each with or without a value (``git -C . push`` and ``git -c
    x=y push`` are ``git push``; ``npm --silent publish`` is ``npm publish``), and
    the rule's own options may come anywhere after the program, abbreviated too
    (``git push origin --forc`` is ``git push --force``). A word only known at run
    time may be anything. An exact rule (no ``:*``) matches when whatever is left
    over is options.
    """
    wanted = [w for w in pat.words[1:] if not _is_option(w)]
    options = [w for w in pat.words[1:] if _is_option(w)]
    n = len(layer)

    def dyn(i: int) -> bool:
        return _maybe_dynamic(cmd, layer, i)

    letters = {c for w in layer[1:] if _is_option(w) and not w.startswith("--") for c in w[1:]}
    any_dynamic = any(dyn(i) for i in range(1, n))
    for opt in options:
        if any_dynamic:
            continue
        if not opt.startswith("--") and opt[1:].isalnum():
            if not set(opt[1:]) <= letters:  # `-rf` is also `-fr`, `-r -f`
                return False
        elif not any(_option_matches(layer[i], opt) for i in range(1, n)):
            return False
    # Positions the search may be at: after the program, and after each option skipped.
    starts = {1}
    for word in wanted:
        reachable = _skip_options(layer, starts, dyn)
        nxt = {i + 1 for i in reachable if i < n and (layer[i] == word or dyn(i))}
        if not nxt:
            return False
        starts = nxt
    if pat.prefix:
        return True
    # Exact: only options (and their values) may follow.
    return any(
        all(_is_option(layer[j]) or dyn(j) or _is_value(layer, j) for j in range(i, n))
        for i in starts
    )


def _skip_options(layer: tuple[str, ...], starts: set[int], dyn: Callable[[int], bool]) -> set[int]:
    """Every position reachable from ``starts`` by skipping options (each one alone,
    or with the word after it as its value)."""
    seen = set(starts)
    todo = list(starts)
    while todo:
        i = todo.pop()
        if i < len(layer) and (_is_option(layer[i]) or dyn(i)):
            for j in (i + 1, i + 2):
                if j <= len(layer) and j not in seen:
                    seen.add(j)
                    todo.append(j)
    return seen


def _is_value(layer: tuple[str, ...], j: int) -> bool:
    return j > 1 and _is_option(layer[j - 1]) and "=" not in layer[j - 1]


def _option_matches(word: str, option: str) -> bool:
    """Whether the line's ``word`` is the rule's long ``option`` (also ``--force=x``,
    and a GNU abbreviation ``--forc``), or another option spelt the same."""
    if word == option:
        return True
    if option.startswith("--"):
        key = word.split("=", 1)[0]
        return key.startswith("--") and len(key) > 2 and option.split("=", 1)[0].startswith(key)
    return False


def _maybe_dynamic(cmd: SimpleCommand, layer: tuple[str, ...], index: int) -> bool:
    if layer is cmd.argv or layer == cmd.argv:
        return index in cmd.dynamic
    # Outer layers: the inner argv is their tail; map the index.
    offset = len(layer) - len(cmd.argv)
    return index - offset in cmd.dynamic if index >= offset else False


def _allow_matches(pat: CommandPattern, cmd: SimpleCommand) -> bool:
    if pat.compound:
        return False  # judged on the whole line (compound_allowed)
    if not _env_allowed(pat, cmd):
        return False
    if pat.glob is not None:
        return _allow_glob(pat.glob, cmd)
    if not pat.words:
        return not cmd.escalated and 0 not in cmd.dynamic
    layers = cmd.layers or (cmd.argv,)
    for level, layer in enumerate(layers):
        # Below sudo, only a rule naming sudo (an outer layer) may allow.
        wrappers_above = cmd.wrappers[:level] if level <= len(cmd.wrappers) else cmd.wrappers
        if any(w in ESCALATING_WRAPPERS for w in wrappers_above):
            continue
        n = len(pat.words)
        if len(layer) < n or tuple(layer[:n]) != pat.words:
            continue
        static_upto = _static_len(cmd, layer)
        if static_upto < n:
            continue
        if pat.prefix:
            return True
        if len(layer) == n and static_upto >= n and not cmd.open_args:
            return True
    return False


def _allow_glob(glob: str, cmd: SimpleCommand) -> bool:
    """``Bash(git * main)``: one simple command's static words, joined, match the pattern."""
    regex = _glob_regex(glob, fold=False)
    for level, layer in enumerate(cmd.layers or (cmd.argv,)):
        if not layer or any(w in ESCALATING_WRAPPERS for w in cmd.wrappers[:level]):
            continue
        if _static_len(cmd, layer) < len(layer) or (cmd.open_args and level == len(cmd.layers) - 1):
            continue  # a word known only at run time could be anything
        if regex.fullmatch(" ".join(layer)):
            return True
    return False


@lru_cache(maxsize=512)
def _glob_regex(glob: str, *, fold: bool) -> re.Pattern[str]:
    """Only ``*`` is special (any characters, spaces included); the rest is literal."""
    body = ".*".join(re.escape(part) for part in glob.split("*"))
    return re.compile(body, re.IGNORECASE | re.DOTALL if fold else re.DOTALL)


def _expand_home(glob: str) -> str:
    return re.sub(r"(^|\s)~(?=/|\s|$)", lambda m: m.group(1) + os.path.expanduser("~"), glob)


def _env_allowed(pat: CommandPattern, cmd: SimpleCommand) -> bool:
    """Env prefixes: each is known-safe or named (with its value) by the rule."""
    named = dict(pat.env)
    for name, value in cmd.env:
        if name in named:
            if named[name] != value:
                return False
        elif not is_safe_env_name(name):
            return False
    return all(pair in cmd.env for pair in pat.env)


def _static_len(cmd: SimpleCommand, layer: tuple[str, ...]) -> int:
    """How many leading words of ``layer`` are known before the command runs."""
    offset = len(layer) - len(cmd.argv)
    for i in range(len(layer)):
        j = i - offset
        if j >= 0 and j in cmd.dynamic:
            return i
    return len(layer)


def compound_allowed(spec: str, parsed: ParsedCommand) -> bool:
    """A compound allow rule (``Bash(cd x && make)``) matches exactly that whole line."""
    pat = command_pattern(spec)
    if not pat.compound or not parsed.fully_understood:
        return False
    argvs = tuple(c.argv for c in parsed.commands)
    if argvs != pat.compound:
        return False
    return all(not c.dynamic and not c.env and not c.open_args for c in parsed.commands)
