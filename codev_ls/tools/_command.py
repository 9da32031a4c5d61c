"""What a shell command is, as far as Bash's traits and prompts need to know.

- read-only / search / read / list: asked of ``codev_ls.permissions.shell``
  (the permission system's parser, which decides rules too). While that module
  is missing every command counts as not read-only — the safe side.
- destructive (``rm``, ``dd``, ``mkfs``, ``git reset --hard``, ``git push
  --force``...): found here by walking the tree-sitter-bash parse, looking
  through wrappers (``sudo``, ``env``, ``xargs``, ``bash -c``...). It only
  decides a warning, never a permission; an unparseable command falls back to
  a word search, erring towards "destructive".
- files written by output redirections (``> out.txt``, ``tee log``), for the
  permission prompt's ``write_paths``: only targets known without expanding
  anything (``> "$X"`` is left to the permission system's own parse).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------- read-only


def _shell_module() -> Any:
    try:
        from codev_ls.permissions import shell  # type: ignore[attr-defined]
    except ImportError:
        return None
    return shell


def is_read_only_command(command: str) -> bool:
    """True only when the permission system's parser says the whole command is read-only."""
    fn = getattr(_shell_module(), "is_read_only_command", None)
    if fn is None:
        return False
    try:
        return bool(fn(command))
    except Exception:
        return False


def classify_command(command: str) -> str | None:
    """``search`` / ``read`` / ``list`` (editors fold these), or None."""
    fn = getattr(_shell_module(), "classify_command", None)
    if fn is None:
        return None
    try:
        kind = fn(command)
    except Exception:
        return None
    if kind is None:
        return None
    for attr in ("value", "kind", "name"):
        inner = getattr(kind, attr, None)
        if isinstance(inner, str):
            kind = inner
            break
    text = str(kind).strip().lower()
    return text if text in ("search", "read", "list") else None


# --------------------------------------------------------------------------- parsing


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass(slots=True)
class ParsedCommand:
    """The simple commands (as word lists) and redirect targets of a command line."""

    commands: list[list[str]] = field(default_factory=list)
    redirect_targets: list[str] = field(default_factory=list)
    clean: bool = True


def _word_text(node: Any) -> str | None:
    """The literal text of a word, or None when it needs expansion to be known."""
    kind = node.type
    text = node.text.decode("utf-8", errors="replace")
    if kind in ("word", "number"):
        return text.replace("\\", "") if "$" not in text and "`" not in text else None
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        return text[1:-1]
    if kind == "concatenation":
        parts = [_word_text(c) for c in node.children]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p)
    return None


def parse_command(command: str, _depth: int = 0) -> ParsedCommand:
    out = ParsedCommand()
    try:
        tree = _parser().parse(command.encode("utf-8", errors="surrogateescape"))
    except Exception:
        out.clean = False
        return out
    out.clean = not tree.root_node.has_error
    for node in _walk(tree.root_node):
        if node.type == "command":
            words: list[str] = []
            for child in node.children:
                if child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
                    continue
                if child.type == "command_name":
                    child = child.children[0] if child.children else child
                text = _word_text(child)
                words.append(text if text is not None else "\x00")
            if words:
                out.commands.append(words)
                inner = _inner_script(words)
                if inner is not None and _depth < 3:
                    nested = parse_command(inner, _depth + 1)
                    out.commands.extend(nested.commands)
                    out.redirect_targets.extend(nested.redirect_targets)
                    out.clean = out.clean and nested.clean
        elif node.type == "file_redirect":
            target = _redirect_target(node)
            if target is not None:
                out.redirect_targets.append(target)
    return out


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


_WRITE_OPS = {">", ">>", ">|", "&>", "&>>", ">&"}


def _redirect_target(node: Any) -> str | None:
    op = None
    dest = None
    for child in node.children:
        if child.type in _WRITE_OPS or child.type in ("<", "<&", "<>"):
            op = child.type
        elif child.type != "file_descriptor" and op is not None and dest is None:
            dest = child
    if op not in _WRITE_OPS or dest is None:
        return None
    text = _word_text(dest)
    if text is None:
        return None
    if op == ">&" and (text.isdigit() or text == "-"):
        return None  # a descriptor duplication, not a file
    return text


# --------------------------------------------------------------------------- wrappers

# Commands that run the command given in their arguments.
_WRAPPERS = {
    "sudo", "doas", "env", "nohup", "nice", "ionice", "time", "timeout", "command",
    "exec", "builtin", "xargs", "stdbuf", "chrt", "setsid", "unbuffer", "caffeinate",
}  # fmt: skip
# Options of wrappers that take a value.
_WRAPPER_VALUE_OPTS = {
    "sudo": {"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D"},
    "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--delimiter", "--max-args"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "stdbuf": {"-i", "-o", "-e"},
}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}


def unwrap(words: list[str]) -> list[str]:
    """The command a wrapper runs: ``sudo -u x rm a`` → ``rm a``."""
    i = 0
    for _ in range(8):
        if i >= len(words):
            return []
        name = os.path.basename(words[i])
        if name not in _WRAPPERS:
            break
        i += 1
        value_opts = _WRAPPER_VALUE_OPTS.get(name, set())
        while i < len(words):
            w = words[i]
            if name == "env" and "=" in w and not w.startswith("-"):
                i += 1
            elif w in value_opts:
                i += 2
            elif w.startswith("-") and w != "-":
                i += 1
            elif name == "timeout" and re.fullmatch(r"[0-9.]+[smhd]?", w):
                i += 1
                break
            else:
                break
    return words[i:]


