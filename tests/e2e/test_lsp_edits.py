"""Edits as workspace/applyEdit: changes vs documentChanges, hunks, open buffers and the disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient, annotation_ids

pytestmark = pytest.mark.asyncio

NEOVIM, VSCODE = PRESETS
TEXT = "".join(f"line {i}\n" for i in range(1, 31))


async def _read(client: EditorClient, path: Path) -> None:
    outcome = await client.run_tool("Read", {"file_path": str(path)})
    assert outcome["status"] == "success", outcome


async def _edit(client: EditorClient, path: Path, old: str, new: str) -> dict:
    return await client.run_tool(
        "Edit", {"file_path": str(path), "old_string": old, "new_string": new}
    )


@pytest.mark.parametrize("preset", PRESETS)
async def test_an_open_file_is_edited_in_the_editor_and_saved(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset, mode="bypassPermissions")
    path = workspace / "src" / "a.txt"
    path.parent.mkdir()
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    outcome = await _edit(client, path, "line 5\n", "LINE FIVE\n")
    assert outcome["status"] == "success", outcome
    expected = TEXT.replace("line 5\n", "LINE FIVE\n")
    assert client.text(path) == expected
    assert path.read_text() == expected
    [params] = client.edits
    assert params.label == "Codev: Edit src/a.txt"
    edit = params.edit
    if preset == NEOVIM:
        # Neovim declares no documentChanges: plain `changes`, no annotations.
        assert edit.document_changes is None
        [(uri, text_edits)] = edit.changes.items()
        assert uri == path.as_uri()
        assert [e.new_text for e in text_edits] == ["LINE FIVE\n"]
        assert text_edits[0].range.start == types.Position(line=4, character=0)
    else:
        assert edit.changes is None
        [doc_edit] = edit.document_changes
        assert doc_edit.text_document.uri == path.as_uri()
        assert doc_edit.text_document.version == 1  # refused if the buffer moved on
        [text_edit] = doc_edit.edits
        annotation = edit.change_annotations[text_edit.annotation_id]
        # The edit is allowed by the mode, so no confirmation is asked for.
        assert annotation.needs_confirmation is False
        assert "-line 5\n+LINE FIVE\n" in annotation.description
        assert annotation.label.startswith("Codev: Edit src/a.txt")


async def test_one_annotation_per_hunk_with_its_diff(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(VSCODE)
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    new = TEXT.replace("line 2\n", "line two\n").replace("line 25\n", "line twenty-five\n")
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": new})
    assert outcome["status"] == "success", outcome
    [params] = client.edits
    ids = annotation_ids(params)
    assert len(ids) == 2
    annotations = params.edit.change_annotations
    first, second = (annotations[i] for i in ids)
    assert first.needs_confirmation and second.needs_confirmation  # default mode
    assert "-line 2\n+line two\n" in first.description
    assert "line 25" not in first.description
    assert "-line 25\n+line twenty-five\n" in second.description
    assert first.label != second.label
    assert path.read_text() == new and client.text(path) == new
    assert outcome["meta"]["hunksApplied"] == [0, 1]
    assert outcome["meta"]["hunksRejected"] == []


async def test_some_hunks_accepted_in_the_preview(
    start_editor: StartEditor, workspace: Path
) -> None:
    """The user unticks the second hunk: only the first lands, and the outcome says so."""
    client = await start_editor(VSCODE)
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    client.edit_answer = lambda params: {annotation_ids(params)[0]}
    new = TEXT.replace("line 2\n", "line two\n").replace("line 25\n", "line twenty-five\n")
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": new})
    assert outcome["status"] == "success", outcome
    landed = TEXT.replace("line 2\n", "line two\n")
    assert client.text(path) == landed
    assert path.read_text() == landed
    assert outcome["meta"]["hunksApplied"] == [0]
    assert outcome["meta"]["hunksRejected"] == [1]
    assert "twenty-five" in outcome["content"]  # the model is told what did not land


def _reject_all_then_type(client: EditorClient, path: Path, typed: str) -> None:
    """Untick every hunk; the user types in the buffer half a second after the answer."""

    def answer(params: types.ApplyWorkspaceEditParams) -> set[str]:
        asyncio.get_running_loop().call_later(0.5, client.type, path, typed)
        return set()

    client.edit_answer = answer


async def _until_typed(client: EditorClient, path: Path, typed: str) -> None:
    while client.text(path) != typed:
        await asyncio.sleep(0.05)
    await client.run_tool("Glob", {"pattern": "*.none"})  # a round trip: the didChange is in


async def test_no_hunk_accepted_is_a_rejection(start_editor: StartEditor, workspace: Path) -> None:
    """VS Code sends no didChange when nothing landed: the server knows at the answer.

    It must not wait for a change that never comes and then take the user's typing
    for the edit (which wrote the typing to disk and reported success).
    """
    client = await start_editor(VSCODE)
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    typed = TEXT + "the user typed this\n"
    _reject_all_then_type(client, path, typed)
    outcome = await _edit(client, path, "line 7\n", "seven\n")
    assert outcome["status"] == "rejected", outcome
    assert "rejected every change" in outcome["content"]
    assert path.read_text() == TEXT and client.text(path) == TEXT
    await _until_typed(client, path, typed)
    assert path.read_text() == TEXT  # the typing stays unsaved in the buffer


async def test_the_change_order_is_learned_from_an_unnamed_editor(
    start_editor: StartEditor, workspace: Path
) -> None:
    """No clientInfo: an edit whose didChange came before its answer teaches the server."""
    client = await start_editor(VSCODE, initialize=False)
    client.client_info = None
    await client.initialize(workspace)
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    client.edit_answer = "accept"
    first = await _edit(client, path, "line 3\n", "three\n")
    assert first["status"] == "success", first
    after_first = TEXT.replace("line 3\n", "three\n")
    typed = after_first + "typed\n"
    _reject_all_then_type(client, path, typed)
    outcome = await _edit(client, path, "line 7\n", "seven\n")
    assert outcome["status"] == "rejected", outcome
    await _until_typed(client, path, typed)
    assert path.read_text() == after_first


async def test_an_editor_that_reports_late_is_waited_for(
    start_editor: StartEditor, workspace: Path
) -> None:
    """An unnamed editor with previews whose didChange comes after its answer: the
    server waits for it and reports exactly the hunks that landed (never a guess)."""
    client = await start_editor(VSCODE, initialize=False)
    client.client_info = None
    await client.initialize(workspace)
    client.didchange_delay = 0.3
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    client.edit_answer = lambda params: {annotation_ids(params)[-1]}
    for top, bottom in ((2, 25), (3, 26)):  # the second time it is known to report late
        current = path.read_text()
        new = current.replace(f"line {top}\n", "top\n").replace(f"line {bottom}\n", "bottom\n")
        outcome = await client.run_tool("Write", {"file_path": str(path), "content": new})
        assert outcome["status"] == "success", outcome
        assert outcome["meta"]["hunksApplied"] == [1]
        assert outcome["meta"]["hunksRejected"] == [0]
        landed = current.replace(f"line {bottom}\n", "bottom\n")
        assert client.text(path) == landed and path.read_text() == landed


@pytest.mark.parametrize("preset", PRESETS)
async def test_a_refused_apply_changes_nothing(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset, mode="bypassPermissions")
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    client.edit_answer = "reject"
    outcome = await _edit(client, path, "line 3\n", "three\n")
    assert outcome["status"] == "rejected", outcome
    assert "not applied" in outcome["content"]
    assert path.read_text() == TEXT
    assert client.text(path) == TEXT


@pytest.mark.parametrize("preset", PRESETS)
async def test_a_file_that_is_not_open_is_written_by_the_server(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset, mode="bypassPermissions")
    path = workspace / "closed.txt"
    path.write_text(TEXT)
    await _read(client, path)
    outcome = await _edit(client, path, "line 9\n", "nine\n")
    assert outcome["status"] == "success", outcome
    assert path.read_text() == TEXT.replace("line 9\n", "nine\n")
    # No buffer to show it in, so nothing is sent: the editor never gets a stray dirty buffer.
    assert client.edits == []
    assert not list(workspace.glob(".*codev-tmp"))


async def test_a_new_file_is_created_through_the_editor(
    start_editor: StartEditor, workspace: Path
) -> None:
    """VS Code (documentChanges + create): CreateFile then the text, previewed."""
    client = await start_editor(VSCODE)
    path = workspace / "pkg" / "new.py"
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": "x = 1\n"})
    assert outcome["status"] == "success", outcome
    [params] = client.edits
    create, text_edit = params.edit.document_changes
    assert isinstance(create, types.CreateFile) and create.uri == path.as_uri()
    assert create.options.overwrite is False
    assert text_edit.text_document.version is None
    assert path.read_text() == "x = 1\n"
    assert params.label == "Codev: Write pkg/new.py"


async def test_neovim_new_file_goes_to_disk(start_editor: StartEditor, workspace: Path) -> None:
    client = await start_editor(NEOVIM, mode="bypassPermissions")
    path = workspace / "made.txt"
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": "made\n"})
    assert outcome["status"] == "success", outcome
    assert path.read_text() == "made\n"
    assert client.edits == []


@pytest.mark.parametrize("preset", PRESETS)
async def test_unsaved_changes_stay_unsaved(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    """The edit is computed on the buffer; the disk gets the edit but not the unsaved work."""
    client = await start_editor(preset, mode="bypassPermissions")
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    client.type(path, "# unsaved note\n" + TEXT)
    await _read(client, path)
    outcome = await _edit(client, path, "line 20\n", "twenty\n")
    assert outcome["status"] == "success", outcome
    assert client.text(path) == "# unsaved note\n" + TEXT.replace("line 20\n", "twenty\n")
    assert path.read_text() == TEXT.replace("line 20\n", "twenty\n")


async def test_edit_sees_text_only_in_the_buffer(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM, mode="bypassPermissions")
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    client.type(path, TEXT + "typed but not saved\n")
    await _read(client, path)
    outcome = await _edit(client, path, "typed but not saved\n", "typed and edited\n")
    assert outcome["status"] == "success", outcome
    assert client.text(path) == TEXT + "typed and edited\n"


async def test_a_buffer_changed_after_the_read_is_refused(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(NEOVIM, mode="bypassPermissions")
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    client.type(path, TEXT + "the user typed this\n")
    outcome = await _edit(client, path, "line 1\n", "one\n")
    assert outcome["status"] == "error", outcome
    assert "read" in outcome["content"].lower()
    assert path.read_text() == TEXT
    assert client.text(path) == TEXT + "the user typed this\n"
    assert client.edits == []


async def test_neovim_answering_before_its_didchange(
    start_editor: StartEditor, workspace: Path
) -> None:
    """Neovim debounces didChange: the server waits for the buffer before reporting."""
    client = await start_editor(NEOVIM, mode="bypassPermissions")
    client.didchange_delay = 0.3
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    new = TEXT.replace("line 2\n", "two\n").replace("line 28\n", "twenty-eight\n")
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": new})
    assert outcome["status"] == "success", outcome
    assert outcome["meta"]["hunksApplied"] == [0, 1]
    assert path.read_text() == new and client.text(path) == new
    # A second edit right after works on the updated buffer.
    again = await _edit(client, path, "two\n", "TWO\n")
    assert again["status"] == "success", again
    assert path.read_text() == new.replace("two\n", "TWO\n")


async def test_the_edit_is_one_workspace_edit(start_editor: StartEditor, workspace: Path) -> None:
    """Many hunks go out as one applyEdit (one undo step in the editor)."""
    client = await start_editor(VSCODE, mode="bypassPermissions")
    path = workspace / "a.txt"
    path.write_text(TEXT)
    client.open(path)
    await _read(client, path)
    new = TEXT.replace("line 1\n", "1\n").replace("line 15\n", "15\n").replace("line 30\n", "30\n")
    outcome = await client.run_tool("Write", {"file_path": str(path), "content": new})
    assert outcome["status"] == "success", outcome
    [params] = client.edits
    [doc_edit] = params.edit.document_changes
    assert len(doc_edit.edits) == 3
    assert client.text(path) == new and path.read_text() == new


async def test_positions_follow_the_negotiated_encoding(
    start_editor: StartEditor, workspace: Path
) -> None:
    """Neovim offers utf-8 first; a line with wide characters and no final newline."""
    client = await start_editor(NEOVIM, mode="bypassPermissions")
    assert client.position_encoding == "utf-8"
    path = workspace / "u.txt"
    path.write_text("héllo 😀\nwörld 😀")
    client.open(path)
    await _read(client, path)
    outcome = await _edit(client, path, "wörld 😀", "wörld 😀 and more")
    assert outcome["status"] == "success", outcome
    assert client.text(path) == "héllo 😀\nwörld 😀 and more"
    assert path.read_text() == "héllo 😀\nwörld 😀 and more"


async def test_crlf_files_keep_their_line_endings(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(VSCODE, mode="bypassPermissions")
    path = workspace / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    client.open(path, text="one\r\ntwo\r\nthree\r\n")
    await _read(client, path)
    outcome = await _edit(client, path, "two", "TWO")
    assert outcome["status"] == "success", outcome
    assert path.read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    assert client.text(path) == "one\r\nTWO\r\nthree\r\n"


@pytest.mark.parametrize("preset", PRESETS)
async def test_changes_below_a_form_feed_land_on_the_editors_line(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    """Editors count lines as LSP does: a form feed (^L) or U+2028 does not end one."""
    client = await start_editor(preset, mode="bypassPermissions")
    path = workspace / "ff.py"
    path.write_text("a = 1\x0cb = 2\nc = 3\n")
    client.open(path)
    # The editor's own change, on its line 1 ("c = 3"), sent as it would send it.
    buffer = client.docs[path.as_uri()]
    buffer._source, buffer.version = "a = 1\x0cb = 2\nc = 33\n", 2
    client._send_change(
        path.as_uri(),
        2,
        [
            types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(1, 5), types.Position(1, 5)), text="3"
            )
        ],
    )
    outcome = await client.run_tool("Read", {"file_path": str(path)})
    assert outcome["status"] == "success", outcome
    assert "c = 33" in outcome["content"] and "b = 2\n" in outcome["content"].replace("\t", " ")
    # An Edit is made against that text, and lands in the buffer and on disk.
    edited = await _edit(client, path, "c = 33", "c = 4")
    assert edited["status"] == "success", edited
    assert path.read_text() == "a = 1\x0cb = 2\nc = 4\n"
    assert client.text(path) == "a = 1\x0cb = 2\nc = 4\n"
