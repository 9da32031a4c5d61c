"""Approval of a project's MCP servers (``codev_ls.mcp.approval``): real files, real keys.

Settings files and the key are written to the test's workspace and its
``CODEV_CONFIG_DIR`` (``tests/conftest.py``); servers come from a real
``.mcp.json`` read by ``load_mcp_config``. What is checked is what a hostile
repository or a changed definition could do: nothing starts unless the user,
in a place the repository cannot write or forge, said so.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from codev_ls.engine.config import config_dir
from codev_ls.mcp import approval
from codev_ls.mcp.config import StdioServer, load_mcp_config
from codev_ls.permissions.settings import SettingsManager
from tests.mcp_support import write_mcp_json


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "value-of-the-token")


def _probe(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["server.py", "--port", "1"], **extra}


def _server(root: Path, name: str = "probe") -> StdioServer:
    for server in load_mcp_config(root).servers:
        if server.name == name:
            assert isinstance(server, StdioServer), server
            return server
    raise AssertionError(f"no server {name} in {root / '.mcp.json'}")


def _verdict(root: Path, name: str = "probe") -> tuple[approval.Verdict, approval.Approvals]:
    """What the manager decides at start: the settings files as they are now, the user's key."""
    settings = SettingsManager(root)
    approvals = approval.read_approvals((f.origin, f.path, f.data) for f in settings.files)
    return approval.judge(_server(root, name), approvals, approval.load_key(), root), approvals


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def _always_allow(root: Path, name: str = "probe") -> None:
    assert approval.save_approval(SettingsManager(root), root, _server(root, name)) is None


def _local(root: Path) -> dict[str, Any]:
    return json.loads((root / ".codev" / "settings.local.json").read_text())


# --------------------------------------------------------------------------- binding


def test_always_allow_saves_an_approval_bound_to_the_definition(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe(env={"TOKEN": "${TOKEN}"}), "other": _probe()})
    verdict, _ = _verdict(workspace)
    assert verdict.state == "ask" and verdict.reason == "not approved yet"

    _always_allow(workspace)
    saved = _local(workspace)[approval.ENABLED]
    assert [e["name"] for e in saved] == ["probe"]
    assert len(saved[0]["hash"]) == approval.HASH_CHARS
    assert saved[0]["hash"] != "probe" and sys.executable not in saved[0]["hash"]
    verdict, _ = _verdict(workspace)
    assert verdict.state == "approved" and "settings.local.json" in verdict.reason
    # The approval is of that server only.
    assert _verdict(workspace, "other")[0].state == "ask"

    # Saving twice keeps one entry; a timeout change does not change what the server does.
    _always_allow(workspace)
    assert len(_local(workspace)[approval.ENABLED]) == 1
    write_mcp_json(workspace, {"probe": _probe(env={"TOKEN": "${TOKEN}"}, timeout=5000)})
    assert _verdict(workspace)[0].state == "approved"


@pytest.mark.parametrize(
    "changed",
    [
        {"command": "/bin/sh"},
        {"args": ["server.py", "--port", "2"]},
        {"env": {"TOKEN": "${TOKEN}", "LD_PRELOAD": "/tmp/x.so"}},
        {"env": {"TOKEN": "literal"}},
        {"cwd": "/tmp"},
    ],
    ids=["command", "args", "env-added", "env-value", "cwd"],
)
def test_a_changed_definition_is_asked_about_again(
    workspace: Path, changed: dict[str, Any]
) -> None:
    write_mcp_json(workspace, {"probe": _probe(env={"TOKEN": "${TOKEN}"})})
    _always_allow(workspace)
    assert _verdict(workspace)[0].state == "approved"

    write_mcp_json(workspace, {"probe": {**_probe(env={"TOKEN": "${TOKEN}"}), **changed}})
    verdict, _ = _verdict(workspace)
    assert verdict.state == "ask"
    assert "definition changed" in verdict.reason


def test_an_http_server_approval_covers_its_url_and_headers(workspace: Path) -> None:
    entry = {"type": "http", "url": "https://mcp.example/x", "headers": {"A": "${TOKEN:-t}"}}
    write_mcp_json(workspace, {"web": entry})
    server = load_mcp_config(workspace).servers[0]
    assert approval.save_approval(SettingsManager(workspace), workspace, server) is None  # type: ignore[arg-type]

    def verdict_for(entry: dict[str, Any]) -> str:
        write_mcp_json(workspace, {"web": entry})
        server = load_mcp_config(workspace).servers[0]
        settings = SettingsManager(workspace)
        found = approval.read_approvals((f.origin, f.path, f.data) for f in settings.files)
        return approval.judge(server, found, approval.load_key(), workspace).state  # type: ignore[arg-type]

    assert verdict_for(entry) == "approved"
    assert verdict_for({**entry, "url": "https://evil.example/x"}) == "ask"
    assert verdict_for({**entry, "headers": {"A": "${HOME}"}}) == "ask"


