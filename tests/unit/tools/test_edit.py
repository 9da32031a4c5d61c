"""Edit through the whole lifecycle: real files in a temp workspace, a scripted editor."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from codev_ls.bridge import EditApplyResult, FileEdit, ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.tools._edits import apply_change, revert_change
from codev_ls.tools._filestate import state_key

from .conftest import Runner


@pytest.fixture
def src(workspace: Path) -> Path:
    path = workspace / "app.py"
    path.write_text("def greet(name):\n    return 'hi ' + name\n\nprint(greet('x'))\n")
    return path


async def test_edit_replaces_once_and_returns_a_diff(run: Runner, src: Path, engine: Engine):
    await run.read(src)
    out = await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'hello '")
    assert src.read_text() == "def greet(name):\n    return 'hello ' + name\n\nprint(greet('x'))\n"
    text = out.text()
    assert "Edited app.py: replaced 1 occurrence (+1 −1 lines)." in text
    assert "--- a/app.py\n+++ b/app.py\n" in text
    assert "-    return 'hi ' + name\n+    return 'hello ' + name" in text
    assert out.meta and out.meta["path"] == str(src) and not out.meta["partial"]


async def test_edit_goes_through_the_bridge_with_label_and_diff(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    await run.read(src)
    await run.ok("Edit", file_path=str(src), old_string="greet('x')", new_string="greet('y')")
    assert len(bridge.edits) == 1
    edit = bridge.edits[0]
    assert edit.label == "Codev: Edit app.py"
    assert edit.tool_name == "Edit"
    assert edit.old_text is not None and "greet('x')" in edit.old_text
    assert "+print(greet('y'))" in edit.diff
    assert edit.needs_confirmation is False


async def test_edit_needs_a_prior_read(run: Runner, src: Path):
    out = await run("Edit", file_path=str(src), old_string="hi", new_string="yo")
    assert out.status == "error"
    assert "You have not read" in out.text() and "Read it first" in out.text()
    assert "hi " in src.read_text()


async def test_edit_refuses_when_the_file_changed_on_disk_since_the_read(run: Runner, src: Path):
    await run.read(src)
    src.write_text(src.read_text() + "# someone else\n")
    out = await run("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")
    assert out.status == "error"
    assert "changed on disk since you last read it" in out.text()
    assert "read it again" in out.text()
    await run.read(src)
    await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")


async def test_a_touched_but_unchanged_file_is_not_stale(run: Runner, src: Path):
    await run.read(src)
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")


async def test_a_second_edit_needs_no_new_read(run: Runner, src: Path):
    await run.read(src)
    await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")
    await run.ok("Edit", file_path=str(src), old_string="'yo '", new_string="'hey '")
    assert "'hey '" in src.read_text()


async def test_multiple_matches_need_replace_all(run: Runner, workspace: Path):
    path = workspace / "a.txt"
    path.write_text("x = 1\ny = x\nz = x\n")
    await run.read(path)
    out = await run("Edit", file_path=str(path), old_string="x", new_string="w")
    assert out.status == "error"
    assert "matches 3 times" in out.text() and "lines 1, 2, 3" in out.text()
    assert "replace_all" in out.text()
    out = await run.ok(
        "Edit", file_path=str(path), old_string="x", new_string="w", replace_all=True
    )
    assert path.read_text() == "w = 1\ny = w\nz = w\n"
    assert "replaced 3 occurrences" in out.text()


async def test_same_old_and_new_is_an_error(run: Runner, src: Path):
    await run.read(src)
    out = await run("Edit", file_path=str(src), old_string="hi", new_string="hi")
    assert out.status == "error" and "the same" in out.text()


async def test_not_found_says_where_something_close_is(run: Runner, src: Path):
    await run.read(src)
    out = await run(
        "Edit", file_path=str(src), old_string="  return 'hi ' + name", new_string="return 1"
    )
    # The same line exists with four spaces: matched as a substring, so this one succeeds.
    assert out.status == "success"
    await run.read(src)
    out = await run(
        "Edit",
        file_path=str(src),
        old_string="def greet(name):\n  return 1 + name",
        new_string="x",
    )
    assert out.status == "error"
    assert "was not found" in out.text()
    out = await run(
        "Edit",
        file_path=str(src),
        old_string="def greet(name):\n        return 1",
        new_string="x",
    )
    assert out.status == "error"
    assert "different whitespace or indentation, are at line 1" in out.text()


async def test_empty_old_string_creates_a_missing_file_with_parents(
    run: Runner, workspace: Path, engine: Engine
):
    path = workspace / "new" / "deep" / "mod.py"
    out = await run.ok("Edit", file_path=str(path), old_string="", new_string="VALUE = 1\n")
    assert path.read_text() == "VALUE = 1\n"
    assert "Created new/deep/mod.py" in out.text()
    change = engine.session.changes[-1]
    assert change.before is None and change.after == "VALUE = 1\n"


async def test_empty_old_string_on_a_file_with_content_is_refused(run: Runner, src: Path):
    await run.read(src)
    out = await run("Edit", file_path=str(src), old_string="", new_string="x")
    assert out.status == "error" and "already has content" in out.text()


async def test_missing_file_with_old_string_is_an_error(run: Runner, workspace: Path):
    out = await run("Edit", file_path=str(workspace / "nope.py"), old_string="a", new_string="b")
    assert out.status == "error" and "does not exist" in out.text() and "Write" in out.text()


async def test_relative_path_and_directory_are_refused(run: Runner, workspace: Path):
    out = await run("Edit", file_path="app.py", old_string="a", new_string="b")
    assert out.status == "error" and "absolute" in out.text()
    assert str(workspace / "app.py") in out.text()
    out = await run("Edit", file_path=str(workspace), old_string="a", new_string="b")
    assert out.status == "error" and "is a directory" in out.text()


async def test_notebooks_are_sent_to_notebook_edit(run: Runner, workspace: Path):
    nb = workspace / "n.ipynb"
    nb.write_text("{}")
    out = await run("Edit", file_path=str(nb), old_string="{", new_string="[")
    assert out.status == "error" and "NotebookEdit" in out.text()


async def test_crlf_line_endings_are_kept(run: Runner, workspace: Path):
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    read = await run.read(path)
    assert "\r" not in read.text()
    await run.ok("Edit", file_path=str(path), old_string="one\ntwo", new_string="uno\ndos\nmas")
    assert path.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"


async def test_mixed_line_endings_only_change_where_edited(run: Runner, workspace: Path):
    path = workspace / "mixed.txt"
    path.write_bytes(b"a\r\nb\r\nc\nd\n")
    await run.read(path)
    await run.ok("Edit", file_path=str(path), old_string="c\nd", new_string="C\nD")
    assert path.read_bytes() == b"a\r\nb\r\nC\nD\n"


@pytest.mark.parametrize(
    ("encoding", "raw_prefix"),
    [("utf-8-sig", b"\xef\xbb\xbf"), ("utf-16", b"\xff\xfe"), ("cp1252", b"")],
)
async def test_encoding_is_kept(run: Runner, workspace: Path, encoding: str, raw_prefix: bytes):
    path = workspace / f"enc-{encoding}.txt"
    path.write_bytes("café = 'naïve'\nrésumé\n".encode(encoding))
    assert path.read_bytes().startswith(raw_prefix)
    read = await run.read(path)
    assert "café = 'naïve'" in read.text()
    await run.ok("Edit", file_path=str(path), old_string="résumé", new_string="thé")
    data = path.read_bytes()
    assert data.startswith(raw_prefix)
    assert data.decode(encoding) == "café = 'naïve'\nthé\n".encode(encoding).decode(encoding)


async def test_latin1_bytes_outside_the_edit_are_written_back_unchanged(
    run: Runner, workspace: Path
):
    path = workspace / "legacy.txt"
    raw = b"caf\xe9 \x81\x8d odd\nkeep\n"  # \x81 and \x8d are undefined in cp1252: Latin-1
    path.write_bytes(raw)
    await run.read(path)
    await run.ok("Edit", file_path=str(path), old_string="keep", new_string="kept")
    assert path.read_bytes() == b"caf\xe9 \x81\x8d odd\nkept\n"


async def test_text_a_legacy_encoding_cannot_hold_is_written_as_utf8_and_said_so(
    run: Runner, workspace: Path, bridge: ScriptedBridge
):
    path = workspace / "l.txt"
    path.write_bytes(b"caf\xe9\nna\xefve\n")  # Latin-1 / cp1252
    await run.read(path)
    out = await run.ok("Edit", file_path=str(path), old_string="café", new_string="thé ☕")
    assert path.read_bytes() == "thé ☕\nnaïve\n".encode()
    assert "cp1252" in out.text() and "written as UTF-8" in out.text()
    [edit] = bridge.edits
    assert (edit.encoding, edit.old_encoding) == ("utf-8", "cp1252")
    # The file is UTF-8 now: the next edit keeps it so, without a note.
    again = await run.ok("Edit", file_path=str(path), old_string="naïve", new_string="naive")
    assert path.read_bytes() == "thé ☕\nnaive\n".encode()
    assert "UTF-8" not in again.text()


async def test_bytes_the_encoding_cannot_take_are_refused_before_the_editor_sees_them(
    engine: Engine, workspace: Path, bridge: ScriptedBridge
):
    from codev_ls.engine.tool import ToolError

    path = workspace / "a.txt"
    ctx = engine.context(tool_use_id="t-1")
    with pytest.raises(ToolError) as info:
        await apply_change(
            ctx,
            tool_name="Edit",
            path=path,
            old_text=None,
            new_text="☕\n",
            encoding="ascii",
            diff="",
        )
    assert "cannot be written in ascii" in info.value.message
    assert "Nothing was changed" in info.value.message
    assert bridge.edits == [] and not path.exists()


async def test_an_edit_in_the_buffer_that_could_not_be_saved_is_an_error_saying_so(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    bridge.edit_decider = lambda edit: EditApplyResult(
        applied=True, error="writing app.py failed (OSError: No space left on device)"
    )
    await run.read(src)
    before = src.read_text()
    out = await run("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")
    assert out.status == "error", out.text()
    text = out.text()
    assert "No space left on device" in text
    assert "in the editor's buffer but could not be saved to disk" in text
    assert "file on disk still has its previous content" in text
    assert src.read_text() == before


async def test_an_edit_the_bridge_failed_to_apply_is_an_error_not_a_rejection(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    bridge.edit_decider = lambda edit: EditApplyResult(
        applied=False, error="it could not be applied (RuntimeError: boom)"
    )
    await run.read(src)
    out = await run("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")
    assert out.status == "error", out.text()
    assert "boom" in out.text() and "Nothing was changed" in out.text()


async def test_curly_quotes_in_the_file_match_straight_quotes(run: Runner, workspace: Path):
    path = workspace / "q.md"
    path.write_text("He said “hello” and left.\n")
    await run.read(path)
    await run.ok("Edit", file_path=str(path), old_string='"hello" and', new_string="goodbye and")
    assert path.read_text() == "He said goodbye and left.\n"


async def test_edit_of_an_open_buffer_uses_its_unsaved_text(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    bridge.open_buffer(src, "unsaved = True\n", version=3)
    out = await run.read(src)
    assert "unsaved = True" in out.text()
    await run.ok("Edit", file_path=str(src), old_string="True", new_string="False")
    assert bridge.edits[-1].old_text == "unsaved = True\n"
    assert src.read_text() == "unsaved = False\n"


async def test_a_buffer_changed_after_the_read_is_stale(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    bridge.open_buffer(src, "v = 1\n", version=1)
    await run.read(src)
    bridge.open_buffer(src, "v = 1\nw = 2\n", version=2)
    out = await run("Edit", file_path=str(src), old_string="v = 1", new_string="v = 3")
    assert out.status == "error"
    assert "in the editor (unsaved changes)" in out.text()
    assert bridge.edits == []


async def test_disk_read_then_identical_buffer_opened_is_not_stale(
    run: Runner, src: Path, bridge: ScriptedBridge
):
    await run.read(src)
    bridge.open_buffer(src, src.read_text(), version=1, dirty=False)
    await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")


async def test_rejected_in_the_editor_is_a_rejected_outcome(
    workspace: Path, src: Path, tmp_path: Path
):
    bridge = ScriptedBridge(
        edit_preview_approval=True,
        edit_decider=lambda e: EditApplyResult(applied=False, reason="the user closed the preview"),
    )
    engine = Engine(workspace, bridge, data_root=tmp_path / "d")
    await engine.run_tool("Read", {"file_path": str(src)})
    before = src.read_text()
    out = await engine.run_tool(
        "Edit", {"file_path": str(src), "old_string": "'hi '", "new_string": "'yo '"}
    )
    assert out.status == "rejected"
    assert "the user closed the preview" in out.text()
    # The preview was the approval: no separate permission question.
    assert bridge.requests == []
    assert bridge.edits[0].needs_confirmation is True
    assert src.read_text() == before
    assert engine.session.changes == []


async def test_default_mode_asks_with_the_diff_and_write_path(
    workspace: Path, src: Path, tmp_path: Path
):
    bridge = ScriptedBridge(answers=["allow_once"])
    engine = Engine(workspace, bridge, data_root=tmp_path / "d")
    await engine.run_tool("Read", {"file_path": str(src)})
    out = await engine.run_tool(
        "Edit", {"file_path": str(src), "old_string": "'hi '", "new_string": "'yo '"}
    )
    assert out.status == "success", out.text()
    request = bridge.requests[0]
    assert request.message == "Edit: edit app.py"
    assert "+    return 'yo ' + name" in request.detail
    tool = engine.tool_pool()
    edit = next(t for t in tool if t.name == "Edit")
    subject = edit.permission_subject(
        edit.parse_input({"file_path": str(src), "old_string": "yo", "new_string": "ho"}),
        engine.context(),
    )
    assert subject.write_paths == [src] and subject.summary == "edit app.py"


async def test_partial_application_tells_the_model_what_landed(workspace: Path, tmp_path: Path):
    path = workspace / "p.txt"
    lines = [f"line {i}\n" for i in range(1, 31)]
    path.write_text("".join(lines))

    def decide(edit: FileEdit) -> EditApplyResult:
        # The user accepts the first hunk (line 2) and refuses the second (line 28).
        assert edit.old_text is not None
        final = edit.old_text.replace("line 2\n", "LINE 2\n")
        return EditApplyResult(
            applied=True, final_text=final, hunks_applied=[0], hunks_rejected=[1]
        )

    bridge = ScriptedBridge(edit_decider=decide)
    engine = Engine(workspace, bridge, mode="bypassPermissions", data_root=tmp_path / "d")
    await engine.run_tool("Read", {"file_path": str(path)})
    text = path.read_text()
    new = text.replace("line 2\n", "LINE 2\n").replace("line 28\n", "LINE 28\n")
    out = await engine.run_tool("Write", {"file_path": str(path), "content": new})
    assert out.status == "success", out.text()
    msg = out.text()
    assert "Only part of the change was applied" in msg
    assert "Hunks applied: 1; hunks refused: 2" in msg
    assert "+LINE 28" in msg.split("NOT applied")[1]
    assert "LINE 2\n" in path.read_text() and "line 28\n" in path.read_text()
    assert out.meta and out.meta["partial"] is True and out.meta["hunksRejected"] == [1]
    change = engine.session.changes[-1]
    assert change.after == path.read_text()
    # The model's view is the final text: a follow-up edit needs no new read.
    out = await engine.run_tool(
        "Edit", {"file_path": str(path), "old_string": "line 28", "new_string": "LINE 28"}
    )
    assert out.status == "success", out.text()


async def test_changes_are_recorded_and_can_be_undone(run: Runner, src: Path, engine: Engine):
    original = src.read_text()
    await run.read(src)
    await run.ok("Edit", file_path=str(src), old_string="'hi '", new_string="'yo '")
    change = engine.session.changes[-1]
    assert change.before == original and change.tool_name == "Edit"
    assert change.after == src.read_text() and "+    return 'yo ' + name" in change.diff
    result = await revert_change(engine.context(), change)
    assert result.applied and src.read_text() == original


async def test_undo_of_a_created_file_removes_it(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "made.txt"
    await run.ok("Write", file_path=str(path), content="x\n")
    await revert_change(engine.context(), engine.session.changes[-1])
    assert not path.exists()
    assert state_key(path) not in engine.session.read_state


async def test_edit_keeps_file_permissions(run: Runner, workspace: Path):
    path = workspace / "run.sh"
    path.write_text("#!/bin/sh\necho a\n")
    path.chmod(0o751)
    await run.read(path)
    await run.ok("Edit", file_path=str(path), old_string="echo a", new_string="echo b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


async def test_binary_file_is_refused(run: Runner, workspace: Path):
    path = workspace / "blob.bin"
    path.write_bytes(b"\x00\x01\x02abc")
    out = await run("Edit", file_path=str(path), old_string="abc", new_string="def")
    assert out.status == "error" and "binary" in out.text()


def test_traits(engine: Engine):
    edit = next(t for t in engine.tool_pool() if t.name == "Edit")
    inp = edit.parse_input({"file_path": "/x", "old_string": "a", "new_string": "b"})
    assert not edit.is_read_only(inp)
    assert not edit.is_concurrency_safe(inp)
    assert getattr(edit, "edit_preview", False) is True
