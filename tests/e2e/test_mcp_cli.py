"""``codev-ls tool mcp__…`` from a terminal: the CLI waits for MCP servers, then runs the tool."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.mcp_support import approve_project_servers, script_server, time_server, write_mcp_json


@pytest.fixture(autouse=True)
def _servers_approved() -> None:
    """These tests are about running MCP tools; approving servers: test_mcp_approval.py."""
    approve_project_servers()


def run_cli(codev_cmd: list[str], workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*codev_cmd, "tool", *args, "--cwd", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


def test_cli_runs_an_mcp_tool(codev_cmd: list[str], workspace: Path) -> None:
    write_mcp_json(
        workspace, {"time": time_server(), "broken": script_server("mcp_servers/crash.py")}
    )
    out = run_cli(
        codev_cmd,
        workspace,
        "mcp__time__convert_time",
        json.dumps({"source_timezone": "UTC", "time": "08:30", "target_timezone": "Europe/Berlin"}),
        "--json",
        "--yes",  # MCP tools ask in default mode
    )
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["status"] == "success" and outcome["toolName"] == "mcp__time__convert_time"
    assert "Europe/Berlin" in outcome["content"]
    # The broken server is reported on the terminal, and does not stop the run.
    assert "MCP server broken failed to start" in out.stderr


def test_cli_non_read_only_mcp_tool_asks_and_rejects_without_a_terminal(
    codev_cmd: list[str], workspace: Path, tmp_path: Path
) -> None:
    from tests.mcp_support import probe_server

    write_mcp_json(workspace, {"probe": probe_server(tmp_path / "probe")})
    out = run_cli(codev_cmd, workspace, "mcp__probe__add_tool", '{"name": "x"}')
    assert out.returncode == 1
    assert "probe - add_tool (MCP)" in out.stderr and "Reject" in out.stderr
    assert "rejected" in out.stderr


def test_cli_unknown_server_tool_is_a_clear_error(codev_cmd: list[str], workspace: Path) -> None:
    out = run_cli(codev_cmd, workspace, "mcp__nowhere__thing", "{}")
    assert out.returncode == 1
    assert "No such tool available: mcp__nowhere__thing" in out.stdout


def test_cli_built_in_tools_do_not_start_mcp_servers(
    codev_cmd: list[str], workspace: Path, tmp_path: Path
) -> None:
    from tests.mcp_support import probe_server, started_pids

    probe_dir = tmp_path / "probe"
    write_mcp_json(workspace, {"probe": probe_server(probe_dir)})
    (workspace / "a.txt").write_text("hello\n")
    out = run_cli(codev_cmd, workspace, "Glob", '{"pattern": "*.txt"}')
    assert out.returncode == 0, out.stderr
    assert "a.txt" in out.stdout
    assert started_pids(probe_dir) == []


def test_cli_allow_rule_for_a_server_runs_its_tools_without_asking(
    codev_cmd: list[str], workspace: Path
) -> None:
    write_mcp_json(workspace, {"time": time_server()})
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["mcp__time"]}})
    )
    out = run_cli(codev_cmd, workspace, "mcp__time__get_current_time", '{"timezone": "UTC"}')
    assert out.returncode == 0, out.stderr
    assert '"timezone": "UTC"' in out.stdout
    assert "Allow once" not in out.stderr  # no question was put
    assert "(config)" in out.stderr
