"""Garbage in, answers out: malformed params, unknown methods, huge inputs, NUL bytes, load."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.editor import EditorClient

pytestmark = pytest.mark.asyncio


async def _error_code(client: EditorClient, method: str, params: object) -> int:
    with pytest.raises(JsonRpcException) as info:
        await client.request(method, params)
    assert "Traceback" not in info.value.message
    return info.value.code


async def _still_answers(client: EditorClient, workspace: Path) -> None:
    (workspace / "alive.txt").write_text("alive\n")
    outcome = await client.run_tool("Read", {"file_path": str(workspace / "alive.txt")})
    assert outcome["status"] == "success" and "alive" in outcome["content"]


MALFORMED = [
    ("codev/runTool", [1, 2]),
    ("codev/runTool", "Read"),
    ("codev/runTool", {}),
    ("codev/runTool", {"name": 42, "input": {}}),
    ("codev/runTool", {"name": "", "input": {}}),
    ("codev/runTool", {"name": "Read", "input": {}, "toolUseId": ["x"]}),
    ("codev/runTool", {"name": "Read", "input": {}, "workDoneToken": {"a": 1}}),
    ("codev/runTool", {"name": "Read", "input": {}, "toolUseId": "a\u0000b"}),
    ("codev/permissionMode", {"mode": "nope"}),
    ("codev/permissionMode", {"mode": ["default"]}),
    ("codev/permissionMode", 5),
    ("codev/chat", {}),
    ("codev/chat", {"prompt": 1}),
    ("codev/cancel", {"toolUseId": 5}),
    ("codev/listTools", "x"),
    # Standard methods whose params do not fit their LSP types.
    ("workspace/executeCommand", {"command": 5}),
    ("workspace/executeCommand", {"command": "codev.runTool", "arguments": [1, 2, 3]}),
    ("workspace/executeCommand", {"command": "codev.runTool", "arguments": [None]}),
    ("workspace/executeCommand", {"command": "codev.nothing"}),
    ("workspace/executeCommand", {"command": "codev.permissionMode", "arguments": [1]}),
    ("workspace/executeCommand", {"command": "codev.chat", "arguments": []}),
]


async def test_malformed_params_are_invalid_params(vscode: EditorClient, workspace: Path) -> None:
    for method, params in MALFORMED:
        with pytest.raises(JsonRpcException) as info:
            await vscode.raw_request(method, params)
        error = info.value
        assert error.code == -32602, (method, params, error)
        assert "Traceback" not in error.message
    # Notifications with garbage params: no answer is due, and nothing breaks.
    vscode.send_raw({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": 12})
    vscode.send_raw(
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {}}}
    )
    vscode.send_raw({"jsonrpc": "2.0", "method": "codev/whatever", "params": [1, 2, 3]})
    await _still_answers(vscode, workspace)


async def test_unknown_methods(vscode: EditorClient, workspace: Path) -> None:
    assert await _error_code(vscode, "codev/doesNotExist", {}) == -32601
    assert await _error_code(vscode, "textDocument/hover2", {}) == -32601
    await _still_answers(vscode, workspace)


async def test_huge_and_nul_inputs_are_error_outcomes(
    vscode: EditorClient, workspace: Path
) -> None:
    huge = "x" * 5_000_000
    outcome = await vscode.run_tool("Read", {"file_path": huge})
    assert outcome["status"] == "error"
    nul = await vscode.run_tool("Read", {"file_path": str(workspace / "a\x00b.txt")})
    assert nul["status"] == "error"
    nested = await vscode.run_tool("Read", {"file_path": {"jsonrpc": "2.0", "id": 1}})
    assert nested["status"] == "error" and "file_path" in nested["content"]
    deep: object = {}
    for _ in range(50):
        deep = {"a": deep}
    assert (await vscode.run_tool("Glob", deep))["status"] == "error"
    many_keys = {f"k{i}": i for i in range(10_000)}
    assert (await vscode.run_tool("Read", many_keys))["status"] == "error"
    await _still_answers(vscode, workspace)


async def test_a_tool_input_with_jsonrpc_keys_stays_an_object(
    start_editor, workspace: Path
) -> None:
    """pygls would take any object with a "jsonrpc" key for a message; the server does not."""
    client = await start_editor("neovim@v0.11.0", mode="bypassPermissions")
    content = json.dumps({"jsonrpc": "2.0", "method": "x", "id": 3})
    outcome = await client.run_tool(
        "Write", {"file_path": str(workspace / "rpc.json"), "content": content}
    )
    assert outcome["status"] == "success", outcome
    assert (workspace / "rpc.json").read_text() == content


async def test_raw_garbage_on_the_wire(vscode: EditorClient, workspace: Path) -> None:
    """Bytes that are not JSON, JSON that is not a message: logged, never fatal."""
    for body in (b"{not json", b"[1, 2, 3]", b'"just a string"', b"null", b'{"id": 1}'):
        vscode.send_raw(body)
    vscode.send_raw(b"\xff\xfe\x00\x01\x02")
    vscode.send_raw({"jsonrpc": "2.0", "id": 99, "method": "codev/listTools", "params": None})
    await _still_answers(vscode, workspace)


async def test_a_hundred_concurrent_runs(vscode: EditorClient, workspace: Path) -> None:
    for i in range(100):
        (workspace / f"f{i}.txt").write_text(f"content of file {i}\n")
    tasks = [
        vscode.request_task(
            "codev/runTool",
            {
                "name": "Read",
                "input": {"file_path": str(workspace / f"f{i}.txt")},
                "toolUseId": f"toolu_{i}",
            },
        )
        for i in range(100)
    ]
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    for i, outcome in enumerate(outcomes):
        assert outcome["toolUseId"] == f"toolu_{i}"
        assert outcome["status"] == "success"
        assert outcome["content"] == f"     1\tcontent of file {i}"


async def test_logs_go_to_the_editor_not_stdout(vscode: EditorClient, workspace: Path) -> None:
    """Protocol garbage is logged through window/logMessage; stdout stays the protocol."""
    vscode.send_raw(b"{garbage}")
    await _still_answers(vscode, workspace)
    for _ in range(100):
        if any(m.type == types.MessageType.Error for m in vscode.log_messages):
            break
        await asyncio.sleep(0.05)
    assert any(m.type == types.MessageType.Error for m in vscode.log_messages)
