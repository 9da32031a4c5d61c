"""run_tool_use: each stage, their order, outcomes, interruption, batches."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.execution import ToolUse, partition_batch, run_tool_use
from codev_ls.engine.hooks import HookMessage, PostToolUseResult, PreToolUseResult
from codev_ls.engine.outcome import MessageUpdate, ProgressUpdate, StartedUpdate, ToolOutcome
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import (
    Progress,
    Tool,
    ToolError,
    ToolInterrupted,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionResult


class RecInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="what to echo")
    sleep: float = Field(default=0, description="seconds to sleep in call")
    fail_validation: bool = Field(default=False, description="validate_input refuses")
    raise_in_call: str | None = Field(default=None, description="raise this in call")


class Recorder(Tool):
    """A tool that records which of its stages ran, in order."""

    name = "Rec"
    aliases = ("Recorder",)
    input_model = RecInput

    def __init__(self, *, read_only: bool = True, safe: bool = True, limit: int = 100_000) -> None:
        self.log: list[str] = []
        self._read_only = read_only
        self._safe = safe
        self.max_result_size_chars = limit  # type: ignore[misc]

    def is_read_only(self, input: Any) -> bool:
        return self._read_only

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._safe

    async def validate_input(self, input: RecInput, ctx: ToolUseContext) -> ValidationResult:
        self.log.append("validate_input")
        if input.fail_validation:
            return ValidationResult.fail("text must not be refused")
        return ValidationResult.success()

    async def check_permissions(self, input: Any, ctx: ToolUseContext) -> PermissionResult:
        self.log.append("check_permissions")
        return PermissionResult.allow(input)

    async def call(self, input: RecInput, ctx: ToolUseContext, on_progress: Any) -> ToolResult:
        self.log.append("call")
        on_progress(Progress("ToolProgress", f"working on {input.text}"))
        if input.sleep:
            await asyncio.sleep(input.sleep)
        if input.raise_in_call == "tool_error":
            raise ToolError("the thing the model can fix")
        if input.raise_in_call:
            raise RuntimeError(input.raise_in_call)
        return ToolResult(f"echo {input.text}")

    def map_tool_result_to_block(self, result: ToolResult, tool_use_id: str) -> dict[str, Any]:
        self.log.append("map_result")
        return super().map_tool_result_to_block(result, tool_use_id)


class RecHooks:
    """A hook runner for the seam's contract: records calls, returns scripted results."""

    def __init__(
        self,
        log: list[str],
        pre: PreToolUseResult | None = None,
        post: PostToolUseResult | None = None,
    ) -> None:
        self.log = log
        self.pre = pre or PreToolUseResult()
        self.post = post or PostToolUseResult()

    async def run_pre_tool_use(
        self, tool: Tool, tool_input: dict, ctx: Any, on_progress: Any
    ) -> PreToolUseResult:
        self.log.append("pre_hooks")
        on_progress(Progress("HookProgress", "running hook check.sh"))
        return self.pre

    async def run_post_tool_use(
        self, tool: Tool, tool_input: dict, response: Any, ctx: Any, on_progress: Any
    ) -> PostToolUseResult:
        self.log.append("post_hooks")
        return self.post


def _engine(
    tmp_path: Path, *tools: Tool, answers: list[str] | None = None
) -> tuple[Engine, ScriptedBridge]:
    bridge = ScriptedBridge(answers=list(answers or []))  # type: ignore[arg-type]
    engine = Engine(tmp_path, bridge, base_tools=list(tools), data_root=tmp_path / "data")
    return engine, bridge


async def _collect(engine: Engine, use: ToolUse) -> list[Any]:
    return [u async for u in run_tool_use(use, engine.context(tool_use_id=use.id))]


async def test_stages_run_in_order_and_end_in_one_success_outcome(tmp_path: Path) -> None:
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    engine.hooks = RecHooks(rec.log)
    updates = await _collect(engine, ToolUse("t1", "Rec", {"text": "hi"}))
    assert rec.log == [
        "validate_input",
        "pre_hooks",
        "check_permissions",
        "call",
        "map_result",
        "post_hooks",
    ]
    assert isinstance(updates[0], StartedUpdate) and updates[0].title == "Rec: running"
    assert [u.progress.type for u in updates if isinstance(u, ProgressUpdate)] == [
        "HookProgress",
        "ToolProgress",
    ]
    outcomes = [u for u in updates if isinstance(u, ToolOutcome)]
    assert len(outcomes) == 1 and updates[-1] is outcomes[0]
    out = outcomes[0]
    assert (out.status, out.content, out.decision_source) == ("success", "echo hi", "config")
    assert out.to_protocol() == {
        "toolUseId": "t1",
        "toolName": "Rec",
        "status": "success",
        "content": "echo hi",
        "decisionSource": "config",
        "decisionReason": "Rec is read-only",
        "isError": False,
    }


