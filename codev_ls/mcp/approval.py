"""Approval of a project's MCP servers: a ``.mcp.json`` runs nothing until the user says so.

A project's ``.mcp.json`` names commands that would run on the user's machine,
with the user's rights, as soon as the workspace opens — before the model or
anyone has done anything. Opening a repository must not run its code, so a
server from ``.mcp.json`` starts only when it is approved; servers from the
user's own settings (``$CODEV_CONFIG_DIR/settings.json``) are the user's and
start without asking.

Where approvals come from (settings keys, as Claude Code names them)::

    user settings   enableAllProjectMcpServers: true      every project server, everywhere
                    enabledMcpjsonServers: ["name", ...]   that name, in every project
                    disabledMcpjsonServers: ["name", ...]  never start (and never ask)
    local settings  enabledMcpjsonServers: [{"name": ..., "hash": ...}]   ("Always allow")
    <root>/.codev/settings.local.json
                    disabledMcpjsonServers: ["name", ...]                  ("Reject")
    project settings disabledMcpjsonServers only

An approval in the *local* file is bound to the server's definition (its
command, args, env, cwd, url and headers as written, see
:func:`~codev_ls.mcp.config.definition_of`), to the workspace folder and to
the user: ``hash`` is an HMAC-SHA256 of them under a random key kept in the
user's config folder (``mcp-approval.key``), cut to 16 hex digits. So:

- a project that changes an approved server's command (or args, env, url...)
  is asked about again;
- a repository cannot approve its own servers by shipping a
  ``.codev/settings.local.json`` (or ``.codev/settings.json``): it cannot
  compute the hash without the user's key, and ``enableAllProjectMcpServers``
  or plain names in a file inside the project are ignored (with a warning);
- an approval copied from another project (or another user) does not count.

"Reject" is remembered by name (``disabledMcpjsonServers``): a rejected server
stays out, whatever its definition becomes, until the name is removed there.
A dismissed question (or one that could not be asked) remembers nothing: it is
asked again the next time the workspace opens.

What is not covered: a server whose command is a script inside the project
(``./run.sh``, ``node server.js``) can change what it does without its
definition changing; the approval is of the command line, not of the files it
runs. Neither bypassPermissions nor ``--yes`` approves servers: they are about
the model's tool uses, and starting a project's server is not one (the
question is a :class:`PermissionRequest` of ``kind="mcp_server"``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codev_ls.bridge import PermissionRequest
from codev_ls.engine.config import config_dir
from codev_ls.mcp.config import PROJECT_FILE, HttpServer, StdioServer
from codev_ls.mcp.tool import normalize_server_name

log = logging.getLogger(__name__)

ENABLE_ALL = "enableAllProjectMcpServers"
ENABLED = "enabledMcpjsonServers"
DISABLED = "disabledMcpjsonServers"
KEY_FILE = "mcp-approval.key"
HASH_CHARS = 16
_KEY_HEX = 64

VerdictState = Literal["approved", "disabled", "ask"]
ProjectServer = StdioServer | HttpServer


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a project server may start without asking, and why."""

    state: VerdictState
    reason: str


@dataclass(slots=True)
class Approvals:
    """The approval keys of the settings files, as far as each file may set them."""

    # Where enableAllProjectMcpServers: true was set (the user file), else None.
    enable_all: Path | None = None
    # Names approved whatever their definition (user file only) -> the file.
    names: dict[str, Path] = field(default_factory=dict)
    # Definition-bound approvals: name -> [(hash, file)].
    hashes: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)
    # Rejected names -> the file that says so.
    disabled: dict[str, Path] = field(default_factory=dict)
    # Keys that were ignored, for the user (shown once).
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the key


def key_path() -> Path:
    return config_dir() / KEY_FILE


