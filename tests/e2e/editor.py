"""A scripted editor for end-to-end tests: a pytest-lsp client that behaves like one.

:class:`EditorClient` starts the real server (``python -m codev_ls``) over
stdio with the capabilities of a real editor (a pytest-lsp preset such as
``neovim@v0.11.0`` or ``visual-studio-code``) and does what an editor does:

- keeps open buffers and tells the server about them (``open``, ``type``,
  ``save``, ``close``), in the position encoding the server chose;
- applies ``workspace/applyEdit`` to its buffers (``changes`` or
  ``documentChanges``, ``CreateFile``, version checks), or refuses it, or
  accepts only some annotated hunks — like VS Code's refactor preview — as
  :attr:`edit_answer` says; like Neovim it can answer before its didChange
  (:attr:`didchange_delay`);
- answers permission prompts (``window/showMessageRequest``) as
  :attr:`prompt_answer` says: an action title prefix (``"Allow once"``,
  ``"Reject"``...), ``None`` to dismiss, ``"error"`` to fail, or a function.

Everything it receives is recorded (``prompts``, ``edits``, plus pytest-lsp's
``messages``, ``log_messages``, ``progress_reports``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from codev_ls.lsp_documents import LspTextDocument

PRESETS = ("neovim@v0.11.0", "visual-studio-code")
_CLIENT_INFO = {
    "neovim@v0.11.0": types.ClientInfo(name="Neovim", version="0.11.0"),
    "visual-studio-code": types.ClientInfo(name="Visual Studio Code", version="1.95.0"),
}

# An answer to a permission prompt: a title prefix, None (dismiss), "error", or a function
# (sync or async) returning one of those.
PromptAnswer = str | None | Callable[[types.ShowMessageRequestParams], Any]
# An answer to an applyEdit: "accept", "reject", "error", or a function choosing the
# annotation ids to accept (VS Code's preview with some hunks unticked).
EditAnswer = str | Callable[[types.ApplyWorkspaceEditParams], set[str]]


def _plain(obj: dict[str, Any], cls: type) -> Any:
    return cls(**{f.name: obj.get(f.name) for f in attrs.fields(cls)})


def plain_converter() -> Any:
    """The client's converter: custom methods' results stay dicts (not namedtuples)."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _plain)
    return converter


