"""Random and mutated JSON-RPC messages to the real server over stdio: it never dies,
and every request gets an answer.

One server per test module, driven by a bare client (``lsp_client.py``) that can
send anything: every method of the contract and some that do not exist, with
params drawn at random or broken from valid ones (wrong types, missing keys,
extra keys, nulls, huge and odd strings), buffer traffic with out-of-range
positions and stale versions, cancellations of unknown ids, and bodies that
are not JSON-RPC at all (framed correctly: a wrong Content-Length desynchronises
any stream by definition). After each example the server must still answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

pytest.importorskip("codev_ls.server", reason="the LSP server is not in this checkout")

from tests.reliability.budget import fuzz_settings
from tests.reliability.lsp_client import LspProcess

ANSWER_TIMEOUT = 60.0

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(exclude_categories=()), max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)

TOOLS = ["Read", "Glob", "Grep", "Write", "Edit", "Bash", "WebFetch", "TaskOutput", "Nope", ""]
METHODS = [
    "codev/runTool",
    "codev/listTools",
    "codev/permissionMode",
    "codev/cancel",
    "codev/chat",
    "workspace/executeCommand",
    "workspace/didChangeConfiguration",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/hover",
    "$/cancelRequest",
    "$/setTrace",
    "window/workDoneProgress/cancel",
    "codev/unknown",
    "initialize",
]


@st.composite
def tool_params(draw: st.DrawFn, ws: Path) -> Any:
    path = draw(
        st.sampled_from([str(ws / "a.txt"), str(ws / "new.txt"), str(ws), "/etc/hostname", ""])
    )
    tool_input = draw(
        st.one_of(
            st.fixed_dictionaries({"file_path": st.just(path)}),
            st.fixed_dictionaries({"pattern": st.sampled_from(["*", "a", "[", "**/*.txt"])}),
            st.fixed_dictionaries({"file_path": st.just(path), "content": st.text(max_size=50)}),
            st.fixed_dictionaries({"command": st.sampled_from(["ls", "echo hi", "true"])}),
            json_values,
        )
    )
    params: dict[str, Any] = {"name": draw(st.sampled_from(TOOLS)), "input": tool_input}
    if draw(st.booleans()):
        params["toolUseId"] = draw(st.one_of(st.text(max_size=12), json_values))
    if draw(st.booleans()):
        params["workDoneToken"] = draw(st.one_of(st.text(max_size=8), st.integers(), json_values))
    return params


def _position() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"line": st.integers(-5, 2**31), "character": st.integers(-5, 2**31)}
        ),
        json_values,
    )


@st.composite
def document_params(draw: st.DrawFn, ws: Path, method: str) -> Any:
    uri = draw(
        st.sampled_from(
            [(ws / "a.txt").as_uri(), (ws / "open.txt").as_uri(), "file:///nope", "not a uri", ""]
        )
    )
    version = draw(st.one_of(st.integers(-3, 2**31), st.none(), json_values))
    if method == "textDocument/didOpen":
        return {"textDocument": {"uri": uri, "languageId": "plaintext", "version": version,
                                 "text": draw(st.text(max_size=200))}}  # fmt: skip
    if method == "textDocument/didChange":
        change = draw(
            st.one_of(
                st.fixed_dictionaries({"text": st.text(max_size=50)}),
                st.fixed_dictionaries(
                    {
                        "range": st.fixed_dictionaries({"start": _position(), "end": _position()}),
                        "text": st.text(max_size=50),
                    }
                ),
                json_values,
            )
        )
        return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
    return {"textDocument": {"uri": uri}}


@st.composite
def messages(draw: st.DrawFn, ws: Path) -> tuple[str, Any, bool]:
    """(method, params, is_request)."""
    method = draw(st.sampled_from(METHODS))
    broken = draw(st.booleans())
    if method == "codev/runTool":
        params = draw(tool_params(ws))
    elif method.startswith("textDocument/did"):
        params = draw(document_params(ws, method))
    elif method == "workspace/executeCommand":
        params = {
            "command": draw(st.sampled_from(["codev.runTool", "codev.listTools",
                                             "codev.permissionMode", "codev.chat", "codev.x"])),
            "arguments": draw(st.lists(json_values, max_size=3)),
        }  # fmt: skip
    elif method == "codev/permissionMode":
        params = {"mode": draw(st.sampled_from(["default", "plan", "acceptEdits", "nope", ""]))}
    else:
        params = draw(json_values)
    if broken and isinstance(params, dict) and params:
        key = draw(st.sampled_from(sorted(params)))
        how = draw(st.sampled_from(["drop", "retype", "extra"]))
        params = dict(params)
        if how == "drop":
            params.pop(key)
        elif how == "retype":
            params[key] = draw(json_values)
        else:
            params[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    elif broken:
        params = draw(json_values)
    is_request = not method.startswith(("textDocument/did", "$/", "workspace/didChange",
                                        "window/workDoneProgress/cancel"))  # fmt: skip
    return method, params, is_request


# --------------------------------------------------------------------------- the lab


class Lab:
    def __init__(self, root: Path) -> None:
        self.ws = (root / "ws").resolve()
        self.ws.mkdir()
        (self.ws / "a.txt").write_text("alpha\nbeta\n")
        (self.ws / "open.txt").write_text("open\n")
        self.loop = asyncio.new_event_loop()
        self.server: LspProcess = self.loop.run_until_complete(self._start())

    async def _start(self) -> LspProcess:
        server = await LspProcess.start()
        # A patient, unhelpful editor: it dismisses questions and refuses edits.
        server.auto_answer.update(
            {
                "window/showMessageRequest": None,
                "workspace/applyEdit": {"applied": False, "failureReason": "fuzzing"},
                "window/workDoneProgress/create": None,
                "workspace/configuration": [None],
                "client/registerCapability": None,
            }
        )
        await server.initialize(
            self.ws,
            {"workspace": {"applyEdit": True, "configuration": True},
             "window": {"workDoneProgress": True}},
        )  # fmt: skip
        return server

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    async def alive(self) -> None:
        assert self.server.proc.returncode is None, "the server died"
        tools = await self.server.request("codev/listTools", {}, timeout=ANSWER_TIMEOUT)
        assert tools["tools"], tools

    async def send(self, method: str, params: Any, is_request: bool) -> dict | None:
        if not is_request:
            self.server.notify(method, params)
            return None
        response = await asyncio.wait_for(self.server.send(method, params), ANSWER_TIMEOUT)
        assert ("result" in response) != ("error" in response), response
        if "error" in response:
            error = response["error"]
            assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
            assert "Traceback" not in error["message"], error
        return response

    def close(self) -> None:
        self.run(self.server.close())
        self.loop.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CODEV_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEV_PROVIDER"):
        mp.delenv(var, raising=False)
    lab = Lab(tmp_path_factory.mktemp("lsp-fuzz"))
    yield lab
    lab.close()
    mp.undo()


# --------------------------------------------------------------------------- tests


@fuzz_settings(ci=60)
@given(data=st.data())
def test_random_and_mutated_messages(lab: Lab, data: st.DataObject) -> None:
    batch = data.draw(st.lists(messages(lab.ws), min_size=1, max_size=4), label="messages")

    async def go() -> None:
        # Sent together, answered in any order: each request must get its answer.
        results = await asyncio.gather(*(lab.send(m, p, r) for m, p, r in batch))
        for (method, _, _), response in zip(batch, results, strict=True):
            if response is not None:
                event(f"{method}: {'error' if 'error' in response else 'result'}")
        await lab.alive()

    lab.run(go())


def answer_due(body: bytes) -> int | str | None:
    """The id a framed body must be answered under: a JSON-RPC 2.0 request (a method
    name and an id that is a number or a string) gets a result or an error, whatever
    its method and params — even where it names a notification."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    msg_id = message.get("id")
    if not isinstance(message.get("method"), str) or isinstance(msg_id, bool):
        return None
    return msg_id if isinstance(msg_id, int | str) else None


