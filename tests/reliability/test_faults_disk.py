"""A full disk: a real 1 MiB tmpfs, filled up. Results that must be persisted, Bash
output and file writes fail with a clear error — never a traceback, never a
half-written file, and the engine keeps working.

Needs ``mount -t tmpfs`` (root, as in CI); skipped where mounting is not allowed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine


def _fill(folder: Path) -> None:
    """Write until the filesystem is full (ENOSPC), leaving it at 0 bytes free."""
    fd = os.open(folder / "filler.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted on a temp folder (unmounted after the test)."""
    mountpoint = tmp_path / f"tmpfs-{uuid.uuid4().hex[:8]}"
    mountpoint.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0777", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def _no_leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith(".codev-tmp")]


async def test_persisting_a_large_result_on_a_full_disk(workspace: Path, tiny_disk: Path) -> None:
    # A Grep whose output (> 50 000 characters) must be saved to the data folder.
    for i in range(40):
        (workspace / f"f{i}.txt").write_text("needle in a haystack line\n" * 100)
    data = tiny_disk / "data"
    engine = Engine(workspace, ScriptedBridge(), data_root=data)
    try:
        (engine.session.data_dir / "tool-results").mkdir(parents=True, exist_ok=True)
        _fill(tiny_disk)
        outcome = await engine.run_tool(
            "Grep", {"pattern": "needle", "output_mode": "content", "head_limit": 0}
        )
        assert outcome.status == "error", outcome
        text = outcome.text()
        assert "too large to return inline" in text and "No space left on device" in text
        assert "Traceback" not in text
        assert _no_leftovers(tiny_disk) == []
        # Still working: a small result needs no disk.
        (workspace / "small.txt").write_text("ok\n")
        small = await engine.run_tool("Read", {"file_path": str(workspace / "small.txt")})
        assert small.status == "success"
    finally:
        await engine.aclose()


async def test_bash_output_on_a_full_disk(workspace: Path, tiny_disk: Path) -> None:
    engine = Engine(
        workspace,
        ScriptedBridge(default_answer="allow_once"),
        mode="bypassPermissions",
        data_root=tiny_disk / "data",
    )
    try:
        engine.session.data_dir.mkdir(parents=True, exist_ok=True)
        _fill(tiny_disk)
        outcome = await engine.run_tool("Bash", {"command": "seq 1 300000"})
        text = outcome.text()
        # The command ran; its output could not be kept whole, and the result says so.
        assert outcome.status == "success", text[-2000:]
        assert "could not be saved (No space left on device)" in text
        assert "Traceback" not in text
        assert "300000" in text  # the end is shown
    finally:
        await engine.aclose()


async def test_writing_a_file_on_a_full_disk_keeps_the_old_one(
    tiny_disk: Path, tmp_path: Path
) -> None:
    ws = tiny_disk / "ws"
    ws.mkdir()
    target = ws / "notes.txt"
    target.write_text("the old content\n")
    engine = Engine(
        ws,
        ScriptedBridge(default_answer="allow_once"),
        mode="bypassPermissions",
        data_root=tmp_path / "data",
    )
    try:
        read = await engine.run_tool("Read", {"file_path": str(target)})
        assert read.status == "success"
        _fill(tiny_disk)
        big = "new content\n" * 50_000  # 600 kB: cannot fit
        outcome = await engine.run_tool("Write", {"file_path": str(target), "content": big})
        assert outcome.status == "error", outcome
        assert "No space left on device" in outcome.text()
        assert "Traceback" not in outcome.text()
        assert target.read_text() == "the old content\n"
        assert _no_leftovers(ws) == []
        edit = await engine.run_tool(
            "Edit", {"file_path": str(target), "old_string": "old", "new_string": "x" * 400_000}
        )
        assert edit.status == "error" and "No space left on device" in edit.text()
        assert target.read_text() == "the old content\n"
    finally:
        await engine.aclose()
        with contextlib.suppress(OSError):
            os.unlink(tiny_disk / "filler.bin")
