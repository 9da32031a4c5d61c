"""Approval of what a workspace's own settings files grant (gap B of the issue-3 audit).

Real engines over a temp workspace, real settings files, a real hook process and
the real bash (ShellTool); the approval key lives in the test's own config folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codev_ls.app import attach_permissions
from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.permissions.trust import APPROVED, REJECTED, TRUST_ENV
from codev_ls.tools.sandbox import load_sandbox_config
from tests.fakes.perm_tools import ShellTool, write_settings


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)


def hook_writing(marker: Path) -> dict:
    script = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"
    command = f"{sys.executable} -c {json.dumps(script)}"
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}


def project(workspace: Path, marker: Path, allow: list[str] | None = None) -> Path:
    return write_settings(
        workspace / ".codev" / "settings.json",
        {"allow": allow or ["Bash(touch:*)"], "deny": ["Bash(rm:*)"]},
        hooks=hook_writing(marker),
    )


def engine(workspace: Path, tmp_path: Path, answers: list[str]) -> Engine:
    e = Engine(
        workspace,
        ScriptedBridge(answers=answers, default_answer="reject"),  # type: ignore[arg-type]
        base_tools=[ShellTool()],
        data_root=tmp_path / "data",
    )
    attach_permissions(e, explicit_mode=True)
    return e


def local(workspace: Path) -> dict:
    path = workspace / ".codev" / "settings.local.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def test_hooks_and_allow_rules_wait_for_approval(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    project(workspace, marker)
    e = engine(workspace, tmp_path, ["reject", "reject"])
    out = await e.run_tool("Bash", {"command": "touch made"})
    await e.aclose()
    question = e.bridge.requests[0]  # type: ignore[attr-defined]
    assert question.kind == "project_settings"
    assert "allow rule Bash(touch:*)" in question.detail and "PreToolUse hook" in question.detail
    # Rejected: the hook did not run, and the rule did not allow (the use was asked about).
    assert not marker.exists()
    assert out.status == "rejected" and out.decision_source == "user_reject"
    assert not (workspace / "made").exists()
    assert local(workspace)[REJECTED]
    # A deny rule of the same file is in force without approval.
    e = engine(workspace, tmp_path, [])
    out = await e.run_tool("Bash", {"command": "rm -f x"})
    assert out.status == "rejected" and out.decision_rule == "Bash(rm:*)"
    # The rejection is remembered: no second question about the same settings.
    assert all(r.kind != "project_settings" for r in e.bridge.requests)  # type: ignore[attr-defined]
    await e.aclose()


async def test_always_allow_approves_exactly_this_content(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    project(workspace, marker)
    e = engine(workspace, tmp_path, ["allow_always"])
    out = await e.run_tool("Bash", {"command": "touch made"})
    await e.aclose()
    assert out.status == "success" and out.decision_rule == "Bash(touch:*)"
    assert marker.read_text() == "ran"
    assert len(local(workspace)[APPROVED]) == 2  # the rule and the hook, nothing else
    # A new server: in force without a question.
    marker.unlink()
    e = engine(workspace, tmp_path, [])
    out = await e.run_tool("Bash", {"command": "touch again"})
    await e.aclose()
    assert out.status == "success" and e.bridge.requests == []  # type: ignore[attr-defined]
    assert marker.exists()
    # A changed hook is a new grant: asked about, and held until then.
    marker.unlink()
    other = tmp_path / "other-hook"
    project(workspace, other, allow=["Bash(touch:*)"])
    e = engine(workspace, tmp_path, ["dismiss"])
    out = await e.run_tool("Bash", {"command": "touch third"})
    await e.aclose()
    (question,) = [r for r in e.bridge.requests if r.kind == "project_settings"]  # type: ignore[attr-defined]
    assert "other-hook" in question.detail and "allow rule" not in question.detail
    assert not other.exists()
    assert out.status == "success"  # the approved rule still applies
    assert REJECTED not in local(workspace)  # a dismissed question remembers nothing


async def test_a_shipped_local_file_cannot_approve_itself(workspace: Path, tmp_path: Path) -> None:
    write_settings(
        workspace / ".codev" / "settings.local.json",
        {"allow": ["Bash"]},
        approvedProjectSettings=["0123456789abcdef", "fedcba9876543210"],
    )
    e = engine(workspace, tmp_path, ["reject", "reject"])
    out = await e.run_tool("Bash", {"command": "touch made"})
    await e.aclose()
    assert e.bridge.requests[0].kind == "project_settings"  # type: ignore[attr-defined]
    assert out.status == "rejected" and not (workspace / "made").exists()


async def test_rules_saved_by_always_allow_need_no_approval(
    workspace: Path, tmp_path: Path
) -> None:
    e = engine(workspace, tmp_path, ["allow_always"])
    out = await e.run_tool("Bash", {"command": "touch made"})
    await e.aclose()
    assert out.decision_source == "user_permanent"
    assert local(workspace)["permissions"]["allow"] == ["Bash(touch:*)"]
    e = engine(workspace, tmp_path, [])
    out = await e.run_tool("Bash", {"command": "touch again"})
    await e.aclose()
    assert out.status == "success" and e.bridge.requests == []  # type: ignore[attr-defined]


async def test_a_trusted_folder_needs_no_question(
    workspace: Path, tmp_path: Path, _isolated_config: Path
) -> None:
    marker = tmp_path / "hook-ran"
    project(workspace, marker)
    (_isolated_config / "settings.json").write_text(
        json.dumps({"trustedFolders": [str(workspace.parent)]})
    )
    e = engine(workspace, tmp_path, [])
    out = await e.run_tool("Bash", {"command": "touch made"})
    await e.aclose()
    assert out.status == "success" and e.bridge.requests == []  # type: ignore[attr-defined]
    assert marker.exists()


def test_sandbox_grants_of_the_workspace_wait_too(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEV_SANDBOX", raising=False)
    write_settings(
        workspace / ".codev" / "settings.json",
        sandbox={"enabled": False, "allowNetwork": True, "writePaths": ["~"]},
    )
    config = load_sandbox_config(workspace)
    assert config.enabled and not config.allow_network and config.write_paths == ()
    monkeypatch.setenv(TRUST_ENV, str(tmp_path))
    config = load_sandbox_config(workspace)
    assert not config.enabled and config.allow_network and config.write_paths


async def test_explain_says_what_waits_for_approval(workspace: Path, tmp_path: Path) -> None:
    from codev_ls.permissions.explain import explain_permission, format_explanation

    project(workspace, tmp_path / "hook-ran")
    e = engine(workspace, tmp_path, [])
    data = await explain_permission(e, "Bash", {"command": "touch made"})
    await e.aclose()
    assert data["decision"] == "ask"  # the held rule does not allow
    assert "allow rule Bash(touch:*)" in data["heldSettings"]
    assert "Not in force until you approve them" in format_explanation(data)
    assert e.bridge.requests == []  # type: ignore[attr-defined]  # explain asks nothing
