"""The server's requests: capabilities, codev/* methods, their executeCommand mirrors, settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import EditorClient

pytestmark = pytest.mark.asyncio


async def test_capabilities_advertise_the_commands_and_methods(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(initialize=False)
    result = await client.initialize(workspace)
    caps = result.capabilities
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) == {
        "codev.listTools",
        "codev.runTool",
        "codev.permissionMode",
        "codev.chat",
        "codev.mcpStatus",
        "codev.mcpApprove",
        "codev.changes",
        "codev.undoChange",
    }
    # pygls leaves this out; clients only send a workDoneToken when it is set.
    assert caps.execute_command_provider.work_done_progress is True
    codev = caps.experimental["codev"]
    assert codev["methods"] == [
        "codev/listTools",
        "codev/runTool",
        "codev/permissionMode",
        "codev/chat",
        "codev/cancel",
        "codev/mcpStatus",
        "codev/mcpApprove",
        "codev/explainPermission",
        "codev/changes",
        "codev/undoChange",
    ]
    assert caps.text_document_sync.open_close is True
    assert result.server_info.name == "codev-ls"


async def test_list_tools_gives_sorted_tool_infos(editor: EditorClient) -> None:
    result = await editor.request("codev/listTools", {})
    tools = result["tools"]
    names = [t["name"] for t in tools]
    assert names == sorted(names)
    assert {"Read", "Glob", "Edit", "Write"} <= set(names)
    read = next(t for t in tools if t["name"] == "Read")
    assert set(read) == {
        "name",
        "aliases",
        "description",
        "searchHint",
        "inputSchema",
        "readOnly",
        "concurrencySafe",
        "destructive",
        "deferred",
        "source",
    }
    assert read["readOnly"] is True and read["source"] == "builtin"
    assert read["inputSchema"]["required"] == ["file_path"]
    write = next(t for t in tools if t["name"] == "Write")
    assert write["readOnly"] is False
    # The command mirror answers the same.
    assert await editor.command("codev.listTools") == result


async def test_run_tool_reads_a_file(editor: EditorClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    outcome = await editor.run_tool(
        "Read", {"file_path": str(workspace / "a.txt")}, toolUseId="toolu_mine"
    )
    assert outcome["status"] == "success"
    assert outcome["toolUseId"] == "toolu_mine"
    assert outcome["content"] == "     1\talpha\n     2\tbeta"
    assert outcome["decisionSource"] == "config"


async def test_the_workspace_root_comes_from_the_workspace_folder(
    editor: EditorClient, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "found.py").write_text("x = 1\n")
    outcome = await editor.run_tool("Glob", {"pattern": "**/*.py"})
    assert outcome["status"] == "success", outcome
    assert str(workspace / "sub" / "found.py") in outcome["content"]


async def test_run_tool_command_mirror(editor: EditorClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    outcome = await editor.command("codev.runTool", "Read", {"file_path": str(workspace / "a.txt")})
    assert outcome["status"] == "success"
    assert outcome["content"] == "     1\tone"


async def test_tool_failures_are_outcomes_not_errors(editor: EditorClient, workspace: Path) -> None:
    unknown = await editor.run_tool("NoSuchTool", {})
    assert unknown["status"] == "error" and "NoSuchTool" in unknown["content"]
    bad = await editor.run_tool("Read", {"path": "x"})
    assert bad["status"] == "error"
    assert "file_path" in bad["content"] and "path" in bad["content"]
    not_object = await editor.run_tool("Read", ["not", "an", "object"])
    assert not_object["status"] == "error"
    missing = await editor.run_tool("Read", {"file_path": str(workspace / "nope.txt")})
    assert missing["status"] == "error" and "does not exist" in missing["content"]


async def test_permission_mode_get_and_set(editor: EditorClient) -> None:
    assert await editor.request("codev/permissionMode", {}) == {"mode": "default"}
    assert await editor.request("codev/permissionMode", {"mode": "acceptEdits"}) == {
        "mode": "acceptEdits"
    }
    assert await editor.request("codev/permissionMode", None) == {"mode": "acceptEdits"}
    assert await editor.command("codev.permissionMode", "plan") == {"mode": "plan"}
    assert await editor.command("codev.permissionMode") == {"mode": "plan"}
    with pytest.raises(JsonRpcInvalidParams, match="bypassPermissions"):
        await editor.request("codev/permissionMode", {"mode": "yolo"})
    with pytest.raises(JsonRpcInvalidParams):
        await editor.command("codev.permissionMode", "yolo")
    assert await editor.request("codev/permissionMode", {}) == {"mode": "plan"}


async def test_the_mode_set_decides(start_editor: StartEditor, workspace: Path) -> None:
    client = await start_editor("neovim@v0.11.0", mode="plan")
    assert await client.request("codev/permissionMode", {}) == {"mode": "plan"}
    outcome = await client.run_tool(
        "Write", {"file_path": str(workspace / "new.txt"), "content": "x"}
    )
    assert outcome["status"] == "rejected"
    assert "Plan mode" in outcome["content"]
    assert not (workspace / "new.txt").exists()
    assert client.prompts == []


async def test_initialization_options_may_nest_the_codev_section(
    start_editor: StartEditor,
) -> None:
    client = await start_editor(initialization_options={"codev": {"permissionMode": "plan"}})
    assert await client.request("codev/permissionMode", {}) == {"mode": "plan"}


async def test_a_bad_mode_in_the_options_is_reported_and_ignored(
    start_editor: StartEditor,
) -> None:
    client = await start_editor(initialization_options={"permissionMode": "sometimes"})
    assert await client.request("codev/permissionMode", {}) == {"mode": "default"}
    assert any(
        "sometimes" in m.message and m.type == types.MessageType.Warning for m in client.messages
    )


async def test_an_empty_mode_setting_leaves_the_settings_files_in_charge(
    start_editor: StartEditor, workspace: Path
) -> None:
    # VS Code's codev.permissionMode defaults to "": the project's defaultMode decides.
    (workspace / ".codev").mkdir(exist_ok=True)
    (workspace / ".codev" / "settings.json").write_text(
        '{"permissions": {"defaultMode": "acceptEdits"}}'
    )
    client = await start_editor("visual-studio-code", initialization_options={"permissionMode": ""})
    assert await client.request("codev/permissionMode", {}) == {"mode": "acceptEdits"}
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codev": {"permissionMode": ""}})
    )
    assert await client.request("codev/permissionMode", {}) == {"mode": "acceptEdits"}
    assert not [m for m in client.messages if m.type == types.MessageType.Warning]


async def test_did_change_configuration_pushed(editor: EditorClient) -> None:
    editor.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codev": {"permissionMode": "acceptEdits"}})
    )
    assert await editor.request("codev/permissionMode", {}) == {"mode": "acceptEdits"}


async def test_did_change_configuration_pulled(editor: EditorClient) -> None:
    """A client that sends no settings is asked for the `codev` section."""
    editor.set_configuration({"permissionMode": "bypassPermissions"}, section="codev")
    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    for _ in range(50):
        mode = await editor.request("codev/permissionMode", {})
        if mode["mode"] == "bypassPermissions":
            break
    assert mode == {"mode": "bypassPermissions"}


async def test_a_bad_setting_is_shown_and_ignored(editor: EditorClient) -> None:
    editor.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"codev": {"permissionMode": 42}})
    )
    assert await editor.request("codev/permissionMode", {}) == {"mode": "default"}
    assert any("42" in m.message for m in editor.messages)


async def test_chat_without_a_model_says_how_to_configure_one(editor: EditorClient) -> None:
    result = await editor.request("codev/chat", {"prompt": "hello"})
    assert result["stopReason"] == "error"
    assert "ANTHROPIC_API_KEY" in result["text"] and "OPENAI_API_KEY" in result["text"]
    assert result["sessionId"]
    done = [e for e in editor.chat_events if e["type"] == "done"]
    assert done and done[-1]["sessionId"] == result["sessionId"]
    assert any("ANTHROPIC_API_KEY" in m.message for m in editor.messages)
    via_command = await editor.command("codev.chat", "hello")
    assert via_command["stopReason"] == "error"
    # The tools keep working.
    assert (await editor.request("codev/listTools", {}))["tools"]


async def test_cancel_with_nothing_running(editor: EditorClient) -> None:
    assert await editor.request("codev/cancel", {"toolUseId": "toolu_none"}) == {"cancelled": 0}
    assert await editor.request("codev/cancel", {}) == {"cancelled": 0}


async def test_requests_before_initialize_are_refused(start_editor: StartEditor) -> None:
    client = await start_editor(initialize=False)
    from pygls.exceptions import JsonRpcException

    client.capabilities = client.preset_capabilities  # pytest-lsp checks requests against them
    with pytest.raises(JsonRpcException) as info:
        await client.request("codev/listTools", {})
    assert info.value.code == -32002


async def test_a_plain_client_loses_nothing(start_editor: StartEditor, workspace: Path) -> None:
    """No applyEdit, no progress, no configuration: the server writes files itself."""
    client = await start_editor(initialize=False)
    await client.initialize(workspace, capabilities=types.ClientCapabilities())
    client.capabilities = types.ClientCapabilities()
    path = workspace / "plain.txt"
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": "plain\n"})
    assert outcome["status"] == "success", outcome
    assert path.read_text() == "plain\n"
    assert len(client.prompts) == 1  # showMessageRequest needs no capability
    assert client.edits == []
    assert client.progress_reports == {}


async def test_exit_without_shutdown_exits_with_1(start_editor: StartEditor) -> None:
    import asyncio

    client = await start_editor()
    client.exit(None)
    server = client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 30) == 1
