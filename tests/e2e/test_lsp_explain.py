"""codev/explainPermission over the real server: why a use would be allowed, denied or asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import EditorClient

pytestmark = pytest.mark.asyncio


async def test_explain_says_why_without_running(editor: EditorClient, workspace: Path) -> None:
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}})
    )
    (workspace / "keep").write_text("x")
    data = await editor.request(
        "codev/explainPermission", {"name": "Bash", "input": {"command": "echo hi && rm keep"}}
    )
    assert data["decision"] == "deny" and data["rule"] == "Bash(rm:*)"
    assert "project settings" in data["reason"]
    assert [c["argv"] for c in data["shell"]["commands"]] == [["echo", "hi"], ["rm", "keep"]]
    assert (workspace / "keep").exists()
    assert editor.prompts == []

    asked = await editor.request(
        "codev/explainPermission",
        {
            "name": "Write",
            "input": {"file_path": str(workspace / "src" / "a.py"), "content": ""},
            "mode": "default",
        },
    )
    assert asked["decision"] == "ask" and asked["wouldOffer"] == ["Edit(src/**)"]
    assert not (workspace / "src").exists()


async def test_explain_mode_and_errors(start_editor: StartEditor, workspace: Path) -> None:
    client = await start_editor()
    data = await client.request(
        "codev/explainPermission",
        {
            "name": "Write",
            "input": {"file_path": str(workspace / "x"), "content": ""},
            "mode": "plan",
        },
    )
    assert data["decision"] == "deny" and "Plan mode is on" in data["reason"]
    unknown = await client.request("codev/explainPermission", {"name": "Nope", "input": {}})
    assert "No such tool: Nope" in unknown["error"]
    with pytest.raises(Exception, match="mode"):
        await client.request(
            "codev/explainPermission", {"name": "Bash", "input": {}, "mode": "yolo"}
        )


async def test_always_allow_is_saved_and_a_new_server_uses_it(
    start_editor: StartEditor, workspace: Path
) -> None:
    first = await start_editor("visual-studio-code", env={"CODEV_SANDBOX": "0"})
    first.prompt_answer = "Always allow"
    outcome = await first.run_tool("Bash", {"command": "touch one two"})
    assert outcome["status"] == "success" and outcome["decisionSource"] == "user_permanent"
    [prompt] = first.prompts
    assert "Always allow: Bash(touch:*)" in [a.title for a in prompt.actions]
    saved = json.loads((workspace / ".codev" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Bash(touch:*)"]

    second = await start_editor(NEOVIM, env={"CODEV_SANDBOX": "0"})
    second.prompt_answer = "Reject"
    again = await second.run_tool("Bash", {"command": "touch three"})
    assert again["status"] == "success", again
    assert again["decisionSource"] == "config" and again["decisionRule"] == "Bash(touch:*)"
    assert second.prompts == []
    assert (workspace / "three").exists()
    # The saved rule is a prefix for touch only: anything chained still asks (and is rejected).
    chained = await second.run_tool("Bash", {"command": "touch four && rm one"})
    assert chained["status"] == "rejected"
    assert (workspace / "one").exists() and not (workspace / "four").exists()


NEOVIM = "neovim@v0.11.0"
