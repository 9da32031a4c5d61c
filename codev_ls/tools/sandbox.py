"""The Bash sandbox: bubblewrap on Linux.

A sandboxed command sees the whole filesystem read-only except the workspace
and a private ``/tmp`` (one folder per session, removed when the server
stops); it has no network (its own empty network namespace) unless the user
allows it; it runs in its own PID namespace, so nothing it starts outlives it,
and dies with the server (``--die-with-parent``). Inside the workspace, what
configures or runs code later — outside the sandbox, in the editor or the
user's own shell — stays read-only: ``.codev/`` (where permission rules are
saved), the repository's ``.git/config``, ``.git/config.worktree``,
``.git/hooks``, ``.git/info`` and each submodule's config and hooks under
``.git/modules``, and, where they exist, ``.vscode/``, ``.idea/``,
``.mcp.json`` and shell rc files at the workspace root. A sandboxed command
must not be able to grant itself permissions or plant code that runs later.
``.git`` itself is mounted on itself (still writable: commits work), which
makes it a mount point that cannot be renamed away and replaced by a folder
holding another config. What does not exist yet is not mounted (that would
create it): a sandboxed command can create ``.mcp.json`` or ``.vscode/`` in a
workspace that has none (a project's MCP servers still need the user's
approval; VS Code asks before running a folder's tasks), or ``.git`` in a
folder that is not a repository.

Whether bwrap can run is found out by running it once (cached per binary):
an installed bwrap can still fail (no user namespaces in a container). Where it
cannot, Bash says so in its prompt and its results and asks for every command.

Settings (``sandbox`` in the user/project/local settings files, later wins)::

    {"sandbox": {"enabled": true, "allowNetwork": false, "writePaths": ["~/.cache"]}}

and the environment: ``CODEV_SANDBOX=0`` turns the sandbox off (commands are
then judged by the permission rules alone), ``CODEV_SANDBOX_NETWORK=1`` allows
the network, ``CODEV_BWRAP`` names the bwrap binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.engine.config import config_dir

if TYPE_CHECKING:
    from codev_ls.engine.context import Session
    from codev_ls.engine.runtime import Engine

# Paths inside the workspace that stay read-only in the sandbox (when they exist).
PROTECTED_IN_WORKSPACE = (
    ".codev",
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/info",
    ".vscode",
    ".idea",
    ".mcp.json",
    ".gitconfig",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".envrc",
)
# Folders mounted on themselves (writable) so they cannot be renamed away.
PINNED_IN_WORKSPACE = (".git",)
# Submodules' git folders: their config and hooks stay read-only too (up to this many).
MAX_SUBMODULES = 64

_NETWORK_NOTE = (
    "The network is blocked in the sandbox. If the command needs it, ask the user to allow "
    'network in the settings (`"sandbox": {"allowNetwork": true}`) or rerun it with '
    "`dangerouslyDisableSandbox: true` (the user is asked)."
)


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """What the user configured for the sandbox."""

    enabled: bool = True
    allow_network: bool = False
    # Extra folders the sandboxed command may write (absolute, ~ expanded).
    write_paths: tuple[Path, ...] = ()
    # Where the setting that turned it off came from (for messages).
    disabled_by: str = ""


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether bwrap can confine commands here, and if not, why."""

    available: bool
    reason: str = ""
    bwrap: str | None = None


# --------------------------------------------------------------------------- detection

_PROBE_CACHE: dict[str, SandboxStatus] = {}
_PROBE_LOCK = threading.Lock()


def bwrap_executable() -> str | None:
    """The bwrap to use: ``$CODEV_BWRAP`` or ``bwrap`` on PATH."""
    env = os.environ.get("CODEV_BWRAP")
    if env:
        return env
    return shutil.which("bwrap")


def probe_bwrap(bwrap: str | None = None) -> SandboxStatus:
    """Run bwrap once with the flags Bash uses; cached per binary path."""
    if not sys.platform.startswith("linux"):
        return SandboxStatus(
            False, f"the sandbox needs Linux with bubblewrap (this is {sys.platform})"
        )
    bwrap = bwrap if bwrap is not None else bwrap_executable()
    if not bwrap:
        return SandboxStatus(
            False,
            "bubblewrap (bwrap) is not installed; install it with `apt-get install bubblewrap`",
        )
    with _PROBE_LOCK:
        cached = _PROBE_CACHE.get(bwrap)
        if cached is not None:
            return cached
        status = _run_probe(bwrap)
        _PROBE_CACHE[bwrap] = status
        return status


