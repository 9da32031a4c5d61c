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

No host Unix socket is reachable either (docker.sock, the D-Bus buses, an ssh or gpg
agent): a read-only mount does not stop ``connect()``, so a seccomp filter, handed to
bwrap with ``--seccomp``, makes ``socket(AF_UNIX, ...)`` fail with EPERM (and
``io_uring_setup``, which could create one around the filter; 32-bit programs'
``socketcall``). ``socketpair()`` still works (asyncio, pipes between processes), and
so does TCP inside the sandbox's own network namespace. The program is eight-byte BPF
instructions assembled here (x86-64 and arm64; elsewhere there is no filter and the
sandbox says so). ``"allowUnixSockets": true`` leaves the filter out.

A file git reads its configuration through that the sandbox cannot keep from being
*created* (``.git/commondir``: git then reads ``config`` from the folder it names) is
removed when the command that created it ends, and the result says so.

Whether bwrap can run is found out by running it once (cached per binary):
an installed bwrap can still fail (no user namespaces in a container). Where it
cannot, Bash says so in its prompt and its results and asks for every command.

Settings (``sandbox`` in the user/project/local settings files, later wins)::

    {"sandbox": {"enabled": true, "allowNetwork": false, "allowUnixSockets": false,
                 "writePaths": ["~/.cache"]}}

and the environment: ``CODEV_SANDBOX=0`` turns the sandbox off (commands are
then judged by the permission rules alone), ``CODEV_SANDBOX_NETWORK=1`` allows
the network, ``CODEV_BWRAP`` names the bwrap binary.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from functools import lru_cache
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
    ".git/commondir",
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
# Files of the repository's own .git folder that make git read its configuration from
# elsewhere (`commondir`: the folder whose `config` git then uses; only a linked
# worktree's git folder has one, never a workspace's own .git folder). A mount cannot
# keep a missing file from being created (mounting on it would create it): one that
# appears is removed when a sandboxed command ends and before the next one starts.
NEVER_CREATED_IN_GIT = ("commondir",)
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
    # Host Unix sockets (docker.sock, D-Bus, agents) reachable: no seccomp filter.
    allow_unix_sockets: bool = False


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether bwrap can confine commands here, and if not, why."""

    available: bool
    reason: str = ""
    bwrap: str | None = None
    # The seccomp filter that keeps host Unix sockets out loads here.
    seccomp: bool = False
    seccomp_reason: str = ""


# --------------------------------------------------------------------------- seccomp

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR, _ARCH, _ARG0 = 0, 4, 16  # args[0]'s low 32 bits on a little-endian machine
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_AF_UNIX = 1
_IO_URING_SETUP = 425  # the same number on every architecture since Linux 5.1
_X32_BIT = 0x40000000
# machine -> ((native audit arch, socket), (compat audit arch, socket, socketcall or None))
_ARCHES: dict[str, tuple[tuple[int, int], tuple[int, int, int | None]]] = {
    "x86_64": ((0xC000003E, 41), (0x40000003, 359, 102)),
    "aarch64": ((0xC00000B7, 198), (0x40000028, 281, None)),
}


def _assemble(program: list[tuple]) -> bytes:
    """Classic BPF from ``("ld", offset)``, ``("jeq"|"jset", k, then, else)``, ``("ret",
    k)`` and ``("label", name)``; jump targets are label names (forward only)."""
    labels: dict[str, int] = {}
    index = 0
    for op in program:
        if op[0] == "label":
            labels[op[1]] = index
        else:
            index += 1
    out = bytearray()
    index = 0
    for op in program:
        kind = op[0]
        if kind == "label":
            continue
        if kind == "ld":
            out += struct.pack("=HBBI", _LD_W_ABS, 0, 0, op[1])
        elif kind == "ret":
            out += struct.pack("=HBBI", _RET_K, 0, 0, op[1])
        else:
            code = _JEQ_K if kind == "jeq" else _JSET_K
            jt, jf = (labels[op[2]] - index - 1, labels[op[3]] - index - 1)
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError("a BPF jump out of range")
            out += struct.pack("=HBBI", code, jt, jf, op[1])
        index += 1
    return bytes(out)


@lru_cache(maxsize=1)
def seccomp_program() -> bytes | None:
    """The filter (a BPF program for ``bwrap --seccomp``) that makes ``socket(AF_UNIX,
    ...)`` and ``io_uring_setup`` fail with EPERM and allows every other call; None
    where this machine's architecture is not one it is written for."""
    arches = _ARCHES.get(platform.machine())
    if arches is None or sys.byteorder != "little":
        return None
    (native, socket_nr), (compat, compat_socket, socketcall) = arches
    program: list[tuple] = [
        ("ld", _ARCH),
        ("jeq", native, "native", "other"),
        ("label", "other"),
        ("jeq", compat, "compat", "deny"),
        ("label", "native"),
        ("ld", _NR),
        ("jset", _X32_BIT, "deny", "native_nr"),  # the x32 ABI: not used, not allowed
        ("label", "native_nr"),
        ("jeq", socket_nr, "family", "native_uring"),
        ("label", "native_uring"),
        ("jeq", _IO_URING_SETUP, "deny", "allow"),
        ("label", "compat"),
        ("ld", _NR),
    ]
    if socketcall is not None:
        # 32-bit x86 reaches every socket call through socketcall(): none for it.
        program += [("jeq", socketcall, "deny", "compat_socket"), ("label", "compat_socket")]
    program += [
        ("jeq", compat_socket, "family", "compat_uring"),
        ("label", "compat_uring"),
        ("jeq", _IO_URING_SETUP, "deny", "allow"),
        ("label", "family"),
        ("ld", _ARG0),
        ("jeq", _AF_UNIX, "deny", "allow"),
        ("label", "allow"),
        ("ret", _RET_ALLOW),
        ("label", "deny"),
        ("ret", _RET_EPERM),
    ]
    return _assemble(program)