@fuzz_settings(ci=40)
@given(
    body=st.one_of(
        st.binary(max_size=200),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {
                "jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2, None]),
                "id": st.one_of(st.integers(2 * 10**7, 3 * 10**7), st.text(max_size=8),
                                json_values),
                "method": st.one_of(st.sampled_from(METHODS), json_values),
                "params": json_values,
            }
        ).map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {"jsonrpc": st.just("2.0"), "id": st.integers(10**6, 10**7), "result": json_values}
        ).map(lambda v: json.dumps(v).encode()),
    )
)  # fmt: skip
def test_bodies_that_are_not_messages(lab: Lab, body: bytes) -> None:
    """Framed garbage: the server logs it and goes on answering; a request among it, however
    odd its method or params, gets its answer."""

    async def go() -> None:
        msg_id = answer_due(body)
        answer = lab.server.expect(msg_id) if msg_id is not None else None
        lab.server.write_raw(body)
        if answer is not None:
            response = await asyncio.wait_for(answer, ANSWER_TIMEOUT)
            assert ("result" in response) != ("error" in response), response
            event("a request: " + ("error" if "error" in response else "result"))
        await lab.alive()

    lab.run(go())


def test_answer_due_knows_a_request() -> None:
    """The rule the fuzz test above checks by: which bodies are requests."""
    due = [
        b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": 1}',
        b'{"jsonrpc": "2.0", "id": "", "method": "textDocument/didOpen"}',
    ]
    not_due = [
        b'{"jsonrpc": "2.0", "id": true, "method": "x"}',
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "x"}',
        b'{"jsonrpc": "2.0", "id": 7, "method": 3}',
        b'{"jsonrpc": "2.0", "method": "x"}',
        b'{"jsonrpc": "2.0", "id": 7, "result": null}',
        b"[1, 2]",
        b"\xff not json",
    ]
    assert [answer_due(b) for b in due] == [7, ""]
    assert [answer_due(b) for b in not_due] == [None] * len(not_due)


