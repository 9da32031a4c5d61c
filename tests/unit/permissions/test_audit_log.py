"""The permission audit log: a log that cannot be written is said once, in one line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from codev_ls.app import build_engine
from codev_ls.bridge import ScriptedBridge
from codev_ls.permissions.audit import AUDIT_FILE


async def test_an_unwritable_audit_log_warns_once_per_session(
    workspace: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    engine = build_engine(workspace, ScriptedBridge(), start_mcp=False)
    # The session's data folder is a file: every audit append fails (even as root).
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    engine.session.data_root = blocked
    caplog.set_level(logging.DEBUG, logger="codev_ls.permissions.audit")
    try:
        for _ in range(3):
            outcome = await engine.run_tool("Read", {"file_path": str(workspace / "a.txt")})
            assert outcome.status == "success"
    finally:
        await engine.aclose()
    records = [r for r in caplog.records if r.name == "codev_ls.permissions.audit"]
    warnings = [r for r in records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].exc_info is None  # one line, no traceback
    assert "could not write the permission audit log" in warnings[0].getMessage()
    assert len(records) == 3  # the later failures only at debug level


async def test_a_writable_audit_log_gets_one_line_per_decision(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    engine = build_engine(workspace, ScriptedBridge(), start_mcp=False)
    try:
        for _ in range(2):
            await engine.run_tool("Read", {"file_path": str(workspace / "a.txt")})
    finally:
        await engine.aclose()
    lines = (engine.session.data_dir / AUDIT_FILE).read_text().splitlines()
    assert len(lines) == 2
