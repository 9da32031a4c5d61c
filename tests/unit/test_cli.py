"""The terminal runner, as a subprocess: `codev-ls tool NAME 'JSON'` and its exit codes."""

from __future__ import annotations

import json
import os
import socket
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


def test_input_nested_too_deeply_is_a_usage_error(codev_cmd: list[str], workspace: Path) -> None:
    deep = "[" * 100_000
    for command in ("tool", "explain"):
        out = _run(codev_cmd, command, "Read", deep, cwd=workspace)
        assert out.returncode == 2, out.stderr
        assert "nested too deeply" in out.stderr
        assert "Traceback" not in out.stderr
    out = _run(codev_cmd, "tool", "Read", "1" * 5000, cwd=workspace)  # past int conversion
    assert out.returncode == 2 and "cannot be read as JSON" in out.stderr
    assert "Traceback" not in out.stderr


def test_tcp_address_errors_are_one_line(codev_cmd: list[str], workspace: Path) -> None:
    for bad in ("127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:http", "2087"):
        out = _run(codev_cmd, "--tcp", bad, cwd=workspace)
        assert out.returncode == 2, (bad, out.stderr)
        assert out.stderr.startswith("codev-ls: error: --tcp"), out.stderr
        assert "Traceback" not in out.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = _run(codev_cmd, "--tcp", f"127.0.0.1:{port}", cwd=workspace)
    assert out.returncode == 1
    assert out.stderr.startswith(f"codev-ls: error: cannot serve on 127.0.0.1:{port}: ")
    assert "address already in use" in out.stderr.lower()
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_unwritable_config_dir_still_prints_the_outcome(
    codev_cmd: list[str], workspace: Path, tmp_path: Path
) -> None:
    # A file where the config folder should be: nothing can be created under it (even as root).
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    (workspace / "a.txt").write_text("alpha\n")
    read = json.dumps({"file_path": str(workspace / "a.txt")})
    out = subprocess.run(
        [*codev_cmd, "tool", "Read", read, "--session", "work"],
        capture_output=True,
        text=True,
        cwd=workspace,
        env={**os.environ, "CODEV_CONFIG_DIR": str(blocked)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "     1\talpha\n"
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert "[Read: success (config)]" in lines
    # One line for the audit log, one for the session, and the outcome's line before it.
    audit = [line for line in lines if "permission audit log" in line]
    session = [line for line in lines if "session could not be saved" in line]
    assert len(audit) == 1 and len(session) == 1, out.stderr
    assert lines.index("[Read: success (config)]") < lines.index(session[0])
    assert len(lines) == 3, out.stderr


def test_a_disabled_builtin_is_not_offered(codev_cmd: list[str], workspace: Path) -> None:
    out = subprocess.run(
        [*codev_cmd, "tool", "WebFetch", '{"url": "https://example.com", "prompt": "x"}'],
        capture_output=True,
        text=True,
        cwd=workspace,
        env={**os.environ, "CODEV_DISABLE_WEBFETCH": "1"},
        timeout=60,
    )
    assert out.returncode == 1
    assert "No such tool available: WebFetch" in out.stdout
    assert "WebSearch" in out.stdout  # the others are still there
