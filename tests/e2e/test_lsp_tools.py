"""The local tools over the real LSP server: encodings, failed writes, Grep of unsaved buffers,
Read of PDFs, images and notebooks, NotebookEdit, and background Bash tasks."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.e2e.editor import PRESETS, EditorClient
from tests.fakes.pdfgen import make_pdf

pytestmark = pytest.mark.asyncio

NEOVIM, VSCODE = PRESETS


async def _ok(client: EditorClient, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    outcome = await client.run_tool(name, tool_input)
    assert outcome["status"] == "success", outcome
    return outcome


def _text(outcome: dict[str, Any]) -> str:
    content = outcome["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def _tracebacks(client: EditorClient) -> list[str]:
    return [m.message for m in client.log_messages if "Traceback" in m.message]


# --------------------------------------------------------------------------- encodings


@pytest.mark.parametrize("preset", PRESETS)
async def test_an_edit_adding_a_character_the_files_encoding_cannot_hold(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    """Buffer and disk both get the edit (the file becomes UTF-8) and the model is told."""
    client = await start_editor(preset, mode="acceptEdits")
    path = workspace / "l.txt"
    path.write_bytes(b"caf\xe9\n")  # Latin-1: the editor decoded it for its buffer
    client.open(path, "café\n")
    await _ok(client, "Read", {"file_path": str(path)})
    outcome = await _ok(
        client, "Edit", {"file_path": str(path), "old_string": "café", "new_string": "thé ☕"}
    )
    assert client.text(path) == "thé ☕\n"
    assert path.read_bytes() == "thé ☕\n".encode()
    assert "written as UTF-8" in _text(outcome)
    assert _tracebacks(client) == []


@pytest.mark.parametrize("preset", PRESETS)
async def test_an_edit_of_a_closed_legacy_file_is_written_as_utf8(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset, mode="acceptEdits")
    path = workspace / "l.txt"
    path.write_bytes(b"caf\xe9\nna\xefve\n")
    await _ok(client, "Read", {"file_path": str(path)})
    await _ok(
        client, "Edit", {"file_path": str(path), "old_string": "café", "new_string": "thé ☕"}
    )
    assert path.read_bytes() == "thé ☕\nnaïve\n".encode()


def _immutable(folder: Path, on: bool) -> bool:
    """``chattr +i`` / ``-i`` (no new files in the folder, even for root); False if unsupported."""
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    proc = subprocess.run(
        [chattr, "+i" if on else "-i", str(folder)], capture_output=True, check=False
    )
    return proc.returncode == 0


async def test_a_write_that_fails_after_the_editor_applied_the_edit_is_an_error_saying_so(
    start_editor: StartEditor, workspace: Path
) -> None:
    """Never "rejected": the buffer holds the change and the disk does not, and it says so."""
    folder = workspace / "locked"
    folder.mkdir()
    path = folder / "a.txt"
    path.write_text("one\ntwo\n")
    if not _immutable(folder, True):
        pytest.skip("chattr +i is not supported here")
    _immutable(folder, False)
    client = await start_editor(VSCODE, mode="acceptEdits")
    client.open(path)
    await _ok(client, "Read", {"file_path": str(path)})

    def lock_then_accept(params: types.ApplyWorkspaceEditParams) -> set[str]:
        # The disk refuses new files in the folder from now on (the atomic write's temp file).
        assert _immutable(folder, True)
        return {e.annotation_id for c in params.edit.document_changes for e in c.edits}

    client.edit_answer = lock_then_accept
    try:
        outcome = await client.run_tool(
            "Edit", {"file_path": str(path), "old_string": "two", "new_string": "TWO"}
        )
    finally:
        _immutable(folder, False)
    assert outcome["status"] == "error", outcome
    text = _text(outcome)
    assert "in the editor's buffer but could not be saved to disk" in text
    assert "file on disk still has its previous content" in text
    assert client.text(path) == "one\nTWO\n"
    assert path.read_text() == "one\ntwo\n"
    assert _tracebacks(client) == []


# --------------------------------------------------------------------------- Grep


@pytest.mark.parametrize("preset", PRESETS)
async def test_grep_searches_an_unsaved_buffer_as_the_user_sees_it(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset)
    dirty = workspace / "dirty.py"
    dirty.write_text("old_needle = 1\n")
    clean = workspace / "clean.py"
    clean.write_text("x = 1\nold_needle = 2\n")
    client.open(dirty)
    client.type(dirty, "a = 0\nnew_needle = 1\n")  # unsaved
    found = await _ok(
        client, "Grep", {"pattern": "new_needle", "output_mode": "content", "-n": True}
    )
    assert _text(found) == f"{dirty}:2:new_needle = 1"
    old = await _ok(client, "Grep", {"pattern": "old_needle"})
    # On disk dirty.py still says old_needle, but the user's buffer no longer does.
    assert str(clean) in _text(old) and str(dirty) not in _text(old)
    files = await _ok(client, "Grep", {"pattern": "needle", "glob": "*.py"})
    assert _text(files).splitlines()[1:] == [str(dirty), str(clean)]  # the buffer first


# --------------------------------------------------------------------------- Read


async def test_read_of_a_pdf_an_image_and_a_notebook(editor: EditorClient, workspace: Path) -> None:
    from PIL import Image

    pdf = workspace / "doc.pdf"
    pdf.write_bytes(make_pdf(["First page text", "Second page text"]))
    outcome = await _ok(editor, "Read", {"file_path": str(pdf)})
    assert "First page text" in _text(outcome) and "Second page text" in _text(outcome)
    one = await _ok(editor, "Read", {"file_path": str(pdf), "pages": "2"})
    assert "Second page text" in _text(one) and "First page text" not in _text(one)

    png = workspace / "pic.png"
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (0, 90, 200)).save(buf, "PNG")
    png.write_bytes(buf.getvalue())
    image = await _ok(editor, "Read", {"file_path": str(png)})
    [block] = [b for b in image["content"] if b["type"] == "image"]
    assert block["source"]["type"] == "base64" and block["source"]["media_type"] == "image/png"
    import base64

    with Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))) as got:
        assert got.size == (40, 30)

    nb_path = workspace / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Notes", id="intro"),
        nbformat.v4.new_code_cell(
            "print(6 * 7)",
            id="calc",
            execution_count=1,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="42\n")],
        ),
    ]
    nbformat.write(nb, str(nb_path))
    read_nb = await _ok(editor, "Read", {"file_path": str(nb_path)})
    text = _text(read_nb)
    assert "intro" in text and "# Notes" in text
    assert "calc" in text and "print(6 * 7)" in text and "42" in text


@pytest.mark.parametrize("preset", PRESETS)
async def test_notebook_edit_over_lsp_inserts_the_cell_the_prompt_named(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset)
    nb_path = workspace / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="first")]
    nbformat.write(nb, str(nb_path))
    await _ok(client, "Read", {"file_path": str(nb_path)})
    outcome = await _ok(
        client,
        "NotebookEdit",
        {
            "notebook_path": str(nb_path),
            "edit_mode": "insert",
            "cell_id": "first",
            "cell_type": "markdown",
            "new_source": "## Added",
        },
    )
    cells = nbformat.read(str(nb_path), as_version=4).cells
    assert [(c.cell_type, c.source) for c in cells] == [("code", "x = 1"), ("markdown", "## Added")]
    new_id = cells[1].id
    assert f"cell {new_id}" in _text(outcome)
    # The user approved exactly this cell: the prompt (or the editor's preview) named its id.
    asked = [p.message for p in client.prompts] + [
        a.description or ""
        for e in client.edits
        for a in (e.edit.change_annotations or {}).values()
    ]
    assert any(new_id in text for text in asked), asked
    replaced = await _ok(
        client,
        "NotebookEdit",
        {"notebook_path": str(nb_path), "cell_id": new_id, "new_source": "## Changed"},
    )
    assert "Replaced cell" in _text(replaced)
    assert nbformat.read(str(nb_path), as_version=4).cells[1].source == "## Changed"


# --------------------------------------------------------------------------- background tasks


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"sleep {marker}" in cmdline and "bash -c" not in cmdline:
            found.append(int(entry))
    return found


async def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_task_output_and_task_stop_of_a_background_bash(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(VSCODE, mode="bypassPermissions")
    marker = f"{300 + uuid.uuid4().int % 10_000 / 10_000:.4f}"
    started = await _ok(
        client,
        "Bash",
        {
            # The output is computed, so it cannot be confused with the command's echo.
            "command": f"echo first-$((2 + 1)); sleep {marker}; echo done-$((1 + 1))",
            "description": "a long task",
            "run_in_background": True,
        },
    )
    task_id = started["meta"]["taskId"]
    assert f"task {task_id}" in _text(started)
    await _wait_for(lambda: _processes_with(marker))
    first = await _ok(client, "TaskOutput", {"task_id": task_id, "block": True, "timeout": 1000})
    assert "first-3" in _text(first) and "running" in _text(first)
    again = await _ok(client, "BashOutput", {"task_id": task_id})
    assert "first-3" not in _text(again)  # only what is new since the last read
    assert "No new output" in _text(again)
    stopped = await _ok(client, "TaskStop", {"task_id": task_id})
    assert task_id in _text(stopped)
    await _wait_for(lambda: not _processes_with(marker), 10)
    final = await _ok(client, "TaskOutput", {"task_id": task_id})
    assert "killed" in _text(final) and "done-2" not in _text(final)
    log = Path(started["meta"]["outputPath"])
    assert log.read_text().startswith("first-3")
    assert json.dumps(final)  # a plain JSON outcome


# --------------------------------------------------------------------------- retention


async def test_the_server_removes_old_session_data_when_it_starts(
    start_editor: StartEditor, workspace: Path, _isolated_config: Path
) -> None:
    now = time.time()
    base = _isolated_config / "sessions"
    folders = {}
    for name, age_days in (("0123456789abcdef", 45), ("fedcba9876543210", 1)):
        log = base / name / "bash" / "out.log"
        log.parent.mkdir(parents=True)
        log.write_bytes(b"x" * 5000)
        for p in (log, log.parent, log.parent.parent):
            os.utime(p, (now - age_days * 86400,) * 2)
        folders[age_days] = log.parent.parent
    client = await start_editor(VSCODE)
    await _ok(client, "Glob", {"pattern": "*"})  # the engine is up
    await _wait_for(lambda: not folders[45].exists(), 20)
    assert folders[1].exists()


# --------------------------------------------------------------------------- changes and undo


@pytest.mark.parametrize("preset", PRESETS)
async def test_changes_are_listed_and_undone_through_the_editor(
    start_editor: StartEditor, workspace: Path, preset: str
) -> None:
    client = await start_editor(preset, mode="acceptEdits")
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    client.open(path)
    await _ok(client, "Read", {"file_path": str(path)})
    edited = await _ok(
        client, "Edit", {"file_path": str(path), "old_string": "two", "new_string": "TWO"}
    )
    listed = await client.request("codev/changes", {})
    [change] = listed["changes"]
    assert change["index"] == 1 and change["tool"] == "Edit" and change["path"] == str(path)
    assert change["toolUseId"] == edited["toolUseId"] and change["undoable"] is True
    assert "-two\n+TWO" in change["diff"]
    answer = await client.request("codev/undoChange", {"index": 1})
    assert answer["undone"] is True, answer
    # The same edit path as Edit: the open buffer shows the undo, and the disk has it.
    assert client.edits[-1].label == "Codev: undo Edit a.txt"
    assert client.text(path) == "one\ntwo\n" and path.read_text() == "one\ntwo\n"
    assert (await client.request("codev/changes", {}))["changes"] == []
    # The model must read again before editing: the undo was not its doing.
    again = await client.run_tool(
        "Edit", {"file_path": str(path), "old_string": "one", "new_string": "1"}
    )
    assert again["status"] == "error" and "You have not read" in _text(again)


async def test_an_undo_never_overwrites_unsaved_changes_in_the_buffer(
    start_editor: StartEditor, workspace: Path
) -> None:
    client = await start_editor(VSCODE, mode="acceptEdits")
    path = workspace / "a.txt"
    path.write_text("x = 1\n")
    client.open(path)
    await _ok(client, "Read", {"file_path": str(path)})
    await _ok(client, "Edit", {"file_path": str(path), "old_string": "1", "new_string": "2"})
    client.type(path, "x = 2\n# typed, unsaved\n")
    edits_before = len(client.edits)
    listed = await client.request("codev/changes", {})
    assert listed["changes"][0]["undoable"] is False
    answer = await client.command("codev.undoChange", {})
    assert answer["undone"] is False and "changed after the Edit" in answer["reason"]
    assert client.text(path) == "x = 2\n# typed, unsaved\n" and path.read_text() == "x = 2\n"
    assert len(client.edits) == edits_before  # nothing was sent to the editor
    from pygls.exceptions import JsonRpcInvalidParams

    with pytest.raises(JsonRpcInvalidParams):
        await client.request("codev/undoChange", {"index": "first"})
