"""Grep through the whole lifecycle, with the real rg of the ripgrep wheel."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.tools.grep import GrepInput, rg_args, split_globs

from .conftest import Runner


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\ndef main():\n    print('Hello')\n")
    (workspace / "src" / "util.py").write_text("def helper():\n    return 'hello'\n")
    (workspace / "web").mkdir()
    (workspace / "web" / "index.ts").write_text("export const hello = 1;\n")
    (workspace / "web" / "view.tsx").write_text("const Hello = () => null;\n")
    (workspace / "notes.md").write_text("nothing here\n")
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("hello = 'ignored'\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("hello\n")
    # Distinct modification times, oldest first: app.py, util.py, index.ts, view.tsx.
    for i, rel in enumerate(["src/app.py", "src/util.py", "web/index.ts", "web/view.tsx"]):
        t = time.time() - 1000 + i * 10
        os.utime(workspace / rel, (t, t))
    return workspace


async def test_files_with_matches_newest_first_gitignore_aware(run: Runner, tree: Path):
    out = await run.ok("Grep", pattern="hello")
    assert out.text() == "\n".join(
        ["Found 2 files", str(tree / "web/index.ts"), str(tree / "src/util.py")]
    )


async def test_case_insensitive(run: Runner, tree: Path):
    out = await run.ok("Grep", pattern="hello", **{"-i": True})
    lines = out.text().split("\n")
    assert lines[0] == "Found 4 files"
    assert lines[1:] == [
        str(tree / "web/view.tsx"),
        str(tree / "web/index.ts"),
        str(tree / "src/util.py"),
        str(tree / "src/app.py"),
    ]


async def test_content_mode_with_line_numbers_and_context(run: Runner, tree: Path):
    out = await run.ok(
        "Grep", pattern="print", output_mode="content", path=str(tree / "src"), **{"-B": 1}
    )
    assert out.text() == f"{tree}/src/app.py:3-def main():\n{tree}/src/app.py:4:    print('Hello')"
    out = await run.ok(
        "Grep", pattern="print", output_mode="content", path=str(tree / "src"), **{"-n": False}
    )
    assert out.text() == f"{tree}/src/app.py:    print('Hello')"


async def test_count_mode(run: Runner, tree: Path):
    (tree / "src" / "many.py").write_text("x = 1\nx = 2\ny = 3\nx = 4\n")
    out = await run.ok("Grep", pattern="^x", output_mode="count", path=str(tree / "src"))
    assert out.text() == f"Found 3 matching lines in 1 file\n{tree}/src/many.py:3"


async def test_glob_and_type_filters(run: Runner, tree: Path):
    out = await run.ok("Grep", pattern="(?i)hello", glob="*.{ts,tsx}")
    assert out.text().split("\n")[0] == "Found 2 files"
    assert "index.ts" in out.text() and "view.tsx" in out.text()
    out = await run.ok("Grep", pattern="(?i)hello", type="py")
    assert out.text().split("\n")[0] == "Found 2 files" and ".ts" not in out.text()
    out = await run.ok("Grep", pattern="(?i)hello", glob="*.ts !web/**")
    assert out.text().startswith("No matches")


async def test_single_file_path(run: Runner, tree: Path):
    out = await run.ok("Grep", pattern="def", path=str(tree / "src/util.py"), output_mode="content")
    assert out.text() == f"{tree}/src/util.py:1:def helper():"


async def test_head_limit_and_offset(run: Runner, workspace: Path):
    (workspace / "big.txt").write_text("".join(f"match {i}\n" for i in range(1, 1001)))
    out = await run.ok("Grep", pattern="match", output_mode="content", head_limit=3)
    lines = out.text().split("\n")
    assert lines[:3] == [f"{workspace}/big.txt:{i}:match {i}" for i in (1, 2, 3)]
    assert "Results truncated at 3 entries; more exist. Use offset=3" in out.text()
    out = await run.ok("Grep", pattern="match", output_mode="content", head_limit=2, offset=3)
    assert out.text().split("\n")[:2] == [f"{workspace}/big.txt:{i}:match {i}" for i in (4, 5)]
    out = await run.ok("Grep", pattern="match", output_mode="content")
    assert out.text().count("\n") >= 250 and "offset=250" in out.text()


async def test_default_head_limit_on_files(run: Runner, workspace: Path):
    for i in range(300):
        (workspace / f"f{i:03}.txt").write_text("needle\n")
    out = await run.ok("Grep", pattern="needle")
    assert out.text().startswith("Found 300 files\n")
    assert "(Showing 250 of 300 entries. Use offset=250" in out.text()
    out = await run.ok("Grep", pattern="needle", head_limit=0)
    assert out.text().count(".txt") == 300


async def test_multiline(run: Runner, workspace: Path):
    (workspace / "m.rs").write_text("struct A {\n    x: i32,\n}\n")
    out = await run.ok("Grep", pattern=r"struct A \{.*?x", output_mode="content")
    assert out.text().startswith("No matches")
    out = await run.ok("Grep", pattern=r"struct A \{.*?x", output_mode="content", multiline=True)
    assert f"{workspace}/m.rs:1:struct A {{" in out.text()
    assert f"{workspace}/m.rs:2:    x: i32," in out.text()


async def test_pattern_starting_with_a_dash(run: Runner, workspace: Path):
    (workspace / "a.txt").write_text("--verbose flag\n")
    out = await run.ok("Grep", pattern="--verbose", output_mode="content")
    assert "a.txt:1:--verbose flag" in out.text()


async def test_file_names_with_colons(run: Runner, workspace: Path):
    (workspace / "a:b.txt").write_text("needle\n")
    out = await run.ok("Grep", pattern="needle", output_mode="content")
    assert out.text() == f"{workspace}/a:b.txt:1:needle"


async def test_bad_regex_is_a_clear_error(run: Runner, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    out = await run("Grep", pattern="foo(")
    assert out.status == "error"
    assert "not a valid ripgrep regex" in out.text() and "Escape special characters" in out.text()


async def test_unknown_type_and_bad_path(run: Runner, workspace: Path):
    out = await run("Grep", pattern="x", type="pyhton")
    assert (
        out.status == "error" and "Unknown file type 'pyhton'" in out.text() and "py" in out.text()
    )
    out = await run("Grep", pattern="x", path="src")
    assert out.status == "error" and "absolute" in out.text()
    out = await run("Grep", pattern="x", path=str(workspace / "missing"))
    assert out.status == "error" and "does not exist" in out.text()


async def test_unknown_parameter_is_named(run: Runner, workspace: Path):
    out = await run("Grep", pattern="x", ignore_case=True)
    assert out.status == "error" and "`ignore_case` is not a known parameter" in out.text()


async def test_dirty_buffers_are_searched_as_the_user_sees_them(
    run: Runner, tree: Path, bridge: ScriptedBridge
):
    # On disk util.py says 'hello'; in the editor the user replaced it with 'goodbye'.
    bridge.open_buffer(tree / "src/util.py", "def helper():\n    return 'goodbye'\n", dirty=True)
    # notes.md says nothing on disk, but its unsaved buffer mentions hello.
    bridge.open_buffer(tree / "notes.md", "say hello\n", dirty=True)
    # A clean buffer is the same as the disk: nothing changes.
    bridge.open_buffer(tree / "web/index.ts", "export const hello = 1;\n", dirty=False)
    out = await run.ok("Grep", pattern="hello")
    assert out.text().split("\n") == [
        "Found 2 files",
        str(tree / "notes.md"),
        str(tree / "web/index.ts"),
    ]
    out = await run.ok("Grep", pattern="goodbye|hello", output_mode="content")
    lines = set(out.text().split("\n"))
    assert f"{tree}/src/util.py:2:    return 'goodbye'" in lines
    assert f"{tree}/notes.md:1:say hello" in lines
    assert not any("return 'hello'" in line for line in lines)
    out = await run.ok("Grep", pattern="hello|goodbye", output_mode="count")
    assert f"{tree}/notes.md:1" in out.text() and f"{tree}/src/util.py:1" in out.text()
    # Filters apply to buffers too.
    out = await run.ok("Grep", pattern="hello", glob="*.ts")
    assert "notes.md" not in out.text()
    out = await run.ok("Grep", pattern="hello", type="md")
    assert out.text().split("\n") == ["Found 1 file", str(tree / "notes.md")]
    out = await run.ok("Grep", pattern="hello", path=str(tree / "src"))
    assert out.text().startswith("No matches")


def test_split_globs():
    assert split_globs("*.ts, *.{js,jsx} src/**") == ["*.ts", "*.{js,jsx}", "src/**"]
    assert split_globs("*.py") == ["*.py"]


def test_rg_args_cover_the_options():
    inp = GrepInput.model_validate(
        {
            "pattern": "-x",
            "output_mode": "content",
            "-i": True,
            "-C": 2,
            "-A": 1,
            "type": "py",
            "glob": "*.py",
            "multiline": True,
        }
    )
    args = rg_args(inp, ["/w"])
    for flag in ["--ignore-case", "--line-number", "--multiline", "--multiline-dotall"]:
        assert flag in args
    assert args[args.index("--context") + 1] == "2"
    assert args[args.index("--after-context") + 1] == "1"
    assert args[args.index("--type") + 1] == "py"
    assert args[-4:] == ["--regexp", "-x", "--", "/w"]


def test_traits(engine: Engine):
    tool = next(t for t in engine.tool_pool() if t.name == "Grep")
    inp = tool.parse_input({"pattern": "x"})
    assert tool.is_read_only(inp) and tool.is_concurrency_safe(inp) and not tool.is_destructive(inp)
    schema = tool.input_schema()
    assert {"-i", "-n", "-A", "-B", "-C", "head_limit", "multiline", "glob", "type"} <= set(
        schema["properties"]
    )


async def test_an_unsaved_buffer_not_on_disk_is_searched(
    run: Runner, workspace: Path, bridge: ScriptedBridge
):
    path = workspace / "untitled.py"
    bridge.open_buffer(path, "needle = 1\n", dirty=True)
    out = await run.ok("Grep", pattern="needle", path=str(path), output_mode="content")
    assert out.text() == f"{path}:1:needle = 1"


async def test_a_long_search_reports_progress(
    run: Runner, workspace: Path, bridge: ScriptedBridge, monkeypatch: pytest.MonkeyPatch
):
    from codev_ls.tools import grep

    monkeypatch.setattr(grep, "PROGRESS_EVERY_S", 0.0)
    (workspace / "a.txt").write_text("needle\n" * 50)
    await run.ok("Grep", pattern="needle", output_mode="content", head_limit=0)
    reports = [e.message for e in bridge.progress if e.kind == "report"]
    assert reports and reports[-1].endswith("results so far")


def _rg_processes(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "rg" in cmdline:
            found.append(int(entry))
    return found


async def test_an_interrupted_search_kills_rg(engine: Engine, workspace: Path):
    import asyncio
    import uuid

    # rg opening a FIFO nobody writes to waits forever: a search that never ends.
    fifo = workspace / f"pipe-{uuid.uuid4().hex}"
    os.mkfifo(fifo)
    run = asyncio.ensure_future(engine.run_tool("Grep", {"pattern": "x", "path": str(fifo)}))
    deadline = time.monotonic() + 20
    while not _rg_processes(fifo.name):
        assert time.monotonic() < deadline and not run.done(), "rg did not start"
        await asyncio.sleep(0.02)
    assert engine.cancel() == 1
    outcome = await asyncio.wait_for(run, 20)
    assert outcome.status == "interrupted", outcome.text()
    deadline = time.monotonic() + 10
    while _rg_processes(fifo.name):
        assert time.monotonic() < deadline, "rg is still running"
        await asyncio.sleep(0.02)