def test_headers_that_lie_are_survived_by_a_fresh_server(tmp_path: Path) -> None:
    """A header the server cannot parse, then a good message: it answers or exits cleanly —
    it never hangs holding the editor's request forever without reading."""

    async def go() -> None:
        ws = tmp_path / "ws"
        ws.mkdir()
        server = await LspProcess.start()
        try:
            await server.initialize(ws, {})
            server.write_raw(b"")  # an empty body
            assert server.proc.stdin is not None
            server.proc.stdin.write(b"Content-Type: nonsense\r\nX: y\r\n\r\n")
            server.proc.stdin.write(b"Content-Length: 2\r\n\r\n{}")
            tools = await server.request("codev/listTools", {}, timeout=ANSWER_TIMEOUT)
            assert tools["tools"]
            assert server.proc.returncode is None, "the server exited"
        finally:
            await server.close()

    asyncio.run(go())


def test_requests_pygls_would_drop_get_an_invalid_request_answer(tmp_path: Path) -> None:
    """A request of another JSON-RPC version, and requests after ``shutdown``: answered
    with InvalidRequest (-32600), as LSP asks — never left for the editor to wait on."""

    async def go() -> None:
        ws = tmp_path / "ws"
        ws.mkdir()
        server = await LspProcess.start()
        try:
            await server.initialize(ws, {})
            old = server.expect("v1")
            server.write_raw(b'{"jsonrpc": "1.0", "id": "v1", "method": "codev/listTools"}')
            answer = await asyncio.wait_for(old, ANSWER_TIMEOUT)
            assert answer["error"]["code"] == -32600
            assert '"jsonrpc" must be "2.0"' in answer["error"]["message"]
            assert (await server.request("shutdown", None, timeout=ANSWER_TIMEOUT)) is None
            late = await asyncio.wait_for(server.send("codev/listTools", {}), ANSWER_TIMEOUT)
            assert late["error"]["code"] == -32600
            assert "shutting down" in late["error"]["message"]
        finally:
            await server.close()

    asyncio.run(go())
