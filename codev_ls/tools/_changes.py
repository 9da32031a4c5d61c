"""Reviewing and undoing the changes the tools made: a session's change list, for people.

Edit, Write and NotebookEdit record every change they make (file, before,
after; ``_edits.apply_change``). This module is what the user reaches them
through — the ``codev/changes`` and ``codev/undoChange`` LSP requests, and the
terminal runner's ``codev-ls changes`` / ``codev-ls undo`` — so the editor and
the terminal share one meaning of "the changes" and of "undo":

- a change is named by its 1-based index in the list (oldest first) or by the
  tool use id that made it; no name means the latest;
- an undo goes through the editor like an edit (``_edits.revert_change``): open
  buffers show it as one undoable step, a buffer with other unsaved changes is
  never overwritten, and a file changed since the change is refused;
- an undone change leaves the list; the model must read the file again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codev_ls.engine.context import FileChange, Session, ToolUseContext
from codev_ls.engine.files import display_path
from codev_ls.engine.tool import ToolError
from codev_ls.tools._text import diff_stats, normalize_newlines

# A listed diff longer than this is cut (the whole one is in the change itself).
LIST_DIFF_CHARS = 20_000


class ChangeNotFound(LookupError):
    """The change named does not exist (a bad index or tool use id)."""


@dataclass(frozen=True, slots=True)
class ChangeRef:
    """Which change: by ``index`` (1-based), by ``tool_use_id``, or (neither) the latest."""

    index: int | None = None
    tool_use_id: str | None = None


def parse_change_ref(params: Any, method: str) -> tuple[str | None, ChangeRef]:
    """``{"sessionId"?, "index"?, "toolUseId"?}`` → (session id, ref); ValueError when malformed."""
    if params is None:
        params = {}
    if isinstance(params, (list, tuple)):  # from workspace/executeCommand: [] or [{...}]
        if len(params) > 1 or (params and not isinstance(params[0], dict)):
            raise ValueError(f"{method} takes an object as params (or as its one argument)")
        params = params[0] if params else {}
    if not isinstance(params, dict):
        raise ValueError(f"{method} takes an object as params")
    session_id = params.get("sessionId")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ValueError(f"{method}: `sessionId` must be a non-empty string")
    index = params.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 1):
        raise ValueError(f"{method}: `index` must be a whole number from 1")
    tool_use_id = params.get("toolUseId")
    if tool_use_id is not None and (not isinstance(tool_use_id, str) or not tool_use_id):
        raise ValueError(f"{method}: `toolUseId` must be a non-empty string")
    if index is not None and tool_use_id is not None:
        raise ValueError(f"{method}: give `index` or `toolUseId`, not both")
    return session_id, ChangeRef(index, tool_use_id)


def find_change(session: Session, ref: ChangeRef) -> tuple[int, FileChange]:
    """(1-based index, change) named by ``ref``; raises :class:`ChangeNotFound`."""
    changes = session.changes
    if not changes:
        raise ChangeNotFound("There are no changes to undo in this session.")
    if ref.tool_use_id is not None:
        for i in range(len(changes) - 1, -1, -1):
            if changes[i].tool_use_id == ref.tool_use_id:
                return i + 1, changes[i]
        raise ChangeNotFound(f"No change was made by the tool use {ref.tool_use_id!r}.")
    if ref.index is not None:
        if ref.index > len(changes):
            raise ChangeNotFound(
                f"There is no change {ref.index}: the session has {len(changes)} "
                f"(numbered 1 to {len(changes)})."
            )
        return ref.index, changes[ref.index - 1]
    return len(changes), changes[-1]


def _holds_result(ctx: ToolUseContext, change: FileChange) -> bool:
    """Whether the file (its buffer when open) still holds what the change left."""
    from codev_ls.tools._filestate import load_current

    try:
        current = load_current(change.path, ctx.bridge.read_buffer(change.path))
    except ToolError:
        return False
    return current.text is not None and normalize_newlines(current.text) == normalize_newlines(
        change.after
    )


def change_infos(ctx: ToolUseContext) -> list[dict[str, Any]]:
    """The session's changes, oldest first, as ``codev/changes`` returns them."""
    out = []
    for i, change in enumerate(ctx.session.changes, 1):
        added, removed = diff_stats(change.diff)
        diff = change.diff
        if len(diff) > LIST_DIFF_CHARS:
            diff = diff[:LIST_DIFF_CHARS].rsplit("\n", 1)[0] + "\n… (diff cut)\n"
        out.append(
            {
                "index": i,
                "path": str(change.path),
                "relativePath": display_path(change.path, ctx.root),
                "tool": change.tool_name,
                "toolUseId": change.tool_use_id,
                "created": change.before is None,
                "added": added,
                "removed": removed,
                "diff": diff,
                # False when the file changed since (a later change, or the user).
                "undoable": _holds_result(ctx, change),
            }
        )
    return out