def test_an_approval_from_another_workspace_does_not_count(tmp_path: Path) -> None:
    first, second = (tmp_path / "a").resolve(), (tmp_path / "b").resolve()
    for root in (first, second):
        root.mkdir()
        write_mcp_json(root, {"probe": _probe()})
    _always_allow(first)
    # The same definition, the approval file copied: bound to the first workspace only.
    _write(second / ".codev" / "settings.local.json", _local(first))
    assert _verdict(first)[0].state == "approved"
    assert _verdict(second)[0].state == "ask"


# --------------------------------------------------------------------------- what a repository ships


def test_a_repository_cannot_approve_its_own_servers(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    forged = [
        "probe",
        {"name": "probe"},
        {"name": "probe", "hash": "0123456789abcdef"},
        # Computed the right way, but under a key that is not this user's.
        {
            "name": "probe",
            "hash": approval.definition_hash(
                b"k" * 32, workspace, "probe", _server(workspace).definition
            ),
        },
    ]
    shipped = {approval.ENABLE_ALL: True, approval.ENABLED: forged}
    _write(workspace / ".codev" / "settings.local.json", shipped)
    _write(workspace / ".codev" / "settings.json", shipped)

    verdict, approvals = _verdict(workspace)
    assert verdict.state == "ask"
    assert approvals.enable_all is None and approvals.names == {}
    text = "\n".join(approvals.warnings)
    assert "settings.json: enableAllProjectMcpServers and enabledMcpjsonServers are ignored" in text
    assert "settings.local.json: enableAllProjectMcpServers is ignored here" in text
    assert "entries without their approval hash are ignored here (probe, probe)" in text

    # Even when the user has a key (has approved something somewhere), the forgeries fail.
    approval.load_key(create=True)
    verdict, _ = _verdict(workspace)
    assert verdict.state == "ask" and "definition changed" in verdict.reason


def test_user_settings_approve_by_name_or_all(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe(), "other": _probe()})
    user = config_dir() / "settings.json"
    _write(user, {approval.ENABLED: ["probe", {"name": "other-name"}]})
    verdict, _ = _verdict(workspace)
    assert verdict.state == "approved" and str(user) in verdict.reason
    assert _verdict(workspace, "other")[0].state == "ask"

    _write(user, {approval.ENABLE_ALL: True})
    assert _verdict(workspace, "other")[0].state == "approved"
    _write(user, {approval.ENABLE_ALL: False})
    assert _verdict(workspace, "other")[0].state == "ask"


@pytest.mark.parametrize("where", ["local", "project", "user"])
def test_disabled_wins_over_every_approval(workspace: Path, where: str) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    _always_allow(workspace)
    user = config_dir() / "settings.json"
    _write(user, {approval.ENABLE_ALL: True, approval.ENABLED: ["probe"]})
    path = {
        "local": workspace / ".codev" / "settings.local.json",
        "project": workspace / ".codev" / "settings.json",
        "user": user,
    }[where]
    data = json.loads(path.read_text()) if path.exists() else {}
    data[approval.DISABLED] = ["probe"]
    _write(path, data)

    verdict, _ = _verdict(workspace)
    assert verdict.state == "disabled"
    assert str(path) in verdict.reason and approval.DISABLED in verdict.reason


