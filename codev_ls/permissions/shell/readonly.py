"""The built-in read-only set: commands that run without asking in default mode.

A command line is read-only only when the parse is clean and *every* simple
command in it is in the set with harmless arguments (``find`` without
``-exec``/``-delete``, ``git`` status/diff/log/show and listing ``branch``,
``sort`` without ``-o``...), no env prefix that can change what runs, no sudo,
no output redirection to a file.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from codev_ls.permissions.shell.parse import (
    ParsedCommand,
    SimpleCommand,
    is_safe_env_name,
    name_set,
    parse_command,
)

# --------------------------------------------------------------------------- read-only set


def _positional(argv: Sequence[str], with_value: Iterable[str] = ()) -> list[str]:
    """Arguments that are not options (a crude split: ``--`` ends the options)."""
    takes = set(with_value)
    out: list[str] = []
    skip = False
    options_done = False
    for word in argv[1:]:
        if skip:
            skip = False
            continue
        if options_done:
            out.append(word)
        elif word == "--":
            options_done = True
        elif word.startswith("-") and len(word) > 1:
            if word in takes:
                skip = True
        else:
            out.append(word)
    return out


def _has_option(argv: Sequence[str], names: Iterable[str], shorts: str = "") -> str | None:
    """The first option in ``argv`` among ``names`` (``--x`` or ``--x=...``) or short letters."""
    names = tuple(names)
    for word in argv[1:]:
        if word == "--":
            return None
        for name in names:
            if word == name or (name.startswith("--") and word.startswith(name + "=")):
                return word
        short = shorts and word.startswith("-") and not word.startswith("--")
        if short and any(c in shorts for c in word[1:]):
            return word
    return None


# Commands that read or print and cannot write files or run other programs, whatever their args.
ALWAYS_READ_ONLY = name_set(
    "cat head tail wc pwd echo printf true false : ls grep egrep fgrep basename "
    "dirname realpath readlink stat du df whoami id groups uname which type nl cut "
    "tr cmp comm diff md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum "
    "cksum seq test [ [[ printenv column od hexdump strings jq tac rev paste fold "
    "expand unexpand join base64 nproc uptime cd wait sleep locate whereis lsblk "
    "file read mapfile readarray getopts"
)
# Read-only whatever words xargs appends (used for `xargs CMD`).
ARGS_IRRELEVANT = name_set(
    "cat head tail wc echo ls grep egrep fgrep basename dirname stat du md5sum "
    "sha1sum sha256sum sha512sum nl strings"
)

_GIT_READ_SUBCOMMANDS = name_set(
    "status diff log show branch rev-parse ls-files ls-tree blame describe shortlog "
    "cat-file rev-list merge-base show-ref tag remote reflog stash config grep "
    "worktree version help"
)
_GIT_SAFE_GLOBAL = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
)
_GIT_BRANCH_LIST_OPTS = name_set(
    "-a --all -r --remotes -v -vv --verbose -l --list --show-current --color "
    "--no-color --column --no-column -i --ignore-case --omit-empty"
)
_GIT_BRANCH_VALUE_OPTS = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")


def _git_problem(argv: Sequence[str]) -> str | None:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] not in _GIT_SAFE_GLOBAL:
            return f"`git {argv[i]}` can change which repository or configuration is used"
        i += 1
    if i >= len(argv):
        return "`git` without a subcommand"
    sub = argv[i]
    args = list(argv[i + 1 :])
    if sub not in _GIT_READ_SUBCOMMANDS:
        return f"`git {sub}` is not in the read-only set"
    bad = _has_option(
        ["git", *args], ("--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--exec")
    )
    if bad:
        return f"`git {sub} {bad}` can write files or run programs"
    if sub == "grep" and _has_option(["git", *args], (), shorts="O"):
        return "`git grep -O` opens files in a pager"
    if sub == "branch":
        listing = any(a in ("-l", "--list") for a in args)
        j = 0
        while j < len(args):
            a = args[j]
            if a in _GIT_BRANCH_LIST_OPTS or a.startswith(("--sort=", "--format=", "--color=")):
                j += 1
                continue
            if a.split("=", 1)[0] in _GIT_BRANCH_VALUE_OPTS:
                j += 1 if "=" in a else 2
                continue
            if a in ("--sort", "--format"):
                j += 2
                continue
            if not a.startswith("-") and listing:
                j += 1
                continue
            return f"`git branch {a}` changes branches (only listing is read-only)"
    if sub == "tag" and args:
        listing = any(a in ("-l", "--list") for a in args)
        changing = any(a in ("-d", "-a", "-s", "-f", "-m", "-F", "--delete") for a in args)
        only_list_opts = all(a in ("-l", "--list", "-n") or a.startswith("--sort") for a in args)
        if not only_list_opts and (not listing or changing):
            return "`git tag` with arguments changes tags (only listing is read-only)"
    if sub == "remote" and args and args not in (["-v"], ["--verbose"]):
        return "`git remote` with arguments can change remotes"
    if sub == "reflog" and args and args[0] in ("expire", "delete", "drop"):
        return f"`git reflog {args[0]}` changes the reflog"
    if sub == "stash" and args[:1] not in (["list"], ["show"]):
        return "only `git stash list` / `git stash show` are read-only"
    if sub == "worktree" and args[:1] != ["list"]:
        return "only `git worktree list` is read-only"
    if sub == "config" and not any(
        a in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "get", "list")
        for a in args
    ):
        return "only `git config --get/--list` is read-only"
    return None


def command_problem(cmd: SimpleCommand, *, redirects: bool = True) -> str | None:
    """Why one simple command is not read-only (None: it is).

    With ``redirects=False`` its output redirections are left out: the
    permission system judges those as writes of their own.
    """
    if cmd.assignment_only:
        if cmd.argv and cmd.argv[0] not in ("export", "local", "declare", "typeset", "readonly"):
            return f"`{cmd.argv[0]}` changes the shell's state"
        for name, _ in cmd.env:
            if not is_safe_env_name(name, standalone=not cmd.argv):
                return f"setting {name} can change what later commands run"
        return None
    for name, _ in cmd.env:
        if not is_safe_env_name(name):
            return f"the prefix {name}=... can change what the command runs"
    if cmd.escalated:
        return "it runs through sudo"
    for r in cmd.redirects if redirects else ():
        if r.writes_file:
            return f"it writes to {r.target!r}"
    if not cmd.argv:
        return None
    if 0 in cmd.dynamic:
        return "the command name is only known at run time"
    name = cmd.argv[0]
    if "/" in name:
        return f"`{name}` is run by path, not a known read-only command"
    argv = cmd.argv
    if cmd.open_args and name not in ARGS_IRRELEVANT:
        return f"`xargs {name}` gets arguments only known at run time"
    # Args only known at run time may carry options (`find . $X` → -delete).
    dynamic_args = any(i in cmd.dynamic for i in range(1, len(argv)))
    if name in ALWAYS_READ_ONLY:
        if name == "file" and _has_option(argv, ("--compile",), shorts="C"):
            return "`file -C` writes a compiled magic file"
        return None
    if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
        return None
    if name == "date":
        if _has_option(argv, ("--set",), shorts="s"):
            return "`date -s` sets the clock"
        return None
    if name == "hostname":
        return (
            None
            if len(argv) == 1 or all(a.startswith("-") for a in argv[1:])
            else ("`hostname NAME` sets the host name")
        )
    if name in ("uniq",):
        if dynamic_args or len(_positional(argv, ("-f", "-s", "-w"))) > 1:
            return "`uniq IN OUT` writes OUT"
        return None
    if name == "xxd":
        if dynamic_args or _has_option(argv, (), shorts="r") or len(_positional(argv)) > 1:
            return "`xxd IN OUT` / `xxd -r` writes files"
        return None
    if name == "sort":
        if dynamic_args:
            return "`sort` with arguments only known at run time (could be -o)"
        if _has_option(argv, ("--output", "--compress-program"), shorts="o"):
            return "`sort -o` writes a file / --compress-program runs one"
        return None
    if name == "tree":
        if dynamic_args or _has_option(argv, (), shorts="o"):
            return "`tree -o` writes a file"
        return None
    if name == "iconv":
        if dynamic_args or _has_option(argv, ("--output",), shorts="o"):
            return "`iconv -o` writes a file"
        return None
    if name in ("rg",):
        if dynamic_args:
            return "`rg` with arguments only known at run time (could be --pre)"
        if _has_option(argv, ("--pre", "--hostname-bin", "--search-zip"), shorts="z"):
            return "`rg --pre` runs a program on each file"
        return None
    if name == "find":
        if dynamic_args:
            return "`find` with arguments only known at run time (could be -delete)"
        for word in argv[1:]:
            if word in ("-exec", "-execdir", "-ok", "-okdir", "-delete") or word.startswith(
                ("-fprint", "-fls")
            ):
                return f"`find {word}` runs commands or changes files"
        return None
    if name in ("fd", "fdfind"):
        if dynamic_args or _has_option(argv, ("--exec", "--exec-batch"), shorts="xX"):
            return "`fd -x` runs commands"
        return None
    if name == "git":
        if dynamic_args:
            return "`git` with arguments only known at run time"
        return _git_problem(argv)
    return f"`{name}` is not in the read-only set"


def read_only_problem(command: str | ParsedCommand) -> str | None:
    """Why a command line is not read-only (None: every part of it is read-only)."""
    parsed = parse_command(command) if isinstance(command, str) else command
    if not parsed.fully_understood:
        return "the command is not fully understood: " + "; ".join(parsed.reasons)
    if not parsed.commands:
        return "the command is empty"
    for r in parsed.redirects:
        if r.writes_file:
            return f"it writes to {r.target!r}"
    for cmd in parsed.commands:
        problem = command_problem(cmd)
        if problem:
            return problem
    return None


def is_read_only_command(command: str) -> bool:
    """True only when the parse is clean and every simple command is in the read-only set."""
    try:
        return read_only_problem(command) is None
    except Exception:
        return False


# Commands whose arguments never name files they read or write.
ARGS_NOT_PATHS = name_set(
    "echo printf seq true false : pwd sleep wait uname id whoami groups nproc uptime which "
    "type command printenv date test [ [[ hostname export local declare typeset readonly unset "
    "read mapfile readarray getopts"
)


@dataclass(frozen=True, slots=True)
class PathArgument:
    """A word of a command that may name a file (``dynamic``: only known at run time)."""

    word: str
    dynamic: bool


def path_arguments(cmd: SimpleCommand) -> list[PathArgument]:
    """The words of ``cmd`` that may be files it reads or writes (options left out).

    Deliberately generous: a grep pattern is taken for a path too. The caller
    resolves them against the working folder; over-matching only ever asks.
    """
    if cmd.assignment_only or not cmd.argv or os.path.basename(cmd.argv[0]) in ARGS_NOT_PATHS:
        return []
    out: list[PathArgument] = []
    options_done = False
    for i, word in enumerate(cmd.argv[1:], 1):
        dynamic = i in cmd.dynamic
        if dynamic and word == "{}":
            continue  # find -exec's placeholder: the files find itself walks
        if not options_done and word == "--":
            options_done = True
            continue
        if not options_done and word.startswith("-") and len(word) > 1 and not dynamic:
            _, eq, value = word.partition("=")
            if eq and "/" in value:
                out.append(PathArgument(value, False))
            continue
        out.append(PathArgument(word, dynamic))
    return out


# --------------------------------------------------------------------------- recursive reads

_GREPS = name_set("grep egrep fgrep zgrep")
# Searches that walk folders by default (and the working folder when given none).
_RECURSIVE_SEARCHERS = name_set("rg ag ack ack-grep ugrep ug pt sift")
# Commands that put a file's content in their output or in a copy: fed by xargs,
# the files they read are only known at run time.
CONTENT_READERS = name_set(
    "cat head tail less more grep egrep fgrep zgrep rg ag ack strings od hexdump xxd "
    "base64 nl tac sort uniq cut sed awk jq diff cmp paste column fold rev tr cp tar zip "
    "7z rsync scp bat"
)
_FIND_RUNS = name_set("-exec -execdir -ok -okdir")
_FD_RUNS = name_set("-x -X --exec --exec-batch")


@dataclass(frozen=True, slots=True)
class RecursiveRead:
    """Folders a command reads everything under (``grep -r x src``, ``rg x``).

    ``default_cwd``: with no existing file or folder among ``folders`` it walks the
    working folder (``rg TODO``, ``grep -r x``, ``find . | xargs cat``).
    """

    folders: tuple[PathArgument, ...]
    default_cwd: bool


def recursive_read(cmd: SimpleCommand) -> RecursiveRead | None:
    """Whether ``cmd`` reads every file under some folders, and which (None: it does not).

    A deny rule for one file (``Read(.env)``) is slipped past by a search of the
    folder that holds it; the permission system scans such folders for denied files.
    Over-matching only makes it look at more folders.
    """
    if cmd.assignment_only or not cmd.argv:
        return None
    argv = cmd.argv
    name = os.path.basename(argv[0])
    args = tuple(path_arguments(cmd))
    if cmd.open_args and "xargs" in cmd.wrappers and name in CONTENT_READERS:
        return RecursiveRead(args, True)  # the files come from stdin
    if name in _GREPS:
        recursive = _has_option(
            argv, ("--recursive", "--dereference-recursive", "--directories=recurse"), "rR"
        ) or any(a == "-d" and b == "recurse" for a, b in itertools.pairwise(argv))
        return RecursiveRead(args, True) if recursive else None
    if name in _RECURSIVE_SEARCHERS:
        return RecursiveRead(args, True)
    if name == "git" and len(argv) > 1 and argv[1] == "grep":
        return RecursiveRead(args, True)
    if name == "find" and any(w in _FIND_RUNS for w in argv):
        starts = []
        for i, word in enumerate(argv[1:], 1):
            if word.startswith(("-", "(", "!")) and i not in cmd.dynamic:
                break
            starts.append(PathArgument(word, i in cmd.dynamic))
        return RecursiveRead(tuple(starts), True)
    if name in ("fd", "fdfind") and any(w in _FD_RUNS for w in argv):
        return RecursiveRead(args, True)
    copies = {"cp": "rRa", "rsync": "ra", "scp": "r", "zip": "r"}
    if name in copies and _has_option(argv, ("--recursive", "--archive"), copies[name]):
        return RecursiveRead(args, False)
    if name in ("tar", "bsdtar") and _tar_packs(argv):
        return RecursiveRead(args, False)
    if name == "7z" and len(argv) > 1 and argv[1] in ("a", "u"):
        return RecursiveRead(args, False)
    return None


def _tar_packs(argv: Sequence[str]) -> bool:
    """``tar c``/``r``/``u`` (create, append, update) read the files named; ``x``/``t`` do not."""
    first = argv[1] if len(argv) > 1 else ""
    if first and not first.startswith("-") and any(c in first for c in "cru"):
        return True  # `tar czf out.tgz .`: the old bundled form
    return _has_option(argv, ("--create", "--append", "--update"), "cru") is not None


_PATH_LISTERS = name_set("find fd fdfind ls")
_LINE_SELECTORS = name_set("sort uniq head tail grep egrep fgrep cd")


def lists_workspace_paths(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` only prints names of files below its (judged) arguments, or only
    selects lines of its input: what feeds ``xargs cat`` is then a list of those files.

    ``echo /etc/passwd | xargs cat`` reads a file named only at run time; ``find . -name
    '*.py' | xargs wc -l`` reads files below ``.``. A filter that rewrites lines (sed,
    awk, tr, ``grep -o``) can turn those names into any path, so it does not count.
    """
    if cmd.assignment_only or not cmd.argv or cmd.open_args or cmd.env:
        return False
    argv = cmd.argv
    name = os.path.basename(argv[0])
    if command_problem(cmd) is not None:
        return False
    if name in _PATH_LISTERS:
        return True
    if name == "git" and len(argv) > 1:
        if argv[1] == "ls-files":
            return True
        return argv[1] == "diff" and ("--name-only" in argv or "--name-status" in argv)
    if name in ("rg", "grep", "egrep", "fgrep") and _has_option(
        argv, ("--files", "--files-with-matches", "--files-without-match"), "lL"
    ):
        return True
    if name in _LINE_SELECTORS:
        if name in _GREPS and _has_option(argv, ("--only-matching",), "o"):
            return False
        # Reading stdin only: grep's one word is its pattern, the others have none.
        words = _positional(argv, ("-n", "-e", "-m", "-A", "-B", "-C", "-f", "-k", "-t"))
        return name == "cd" or len(words) <= (1 if name in _GREPS else 0)
    return False


