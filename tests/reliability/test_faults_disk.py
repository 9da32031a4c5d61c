"""A full disk: a real 1 MiB tmpfs, filled up. Results that must be persisted, Bash
output and file writes fail with a clear error — never a traceback, never a
half-written file, and the engine keeps working.

The tmpfs is mounted in a user and mount namespace of its own (``unshare -rm``), so
no root is needed: each scenario runs in a child Python inside that namespace. Where
user namespaces are not allowed, root mounts it here instead. Where neither works the
tests are skipped with the reason — or fail, when ``CODEV_REQUIRE_FAULT_TESTS=1``
(CI sets it, so they cannot quietly stop running).

    python -m tests.reliability.test_faults_disk SCENARIO TMPFS WORKDIR   # one scenario
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine

TMPFS_OPTIONS = "size=1m,mode=0777"
# The child's exit code when the namespace could not mount the tmpfs.
CANNOT_MOUNT = 97


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


def _no_leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith(".codev-tmp")]


# --------------------------------------------------------------------------- the scenarios
# Each gets the mounted, empty tmpfs and a work folder on a real disk.


async def persisting_a_large_result(tiny_disk: Path, work: Path) -> None:
    """A Grep whose output (> 50 000 characters) must be saved to the data folder."""
    workspace = work / "ws"
    workspace.mkdir()
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


async def bash_output(tiny_disk: Path, work: Path) -> None:
    """A command's output too large to keep in memory, and no room to save it."""
    workspace = work / "ws"
    workspace.mkdir()
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


async def writing_a_file(tiny_disk: Path, work: Path) -> None:
    """A Write and an Edit that do not fit: the old file stays, whole."""
    ws = tiny_disk / "ws"
    ws.mkdir()
    target = ws / "notes.txt"
    target.write_text("the old content\n")
    engine = Engine(
        ws,
        ScriptedBridge(default_answer="allow_once"),
        mode="bypassPermissions",
        data_root=work / "data",
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


SCENARIOS: dict[str, Callable[[Path, Path], Awaitable[None]]] = {
    "persisting a large result": persisting_a_large_result,
    "bash output": bash_output,
    "writing a file": writing_a_file,
}


# --------------------------------------------------------------------------- the tests


def _in_a_namespace(name: str, mountpoint: Path, work: Path) -> subprocess.CompletedProcess | str:
    """Run the scenario in a child inside ``unshare -rm`` with the tmpfs mounted there;
    the reason (a string) when that is not possible here."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    mount_then_run = (
        f'mount -t tmpfs -o {TMPFS_OPTIONS} tmpfs "$1" || exit {CANNOT_MOUNT}; shift; exec "$@"'
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount_then_run, "sh", str(mountpoint),
         sys.executable, "-m", "tests.reliability.test_faults_disk", name, str(mountpoint),
         str(work)],
        capture_output=True, text=True, timeout=100, env=dict(os.environ),
    )  # fmt: skip
    if done.returncode == CANNOT_MOUNT or (done.returncode != 0 and "unshare:" in done.stderr):
        return f"unshare -rm: {done.stderr.strip()[-300:]}"
    return done


def _mounted_here(name: str, mountpoint: Path, work: Path) -> str | None:
    """Mount the tmpfs in this process's namespace (root) and run the scenario here;
    the reason (a string) when mounting is not allowed."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", TMPFS_OPTIONS, "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return f"mount: {done.stderr.strip()}"
    try:
        asyncio.run(SCENARIOS[name](mountpoint, work))
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)
    return None


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_full_disk(name: str, tmp_path: Path) -> None:
    mountpoint = tmp_path / "tmpfs"
    mountpoint.mkdir()
    work = (tmp_path / "work").resolve()
    work.mkdir()
    child = _in_a_namespace(name, mountpoint, work)
    if isinstance(child, subprocess.CompletedProcess):
        assert child.returncode == 0, (
            f"the scenario failed in its namespace:\n{child.stdout[-4000:]}{child.stderr[-6000:]}"
        )
        return
    why = _mounted_here(name, mountpoint, work)
    if why is None:
        return
    reason = f"cannot mount a tmpfs here ({child}; {why})"
    if os.environ.get("CODEV_REQUIRE_FAULT_TESTS") == "1":
        pytest.fail(f"{reason}, and CODEV_REQUIRE_FAULT_TESTS=1 requires the full-disk tests")
    pytest.skip(reason)


if __name__ == "__main__":
    scenario, tmpfs, workdir = sys.argv[1:4]
    asyncio.run(SCENARIOS[scenario](Path(tmpfs), Path(workdir)))
