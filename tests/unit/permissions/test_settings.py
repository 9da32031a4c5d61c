"""Settings files: merge order, reload on change, malformed files, "Always allow" persistence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from codev_ls.bridge import ScriptedBridge
from codev_ls.permissions.settings import SettingsManager, merge_raw
from tests.fakes.perm_tools import EngineFactory, write_settings


def touch_later(path: Path) -> None:
    """Make sure a rewritten file's mtime differs from the last one seen."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))


def rules(manager: SettingsManager, kind: str) -> list[str]:
    return [r.text for r in getattr(manager.settings, kind)]


def test_three_files_merge_in_order(workspace: Path, _isolated_config: Path) -> None:
    write_settings(
        _isolated_config / "settings.json",
        {"defaultMode": "plan", "allow": ["Read"], "deny": ["WebSearch"]},
        env={"A": "user"},
    )
    write_settings(
        workspace / ".codev" / "settings.json",
        {"defaultMode": "acceptEdits", "allow": ["Bash(npm test)"]},
        env={"B": "project"},
    )
    write_settings(
        workspace / ".codev" / "settings.local.json",
        {"allow": ["Edit(src/**)"], "ask": ["Bash(git push:*)"]},
        env={"A": "local"},
    )
    m = SettingsManager(workspace)
    assert m.settings.default_mode == "acceptEdits"  # later wins for scalars
    assert rules(m, "allow") == ["Read", "Bash(npm test)", "Edit(src/**)"]  # lists concatenated
    assert rules(m, "ask") == ["Bash(git push:*)"]
    assert rules(m, "deny") == ["WebSearch"]
    assert [r.origin for r in m.settings.allow] == ["user", "project", "local"]
    assert m.settings.raw["env"] == {"A": "local", "B": "project"}


def test_merge_raw() -> None:
    assert merge_raw({"a": [1], "b": {"x": 1}, "c": 1}, {"a": [2], "b": {"y": 2}, "c": 2}) == {
        "a": [1, 2],
        "b": {"x": 1, "y": 2},
        "c": 2,
    }


def test_malformed_file_is_reported_once_and_ignored(
    workspace: Path, _isolated_config: Path
) -> None:
    write_settings(_isolated_config / "settings.json", {"allow": ["Read"]})
    bad = workspace / ".codev" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{"permissions": {"allow": ["Bash(ls)",]}}')
    messages: list[tuple[str, str]] = []
    m = SettingsManager(workspace, report=lambda level, msg: messages.append((level, msg)))
    assert rules(m, "allow") == ["Read"]  # the other file is kept
    assert len(messages) == 1 and messages[0][0] == "error"
    assert str(bad) in messages[0][1] and "not valid JSON" in messages[0][1]
    m.refresh()
    m.refresh()
    assert len(messages) == 1, "reported once, not on every refresh"
    bad.write_text('{"permissions": {"allow": ["Bash(ls)"]}}')
    touch_later(bad)
    assert m.refresh()
    assert rules(m, "allow") == ["Read", "Bash(ls)"]


def test_wrong_shapes_are_malformed(workspace: Path) -> None:
    cases = [
        ["not", "an", "object"],
        {"permissions": []},
        {"permissions": {"allow": "Bash"}},
        {"permissions": {"deny": [1]}},
        {"permissions": {"allow": ["Bash(ls"]}},
        {"permissions": {"defaultMode": "yolo"}},
        {"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]}},
        {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "http"}]}]}},
        {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"command": "x", "timeout": -1}]}]}},
    ]
    path = workspace / ".codev" / "settings.local.json"
    path.parent.mkdir()
    for data in cases:
        path.write_text(json.dumps(data))
        messages: list[tuple[str, str]] = []
        m = SettingsManager(
            workspace, report=lambda level, msg, out=messages: out.append((level, msg))
        )
        assert [lvl for lvl, _ in messages] == ["error"], (data, messages)
        assert m.settings.allow == [] and m.settings.hooks == {}


