"""Write through the whole lifecycle: create, overwrite, stale reads, atomicity."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine

from .conftest import Runner


async def test_creates_a_file_and_its_folders(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "pkg" / "sub" / "new.py"
    out = await run.ok("Write", file_path=str(path), content="a = 1\nb = 2\n")
    assert path.read_text() == "a = 1\nb = 2\n"
    assert "Created pkg/sub/new.py (2 lines)." in out.text()
    assert engine.session.changes[-1].before is None


async def test_overwrite_needs_a_prior_read(run: Runner, workspace: Path):
    path = workspace / "f.txt"
    path.write_text("old\n")
    out = await run("Write", file_path=str(path), content="new\n")
    assert out.status == "error" and "You have not read" in out.text()
    assert path.read_text() == "old\n"
    await run.read(path)
    out = await run.ok("Write", file_path=str(path), content="new\n")
    assert path.read_text() == "new\n"
    assert "Overwrote f.txt (+1 −1 lines)." in out.text()
    assert "-old\n+new" in out.text()


async def test_overwrite_refused_when_changed_since_read(run: Runner, workspace: Path):
    path = workspace / "f.txt"
    path.write_text("old\n")
    await run.read(path)
    path.write_text("changed by the user\n")
    out = await run("Write", file_path=str(path), content="new\n")
    assert out.status == "error" and "read it again" in out.text()
    assert path.read_text() == "changed by the user\n"


async def test_overwrite_keeps_permissions_crlf_and_encoding(run: Runner, workspace: Path):
    path = workspace / "w.txt"
    path.write_bytes("\ufeffé\r\nx\r\n".encode())
    path.chmod(0o640)
    await run.read(path)
    await run.ok("Write", file_path=str(path), content="é\ny\nz\n")
    assert path.read_bytes() == "\ufeffé\r\ny\r\nz\r\n".encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
async def test_overwrite_as_root_keeps_the_files_owner_and_group(run: Runner, workspace: Path):
    path = workspace / "theirs.txt"
    path.write_text("old\n")
    os.chown(path, 4321, 4322)
    await run.read(path)
    await run.ok("Write", file_path=str(path), content="new\n")
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (4321, 4322) and path.read_text() == "new\n"


async def test_overwrite_replaces_the_file_so_hard_links_keep_the_old_content(
    run: Runner, workspace: Path
):
    path = workspace / "a.txt"
    path.write_text("old\n")
    other = workspace / "b.txt"
    os.link(path, other)
    await run.read(path)
    await run.ok("Write", file_path=str(path), content="new\n")
    # Documented: the atomic rename makes a new file (engine/files.py).
    assert path.read_text() == "new\n" and other.read_text() == "old\n"


async def test_falls_back_to_utf8_when_the_old_encoding_cannot_hold_the_text(
    run: Runner, workspace: Path
):
    path = workspace / "l1.txt"
    path.write_bytes("café\n".encode("cp1252"))
    await run.read(path)
    out = await run.ok("Write", file_path=str(path), content="日本\n")
    assert path.read_bytes() == "日本\n".encode()
    assert "written as UTF-8" in out.text()


async def test_write_is_atomic_no_temp_files_left(run: Runner, workspace: Path):
    path = workspace / "a.txt"
    await run.ok("Write", file_path=str(path), content="x" * 100_000)
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt"]


async def test_write_into_a_folder_or_relative_path_is_refused(run: Runner, workspace: Path):
    out = await run("Write", file_path=str(workspace), content="x")
    assert out.status == "error" and "is a directory" in out.text()
    out = await run("Write", file_path="rel.txt", content="x")
    assert out.status == "error" and "absolute" in out.text()
    (workspace / "file").write_text("")
    out = await run("Write", file_path=str(workspace / "file" / "x.txt"), content="x")
    assert out.status == "error" and "is a file, not a folder" in out.text()


async def test_write_of_an_open_buffer_goes_through_the_bridge(
    run: Runner, workspace: Path, bridge: ScriptedBridge
):
    path = workspace / "b.txt"
    path.write_text("disk\n")
    bridge.open_buffer(path, "buffer (unsaved)\n", version=4)
    await run.read(path)
    await run.ok("Write", file_path=str(path), content="fresh\n")
    assert bridge.edits[-1].old_text == "buffer (unsaved)\n"
    assert bridge.buffers[path].text == "fresh\n"
    assert path.read_text() == "fresh\n"


async def test_write_preview_and_rules_see_the_path(workspace: Path, tmp_path: Path):
    bridge = ScriptedBridge(answers=["reject"])
    engine = Engine(workspace, bridge, data_root=tmp_path / "d")
    path = workspace / "n.txt"
    out = await engine.run_tool("Write", {"file_path": str(path), "content": "hello\n"})
    assert out.status == "rejected"
    assert not path.exists()
    request = bridge.requests[0]
    assert request.message == "Write: create n.txt"
    assert "--- /dev/null\n+++ b/n.txt\n" in request.detail and "+hello" in request.detail


def test_traits(engine: Engine, workspace: Path):
    write = next(t for t in engine.tool_pool() if t.name == "Write")
    (workspace / "e.txt").write_text("x")
    existing = write.parse_input({"file_path": str(workspace / "e.txt"), "content": ""})
    new = write.parse_input({"file_path": str(workspace / "n.txt"), "content": ""})
    assert write.is_destructive(existing) and not write.is_destructive(new)
    assert not write.is_read_only(new) and not write.is_concurrency_safe(new)
