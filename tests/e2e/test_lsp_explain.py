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
