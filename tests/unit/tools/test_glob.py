"""Glob through the whole lifecycle with the real rg: semantics, ignore files, order, cap."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codev_ls.engine.runtime import Engine
from codev_ls.tools.glob import MAX_RESULTS, split_pattern

from .conftest import Runner


@pytest.fixture
def tree(workspace: Path) -> Path:
    files = [
        "top.py",
        "src/a.py",
        "src/pkg/b.py",
        "src/pkg/c.ts",
        "src/pkg/deep/d.py",
        ".hidden/e.py",
        "build/gen.py",
        "node_modules/lib/index.js",
        ".git/config",
    ]
    for i, rel in enumerate(files):
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        t = time.time() - 1000 + i
        os.utime(path, (t, t))
    (workspace / ".gitignore").write_text("build/\nnode_modules/\n")
    os.utime(workspace / ".gitignore", (time.time() - 5000,) * 2)
    return workspace


def _paths(out, root: Path) -> list[str]:
    return [str(Path(p).relative_to(root)) for p in out.text().split("\n") if p.startswith("/")]


async def test_star_stays_in_one_folder_double_star_crosses(run: Runner, tree: Path):
    assert _paths(await run.ok("Glob", pattern="*.py"), tree) == ["top.py"]
    assert _paths(await run.ok("Glob", pattern="src/*.py"), tree) == ["src/a.py"]
    got = _paths(await run.ok("Glob", pattern="**/*.py"), tree)
    # Newest first; .gitignore'd folders left out; hidden folders kept; .git never listed.
    assert got == [".hidden/e.py", "src/pkg/deep/d.py", "src/pkg/b.py", "src/a.py", "top.py"]


async def test_braces_and_prefix_folders(run: Runner, tree: Path):
    got = _paths(await run.ok("Glob", pattern="src/**/*.{py,ts}"), tree)
    assert got == ["src/pkg/deep/d.py", "src/pkg/c.ts", "src/pkg/b.py", "src/a.py"]
    got = _paths(await run.ok("Glob", pattern="src/pkg/*"), tree)
    assert got == ["src/pkg/c.ts", "src/pkg/b.py"]


async def test_path_argument_and_absolute_pattern(run: Runner, tree: Path):
    got = _paths(await run.ok("Glob", pattern="**/*.py", path=str(tree / "src/pkg")), tree)
    assert got == ["src/pkg/deep/d.py", "src/pkg/b.py"]
    got = _paths(await run.ok("Glob", pattern=str(tree / "src/*.py")), tree)
    assert got == ["src/a.py"]


async def test_a_pattern_naming_an_ignored_folder_lists_nothing_as_double_star_does(
    run: Runner, tree: Path
):
    (tree / "src/pkg/.gitignore").write_text("deep/\n")
    (tree / "node_modules/lib/sub").mkdir()
    (tree / "node_modules/lib/sub/x.js").write_text("x\n")
    assert "build/gen.py" not in _paths(await run.ok("Glob", pattern="**/*.py"), tree)
    for pattern in ("build/*", "build/*.py", "./build/**", "node_modules/lib/**/*.js"):
        out = await run.ok("Glob", pattern=pattern)
        assert out.text().startswith("No files found"), (pattern, out.text())
    # A nested .gitignore counts too, and so does .git (never listed).
    assert (await run.ok("Glob", pattern="src/pkg/deep/*")).text().startswith("No files found")
    assert (await run.ok("Glob", pattern=".git/*")).text().startswith("No files found")
    # Not ignored folders on the way are listed as before.
    assert _paths(await run.ok("Glob", pattern="src/pkg/*.py"), tree) == ["src/pkg/b.py"]
    assert _paths(await run.ok("Glob", pattern=".hidden/*"), tree) == [".hidden/e.py"]


async def test_an_ignored_folder_given_as_path_is_listed_on_purpose(run: Runner, tree: Path):
    got = _paths(await run.ok("Glob", pattern="*", path=str(tree / "build")), tree)
    assert got == ["build/gen.py"]
    got = _paths(await run.ok("Glob", pattern="**/*.js", path=str(tree / "node_modules")), tree)
    assert got == ["node_modules/lib/index.js"]


async def test_no_match_and_missing_prefix(run: Runner, tree: Path):
    out = await run.ok("Glob", pattern="**/*.rs")
    assert out.text() == f"No files found matching **/*.rs in {tree}."
    out = await run.ok("Glob", pattern="nope/**/*.py")
    assert out.text().startswith("No files found")


async def test_results_are_capped_with_a_note(run: Runner, workspace: Path):
    for i in range(MAX_RESULTS + 20):
        (workspace / f"f{i:03}.txt").write_text("")
    out = await run.ok("Glob", pattern="*.txt")
    lines = out.text().split("\n")
    assert len(lines) == MAX_RESULTS + 1
    assert f"{MAX_RESULTS + 20:,} files matched, the {MAX_RESULTS} newest are shown" in lines[-1]


async def test_bad_inputs(run: Runner, tree: Path):
    out = await run("Glob", pattern="*.py", path="src")
    assert out.status == "error" and "absolute" in out.text()
    out = await run("Glob", pattern="*.py", path=str(tree / "top.py"))
    assert out.status == "error" and "is a file" in out.text()
    out = await run("Glob", pattern="*.py", path=str(tree / "missing"))
    assert out.status == "error" and "does not exist" in out.text()
    out = await run("Glob", pattern="  ")
    assert out.status == "error" and "empty" in out.text()
    out = await run("Glob", pattern="../*.py")
    assert out.status == "error" and "path" in out.text()


def test_split_pattern():
    assert split_pattern("src/app/**/*.ts") == ("src/app", "**/*.ts", None)
    assert split_pattern("*.py") == ("", "*.py", 1)
    assert split_pattern("./a/*/b.py") == ("a", "*/b.py", 2)
    assert split_pattern("a/b.py") == ("a", "b.py", 1)


def test_traits(engine: Engine):
    tool = next(t for t in engine.tool_pool() if t.name == "Glob")
    inp = tool.parse_input({"pattern": "*"})
    assert tool.is_read_only(inp) and tool.is_concurrency_safe(inp) and not tool.is_destructive(inp)
