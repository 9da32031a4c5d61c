"""Named terminal sessions: a session's state kept on disk between ``codev-ls tool`` runs.

Each terminal run is a new process, so without this a script could never Read a
file and then Edit it (Edit needs a Read earlier in the same session). With
``--session NAME`` the session's id, shell folder, read records and change list
are loaded before the run and saved after it, atomically — so ``codev-ls
changes --session NAME`` can list the changes and ``codev-ls undo`` undo them.

Read records are keyed by the real path (symlinks resolved), as the live
session keys them; the change list keeps the last :data:`MAX_CHANGES` changes
whose before/after texts together fit in :data:`MAX_CHANGE_CHARS` (a change of
a huge file is left out rather than bloating the file on every run).

Also here: the retention of session data folders (``~/.codev/sessions/<id>``,
where Bash outputs, task logs and large results are saved): removed after
``sessionData.maxAgeDays`` (30) days, and oldest first while all of them are
over ``sessionData.maxTotalMB`` (2048), checked when an engine starts.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codev_ls.engine.context import FileChange, FileReadRecord, Session
from codev_ls.engine.files import atomic_write_text

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_CHANGES = 100
MAX_CHANGE_CHARS = 4_000_000


class SessionNameError(ValueError):
    pass


def session_file(config: Path, name: str) -> Path:
    if not _NAME.match(name):
        raise SessionNameError(
            f"invalid session name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)"
        )
    return config / "terminal-sessions" / f"{name}.json"


def _record_to_json(key: Path, rec: FileReadRecord) -> dict[str, Any]:
    return {
        "key": str(key),
        "path": str(rec.path),
        "mtime_ns": rec.mtime_ns,
        "size": rec.size,
        "digest": rec.digest,
        "partial": rec.partial,
    }


def save_session(session: Session, path: Path) -> None:
    """Write the parts of ``session`` that must outlive the process."""
    data = {
        "id": session.id,
        "root": str(session.root),
        "cwd": str(session.cwd) if session.cwd else None,
        "read_state": [_record_to_json(k, r) for k, r in session.read_state.items()],
        "changes": [_change_to_json(c) for c in _kept_changes(session.changes)],
    }
    atomic_write_text(path, json.dumps(data, indent=1))


def _kept_changes(changes: list[FileChange]) -> list[FileChange]:
    small = [c for c in changes if len(c.before or "") + len(c.after) <= MAX_CHANGE_CHARS]
    return small[-MAX_CHANGES:]


def _change_to_json(change: FileChange) -> dict[str, Any]:
    return {
        "path": str(change.path),
        "before": change.before,
        "after": change.after,
        "tool_name": change.tool_name,
        "tool_use_id": change.tool_use_id,
        "diff": change.diff,
    }


def _change_from_json(item: Any) -> FileChange | None:
    if not isinstance(item, dict):
        return None
    before, after = item.get("before"), item.get("after")
    names = (item.get("path"), item.get("tool_name"), item.get("tool_use_id"))
    if not all(isinstance(n, str) for n in names) or not isinstance(after, str):
        return None
    if before is not None and not isinstance(before, str):
        return None
    diff = item.get("diff")
    return FileChange(
        path=Path(item["path"]),
        before=before,
        after=after,
        tool_name=item["tool_name"],
        tool_use_id=item["tool_use_id"],
        diff=diff if isinstance(diff, str) else "",
    )


def load_session(session: Session, path: Path) -> bool:
    """Restore a saved session into ``session`` (same workspace only); False when none."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return False  # an unreadable state file starts a fresh session
    if not isinstance(data, dict) or data.get("root") != str(session.root):
        return False
    if isinstance(data.get("id"), str) and _NAME.match(data["id"]):
        session.id = data["id"]
    cwd = data.get("cwd")
    if isinstance(cwd, str) and Path(cwd).is_dir():
        session.cwd = Path(cwd)
    for item in data.get("read_state") or []:
        try:
            rec = FileReadRecord(
                path=Path(item["path"]),
                mtime_ns=int(item["mtime_ns"]),
                size=int(item["size"]),
                digest=item.get("digest"),
                partial=bool(item.get("partial", False)),
            )
        except (KeyError, TypeError, ValueError):
            continue
        # The live session's key: the real path (a Read through a symlink, then a Write
        # of the symlink, must find the record). Older files have no key: resolve now.
        key = item.get("key")
        session.read_state[Path(key if isinstance(key, str) else os.path.realpath(rec.path))] = rec
    for item in data.get("changes") or []:
        change = _change_from_json(item)
        if change is not None:
            session.changes.append(change)
    return True


# --------------------------------------------------------------------------- retention