def _run_probe(bwrap: str) -> SandboxStatus:
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--", "/bin/sh", "-c", "exit 0",
    ]  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=15, check=False)
    except FileNotFoundError:
        return SandboxStatus(False, f"bwrap was not found at {bwrap}")
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus(False, f"bwrap could not be started: {exc}")
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {proc.returncode}"
        return SandboxStatus(False, f"bwrap cannot run here ({detail})")
    return SandboxStatus(True, "", bwrap)


# --------------------------------------------------------------------------- settings


def load_sandbox_config(root: Path, held: set[str] | None = None) -> SandboxConfig:
    """The ``sandbox`` settings (user, project, local; later wins), then the environment.

    A malformed settings file is skipped here: the settings loader reports it
    to the user. What the workspace's own files grant (the sandbox off, the
    network, more writable folders) counts only once the user approved it
    (``permissions/trust.py``): ``held`` holds the grants not approved (None:
    every grant of those files is held unless the folder is trusted).
    """
    from codev_ls.permissions.trust import HELD_ORIGINS, grants_of, trusted_folder

    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    files = [
        ("user", config_dir() / "settings.json"),
        ("project", root / ".codev" / "settings.json"),
        ("local", root / ".codev" / "settings.local.json"),
    ]
    user_data: Any = None
    for name, path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if name == "user":
            user_data = data
        section = data.get("sandbox") if isinstance(data, dict) else None
        if not isinstance(section, dict):
            continue
        section = dict(section)
        if name in HELD_ORIGINS and trusted_folder(root, user_data) is None:
            for grant in grants_of({"sandbox": section}, name):
                if held is not None and grant.canonical not in held:
                    continue
                if grant.canonical.endswith('"enabled=false"]'):
                    section.pop("enabled", None)
                elif grant.canonical.endswith('"allowNetwork=true"]'):
                    section.pop("allowNetwork", None)
                else:
                    folder = json.loads(grant.canonical)[1][1]
                    paths = section.get("writePaths")
                    if isinstance(paths, list):
                        section["writePaths"] = [p for p in paths if p != folder]
        for key, value in section.items():
            merged[key] = value
            origin[key] = f"{name} settings ({path})"
    enabled = merged.get("enabled", True) is not False
    disabled_by = "" if enabled else origin.get("enabled", "settings")
    allow_network = merged.get("allowNetwork", False) is True
    write_paths: list[Path] = []
    raw_paths = merged.get("writePaths", [])
    if isinstance(raw_paths, list):
        for item in raw_paths:
            if isinstance(item, str) and item.strip():
                p = Path(item).expanduser()
                write_paths.append(p if p.is_absolute() else root / p)
    env = os.environ.get("CODEV_SANDBOX", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        enabled, disabled_by = False, "CODEV_SANDBOX=0"
    elif env in ("1", "true", "yes", "on"):
        enabled, disabled_by = True, ""
    if os.environ.get("CODEV_SANDBOX_NETWORK", "").strip().lower() in ("1", "true", "yes", "on"):
        allow_network = True
    return SandboxConfig(enabled, allow_network, tuple(write_paths), disabled_by)


# --------------------------------------------------------------------------- the command line


def build_bwrap_argv(
    bwrap: str,
    command_argv: list[str],
    *,
    workspace: Path,
    private_tmp: Path,
    cwd: Path,
    allow_network: bool = False,
    write_paths: tuple[Path, ...] = (),
) -> list[str]:
    """The bwrap command line that confines ``command_argv``.

    Order matters: later mounts cover earlier ones. The private tmp is mounted
    on /tmp before the workspace, so a workspace under /tmp stays visible.
    """
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--bind", str(private_tmp), "/tmp",
    ]  # fmt: skip
    for extra in write_paths:
        if extra.is_dir():
            argv += ["--bind", str(extra), str(extra)]
    argv += ["--bind", str(workspace), str(workspace)]
    for path in pinned_paths(workspace):
        argv += ["--bind", str(path), str(path)]
    for path in protected_paths(workspace):
        argv += ["--ro-bind", str(path), str(path)]
    if not allow_network:
        argv.append("--unshare-net")
    argv += [
        "--unshare-pid",
        "--die-with-parent",
        "--setenv", "TMPDIR", "/tmp",
        "--chdir", str(cwd),
        "--",
        *command_argv,
    ]  # fmt: skip
    return argv


def _inside(path: Path, base: str) -> Path | None:
    """The real path of ``path`` when it exists strictly inside ``base``, else None."""
    if not os.path.lexists(path):
        return None
    real = Path(os.path.realpath(path))
    if str(real) == base or not str(real).startswith(base + os.sep):
        return None  # outside the workspace it is read-only anyway
    return real