def _inner_script(words: list[str]) -> str | None:
    """The script of ``bash -c '...'`` / ``eval '...'`` (after wrappers), else None."""
    words = unwrap(words)
    if not words:
        return None
    name = os.path.basename(words[0])
    if name == "eval":
        rest = [w for w in words[1:] if w != "\x00"]
        return " ".join(rest) if rest else None
    if name in _SHELLS:
        for j, w in enumerate(words[1:], 1):
            if w == "-c" or (w.startswith("-") and not w.startswith("--") and "c" in w[1:]):
                if j + 1 < len(words) and words[j + 1] != "\x00":
                    return words[j + 1]
                return None
    return None


# --------------------------------------------------------------------------- destructive


def _is_destructive_words(words: list[str]) -> bool:
    words = unwrap(words)
    if not words:
        return False
    name = os.path.basename(words[0])
    args = words[1:]
    flags = {a for a in args if a.startswith("-")}
    if name in ("rm", "shred", "unlink", "srm", "wipefs", "fdisk", "sfdisk", "parted", "dd"):
        return True
    if name in ("truncate", "mkswap", "crontab") and (name != "crontab" or "-r" in flags):
        return True
    if name.startswith("mkfs") or name == "mke2fs":
        return True
    if name == "mv":
        return not ({"-n", "--no-clobber"} & flags)
    if name == "find":
        return "-delete" in args or any(
            a in ("-exec", "-execdir", "-ok")
            and i + 1 < len(args)
            and args[i + 1] in ("rm", "shred")
            for i, a in enumerate(args)
        )
    if name == "rsync":
        return any(a.startswith("--delete") or a == "--remove-source-files" for a in args)
    if name == "git":
        return _is_destructive_git(args)
    if name in ("docker", "podman"):
        return bool(args) and (
            args[0] in ("rm", "rmi")
            or args[:2] in (["system", "prune"], ["volume", "rm"], ["volume", "prune"])
            or args[:2] in (["image", "prune"], ["container", "prune"])
        )
    if name == "kubectl":
        return bool(args) and args[0] == "delete"
    if name == "terraform":
        return bool(args) and args[0] == "destroy"
    return False


def _is_destructive_git(args: list[str]) -> bool:
    # Skip global options (`git -C dir ...`).
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(args):
        return False
    sub, rest = args[i], args[i + 1 :]
    flags = set(rest)
    if sub == "reset":
        return "--hard" in flags or "--merge" in flags or "--keep" in flags
    if sub == "push":
        return bool(
            {"--force", "-f", "--delete", "-d", "--mirror", "--prune"} & flags
            or any(a.startswith("--force-with-lease") or a.startswith("+") for a in rest)
            or any(a.startswith(":") and len(a) > 1 for a in rest)
        )
    if sub == "clean":
        return not ({"-n", "--dry-run"} & flags)
    if sub == "checkout":
        return "--" in rest or "." in rest or "-f" in flags or "--force" in flags
    if sub == "restore":
        return "--staged" not in flags or "--worktree" in flags or "-W" in flags
    if sub == "branch":
        return "-D" in flags or ("--delete" in flags and ("--force" in flags or "-f" in flags))
    if sub == "stash":
        return bool(rest) and rest[0] in ("drop", "clear")
    if sub in ("filter-branch", "filter-repo"):
        return True
    if sub == "update-ref":
        return "-d" in flags
    return False


_DESTRUCTIVE_WORDS = re.compile(
    r"(?:^|[\s;&|(`$])(?:sudo\s+)?(rm|shred|dd|mkfs(?:\.\w+)?|wipefs|truncate|mv)(?=\s|$)"
    r"|git\s+(?:reset\s+--hard|push\s+.*(?:--force|-f\b)|clean\b)"
)


def is_destructive_command(command: str) -> bool:
    """Whether the command may destroy data (a warning for the user, not a permission)."""
    parsed = parse_command(command)
    if any(_is_destructive_words(words) for words in parsed.commands):
        return True
    if not parsed.clean:
        return bool(_DESTRUCTIVE_WORDS.search(command))
    return False


# --------------------------------------------------------------------------- written files

_NOT_FILES = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"}


def written_paths(command: str, cwd: Path) -> list[Path]:
    """Files the command writes by redirection or ``tee``, resolved against ``cwd``."""
    parsed = parse_command(command)
    targets = list(parsed.redirect_targets)
    for words in parsed.commands:
        inner = unwrap(words)
        if inner and os.path.basename(inner[0]) == "tee":
            targets += [w for w in inner[1:] if not w.startswith("-") and w != "\x00"]
    out: list[Path] = []
    for target in targets:
        if not target or target in _NOT_FILES or target.startswith("/dev/fd/"):
            continue
        path = Path(os.path.expanduser(target))
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        if path not in out:
            out.append(path)
    return out