class EditorClient(LanguageClient):
    """A pytest-lsp client that keeps buffers, applies edits and answers prompts."""

    def __init__(self, preset: str = "visual-studio-code") -> None:
        super().__init__(converter_factory=plain_converter)
        register_lsp_features(self)
        self.preset = preset
        self.preset_capabilities = client_capabilities(preset)
        self.docs: dict[str, TextDocument] = {}
        self.prompts: list[types.ShowMessageRequestParams] = []
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.chat_events: list[dict[str, Any]] = []
        self.prompt_answer: PromptAnswer = "Allow once"
        self.edit_answer: EditAnswer = "accept"
        # Seconds between answering applyEdit and sending the didChange (Neovim debounces).
        self.didchange_delay: float = 0.0
        # Seconds before answering a prompt (a user thinking).
        self.prompt_delay: float = 0.0
        self.position_encoding: str = "utf-16"
        # What the editor calls itself in initialize (as the real ones do); None sends none.
        self.client_info: types.ClientInfo | None = _CLIENT_INFO.get(preset)

        # pygls registers functions, not bound methods.
        async def on_prompt(params: types.ShowMessageRequestParams) -> Any:
            return await self._on_prompt(params)

        async def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
            return await self._on_apply_edit(params)

        def on_chat_event(params: Any) -> None:
            self.chat_events.append(params)

        self.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(on_prompt)
        self.feature(types.WORKSPACE_APPLY_EDIT)(on_apply_edit)
        self.feature("codev/chatEvent")(on_chat_event)

    # ------------------------------------------------------------------ session

    async def start(self, *, env: dict[str, str] | None = None, test_tools: bool = False) -> None:
        """Start the server: ``python -m codev_ls``, or with the e2e test tools added."""
        args = ["-m", "tests.e2e.serve_with_test_tools"] if test_tools else ["-m", "codev_ls"]
        await self.start_io(sys.executable, *args, env=env or dict(os.environ))

    async def initialize(
        self,
        root: Path,
        *,
        initialization_options: Any = None,
        capabilities: types.ClientCapabilities | None = None,
    ) -> types.InitializeResult:
        caps = capabilities or self.preset_capabilities
        result = await self.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                client_info=self.client_info,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options=initialization_options,
            )
        )
        encoding = result.capabilities.position_encoding
        self.position_encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        return result

    async def close(self, timeout: float = 15.0) -> None:
        """shutdown + exit, then make sure the server process is gone."""
        server = self._server
        if server is not None and server.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.shutdown_session(), timeout)
        if server is not None and server.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                server.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait(), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.stop(), 5)

    # ------------------------------------------------------------------ codev requests

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result (errors raise pygls JsonRpcException)."""
        return await self.protocol.send_request_async(method, params)

    async def raw_request(self, method: str, params: Any) -> Any:
        """Send params exactly as given, even where LSP types would refuse to build them."""
        import uuid
        from concurrent.futures import Future

        msg_id = f"raw-{uuid.uuid4().hex}"
        future: Future[Any] = Future()
        self.protocol._request_futures[msg_id] = future
        self.protocol._result_types[msg_id] = None
        self.send_raw({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await asyncio.wrap_future(future)

    def send_raw(self, message: Any) -> None:
        """Write one message body as JSON (or bytes as they are) on the wire."""
        import json

        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.protocol.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def request_task(self, method: str, params: Any = None, msg_id: Any = None) -> asyncio.Task:
        """Send a request now and return the task that waits for its result."""
        return asyncio.ensure_future(self.protocol.send_request_async(method, params, msg_id))

    async def run_tool(self, name: str, tool_input: Any, **extra: Any) -> dict[str, Any]:
        return await self.request("codev/runTool", {"name": name, "input": tool_input, **extra})

    async def command(self, command: str, *arguments: Any, token: Any = None) -> Any:
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=command, arguments=list(arguments), work_done_token=token
            )
        )

    def cancel_request(self, msg_id: Any) -> None:
        self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    # ------------------------------------------------------------------ buffers

    def _codec(self) -> PositionCodec:
        return PositionCodec(self.position_encoding)  # type: ignore[arg-type]

    def open(self, path: Path, text: str | None = None, language_id: str = "plaintext") -> None:
        """Open a buffer (the disk's text unless ``text`` is given) and tell the server."""
        uri = path.as_uri()
        if text is None:
            text = path.read_text(encoding="utf-8")
        # LSP's lines (not str.splitlines'), as real editors count them.
        self.docs[uri] = LspTextDocument(uri, text, version=1, position_codec=self._codec())
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id, version=1, text=text
                )
            )
        )

    def type(self, path: Path, new_text: str) -> None:
        """Replace the buffer's text (unsaved), as one incremental change."""
        doc = self.docs[path.as_uri()]
        end = doc.client_position_at_offset(len(doc.source))
        self._change(
            doc,
            [types.TextEdit(range=types.Range(types.Position(0, 0), end), new_text=new_text)],
        )

    def save(self, path: Path) -> None:
        doc = self.docs[path.as_uri()]
        path.write_text(doc.source, encoding="utf-8")
        self.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
        )

    def close_doc(self, path: Path) -> None:
        uri = path.as_uri()
        self.docs.pop(uri, None)
        self.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def text(self, path: Path) -> str | None:
        doc = self.docs.get(path.as_uri())
        return doc.source if doc is not None else None

    def _change(self, doc: TextDocument, edits: list[Any], *, notify: bool = True) -> list[Any]:
        """Apply text edits to a buffer; returns the content changes for didChange."""
        changes = []
        # Last first, so earlier ranges stay valid; the notification lists them in that order.
        for edit in sorted(
            edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
        ):
            start = doc.offset_at_position(edit.range.start)
            end = doc.offset_at_position(edit.range.end)
            doc._source = doc.source[:start] + edit.new_text + doc.source[end:]
            changes.append(
                types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
            )
        if not changes:
            return changes  # nothing applied: the version stays, nothing is sent (as VS Code)
        doc.version = (doc.version or 0) + 1
        if notify:
            self._send_change(doc.uri, doc.version, changes)
        return changes

    def _send_change(self, uri: str, version: int, changes: list[Any]) -> None:
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=changes,
            )
        )

    # ------------------------------------------------------------------ server → editor

    async def _on_prompt(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        self.prompts.append(params)
        if self.prompt_delay:
            await asyncio.sleep(self.prompt_delay)
        answer = self.prompt_answer
        if callable(answer):
            answer = answer(params)
            if asyncio.iscoroutine(answer):  # the user thinking until the test says
                answer = await answer
        if answer is None:
            return None
        if answer == "error":
            raise RuntimeError("the editor failed to show the prompt")
        for action in params.actions or []:
            if action.title.startswith(answer):
                return action
        raise AssertionError(f"no action starting with {answer!r} in {params.actions}")

    async def _on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        answer = self.edit_answer
        if answer == "reject":
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="rejected")
        if answer == "error":
            raise RuntimeError("the editor failed to apply the edit")
        accepted = answer(params) if callable(answer) else None
        edit = params.edit
        pending: list[tuple[str, list[Any]]] = []
        if edit.document_changes is not None:
            for change in edit.document_changes:
                if isinstance(change, types.CreateFile):
                    path = Path(_fs_path(change.uri))
                    if not path.exists():
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text("", encoding="utf-8")
                    continue
                if not isinstance(change, types.TextDocumentEdit):
                    raise AssertionError(f"unexpected resource operation {change!r}")
                uri = change.text_document.uri
                doc = self.docs.get(uri)
                if (
                    doc is not None
                    and change.text_document.version is not None
                    and change.text_document.version != doc.version
                ):
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason="the document version changed"
                    )
                pending.append((uri, list(change.edits)))
        for uri, text_edits in (edit.changes or {}).items():
            pending.append((uri, list(text_edits)))
        sent: list[tuple[TextDocument, list[Any]]] = []
        for uri, text_edits in pending:
            chosen = [
                e
                for e in text_edits
                if accepted is None or getattr(e, "annotation_id", None) in accepted
            ]
            doc = self.docs.get(uri)
            if doc is None:
                # Like an editor loading the file into a background buffer it syncs.
                self.open(Path(_fs_path(uri)))
                doc = self.docs[uri]
            changes = self._change(doc, chosen, notify=False)
            if changes:
                sent.append((doc, changes))
        if self.didchange_delay:
            asyncio.get_running_loop().call_later(self.didchange_delay, self._flush, sent)
        else:
            self._flush(sent)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _flush(self, sent: list[tuple[TextDocument, list[Any]]]) -> None:
        for doc, changes in sent:
            self._send_change(doc.uri, doc.version or 0, changes)


def _fs_path(uri: str) -> str:
    from pygls.uris import to_fs_path

    path = to_fs_path(uri)
    assert path is not None, uri
    return path


def annotation_ids(params: types.ApplyWorkspaceEditParams) -> list[str]:
    """The annotation ids of an applyEdit's text edits, in document order."""
    ids = []
    for change in params.edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            ids.extend(e.annotation_id for e in change.edits if hasattr(e, "annotation_id"))
    return ids
