"""The built-in read-only set: commands that run without asking in default mode.

A command line is read-only only when the parse is clean and *every* simple
command in it is in the set with harmless arguments (``find`` without
``-exec``/``-delete``, ``git`` status/diff/log/show and listing ``branch``,
``sort`` without ``-o``...), no env prefix that can change what runs, no sudo,
no output redirection to a file.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Callable, Iterable, Sequence
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


def long_option_matches(word: str, name: str) -> bool:
    """Whether ``word`` is the long option ``name`` as GNU getopt_long and git's
    parse-options read it: spelt in full, or any prefix of it (``--outp`` is
    ``--output``, ``--compress-prog`` is ``--compress-program``), with or without
    ``=value``. A ``name`` with ``=value`` (``--directories=recurse``) also needs
    that value. Over-matching an ambiguous prefix only ever makes a command ask."""
    if not word.startswith("--") or not name.startswith("--"):
        return False
    key, eq, value = word.partition("=")
    name_key, name_eq, name_value = name.partition("=")
    if len(key) <= 2 or not name_key.startswith(key):
        return False
    return not name_eq or (bool(eq) and value == name_value)


def _short_letters(word: str, takes_value: str) -> str:
    """The option letters of a short-option cluster (``-rSo`` → ``rSo``), stopping at a
    letter that takes a value (the rest of the word is that value: ``-Iseconds``)."""
    out = []
    for c in word[1:]:
        out.append(c)
        if c in takes_value:
            break
    return "".join(out)


def _has_option(
    argv: Sequence[str], names: Iterable[str], shorts: str = "", *, takes_value: str = ""
) -> str | None:
    """The first option in ``argv`` among ``names`` (long, abbreviations included) or
    the short letters ``shorts`` (in a cluster too), for finding *dangerous* options.

    It errs towards finding one: ``--`` does not stop the scan (``sort -T -- -o x``
    gives ``--`` to ``-T`` and still writes ``x``), and letters after a value-taking
    letter are read as options unless ``takes_value`` names that letter.
    """
    names = tuple(names)
    skip_next = False
    for word in argv[1:]:
        if skip_next:
            skip_next = False
            continue
        if word.startswith("--"):
            if any(long_option_matches(word, name) for name in names):
                return word
            continue
        if shorts and word.startswith("-") and len(word) > 1:
            letters = _short_letters(word, takes_value)
            if any(c in shorts for c in letters):
                return word
            if letters and letters[-1] in takes_value and letters == word[1:]:
                skip_next = True  # `-d STRING`: the next word is the value
    return None


def _has_flag(argv: Sequence[str], names: Iterable[str], shorts: str = "") -> str | None:
    """The first option among ``names`` (spelt in full) or ``shorts`` before ``--``:
    for options that *grant* something (``grep -l`` lists file names), where reading
    an option that is not there would be the unsafe error."""
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
    "cksum seq test [ [[ column od hexdump strings tac rev paste fold "
    "expand unexpand join base64 nproc uptime cd wait sleep locate whereis lsblk "
    "read mapfile readarray getopts"
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
# Options of git's read subcommands that write a file or run a program (git's
# parse-options takes any unambiguous prefix of them too: `--open-files=...`).
_GIT_DANGEROUS_OPTIONS = (
    "--output",
    "--ext-diff",
    "--textconv",
    "--open-files-in-pager",
    "--exec",
    "--filters",
)
# Real options shorter than a dangerous one they are a prefix of: spelt in full they
# are themselves (git prefers an exact match), not an abbreviation.
_GIT_EXACT_SAFE = frozenset({"--text"})

# `git config`: the actions that only read, and the options that may go with them.
_GIT_CONFIG_READ_ACTIONS = {"--get": 2, "--get-all": 2, "--get-regexp": 2, "--list": 0, "-l": 0}
_GIT_CONFIG_FLAGS = name_set(
    "--global --system --local --worktree --show-origin --show-scope -z --null --name-only "
    "--bool --int --bool-or-int --path --expiry-date --includes --no-includes --fixed-value "
    "--all --regexp --no-type"
)
_GIT_CONFIG_VALUED = name_set("-f --file --blob --type --default --value")
# `git help` shows text; with a topic it starts a man viewer, a browser or info
# (configured by `man.viewer`, `help.browser`...: a program of the config's choosing).
_GIT_HELP_FLAGS = name_set("-a --all -g --guides -c --config --no-external-commands --no-aliases")


def _git_config_problem(args: Sequence[str]) -> str | None:
    """``git config`` is read-only only as ``--get``/``--get-all``/``--get-regexp``/
    ``--list`` (or ``get NAME``/``list``) with reading options and at most the names
    and patterns they take: ``git config core.fsmonitor 'cmd' list`` *sets* a key."""
    rest = list(args)
    new_style = rest[:1] in (["get"], ["list"])
    action = rest.pop(0) if new_style else None
    positionals: list[str] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        key, eq, _ = word.partition("=")
        if word == "--":
            positionals.extend(rest[i + 1 :])
            break
        if not new_style and word in _GIT_CONFIG_READ_ACTIONS:
            if action is not None:
                return "`git config` with two actions"
            action = word
        elif word in _GIT_CONFIG_FLAGS:
            pass
        elif key in _GIT_CONFIG_VALUED:
            if not eq:
                i += 1  # the value is the next word
        elif word.startswith("-"):
            return f"`git config {word}` is not a reading option"
        else:
            positionals.append(word)
        i += 1
    if action is None:
        return "only `git config --get/--get-all/--get-regexp/--list` is read-only"
    limit = {"get": 1, "list": 0}.get(action, _GIT_CONFIG_READ_ACTIONS.get(action, 0))
    if len(positionals) > limit or (
        action in ("get", "--get", "--get-all", "--get-regexp") and not positionals
    ):
        return f"`git config {action}` with these arguments sets or changes keys"
    return None


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
        ["git", *(a for a in args if a not in _GIT_EXACT_SAFE)], _GIT_DANGEROUS_OPTIONS
    )
    if bad:
        return f"`git {sub} {bad}` can write files or run programs"
    if sub == "grep" and _has_option(["git", *args], (), shorts="O"):
        return "`git grep -O` opens files in a pager"
    if sub == "help" and any(a not in _GIT_HELP_FLAGS for a in args):
        return "`git help TOPIC` starts a man page viewer, browser or info reader"
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
    if sub == "config":
        return _git_config_problem(args)
    return None


# A variable named like a secret (API keys, tokens, passwords): a read-only command that
# expands one (`echo $OPENAI_API_KEY`) puts the secret in the model's context.
_SECRET_VAR = re.compile(
    r"\$\{?[#!]?([A-Z0-9_]*(?<![A-Z0-9])(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|"
    r"CREDENTIALS?|AUTH)(?![A-Z0-9])[A-Z0-9_]*)"
)
_DECLARATIONS = ("export", "local", "declare", "typeset", "readonly")
# `hostname` options that only print (the others set the name: -F FILE, -b, NAME).
_HOSTNAME_SHOW = name_set(
    "-s --short -f --fqdn --long -d --domain -i --ip-address -I --all-ip-addresses -a --alias "
    "-A --all-fqdns -y --yp --nis -V --version -h --help"
)
# jq filters that read the server's environment (`env`, `$ENV`), or a filter from a file.
_JQ_ENV = re.compile(r"(?<![.\w$])env\b|\$ENV\b|\$__prog_args")


def secret_reference(cmd: SimpleCommand) -> str | None:
    """The secret-looking variable a command expands (``$OPENAI_API_KEY``), if any."""
    texts = [w for i, w in enumerate(cmd.argv) if i in cmd.dynamic]
    texts += [v for _, v in cmd.env if "$" in v]
    texts += [r.target for r in cmd.redirects if r.dynamic]
    for text in texts:
        m = _SECRET_VAR.search(text)
        if m:
            return m.group(1)
    return None


def _may_be_option(source: str) -> bool:
    """Whether a word only known at run time may turn out to be an option: it starts
    with an expansion or a glob (a planted file named ``--set=...`` matches ``*``)."""
    text = source.lstrip("\"'")
    return not text or text[0] in "-$`*?[{"


def _dynamic_options(cmd: SimpleCommand, value_options: Iterable[str] = ()) -> bool:
    """Whether a run-time word of ``cmd`` may be an option (not the value of one)."""
    takes = set(value_options)
    argv = cmd.argv
    return any(
        _may_be_option(argv[i])
        and not (i > 1 and (i - 1) not in cmd.dynamic and argv[i - 1] in takes)
        for i in sorted(cmd.dynamic)
        if i > 0
    )


def command_problem(cmd: SimpleCommand, *, redirects: bool = True) -> str | None:
    """Why one simple command is not read-only (None: it is).

    With ``redirects=False`` its output redirections are left out: the
    permission system judges those as writes of their own.
    """
    secret = secret_reference(cmd)
    if secret is not None:
        return f"it expands ${secret}, which looks like a secret (the output would show it)"
    if cmd.assignment_only:
        if cmd.argv and cmd.argv[0] not in _DECLARATIONS:
            return f"`{cmd.argv[0]}` changes the shell's state"
        if cmd.argv and _prints_variables(cmd.argv):
            return f"`{' '.join(cmd.argv)}` prints the shell's variables, secrets included"
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
        return None
    if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
        return None
    if name == "file":
        if _dynamic_options(cmd, ("-m", "-f", "-F", "-e", "-P")):
            return "`file` with options only known at run time (could be --compile)"
        if _has_option(argv, ("--compile",), shorts="C", takes_value="mfFeP"):
            return "`file -C` writes a compiled magic file"
        return None
    if name == "jq":
        if _dynamic_options(cmd, ("--arg", "--argjson", "--indent", "-L")):
            return "`jq` with options only known at run time"
        if _has_option(argv, ("--from-file",), shorts="f"):
            return "`jq -f` runs a filter from a file, which is not checked"
        if any(_JQ_ENV.search(a) for a in argv[1:]):
            return "the jq filter reads the environment, secrets included"
        return None
    if name == "printenv":
        names = [a for a in argv[1:] if not a.startswith("-")]
        if not names or dynamic_args:
            return "`printenv` prints the whole environment, secrets included"
        if any(_SECRET_VAR.search("$" + n) for n in names):
            return "`printenv` of a variable that looks like a secret"
        return None
    if name == "date":
        if _dynamic_options(cmd, ("-d", "--date", "-f", "--file", "-r", "--reference")):
            return "`date` with options only known at run time (could be --set)"
        if _has_option(argv, ("--set",), shorts="s", takes_value="dfrI"):
            return "`date -s` sets the clock"
        return None
    if name == "hostname":
        if dynamic_args or any(a not in _HOSTNAME_SHOW for a in argv[1:]):
            return "`hostname` with these arguments sets the host name"
        return None
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
        if dynamic_args or _has_option(argv, ("--output",), shorts="o"):
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


def _prints_variables(argv: Sequence[str]) -> bool:
    """``export``, ``declare -p``, ``readonly``...: with no names they list every
    variable and its value (``declare -f``/``-F`` list only functions)."""
    operands = [a for a in argv[1:] if not a.startswith(("-", "+"))]
    if operands:
        return False
    letters = {c for a in argv[1:] for c in a[1:]}
    return not letters or not letters <= {"f", "F"}


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
    "type command printenv test [ [[ export local declare typeset readonly unset "
    "read mapfile readarray getopts"
)


@dataclass(frozen=True, slots=True)
class PathArgument:
    """A word of a command that may name a file (``dynamic``: only known at run time)."""

    word: str
    dynamic: bool


# Options that make a command read the *names* of the files to read from a file
# (`file -f list`, `wc --files0-from=list`): which files those are is only known at run time.
_NAME_LIST_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "file": (("--files-from",), "f"),
    "wc": (("--files0-from",), ""),
    "sort": (("--files0-from",), ""),
    "du": (("--files0-from",), ""),
    "tar": (("--files-from",), "T"),
    "bsdtar": (("--files-from",), "T"),
    "find": ((), ""),  # `-files0-from`: single dash, checked below
    "rsync": (("--files-from",), ""),
    "cpio": ((), ""),
    "zip": ((), ""),
}


def path_arguments(cmd: SimpleCommand) -> list[PathArgument]:
    """The words of ``cmd`` that may be files it reads or writes (options left out).

    Deliberately generous: a grep pattern is taken for a path too, and so is the
    tail of an option word that holds a ``/`` (``-f/etc/passwd``, ``--file=../x``),
    and what follows an ``@`` (``curl -d @/etc/passwd``). The caller resolves them
    against the working folder; over-matching only ever asks. An option that reads
    the names of the files from a file (``file -f list``) adds a path only known
    at run time.
    """
    if cmd.assignment_only or not cmd.argv:
        return []
    if os.path.basename(cmd.argv[0]) in ARGS_NOT_PATHS:
        # No file arguments, but the shell still expands a glob among them: a listing
        # (`echo /etc/ss*/*` names what is there).
        return [
            PathArgument(word, True)
            for i, word in enumerate(cmd.argv[1:], 1)
            if i in cmd.dynamic and any(c in word for c in "*?[")
        ]
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
            key, eq, value = word.partition("=")
            if eq and value and not _pattern_option(key):
                # `--file=.env`, `--from-file=x`: any option's value may be a file.
                out.append(PathArgument(value.removeprefix("@"), False))
            elif not eq and not word.startswith("--"):
                # `-f/etc/passwd`, `-bf../x`, `-f.env`: some letter takes the rest as its value.
                out.extend(
                    PathArgument(word[k:], False)
                    for k in range(2, len(word))
                    if ("/" in word[k:] or "." in word[k:]) and word[k - 1].isalpha()
                )
            continue
        if not dynamic and "@" in word and "/" in word.split("@", 1)[1]:
            out.append(PathArgument(word.split("@", 1)[1], False))  # `-d @/etc/passwd`
        out.append(PathArgument(word, dynamic))
    if _reads_name_list(cmd):
        out.append(PathArgument("(the files named in a list)", True))
    return out


# Options whose value is a pattern of names or a format, never a file to read.
_PATTERN_OPTIONS = name_set(
    "--include --exclude --exclude-dir --glob --iglob --type --type-not --format --pretty "
    "--color --colour --date --since --until --after --before --author --committer --sort"
)


def _pattern_option(key: str) -> bool:
    return key in _PATTERN_OPTIONS


def _reads_name_list(cmd: SimpleCommand) -> bool:
    name = os.path.basename(cmd.argv[0])
    spec = _NAME_LIST_OPTIONS.get(name)
    if spec is None:
        return False
    if name == "find":
        return any(w == "-files0-from" for w in cmd.argv)
    if name == "cpio":
        return True  # reads the names from stdin (`-o`, `-p`)
    if name == "zip":
        return _has_option(cmd.argv, (), shorts="@") is not None
    longs, shorts = spec
    return _has_option(cmd.argv, longs, shorts) is not None


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
    # It follows symbolic links inside the folders (`grep -R`, `rg -L`): a link in them
    # to a file outside the workspace is read too.
    follows_links: bool = False


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
    if _reads_name_list(cmd):
        # `sort --files0-from=-`, `wc --files0-from=list`: the files named in a list, which
        # may be any file (as for xargs): every file under the working folder counts.
        return RecursiveRead(args, True)
    if name in ("diff", "colordiff") or (name == "git" and "diff" in argv and "--no-index" in argv):
        # A diff of folders reads the files they share (`-r`: below them too), and with
        # `-N` prints in full those only one side has: every file under the folders.
        return RecursiveRead(args, False)
    if name in _GREPS:
        recursive = _has_option(
            argv, ("--recursive", "--dereference-recursive", "--directories=recurse"), "rR"
        ) or any(
            (a == "-d" or long_option_matches(a, "--directories")) and b == "recurse"
            for a, b in itertools.pairwise(argv)
        )
        follows = _has_option(argv, ("--dereference-recursive",), "R") is not None
        return RecursiveRead(args, True, follows) if recursive else None
    if name in _RECURSIVE_SEARCHERS:
        shorts = {"rg": "L", "ag": "f", "ugrep": "RS", "ug": "RS"}.get(name, "")
        follows = _has_option(argv, ("--follow", "--dereference-recursive"), shorts)
        return RecursiveRead(args, True, follows is not None)
    if name == "git" and len(argv) > 1 and argv[1] == "grep":
        return RecursiveRead(args, True)
    if name == "find" and any(w in _FIND_RUNS for w in argv):
        starts = []
        follows = False
        for i, word in enumerate(argv[1:], 1):
            if word in ("-L", "-H") and not starts:
                follows = follows or word == "-L"
                continue
            if word.startswith(("-", "(", "!")) and i not in cmd.dynamic:
                break
            starts.append(PathArgument(word, i in cmd.dynamic))
        follows = follows or "-follow" in argv
        return RecursiveRead(tuple(starts), True, follows)
    if name in ("fd", "fdfind") and any(w in _FD_RUNS for w in argv):
        follows = _has_option(argv, ("--follow",), "L") is not None
        return RecursiveRead(args, True, follows)
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


def follows_links(cmd: SimpleCommand) -> bool:
    """Whether ``cmd`` walks into the folders symbolic links point to (``find -L``,
    ``rg -L``, ``grep -R``, ``ls -RL``...): what it lists or reads may then lie
    anywhere a link in the workspace leads."""
    if cmd.assignment_only or not cmd.argv:
        return False
    argv = cmd.argv
    name = os.path.basename(argv[0])
    if name == "find":
        return any(w in ("-L", "-follow") for w in argv)
    if name in ("fd", "fdfind", "rg"):
        return _has_option(argv, ("--follow",), "L") is not None
    if name == "ls":
        return _has_option(argv, ("--dereference",), "L") is not None
    recursive = recursive_read(cmd)
    return recursive is not None and recursive.follows_links


def listed_link_filter(cmd: SimpleCommand) -> Callable[[str], bool] | None:
    """For a listing that does not follow links, which symbolic links it can print
    (None: any). ``find -type f`` prints none (a link is type ``l``), ``find -name
    '*.py'`` only those so named; an expression with ``-o``, ``!`` or ``-not`` is not
    read that closely."""
    argv = cmd.argv
    if not argv or os.path.basename(argv[0]) != "find" or follows_links(cmd):
        return None
    if any(w in ("-o", "-or", "!", "-not", ",", "(", ")") for w in argv):
        return None
    types = [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("-type", "-xtype")]
    if any(w == "-xtype" for w in argv):
        return None
    if types and all("l" not in t for t in types):
        return lambda path: False
    names = [
        (argv[i + 1], w == "-iname") for i, w in enumerate(argv[:-1]) if w in ("-name", "-iname")
    ]
    if not names:
        return None

    def counts(path: str) -> bool:
        base = os.path.basename(path)
        return all(
            fnmatch.fnmatchcase(base.casefold() if fold else base, pat.casefold() if fold else pat)
            for pat, fold in names
        )

    return counts


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
    if name in ("rg", "grep", "egrep", "fgrep") and _has_flag(
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
