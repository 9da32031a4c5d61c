"""The file tools' permission descriptions meet the real decision function and rules."""

from __future__ import annotations

from pathlib import Path

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.permissions.rules import parse_rule


def _engine(workspace: Path, tmp_path: Path, mode: str = "default", answers=()) -> Engine:
    bridge = ScriptedBridge(answers=list(answers))
    return Engine(workspace, bridge, mode=mode, data_root=tmp_path / "d")  # type: ignore[arg-type]


async def test_an_edit_rule_on_a_folder_allows_edits_there_only(workspace: Path, tmp_path: Path):
    (workspace / "src").mkdir()
    inside, outside = workspace / "src" / "a.py", workspace / "b.py"
    for p in (inside, outside):
        p.write_text("x = 1\n")
    engine = _engine(workspace, tmp_path)
    engine.permission_context.allow.append(parse_rule("Edit(src/**)"))
    for p in (inside, outside):
        assert (await engine.run_tool("Read", {"file_path": str(p)})).status == "success"
    out = await engine.run_tool(
        "Edit", {"file_path": str(inside), "old_string": "1", "new_string": "2"}
    )
    assert out.status == "success", out.text()
    assert engine.bridge.requests == []  # type: ignore[attr-defined]
    out = await engine.run_tool(
        "Edit", {"file_path": str(outside), "old_string": "1", "new_string": "2"}
    )
    assert out.status == "rejected"  # asked, and the scripted user said no
    request = engine.bridge.requests[0]  # type: ignore[attr-defined]
    assert request.tool_name == "Edit" and "+x = 2" in request.detail
    assert outside.read_text() == "x = 1\n"


async def test_accept_edits_mode_writes_inside_the_workspace_without_asking(
    workspace: Path, tmp_path: Path
):
    engine = _engine(workspace, tmp_path, mode="acceptEdits")
    out = await engine.run_tool(
        "Write", {"file_path": str(workspace / "new.txt"), "content": "hello\n"}
    )
    assert out.status == "success", out.text()
    assert engine.bridge.requests == []  # type: ignore[attr-defined]


async def test_plan_mode_refuses_edits_but_reads_and_searches(workspace: Path, tmp_path: Path):
    path = workspace / "a.txt"
    path.write_text("needle\n")
    engine = _engine(workspace, tmp_path, mode="plan")
    assert (await engine.run_tool("Read", {"file_path": str(path)})).status == "success"
    assert (await engine.run_tool("Grep", {"pattern": "needle"})).status == "success"
    assert (await engine.run_tool("Glob", {"pattern": "*.txt"})).status == "success"
    out = await engine.run_tool("Write", {"file_path": str(path), "content": "x"})
    assert out.status == "rejected" and "lan mode" in out.text()
    assert path.read_text() == "needle\n"


async def test_reading_outside_the_workspace_asks(workspace: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("secret\n")
    engine = _engine(workspace, tmp_path, answers=["reject"])
    out = await engine.run_tool("Read", {"file_path": str(elsewhere)})
    assert out.status == "rejected"
    assert engine.bridge.requests  # type: ignore[attr-defined]
