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
"""

from __future__ import annotations

import json
import os
import re
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
