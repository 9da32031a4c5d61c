"""Shared helpers for the MCP tests: server commands, config files, engines, process checks.

The servers are real: ``mcp-server-time`` and ``mcp-server-git`` (PyPI, in the
test extras), ``@modelcontextprotocol/server-everything`` (npm, installed into
``.cache/npm`` by ``scripts/install-test-deps.sh``), and the small SDK-built
servers in ``tests/fakes/``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.mcp.connection import Timeouts
from codev_ls.mcp.manager import McpManager, attach_mcp

REPO = Path(__file__).resolve().parent.parent
FAKES = REPO / "tests" / "fakes"
EVERYTHING_JS = (
    REPO / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

# Short limits so failure tests take a second, not half a minute.
FAST = Timeouts(
    startup_s=20.0, tool_s=60.0, backoff_base_s=0.1, backoff_max_s=0.5, stop_s=5.0, ping_s=1.0
)


def time_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def git_server(repo: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}


def everything_server(**extra: Any) -> dict[str, Any]:
    if not EVERYTHING_JS.is_file():
        pytest.fail(
            f"{EVERYTHING_JS} is missing: run `bash scripts/install-test-deps.sh` "
            "(installs @modelcontextprotocol/server-everything from npm)"
        )
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: run `bash scripts/install-test-deps.sh`")
    return {"command": node, "args": [str(EVERYTHING_JS)], **extra}


def probe_server(probe_dir: Path, **extra: Any) -> dict[str, Any]:
    probe_dir.mkdir(parents=True, exist_ok=True)
    env = {"PROBE_DIR": str(probe_dir), **extra.pop("env", {})}
    return {
        "command": sys.executable,
        "args": [str(FAKES / "mcp_servers/probe.py")],
        "env": env,
        **extra,
    }


def script_server(name: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAKES / name)], **extra}


def write_mcp_json(root: Path, servers: dict[str, Any]) -> Path:
    path = root / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def approve_project_servers() -> Path:
    """``enableAllProjectMcpServers: true`` in this test's user settings (``CODEV_CONFIG_DIR``).

    For tests about what servers do once running, not about whether they may
    start (a project's servers wait for the user's approval; that is tested in
    ``tests/unit/mcp/test_approval.py`` and ``tests/e2e/test_mcp_approval.py``).
    Subprocesses started by the test inherit the setting through the environment.
    """
    from codev_ls.engine.config import config_dir

    path = config_dir() / "settings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["enableAllProjectMcpServers"] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


async def start_engine(
    root: Path,
    servers: dict[str, Any] | None = None,
    *,
    bridge: ScriptedBridge | None = None,
    timeouts: Timeouts = FAST,
    wait: bool = True,
    approve: bool = True,
    **engine_kwargs: Any,
) -> tuple[Engine, McpManager, ScriptedBridge]:
    """An Engine with the MCP manager attached (servers from ``servers``), started.

    The default bridge answers "Allow once" to every permission question (MCP
    tools ask in default mode); tests about permissions pass their own. The
    project's servers are approved in the user settings unless ``approve`` is
    false (then the manager asks about them through the bridge).
    """
    if servers is not None:
        write_mcp_json(root, servers)
    if approve:
        approve_project_servers()
    bridge = bridge or ScriptedBridge(default_answer="allow_once")
    engine = Engine(root, bridge, **engine_kwargs)
    manager = attach_mcp(engine, timeouts=timeouts)
    if wait:
        await manager.wait_ready(30)
    return engine, manager, bridge


def server_status(manager: McpManager, name: str) -> dict[str, Any]:
    for status in manager.status()["servers"]:
        if status["name"] == name:
            return status
    raise AssertionError(f"no server {name} in {manager.status()}")


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def started_pids(probe_dir: Path) -> list[int]:
    starts = probe_dir / "starts"
    if not starts.exists():
        return []
    return [int(line) for line in starts.read_text().split()]


class HttpMcpServer:
    """tests/fakes/mcp_servers/http_probe.py in a subprocess, on a free port of 127.0.0.1."""

    def __init__(self, token: str | None = None, port: int = 0) -> None:
        import os
        import subprocess

        env = dict(os.environ)
        env["PROBE_PORT"] = str(port)
        if token is not None:
            env["PROBE_TOKEN"] = token
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKES / "mcp_servers/http_probe.py")],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"the HTTP MCP server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
