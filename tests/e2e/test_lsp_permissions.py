"""Permission prompts as window/showMessageRequest: choose, reject, dismiss, fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import EditorClient

pytestmark = pytest.mark.asyncio

NEOVIM = "neovim@v0.11.0"


async def _write(client: EditorClient, path: Path, content: str) -> dict:
    return await client.run_tool("Write", {"file_path": str(path), "content": content})


async def test_the_prompt_names_the_tool_and_shows_the_change(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM)
    outcome = await _write(client, workspace / "notes.txt", "first line\nsecond line\n")
    assert outcome["status"] == "success", outcome
    assert outcome["decisionSource"] == "user_temporary"
    assert (workspace / "notes.txt").read_text() == "first line\nsecond line\n"
    [prompt] = client.prompts
    assert prompt.type.name == "Warning"
    assert "Write" in prompt.message and "notes.txt" in prompt.message
    assert "+first line" in prompt.message  # the diff of the new file
    titles = [a.title for a in prompt.actions]
    assert titles[0] == "Allow once"
    assert titles[-1] == "Reject"
    assert any(t.startswith("Allow for this session: ") for t in titles)
    assert any(t.startswith("Always allow: ") for t in titles)


async def test_a_long_diff_is_cut_to_a_readable_length(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM)
    content = "".join(f"line {i}\n" for i in range(500))
    outcome = await _write(client, workspace / "long.txt", content)
    assert outcome["status"] == "success"
    message = client.prompts[0].message
    assert len(message) < 4_500
    assert "+line 10\n" in message and "+line 400\n" not in message
    assert "more lines not shown" in message


async def test_a_bash_prompt_names_its_command_once_unless_it_is_long(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM)
    client.prompt_answer = "Reject"
    await client.request("codev/runTool", {"name": "Bash", "input": {"command": "touch a.txt"}})
    # Named in the first line (and in the reason), not again as a detail block of its own.
    assert "touch a.txt" in client.prompts[0].message.splitlines()[0]
    assert "touch a.txt" not in client.prompts[0].message.splitlines()[2:]
    # A multi-line command is summarised on the first line and shown whole below it.
    script = "touch b.txt\ntouch c.txt"
    await client.request("codev/runTool", {"name": "Bash", "input": {"command": script}})
    assert script in client.prompts[1].message
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


@pytest.mark.parametrize(
    ("answer", "why"), [("Reject", "rejected"), (None, "dismissed"), ("error", "failed")]
)
async def test_no_allow_is_a_rejection(
    start_editor: StartEditor, workspace: Path, answer: str | None, why: str
) -> None:
    client = await start_editor(NEOVIM)
    client.prompt_answer = answer
    outcome = await _write(client, workspace / "no.txt", "nope\n")
    assert outcome["status"] == "rejected", why
    assert outcome["decisionSource"] == "user_reject"
    assert not (workspace / "no.txt").exists()
    assert client.edits == []
    # The server keeps answering.
    assert (await client.request("codev/permissionMode", {}))["mode"] == "default"


async def test_allow_for_the_session_stops_asking(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM)
    client.prompt_answer = "Allow for this session"
    path = workspace / "a.txt"
    first = await _write(client, path, "a\n")
    assert first["status"] == "success" and first["decisionSource"] == "user_temporary"
    [title] = [a.title for a in client.prompts[0].actions if a.title.startswith("Allow for")]
    rule = title.split(": ", 1)[1]
    assert "a.txt" in rule or rule in ("Write", "Edit")
    assert (await client.run_tool("Read", {"file_path": str(path)}))["status"] == "success"
    second = await _write(client, path, "b\n")
    assert second["status"] == "success", second
    assert second["decisionRule"] == rule
    assert len(client.prompts) == 1
    assert path.read_text() == "b\n"


async def test_vscode_previews_the_edit_instead_of_asking(
    start_editor: StartEditor, workspace: Path
) -> None:
    """With change annotations the editor's preview is the approval: no prompt is sent."""
    client = await start_editor("visual-studio-code")
    outcome = await _write(client, workspace / "new.txt", "hello\n")
    assert outcome["status"] == "success", outcome
    assert client.prompts == []
    [edit] = client.edits
    annotations = edit.edit.change_annotations
    assert annotations and all(a.needs_confirmation for a in annotations.values())
    assert (workspace / "new.txt").read_text() == "hello\n"


