"""Path checks every file tool makes, with messages the model can act on."""

from __future__ import annotations

import difflib
from pathlib import Path

from codev_ls.engine.files import is_within


def check_file_path(
    file_path: str, root: Path, *, must_exist: bool, has_buffer: bool = False
) -> str | None:
    """Why ``file_path`` cannot be used as a file, or None when it can.

    Relative paths, folders and (when ``must_exist``) missing files are refused;
    a file open in the editor but not yet saved counts as existing.
    """
    path = Path(file_path)
    if not file_path.strip():
        return "file_path is empty: give the absolute path of a file."
    if not path.is_absolute():
        return (
            f"file_path must be an absolute path, got {file_path!r}. "
            f"Did you mean {root / file_path}?"
        )
    if has_buffer:
        return None
    if path.is_dir():
        return (
            f"{path} is a directory, not a file. Use Glob or `ls` (Bash) to list it, and pass a "
            "file's path."
        )
    if must_exist and not path.exists():
        return missing_file_message(path, root)
    if path.exists() and not path.is_file():
        return (
            f"{path} is not a regular file (a device, socket or named pipe); it cannot be read "
            "or written as a file."
        )
    if not path.exists():
        parent = _first_existing_parent(path)
        if parent is not None and not parent.is_dir():
            return f"Cannot create {path}: {parent} is a file, not a folder."
    return None


def _first_existing_parent(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.exists():
            return parent
    return None


def missing_file_message(path: Path, root: Path) -> str:
    """'File does not exist', with the closest names in its folder (typos, wrong extension)."""
    msg = f"File does not exist: {path}."
    folder = path.parent
    try:
        siblings = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    except OSError:
        siblings = []
    close = difflib.get_close_matches(path.name, siblings, n=3, cutoff=0.6)
    stem_matches = [s for s in siblings if Path(s).stem == path.stem and s not in close]
    close += stem_matches[: 3 - len(close)]
    if close:
        msg += " Did you mean " + ", ".join(str(folder / c) for c in close) + "?"
    elif not folder.exists():
        msg += f" The folder {folder} does not exist either."
    if not is_within(path, root):
        msg += f" (The workspace is {root}.)"
    return msg
