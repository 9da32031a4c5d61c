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
from codev_ls.permissions.shell.destructive import is_destructive_words

__all__ = [
    "classify_command",
    "is_destructive_command",
    "is_read_only_command",
    "written_paths",
]


# --------------------------------------------------------------------------- destructive


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
    if any(is_destructive_words(cmd.argv) for cmd in parsed.commands):
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
