"""Which MCP servers to start: ``<root>/.mcp.json`` and ``mcpServers`` in user settings.

Both files hold ``{"mcpServers": {"NAME": {...}}}``. A stdio server is
``{"command": "...", "args": [...], "env": {...}, "cwd": "..."}``; a streamable
HTTP server is ``{"type": "http", "url": "...", "headers": {...}}``. Optional
on both: ``"timeout"`` (ms a tool call may take), ``"startupTimeout"`` (ms to
connect and list tools) and ``"disabled": true``.

``${VAR}`` and ``${VAR:-default}`` are expanded from the environment in
``command``, ``args``, ``env``, ``cwd``, ``url`` and ``headers``, so secrets stay
out of files that are committed. A variable that is not set and has no default
makes that server fail with a reason naming it (a server started with a
literal ``${TOKEN}`` would fail later and less clearly).

The project file wins over the user settings for a server of the same name.
A file that is not valid JSON is reported and ignored as a whole; one bad
server entry only takes that server out (it shows as failed, with the reason).

Why not the permissions session's settings loader: MCP servers need only this
one key, and reading it here keeps the server's start independent of how the
other settings are merged.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from codev_ls.engine.config import config_dir

Origin = Literal["project", "user"]

PROJECT_FILE = ".mcp.json"
USER_FILE = "settings.json"

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class StdioServer:
    """A server run as a subprocess, speaking MCP over its stdin/stdout."""

    name: str
    origin: Origin
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float | None = None
    startup_timeout_s: float | None = None
    # The entry as written (``${VAR}`` unexpanded): what an approval is bound to.
    definition: Mapping[str, Any] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@dataclass(frozen=True, slots=True)
class HttpServer:
    """A server reached over MCP's streamable HTTP transport."""

    name: str
    origin: Origin
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float | None = None
    startup_timeout_s: float | None = None
    # The entry as written (``${VAR}`` unexpanded): what an approval is bound to.
    definition: Mapping[str, Any] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return "http"

    def describe(self) -> str:
        return self.url


@dataclass(frozen=True, slots=True)
class BrokenServer:
    """A server entry that cannot be started as written (shown as failed, with the reason)."""

    name: str
    origin: Origin
    reason: str
    transport: str = "unknown"
    timeout_s: float | None = None
    startup_timeout_s: float | None = None

    def describe(self) -> str:
        return ""


ServerConfig = StdioServer | HttpServer | BrokenServer


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A whole file that could not be used (bad JSON, wrong shape)."""

    path: Path
    message: str


@dataclass(slots=True)
class McpConfig:
    servers: list[ServerConfig] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)


class MissingVariable(ValueError):
    """A ``${VAR}`` without default whose variable is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def expand_vars(text: str, environ: Mapping[str, str]) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; raise :class:`MissingVariable`."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MissingVariable(name)
            return default
        return value

    return _VAR_RE.sub(sub, text)


def load_mcp_config(root: Path, environ: Mapping[str, str] | None = None) -> McpConfig:
    """The servers of the user settings and the project's ``.mcp.json``, project winning."""
    env = os.environ if environ is None else environ
    result = McpConfig()
    by_name: dict[str, ServerConfig] = {}
    for origin, path in (
        ("user", config_dir() / USER_FILE),
        ("project", Path(root) / PROJECT_FILE),
    ):
        entries = _read_servers(path, result.problems)
        for name, raw in entries.items():
            server = parse_server(name, raw, origin, env, root)  # type: ignore[arg-type]
            if server is not None:
                by_name[name] = server
    result.servers = list(by_name.values())
    return result