def _program_fd(program: bytes) -> int:
    """A pipe's read end holding ``program`` (bwrap reads it to the end, then closes it).
    Not inheritable: only ``pass_fds`` hands it to bwrap."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end


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


def _probe_options(bwrap: str) -> list[str]:
    """bwrap and the confinement both probes use (the real sandbox adds the binds)."""
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
    ]  # fmt: skip


def _run_probe(bwrap: str) -> SandboxStatus:
    argv = [*_probe_options(bwrap), "--tmpfs", "/tmp", "--", "/bin/sh", "-c", "exit 0"]
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
    seccomp, why = _probe_seccomp(bwrap)
    return SandboxStatus(True, "", bwrap, seccomp, why)


def _probe_seccomp(bwrap: str) -> tuple[bool, str]:
    """Whether bwrap loads the filter here and it does what it is for: a Unix socket
    cannot be made, a pair of them can."""
    program = seccomp_program()
    if program is None:
        return False, f"no seccomp filter is written for this machine ({platform.machine()})"
    python = sys.executable
    check = (
        "import socket\n"
        "socket.socketpair()\n"
        "try:\n    socket.socket(socket.AF_UNIX)\nexcept PermissionError:\n    raise SystemExit(0)\n"
        "raise SystemExit(3)\n"
    )
    fd = _program_fd(program)
    # No private /tmp here: the server's own Python may live under /tmp (a venv in a
    # fresh clone there), and the filter is what is tried, not the mounts.
    probe = [*_probe_options(bwrap), "--seccomp", str(fd), "--", python, "-c", check]
    try:
        proc = subprocess.run(probe, capture_output=True, timeout=15, check=False, pass_fds=(fd,))
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"the seccomp filter could not be tried ({exc})"
    finally:
        os.close(fd)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {proc.returncode}"
        return False, f"the seccomp filter does not load or work here ({detail})"
    return True, ""


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
                elif grant.canonical.endswith('"allowUnixSockets=true"]'):
                    section.pop("allowUnixSockets", None)
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
    allow_unix_sockets = merged.get("allowUnixSockets", False) is True
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
    return SandboxConfig(
        enabled, allow_network, tuple(write_paths), disabled_by, allow_unix_sockets
    )


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
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line that confines ``command_argv``.

    Order matters: later mounts cover earlier ones. The private tmp is mounted
    on /tmp before the workspace, so a workspace under /tmp stays visible.
    ``seccomp_fd`` holds the filter (:func:`seccomp_program`), passed to bwrap.
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
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
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

    @property
    def blocks_unix_sockets(self) -> bool:
        return self.active and self.status.seccomp and not self.config.allow_unix_sockets

    def wrap(self, command_argv: list[str], *, session: Session, cwd: Path) -> SandboxedCommand:
        """The confined command line, and the descriptors to hand it (``pass_fds``).

        Files a previous command (a background one) left in ``.git`` that it must not
        have created are removed first (:data:`NEVER_CREATED_IN_GIT`)."""
        bwrap = self.status.bwrap
        assert bwrap is not None, "wrap() needs an available sandbox"
        removed = self.remove_created_git_files(set())  # left by a background command
        program = seccomp_program() if self.blocks_unix_sockets else None
        fd = _program_fd(program) if program is not None else None
        try:
            argv = build_bwrap_argv(
                bwrap,
                command_argv,
                workspace=self.root,
                private_tmp=self.private_tmp(session),
                cwd=cwd,
                allow_network=self.config.allow_network,
                write_paths=self.config.write_paths,
                seccomp_fd=fd,
            )
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        return SandboxedCommand(
            argv, (fd,) if fd is not None else (), self, self.existing_git_files(), removed
        )

    def existing_git_files(self) -> set[str]:
        git = self.root / ".git"
        return {name for name in NEVER_CREATED_IN_GIT if os.path.lexists(git / name)}

    def remove_created_git_files(self, before: set[str]) -> list[str]:
        """Remove the :data:`NEVER_CREATED_IN_GIT` files of the workspace's own ``.git``
        that were not there ``before``; what was removed (paths, for the result)."""
        git = self.root / ".git"
        if not git.is_dir() or git.is_symlink():
            return []
        removed: list[str] = []
        for name in NEVER_CREATED_IN_GIT:
            path = git / name
            if name in before or not os.path.lexists(path):
                continue
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except OSError:
                continue
            removed.append(f".git/{name}")
        return removed

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


@dataclass
class SandboxedCommand:
    """A command line confined by bwrap, with the descriptors it needs (the seccomp
    filter). Close the descriptors once the process started; call :meth:`finish`
    when it ended."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    sandbox: Sandbox
    git_files_before: set[str] = field(default_factory=set)
    removed_before: list[str] = field(default_factory=list)

    def close_fds(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.pass_fds = ()

    def finish(self) -> list[str]:
        """Notes for the result: files in ``.git`` a command created that make git read
        its configuration elsewhere, and were removed."""
        self.close_fds()
        removed = self.removed_before + self.sandbox.remove_created_git_files(self.git_files_before)
        self.removed_before = []
        return _removed_note(removed)

    def finish_before(self) -> list[str]:
        """For a command left running (background): what was removed before it started."""
        removed, self.removed_before = self.removed_before, []
        return _removed_note(removed)


def _removed_note(removed: list[str]) -> list[str]:
    if not removed:
        return []
    return [
        f"(The sandbox removed {', '.join(removed)}: a command created it, and git would "
        "read the repository's configuration through it, outside the sandbox too.)"
    ]


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
