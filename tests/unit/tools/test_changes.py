"""The change list for people: listing, undoing (through the bridge, like an edit), refusals,
and the terminal runner's `codev-ls changes` / `codev-ls undo`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codev_ls.bridge import EditApplyResult, ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.tools._changes import (
    ChangeRef,
    change_infos,
    changes_request,
    format_changes,
    parse_change_ref,
    undo_change,
    undo_request,
)

from .conftest import Runner


async def _two_edits(run: Runner, workspace: Path) -> tuple[Path, Path]:
    a = workspace / "a.txt"
    a.write_text("one\ntwo\n")
    await run.read(a)
    await run.ok("Edit", file_path=str(a), old_string="one", new_string="ONE")
    await run.ok("Edit", file_path=str(a), old_string="two", new_string="TWO")
    made = workspace / "new.txt"
    await run.ok("Write", file_path=str(made), content="fresh\n")
    return a, made


async def test_changes_are_listed_oldest_first_with_what_can_be_undone(
    run: Runner, engine: Engine, workspace: Path
):
    await _two_edits(run, workspace)
    infos = change_infos(engine.context())
    assert [(i["index"], i["tool"], i["relativePath"]) for i in infos] == [
        (1, "Edit", "a.txt"),
        (2, "Edit", "a.txt"),
        (3, "Write", "new.txt"),
    ]
    # The first edit of a.txt was built on by the second: only the latest can be undone.
    assert [i["undoable"] for i in infos] == [False, True, True]
    assert infos[2]["created"] and (infos[0]["added"], infos[0]["removed"]) == (1, 1)
    assert "-one\n+ONE" in infos[0]["diff"]
    text = format_changes(infos, with_diffs=True)
    assert "  1. Edit" in text and "cannot be undone" in text and "+TWO" in text


async def test_undo_restores_in_order_and_the_model_must_read_again(
    run: Runner, engine: Engine, workspace: Path, bridge: ScriptedBridge
):
    a, made = await _two_edits(run, workspace)
    ctx = engine.context()
    refused = await undo_change(ctx, ChangeRef(index=1))
    assert refused["undone"] is False and "changed after the Edit" in refused["reason"]
    assert a.read_text() == "ONE\nTWO\n"
    gone = await undo_change(ctx, ChangeRef())  # the latest: the created file
    assert gone["undone"] is True and not made.exists()
    back = await undo_change(ctx, ChangeRef(index=2))
    assert back["undone"] is True and a.read_text() == "ONE\ntwo\n"
    assert bridge.edits[-1].label == "Codev: undo Edit a.txt"
    assert [c.tool_use_id for c in engine.session.changes] == [infos_first(engine)]
    # The undo was not the model's doing: it must read the file before editing it again.
    out = await run("Edit", file_path=str(a), old_string="ONE", new_string="1")
    assert out.status == "error" and "You have not read" in out.text()
    await undo_change(ctx, ChangeRef(index=1))
    assert a.read_text() == "one\ntwo\n" and engine.session.changes == []
    empty = await undo_request(engine, {})
    assert empty["undone"] is False and "no changes" in empty["reason"]


def infos_first(engine: Engine) -> str:
    return engine.session.changes[0].tool_use_id


async def test_undo_never_overwrites_unsaved_work_it_did_not_make(
    run: Runner, engine: Engine, workspace: Path, bridge: ScriptedBridge
):
    a = workspace / "a.txt"
    a.write_text("x = 1\n")
    await run.read(a)
    await run.ok("Edit", file_path=str(a), old_string="x = 1", new_string="x = 2")
    bridge.open_buffer(a, "x = 2\ntyped by the user\n", version=7, dirty=True)
    answer = await undo_change(engine.context(), ChangeRef())
    assert answer["undone"] is False and "changed after the Edit" in answer["reason"]
    assert bridge.buffers[a].text == "x = 2\ntyped by the user\n" and a.read_text() == "x = 2\n"
    assert len(engine.session.changes) == 1


async def test_an_undo_the_editor_refuses_stays_in_the_list(
    run: Runner, engine: Engine, workspace: Path, bridge: ScriptedBridge
):
    a = workspace / "a.txt"
    a.write_text("x\n")
    await run.read(a)
    await run.ok("Edit", file_path=str(a), old_string="x", new_string="y")
    bridge.edit_decider = lambda edit: EditApplyResult(applied=False, reason="rejected")
    answer = await undo_request(engine, {"toolUseId": engine.session.changes[0].tool_use_id})
    assert answer["undone"] is False and answer["reason"] == "rejected"
    assert a.read_text() == "y\n" and len(engine.session.changes) == 1
    listed = await changes_request(engine, None)
    assert listed["sessionId"] == engine.session.id and len(listed["changes"]) == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([1, 2], "takes an object"),
        ({"index": 0}, "from 1"),
        ({"index": True}, "from 1"),
        ({"index": 1, "toolUseId": "t"}, "not both"),
        ({"sessionId": 5}, "sessionId"),
        ("x", "takes an object"),
    ],
)
def test_malformed_params_are_refused(params: object, message: str):
    with pytest.raises(ValueError, match=message):
        parse_change_ref(params, "codev/undoChange")


async def test_an_unknown_session_is_refused(engine: Engine):
    with pytest.raises(ValueError, match="no session 'nope'"):
        await changes_request(engine, {"sessionId": "nope"})


def _cli(cmd: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def test_the_terminal_runner_lists_and_undoes_a_named_sessions_changes(
    codev_cmd: list[str], workspace: Path
):
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    read = json.dumps({"file_path": str(target)})
    edit = json.dumps({"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"})
    assert _cli(codev_cmd, "tool", "Read", read, "--session", "w", cwd=workspace).returncode == 0
    out = _cli(codev_cmd, "tool", "Edit", edit, "--yes", "--session", "w", cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr
    out = _cli(codev_cmd, "changes", "--session", "w", "--diff", cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert "1. Edit" in out.stdout and "app.py" in out.stdout and "+x = 2" in out.stdout
    listed = json.loads(
        _cli(codev_cmd, "changes", "--session", "w", "--json", cwd=workspace).stdout
    )
    assert [c["index"] for c in listed] == [1] and listed[0]["undoable"]
    out = _cli(codev_cmd, "undo", "--session", "w", cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Undid the Edit of app.py" in out.stdout and target.read_text() == "x = 1\n"
    out = _cli(codev_cmd, "undo", "--session", "w", cwd=workspace)
    assert out.returncode == 1 and "no changes" in out.stdout
    out = _cli(codev_cmd, "changes", "--session", "never-made", cwd=workspace)
    assert out.returncode == 1 and "No saved session" in out.stdout
    out = _cli(codev_cmd, "undo", "1", "--tool-use-id", "t", "--session", "w", cwd=workspace)
    assert out.returncode == 2
