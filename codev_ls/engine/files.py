"""File primitives every writer shares: atomic writes that never leave half a file.

A write goes to a temporary file in the same folder, is flushed to disk, takes
the old file's permission bits (and its owner and group where the process may
set them: as root, or a group it belongs to), and is renamed over the target in
one step: a crash (even ``kill -9``) leaves either the old or the new content,
never a mix.

The rename makes a new file: other hard links to the old one keep the old
content (as with editors that save by renaming), and extended attributes or
ACLs of the old file are not carried over. A symlink is written through to its
target and stays a symlink.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically, creating parent folders.

    The file keeps its permission bits when it exists (``mode`` overrides);
    a symlink is written through to its target, which stays a symlink.
    """
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    owner: tuple[int, int] | None = None
    try:
        old = target.stat()
        owner = (old.st_uid, old.st_gid)
        if mode is None:
            mode = stat.S_IMODE(old.st_mode)
    except FileNotFoundError:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    # Imported here: tempfile pulls in shutil, random, bz2, lzma (~10 ms), and the LSP
    # server imports this module before it answers `initialize` (see bench/lsp_latency.py).
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".codev-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if owner is not None and hasattr(os, "chown"):
            _keep_owner(tmp, owner)
        os.chmod(tmp, mode)  # after chown, which may clear set-id bits
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _keep_owner(tmp: str, owner: tuple[int, int]) -> None:
    """Give the new file the old one's owner and group, as far as this process may."""
    st = os.stat(tmp)
    if (st.st_uid, st.st_gid) == owner:
        return
    try:
        os.chown(tmp, *owner)
    except PermissionError:
        # Not root: the group alone may still be ours to give.
        with contextlib.suppress(OSError):
            os.chown(tmp, -1, owner[1])
    except OSError:
        pass


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write text atomically. Line endings are written as given (no translation)."""
    atomic_write_bytes(Path(path), text.encode(encoding))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_within(path: Path, folder: Path) -> bool:
    """True when the real ``path`` lies inside the real ``folder`` (symlinks, ``..`` resolved)."""
    try:
        real = Path(os.path.realpath(path))
        base = Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return real == base or base in real.parents


def display_path(path: Path, root: Path | None) -> str:
    """``path`` relative to the workspace when inside it, else absolute."""
    if root is not None:
        try:
            return str(Path(path).relative_to(root))
        except ValueError:
            pass
    return str(path)
