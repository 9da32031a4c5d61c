"""Deny and ask rules that must not be slipped past: by case, by searching a folder that
holds a denied file, by xargs reading names only known at run time; and the
warnings for rules that name no tool.

A recursive read (``grep -r``, ``rg``, ``git grep``, ``find -exec cat``,
``find | xargs cat``, ``tar``) of a folder holding a file a ``Read(...)`` deny rule
names is denied (the Grep tool, which leaves denied files out, is the way to
search such a folder); one an ask rule names asks; a folder too large to check
asks. Searches of folders without such files are decided as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codev_ls.engine.registry import find_tool
from codev_ls.engine.runtime import Engine
from codev_ls.permissions import paths
from codev_ls.permissions.decide import decide
from codev_ls.permissions.types import PermissionResult
from codev_ls.tools.grep import GrepTool
from tests.fakes.perm_tools import EngineFactory, all_tools, write_settings


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "a.py").write_text("TOKEN = 'public'\n")
    (workspace / "config").mkdir()
    (workspace / "config" / ".env").write_text("TOKEN=SECRET-ENV\n")
    return workspace


async def judge(engine: Engine, name: str, **raw: Any) -> PermissionResult:
    tools = engine.base_tools or []
    tool = find_tool(tools, name)
    assert tool is not None
    ctx = engine.context(tools=tools)
    return await decide(tool, tool.parse_input(raw), ctx)


# --------------------------------------------------------------------------- case


@pytest.mark.parametrize(
    ("deny", "command"),
    [
        ("read(config/.env)", "cat config/.env"),
        ("Read(CONFIG/.ENV)", "cat config/.env"),
        ("Read(config/.env)", "cat CONFIG/.ENV"),
        ("bash(rm:*)", "rm -f x"),
        ("BASH(RM:*)", "rm -f x"),
    ],
)
async def test_deny_rules_ignore_case(
    make_engine: EngineFactory, tree: Path, deny: str, command: str
) -> None:
    engine = make_engine(mode="bypassPermissions", deny=[deny])
    decision = await judge(engine, "Bash", command=command)
    assert decision.behavior == "deny", decision.reason
    assert decision.rule == deny


async def test_a_bare_deny_rule_in_another_case_removes_the_tool(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(mode="bypassPermissions", deny=["bash"])
    assert "Bash" not in [t.name for t in engine.tool_pool()]
    decision = await judge(engine, "Bash", command="ls")
    assert decision.behavior == "deny" and decision.rule == "bash"


async def test_ask_rules_ignore_case_and_allow_rules_do_not(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(ask=["read(src/**)"])
    decision = await judge(engine, "Read", file_path=str(tree / "src" / "pkg" / "a.py"))
    assert decision.behavior == "ask" and decision.rule == "read(src/**)"
    # Allow rules stay exact: `bash(make:*)` allows nothing (and is warned about).
    engine = make_engine(allow=["bash(make:*)"])
    assert (await judge(engine, "Bash", command="make")).behavior == "ask"


# --------------------------------------------------------------------------- recursive reads


@pytest.mark.parametrize(
    "command",
    [
        "grep -r TOKEN .",
        "grep -rn TOKEN",
        "grep -R TOKEN config",
        "rg TOKEN",
        "rg -i token .",
        "git grep TOKEN",
        "find . -name '*' -exec cat {} +",
        "find . -type f | xargs cat",
        "tar cf /dev/null .",
        "cd config && grep -r TOKEN",
    ],
)
async def test_a_recursive_read_reaching_a_denied_file_is_denied(
    make_engine: EngineFactory, tree: Path, command: str
) -> None:
    for mode in ("default", "bypassPermissions"):
        engine = make_engine(mode=mode, allow=["Bash"], deny=["Read(.env)"])
        decision = await judge(engine, "Bash", command=command)
        assert decision.behavior == "deny", (mode, decision.reason)
        assert decision.rule == "Read(.env)"
        assert ".env" in decision.reason and "Grep tool" in decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TOKEN src",
        "rg TOKEN src/pkg",
        "grep TOKEN src/pkg/a.py",
        "find src -type f | xargs wc -l",
        "ls -R",
        "find . -name '*.py'",
    ],
)
async def test_reads_that_do_not_reach_a_denied_file_are_decided_as_before(
    make_engine: EngineFactory, tree: Path, command: str
) -> None:
    engine = make_engine(deny=["Read(.env)"])
    decision = await judge(engine, "Bash", command=command)
    assert decision.behavior == "allow", decision.reason


async def test_anchored_rules_only_scan_where_they_can_match(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(deny=["Read(config/**)"])
    assert (await judge(engine, "Bash", command="grep -r TOKEN src")).behavior == "allow"
    assert (await judge(engine, "Bash", command="grep -r TOKEN .")).behavior == "deny"


async def test_a_recursive_read_reaching_an_ask_rule_asks(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(allow=["Bash(rg:*)"], ask=["Read(config/**)"])
    decision = await judge(engine, "Bash", command="rg TOKEN")
    assert decision.behavior == "ask" and decision.rule == "Read(config/**)"
    assert (await judge(engine, "Bash", command="rg TOKEN src")).behavior == "allow"


async def test_a_folder_too_large_to_check_asks(
    make_engine: EngineFactory, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "config" / ".env").unlink()
    for i in range(30):
        (tree / "src" / f"f{i}.txt").write_text("x\n")
    monkeypatch.setattr(paths, "SCAN_LIMIT", 10)
    engine = make_engine(deny=["Read(.env)"])
    decision = await judge(engine, "Bash", command="grep -r TOKEN .")
    assert decision.behavior == "ask", decision.reason
    assert "too many files" in decision.reason


async def test_xargs_reading_names_only_known_at_run_time_asks(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine()
    for command in (
        "echo /etc/passwd | xargs cat",
        "cat list.txt | xargs cat",
        "find . -name a.py | sed s/a/b/ | xargs cat",
        "xargs -a list.txt cat",
    ):
        decision = await judge(engine, "Bash", command=command)
        assert decision.behavior == "ask", (command, decision.reason)
    for command in ("find src -name '*.py' | xargs wc -l", "git ls-files | sort | xargs wc -l"):
        decision = await judge(engine, "Bash", command=command)
        assert decision.behavior == "allow", (command, decision.reason)


async def test_grep_tool_leaves_denied_files_out(make_engine: EngineFactory, tree: Path) -> None:
    engine = make_engine(deny=["Read(.env)"], tools=[*all_tools(), GrepTool()])
    for mode in ("content", "files_with_matches", "count"):
        outcome = await engine.run_tool("Grep", {"pattern": "TOKEN", "output_mode": mode})
        assert outcome.status == "success", outcome.text()
        text = outcome.text()
        assert "a.py" in text
        assert ".env" not in text and "SECRET-ENV" not in text
    # Named directly, the denied file is refused.
    outcome = await engine.run_tool(
        "Grep", {"pattern": "TOKEN", "path": str(tree / "config" / ".env")}
    )
    assert outcome.status == "rejected"
    await engine.aclose()


# --------------------------------------------------------------------------- warnings


async def test_rules_naming_no_tool_are_warned_about(
    make_engine: EngineFactory, tree: Path
) -> None:
    write_settings(
        tree / ".codev" / "settings.json",
        {
            "allow": ["bash(make:*)", "Reed(src/**)", "mcp__later__tool", "Edit(src/**)"],
            "deny": ["bash(rm:*)", "Bahs(rm:*)"],
        },
    )
    from codev_ls.bridge import ScriptedBridge

    bridge = ScriptedBridge()
    engine = make_engine(bridge=bridge)
    engine.tool_pool()  # the first refresh after start-up checks the names
    warnings = [m for level, m in bridge.messages if level == "warning"]
    text = "\n".join(warnings)
    assert "bash(make:*)" in text and "did you mean Bash" in text
    assert "Reed(src/**)" in text and "Bahs(rm:*)" in text
    assert "bash(rm:*)" not in text  # deny rules ignore case: it applies to Bash
    assert "mcp__later__tool" not in text  # MCP servers may start later
    assert "Edit(src/**)" not in text
    engine.tool_pool()
    assert len([m for level, m in bridge.messages if level == "warning"]) == len(warnings)


async def test_a_search_tool_reaching_an_ask_rule_asks(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(ask=["Read(config/**)"], tools=[*all_tools(), GrepTool()])
    decision = await judge(engine, "Grep", pattern="TOKEN")
    assert decision.behavior == "ask" and decision.rule == "Read(config/**)"
    assert "config/.env" in decision.reason
    decision = await judge(engine, "Grep", pattern="TOKEN", path=str(tree / "src"))
    assert decision.behavior == "allow", decision.reason
    # A deny rule is no question: the search runs and leaves the file out.
    engine = make_engine(deny=["Read(config/**)"], tools=[*all_tools(), GrepTool()])
    assert (await judge(engine, "Grep", pattern="TOKEN")).behavior == "allow"


# --------------------------------------------------------------------------- bypass mode


@pytest.mark.parametrize(
    "command",
    [
        'eval "$x"',
        "x=rm; $x victim.txt",
        'bash -c "$x"',
        "echo rm victim.txt | bash",
        "PS4='$(rm victim.txt)'; set -x; true",
        "shopt -s expand_aliases; alias ll='rm victim.txt'",
    ],
)
async def test_bypass_refuses_a_line_a_command_deny_rule_cannot_be_checked_on(
    make_engine: EngineFactory, tree: Path, command: str
) -> None:
    engine = make_engine(mode="bypassPermissions", deny=["Bash(rm:*)"])
    decision = await judge(engine, "Bash", command=command)
    assert decision.behavior == "deny" and decision.rule == "Bash(rm:*)", decision.reason
    # Without a deny rule for commands bypassPermissions runs it, as documented.
    engine = make_engine(mode="bypassPermissions", deny=["Read(secrets/**)"])
    assert (await judge(engine, "Bash", command=command)).behavior == "allow"


async def test_bypass_still_runs_what_it_understands(
    make_engine: EngineFactory, tree: Path
) -> None:
    engine = make_engine(mode="bypassPermissions", deny=["Bash(rm:*)"])
    for command in ("make -j4 && npm test", "trap 'echo bye' EXIT; ls"):
        assert (await judge(engine, "Bash", command=command)).behavior == "allow"
    assert (await judge(engine, "Bash", command="trap 'rm x' EXIT")).behavior == "deny"
