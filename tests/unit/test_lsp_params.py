"""The codev/* params checked at the LSP boundary, ToolInfo, and the prompt's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from codev_ls.bridge import PermissionRequest
from codev_ls.engine.tool import build_tool
from codev_ls.lsp_bridge import _disk_mismatch, cut_prompt_detail, permission_message
from codev_ls.lsp_params import (
    InvalidParams,
    parse_cancel,
    parse_chat,
    parse_chat_args,
    parse_mode_args,
    parse_mode_params,
    parse_run_tool,
    parse_run_tool_args,
    tool_info,
)


def test_run_tool_params() -> None:
    req = parse_run_tool({"name": "Read", "input": {"file_path": "/x"}, "toolUseId": "t1"})
    assert (req.name, req.input, req.tool_use_id, req.work_done_token) == (
        "Read",
        {"file_path": "/x"},
        "t1",
        None,
    )
    assert parse_run_tool({"name": "Glob"}).input == {}
    # A non-object input is the tool's error (an outcome), not a malformed request.
    assert parse_run_tool({"name": "Read", "input": [1]}).input == [1]
    assert parse_run_tool({"name": "X", "workDoneToken": 3}).work_done_token == 3


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        "Read",
        {"input": {}},
        {"name": ""},
        {"name": "   "},
        {"name": 1},
        {"name": "x" * 201},
        {"name": "Read", "toolUseId": 5},
        {"name": "Read", "toolUseId": ""},
        {"name": "Read", "workDoneToken": True},
        {"name": "Read", "workDoneToken": [1]},
    ],
)
def test_malformed_run_tool_params(params: object) -> None:
    with pytest.raises(InvalidParams, match="codev/runTool"):
        parse_run_tool(params)


def test_command_arguments() -> None:
    assert parse_run_tool_args(("Read", {"file_path": "/x"})).name == "Read"
    assert parse_run_tool_args(("Glob",)).input == {}
    assert parse_run_tool_args(({"name": "Read", "input": {}},)).name == "Read"
    with pytest.raises(InvalidParams, match=r"\[name, input\]"):
        parse_run_tool_args(())
    with pytest.raises(InvalidParams):
        parse_run_tool_args(("Read", {}, "extra"))
    assert parse_mode_args(()) is None
    assert parse_mode_args(("plan",)) == "plan"
    assert parse_mode_args(("ACCEPTEDITS",)) == "acceptEdits"
    with pytest.raises(InvalidParams, match="unknown permission mode"):
        parse_mode_args(("yolo",))
    assert parse_chat_args(("hi",)).prompt == "hi"
    assert parse_chat_args(("hi", "s1")).session_id == "s1"
    with pytest.raises(InvalidParams):
        parse_chat_args(())


def test_mode_chat_cancel_params() -> None:
    assert parse_mode_params({}) is None
    assert parse_mode_params({"mode": "bypassPermissions"}) == "bypassPermissions"
    with pytest.raises(InvalidParams, match="default, acceptEdits"):
        parse_mode_params({"mode": 3})
    assert parse_chat({"prompt": "", "sessionId": "abc"}).session_id == "abc"
    with pytest.raises(InvalidParams, match="prompt"):
        parse_chat({"prompt": None})
    assert parse_cancel(None).tool_use_id is None
    assert parse_cancel({"toolUseId": "t"}).tool_use_id == "t"
    with pytest.raises(InvalidParams):
        parse_cancel({"sessionId": 1})


def test_tool_info_asks_traits_safely() -> None:
    def read_only(input: object) -> bool:
        if input is None:
            raise TypeError("needs an input")
        return True

    tool = build_tool(name="Thing", is_read_only=read_only, aliases=["Stuff"], search_hint="hint")
    info = tool_info(tool)
    assert info["name"] == "Thing" and info["aliases"] == ["Stuff"]
    assert info["readOnly"] is False  # unknown without an input: the safe answer
    assert info["concurrencySafe"] is False and info["destructive"] is False
    assert info["deferred"] is False and info["source"] == "builtin"
    assert info["searchHint"] == "hint"
    assert info["inputSchema"] == {"type": "object", "properties": {}}


def test_the_prompt_text() -> None:
    request = PermissionRequest(
        tool_use_id="t",
        tool_name="Bash",
        message="Bash: run `npm test`",
        detail="npm test",
        reason="Bash may change things",
    )
    text = permission_message(request)
    # The one-line command is in the first line already: not repeated below it.
    assert text == "Codev wants to use Bash: run `npm test`\n(Bash may change things)"
    request.detail = "npm test && npm run lint"
    text = permission_message(request)
    assert text.startswith("Codev wants to use Bash: run `npm test`")
    assert "(Bash may change things)" in text and text.endswith("npm test && npm run lint")
    long_diff = "\n".join(f"+line {i}" for i in range(100))
    cut = cut_prompt_detail(long_diff)
    assert "+line 39" in cut and "+line 40" not in cut
    assert "60 more lines not shown" in cut
    wide = "x" * 10_000
    assert len(cut_prompt_detail(wide)) < 3_200


def test_disk_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    assert _disk_mismatch(path, None, "utf-8") is None
    assert "no longer exists" in (_disk_mismatch(path, "x", "utf-8") or "")
    path.write_bytes(b"caf\xc3\xa9\n")
    assert _disk_mismatch(path, "café\n", "utf-8") is None
    assert "changed on disk" in (_disk_mismatch(path, "cafe\n", "utf-8") or "")
    assert "created" in (_disk_mismatch(path, None, "utf-8") or "")
    path.write_bytes(b"\xff\xfe bad utf-8\n")
    assert _disk_mismatch(path, "\udcff\udcfe bad utf-8\n", "utf-8") is None