async def test_unknown_tool_is_an_error_naming_it(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, Recorder())
    out = await engine.run_tool("Nope", {})
    assert out.status == "error"
    assert "No such tool available: Nope" in out.text()
    assert out.to_tool_result_block()["content"].startswith("<tool_use_error>")


async def test_alias_finds_the_tool(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, Recorder())
    out = await engine.run_tool("Recorder", {"text": "via alias"})
    assert out.status == "success" and out.tool_name == "Rec"


async def test_schema_error_names_fields_and_stops_before_validate_input(tmp_path: Path) -> None:
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    out = await engine.run_tool("Rec", {"txt": "typo"})
    assert out.status == "error"
    assert "`text` is required but missing" in out.text()
    assert "`txt` is not a known parameter" in out.text()
    assert rec.log == []


async def test_deferred_tool_schema_error_points_at_tool_search(tmp_path: Path) -> None:
    class Deferred(Recorder):
        name = "Later"
        aliases = ()
        should_defer = True

    from codev_ls.tools.tool_search import ToolSearchTool

    tool = Deferred()
    engine, _ = _engine(tmp_path, tool, ToolSearchTool())
    out = await engine.run_tool("Later", {})
    assert "ToolSearch" in out.text() and "select:Later" in out.text()
    engine.session.discovered_tools.add("Later")
    out = await engine.run_tool("Later", {})
    assert "ToolSearch" not in out.text()
    # Without ToolSearch in the pool nothing is deferred: the model had the full schema.
    engine.session.discovered_tools.clear()
    out = await engine.run_tool("Later", {}, tools=[tool])
    assert "ToolSearch" not in out.text()


async def test_validate_input_refusal_is_its_message(tmp_path: Path) -> None:
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    out = await engine.run_tool("Rec", {"text": "x", "fail_validation": True})
    assert (out.status, out.text()) == ("error", "text must not be refused")
    assert rec.log == ["validate_input"]


async def test_pre_hook_can_stop_update_input_and_decide(tmp_path: Path) -> None:
    rec = Recorder(read_only=False)
    engine, bridge = _engine(tmp_path, rec)
    engine.hooks = RecHooks(rec.log, PreToolUseResult(stop=True, stop_reason="policy says no"))
    out = await engine.run_tool("Rec", {"text": "x"})
    assert (out.status, out.decision_source, out.text()) == ("rejected", "hook", "policy says no")
    assert "call" not in rec.log

    rec.log.clear()
    engine.hooks = RecHooks(
        rec.log,
        PreToolUseResult(
            messages=[HookMessage("info", "hook says hello")],
            updated_input={"text": "rewritten"},
            decision=PermissionResult.allow(reason="hook allowed it"),
            additional_context=["remember the hook"],
        ),
    )
    updates = await _collect(engine, ToolUse("t2", "Rec", {"text": "original"}))
    out = updates[-1]
    assert out.status == "success" and out.decision_source == "hook"
    assert out.content == "echo rewritten\n\nremember the hook"
    assert bridge.requests == []  # the hook's allow skipped the prompt
    assert any(isinstance(u, MessageUpdate) and u.text == "hook says hello" for u in updates)

    engine.hooks = RecHooks(rec.log, PreToolUseResult(updated_input={"text": 5}))
    out = await engine.run_tool("Rec", {"text": "x"})
    assert out.status == "error" and "`text`" in out.text()