async def undo_change(ctx: ToolUseContext, ref: ChangeRef) -> dict[str, Any]:
    """Undo the change ``ref`` names; ``{"undone": bool, "index", "path", "reason"?}``.

    A refusal (the file changed since, the user rejected the undo in the editor,
    the disk could not be written) is an answer with ``undone: false`` and the
    reason, not an exception; only a name that matches no change raises
    :class:`ChangeNotFound`.
    """
    from codev_ls.tools._edits import revert_change

    index, change = find_change(ctx.session, ref)
    rel = display_path(change.path, ctx.root)
    answer: dict[str, Any] = {
        "index": index,
        "path": str(change.path),
        "tool": change.tool_name,
        "toolUseId": change.tool_use_id,
    }
    try:
        result = await revert_change(ctx, change)
    except ToolError as exc:
        return {**answer, "undone": False, "reason": exc.message}
    except OSError as exc:
        return {**answer, "undone": False, "reason": f"{rel}: {exc.strerror or exc}"}
    if result.error and result.applied:
        ctx.session.changes.remove(change)
        return {
            **answer,
            "undone": False,
            "reason": f"the undo is in the editor's buffer of {rel} but could not be saved "
            f"to disk ({result.error}); save or undo it in the editor",
        }
    if not result.applied:
        why = result.error or result.reason or "the editor did not apply it"
        return {**answer, "undone": False, "reason": why}
    ctx.session.changes.remove(change)
    what = "removed" if change.before is None and result.final_text is None else "restored"
    return {**answer, "undone": True, "message": f"Undid the {change.tool_name} of {rel} ({what})."}


def format_changes(infos: list[dict[str, Any]], *, with_diffs: bool = False) -> str:
    """The change list for a terminal: one line per change, diffs when asked."""
    if not infos:
        return "No changes in this session."
    lines = []
    for info in infos:
        kind = "created" if info["created"] else f"+{info['added']} −{info['removed']}"
        state = "" if info["undoable"] else "  (changed since: cannot be undone)"
        lines.append(
            f"{info['index']:>3}. {info['tool']:<12} {info['relativePath']}  {kind}"
            f"  [{info['toolUseId']}]{state}"
        )
        if with_diffs and info["diff"]:
            lines.append(info["diff"].rstrip("\n"))
    return "\n".join(lines)


# --------------------------------------------------------------------------- requests


def _session(engine: Any, session_id: str | None) -> Session:
    if session_id is None:
        return engine.session
    session = engine.sessions.get(session_id)
    if session is None:
        raise ValueError(
            f"no session {session_id!r} (a chat's sessionId, or none for the server's)"
        )
    return session


async def changes_request(
    engine: Any, params: Any, method: str = "codev/changes"
) -> dict[str, Any]:
    """``codev/changes``: ``{"sessionId", "changes": [ChangeInfo]}``; ValueError if malformed."""
    session_id, _ref = parse_change_ref(params, method)
    session = _session(engine, session_id)
    ctx = engine.context(session=session)
    import asyncio

    infos = await asyncio.to_thread(change_infos, ctx)
    return {"sessionId": session.id, "changes": infos}


async def undo_request(
    engine: Any, params: Any, method: str = "codev/undoChange"
) -> dict[str, Any]:
    """``codev/undoChange``: undo one change (the latest by default); ValueError if malformed."""
    session_id, ref = parse_change_ref(params, method)
    session = _session(engine, session_id)
    ctx = engine.context(session=session)
    try:
        return {"sessionId": session.id, **(await undo_change(ctx, ref))}
    except ChangeNotFound as exc:
        return {"sessionId": session.id, "undone": False, "reason": str(exc)}


# --------------------------------------------------------------------------- terminal


async def terminal_changes(
    root: Any,
    session_path: Any,
    *,
    undo: ChangeRef | None = None,
    as_json: bool = False,
    with_diffs: bool = False,
) -> tuple[int, str]:
    """``codev-ls changes`` / ``codev-ls undo`` on a named session: (exit code, text to print).

    The session is loaded from its file (``--session NAME`` of ``codev-ls tool``),
    changed by the undo and saved again. Exit 0 when listed or undone, 1 when
    the undo was refused.
    """
    import json

    from codev_ls.app import build_engine
    from codev_ls.bridge import TerminalBridge
    from codev_ls.engine.session_store import load_session, save_session

    engine = build_engine(root, TerminalBridge(interactive=False), start_mcp=False)
    try:
        if not load_session(engine.session, session_path):
            return 1, (
                f"No saved session at {session_path}: changes are kept for sessions named "
                "with `codev-ls tool ... --session NAME` (in this workspace)."
            )
        ctx = engine.context()
        if undo is None:
            infos = change_infos(ctx)
            if as_json:
                return 0, json.dumps(infos, ensure_ascii=False, indent=2)
            return 0, format_changes(infos, with_diffs=with_diffs)
        try:
            answer = await undo_change(ctx, undo)
        except ChangeNotFound as exc:
            answer = {"undone": False, "reason": str(exc)}
        save_session(engine.session, session_path)
    finally:
        await engine.aclose()
    if as_json:
        text = json.dumps(answer, ensure_ascii=False, indent=2)
    else:
        text = answer.get("message") or f"Not undone: {answer.get('reason')}"
    return (0 if answer.get("undone") else 1), text