def pinned_paths(workspace: Path) -> list[Path]:
    """Folders to mount on themselves: a mount point cannot be renamed or removed, so
    ``mv .git x && mkdir .git`` (a new config, outside the read-only mounts) fails."""
    base = os.path.realpath(workspace)
    out: list[Path] = []
    for rel in PINNED_IN_WORKSPACE:
        real = _inside(workspace / rel, base)
        if real is not None and real.is_dir() and real not in out:
            out.append(real)
    return out


def protected_paths(workspace: Path) -> list[Path]:
    """The real paths inside the workspace to keep read-only.

    ``.codev/`` is created (empty) when missing: otherwise a sandboxed command
    could create it with settings that turn the sandbox off or allow
    everything. Likewise ``.git/hooks`` in a repository.
    """
    out: list[Path] = []
    base = os.path.realpath(workspace)
    rels = list(PROTECTED_IN_WORKSPACE)
    modules = workspace / ".git" / "modules"
    if modules.is_dir():
        found = 0
        for config in sorted(modules.rglob("config")):
            if found >= MAX_SUBMODULES:
                break
            gitdir = config.parent
            if (gitdir / "HEAD").is_file():
                rel = gitdir.relative_to(workspace)
                rels += [str(rel / "config"), str(rel / "hooks")]
                found += 1
    for rel in rels:
        path = workspace / rel
        if not os.path.lexists(path):
            parent_ok = rel == ".codev" or (rel == ".git/hooks" and (workspace / ".git").is_dir())
            if not parent_ok:
                continue
            try:
                path.mkdir(exist_ok=True)
            except OSError:
                continue
        real = _inside(path, base)
        if real is not None and real not in out:
            out.append(real)
    return out


def network_hint() -> str:
    return _NETWORK_NOTE


# --------------------------------------------------------------------------- the service


@dataclass
class Sandbox:
    """The engine's sandbox: configuration, detection, and per-session private tmp folders.

    Kept in ``engine.services["sandbox"]``; its tmp folders are removed when
    the engine closes.
    """

    root: Path
    config: SandboxConfig
    _status: SandboxStatus | None = None
    _tmp_dirs: dict[str, Path] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    @property
    def status(self) -> SandboxStatus:
        if self._status is None:
            self._status = probe_bwrap()
        return self._status

    @property
    def active(self) -> bool:
        """Commands run sandboxed (enabled and bwrap works)."""
        return self.config.enabled and self.status.available

    def unavailable_reason(self) -> str | None:
        """Why commands run unconfined although the user did not turn the sandbox off."""
        if self.config.enabled and not self.status.available:
            return self.status.reason
        return None

    def private_tmp(self, session: Session) -> Path:
        """The session's private tmp folder (on the host), created on first use."""
        with self._lock:
            if self.closed:
                from codev_ls.engine.tool import ToolError

                raise ToolError("The server is shutting down; no new commands start.")
            path = self._tmp_dirs.get(session.id)
            if path is None or not path.is_dir():
                path = Path(tempfile.mkdtemp(prefix=f"codev-tmp-{session.id[:8]}-"))
                self._tmp_dirs[session.id] = path
            return path

    def wrap(self, command_argv: list[str], *, session: Session, cwd: Path) -> list[str]:
        bwrap = self.status.bwrap
        assert bwrap is not None, "wrap() needs an available sandbox"
        return build_bwrap_argv(
            bwrap,
            command_argv,
            workspace=self.root,
            private_tmp=self.private_tmp(session),
            cwd=cwd,
            allow_network=self.config.allow_network,
            write_paths=self.config.write_paths,
        )

    def release(self, session_id: str) -> None:
        """The session ended: remove its private tmp."""
        with self._lock:
            path = self._tmp_dirs.pop(session_id, None)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            dirs, self._tmp_dirs = list(self._tmp_dirs.values()), {}
        for path in dirs:
            shutil.rmtree(path, ignore_errors=True)


def get_sandbox(engine: Engine) -> Sandbox:
    """The engine's sandbox service, made on first use (settings read then)."""
    sandbox = engine.services.get("sandbox")
    if sandbox is None:
        manager = engine.services.get("settings")
        held_grants = getattr(manager, "held_grants", None)
        held = {g.canonical for g in held_grants()} if callable(held_grants) else None
        sandbox = Sandbox(engine.root, load_sandbox_config(engine.root, held))
        engine.services["sandbox"] = sandbox
        engine.on_close(sandbox.close)
        engine.on_session_end(sandbox.release)
    return sandbox
