"""MCP configuration: .mcp.json and user settings, ${VAR} expansion, bad entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codev_ls.mcp.config import (
    BrokenServer,
    HttpServer,
    MissingVariable,
    StdioServer,
    expand_vars,
    load_mcp_config,
)


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def by_name(config) -> dict:
    return {s.name: s for s in config.servers}


def test_expand_vars_plain_default_and_missing() -> None:
    env = {"HOST": "example.org", "EMPTY": ""}
    assert expand_vars("https://${HOST}/x", env) == "https://example.org/x"
    assert expand_vars("${NOPE:-fallback}", env) == "fallback"
    assert expand_vars("${EMPTY:-fallback}", env) == "fallback"
    assert expand_vars("${EMPTY}", env) == ""
    assert expand_vars("no vars, $HOST stays", env) == "no vars, $HOST stays"
    with pytest.raises(MissingVariable) as exc:
        expand_vars("Bearer ${TOKEN}", env)
    assert exc.value.name == "TOKEN"


def test_project_stdio_and_http_servers_with_expansion(workspace: Path) -> None:
    write(
        workspace / ".mcp.json",
        {
            "mcpServers": {
                "files": {
                    "command": "${TOOLS}/server",
                    "args": ["--root", "${HOME_DIR}", "--fixed"],
                    "env": {"API_KEY": "${KEY}", "MODE": "${MODE:-fast}"},
                    "cwd": "sub",
                    "timeout": 5000,
                    "startupTimeout": 2500,
                },
                "web": {
                    "type": "http",
                    "url": "http://${HOST}:8080/mcp",
                    "headers": {"Authorization": "Bearer ${KEY}"},
                },
            }
        },
    )
    env = {"TOOLS": "/opt/tools", "HOME_DIR": "/home/me", "KEY": "k-123", "HOST": "127.0.0.1"}
    servers = by_name(load_mcp_config(workspace, env))
    files = servers["files"]
    assert isinstance(files, StdioServer)
    assert files.command == "/opt/tools/server"
    assert files.args == ("--root", "/home/me", "--fixed")
    assert dict(files.env) == {"API_KEY": "k-123", "MODE": "fast"}
    assert files.cwd == workspace / "sub"
    assert files.timeout_s == 5.0 and files.startup_timeout_s == 2.5
    assert files.origin == "project"
    web = servers["web"]
    assert isinstance(web, HttpServer)
    assert web.url == "http://127.0.0.1:8080/mcp"
    assert dict(web.headers) == {"Authorization": "Bearer k-123"}


def test_user_settings_servers_and_project_wins(workspace: Path, _isolated_config: Path) -> None:
    write(
        _isolated_config / "settings.json",
        {
            "permissions": {"allow": ["Read"]},
            "mcpServers": {
                "shared": {"command": "user-version"},
                "mine": {"type": "http", "url": "https://mcp.example.com/mcp"},
            },
        },
    )
    write(workspace / ".mcp.json", {"mcpServers": {"shared": {"command": "project-version"}}})
    config = load_mcp_config(workspace, {})
    servers = by_name(config)
    assert set(servers) == {"shared", "mine"}
    assert servers["shared"].command == "project-version"
    assert servers["shared"].origin == "project"
    assert servers["mine"].origin == "user"
    assert config.problems == []


def test_missing_variable_makes_that_server_broken_with_a_reason(workspace: Path) -> None:
    write(
        workspace / ".mcp.json",
        {
            "mcpServers": {
                "needs-token": {
                    "type": "http",
                    "url": "https://x/mcp",
                    "headers": {"Authorization": "Bearer ${GH_TOKEN}"},
                },
                "fine": {"command": "ok"},
            }
        },
    )
    servers = by_name(load_mcp_config(workspace, {}))
    broken = servers["needs-token"]
    assert isinstance(broken, BrokenServer)
    assert "GH_TOKEN" in broken.reason and "not set" in broken.reason
    assert isinstance(servers["fine"], StdioServer)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"command": ""}, ['"command"']),
        ({"command": "x", "args": "not-a-list"}, ['"args"', "list of strings"]),
        ({"command": "x", "env": {"A": 1}}, ['"env"']),
        ({"type": "http"}, ['"url"']),
        ({"type": "http", "url": "ftp://x"}, ["http://"]),
        ({"type": "sse", "url": "http://x/sse"}, ["SSE", '"type": "http"']),
        ({"type": "carrier-pigeon"}, ["unknown", "carrier-pigeon"]),
        ({"args": ["x"]}, ['"command"']),
        ({"command": "x", "timeout": -1}, ['"timeout"', "milliseconds"]),
        ("just a string", ["JSON object"]),
    ],
)
def test_bad_entries_are_broken_servers_naming_the_problem(
    workspace: Path, entry: object, words: list[str]
) -> None:
    write(workspace / ".mcp.json", {"mcpServers": {"bad": entry}})
    (server,) = load_mcp_config(workspace, {}).servers
    assert isinstance(server, BrokenServer)
    for word in words:
        assert word in server.reason


def test_disabled_servers_are_left_out(workspace: Path) -> None:
    write(
        workspace / ".mcp.json",
        {"mcpServers": {"off": {"command": "x", "disabled": True}, "on": {"command": "y"}}},
    )
    assert [s.name for s in load_mcp_config(workspace, {}).servers] == ["on"]


def test_malformed_file_is_a_problem_and_the_other_file_still_counts(
    workspace: Path, _isolated_config: Path
) -> None:
    write(workspace / ".mcp.json", '{"mcpServers": {"a": {"command": "x"},,}}')
    write(_isolated_config / "settings.json", {"mcpServers": {"u": {"command": "y"}}})
    config = load_mcp_config(workspace, {})
    assert [s.name for s in config.servers] == ["u"]
    (problem,) = config.problems
    assert problem.path == workspace / ".mcp.json"
    assert "not valid JSON" in problem.message and "line 1" in problem.message


def test_wrong_shapes_are_problems(workspace: Path) -> None:
    write(workspace / ".mcp.json", {"mcpServers": ["a", "b"]})
    config = load_mcp_config(workspace, {})
    assert config.servers == []
    assert "must be an object" in config.problems[0].message
    write(workspace / ".mcp.json", "[1, 2]")
    assert "JSON object" in load_mcp_config(workspace, {}).problems[0].message


def test_no_files_no_servers(workspace: Path) -> None:
    config = load_mcp_config(workspace, {})
    assert config.servers == [] and config.problems == []