async def test_vscode_preview_refused_is_a_rejection(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor("visual-studio-code")
    client.edit_answer = "reject"
    outcome = await _write(client, workspace / "new.txt", "hello\n")
    assert outcome["status"] == "rejected", outcome
    assert client.prompts == []
    assert not (workspace / "new.txt").exists()


async def test_prompts_run_concurrently_and_each_gets_its_answer(
    start_editor: StartEditor, workspace: Path
) -> None:
    """Two runs waiting on two prompts at once: neither blocks the other (nor a Read)."""
    import asyncio

    client = await start_editor(NEOVIM)
    client.prompt_delay = 0.5
    client.prompt_answer = lambda p: "Allow once" if "yes.txt" in p.message else "Reject"
    (workspace / "r.txt").write_text("r\n")
    yes = client.request_task(
        "codev/runTool",
        {"name": "Write", "input": {"file_path": str(workspace / "yes.txt"), "content": "y\n"}},
    )
    no = client.request_task(
        "codev/runTool",
        {"name": "Write", "input": {"file_path": str(workspace / "no.txt"), "content": "n\n"}},
    )
    read = await client.run_tool("Read", {"file_path": str(workspace / "r.txt")})
    assert read["status"] == "success"
    assert not yes.done() or not no.done()  # the Read did not wait for the prompts
    yes_outcome, no_outcome = await asyncio.gather(yes, no)
    assert yes_outcome["status"] == "success" and no_outcome["status"] == "rejected"
    assert (workspace / "yes.txt").exists() and not (workspace / "no.txt").exists()


async def test_a_lost_editor_is_a_rejection(start_editor: StartEditor, workspace: Path) -> None:
    """The editor goes away while a prompt is open: nothing is written, the server exits."""
    import asyncio

    client = await start_editor(NEOVIM)
    client.prompt_delay = 60
    client.request_task(
        "codev/runTool",
        {"name": "Write", "input": {"file_path": str(workspace / "x.txt"), "content": "x"}},
    )
    for _ in range(400):
        if client.prompts:
            break
        await asyncio.sleep(0.05)
    assert client.prompts
    server = client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()
    await asyncio.wait_for(server.wait(), 30)
    assert not (workspace / "x.txt").exists()


async def test_a_workspace_s_hooks_wait_for_the_editor_s_approval(
    start_editor: StartEditor, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gap B of the issue-3 audit, over LSP: the question about the workspace's own
    settings is a showMessageRequest of its own; rejected, the hook never runs."""
    import json
    import sys

    monkeypatch.delenv("CODEV_TRUSTED_FOLDERS", raising=False)
    marker = tmp_path / "hook-ran"
    script = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Write"]},
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "*", "hooks": [{"command": f'{sys.executable} -c "{script}"'}]}
                    ]
                },
            }
        )
    )
    client = await start_editor(NEOVIM)
    client.prompt_answer = "Reject"
    outcome = await _write(client, workspace / "x.txt", "x\n")
    first = client.prompts[0]
    assert "want to run hooks or let tools run without asking" in first.message
    assert "PreToolUse hook" in first.message and "allow rule Write" in first.message
    assert [a.title for a in first.actions] == [
        "Allow once",
        "Always allow: these settings (as written now)",
        "Reject",
    ]
    assert not marker.exists()
    # The held allow rule did not allow: the Write itself was asked about (and rejected).
    assert len(client.prompts) == 2 and outcome["status"] == "rejected"
