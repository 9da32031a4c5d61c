"""The terminal runner, as a subprocess: `codev-ls tool NAME 'JSON'` and its exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from codev_ls import __version__


def _run(
    cmd: list[str], *args: str, cwd: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd, input=stdin, timeout=60
    )


def test_version(codev_cmd: list[str], workspace: Path) -> None:
    out = _run(codev_cmd, "--version", cwd=workspace)
    assert out.returncode == 0
    assert out.stdout.strip() == f"codev-ls {__version__}"


def test_read_succeeds_with_numbered_lines(codev_cmd: list[str], workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    out = _run(
        codev_cmd,
        "tool",
        "Read",
        json.dumps({"file_path": str(workspace / "a.txt")}),
        cwd=workspace,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "     1\talpha\n     2\tbeta\n"
    assert "[Read: success (config)]" in out.stderr


def test_json_output_is_the_protocol_outcome(codev_cmd: list[str], workspace: Path) -> None:
    (workspace / "x.py").write_text("")
    out = _run(
        codev_cmd,
        "tool",
        "Glob",
        '{"pattern": "*.py"}',
        "--json",
        "--cwd",
        str(workspace),
        cwd=Path("/"),
    )
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["status"] == "success"
    assert outcome["content"] == str(workspace / "x.py")
    assert outcome["toolUseId"].startswith("toolu_")


def test_bad_json_is_a_usage_error(codev_cmd: list[str], workspace: Path) -> None:
    out = _run(codev_cmd, "tool", "Read", "{not json", cwd=workspace)
    assert out.returncode == 2
    assert "not valid JSON" in out.stderr
    assert "Traceback" not in out.stderr
    out = _run(codev_cmd, "tool", "Read", "[1, 2]", cwd=workspace)
    assert out.returncode == 2 and "must be a JSON object" in out.stderr


def test_usage_errors_exit_2(codev_cmd: list[str], workspace: Path) -> None:
    out = _run(codev_cmd, "tool", "Read", "{}", "--mode", "yolo", cwd=workspace)
    assert out.returncode == 2 and "unknown permission mode 'yolo'" in out.stderr
    out = _run(codev_cmd, "tool", cwd=workspace)
    assert out.returncode == 2
    out = _run(codev_cmd, "tool", "Read", "{}", "--cwd", str(workspace / "missing"), cwd=workspace)
    assert out.returncode == 2 and "is not a folder" in out.stderr


def test_tool_failures_exit_1_with_a_message(codev_cmd: list[str], workspace: Path) -> None:
    out = _run(codev_cmd, "tool", "Nope", "{}", cwd=workspace)
    assert out.returncode == 1
    assert "No such tool available: Nope" in out.stdout
    out = _run(codev_cmd, "tool", "Read", '{"file_path": "relative.txt"}', cwd=workspace)
    assert out.returncode == 1 and "must be an absolute path" in out.stdout
    out = _run(codev_cmd, "tool", "Read", '{"file_path": 3}', cwd=workspace)
    assert out.returncode == 1 and "`file_path`" in out.stdout


def test_a_named_session_lets_a_read_enable_a_later_edit(
    codev_cmd: list[str], workspace: Path
) -> None:
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    edit = json.dumps({"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"})
    # Without a session, each run is new: the Edit has no Read behind it and is refused.
    out = _run(codev_cmd, "tool", "Edit", edit, "--yes", cwd=workspace)
    assert out.returncode == 1 and "Read" in out.stdout
    assert target.read_text() == "x = 1\n"
    read = json.dumps({"file_path": str(target)})
    out = _run(codev_cmd, "tool", "Read", read, "--session", "work", cwd=workspace)
    assert out.returncode == 0, out.stderr
    out = _run(codev_cmd, "tool", "Edit", edit, "--yes", "--session", "work", cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr
    assert target.read_text() == "x = 2\n"
    # The session remembers the edit too: a change made behind its back is caught.
    target.write_text("x = 3\n")
    again = json.dumps({"file_path": str(target), "old_string": "x = 3", "new_string": "x = 4"})
    out = _run(codev_cmd, "tool", "Edit", again, "--yes", "--session", "work", cwd=workspace)
    assert out.returncode == 1 and "read it again" in out.stdout.lower()
    assert target.read_text() == "x = 3\n"


def test_bad_session_names_are_usage_errors(codev_cmd: list[str], workspace: Path) -> None:
    out = _run(
        codev_cmd, "tool", "Glob", '{"pattern": "*"}', "--session", "../escape", cwd=workspace
    )
    assert out.returncode == 2 and "invalid session name" in out.stderr
