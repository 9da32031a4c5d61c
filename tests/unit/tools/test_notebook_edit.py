"""NotebookEdit through the whole lifecycle on real notebooks written with nbformat."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine

from .conftest import Runner


@pytest.fixture
def nb_path(workspace: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="intro"),
        nbformat.v4.new_code_cell(
            "x = 1\nx",
            id="calc",
            execution_count=3,
            outputs=[
                nbformat.v4.new_output(
                    "execute_result", data={"text/plain": "1"}, execution_count=3
                )
            ],
        ),
        nbformat.v4.new_code_cell("print(x)", id="show"),
    ]
    path = workspace / "analysis.ipynb"
    nbformat.write(nb, str(path))
    return path


def _cells(path: Path) -> list[tuple[str, str, str]]:
    nb = nbformat.read(str(path), as_version=4)
    return [(c.get("id", ""), c.cell_type, c.source) for c in nb.cells]


async def test_replace_by_id_clears_outputs(run: Runner, nb_path: Path, engine: Engine):
    await run.read(nb_path)
    out = await run.ok(
        "NotebookEdit", notebook_path=str(nb_path), cell_id="calc", new_source="x = 2\nx"
    )
    assert _cells(nb_path)[1] == ("calc", "code", "x = 2\nx")
    nb = nbformat.read(str(nb_path), as_version=4)
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert "Replaced cell calc (index 1) in analysis.ipynb." in out.text()
    assert "-x = 1\n+x = 2" in out.text()
    assert engine.session.changes[-1].tool_name == "NotebookEdit"
    nbformat.validate(nb)


async def test_replace_by_index_and_convert_type(run: Runner, nb_path: Path):
    await run.read(nb_path)
    await run.ok(
        "NotebookEdit",
        notebook_path=str(nb_path),
        cell_index=2,
        new_source="## Notes",
        cell_type="markdown",
    )
    assert _cells(nb_path)[2] == ("show", "markdown", "## Notes")
    nbformat.validate(nbformat.read(str(nb_path), as_version=4))


async def test_insert_after_id_at_index_and_at_top(run: Runner, nb_path: Path):
    await run.read(nb_path)
    await run.ok(
        "NotebookEdit",
        notebook_path=str(nb_path),
        edit_mode="insert",
        cell_id="intro",
        cell_type="code",
        new_source="import os",
    )
    await run.ok(
        "NotebookEdit",
        notebook_path=str(nb_path),
        edit_mode="insert",
        cell_type="markdown",
        new_source="top",
    )
    await run.ok(
        "NotebookEdit",
        notebook_path=str(nb_path),
        edit_mode="insert",
        cell_index=5,
        cell_type="code",
        new_source="last",
    )
    cells = _cells(nb_path)
    assert [c[2] for c in cells] == ["top", "# Title", "import os", "x = 1\nx", "print(x)", "last"]
    assert len({c[0] for c in cells}) == 6  # new cells got fresh ids
    nbformat.validate(nbformat.read(str(nb_path), as_version=4))


async def test_delete(run: Runner, nb_path: Path):
    await run.read(nb_path)
    out = await run.ok(
        "NotebookEdit", notebook_path=str(nb_path), cell_id="show", edit_mode="delete"
    )
    assert [c[0] for c in _cells(nb_path)] == ["intro", "calc"]
    assert "Deleted cell show (index 2)" in out.text()


async def test_needs_a_read_and_refuses_stale(run: Runner, nb_path: Path):
    out = await run("NotebookEdit", notebook_path=str(nb_path), cell_id="calc", new_source="y")
    assert out.status == "error" and "Read it first" in out.text()
    await run.read(nb_path)
    nb = nbformat.read(str(nb_path), as_version=4)
    nb.cells[0].source = "# Changed in Jupyter"
    nbformat.write(nb, str(nb_path))
    out = await run("NotebookEdit", notebook_path=str(nb_path), cell_id="calc", new_source="y")
    assert out.status == "error" and "read it again" in out.text()


async def test_bad_inputs(run: Runner, nb_path: Path, workspace: Path):
    await run.read(nb_path)
    out = await run("NotebookEdit", notebook_path=str(nb_path), cell_id="nope", new_source="y")
    assert (
        out.status == "error"
        and "No cell with id 'nope'" in out.text()
        and "intro, calc, show" in out.text()
    )
    out = await run("NotebookEdit", notebook_path=str(nb_path), cell_index=9, new_source="y")
    assert out.status == "error" and "past the end" in out.text()
    out = await run("NotebookEdit", notebook_path=str(nb_path), edit_mode="insert", new_source="y")
    assert out.status == "error" and "cell_type" in out.text()
    out = await run("NotebookEdit", notebook_path=str(nb_path), new_source="y")
    assert out.status == "error" and "Name the cell" in out.text()
    txt = workspace / "a.py"
    txt.write_text("x")
    out = await run("NotebookEdit", notebook_path=str(txt), cell_index=0, new_source="y")
    assert out.status == "error" and "not a Jupyter notebook" in out.text()
    out = await run("NotebookEdit", notebook_path="rel.ipynb", cell_index=0, new_source="y")
    assert out.status == "error" and "absolute" in out.text()


async def test_old_notebook_without_ids(run: Runner, workspace: Path):
    path = workspace / "old.ipynb"
    doc = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": ["a = 1"],
            },
            {"cell_type": "markdown", "metadata": {}, "source": ["text"]},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    path.write_text(json.dumps(doc, indent=1) + "\n")
    out = await run.read(path)
    assert '<cell id="cell-1" index=1 type=markdown>' in out.text()
    await run.ok("NotebookEdit", notebook_path=str(path), cell_id="cell-1", new_source="new text")
    await run.ok(
        "NotebookEdit",
        notebook_path=str(path),
        edit_mode="insert",
        cell_index=2,
        cell_type="code",
        new_source="b = 2",
    )
    nb = nbformat.read(str(path), as_version=4)
    assert nb.nbformat_minor == 4 and all("id" not in c for c in nb.cells)
    assert [c.source for c in nb.cells] == ["a = 1", "new text", "b = 2"]
    nbformat.validate(nb)


async def test_goes_through_the_bridge_and_asks_with_the_cell_diff(
    nb_path: Path, workspace: Path, tmp_path: Path
):
    bridge = ScriptedBridge(answers=["allow_once"])
    engine = Engine(workspace, bridge, data_root=tmp_path / "d")
    await engine.run_tool("Read", {"file_path": str(nb_path)})
    out = await engine.run_tool(
        "NotebookEdit",
        {"notebook_path": str(nb_path), "cell_id": "show", "new_source": "print(x * 2)"},
    )
    assert out.status == "success", out.text()
    req = bridge.requests[0]
    assert req.message == "NotebookEdit: replaced cell show (index 2) in analysis.ipynb"
    assert "-print(x)\n+print(x * 2)" in req.detail
    assert bridge.edits[0].label == "Codev: NotebookEdit analysis.ipynb"


def test_traits(engine: Engine):
    tool = next(t for t in engine.tool_pool() if t.name == "NotebookEdit")
    delete = tool.parse_input({"notebook_path": "/a.ipynb", "cell_id": "x", "edit_mode": "delete"})
    replace = tool.parse_input({"notebook_path": "/a.ipynb", "cell_id": "x", "new_source": "y"})
    assert tool.is_destructive(delete) and not tool.is_destructive(replace)
    assert not tool.is_read_only(replace) and not tool.is_concurrency_safe(replace)


async def test_the_id_the_prompt_shows_is_the_id_the_inserted_cell_gets(
    nb_path: Path, workspace: Path, tmp_path: Path
):
    bridge = ScriptedBridge(answers=["allow_once"])
    engine = Engine(workspace, bridge, mode="default", data_root=tmp_path / "data")
    run = Runner(engine)
    await run.read(nb_path)
    out = await run.ok(
        "NotebookEdit",
        notebook_path=str(nb_path),
        edit_mode="insert",
        cell_id="calc",
        cell_type="code",
        new_source="y = 2",
    )
    [request] = bridge.requests
    new_id = _cells(nb_path)[2][0]
    assert _cells(nb_path)[2][1:] == ("code", "y = 2")
    assert f"cell {new_id}" in request.message + request.detail
    assert f"Inserted code cell {new_id} at index 2" in out.text()
    assert new_id not in {"intro", "calc", "show"}
    nbformat.validate(nbformat.read(str(nb_path), as_version=4))