def load_key(*, create: bool = False) -> bytes | None:
    """The user's approval key; made (0600, atomically) when ``create`` and missing.

    None when there is none (and none may be made) or it cannot be read: then
    no saved approval counts, and the user is asked.
    """
    path = key_path()
    try:
        return _parse_key(path.read_text(encoding="ascii"))
    except FileNotFoundError:
        if not create:
            return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.warning("the MCP approval key %s cannot be used: %s", path, exc)
        return None
    try:
        _create_key(path)
        return _parse_key(path.read_text(encoding="ascii"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.warning("the MCP approval key %s cannot be made: %s", path, exc)
        return None


def _parse_key(text: str) -> bytes:
    text = text.strip()
    if len(text) != _KEY_HEX:
        raise ValueError(f"expected {_KEY_HEX} hex digits")
    return bytes.fromhex(text)


def _create_key(path: Path) -> None:
    """Write a new key beside ``path`` and link it into place (the first writer wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(_KEY_HEX // 2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails when another server made the key first: keep theirs
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def definition_hash(key: bytes, root: Path, name: str, definition: Mapping[str, Any]) -> str:
    """The approval hash of a server: its definition, name and workspace, under the key."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    message = "\0".join(["codev-mcp-approval/1", str(root), name, canonical]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:HASH_CHARS]


# --------------------------------------------------------------------------- reading settings


def read_approvals(files: Iterable[tuple[str, Path, Any]]) -> Approvals:
    """The approvals in settings files given as ``(origin, path, data)``, in merge order.

    ``origin`` is ``user``, ``project`` or ``local``; ``data`` is the file's
    JSON (None when missing or unusable). A key of the wrong shape is ignored
    with a warning (which leaves the user being asked: the safe side).
    """
    out = Approvals()
    for origin, path, data in files:
        if not isinstance(data, dict):
            continue
        disabled = data.get(DISABLED)
        if disabled is not None:
            if _is_str_list(disabled):
                for name in disabled:
                    out.disabled.setdefault(name, path)
            else:
                out.warnings.append(f"{path}: {DISABLED} must be a list of server names; ignored")
        enable_all = data.get(ENABLE_ALL)
        enabled = data.get(ENABLED)
        if origin == "project":
            if enable_all is not None or enabled is not None:
                out.warnings.append(
                    f"{path}: {ENABLE_ALL} and {ENABLED} are ignored in a project's settings "
                    "(a project cannot approve its own MCP servers); answer the question, or "
                    "set them in your user settings"
                )
            continue
        if enable_all is not None:
            if not isinstance(enable_all, bool):
                out.warnings.append(f"{path}: {ENABLE_ALL} must be true or false; ignored")
            elif origin == "local" and enable_all:
                out.warnings.append(
                    f"{path}: {ENABLE_ALL} is ignored here (this file is inside the project, "
                    "which could have come with it); set it in your user settings "
                    f"({config_dir() / 'settings.json'}) or answer the question"
                )
            elif enable_all:
                out.enable_all = path
        if enabled is None:
            continue
        if not isinstance(enabled, list):
            out.warnings.append(f"{path}: {ENABLED} must be a list; ignored")
            continue
        plain: list[str] = []
        for entry in enabled:
            if isinstance(entry, str):
                if origin == "user":
                    out.names.setdefault(entry, path)
                else:
                    plain.append(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
                digest = entry.get("hash")
                if isinstance(digest, str) and digest:
                    out.hashes.setdefault(entry["name"], []).append((digest, path))
                elif origin == "user":
                    out.names.setdefault(entry["name"], path)
                else:
                    plain.append(entry["name"])
            else:
                out.warnings.append(
                    f'{path}: an entry of {ENABLED} is neither a name nor {{"name", "hash"}}; '
                    "ignored"
                )
        if plain:
            out.warnings.append(
                f"{path}: {ENABLED} entries without their approval hash are ignored here "
                f"({', '.join(plain)}): approvals in a file inside the project count only when "
                "Codev saved them (answer the question with Always allow), or list the names "
                "in your user settings"
            )
    return out


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def judge(server: ProjectServer, approvals: Approvals, key: bytes | None, root: Path) -> Verdict:
    """Whether the project server ``server`` may start without asking."""
    name = server.name
    rejected = approvals.disabled.get(name)
    if rejected is not None:
        return Verdict(
            "disabled",
            f"rejected: listed in {DISABLED} in {rejected} (remove it there to be asked again)",
        )
    if approvals.enable_all is not None:
        return Verdict("approved", f"{ENABLE_ALL} in {approvals.enable_all}")
    where = approvals.names.get(name)
    if where is not None:
        return Verdict("approved", f"listed in {ENABLED} in {where}")
    saved = approvals.hashes.get(name, [])
    if saved and key is not None:
        digest = definition_hash(key, root, name, server.definition)
        for candidate, path in saved:
            if hmac.compare_digest(candidate, digest):
                return Verdict("approved", f"approved by you (saved in {path})")
    if saved:
        return Verdict(
            "ask",
            "its definition changed since you approved it (or the approval was not saved "
            "by you, here)",
        )
    return Verdict("ask", "not approved yet")


# --------------------------------------------------------------------------- the question


def approval_request(server: ProjectServer, verdict: Verdict) -> PermissionRequest:
    """The question for the user: the server's name and exactly what starting it does."""
    from codev_ls.engine.secrets import redact

    name = server.name
    source = PROJECT_FILE
    if isinstance(server, StdioServer):
        lines = [f"command: {redact(shlex.join([server.command, *server.args]))}"]
        if server.cwd is not None:
            lines.append(f"cwd: {server.cwd}")
        env = server.definition.get("env")
        if isinstance(env, dict):
            lines += [redact(f"env: {k}={v}") for k, v in env.items()]
        verb = "start"
    else:
        lines = [f"url: {redact(server.url)}"]
        headers = server.definition.get("headers")
        if isinstance(headers, dict):
            lines += [redact(f"header: {k}: {v}") for k, v in headers.items()]
        verb = "connect to"
    reason = (
        f"{verdict.reason}. A project's MCP servers run with your rights; allow only what you trust"
    )
    if isinstance(server, HttpServer):
        reason = (
            f"{verdict.reason}. Connecting sends these headers (your variables filled in) "
            "to that URL; allow only what you trust"
        )
    return PermissionRequest(
        tool_use_id=f"mcp-server:{name}",
        tool_name=f"mcp__{normalize_server_name(name)}",
        message=f'{verb.capitalize()} the MCP server "{name}" from this project\'s {source}?',
        headline=f'Codev wants to {verb} the MCP server "{name}" from this project\'s {source}.',
        detail="\n".join(lines),
        reason=reason,
        always_rule=f"{name} (this definition)",
        kind="mcp_server",
    )


# --------------------------------------------------------------------------- saving answers


def save_approval(settings: Any, root: Path, server: ProjectServer) -> str | None:
    """ "Always allow": the definition-bound approval, in settings.local.json; error or None."""
    key = load_key(create=True)
    if key is None:
        return (
            f"the approval of MCP server {server.name} could not be saved: the key file "
            f"{key_path()} cannot be made or read (delete a damaged one to make a new one); "
            "it is allowed this time only"
        )
    digest = definition_hash(key, root, server.name, server.definition)
    name = server.name

    def change(data: dict[str, Any]) -> str | None:
        enabled = data.setdefault(ENABLED, [])
        if not isinstance(enabled, list):
            return f"{settings.local_path}: {ENABLED} is not a list, so the approval was not saved"
        enabled[:] = [e for e in enabled if not (isinstance(e, dict) and e.get("name") == name)]
        enabled.append({"name": name, "hash": digest})
        disabled = data.get(DISABLED)
        if isinstance(disabled, list):
            disabled[:] = [d for d in disabled if d != name]
        return None

    return settings.update_local(
        change, what=f"the approval of MCP server {name}", kept="kept for this time only"
    )


def save_rejection(settings: Any, server: ProjectServer) -> str | None:
    """ "Reject": the name in ``disabledMcpjsonServers`` of settings.local.json; error or None."""
    name = server.name

    def change(data: dict[str, Any]) -> str | None:
        disabled = data.setdefault(DISABLED, [])
        if not isinstance(disabled, list):
            return (
                f"{settings.local_path}: {DISABLED} is not a list, so the rejection was not saved"
            )
        if name not in disabled:
            disabled.append(name)
        enabled = data.get(ENABLED)
        if isinstance(enabled, list):
            enabled[:] = [e for e in enabled if not (isinstance(e, dict) and e.get("name") == name)]
        return None

    return settings.update_local(
        change, what=f"the rejection of MCP server {name}", kept="kept for this time only"
    )
