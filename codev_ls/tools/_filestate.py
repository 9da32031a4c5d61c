"""What the model has seen of a file, and whether that is still what is there.

The stale-read rule (PROTOCOL.md): Edit, Write and NotebookEdit of an existing
file need a Read of it earlier in the session, and refuse when the file changed
on disk or in its editor buffer since. "Changed" means *content*: a file that
was only touched, or a buffer saved without changes, is not stale.

Read records hash disk bytes, or the buffer's text when the file is open; the
check accepts either form, computed from what is there now.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from codev_ls.bridge import BufferSnapshot
from codev_ls.engine.context import FileReadRecord, Session, digest_bytes, digest_text
from codev_ls.engine.tool import StaleReadError, ToolError
from codev_ls.tools._text import NotText, decode_bytes, detect_line_ending

# Edit and Write load whole files; past this they refuse (a window-reading tool fits better).
MAX_EDIT_BYTES = 256 * 1024 * 1024


def state_key(path: Path) -> Path:
    """The key of ``session.read_state``: the real path (symlinks resolved)."""
    return Path(os.path.realpath(path))


@dataclass(slots=True)
class CurrentFile:
    """A file as the user sees it now: the open buffer, else the disk."""

    path: Path
    exists: bool
    text: str | None  # None: a new file
    encoding: str
    line_ending: str
    buffer: BufferSnapshot | None = None
    raw: bytes | None = None  # the disk bytes, when read from disk

    @property
    def from_buffer(self) -> bool:
        return self.buffer is not None


def load_current(path: Path, buffer: BufferSnapshot | None) -> CurrentFile:
    """Load ``path`` for an edit; raises :class:`ToolError` for binary or huge files."""
    raw: bytes | None = None
    encoding = "utf-8"
    exists = path.exists()
    if exists:
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
        if size > MAX_EDIT_BYTES and buffer is None:
            raise ToolError(
                f"{path} is {size / 2**20:,.0f} MiB, too large to edit as a whole "
                f"(limit {MAX_EDIT_BYTES // 2**20} MiB). Change it with a script (Bash) instead."
            )
        try:
            raw = path.read_bytes()
        except PermissionError as exc:
            raise ToolError(f"Permission denied reading {path}.") from exc
        except OSError as exc:
            raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
        try:
            decoded = decode_bytes(raw)
        except NotText as exc:
            if buffer is None:
                raise ToolError(f"{path} is a binary file; it cannot be edited as text.") from exc
        else:
            encoding = decoded.encoding
            if buffer is None:
                return CurrentFile(
                    path, True, decoded.text, encoding, decoded.line_ending, None, raw
                )
    if buffer is not None:
        return CurrentFile(
            path, True, buffer.text, encoding, detect_line_ending(buffer.text), buffer, raw
        )
    return CurrentFile(path, False, None, encoding, "\n")


def _current_digests(current: CurrentFile) -> Iterator[str]:
    """Every digest form a Read of the file as it is now could have recorded.

    Made one at a time (hashing 10 MB twice when the first matches is waste).
    """
    if current.buffer is not None:
        yield digest_text(current.buffer.text)
        try:
            yield digest_bytes(current.buffer.text.encode(current.encoding))
        except UnicodeEncodeError:
            pass
    elif current.raw is not None:
        yield digest_bytes(current.raw)
        if current.text is not None:
            yield digest_text(current.text)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def check_fresh(session: Session, current: CurrentFile, *, action: str) -> None:
    """Refuse (:class:`StaleReadError`) unless the model read this file and it is unchanged.

    New files need no read. ``action`` names what was refused ("edit", "overwrite").
    """
    if not current.exists:
        return
    path = current.path
    record = session.read_state.get(state_key(path))
    if record is None:
        raise StaleReadError(
            f"You have not read {path} in this session. Read it first (the Read tool), "
            f"then {action} it."
        )
    if _unchanged(record, current):
        return
    where = "in the editor (unsaved changes)" if current.from_buffer else "on disk"
    raise StaleReadError(
        f"{path} has changed {where} since you last read it (by the user or a tool): "
        f"read it again before you {action} it, so your change is made against what is there now."
    )


def _unchanged(record: FileReadRecord, current: CurrentFile) -> bool:
    stat = _stat(current.path)
    if record.digest is None:
        # A window of a huge file: only size and modification time were recorded.
        return stat is not None and (record.mtime_ns, record.size) == stat
    # Content, not timestamps: a touched file is not stale, a same-second rewrite is.
    return any(digest == record.digest for digest in _current_digests(current))


def record_read(
    session: Session,
    path: Path,
    *,
    text: str | None = None,
    data: bytes | None = None,
    buffer: BufferSnapshot | None = None,
    digest: str | None = None,
    stat: tuple[int, int] | None = None,
    partial: bool = False,
) -> FileReadRecord:
    """Remember what the model has now seen of ``path`` (after a Read, Edit or Write).

    The digest is of the buffer's text, the disk bytes, the text written, or
    given (None for a window of a huge file: then size and time are compared).
    ``stat`` is the (mtime_ns, size) of the version read, when the reader knows it.
    """
    mtime_ns, size = stat or _stat(path) or (0, 0)
    if buffer is not None:
        digest = digest_text(buffer.text)
        size = len(buffer.text)
    elif data is not None:
        digest = digest_bytes(data)
    elif text is not None:
        digest = digest_text(text)
    record = FileReadRecord(
        path=path,
        mtime_ns=mtime_ns,
        size=size,
        digest=digest,
        buffer_version=buffer.version if buffer is not None else None,
        partial=partial,
    )
    session.read_state[state_key(path)] = record
    return record
