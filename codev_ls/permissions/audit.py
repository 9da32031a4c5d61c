"""The audit log: one JSON line per permission decision, in the session's data folder.

``<session data folder>/permissions.jsonl`` — what was decided for which tool
use, by which source and rule, and why (the decision's trace). Inputs are
summarised (the command, the paths), never copied whole: a Write's content
does not belong in a log.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

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
    """Append one decision to the session's audit log (never raises)."""
    try:
        line = json.dumps(audit_record(ctx, tool, input, decision), ensure_ascii=False)
        path = ctx.session.data_dir / AUDIT_FILE
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except Exception:
        log.exception("could not write the permission audit log")
