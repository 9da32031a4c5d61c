"""The editor bridge over LSP: what the engine needs from an editor, as LSP messages.

- permission questions → ``window/showMessageRequest`` (a dismissal, an error
  or a lost editor is a rejection);
- edits → ``workspace/applyEdit``, one text edit per hunk, each with a change
  annotation holding its diff when the editor supports them (``needsConfirmation``
  makes the editor's preview the approval); the buffer is read back to learn
  which hunks landed, and the disk gets them too — never the user's unsaved work;
- open buffers ← ``didOpen``/``didChange``/``didClose`` (pygls keeps the text);
- progress → ``window/workDoneProgress/create`` + ``$/progress``, only for
  runs that last more than a moment, cancellable from the editor;
- messages → ``window/showMessage`` / ``window/logMessage``.

The server (``server.py``) owns one :class:`LspBridge` and feeds it the
client's capabilities and document events; the engine only sees the
:class:`~codev_ls.bridge.EditorBridge` protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

# The engine's bridge values are imported where they are used: this module is
# loaded before the server answers `initialize`, and `codev_ls.bridge` (a dozen
# dataclasses) is needed only once the engine runs — which imports it anyway.
if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.workspace import TextDocument

    from codev_ls.bridge import (
        BridgeCapabilities,
        BufferSnapshot,
        EditApplyResult,
        FileEdit,
        MessageLevel,
        PermissionAnswer,
        PermissionChoice,
        PermissionRequest,
        ProgressEvent,
        Question,
        QuestionAnswer,
    )
    from codev_ls.lsp_hunks import Hunk

log = logging.getLogger(__name__)

# A permission prompt shows at most this much of a command or diff.
PROMPT_DETAIL_LINES = 40
PROMPT_DETAIL_CHARS = 3_000

# Editors built on vscode-languageclient (their InitializeParams.clientInfo.name). With
# incremental sync it sends a didChange from the document's change event, which fires
# while VS Code applies the edit — before the applyEdit promise it answers with resolves.
VSCODE_FAMILY = ("Visual Studio Code", "VSCodium", "Code - OSS", "code-server", "Cursor")

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
ALLOW_ALWAYS = "Always allow"
REJECT = "Reject"
# The action that ends a multi-select question (AskUserQuestion with multiSelect).
MULTI_SELECT_DONE = "Done"

_LEVELS: dict[str, types.MessageType] = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
    "log": types.MessageType.Log,
}


@dataclass(slots=True)
class _Progress:
    """One tool run's progress bar, from the engine's begin to its end."""

    tool_use_id: str
    title: str
    cancel: Callable[[], None] | None
    token: types.ProgressToken | None = None
    client_token: bool = False
    timer: asyncio.TimerHandle | None = None
    begun: bool = False
    ended: bool = False
    message: str | None = None
    percentage: int | None = None
    last_sent: float = 0.0
    flush: asyncio.TimerHandle | None = None
    starting: asyncio.Future[None] | None = None


class LspBridge:
    """:class:`~codev_ls.bridge.EditorBridge` over a pygls ``LanguageServer``."""

    def __init__(
        self,
        server: LanguageServer,
        *,
        progress_delay: float = 0.25,
        readback_timeout: float = 3.0,
        readback_quiet: float = 0.2,
    ) -> None:
        self.ls = server
        self._capabilities: BridgeCapabilities | None = None
        self._preview_approval = False
        # A run shorter than this never shows a progress bar (quick reads must not flash).
        self.progress_delay = progress_delay
        # How long to wait for the editor's didChange after it applied an edit.
        self.readback_timeout = readback_timeout
        self.readback_quiet = readback_quiet
        # Set by the server: interrupts a run (the editor's cancel button).
        self.interrupt: Callable[[str], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._can_apply = False
        self._document_changes = False
        self._create_files = False
        self._annotations = False
        self._client_progress = False
        self._ready = False
        self._queued: list[tuple[MessageLevel, str]] = []
        self._progress: dict[str, _Progress] = {}
        self._client_tokens: dict[str, types.ProgressToken] = {}
        self._outgoing: set[Future[Any]] = set()
        self._writes: set[asyncio.Future[None]] = set()
        self._paths: dict[str, str] = {}  # real path -> uri key of the open document
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        self._dirty_cache: dict[str, tuple[tuple[Any, ...], bool]] = {}
        self._edit_seq = 0
        # Whether this editor sends the didChange of an applied edit before it answers
        # the applyEdit (None: not known). When it does, an open buffer whose version did
        # not move by the answer got no change at all (every hunk unticked in the
        # preview) and the read-back need not wait. Known from the editor's name
        # (VS CODE_FAMILY) or learned from its earlier edits; a didChange seen after an
        # answer makes it False for good.
        self._changes_before_answer: bool | None = None

    # ------------------------------------------------------------------ set-up

    def configure(
        self, caps: types.ClientCapabilities | None, client_info: types.ClientInfo | None = None
    ) -> None:
        """Learn what the editor can do (from ``initialize``)."""
        self._loop = asyncio.get_running_loop()
        name = client_info.name if client_info is not None else ""
        if name.startswith(VSCODE_FAMILY):
            self._changes_before_answer = True
        workspace = caps.workspace if caps else None
        edit_caps = workspace.workspace_edit if workspace else None
        self._can_apply = bool(workspace and workspace.apply_edit)
        self._document_changes = bool(edit_caps and edit_caps.document_changes)
        ops = (edit_caps.resource_operations or []) if edit_caps else []
        self._create_files = self._document_changes and types.ResourceOperationKind.Create in ops
        self._annotations = bool(
            self._document_changes and edit_caps and edit_caps.change_annotation_support
        )
        window = caps.window if caps else None
        self._client_progress = bool(window and window.work_done_progress)
        self._preview_approval = self._can_apply and self._annotations
        if self._capabilities is not None:
            self._capabilities.edit_preview_approval = self._preview_approval

    @property
    def capabilities(self) -> BridgeCapabilities:
        """What the engine may count on (built on first use, after ``configure``)."""
        if self._capabilities is None:
            from codev_ls.bridge import BridgeCapabilities

            self._capabilities = BridgeCapabilities(
                edit_preview_approval=self._preview_approval, progress=True
            )
        return self._capabilities

    @property
    def ready(self) -> bool:
        """Whether messages go out now (the session is initialized and connected)."""
        return self._ready

    def set_ready(self) -> None:
        """The session is initialized: messages may go out now (queued ones first)."""
        self._ready = True
        queued, self._queued = self._queued, []
        for level, message in queued:
            self.show_message(level, message)

    def connection_lost(self) -> None:
        """The editor is gone: every question still waiting for it is a rejection."""
        self._ready = False
        for fut in list(self._outgoing):
            if not fut.done():
                fut.set_exception(ConnectionError("the editor is no longer connected"))
        self._outgoing.clear()

    async def drain(self) -> None:
        """Wait for the disk writes in flight (shutdown finishes them)."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    # ------------------------------------------------------------------ requests to the editor

    async def _request(
        self, method: str, params: Any, on_answer: Callable[[Future[Any]], None] | None = None
    ) -> Any:
        fut = self.ls.protocol.send_request(method, params)
        if on_answer is not None:
            fut.add_done_callback(on_answer)  # first: it runs as the answer is read
        self._outgoing.add(fut)
        fut.add_done_callback(self._outgoing.discard)
        return await asyncio.wrap_future(fut)

    def _notify(self, send: Callable[[], None]) -> None:
        """Send a notification; a broken connection must not break the caller."""
        try:
            send()
        except Exception:  # the editor went away; nothing to tell it any more
            log.debug("notification not sent", exc_info=True)

    def _on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` on the server's event loop (the engine may call from a thread)."""
        loop = self._loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn(*args)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)

    # ------------------------------------------------------------------ permission questions

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        from codev_ls.bridge import PermissionAnswer

        actions: list[tuple[str, PermissionChoice]] = [(ALLOW_ONCE, "allow_once")]
        if request.session_rule:
            actions.append((f"{ALLOW_SESSION}: {request.session_rule}", "allow_session"))
        if request.always_rule:
            actions.append((f"{ALLOW_ALWAYS}: {request.always_rule}", "allow_always"))
        actions.append((REJECT, "reject"))
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=permission_message(request),
            actions=[types.MessageActionItem(title=title) for title, _ in actions],
        )
        try:
            item = await self._request(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an error or a lost editor is a rejection, never an allow
            log.warning("permission question for %s got no answer: %s", request.tool_name, exc)
            return PermissionAnswer(
                "reject", f"the question could not be asked ({exc})", dismissed=True
            )
        title = _title(item)
        for action_title, choice in actions:
            if title == action_title:
                return PermissionAnswer(choice)
        # Dismissed (null) or a title that was not offered: a rejection, but not a choice.
        return PermissionAnswer("reject", dismissed=True)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        """One showMessageRequest; a multi_select question is asked option by option.

        showMessageRequest picks one action, so for several answers the question
        comes back with the options not yet chosen plus "Done", until the user
        picks "Done", has chosen every option, or dismisses it (which keeps what
        was chosen so far; None when nothing was).
        """
        text = f"{question.header}: {question.question}" if question.header else question.question
        if not question.multi_select:
            title = await self._ask_choice(text, question.options)
            return title if title in question.options else None
        done = MULTI_SELECT_DONE
        while done in question.options:
            done += " ✓"
        chosen: list[str] = []
        while remaining := [o for o in question.options if o not in chosen]:
            so_far = f"Chosen so far: {', '.join(chosen)}." if chosen else "Nothing chosen yet."
            title = await self._ask_choice(
                f"{text}\n(Several answers: choose one at a time, then {done}. {so_far})",
                [*remaining, done],
            )
            if title == done:
                return chosen
            if title not in remaining:
                return chosen or None
            chosen.append(title)
        return chosen

    async def _ask_choice(self, message: str, options: list[str]) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=message,
            actions=[types.MessageActionItem(title=o) for o in options],
        )
        try:
            item = await self._request(types.WINDOW_SHOW_MESSAGE_REQUEST, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("question got no answer: %s", exc)
            return None
        return _title(item)

    # ------------------------------------------------------------------ open buffers

    def document_event(self, uri: str) -> None:
        """A didOpen/didChange/didClose/didSave for ``uri`` (called by the server)."""
        key = _uri_key(uri)
        path = _uri_path(uri)
        if path is not None:
            real = _real(path)
            if key in self.ls.workspace.text_documents:
                self._paths[real] = key
            elif self._paths.get(real) == key:
                del self._paths[real]
            self._dirty_cache.pop(key, None)
            for fut in self._waiters.pop(real, set()):
                if not fut.done():
                    fut.set_result(None)

    def _doc(self, path: Path) -> TextDocument | None:
        try:
            key = self._paths.get(_real(str(path)))
        except (OSError, ValueError):
            return None
        if key is None:
            return None
        # Never `workspace.get_text_document` for a closed file: it would read the disk.
        return self.ls.workspace.text_documents.get(key)

    def read_buffer(self, path: Path) -> BufferSnapshot | None:
        from codev_ls.bridge import BufferSnapshot

        doc = self._doc(Path(path))
        if doc is None:
            return None
        text = doc.source
        return BufferSnapshot(Path(path), text, doc.version, self._is_dirty(Path(path), doc, text))

    def open_buffers(self) -> list[BufferSnapshot]:
        from codev_ls.bridge import BufferSnapshot

        snaps = []
        for doc in list(self.ls.workspace.text_documents.values()):
            path = _uri_path(doc.uri)
            if path is None:
                continue
            text = doc.source
            snaps.append(
                BufferSnapshot(Path(path), text, doc.version, self._is_dirty(Path(path), doc, text))
            )
        return snaps

    def _is_dirty(self, path: Path, doc: TextDocument, text: str) -> bool:
        """Whether the buffer differs from the disk (cached per version and file stamp)."""
        try:
            st = path.stat()
        except OSError:
            return True
        stamp = (doc.version, st.st_mtime_ns, st.st_size, len(text))
        key = _uri_key(doc.uri)
        cached = self._dirty_cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            dirty = path.read_bytes().decode("utf-8", errors="replace") != text
        except OSError:
            dirty = True
        self._dirty_cache[key] = (stamp, dirty)
        return dirty

    async def _wait_event(self, path: Path, seconds: float) -> bool:
        """Wait for a document event on ``path``; False when ``seconds`` pass first."""
        if seconds <= 0:
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(_real(str(path)), set()).add(fut)
        try:
            await asyncio.wait_for(fut, seconds)
            return True
        except TimeoutError:
            return False
        finally:
            waiters = self._waiters.get(_real(str(path)))
            if waiters is not None:
                waiters.discard(fut)

    # ------------------------------------------------------------------ edits

    async def apply_edit(self, edit: FileEdit) -> EditApplyResult:
        from codev_ls.bridge import EditApplyResult

        try:
            return await self._apply_edit(edit)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # before anything reached the editor: nothing changed
            log.warning("applying %s failed: %s: %s", edit.label, type(exc).__name__, exc)
            return EditApplyResult(
                applied=False, error=f"it could not be applied ({type(exc).__name__}: {exc})"
            )

    async def _apply_edit(self, edit: FileEdit) -> EditApplyResult:
        from codev_ls.bridge import EditApplyResult

        path = Path(edit.path)
        doc = self._doc(path)
        old = edit.old_text if edit.old_text is not None else ""
        # The bytes the disk will get are checked before the editor sees anything.
        edit.new_text.encode(edit.encoding)
        if doc is not None:
            if edit.old_text is not None and doc.source != edit.old_text:
                return EditApplyResult(
                    applied=False,
                    reason=f"the editor's buffer of {path.name} changed while the edit was "
                    "prepared; read the file again and redo the edit",
                )
        else:
            stale = await asyncio.to_thread(
                _disk_mismatch, path, edit.old_text, edit.old_encoding or edit.encoding
            )
            if stale:
                return EditApplyResult(applied=False, reason=stale)
        if not self._can_apply or (doc is None and not edit.needs_confirmation):
            # No editor to apply it, or the file is not open: the server writes it itself.
            await self._write(path, edit.new_text, edit.encoding)
            return EditApplyResult(applied=True, final_text=edit.new_text)

        from codev_ls.lsp_hunks import compute_hunks

        hunks = await asyncio.to_thread(compute_hunks, old, edit.new_text)
        if not hunks and edit.old_text is not None:
            return EditApplyResult(applied=True, final_text=edit.new_text, hunks_applied=[])
        created_here = False
        if edit.old_text is None and not self._create_files:
            # The editor cannot create files: create it empty, the edit fills it.
            created_here = await asyncio.to_thread(_create_empty, path)
        version = doc.version if doc is not None else None
        params = self._workspace_edit(edit, hunks, old, version, create=edit.old_text is None)
        landing: asyncio.Future[EditApplyResult] | None = None

        def on_answer(answer: Future[Any]) -> None:
            # Runs as the answer is read, before any later message (a shutdown, a
            # cancel, a late didChange) is handled: from here the edit is in the
            # editor, and what follows — learning what landed, the disk write — is
            # finished whatever happens to the run (shutdown drains it).
            nonlocal landing
            if answer.cancelled() or answer.exception() is not None:
                return
            if not bool(getattr(answer.result(), "applied", False)):
                return
            seen = self._doc(path) if doc is not None else None
            at_answer = (seen.version, seen.source) if seen is not None else None
            landing = asyncio.ensure_future(
                self._guarded(
                    edit,
                    path,
                    self._land(edit, path, old, hunks, version, doc is not None, at_answer),
                )
            )
            self._writes.add(landing)
            landing.add_done_callback(self._writes.discard)

        try:
            result = await self._request(types.WORKSPACE_APPLY_EDIT, params, on_answer)
        except asyncio.CancelledError:
            if landing is not None:
                await _uninterrupted(landing)
                raise
            if created_here:
                await asyncio.to_thread(_remove_if_empty, path)
            raise
        except Exception as exc:
            if created_here:
                await asyncio.to_thread(_remove_if_empty, path)
            return EditApplyResult(
                applied=False, reason=f"the editor did not apply the edit ({exc})"
            )
        if landing is None:
            if created_here:
                await asyncio.to_thread(_remove_if_empty, path)
            reason = getattr(result, "failure_reason", None) or "the user rejected the edit"
            return EditApplyResult(
                applied=False,
                reason=reason,
                hunks_applied=[],
                hunks_rejected=[h.index for h in hunks],
            )
        return await _uninterrupted(landing)

    async def _land(
        self,
        edit: FileEdit,
        path: Path,
        old: str,
        hunks: list[Hunk],
        version: int | None,
        was_open: bool,
        at_answer: tuple[int | None, str] | None,
    ) -> EditApplyResult:
        """The editor answered ``applied: true``: what landed, and the disk to match.

        ``at_answer`` is the buffer (version, text) when the answer was read.
        """
        from codev_ls.bridge import EditApplyResult

        if not was_open or not hunks:
            return await self._after_applied(edit, path, old, hunks, version)
        unmoved = at_answer is not None and at_answer[0] == version
        if unmoved and self._changes_before_answer:
            # The buffer did not move, and this editor reports changes before it
            # answers: the user unticked every hunk. Nothing landed; no need to wait.
            return EditApplyResult(
                applied=False,
                reason="the user rejected every change of the edit in the editor's preview",
                hunks_applied=[],
                hunks_rejected=[h.index for h in hunks],
            )
        moved_text = at_answer[1] if at_answer is not None and not unmoved else None
        outcome = await self._after_applied(edit, path, old, hunks, version)
        self._learn_change_order(path, version, moved_text, outcome)
        return outcome

    async def _guarded(
        self, edit: FileEdit, path: Path, landing: Awaitable[EditApplyResult]
    ) -> EditApplyResult:
        """A failure after ``applied: true`` (the disk write) is an error result, never a
        rejection: the editor has the change, the disk may not."""
        from codev_ls.bridge import EditApplyResult

        try:
            return await landing
        except Exception as exc:
            log.warning("after applying %s: %s: %s", edit.label, type(exc).__name__, exc)
            doc = self._doc(path)
            return EditApplyResult(
                applied=True,
                final_text=doc.source if doc is not None else edit.new_text,
                error=f"{type(exc).__name__}: {exc}",
            )

    def _learn_change_order(
        self, path: Path, version: int | None, at_answer: str | None, result: EditApplyResult
    ) -> None:
        """Learn whether this editor's didChange comes before its applyEdit answer.

        Before: the landed text was already in the buffer when the answer came.
        After: the buffer had not moved at the answer but moved later — which rules
        out ending a read-back early for the rest of the session.
        """
        if at_answer is not None:
            if (
                self._changes_before_answer is None
                and result.hunks_applied
                and result.final_text == at_answer
            ):
                self._changes_before_answer = True
            return
        later = self._doc(path)
        if later is not None and later.version != version:
            self._changes_before_answer = False

    def _workspace_edit(
        self,
        edit: FileEdit,
        hunks: list[Hunk],
        old: str,
        version: int | None,
        *,
        create: bool,
    ) -> types.ApplyWorkspaceEditParams:
        from pygls.uris import from_fs_path

        uri = from_fs_path(str(edit.path)) or edit.path.as_uri()
        self._edit_seq += 1
        seq = self._edit_seq
        annotations: dict[str, types.ChangeAnnotation] = {}
        text_edits: list[types.TextEdit | types.AnnotatedTextEdit] = []
        ends = _EndOfText(old)
        n = len(hunks)
        for hunk in hunks:
            rng = types.Range(
                start=self._position(ends, hunk.start), end=self._position(ends, hunk.end)
            )
            if self._annotations:
                ann_id = f"codev-{seq}-{hunk.index}"
                annotations[ann_id] = types.ChangeAnnotation(
                    label=f"{edit.label} — change {hunk.index + 1} of {n} ({hunk.summary})",
                    needs_confirmation=edit.needs_confirmation,
                    description=hunk.diff,
                )
                text_edits.append(
                    types.AnnotatedTextEdit(range=rng, new_text=hunk.new_text, annotation_id=ann_id)
                )
            else:
                text_edits.append(types.TextEdit(range=rng, new_text=hunk.new_text))
        if not self._document_changes:
            workspace_edit = types.WorkspaceEdit(changes={uri: text_edits})
        else:
            changes: list[Any] = []
            if create and self._create_files:
                create_ann = None
                if self._annotations:
                    create_ann = f"codev-{seq}-create"
                    annotations[create_ann] = types.ChangeAnnotation(
                        label=f"{edit.label} — create the file",
                        needs_confirmation=edit.needs_confirmation,
                        description=edit.diff or None,
                    )
                changes.append(
                    types.CreateFile(
                        uri=uri,
                        options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                        annotation_id=create_ann,
                    )
                )
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=text_edits,
                )
            )
            workspace_edit = types.WorkspaceEdit(
                document_changes=changes, change_annotations=annotations or None
            )
        return types.ApplyWorkspaceEditParams(edit=workspace_edit, label=edit.label)

    def _position(self, ends: _EndOfText, index: int) -> types.Position:
        """The start of old line ``index`` (the end of the text when past the last line)."""
        if index <= ends.breaks or not ends.last_line:
            return types.Position(line=index, character=0)
        codec = self.ls.workspace.position_codec
        return types.Position(line=ends.breaks, character=codec.client_num_units(ends.last_line))

    async def _after_applied(
        self,
        edit: FileEdit,
        path: Path,
        old: str,
        hunks: list[Hunk],
        version: int | None,
    ) -> EditApplyResult:
        """The editor applied (some of) the edit: learn what landed, and put it on disk."""
        from codev_ls.bridge import EditApplyResult
        from codev_ls.lsp_hunks import apply_hunks, detect_landed, rebase_hunks

        buffer = await self._read_back(path, version, edit.new_text)
        if buffer is None:
            # The editor applied it without telling us the text (the file is not synced):
            # believe it applied everything.
            buffer = edit.new_text
        landed = detect_landed(old, hunks, buffer) if hunks else []
        all_hunks = [h.index for h in hunks]
        if landed is not None and hunks and not landed:
            if edit.old_text is None:
                await asyncio.to_thread(_remove_if_empty, path)
            return EditApplyResult(
                applied=False,
                reason="the user rejected every change of the edit in the editor's preview",
                hunks_applied=[],
                hunks_rejected=all_hunks,
            )
        disk_before = await asyncio.to_thread(_read_text, path, edit.old_encoding or edit.encoding)
        if landed is None:
            # The buffer also changed in other ways (the user kept typing): the tool
            # computed its edit on this buffer, so the buffer is what the file becomes.
            target = buffer
        elif disk_before is None or disk_before == old or edit.old_text is None:
            target = apply_hunks(old, hunks, landed)
        else:
            # The buffer had unsaved changes: the disk gets the edit, not the unsaved work.
            rebased = rebase_hunks(old, disk_before, hunks, landed)
            if rebased is None:
                log.warning(
                    "%s: the edit could not be carried over to the saved copy; "
                    "saving the buffer as the tool saw it",
                    path,
                )
            target = rebased if rebased is not None else buffer
        result = EditApplyResult(applied=True, final_text=buffer)
        if disk_before != target:
            try:
                await self._write(path, target, edit.encoding)
            except (OSError, ValueError) as exc:
                # The buffer has the change; the disk keeps what it had (the write is atomic).
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                result.error = f"writing {path.name} failed ({type(exc).__name__}: {why})"
        if landed is not None:
            result.hunks_applied = landed
            result.hunks_rejected = [i for i in all_hunks if i not in landed]
            if result.hunks_rejected:
                result.reason = "the user accepted only some changes in the editor's preview"
        else:
            result.reason = "the buffer also changed in other ways while the edit was applied"
        return result

    async def _read_back(self, path: Path, version: int | None, expected: str) -> str | None:
        """The buffer's text once the editor's didChange for the edit has arrived.

        Editors answer ``applyEdit`` before (VS Code) or after (Neovim, whose
        didChange is debounced) telling the server about the change: wait until
        the buffer shows the whole edit, or it changed and then stayed quiet, or
        the time is up. None when the file is not open at all.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.readback_timeout
        changed_at: float | None = None
        while True:
            doc = self._doc(path)
            if doc is not None:
                text = doc.source
                if text == expected:
                    return text
                if changed_at is None and doc.version != version:
                    changed_at = loop.time()
                if changed_at is not None and loop.time() - changed_at >= self.readback_quiet:
                    return text
            remaining = deadline - loop.time()
            if remaining <= 0:
                return doc.source if doc is not None else None
            wait = remaining if changed_at is None else min(remaining, self.readback_quiet)
            if await self._wait_event(path, wait):
                changed_at = loop.time()

    async def _write(self, path: Path, text: str, encoding: str) -> None:
        """Write atomically; shutdown waits for writes in flight (they are never cut)."""
        from codev_ls.engine.files import atomic_write_text

        task = asyncio.ensure_future(asyncio.to_thread(atomic_write_text, path, text, encoding))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        await asyncio.shield(task)

    # ------------------------------------------------------------------ progress

    def use_client_token(self, tool_use_id: str, token: types.ProgressToken | None) -> None:
        """The editor sent a ``workDoneToken`` for this run: report on it."""
        if token is None:
            self._client_tokens.pop(tool_use_id, None)
        else:
            self._client_tokens[tool_use_id] = token

    def report_progress(self, event: ProgressEvent) -> None:
        self._on_loop(self._progress_event, event)

    def _progress_event(self, event: ProgressEvent) -> None:
        tid = event.tool_use_id
        if event.kind == "begin":
            token = self._client_tokens.pop(tid, None)
            state = _Progress(tid, event.title, event.cancel, token, client_token=token is not None)
            self._progress[tid] = state
            if state.client_token or self._client_progress:
                loop = asyncio.get_running_loop()
                state.timer = loop.call_later(self.progress_delay, self._start_progress, state)
            return
        state = self._progress.get(tid)
        if state is None:
            return
        if event.kind == "report":
            state.message = event.message or state.message
            state.percentage = event.percentage if event.percentage is not None else None
            if state.begun:
                self._send_report(state)
            return
        # end
        self._progress.pop(tid, None)
        state.ended = True
        for handle in (state.timer, state.flush):
            if handle is not None:
                handle.cancel()
        if state.begun and state.token is not None:
            token = state.token
            self._notify(lambda: self.ls.work_done_progress.end(token, types.WorkDoneProgressEnd()))
            self.ls.work_done_progress.tokens.pop(token, None)

    def _start_progress(self, state: _Progress) -> None:
        if not state.ended:
            state.starting = asyncio.ensure_future(self._begin_progress(state))

    async def _begin_progress(self, state: _Progress) -> None:
        progress = self.ls.work_done_progress
        if state.token is None:
            token = f"codev-{uuid.uuid4().hex}"
            try:
                await progress.create_async(token)
            except Exception as exc:
                log.debug("progress not created: %s", exc)
                return
            state.token = token
            if state.ended:
                progress.tokens.pop(token, None)
                return
        token = state.token
        try:
            progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=state.title,
                    cancellable=True,
                    message=state.message,
                    percentage=state.percentage,
                ),
            )
        except Exception:
            log.debug("progress begin not sent", exc_info=True)
            return
        state.begun = True
        state.last_sent = asyncio.get_running_loop().time()
        fut = progress.tokens.get(token)
        if fut is not None:
            tid = state.tool_use_id
            fut.add_done_callback(lambda f: f.cancelled() and self._on_loop(self._cancel_run, tid))

    def _send_report(self, state: _Progress, *, from_timer: bool = False) -> None:
        """Send the latest report, at most ten a second (the last one always goes out)."""
        loop = asyncio.get_running_loop()
        if from_timer:
            state.flush = None
        elif state.flush is not None:
            return
        wait = state.last_sent + 0.1 - loop.time()
        if wait > 0:
            state.flush = loop.call_later(wait, self._send_report_later, state)
            return
        state.last_sent = loop.time()
        token = state.token
        if token is None or state.ended:
            return
        value = types.WorkDoneProgressReport(
            message=state.message, percentage=state.percentage, cancellable=True
        )
        self._notify(lambda: self.ls.work_done_progress.report(token, value))

    def _send_report_later(self, state: _Progress) -> None:
        self._send_report(state, from_timer=True)

    def _cancel_run(self, tool_use_id: str) -> None:
        """The editor's cancel button: interrupt the run."""
        state = self._progress.get(tool_use_id)
        if state is not None and state.cancel is not None:
            with contextlib.suppress(Exception):
                state.cancel()
        if self.interrupt is not None:
            self.interrupt(tool_use_id)

    # ------------------------------------------------------------------ messages

    def show_message(self, level: MessageLevel, message: str) -> None:
        self._on_loop(self._show_message, level, message)

    def _show_message(self, level: MessageLevel, message: str) -> None:
        if not self._ready:
            self._queued.append((level, message))
            return
        kind = _LEVELS.get(level, types.MessageType.Info)
        if level == "log":
            params = types.LogMessageParams(type=kind, message=message)
            self._notify(lambda: self.ls.window_log_message(params))
        else:
            shown = types.ShowMessageParams(type=kind, message=message)
            self._notify(lambda: self.ls.window_show_message(shown))


# ---------------------------------------------------------------------- helpers


def permission_message(request: PermissionRequest) -> str:
    """The prompt's text: the tool and what it will do, why it asks, the command or diff."""
    parts = [request.headline or f"Codev wants to use {request.message}"]
    if request.reason:
        parts.append(f"({request.reason})")
    if request.shown_detail:
        parts.append("")
        parts.append(cut_prompt_detail(request.shown_detail))
    return "\n".join(parts)


def cut_prompt_detail(text: str) -> str:
    """A command or diff cut to what a prompt can show (lines, then characters)."""
    from codev_ls.bridge import cut_detail

    lines = text.splitlines()
    if len(lines) > PROMPT_DETAIL_LINES:
        kept = "\n".join(lines[:PROMPT_DETAIL_LINES])
        return cut_detail(kept, PROMPT_DETAIL_CHARS) + (
            f"\n… ({len(lines) - PROMPT_DETAIL_LINES} more lines not shown)"
        )
    return cut_detail(text, PROMPT_DETAIL_CHARS)


def _title(item: Any) -> str | None:
    if item is None:
        return None
    title = item.get("title") if isinstance(item, dict) else getattr(item, "title", None)
    return title if isinstance(title, str) else None


def _uri_key(uri: str) -> str:
    from urllib.parse import unquote

    return unquote(uri)


def _uri_path(uri: str) -> str | None:
    from pygls.uris import to_fs_path

    try:
        return to_fs_path(uri)
    except Exception:
        return None


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class _EndOfText:
    """How many line breaks a text has, and its last line when it has no ending.

    What an edit's ranges need to know of the whole document, without splitting
    a 10 MB buffer into lines.
    """

    __slots__ = ("breaks", "last_line")

    def __init__(self, text: str) -> None:
        from codev_ls.tools._text import count_lines

        self.breaks = count_lines(text)
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        self.last_line = text[cut:]


async def _uninterrupted(task: asyncio.Future[Any]) -> Any:
    """Wait for ``task`` to end even if the waiter is cancelled meanwhile (then re-raise).

    For work that must not be cut once begun: an edit the editor has applied is
    finished (the disk made to match), and only then is the interruption honoured.
    """
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            break  # the task's own failure: task.result() below raises it
    if cancelled:
        if not task.cancelled() and task.exception() is not None:
            log.warning("finishing an applied edit failed: %s", task.exception())
        raise asyncio.CancelledError
    return task.result()


def _read_text(path: Path, encoding: str) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data.decode(encoding, errors="surrogateescape")


def _disk_mismatch(path: Path, old_text: str | None, encoding: str) -> str | None:
    """Why the disk no longer holds what the edit was computed against (None: it does)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if old_text is None:
            return None
        return f"{path} no longer exists; read it again before editing"
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror or exc})"
    if old_text is None:
        return f"{path} was created by someone else meanwhile; read it before writing"
    for errors in ("surrogateescape", "replace"):
        if data.decode(encoding, errors=errors) == old_text:
            return None
    return f"{path} changed on disk while the edit was prepared; read it again and redo the edit"


def _create_empty(path: Path) -> bool:
    """Create an empty file (exclusively); True when this call created it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            path.unlink()
