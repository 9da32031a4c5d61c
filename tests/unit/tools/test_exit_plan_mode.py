"""Plan mode: only read-only tools run; ExitPlanMode asks the user to approve the plan."""

from __future__ import annotations

from typing import Any

from codev_ls.bridge import ScriptedBridge
from tests.fakes.harness import FakeModel

PLAN = "1. Create notes.txt with a greeting.\n2. Done."


async def test_plan_approved_then_carried_out(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once", "allow_once"]))
    rig.engine.set_mode("plan")
    target = rig.root / "notes.txt"
    fake.push(
        fake.reply(("Write", {"file_path": str(target), "content": "hi\n"})),
        fake.reply("Here is my plan.", ("ExitPlanMode", {"plan": PLAN})),
        fake.reply(("Write", {"file_path": str(target), "content": "hi\n"})),
        fake.reply("Created notes.txt."),
    )
    result = await rig.chat("add a notes file")
    assert result.stop_reason == "end_turn"
    outcomes = rig.of_type("toolResult")
    assert [o["status"] for o in outcomes] == ["rejected", "success", "success"]
    assert "Plan mode is on" in outcomes[0]["content"]
    assert "Plan mode" in fake.system(fake.bodies[0])
    # The plan was shown to the user as a question, then the write was asked for.
    plan_q, write_q = rig.bridge.requests
    assert plan_q.tool_name == "ExitPlanMode" and plan_q.detail == PLAN
    assert plan_q.session_rule is None and plan_q.always_rule is None
    assert write_q.tool_name == "Write"
    assert rig.engine.mode == "default"
    assert target.read_text() == "hi\n"
    assert "approved your plan" in outcomes[1]["content"]
    assert "# Plan mode" not in fake.system(fake.bodies[3])


async def test_plan_rejected_keeps_planning(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["reject"]))
    rig.engine.set_mode("plan")
    fake.push(
        fake.reply(("ExitPlanMode", {"plan": PLAN})),
        fake.reply("I'll revise the plan."),
    )
    result = await rig.chat("add a notes file")
    assert result.stop_reason == "end_turn"
    outcome = rig.of_type("toolResult")[0]
    assert outcome["status"] == "rejected"
    assert "keep planning" in outcome["content"]
    assert rig.engine.mode == "plan"
    tid = outcome["toolUseId"]
    assert fake.result_errors(fake.bodies[1])[tid] is True


async def test_session_plan_mode_is_left_for_that_session_only(
    fake_anthropic: FakeModel, make_rig: Any
) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(answers=["allow_once"]))
    session = rig.service.chat_session("planner")
    session.mode = "plan"
    fake.push(fake.reply(("ExitPlanMode", {"plan": PLAN})), fake.reply("Go."))
    await rig.chat("plan it", session_id="planner")
    # The session follows the editor's mode again (default), which never was plan.
    assert session.mode is None
    assert rig.engine.mode == "default"


async def test_exit_plan_mode_outside_plan_mode(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    fake.push(fake.reply(("ExitPlanMode", {"plan": PLAN})), fake.reply("ok"))
    await rig.chat("x")
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert "Plan mode is not on" in text
    assert not rig.bridge.requests
