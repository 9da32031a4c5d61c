"""The audit log: one JSON line per permission decision, in the session's data folder.

``<session data folder>/permissions.jsonl`` — what was decided for which tool
use, by which source and rule, and why (the decision's trace). Inputs are
summarised (the command, the paths), never copied whole: a Write's content
does not belong in a log.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.engine.tool import Tool
    from codev_ls.permissions.types import PermissionResult

log = logging.getLogger(__name__)

AUDIT_FILE = "permissions.jsonl"
_MAX_FIELD = 2000


def audit_record(
    ctx: ToolUseContext, tool: Tool | None, input: Any, decision: PermissionResult
) -> dict[str, Any]:
    """The log line for one decision (also what tests and `explain` look at)."""
    record: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "sessionId": ctx.session.id,
        "toolUseId": ctx.tool_use_id,
        "tool": tool.name if tool is not None else None,
        "mode": ctx.mode,
        "behavior": decision.behavior,
        "source": decision.source,
        "rule": decision.rule,
        "reason": decision.reason[:_MAX_FIELD],
    }
    if tool is not None:
        try:
            subject = tool.permission_subject(input, ctx)
            record["summary"] = subject.summary[:_MAX_FIELD]
            if subject.command is not None:
                record["command"] = subject.command[:_MAX_FIELD]
            paths = [str(p) for p in [*subject.read_paths, *subject.write_paths]]
            if paths:
                record["paths"] = paths[:50]
            if subject.url:
                record["url"] = subject.url[:_MAX_FIELD]
        except Exception:
            record["summary"] = tool.name
    if decision.trace:
        record["trace"] = [line[:_MAX_FIELD] for line in decision.trace[:50]]
    return record


def audit_decision(
    ctx: ToolUseContext, tool: Tool | None, input: Any, decision: PermissionResult
) -> None:
    """Append one decision to the session's audit log (never raises).

    A log that cannot be written is said once per session, in one line: every
    later decision would fail the same way, and a traceback each time buries
    the rest of stderr.
    """
    try:
        line = json.dumps(audit_record(ctx, tool, input, decision), ensure_ascii=False)
        _append(ctx.session.data_dir / AUDIT_FILE, line + "\n")
    except Exception as exc:
        session_id = getattr(getattr(ctx, "session", None), "id", None)
        if session_id in _warned:
            log.debug("permission audit log not written: %s", exc)
            return
        _warned.add(session_id)
        log.warning(
            "could not write the permission audit log (%s: %s); decisions of this session "
            "are not logged",
            type(exc).__name__,
            exc,
        )


# Sessions already told that their audit log cannot be written.
_warned: set[str | None] = set()


# Open audit files, kept open between decisions: opening and closing the file for every
# tool use was a third of a Read's engine time. Line-buffered, so each record reaches the
# file as it is written; a few at most (one per live session), closed at exit.
_open: dict[Path, TextIO] = {}
_open_lock = threading.Lock()
_MAX_OPEN = 8


def _append(path: Path, text: str) -> None:
    with _open_lock:
        fh = _open.get(path)
        if fh is None or fh.closed:
            if len(_open) >= _MAX_OPEN:
                _close_all_locked()
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = _open[path] = path.open("a", encoding="utf-8", buffering=1)
        try:
            fh.write(text)
        except OSError:
            fh.close()
            _open.pop(path, None)
            raise


def _close_all_locked() -> None:
    for fh in _open.values():
        try:
            fh.close()
        except OSError:
            pass
    _open.clear()


def close_audit_files() -> None:
    with _open_lock:
        _close_all_locked()


atexit.register(close_audit_files)