# Session data folders (``~/.codev/sessions/<id>``: saved Bash outputs, task logs,
# large results, the audit log) are removed when older than this many days...
DEFAULT_MAX_AGE_DAYS = 30
# ...and, oldest first, while all of them together are over this size.
DEFAULT_MAX_TOTAL_MB = 2048
# Folders touched this recently are never removed (a session may be using them).
ACTIVE_SECONDS = 3600
# The clean-up runs at most this often (the terminal runner starts an engine per run).
CLEANUP_EVERY_SECONDS = 3600
_STAMP = ".last-cleanup"


@dataclass(frozen=True, slots=True)
class Retention:
    """How long session data folders are kept: ``sessionData`` in the user settings."""

    max_age_days: float | None = DEFAULT_MAX_AGE_DAYS  # None: no age limit
    max_total_bytes: int | None = DEFAULT_MAX_TOTAL_MB * 2**20  # None: no size cap


def load_retention(config: Path) -> Retention:
    """``{"sessionData": {"maxAgeDays": 30, "maxTotalMB": 2048}}`` from the user settings.

    Only the user's own settings count (a repository must not decide how long the
    user's data is kept). 0 or a negative number turns that limit off; anything
    that is not a number keeps the default.
    """
    try:
        data = json.loads((config / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Retention()
    section = data.get("sessionData") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return Retention()

    def number(key: str, default: float) -> float | None:
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return default
        return value if value > 0 else None

    mb = number("maxTotalMB", DEFAULT_MAX_TOTAL_MB)
    return Retention(
        max_age_days=number("maxAgeDays", DEFAULT_MAX_AGE_DAYS),
        max_total_bytes=int(mb * 2**20) if mb is not None else None,
    )


@dataclass(slots=True)
class _Folder:
    path: Path
    newest: float  # the latest modification time of the folder or anything in it
    size: int


def _survey(folder: Path) -> _Folder:
    newest = 0.0
    size = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in (*filenames, *dirnames, "."):
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            newest = max(newest, st.st_mtime)
            if name != "." and name in filenames:
                size += st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size
    return _Folder(folder, newest, size)


def prune_session_data(
    base: Path,
    retention: Retention,
    *,
    keep: frozenset[str] = frozenset(),
    now: float | None = None,
) -> list[Path]:
    """Remove old session data folders under ``base``; returns those removed.

    First every folder whose newest file is older than ``max_age_days``; then,
    while the rest together exceed ``max_total_bytes``, the least recently
    used. Folders named in ``keep`` (the sessions of this process) and folders
    touched in the last hour are never removed.
    """
    import shutil
    import time

    now = time.time() if now is None else now
    try:
        entries = [e for e in os.scandir(base) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    # Every folder counts towards the total; only those not in use may go.
    folders = [_survey(Path(e.path)) for e in entries]
    removed: list[Path] = []

    def remove(folder: _Folder) -> None:
        shutil.rmtree(folder.path, ignore_errors=True)
        if not folder.path.exists():
            removed.append(folder.path)

    candidates = [f for f in folders if f.path.name not in keep and now - f.newest > ACTIVE_SECONDS]
    if retention.max_age_days is not None:
        limit = retention.max_age_days * 86400
        for folder in [f for f in candidates if now - f.newest > limit]:
            remove(folder)
    if retention.max_total_bytes is not None:
        left = [f for f in folders if f.path not in removed]
        total = sum(f.size for f in left)
        for folder in sorted((f for f in left if f in candidates), key=lambda f: f.newest):
            if total <= retention.max_total_bytes:
                break
            remove(folder)
            if folder.path in removed:
                total -= folder.size
    return removed


def cleanup_session_data(base: Path, config: Path, keep: frozenset[str]) -> list[Path]:
    """:func:`prune_session_data` with the user's settings, at most once an hour per ``base``."""
    import time

    stamp = base / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < CLEANUP_EVERY_SECONDS:
            return []
    except OSError:
        pass
    if not base.is_dir():
        return []
    try:
        stamp.touch()
    except OSError:
        return []
    return prune_session_data(base, load_retention(config), keep=keep)


def start_session_data_cleanup(base: Path, config: Path, keep: frozenset[str]) -> None:
    """Run :func:`cleanup_session_data` in a daemon thread (starting never waits for it)."""
    import logging
    import threading

    def run() -> None:
        try:
            removed = cleanup_session_data(base, config, keep)
        except Exception:  # never let a clean-up break a start
            logging.getLogger(__name__).warning("session data clean-up failed", exc_info=True)
            return
        if removed:
            logging.getLogger(__name__).info("removed %d old session data folders", len(removed))

    threading.Thread(target=run, name="codev-session-cleanup", daemon=True).start()