async def test_hook_input_goes_through_validate_input_and_is_shown(tmp_path: Path) -> None:
    """Gap D of the issue-3 audit: a hook's updatedInput skipped validate_input, and the
    progress title kept showing the original input."""
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    engine.hooks = RecHooks(
        rec.log,
        PreToolUseResult(
            updated_input={"text": "x", "fail_validation": True},
            decision=PermissionResult.allow(reason="hook allowed it"),
        ),
    )
    out = await engine.run_tool("Rec", {"text": "fine"})
    assert (out.status, out.text()) == ("error", "text must not be refused")
    assert "call" not in rec.log
    assert rec.log.count("validate_input") == 2

    rec.log.clear()
    engine.hooks = RecHooks(rec.log, PreToolUseResult(updated_input={"text": "rewritten"}))
    updates = await _collect(engine, ToolUse("t3", "Rec", {"text": "original"}))
    assert updates[-1].status == "success"
    notes = [u.progress.message for u in updates if isinstance(u, ProgressUpdate)]
    assert any("changed the input" in n for n in notes), notes


async def test_permission_asks_through_the_bridge(tmp_path: Path) -> None:
    rec = Recorder(read_only=False)
    engine, bridge = _engine(tmp_path, rec, answers=["reject", "allow_once"])
    out = await engine.run_tool("Rec", {"text": "x"})
    assert (out.status, out.decision_source) == ("rejected", "user_reject")
    assert "call" not in rec.log
    assert bridge.requests[0].tool_name == "Rec"
    out = await engine.run_tool("Rec", {"text": "x"})
    assert (out.status, out.decision_source) == ("success", "user_temporary")
    assert len(bridge.requests) == 2


async def test_tool_exceptions_become_error_outcomes(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, Recorder())
    out = await engine.run_tool("Rec", {"text": "x", "raise_in_call": "tool_error"})
    assert (out.status, out.text()) == ("error", "the thing the model can fix")
    out = await engine.run_tool("Rec", {"text": "x", "raise_in_call": "kaboom"})
    assert out.status == "error"
    assert "Rec failed while running: RuntimeError: kaboom" in out.text()


async def test_large_results_are_persisted_with_a_preview(tmp_path: Path) -> None:
    class Big(Recorder):
        async def call(self, input: Any, ctx: Any, on_progress: Any) -> ToolResult:
            return ToolResult("".join(f"line {i}\n" for i in range(5000)))

    engine, _ = _engine(tmp_path, Big(limit=1000))
    out = await engine.run_tool("Rec", {"text": "x"})
    assert out.status == "success" and out.persisted_path
    saved = Path(out.persisted_path)
    assert saved.read_text().startswith("line 0\nline 1\n") and "line 4999" in saved.read_text()
    assert saved.is_relative_to(tmp_path / "data" / engine.session.id)
    assert str(saved) in out.text() and "line 0" in out.text() and "line 4999" in out.text()
    assert len(out.text()) < 4000

    small, _ = _engine(tmp_path, Recorder(limit=1000))
    out = await small.run_tool("Rec", {"text": "short"})
    assert out.persisted_path is None and out.content == "echo short"


async def test_persisting_to_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    class Big(Recorder):
        async def call(self, input: Any, ctx: Any, on_progress: Any) -> ToolResult:
            return ToolResult("x" * 5000)

    engine, _ = _engine(tmp_path, Big(limit=100))
    blocked = tmp_path / "data" / engine.session.id / "tool-results"
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the folder should be")
    out = await engine.run_tool("Rec", {"text": "x"})
    assert out.status == "error"
    assert "too large to return inline and could not be saved" in out.text()


async def test_post_hook_feedback_and_mcp_output_replacement(tmp_path: Path) -> None:
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    engine.hooks = RecHooks(
        rec.log,
        post=PostToolUseResult(block_reason="lint failed", updated_output="ignored for builtins"),
    )
    out = await engine.run_tool("Rec", {"text": "x"})
    assert out.content == "echo x\n\nPostToolUse hook feedback: lint failed"
    assert out.is_error is True

    class McpRec(Recorder):
        name = "mcp__srv__rec"
        aliases = ()
        source = "mcp"

    mcp = McpRec()
    engine, _ = _engine(tmp_path, mcp)
    engine.hooks = RecHooks(mcp.log, post=PostToolUseResult(updated_output="replaced by hook"))
    out = await engine.run_tool("mcp__srv__rec", {"text": "x"})
    assert out.content == "replaced by hook"