def test_a_rule_that_allows_nothing_is_warned_about(workspace: Path) -> None:
    write_settings(workspace / ".codev" / "settings.json", {"allow": ["WebFetch(python.org)"]})
    messages: list[tuple[str, str]] = []
    SettingsManager(workspace, report=lambda level, msg: messages.append((level, msg)))
    assert messages and messages[0][0] == "warning" and "WebFetch(python.org)" in messages[0][1]
    assert "domain:" in messages[0][1]


async def test_edited_settings_apply_to_the_next_use(
    make_engine: EngineFactory, workspace: Path
) -> None:
    engine = make_engine()
    first = await engine.run_tool("Bash", {"command": "touch a"})
    assert first.status == "rejected"
    write_settings(workspace / ".codev" / "settings.json", {"allow": ["Bash(touch:*)"]})
    second = await engine.run_tool("Bash", {"command": "touch a"})
    assert second.status == "success" and second.decision_rule == "Bash(touch:*)"
    write_settings(workspace / ".codev" / "settings.json", {"deny": ["Bash"]})
    touch_later(workspace / ".codev" / "settings.json")
    assert "Bash" not in [t.name for t in engine.tool_pool()], "a bare deny leaves the pool"
    third = await engine.run_tool("Bash", {"command": "touch b"})
    assert third.status == "error" and "No such tool" in third.text()
    assert not (workspace / "b").exists()


async def test_default_mode_comes_from_settings_unless_chosen(
    make_engine: EngineFactory, workspace: Path
) -> None:
    write_settings(workspace / ".codev" / "settings.json", {"defaultMode": "plan"})
    engine = make_engine(explicit_mode=False)
    assert engine.mode == "plan"
    chosen = make_engine(mode="acceptEdits", explicit_mode=True)
    assert chosen.mode == "acceptEdits"


async def test_always_allow_is_saved_atomically_and_merged(
    make_engine: EngineFactory, workspace: Path
) -> None:
    local = write_settings(
        workspace / ".codev" / "settings.local.json", {"allow": ["Read"]}, other={"keep": 1}
    )
    engine = make_engine(answers=["allow_always"])
    outcome = await engine.run_tool("Bash", {"command": "touch x y"})
    assert outcome.status == "success"
    assert outcome.decision_source == "user_permanent"
    assert outcome.decision_rule == "Bash(touch:*)"
    data = json.loads(local.read_text())
    assert data["permissions"]["allow"] == ["Read", "Bash(touch:*)"]
    assert data["other"] == {"keep": 1}, "the rest of the file is kept"
    assert not list(local.parent.glob("*.codev-tmp")), "no temp file left behind"
    again = await engine.run_tool("Bash", {"command": "touch z"})
    assert again.status == "success" and again.decision_source == "config"
    assert len(engine.bridge.requests) == 1  # type: ignore[attr-defined]


async def test_always_allow_into_a_broken_file_keeps_it_for_the_session(
    make_engine: EngineFactory, workspace: Path
) -> None:
    local = workspace / ".codev" / "settings.local.json"
    local.parent.mkdir()
    local.write_text("{broken")
    bridge = ScriptedBridge(answers=["allow_always"])
    engine = make_engine(bridge=bridge)
    outcome = await engine.run_tool("Bash", {"command": "touch x"})
    assert outcome.status == "success" and outcome.decision_source == "user_temporary"
    assert local.read_text() == "{broken", "a file we cannot read is never overwritten"
    assert any(level == "error" and "not valid JSON" in msg for level, msg in bridge.messages)
    again = await engine.run_tool("Bash", {"command": "touch y"})
    assert again.status == "success"


