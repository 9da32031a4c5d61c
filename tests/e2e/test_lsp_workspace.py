"""Open buffers, settings, stale reads, hooks' progress and shutdown, over the real LSP.

Each runs with both capability presets where they behave differently (the
``editor`` fixture runs a test twice: Neovim 0.11's capabilities, then VS Code's).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient

pytestmark = pytest.mark.asyncio

NEOVIM, VSCODE = PRESETS


def _settings(folder: Path, data: Any, name: str = "settings.json") -> Path:
    path = folder / ".codev" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# --------------------------------------------------------------------------- open buffers


async def test_grep_searches_open_buffers_unsaved_changes_included(
    editor: EditorClient, workspace: Path
) -> None:
    typed = workspace / "typed.py"
    typed.write_text("x = 1\n")
    editor.open(typed)
    editor.type(typed, "x = 1\nneedle = 'only in the buffer'\n")  # unsaved
    deleted = workspace / "deleted.py"
    deleted.write_text("needle = 'only on disk'\n")
    editor.open(deleted)
    editor.type(deleted, "nothing here\n")  # the needle was deleted in the editor, unsaved
    on_disk = workspace / "disk.py"
    on_disk.write_text("needle = 'saved'\n")  # not open: the disk is the truth
    files = await editor.run_tool("Grep", {"pattern": "needle", "path": str(workspace)})
    assert files["status"] == "success", files
    found = set(files["content"].splitlines())
    assert str(typed) in found and str(on_disk) in found
    assert str(deleted) not in found
    lines = await editor.run_tool(
        "Grep", {"pattern": "needle", "path": str(workspace), "output_mode": "content", "-n": True}
    )
    assert lines["status"] == "success", lines
    assert f"{typed}:2:needle = 'only in the buffer'" in lines["content"]
    assert "only on disk" not in lines["content"]
    assert typed.read_text() == "x = 1\n"  # a search never saves anything


# --------------------------------------------------------------------------- stale reads


async def test_an_edit_after_the_file_changed_on_disk_is_refused(
    editor: EditorClient, workspace: Path
) -> None:
    """Another program changed the file after the model read it: read it again first."""
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    assert (await editor.run_tool("Read", {"file_path": str(path)}))["status"] == "success"
    path.write_text("x = 1\ny = 2  # written by someone else\n")
    outcome = await editor.run_tool(
        "Edit", {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 3"}
    )
    assert outcome["status"] == "error", outcome
    assert "read it again" in outcome["content"].lower()
    assert path.read_text() == "x = 1\ny = 2  # written by someone else\n"
    assert editor.edits == [] and editor.prompts == []  # refused before asking or sending
    # After a new Read the same edit goes through.
    assert (await editor.run_tool("Read", {"file_path": str(path)}))["status"] == "success"
    editor.prompt_answer = "Allow once"
    again = await editor.run_tool(
        "Edit", {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 3"}
    )
    assert again["status"] == "success", again
    assert path.read_text() == "x = 3\ny = 2  # written by someone else\n"


# --------------------------------------------------------------------------- settings


async def test_a_malformed_settings_file_is_shown_and_ignored(
    start_editor: StartEditor, workspace: Path, _isolated_config: Path
) -> None:
    broken = _settings(workspace, '{"permissions": {"deny": ["Read"]')  # cut short
    _settings(workspace, {"permissions": {"deny": ["Glob"]}}, "settings.local.json")
    (_isolated_config / "settings.json").write_text("[1, 2")  # the user's file, broken too
    client = await start_editor(NEOVIM)
    tools = [t["name"] for t in (await client.request("codev/listTools", {}))["tools"]]
    # The broken files are ignored as a whole (their deny rule too); the good one applies.
    assert "Read" in tools and "Glob" not in tools
    (workspace / "a.txt").write_text("hi\n")
    read = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    assert read["status"] == "success", read
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert any(str(broken) in m for m in errors), client.messages
    assert any(str(_isolated_config / "settings.json") in m for m in errors), client.messages
    assert all("Traceback" not in m for m in errors)


# --------------------------------------------------------------------------- hooks


@pytest.mark.parametrize("preset", PRESETS)
async def test_hooks_being_run_are_progress_reports(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    """Each hook that runs is named in the run's progress (PROTOCOL.md: "for hooks the
    hook being run"), and the bar is cancellable like any other."""

    def hook(seconds: float, tag: str) -> dict[str, Any]:
        code = f"import time; time.sleep({seconds})  # {tag}"
        command = " ".join(shlex.quote(a) for a in (sys.executable, "-c", code))
        return {"type": "command", "command": command}

    _settings(
        workspace,
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Read", "hooks": [hook(0.6, "first"), hook(0.6, "second")]}
                ],
                "PostToolUse": [{"matcher": "Read", "hooks": [hook(0.6, "after")]}],
            }
        },
    )
    client = await start_editor(preset)
    (workspace / "a.txt").write_text("hi\n")
    outcome = await client.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    assert outcome["status"] == "success", outcome
    [token] = client.progress_reports
    begin, *middle, end = client.progress_reports[token]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
    assert begin.title.startswith("Read")
    assert isinstance(end, types.WorkDoneProgressEnd)
    reports = [r.message or "" for r in middle if isinstance(r, types.WorkDoneProgressReport)]
    # The bar appears a moment after the start: a hook already running by then is the
    # begin's message, every later one a report (the PostToolUse hook always is).
    shown = [begin.message or "", *reports]
    for event, tag in (("PreToolUse", "first"), ("PreToolUse", "second")):
        assert any(m.startswith(f"{event} hook: ") and f"# {tag}" in m for m in shown), shown
    assert any(m.startswith("PostToolUse hook: ") and "# after" in m for m in reports), reports


# --------------------------------------------------------------------------- shutdown


@pytest.mark.parametrize("preset", PRESETS)
async def test_shutdown_finishes_an_edit_the_editor_applied(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    """shutdown arrives after the editor applied the edit but before the server has
    learned what landed (the editor's didChange is late) and written the disk: the
    server finishes the edit — the disk gets what the buffer shows — and then exits."""
    client = await start_editor(preset, initialize=False)
    client.client_info = None  # an editor whose change order is not known
    await client.initialize(
        workspace, initialization_options={"permissionMode": "bypassPermissions"}
    )
    client.didchange_delay = 0.5
    path = workspace / "a.txt"
    old = "".join(f"line {i}\n" for i in range(1, 21))
    path.write_text(old)
    client.open(path)
    assert (await client.run_tool("Read", {"file_path": str(path)}))["status"] == "success"
    closing: list[asyncio.Task[Any]] = []

    def answer(params: types.ApplyWorkspaceEditParams) -> set[str] | None:
        # Right after the answer goes out, the editor is closed.
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, lambda: closing.append(asyncio.ensure_future(client.close())))
        return None

    client.edit_answer = answer  # type: ignore[assignment]
    new = old.replace("line 3\n", "three\n")
    write = {"name": "Write", "input": {"file_path": str(path), "content": new}}
    outcome = await asyncio.wait_for(client.request("codev/runTool", write), 30)
    # Interrupted by the shutdown — but only once the applied edit was finished.
    assert outcome["status"] == "interrupted", outcome
    while not closing:
        await asyncio.sleep(0.01)
    await asyncio.wait_for(closing[0], 30)
    assert client.text(path) == new
    assert path.read_text() == new