@pytest.mark.parametrize("stage", ["permission", "call"])
async def test_abort_signal_interrupts_at_any_stage(tmp_path: Path, stage: str) -> None:
    rec = Recorder(read_only=stage == "call")
    engine, bridge = _engine(tmp_path, rec)
    started = asyncio.Event()

    async def hanging_prompt(request: Any) -> Any:
        started.set()
        await asyncio.sleep(30)

    bridge.ask_permission = hanging_prompt  # type: ignore[method-assign]
    task = asyncio.ensure_future(
        engine.run_tool("Rec", {"text": "x", "sleep": 30}, tool_use_id="ab")
    )
    if stage == "permission":
        await asyncio.wait_for(started.wait(), 5)
    else:
        while "call" not in rec.log:
            await asyncio.sleep(0.01)
    t0 = time.monotonic()
    assert engine.cancel("ab") == 1
    out = await asyncio.wait_for(task, 5)
    assert out.status == "interrupted"
    assert time.monotonic() - t0 < 2
    assert out.to_tool_result_block()["content"] == "[Request interrupted by user for tool use]"
    assert [e.kind for e in bridge.progress][-1] == "end"


STAGES = ["validate_input", "pre_hooks", "check_permissions", "call", "map_result", "post_hooks"]


@pytest.mark.parametrize("raised", [ToolInterrupted, asyncio.CancelledError])
@pytest.mark.parametrize("stage", STAGES)
async def test_an_interruption_raised_in_any_stage_ends_interrupted(
    tmp_path: Path, stage: str, raised: type[BaseException]
) -> None:
    """Not only call(): a hook runner, validate_input or the result mapping may learn of
    the interruption first (its own abort check). No catch-all may turn that into an
    error, an "ask", or a crash, and no later stage may run."""

    def interrupt_at(here: str) -> None:
        if here == stage:
            raise raised("interrupted in " + here)

    class Interrupting(Recorder):
        async def validate_input(self, input: Any, ctx: ToolUseContext) -> ValidationResult:
            verdict = await super().validate_input(input, ctx)
            interrupt_at("validate_input")
            return verdict

        async def check_permissions(self, input: Any, ctx: ToolUseContext) -> PermissionResult:
            decision = await super().check_permissions(input, ctx)
            interrupt_at("check_permissions")
            return decision

        async def call(self, input: Any, ctx: ToolUseContext, on_progress: Any) -> ToolResult:
            result = await super().call(input, ctx, on_progress)
            interrupt_at("call")
            return result

        def map_tool_result_to_block(self, result: ToolResult, tool_use_id: str) -> Any:
            block = super().map_tool_result_to_block(result, tool_use_id)
            interrupt_at("map_result")
            return block

    class InterruptingHooks(RecHooks):
        async def run_pre_tool_use(self, *args: Any) -> PreToolUseResult:
            result = await super().run_pre_tool_use(*args)
            interrupt_at("pre_hooks")
            return result

        async def run_post_tool_use(self, *args: Any) -> PostToolUseResult:
            result = await super().run_post_tool_use(*args)
            interrupt_at("post_hooks")
            return result

    rec = Interrupting()
    engine, bridge = _engine(tmp_path, rec)
    engine.hooks = InterruptingHooks(rec.log)
    updates = await _collect(engine, ToolUse("t", "Rec", {"text": "x"}))
    outcome = updates[-1]
    assert isinstance(outcome, ToolOutcome)
    assert outcome.status == "interrupted", outcome.text()
    assert outcome.text() == "[Request interrupted by user for tool use]"
    # The stage ran, and nothing after it.
    assert rec.log == STAGES[: STAGES.index(stage) + 1]
    assert not [u for u in updates if isinstance(u, MessageUpdate) and u.level == "error"]
    assert bridge.requests == []  # never turned into a permission question


async def test_task_cancellation_interrupts_and_runs_clean_up(tmp_path: Path) -> None:
    cleaned = asyncio.Event()

    class Cleaner(Recorder):
        async def call(self, input: Any, ctx: Any, on_progress: Any) -> ToolResult:
            self.log.append("call")
            try:
                await asyncio.sleep(30)
            finally:
                cleaned.set()
            return ToolResult("never")

    rec = Cleaner()
    engine, _ = _engine(tmp_path, rec)
    task = asyncio.ensure_future(engine.run_tool("Rec", {"text": "x"}))
    while "call" not in rec.log:
        await asyncio.sleep(0.01)
    task.cancel()
    out = await asyncio.wait_for(task, 5)
    assert out.status == "interrupted"
    assert cleaned.is_set()


