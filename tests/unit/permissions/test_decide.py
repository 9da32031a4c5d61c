"""The decision function: modes × tools × rules, and what resolve_permission does with answers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import PermissionAnswer, ScriptedBridge
from codev_ls.engine.registry import find_tool
from codev_ls.engine.runtime import Engine
from codev_ls.permissions.decide import decide, resolve_permission
from codev_ls.permissions.types import PermissionResult
from tests.fakes.perm_tools import EngineFactory


@pytest.fixture
def places(workspace: Path, tmp_path: Path) -> dict[str, str]:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("hello\n")
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "secrets").mkdir()
    (workspace / ".env").write_text("KEY=1\n")
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    os.symlink(outside, workspace / "src" / "outlink")
    os.link(outside / "secret.txt", workspace / "src" / "hardlink")
    return {"ws": str(workspace), "out": str(outside)}


async def judge(engine: Engine, name: str, raw: dict[str, Any]) -> PermissionResult:
    tools = engine.base_tools or []
    tool = find_tool(tools, name)
    assert tool is not None
    parsed = tool.parse_input(raw)
    ctx = engine.context(tools=tools)
    own = await tool.check_permissions(parsed, ctx)
    if own.behavior == "deny":
        return own
    return await decide(tool, parsed, ctx, own=own)


def fill(value: Any, places: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**places)
    if isinstance(value, dict):
        return {k: fill(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, places) for v in value]
    return value


W = "{ws}"
MATRIX = [
    # mode, tool, input, rules, expected, rule the decision names
    # ---- Read
    ("default", "Read", {"file_path": f"{W}/src/a.txt"}, {}, "allow", None),
    ("default", "Read", {"file_path": "{out}/secret.txt"}, {}, "ask", None),
    ("default", "Read", {"file_path": f"{W}/src/outlink/secret.txt"}, {}, "ask", None),
    (
        "default",
        "Read",
        {"file_path": "{out}/secret.txt"},
        {"allow": ["Read(/{out}/**)"]},
        "allow",
        "Read(/{out}/**)",
    ),
    ("default", "Read", {"file_path": f"{W}/.env"}, {"deny": ["Read(.env)"]}, "deny", "Read(.env)"),
    (
        "bypassPermissions",
        "Read",
        {"file_path": f"{W}/.env"},
        {"deny": ["Read(.env)"]},
        "deny",
        "Read(.env)",
    ),
    ("plan", "Read", {"file_path": f"{W}/src/a.txt"}, {}, "allow", None),
    ("acceptEdits", "Read", {"file_path": "{out}/secret.txt"}, {}, "ask", None),
    ("auto", "Read", {"file_path": f"{W}/src/a.txt"}, {}, "allow", None),
    ("auto", "Read", {"file_path": "{out}/secret.txt"}, {}, "ask", None),
    (
        "default",
        "Read",
        {"file_path": f"{W}/src/a.txt"},
        {"ask": ["Read(src/**)"]},
        "ask",
        "Read(src/**)",
    ),
    # ---- Write / Edit
    ("default", "Write", {"file_path": f"{W}/src/b.txt", "content": "x"}, {}, "ask", None),
    ("acceptEdits", "Write", {"file_path": f"{W}/src/b.txt", "content": "x"}, {}, "allow", None),
    ("acceptEdits", "Write", {"file_path": "{out}/x.txt", "content": "x"}, {}, "ask", None),
    (
        "acceptEdits",
        "Write",
        {"file_path": f"{W}/src/outlink/x.txt", "content": "x"},
        {},
        "ask",
        None,
    ),
    ("acceptEdits", "Write", {"file_path": f"{W}/.git/config", "content": "x"}, {}, "ask", None),
    ("acceptEdits", "Write", {"file_path": f"{W}/src/hardlink", "content": "x"}, {}, "ask", None),
    (
        "acceptEdits",
        "Write",
        {"file_path": f"{W}/.codev/settings.json", "content": "{{}}"},
        {},
        "ask",
        None,
    ),
    (
        "bypassPermissions",
        "Write",
        {"file_path": f"{W}/.git/config", "content": "x"},
        {},
        "allow",
        None,
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"allow": ["Edit(src/**)"]},
        "allow",
        "Edit(src/**)",
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/../../x.txt", "content": "x"},
        {"allow": ["Edit(src/**)"]},
        "ask",
        None,
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/outlink/x.txt", "content": "x"},
        {"allow": ["Edit(src/**)"]},
        "ask",
        None,
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/.git/hooks/pre-commit", "content": "x"},
        {"allow": ["Edit(**)"]},
        "ask",
        None,
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/.git/hooks/pre-commit", "content": "x"},
        {"allow": ["Edit(.git/hooks/**)"]},
        "allow",
        "Edit(.git/hooks/**)",
    ),
    (
        "plan",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"allow": ["Edit(src/**)"]},
        "deny",
        None,
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"allow": ["Edit(src/**)"], "ask": ["Write(src/b.txt)"]},
        "ask",
        "Write(src/b.txt)",
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"allow": ["Edit(src/**)"], "deny": ["Write(src/**)"]},
        "deny",
        "Write(src/**)",
    ),
    (
        "acceptEdits",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"deny": ["Edit(*.txt)"]},
        "deny",
        "Edit(*.txt)",
    ),
    ("auto", "Write", {"file_path": f"{W}/src/b.txt", "content": "x"}, {}, "ask", None),
    (
        "default",
        "Write",
        {"file_path": "{out}/x.txt", "content": "x"},
        {"allow": ["Edit(/{out}/**)"]},
        "allow",
        "Edit(/{out}/**)",
    ),
    (
        "default",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"allow": ["Write"]},
        "allow",
        "Write",
    ),
    (
        "default",
        "Write",
        {"file_path": "{out}/x.txt", "content": "x"},
        {"allow": ["Write"]},
        "ask",
        None,
    ),
    (
        "bypassPermissions",
        "Write",
        {"file_path": f"{W}/src/b.txt", "content": "x"},
        {"deny": ["Write"]},
        "deny",
        "Write",
    ),
    (
        "acceptEdits",
        "Edit",
        {"file_path": f"{W}/src/a.txt", "old_string": "hello", "new_string": "bye"},
        {},
        "allow",
        None,
    ),
    (
        "default",
        "Edit",
        {"file_path": f"{W}/src/a.txt", "old_string": "hello", "new_string": "bye"},
        {},
        "ask",
        None,
    ),
    # ---- Glob
    ("default", "Glob", {"pattern": "*.txt", "path": f"{W}/src"}, {}, "allow", None),
    ("default", "Glob", {"pattern": "*.txt", "path": "{out}"}, {}, "ask", None),
    (
        "default",
        "Glob",
        {"pattern": "*", "path": f"{W}/secrets"},
        {"deny": ["Read(secrets/**)"]},
        "deny",
        "Read(secrets/**)",
    ),
    (
        "default",
        "Glob",
        {"pattern": "*", "path": "{out}"},
        {"allow": ["Read(/{out}/**)"]},
        "allow",
        "Read(/{out}/**)",
    ),
    # ---- Bash
    ("default", "Bash", {"command": "ls -la"}, {}, "allow", None),
    ("default", "Bash", {"command": "git status && git diff"}, {}, "allow", None),
    ("default", "Bash", {"command": "ls && rm x"}, {}, "ask", None),
    ("default", "Bash", {"command": "rm x"}, {"allow": ["Bash(rm:*)"]}, "allow", "Bash(rm:*)"),
    (
        "default",
        "Bash",
        {"command": "git status && rm -rf x"},
        {"allow": ["Bash(git status:*)"]},
        "ask",
        None,
    ),
    (
        "default",
        "Bash",
        {"command": "ls; rm x"},
        {"allow": ["Bash"], "deny": ["Bash(rm:*)"]},
        "deny",
        "Bash(rm:*)",
    ),
    (
        "bypassPermissions",
        "Bash",
        {"command": "echo ok && rm x"},
        {"deny": ["Bash(rm:*)"]},
        "deny",
        "Bash(rm:*)",
    ),
    ("bypassPermissions", "Bash", {"command": "rm x"}, {}, "allow", None),
    ("plan", "Bash", {"command": "rm x"}, {"allow": ["Bash(rm:*)"]}, "deny", None),
    ("plan", "Bash", {"command": "ls && git log -3"}, {}, "allow", None),
    ("acceptEdits", "Bash", {"command": "echo hi > out.txt"}, {}, "allow", None),
    ("default", "Bash", {"command": "echo hi > out.txt"}, {}, "ask", None),
    ("default", "Bash", {"command": "echo hi > out.txt"}, {"allow": ["Bash(echo:*)"]}, "ask", None),
    (
        "default",
        "Bash",
        {"command": "echo hi > out.txt"},
        {"allow": ["Bash(echo:*)", "Edit(/out.txt)"]},
        "allow",
        "Edit(/out.txt)",
    ),
    ("acceptEdits", "Bash", {"command": "echo hi > .git/hooks/post-checkout"}, {}, "ask", None),
    ("acceptEdits", "Bash", {"command": "echo hi > {out}/x"}, {}, "ask", None),
    ("default", "Bash", {"command": "cat {out}/secret.txt"}, {}, "ask", None),
    ("default", "Bash", {"command": "cat src/outlink/secret.txt"}, {}, "ask", None),
    (
        "default",
        "Bash",
        {"command": "cat {out}/secret.txt"},
        {"allow": ["Read(/{out}/**)"]},
        "allow",
        "Read(/{out}/**)",
    ),
    ("default", "Bash", {"command": "cd {out} && cat secret.txt"}, {}, "ask", None),
    ("default", "Bash", {"command": "cat .env"}, {"deny": ["Read(.env)"]}, "deny", "Read(.env)"),
    (
        "default",
        "Bash",
        {"command": "{{ cat .env; }}"},
        {"deny": ["Read(.env)"]},
        "deny",
        "Read(.env)",
    ),
    (
        "default",
        "Bash",
        {"command": "echo x >> .env"},
        {"deny": ["Edit(.env)"], "allow": ["Bash", "Edit(**)"]},
        "deny",
        "Edit(.env)",
    ),
    ("default", "Bash", {"command": "$CMD x"}, {"allow": ["Bash"]}, "ask", None),
    ("bypassPermissions", "Bash", {"command": "$CMD x"}, {}, "allow", None),
    (
        "default",
        "Bash",
        {"command": "npm test"},
        {"allow": ["Bash(npm:*)"], "ask": ["Bash(npm test:*)"]},
        "ask",
        "Bash(npm test:*)",
    ),
    ("auto", "Bash", {"command": "ls"}, {}, "allow", None),
    ("auto", "Bash", {"command": "rm x"}, {}, "ask", None),
    ("default", "Bash", {"command": "rm x"}, {"allow": ["Bash(rm x)"]}, "allow", "Bash(rm x)"),
    ("default", "Bash", {"command": "rm x y"}, {"allow": ["Bash(rm x)"]}, "ask", None),
    # ---- WebFetch (its own check asks on a host's first fetch)
    ("default", "WebFetch", {"url": "https://docs.python.org/3/"}, {}, "ask", None),
    ("bypassPermissions", "WebFetch", {"url": "https://docs.python.org/3/"}, {}, "allow", None),
    (
        "default",
        "WebFetch",
        {"url": "https://docs.python.org/3/"},
        {"allow": ["WebFetch(domain:python.org)"]},
        "allow",
        "WebFetch(domain:python.org)",
    ),
    (
        "default",
        "WebFetch",
        {"url": "https://x.evil.com/"},
        {"deny": ["WebFetch(domain:evil.com)"]},
        "deny",
        "WebFetch(domain:evil.com)",
    ),
    (
        "default",
        "WebFetch",
        {"url": "https://python.org@evil.com/"},
        {"allow": ["WebFetch(domain:python.org)"]},
        "ask",
        None,
    ),
    (
        "default",
        "WebFetch",
        {"url": "https://notpython.org/"},
        {"allow": ["WebFetch(domain:python.org)"]},
        "ask",
        None,
    ),
    # ---- MCP
    ("default", "mcp__srv__do", {}, {}, "ask", None),
    ("default", "mcp__srv__do", {}, {"allow": ["mcp__srv"]}, "allow", "mcp__srv"),
    ("default", "mcp__other__do", {}, {"allow": ["mcp__srv"]}, "ask", None),
    ("default", "mcp__srv__do", {}, {"allow": ["mcp__srv__do"]}, "allow", "mcp__srv__do"),
    ("default", "mcp__srv__look", {}, {}, "allow", None),
    ("plan", "mcp__srv__do", {}, {"allow": ["mcp__srv"]}, "deny", None),
    ("bypassPermissions", "mcp__srv__look", {}, {"deny": ["mcp__srv"]}, "deny", "mcp__srv"),
]


@pytest.mark.parametrize(
    ("mode", "tool", "raw", "rules", "expected", "rule"),
    MATRIX,
    ids=[f"{m}-{t}-{i}" for i, (m, t, *_rest) in enumerate(MATRIX)],
)
async def test_matrix(
    make_engine: EngineFactory,
    places: dict[str, str],
    mode: str,
    tool: str,
    raw: dict[str, Any],
    rules: dict[str, list[str]],
    expected: str,
    rule: str | None,
) -> None:
    engine = make_engine(mode=mode, **fill(rules, places))
    decision = await judge(engine, tool, fill(raw, places))
    assert decision.behavior == expected, (decision.reason, decision.trace)
    if rule is not None:
        assert decision.rule is not None and fill(rule, places) in decision.rule, decision
    if expected == "deny" and mode == "plan" and rule is None:
        assert "Plan mode is on" in decision.reason
    if expected != "ask":
        assert decision.source == "config"
    assert decision.trace, "every decision says how it was reached"


# --------------------------------------------------------------------------- suggestions


@pytest.mark.parametrize(
    ("tool", "raw", "suggestion"),
    [
        ("Bash", {"command": "npm run test -- --watch"}, "Bash(npm run test:*)"),
        ("Bash", {"command": "git push origin main"}, "Bash(git push:*)"),
        ("Bash", {"command": "make -j4"}, "Bash(make -j4)"),
        ("Bash", {"command": "make test"}, "Bash(make test:*)"),
        # Global options stay (the rule must match the use), never `git:*` (gap A).
        ("Bash", {"command": "git -C . push"}, "Bash(git -C . push:*)"),
        ("Bash", {"command": "git --frob push"}, "Bash(git --frob push)"),
        (
            "Bash",
            {"command": "kubectl --context prod get pods"},
            "Bash(kubectl --context prod get:*)",
        ),
        # A destructive command is only ever offered as itself.
        (
            "Bash",
            {"command": "kubectl --context prod delete pod x"},
            "Bash(kubectl --context prod delete pod x)",
        ),
        ("Bash", {"command": "python scripts/gen.py --x"}, "Bash(python scripts/gen.py:*)"),
        ("Bash", {"command": "ls && rm -rf build"}, "Bash(rm -rf build)"),
        ("Write", {"file_path": "{ws}/src/deep/b.txt", "content": "x"}, "Edit(src/deep/**)"),
        ("Write", {"file_path": "{ws}/top.txt", "content": "x"}, "Edit(/top.txt)"),
        ("Read", {"file_path": "{out}/secret.txt"}, "Read(/{out}/**)"),
        ("WebFetch", {"url": "https://docs.python.org/3/"}, "WebFetch(domain:docs.python.org)"),
        ("mcp__srv__do", {}, "mcp__srv__do"),
    ],
)
async def test_ask_suggests_a_generalised_rule(
    make_engine: EngineFactory, places: dict[str, str], tool: str, raw: dict, suggestion: str
) -> None:
    decision = await judge(make_engine(), tool, fill(raw, places))
    assert decision.behavior == "ask"
    assert decision.suggestions == [fill(suggestion, places)]


@pytest.mark.parametrize(
    "command", ["$CMD x", "python -c 'import os'", "sudo rm x", 'bash -c "$X"']
)
async def test_no_rule_is_offered_when_none_would_be_sensible(
    make_engine: EngineFactory, command: str
) -> None:
    decision = await judge(make_engine(), "Bash", {"command": command})
    assert decision.behavior == "ask"
    assert decision.suggestions == []


# --------------------------------------------------------------------------- answers


async def run(engine: Engine, name: str, **raw: Any):  # type: ignore[no-untyped-def]
    return await engine.run_tool(name, raw)


async def test_allow_once_is_one_use_only(make_engine: EngineFactory, workspace: Path) -> None:
    engine = make_engine(answers=["allow_once"])
    first = await run(engine, "Bash", command="touch one")
    assert first.status == "success" and first.decision_source == "user_temporary"
    second = await run(engine, "Bash", command="touch two")
    assert second.status == "rejected" and second.decision_source == "user_reject"
    assert (workspace / "one").exists() and not (workspace / "two").exists()


async def test_allow_for_session_keeps_the_generalised_rule(
    make_engine: EngineFactory, workspace: Path
) -> None:
    engine = make_engine(answers=["allow_session"])
    bridge = engine.bridge
    assert isinstance(bridge, ScriptedBridge)
    first = await run(engine, "Bash", command="touch a b")
    assert first.status == "success"
    assert bridge.requests[0].session_rule == "Bash(touch:*)"
    assert bridge.requests[0].always_rule == "Bash(touch:*)"
    second = await run(engine, "Bash", command="touch c")
    assert second.status == "success"
    assert second.decision_source == "user_temporary"
    assert second.decision_rule == "Bash(touch:*)"
    assert len(bridge.requests) == 1, "the session rule answered the second time"
    third = await run(engine, "Bash", command="rm a")
    assert third.status == "rejected"
    assert not (workspace / ".codev" / "settings.local.json").exists()


async def test_rejection_carries_feedback_and_nothing_runs(
    make_engine: EngineFactory, workspace: Path
) -> None:
    class Feedback(ScriptedBridge):
        async def ask_permission(self, request):  # type: ignore[no-untyped-def]
            self.requests.append(request)
            return PermissionAnswer("reject", feedback="use the Makefile")

    engine = make_engine(bridge=Feedback())
    outcome = await run(engine, "Bash", command="touch x")
    assert outcome.status == "rejected"
    assert "use the Makefile" in outcome.text()
    assert not (workspace / "x").exists()


async def test_a_lost_editor_is_a_rejection(make_engine: EngineFactory, workspace: Path) -> None:
    class Broken(ScriptedBridge):
        async def ask_permission(self, request):  # type: ignore[no-untyped-def]
            raise ConnectionResetError("gone")

    outcome = await run(make_engine(bridge=Broken()), "Bash", command="touch x")
    assert outcome.status == "rejected" and outcome.decision_source == "user_reject"
    assert not (workspace / "x").exists()


async def test_edit_preview_is_the_approval(make_engine: EngineFactory, workspace: Path) -> None:
    bridge = ScriptedBridge(edit_preview_approval=True)
    engine = make_engine(bridge=bridge)
    outcome = await run(engine, "Write", file_path=str(workspace / "new.txt"), content="hi\n")
    assert outcome.status == "success", outcome.text()
    assert bridge.requests == []
    assert bridge.edits and bridge.edits[0].needs_confirmation
    assert outcome.decision_source == "user_temporary"


async def test_prompt_names_what_will_happen(make_engine: EngineFactory) -> None:
    engine = make_engine()
    await run(engine, "Bash", command="rm -rf build")
    request = engine.bridge.requests[0]  # type: ignore[attr-defined]
    assert request.tool_name == "Bash"
    assert "rm -rf build" in request.message
    assert "rm" in request.reason


# --------------------------------------------------------------------------- hooks' decisions


async def resolve(engine: Engine, name: str, raw: dict, hook: PermissionResult | None):  # type: ignore[no-untyped-def]
    tools = engine.base_tools or []
    tool = find_tool(tools, name)
    assert tool is not None
    return await resolve_permission(tool, tool.parse_input(raw), engine.context(tools=tools), hook)


async def test_hook_allow_skips_the_prompt(make_engine: EngineFactory) -> None:
    engine = make_engine()
    d = await resolve(
        engine, "Bash", {"command": "rm x"}, PermissionResult.allow(None, "ok", "hook")
    )
    assert d.behavior == "allow" and d.source == "hook"
    assert engine.bridge.requests == []  # type: ignore[attr-defined]


async def test_hook_allow_never_overrides_a_deny_rule(make_engine: EngineFactory) -> None:
    engine = make_engine(deny=["Bash(rm:*)"])
    d = await resolve(
        engine, "Bash", {"command": "rm x"}, PermissionResult.allow(None, "ok", "hook")
    )
    assert d.behavior == "deny" and d.source == "config" and d.rule == "Bash(rm:*)"


async def test_hook_allow_does_not_lift_plan_mode(make_engine: EngineFactory) -> None:
    engine = make_engine(mode="plan")
    d = await resolve(
        engine, "Bash", {"command": "rm x"}, PermissionResult.allow(None, "ok", "hook")
    )
    assert d.behavior == "deny"


async def test_hook_ask_forces_a_prompt(make_engine: EngineFactory) -> None:
    engine = make_engine(allow=["Bash(ls:*)"], answers=["reject"])
    d = await resolve(engine, "Bash", {"command": "ls"}, PermissionResult.ask("hook wants a look"))
    assert d.behavior == "deny" and d.source == "user_reject"
    assert engine.bridge.requests[0].reason == "hook wants a look"  # type: ignore[attr-defined]


async def test_hook_deny(make_engine: EngineFactory) -> None:
    engine = make_engine(allow=["Bash"])
    d = await resolve(engine, "Bash", {"command": "ls"}, PermissionResult.deny("no", "hook"))
    assert d.behavior == "deny" and d.source == "hook" and d.reason == "no"


async def test_own_ask_is_not_satisfied_by_the_mode(make_engine: EngineFactory) -> None:
    engine = make_engine(mode="acceptEdits", answers=["reject"])
    d = await resolve(engine, "WebFetch", {"url": "https://example.com/"}, None)
    assert d.behavior == "deny" and d.source == "user_reject"
    assert engine.bridge.requests[0].always_rule == "WebFetch(domain:example.com)"  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- auto mode's seam


async def test_auto_mode_asks_a_model_classifier_for_what_rules_leave_open(
    make_engine: EngineFactory,
) -> None:
    from codev_ls.permissions.modes import ClassifierRequest, ClassifierVerdict

    seen: list[ClassifierRequest] = []

    class Lenient:
        async def classify(self, request: ClassifierRequest) -> ClassifierVerdict:
            seen.append(request)
            return ClassifierVerdict("allow", "a harmless build step")

    engine = make_engine(mode="auto")
    engine.services["auto_classifier"] = Lenient()
    d = await judge(engine, "Bash", {"command": "make -j4"})
    assert d.behavior == "allow" and "a harmless build step" in d.reason
    assert seen[0].classifier_input == "make -j4" and not seen[0].read_only
    # Still never for what the parser cannot understand, and never past a deny rule.
    assert (await judge(engine, "Bash", {"command": "$CMD"})).behavior == "ask"
    # Nor for what always asks: writes outside the workspace, protected paths.
    assert (await judge(engine, "Bash", {"command": "make > build.log"})).behavior == "allow"
    assert (await judge(engine, "Bash", {"command": "make > /tmp/x.log"})).behavior == "ask"
    assert (await judge(engine, "Bash", {"command": "echo x > .git/config"})).behavior == "ask"
    denying = make_engine(mode="auto", deny=["Bash(make:*)"])
    denying.services["auto_classifier"] = Lenient()
    assert (await judge(denying, "Bash", {"command": "make"})).behavior == "deny"


async def test_a_broken_classifier_asks(make_engine: EngineFactory) -> None:
    class Broken:
        async def classify(self, request: object) -> object:
            raise RuntimeError("model down")

    engine = make_engine(mode="auto")
    engine.services["auto_classifier"] = Broken()
    assert (await judge(engine, "Bash", {"command": "make"})).behavior == "ask"


async def test_audit_log_has_every_decision(make_engine: EngineFactory, workspace: Path) -> None:
    import json

    engine = make_engine(allow=["Bash(echo:*)"], answers=["reject"])
    await run(engine, "Bash", command="echo hi")
    await run(engine, "Bash", command="touch x")
    await run(engine, "Write", file_path=str(workspace / "w.txt"), content="x")
    lines = [
        json.loads(x)
        for x in (engine.session.data_dir / "permissions.jsonl").read_text().splitlines()
    ]
    assert [(r["tool"], r["behavior"], r["source"]) for r in lines] == [
        ("Bash", "allow", "config"),
        ("Bash", "deny", "user_reject"),
        ("Write", "deny", "user_reject"),
    ]
    assert lines[0]["rule"] == "Bash(echo:*)" and lines[0]["command"] == "echo hi"
    assert "content" not in json.dumps(lines[2]), "file contents never go to the log"


async def test_force_ask_always_asks_but_deny_wins(make_engine: EngineFactory) -> None:
    from codev_ls.engine.tool import ToolResult, build_tool
    from codev_ls.permissions.types import PermissionSubject

    async def call(input: Any, ctx: Any, on_progress: Any) -> ToolResult:
        return ToolResult("ran")

    risky = build_tool(
        name="Risky",
        input_json_schema={"type": "object", "properties": {}},
        is_read_only=lambda input: True,
        permission_subject=lambda input, ctx: PermissionSubject(
            summary="leave the sandbox", force_ask_reason="runs outside the sandbox"
        ),
        call=call,
    )
    for mode in ("default", "acceptEdits", "bypassPermissions", "auto"):
        engine = make_engine(mode=mode, allow=["Risky"], tools=[risky])
        d = await judge(engine, "Risky", {})
        assert d.behavior == "ask" and d.reason == "runs outside the sandbox", mode
        assert d.suggestions == []
    engine = make_engine(mode="bypassPermissions", deny=["Risky"], tools=[risky])
    assert (await judge(engine, "Risky", {})).behavior == "deny"
    # A hook's allow does not lift it either.
    engine = make_engine(allow=["Risky"], tools=[risky], answers=["reject"])
    d = await resolve(engine, "Risky", {}, PermissionResult.allow(None, "hook ok", "hook"))
    assert d.behavior == "deny" and d.source == "user_reject"


async def test_a_listing_leaves_out_what_a_read_deny_rule_forbids(
    make_engine: EngineFactory, workspace: Path, places: dict[str, str]
) -> None:
    (workspace / "src" / ".env").write_text("KEY=2\n")
    engine = make_engine(deny=["Read(.env)", "Read(secrets/**)"])
    (workspace / "secrets" / "k.txt").write_text("k")
    outcome = await run(engine, "Glob", pattern="**/*", path=str(workspace))
    listed = outcome.text()
    assert outcome.status == "success"
    assert "a.txt" in listed
    assert ".env" not in listed and "k.txt" not in listed