# --------------------------------------------------------------------------- classification

_SEARCH = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "locate"})
_READ = name_set(
    "cat head tail wc less more file stat jq nl strings od hexdump xxd tac cut sort uniq diff cmp"
)
_LIST = frozenset({"ls", "tree", "du", "df", "pwd"})
_NEUTRAL = frozenset({"cd", "echo", "printf", "true", "false", ":", "tr", "column", "[["})
_GIT_CLASS = {
    "grep": "search",
    "log": "read",
    "show": "read",
    "diff": "read",
    "blame": "read",
    "cat-file": "read",
    "status": "list",
    "branch": "list",
    "ls-files": "list",
    "ls-tree": "list",
    "tag": "list",
    "remote": "list",
    "stash": "list",
    "worktree": "list",
}


def classify_command(command: str) -> Literal["search", "read", "list"] | None:
    """Whether a read-only command line is a search, a read or a listing (for folding)."""
    try:
        parsed = parse_command(command)
        if read_only_problem(parsed) is not None:
            return None
    except Exception:
        return None
    kinds: set[str] = set()
    for cmd in parsed.commands:
        if cmd.assignment_only or not cmd.argv:
            continue
        name = cmd.argv[0]
        if name in _SEARCH:
            kinds.add("search")
        elif name in _READ:
            kinds.add("read")
        elif name in _LIST:
            kinds.add("list")
        elif name == "git":
            sub = next((a for a in cmd.argv[1:] if not a.startswith("-")), "")
            kind = _GIT_CLASS.get(sub)
            if kind is None:
                return None
            kinds.add(kind)
        elif name in _NEUTRAL:
            continue
        else:
            return None
    for kind in ("search", "read", "list"):
        if kind in kinds:
            return kind  # type: ignore[return-value]
    return None
