"""Helpers shared by the Bash, task and sandbox tests: engines, process probes, markers."""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from pathlib import Path

import pytest

from codev_ls.bridge import PermissionChoice, ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.tools.bash import BashTool
from codev_ls.tools.sandbox import probe_bwrap
from codev_ls.tools.tasks import TaskOutputTool, TaskStopTool

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not probe_bwrap(shutil.which("bwrap")).available,
    reason="bubblewrap cannot run here (scripts/install-test-deps.sh installs it)",
)


@pytest.fixture(params=["sandbox", "plain"])
def sandbox_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test both inside bubblewrap and as a plain process group."""
    if request.param == "plain":
        monkeypatch.setenv("CODEV_SANDBOX", "0")
    elif not probe_bwrap().available:
        pytest.skip("bubblewrap cannot run here (scripts/install-test-deps.sh installs it)")
    return request.param


def make_engine(
    root: Path,
    *,
    answer: PermissionChoice = "allow_once",
    answers: list[PermissionChoice] | None = None,
    mode: str = "default",
) -> tuple[Engine, ScriptedBridge]:
    bridge = ScriptedBridge(answers=list(answers or []), default_answer=answer)
    engine = Engine(
        root,
        bridge,
        mode=mode,  # type: ignore[arg-type]
        base_tools=[BashTool(), TaskOutputTool(), TaskStopTool()],
        data_root=root.parent / "codev-data",
    )
    return engine, bridge


def marker_sleep() -> str:
    """A `sleep` with a duration no other process uses, to find its processes by cmdline."""
    return f"sleep {random.randint(1000, 9999)}.{random.randint(100000, 999999)}"


def procs_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker`` (zombies have none)."""
    me = os.getpid()
    found = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if needle in cmdline.replace(b"\0", b" "):
            found.append(int(name))
    return found


def wait_until(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def peak_rss_reset() -> int:
    """Reset the peak RSS (VmHWM) to the current RSS; returns the current RSS in KiB."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _status_kib("VmRSS")


def peak_rss_kib() -> int:
    return _status_kib("VmHWM")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        m = re.search(rf"{field}:\s+(\d+)", fh.read())
    assert m is not None
    return int(m.group(1))