async def test_abort_before_start_never_calls_the_tool(tmp_path: Path) -> None:
    rec = Recorder()
    engine, _ = _engine(tmp_path, rec)
    ctx = engine.context()
    ctx.abort.abort()
    updates = [u async for u in run_tool_use(ToolUse("t", "Rec", {"text": "x"}), ctx)]
    assert updates[-1].status == "interrupted"
    assert "call" not in rec.log


async def test_a_writer_interrupted_mid_write_leaves_no_half_file(tmp_path: Path) -> None:
    from codev_ls.engine.files import atomic_write_text

    target = tmp_path / "out.txt"
    target.write_text("old content")

    class Writer(Recorder):
        async def call(self, input: Any, ctx: Any, on_progress: Any) -> ToolResult:
            self.log.append("call")
            await asyncio.sleep(30)  # interrupted here, before the atomic write
            atomic_write_text(target, "new content")
            return ToolResult("written")

    rec = Writer()
    engine, _ = _engine(tmp_path, rec)
    task = asyncio.ensure_future(engine.run_tool("Rec", {"text": "x"}, tool_use_id="w"))
    while "call" not in rec.log:
        await asyncio.sleep(0.01)
    engine.cancel("w")
    assert (await task).status == "interrupted"
    assert target.read_text() == "old content"
    assert [p.name for p in tmp_path.iterdir() if "codev-tmp" in p.name] == []


async def test_four_one_second_safe_calls_run_in_parallel(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, Recorder(safe=True))
    uses = [ToolUse(f"p{i}", "Rec", {"text": str(i), "sleep": 1}) for i in range(4)]
    t0 = time.monotonic()
    outs = await engine.run_batch(uses)
    elapsed = time.monotonic() - t0
    assert elapsed < 2.5, f"four 1 s calls took {elapsed:.2f} s"
    assert [o.tool_use_id for o in outs] == ["p0", "p1", "p2", "p3"]
    assert [o.content for o in outs] == ["echo 0", "echo 1", "echo 2", "echo 3"]


async def test_unsafe_calls_run_one_at_a_time_in_order(tmp_path: Path) -> None:
    order: list[str] = []

    class Serial(Recorder):
        async def call(self, input: Any, ctx: Any, on_progress: Any) -> ToolResult:
            order.append(f"start {input.text}")
            await asyncio.sleep(input.sleep)
            order.append(f"end {input.text}")
            return ToolResult(input.text)

    engine, _ = _engine(tmp_path, Serial(safe=False))
    uses = [ToolUse(f"s{i}", "Rec", {"text": str(i), "sleep": 0.2 - 0.05 * i}) for i in range(3)]
    outs = await engine.run_batch(uses)
    assert order == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert [o.content for o in outs] == ["0", "1", "2"]


class UnsafeRec(Recorder):
    name = "Unsafe"
    aliases = ()


def test_partition_groups_consecutive_safe_uses() -> None:
    tools = [Recorder(safe=True), UnsafeRec(safe=False)]
    uses = [
        ToolUse("a", "Rec", {"text": "1"}),
        ToolUse("b", "Rec", {"text": "2"}),
        ToolUse("c", "Unsafe", {"text": "3"}),
        ToolUse("d", "Rec", {"text": "4"}),
        ToolUse("e", "Nope", {}),
        ToolUse("f", "Rec", {"bad": 1}),
    ]
    assert partition_batch(tools, uses) == [[0, 1], [2], [3], [4], [5]]


async def test_progress_events_reach_the_bridge_with_a_cancel_button(tmp_path: Path) -> None:
    engine, bridge = _engine(tmp_path, Recorder())
    await engine.run_tool("Rec", {"text": "x"}, tool_use_id="pg")
    kinds = [(e.kind, e.tool_use_id) for e in bridge.progress]
    assert kinds == [("begin", "pg"), ("report", "pg"), ("end", "pg")]
    assert bridge.progress[0].title == "Rec: running" and bridge.progress[0].cancel is not None
    assert bridge.progress[1].message == "working on x"


async def test_error_messages_that_echo_huge_inputs_are_cut(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, Recorder())
    out = await engine.run_tool("Rec", {"text": "x", "raise_in_call": "y" * 1_000_000})
    assert out.status == "error"
    assert len(out.text()) < 9_000
    assert "characters cut" in out.text() and out.text().startswith("Rec failed while running")