def _read_servers(path: Path, problems: list[ConfigProblem]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(ConfigProblem(path, f"cannot be read: {exc}"))
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(
            ConfigProblem(
                path, f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            )
        )
        return {}
    if not isinstance(data, dict):
        problems.append(ConfigProblem(path, "must hold a JSON object"))
        return {}
    servers = data.get("mcpServers")
    if servers is None:
        return {}
    if not isinstance(servers, dict):
        problems.append(ConfigProblem(path, '"mcpServers" must be an object of servers by name'))
        return {}
    return servers


def parse_server(
    name: str, raw: Any, origin: Origin, environ: Mapping[str, str], root: Path
) -> ServerConfig | None:
    """One server entry; None when it is disabled."""
    if not isinstance(raw, dict):
        return BrokenServer(name, origin, "its entry must be a JSON object")
    if raw.get("disabled") is True:
        return None
    if not name or not re.fullmatch(r"[A-Za-z0-9_.\- ]{1,64}", name):
        return BrokenServer(
            name, origin, "server names may use letters, digits, '_', '-', '.' (at most 64)"
        )
    kind = raw.get("type", "stdio" if "command" in raw else None)
    try:
        timeout_s = _millis(raw, "timeout")
        startup_s = _millis(raw, "startupTimeout")
    except ValueError as exc:
        return BrokenServer(name, origin, str(exc))
    try:
        if kind == "stdio":
            server: ServerConfig = _stdio(name, raw, origin, environ, root, timeout_s, startup_s)
            return replace(server, definition=definition_of(raw, "stdio"))
        if kind in ("http", "streamable-http", "streamableHttp"):
            server = _http(name, raw, origin, environ, timeout_s, startup_s)
            return replace(server, definition=definition_of(raw, "http"))
    except MissingVariable as exc:
        return BrokenServer(
            name,
            origin,
            f"the environment variable {exc.name} is not set (used as ${{{exc.name}}}; "
            f"write ${{{exc.name}:-default}} for an optional one)",
            transport="http" if kind != "stdio" else "stdio",
        )
    except ValueError as exc:
        return BrokenServer(name, origin, str(exc), transport=str(kind))
    if kind == "sse":
        return BrokenServer(
            name, origin, 'the legacy SSE transport is not supported; use "type": "http"', "sse"
        )
    if kind is None:
        return BrokenServer(
            name, origin, 'needs a "command" (stdio) or "type": "http" with a "url"'
        )
    return BrokenServer(name, origin, f'unknown "type": {kind!r} (use "stdio" or "http")')


# What a server runs or reaches, and with what: the keys an approval covers. Timeouts
# and "disabled" are left out (changing them changes nothing a server can do).
DEFINITION_KEYS = ("command", "args", "env", "cwd", "url", "headers")


def definition_of(raw: Mapping[str, Any], transport: str) -> dict[str, Any]:
    """The entry's security-relevant part, as written (``${VAR}`` unexpanded).

    An approval is bound to this: a project that changes the command, its
    arguments, environment or folder, or the URL and its headers, is asked
    about again.
    """
    out: dict[str, Any] = {"type": transport}
    for key in DEFINITION_KEYS:
        if key in raw:
            out[key] = raw[key]
    return out


def _millis(raw: dict[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f'"{key}" must be a positive number of milliseconds')
    return float(value) / 1000.0


def _strings(raw: dict[str, Any], key: str) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f'"{key}" must be a list of strings')
    return value


def _string_map(raw: dict[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f'"{key}" must be an object of string values')
    return value


def _stdio(
    name: str,
    raw: dict[str, Any],
    origin: Origin,
    environ: Mapping[str, str],
    root: Path,
    timeout_s: float | None,
    startup_s: float | None,
) -> StdioServer:
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError('"command" must be a non-empty string')
    args = [expand_vars(a, environ) for a in _strings(raw, "args")]
    env = {k: expand_vars(v, environ) for k, v in _string_map(raw, "env").items()}
    cwd: Path | None = None
    if raw.get("cwd") is not None:
        if not isinstance(raw["cwd"], str):
            raise ValueError('"cwd" must be a string')
        cwd = Path(expand_vars(raw["cwd"], environ)).expanduser()
        if not cwd.is_absolute():
            cwd = Path(root) / cwd
    return StdioServer(
        name=name,
        origin=origin,
        command=expand_vars(command, environ),
        args=tuple(args),
        env=env,
        cwd=cwd,
        timeout_s=timeout_s,
        startup_timeout_s=startup_s,
    )


def _http(
    name: str,
    raw: dict[str, Any],
    origin: Origin,
    environ: Mapping[str, str],
    timeout_s: float | None,
    startup_s: float | None,
) -> HttpServer:
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ValueError('"url" must be a non-empty string')
    url = expand_vars(url, environ)
    if not re.match(r"^https?://", url):
        raise ValueError(f'"url" must start with http:// or https://, got {url!r}')
    headers = {k: expand_vars(v, environ) for k, v in _string_map(raw, "headers").items()}
    return HttpServer(
        name=name,
        origin=origin,
        url=url,
        headers=headers,
        timeout_s=timeout_s,
        startup_timeout_s=startup_s,
    )
