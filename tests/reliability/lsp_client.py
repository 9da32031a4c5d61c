"""A bare JSON-RPC client over the real server's stdio, for fault injection.

pytest-lsp's client is polite: it answers, it shuts down. Fault tests need an
editor that misbehaves on cue — stops answering, vanishes in the middle of a
prompt or an edit, or watches the server being killed — so this one is a few
lines of asyncio around ``python -m codev_ls`` that the test drives by hand:
requests go out with :meth:`request`, server requests arrive on
:attr:`incoming` and are answered (or not) with :meth:`answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

# An editor with applyEdit but neither documentChanges nor change annotations: edits
# come as plain `changes`, and permission questions as showMessageRequest.
PLAIN_EDITOR: dict[str, Any] = {"workspace": {"applyEdit": True, "workspaceEdit": {}}}
# An editor like VS Code: documentChanges and change annotations, so an edit in `default`
# mode is sent with needsConfirmation and its preview is the permission question.
ANNOTATING_EDITOR: dict[str, Any] = {"workspace": {"applyEdit": True, "workspaceEdit": {
    "documentChanges": True, "changeAnnotationSupport": {"groupsOnLabel": True}}}}  # fmt: skip
# An editor without applyEdit: the server writes files itself.
NO_EDITS: dict[str, Any] = {"workspace": {}}


class LspProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.notifications: list[dict[str, Any]] = []
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._reader = asyncio.ensure_future(self._read())
        self.bytes_received: list[tuple[str, int]] = []  # (method or "response", body size)
        # Server requests answered at once with this result (e.g. null: a dismissed prompt).
        self.auto_answer: dict[str, Any] = {}
        # Every body the server sent, as it came (kept when started with record=True).
        self.received: list[bytes] | None = None

    @classmethod
    async def start(
        cls,
        env: dict[str, str] | None = None,
        *,
        args: tuple[str, ...] = (),
        stderr: Any = asyncio.subprocess.DEVNULL,
        record: bool = False,
    ) -> LspProcess:
        """``python -m codev_ls [args]``; ``stderr`` a file to keep the server's log in;
        ``record``: keep every message the server sends (:attr:`received`)."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "codev_ls",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env or dict(os.environ),
            limit=1 << 26,
            start_new_session=True,
        )
        server = cls(proc)
        if record:
            server.received = []
        return server

    @property
    def pid(self) -> int:
        return self.proc.pid

    # ---------------------------------------------------------------- wire

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = 0
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                    elif line in (b"\r\n", b"\n"):
                        break
                body = await out.readexactly(length)
                if self.received is not None:
                    self.received.append(body)
                message = json.loads(body)
                if "method" in message:
                    self.bytes_received.append((message["method"], len(body)))
                    if "id" in message and message["method"] in self.auto_answer:
                        self.answer(message, self.auto_answer[message["method"]])
                    elif "id" in message:
                        await self.incoming.put(message)
                    else:
                        self.notifications.append(message)
                else:
                    self.bytes_received.append(("response", len(body)))
                    msg_id = message.get("id")
                    # An answer to a garbage id (a list, an object) we never asked with.
                    future = self._pending.pop(msg_id, None) if _hashable(msg_id) else None
                    if future is not None and not future.done():
                        future.set_result(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed its output"))

    def send(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request; the future resolves to the whole response message."""
        msg_id = next(self._ids)
        while msg_id in self._pending:  # taken by a raw request the test wrote (expect)
            msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    def expect(self, msg_id: int | str) -> asyncio.Future[Any]:
        """A future for the response to ``msg_id``: a request the test writes itself,
        raw, on :attr:`proc`'s stdin."""
        if msg_id in self._pending:
            raise ValueError(f"a request with id {msg_id!r} is already waiting")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        return future

    def write_raw(self, body: bytes) -> None:
        """One body, correctly framed, whatever it holds."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        response = await asyncio.wait_for(self.send(method, params), timeout)
        if "error" in response:
            raise RuntimeError(response["error"])
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, message: dict[str, Any], result: Any) -> None:
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def next_request(self, method: str, timeout: float = 60) -> dict[str, Any]:
        """The next server → client request of ``method`` (others are answered null)."""
        while True:
            message = await asyncio.wait_for(self.incoming.get(), timeout)
            if message["method"] == method:
                return message
            self.answer(message, None)

    # ---------------------------------------------------------------- session

    async def initialize(
        self, root: Path, capabilities: dict[str, Any], options: dict[str, Any] | None = None
    ) -> Any:
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": capabilities,
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str | None = None) -> None:
        """didOpen: the file is open in the editor (edits to it then go through applyEdit)."""
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "plaintext", "version": 1,
            "text": path.read_text() if text is None else text}})  # fmt: skip

    async def run_tool(self, name: str, tool_input: Any, timeout: float = 60) -> dict[str, Any]:
        return await self.request("codev/runTool", {"name": name, "input": tool_input}, timeout)

    # ---------------------------------------------------------------- endings

    def vanish(self) -> None:
        """The editor disappears: both pipes close at once, nothing more is said."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self._reader.cancel()
        transport = getattr(self.proc.stdout, "_transport", None)
        if transport is not None:
            transport.close()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)

    async def wait_exit(self, timeout: float = 30) -> int | None:
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return None

    async def close(self) -> None:
        """Polite shutdown if it still listens; killed (with its group) otherwise."""
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
            if await self.wait_exit(10) is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                await self.wait_exit(10)
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def uri_path(uri: str) -> Path:
    from urllib.parse import unquote, urlsplit

    return Path(unquote(urlsplit(uri).path))


def apply_changes(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP TextEdits (utf-16 positions; ASCII in these tests) to ``text``."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: dict[str, int]) -> int:
        line = pos["line"]
        if line >= len(lines):
            return len(text)
        return starts[line] + pos["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text
