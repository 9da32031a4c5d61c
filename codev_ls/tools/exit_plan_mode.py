"""ExitPlanMode: in plan mode, the model presents its plan and the user approves it (or not).

The plan is shown in the editor as a permission-style question
(``ctx.bridge.ask_permission``: "Allow once" approves, "Reject" keeps
planning). On approval the session leaves plan mode — the session's own mode
when it has one, else the engine's (the mode the editor set) — and the model
may start changing things. On rejection the session stays in plan mode and
the model is told to keep planning, with the user's feedback if any.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.bridge import PermissionRequest
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import ProgressCallback, Tool, ToolRejected, ToolResult, ValidationResult
from codev_ls.permissions.types import PermissionMode, PermissionSubject

PROMPT = """\
Use this tool in plan mode, when your plan is ready, to present it to the user for approval.
- `plan` is the plan in Markdown: the steps, the files you will change and how, and how you \
will check the result. Be concrete and concise.
- If the user approves, plan mode ends and you can carry out the plan. If they reject it, stay \
in plan mode: revise the plan (take their feedback into account) and present it again.
- Use it only for tasks that need code changes; for questions or research, just answer."""

# The mode a session returns to when its plan is approved and nothing else was recorded.
AFTER_PLAN: PermissionMode = "default"


class ExitPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: str = Field(description="The plan to carry out, in Markdown, for the user to approve.")


class ExitPlanModeTool(Tool):
    name = "ExitPlanMode"
    search_hint = "present plan for approval leave plan mode"
    input_model = ExitPlanModeInput

    def description(self) -> str:
        return "Present your plan for the user's approval and leave plan mode."

    def prompt(self) -> str:
        return PROMPT

    # It changes nothing itself: it must run in plan mode, where only read-only tools run.
    def is_read_only(self, input: Any) -> bool:
        return True

    def user_facing_name(self, input: Any = None) -> str:
        return "Plan"

    def get_activity_description(self, input: ExitPlanModeInput) -> str:
        return "waiting for your approval"

    def render_tool_use_message(self, input: ExitPlanModeInput) -> str:
        first = input.plan.strip().splitlines()[0] if input.plan.strip() else ""
        return f"Plan: {first[:120]}"

    def permission_subject(
        self, input: ExitPlanModeInput, ctx: ToolUseContext
    ) -> PermissionSubject:
        return PermissionSubject(summary="present a plan", detail=input.plan)

    async def validate_input(
        self, input: ExitPlanModeInput, ctx: ToolUseContext
    ) -> ValidationResult:
        if ctx.mode != "plan":
            return ValidationResult.fail(
                "Plan mode is not on, so there is nothing to exit: go ahead with the task."
            )
        if not input.plan.strip():
            return ValidationResult.fail("plan must not be empty: write the plan to approve.")
        return ValidationResult.success()

    async def call(
        self, input: ExitPlanModeInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        request = PermissionRequest(
            tool_use_id=ctx.tool_use_id,
            tool_name=self.name,
            message="Codev has a plan. Approve it and leave plan mode?",
            detail=input.plan,
            reason="plan mode: the plan needs your approval before any change",
        )
        try:
            answer = await ctx.bridge.ask_permission(request)
        except Exception:
            answer = None
        if answer is None or answer.choice == "reject":
            feedback = f" The user said: {answer.feedback}" if answer and answer.feedback else ""
            raise ToolRejected(
                "the user did not approve the plan and wants to keep planning. Stay in plan "
                "mode: revise the plan (ask what should change if it is unclear) and present "
                f"it again with ExitPlanMode.{feedback}"
            )
        leave_plan_mode(ctx)
        return ToolResult(
            "The user approved your plan. Plan mode is off: you can now carry it out. "
            "Start with the first step."
        )


def leave_plan_mode(ctx: ToolUseContext) -> PermissionMode:
    """End plan mode for the session that asked; returns the mode it is in now."""
    session = ctx.session
    before = session.extras.pop("mode_before_plan", None)
    if session.mode == "plan":
        session.mode = before if before and before != "plan" else None
        if session.mode is None and ctx.engine.mode == "plan":
            session.mode = AFTER_PLAN
    elif ctx.engine.mode == "plan":
        ctx.engine.set_mode(before if before and before != "plan" else AFTER_PLAN)
    return ctx.mode
