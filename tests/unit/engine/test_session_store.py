"""Named terminal sessions on disk: read records keyed as the live session keys them,
and the change list kept between runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from codev_ls.engine.context import FileChange, Session
from codev_ls.engine.session_store import (
    MAX_CHANGE_CHARS,
    MAX_CHANGES,
    Retention,
    cleanup_session_data,
    load_retention,
    load_session,
    prune_session_data,
    save_session,
)
from codev_ls.tools._filestate import record_read, state_key


def _run(cmd: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def test_a_read_through_a_symlink_is_found_after_a_reload(workspace: Path, tmp_path: Path):
    target = workspace / "real.txt"
    target.write_text("hello\n")
    link = workspace / "link.txt"
    link.symlink_to(target)
    session = Session(workspace)
    record_read(session, link, data=b"hello\n")
    store = tmp_path / "s.json"
    save_session(session, store)
    fresh = Session(workspace)
    assert load_session(fresh, store)
    assert state_key(link) in fresh.read_state  # the real path, as check_fresh looks it up
    assert fresh.read_state[state_key(link)].path == link


def test_files_saved_before_keys_were_kept_are_resolved_on_load(workspace: Path, tmp_path: Path):
    target = workspace / "real.txt"
    target.write_text("x\n")
    link = workspace / "link.txt"
    link.symlink_to(target)
    store = tmp_path / "old.json"
    record = {"path": str(link), "mtime_ns": 1, "size": 2, "digest": "d", "partial": False}
    store.write_text(json.dumps({"id": "abc", "root": str(workspace), "read_state": [record]}))
    session = Session(workspace)
    assert load_session(session, store)
    assert list(session.read_state) == [target]


def test_the_change_list_survives_a_reload_within_its_limits(workspace: Path, tmp_path: Path):
    session = Session(workspace)
    path = workspace / "a.txt"
    session.changes.append(FileChange(path, None, "new\n", "Write", "t-0", "+new"))
    session.changes.append(
        FileChange(path, "x" * MAX_CHANGE_CHARS, "y\n", "Write", "t-big")  # too big to keep
    )
    for i in range(1, MAX_CHANGES + 5):
        session.changes.append(FileChange(path, f"{i - 1}\n", f"{i}\n", "Edit", f"t-{i}"))
    store = tmp_path / "s.json"
    save_session(session, store)
    fresh = Session(workspace)
    assert load_session(fresh, store)
    assert len(fresh.changes) == MAX_CHANGES
    assert [c.tool_use_id for c in fresh.changes][-1] == f"t-{MAX_CHANGES + 4}"
    assert "t-big" not in {c.tool_use_id for c in fresh.changes}
    last = fresh.changes[-1]
    assert (last.path, last.before, last.after, last.tool_name) == (
        path,
        f"{MAX_CHANGES + 3}\n",
        f"{MAX_CHANGES + 4}\n",
        "Edit",
    )


def test_cli_read_through_a_symlink_then_write_of_the_symlink(
    codev_cmd: list[str], workspace: Path
):
    target = workspace / "real.txt"
    target.write_text("one\n")
    link = workspace / "link.txt"
    link.symlink_to(target)
    read = json.dumps({"file_path": str(link)})
    out = _run(codev_cmd, "tool", "Read", read, "--session", "sym", cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr
    write = json.dumps({"file_path": str(link), "content": "two\n"})
    out = _run(codev_cmd, "tool", "Write", write, "--yes", "--session", "sym", cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "You have not read" not in out.stdout
    assert target.read_text() == "two\n" and link.is_symlink()


# --------------------------------------------------------------------------- retention


def _session_folder(base: Path, name: str, size: int, age_days: float, now: float) -> Path:
    folder = base / name
    (folder / "bash").mkdir(parents=True)
    out = folder / "bash" / "out.log"
    out.write_bytes(b"x" * size)
    t = now - age_days * 86400
    for p in (out, folder / "bash", folder):
        os.utime(p, (t, t))
    return folder


def test_old_folders_go_then_the_oldest_while_over_the_cap(tmp_path: Path):
    import time

    now = time.time()
    base = tmp_path / "sessions"
    old = _session_folder(base, "old", 1000, 40, now)
    a = _session_folder(base, "a", 600_000, 10, now)
    b = _session_folder(base, "b", 600_000, 5, now)
    c = _session_folder(base, "c", 600_000, 2, now)
    busy = _session_folder(base, "busy", 600_000, 0.001, now)  # touched a minute ago
    mine = _session_folder(base, "mine", 600_000, 50, now)  # this process's session
    removed = prune_session_data(
        base,
        Retention(max_age_days=30, max_total_bytes=2_000_000),
        keep=frozenset({"mine"}),
        now=now,
    )
    # Age: old goes (mine is kept). Cap: a, b, c, busy, mine = 3 MB > 2 MB; a and b go
    # (oldest first); busy and mine are never candidates.
    assert set(removed) == {old, a, b}
    assert not old.exists() and not a.exists() and not b.exists()
    assert c.exists() and busy.exists() and mine.exists()


def test_limits_can_be_turned_off_and_come_from_the_user_settings(tmp_path: Path):
    import time

    now = time.time()
    base = tmp_path / "sessions"
    old = _session_folder(base, "old", 10, 400, now)
    assert prune_session_data(base, Retention(None, None), now=now) == []
    assert old.exists()
    config = tmp_path / "config"
    config.mkdir()
    assert load_retention(config) == Retention()
    (config / "settings.json").write_text(
        json.dumps({"sessionData": {"maxAgeDays": 0, "maxTotalMB": 1}})
    )
    assert load_retention(config) == Retention(max_age_days=None, max_total_bytes=2**20)
    (config / "settings.json").write_text(json.dumps({"sessionData": {"maxAgeDays": "x"}}))
    assert load_retention(config) == Retention()


def test_the_cleanup_runs_at_most_once_an_hour(tmp_path: Path):
    import time

    now = time.time()
    base = tmp_path / "sessions"
    first = _session_folder(base, "first", 10, 60, now)
    config = tmp_path / "config"
    config.mkdir()
    assert cleanup_session_data(base, config, frozenset()) == [first]
    second = _session_folder(base, "second", 10, 60, now)
    assert cleanup_session_data(base, config, frozenset()) == []  # checked a moment ago
    assert second.exists()