def test_keys_of_the_wrong_shape_are_reported_and_leave_the_question(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    _write(
        config_dir() / "settings.json",
        {approval.ENABLE_ALL: "yes", approval.ENABLED: "probe", approval.DISABLED: "other"},
    )
    verdict, approvals = _verdict(workspace)
    assert verdict.state == "ask"
    text = "\n".join(approvals.warnings)
    assert "enableAllProjectMcpServers must be true or false" in text
    assert "enabledMcpjsonServers must be a list" in text
    assert "disabledMcpjsonServers must be a list of server names" in text


# --------------------------------------------------------------------------- the key


def test_the_key_is_made_once_private_and_kept(workspace: Path) -> None:
    assert approval.load_key() is None  # none made just by reading
    assert not approval.key_path().exists()
    key = approval.load_key(create=True)
    assert key is not None and len(key) == 32
    mode = stat.S_IMODE(approval.key_path().stat().st_mode)
    assert mode == 0o600
    assert approval.load_key(create=True) == key  # not replaced
    assert [p.name for p in approval.key_path().parent.iterdir()] == [approval.KEY_FILE]


@pytest.mark.parametrize("damage", ["garbage", "short", "binary", "unreadable", "folder"])
def test_a_damaged_key_means_asking_and_is_never_overwritten(workspace: Path, damage: str) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    _always_allow(workspace)
    assert _verdict(workspace)[0].state == "approved"

    path = approval.key_path()
    if damage == "garbage":
        path.write_text("z" * 64 + "\n")
    elif damage == "short":
        path.write_text("ab12\n")
    elif damage == "binary":
        path.write_bytes(b"\xff\xfe" * 40)
    elif damage == "unreadable":
        if os.geteuid() == 0:
            # root reads a 000 file; a folder in its place is unreadable for everyone.
            path.unlink()
            path.mkdir()
        else:
            path.chmod(0)
    else:
        path.unlink()
        path.mkdir()
    before = path.read_bytes() if path.is_file() and os.access(path, os.R_OK) else None

    verdict, _ = _verdict(workspace)
    assert verdict.state == "ask"
    # "Always allow" cannot save against a damaged key: it says so, and leaves the file alone.
    error = approval.save_approval(SettingsManager(workspace), workspace, _server(workspace))
    assert error is not None and str(path) in error and "allowed this time only" in error
    if before is not None:
        assert path.read_bytes() == before


def test_a_lost_key_invalidates_the_saved_approvals(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    _always_allow(workspace)
    approval.key_path().unlink()
    assert _verdict(workspace)[0].state == "ask"
    approval.load_key(create=True)  # a new key: the old hashes do not match it
    verdict, _ = _verdict(workspace)
    assert verdict.state == "ask" and "definition changed" in verdict.reason
    _always_allow(workspace)
    assert _verdict(workspace)[0].state == "approved"


# --------------------------------------------------------------------------- saving answers


def test_reject_and_always_allow_replace_each_other(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    _write(
        workspace / ".codev" / "settings.local.json",
        {"permissions": {"allow": ["Bash(ls)"]}, "other": 1},
    )
    assert approval.save_rejection(SettingsManager(workspace), _server(workspace)) is None
    data = _local(workspace)
    assert data[approval.DISABLED] == ["probe"]
    assert data["permissions"] == {"allow": ["Bash(ls)"]} and data["other"] == 1
    assert _verdict(workspace)[0].state == "disabled"

    _always_allow(workspace)
    data = _local(workspace)
    assert data[approval.DISABLED] == [] and [e["name"] for e in data[approval.ENABLED]] == [
        "probe"
    ]
    assert _verdict(workspace)[0].state == "approved"

    assert approval.save_rejection(SettingsManager(workspace), _server(workspace)) is None
    data = _local(workspace)
    assert data[approval.ENABLED] == [] and data[approval.DISABLED] == ["probe"]


def test_a_local_file_that_is_not_json_is_never_overwritten(workspace: Path) -> None:
    write_mcp_json(workspace, {"probe": _probe()})
    local = workspace / ".codev" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"permissions": ')
    error = approval.save_approval(SettingsManager(workspace), workspace, _server(workspace))
    assert error is not None and "not valid JSON" in error
    assert approval.save_rejection(SettingsManager(workspace), _server(workspace)) is not None
    assert local.read_text() == '{"permissions": '


def test_the_question_shows_what_starting_the_server_does(workspace: Path) -> None:
    write_mcp_json(
        workspace,
        {"probe": _probe(env={"TOKEN": "${TOKEN}"}, cwd="sub"), "web": {"type": "http",
         "url": "https://mcp.example/x", "headers": {"Authorization": "Bearer ${T:-x}"}}},
    )  # fmt: skip
    server = _server(workspace)
    request = approval.approval_request(server, approval.Verdict("ask", "not approved yet"))
    assert request.kind == "mcp_server"
    assert request.headline == (
        'Codev wants to start the MCP server "probe" from this project\'s .mcp.json.'
    )
    assert f"command: {sys.executable} server.py --port 1" in request.detail
    assert "env: TOKEN=${TOKEN}" in request.detail  # as written: no secret filled in
    assert "value-of-the-token" not in request.detail
    assert f"cwd: {workspace / 'sub'}" in request.detail
    assert request.reason.startswith("not approved yet. A project's MCP servers run with")
    assert request.always_rule == "probe (this definition)" and request.session_rule is None

    web = next(s for s in load_mcp_config(workspace).servers if s.name == "web")
    request = approval.approval_request(web, approval.Verdict("ask", "not approved yet"))  # type: ignore[arg-type]
    assert "connect to the MCP server" in request.headline
    assert "url: https://mcp.example/x" in request.detail
    assert "header: Authorization: Bearer ${T:-x}" in request.detail