def test_always_allow_is_reused_by_a_new_process(workspace: Path, codev_cmd: list[str]) -> None:
    """Answer "3" (Always allow) on the terminal; a second process runs without asking."""
    env = dict(os.environ)
    first = subprocess.run(
        [
            *codev_cmd,
            "tool",
            "Write",
            json.dumps({"file_path": str(workspace / "src" / "a.txt"), "content": "one\n"}),
            "--cwd",
            str(workspace),
        ],
        input="3\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    assert "Always allow: Edit(src/**)" in first.stderr
    saved = json.loads((workspace / ".codev" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Edit(src/**)"]
    second = subprocess.run(
        [
            *codev_cmd,
            "tool",
            "Write",
            json.dumps({"file_path": str(workspace / "src" / "b.txt"), "content": "two\n"}),
            "--cwd",
            str(workspace),
            "--json",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert second.returncode == 0, second.stderr
    outcome = json.loads(second.stdout)
    assert outcome["decisionSource"] == "config" and outcome["decisionRule"] == "Edit(src/**)"
    assert "\n? " not in second.stderr, "no question was asked"
    assert (workspace / "src" / "b.txt").read_text() == "two\n"


def test_two_managers_saving_do_not_lose_rules(workspace: Path) -> None:
    script = (
        "import sys; from codev_ls.permissions.settings import SettingsManager as M; "
        "m = M(sys.argv[1]); [m.add_allow_rules([f'Bash(t{sys.argv[2]}-{i}:*)']) for i in range(15)]"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(workspace), str(n)]) for n in range(3)
    ]
    for p in procs:
        assert p.wait(timeout=60) == 0
    saved = json.loads((workspace / ".codev" / "settings.local.json").read_text())
    assert len(saved["permissions"]["allow"]) == 45


def test_bypass_mode_only_from_user_settings(workspace: Path, _isolated_config: Path) -> None:
    write_settings(workspace / ".codev" / "settings.json", {"defaultMode": "bypassPermissions"})
    messages: list[tuple[str, str]] = []
    m = SettingsManager(workspace, report=lambda level, msg: messages.append((level, msg)))
    assert m.settings.default_mode is None
    assert messages and messages[0][0] == "warning" and "bypassPermissions" in messages[0][1]
    write_settings(_isolated_config / "settings.json", {"defaultMode": "bypassPermissions"})
    assert SettingsManager(workspace).settings.default_mode == "bypassPermissions"


def test_misspelt_keys_are_reported_with_the_key_meant(workspace: Path) -> None:
    """Gap C: a misspelt key used to be ignored in silence — a rule that did not apply."""
    (workspace / ".codev").mkdir()
    (workspace / ".codev" / "settings.json").write_text(
        json.dumps(
            {
                "permisions": {"deny": ["Bash(rm:*)"]},
                "permissions": {"defaultmode": "plan", "allow": ["Read"]},
                "hooks": {
                    "preToolUse": [],
                    "PostToolUse": [{"matcher": "*", "hooks": [{"command": "x", "timeot": 5}]}],
                },
                "sandbox": {"allownetwork": True},
            }
        )
    )
    seen: list[tuple[str, str]] = []
    m = SettingsManager(workspace, report=lambda level, msg: seen.append((level, msg)))
    m.attach(m_context(), set_mode=False)
    texts = [msg for level, msg in seen if level == "warning"]
    for wrong, meant in (
        ("`permisions`", "`permissions`"),
        ("`permissions.defaultmode`", "`permissions.defaultMode`"),
        ("`hooks.preToolUse`", "`hooks.PreToolUse`"),
        ("`timeot`", "`timeout`"),
        ("`sandbox.allownetwork`", "`sandbox.allowNetwork`"),
    ):
        assert any(wrong in t and f"did you mean {meant}" in t for t in texts), (wrong, texts)
    # The file is not thrown away: what is spelt right still applies.
    assert rules(m, "allow") == ["Read"]
    # Each warning is given once, not again on every refresh.
    count = len(seen)
    m.refresh()
    assert len(seen) == count


def m_context():  # type: ignore[no-untyped-def]
    from codev_ls.permissions.rules import PermissionContext

    return PermissionContext()
