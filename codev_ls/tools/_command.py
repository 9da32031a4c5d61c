"""What a shell command is, as far as Bash's traits and prompts need to know.

The parsing is the permission system's (``codev_ls.permissions.shell``, a real
tree-sitter-bash parse that looks through ``sudo``, ``env``, ``xargs``,
``bash -c``, ``find -exec``...), so Bash and the rules never disagree about
what a command runs. On top of it:

- read-only and search / read / list (editors fold these): the permission
  system's own answers, re-exported;
- destructive (``rm``, ``dd``, ``mkfs``, ``git reset --hard``, ``git push
  --force``...): decided here per simple command. It only drives a warning,
  never a permission; a command the parser cannot fully understand falls back
  to a word search, erring towards "destructive";
- files written by output redirections (``> out.txt``) and ``tee``, for the
  permission prompt's ``write_paths`` — only targets known before running
  (``> "$X"`` is the permission system's to judge).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from codev_ls.permissions.shell import classify_command, is_read_only_command, parse_command

__all__ = [
    "classify_command",
    "is_destructive_command",
    "is_read_only_command",
    "written_paths",
]


# --------------------------------------------------------------------------- destructive


def _is_destructive_words(words: tuple[str, ...]) -> bool:
    if not words:
        return False
    name = os.path.basename(words[0])
    args = list(words[1:])
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
    try:
        parsed = parse_command(command)
    except Exception:
        return bool(_DESTRUCTIVE_WORDS.search(command))
    if any(_is_destructive_words(cmd.argv) for cmd in parsed.commands):
        return True
    if not parsed.fully_understood:
        return bool(_DESTRUCTIVE_WORDS.search(command))
    return False


# --------------------------------------------------------------------------- written files


def written_paths(command: str, cwd: Path) -> list[Path]:
    """Files the command writes by redirection or ``tee``, resolved against ``cwd``."""
    parsed = parse_command(command)
    targets = list(parsed.write_targets())
    for cmd in parsed.commands:
        if cmd.name == "tee":
            targets += [
                w
                for i, w in enumerate(cmd.argv[1:], 1)
                if not w.startswith("-") and not cmd.is_dynamic(i)
            ]
    out: list[Path] = []
    for target in targets:
        if not target or target.startswith("/dev/"):
            continue
        path = Path(os.path.expanduser(target))
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        if path not in out:
            out.append(path)
    return out
