"""Named terminal sessions: a session's state kept on disk between ``codev-ls tool`` runs.

Each terminal run is a new process, so without this a script could never Read a
file and then Edit it (Edit needs a Read earlier in the same session). With
``--session NAME`` the session's id, shell folder and read records are loaded
before the run and saved after it, atomically.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from codev_ls.engine.context import FileReadRecord, Session
from codev_ls.engine.files import atomic_write_text

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class SessionNameError(ValueError):
    pass


def session_file(config: Path, name: str) -> Path:
    if not _NAME.match(name):
        raise SessionNameError(
            f"invalid session name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)"
        )
    return config / "terminal-sessions" / f"{name}.json"


def _record_to_json(rec: FileReadRecord) -> dict[str, Any]:
    return {
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
        "read_state": [_record_to_json(r) for r in session.read_state.values()],
    }
    atomic_write_text(path, json.dumps(data, indent=1))


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
        session.read_state[rec.path] = rec
    return True
