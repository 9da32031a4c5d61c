"""The one permission decision of the lifecycle (stage 5).

``decide`` judges a tool use against the mode and the rules without asking
anyone; ``resolve_permission`` combines that with the tool's own check and a
PreToolUse hook's decision, and asks the user through the bridge when the
answer is "ask".

Precedence: deny rules, then ask rules, then allow rules, then the mode. A
hook's ``allow`` skips the prompt but never overrides a deny rule; its ``ask``
forces a prompt; its ``deny`` refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codev_ls.bridge import PermissionRequest
from codev_ls.permissions.rules import parse_rule
from codev_ls.permissions.types import PermissionResult

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.engine.tool import Tool


PLAN_MODE_MESSAGE = (
    "Plan mode is on: {tool} is not read-only, so it cannot run now. "
    "Keep exploring with read-only tools, then present your plan (ExitPlanMode) "
    "for the user to approve."
)


async def decide(tool: Tool, input: Any, ctx: ToolUseContext) -> PermissionResult:
    """Mode and rules, without asking: allow, deny or ask, with source and rule."""
    pctx = ctx.engine.permission_context
    deny = pctx.denies_whole_tool(tool.name)
    if deny is not None:
        return PermissionResult.deny(
            f"{tool.name} is denied by the rule {deny.text} ({deny.origin} settings).",
            rule=deny.text,
        )
    mode = ctx.mode
    read_only = _safe(lambda: tool.is_read_only(input), False)
    if mode == "bypassPermissions":
        return PermissionResult.allow(input, "bypassPermissions mode", source="config")
    if mode == "plan" and not read_only:
        return PermissionResult.deny(PLAN_MODE_MESSAGE.format(tool=tool.name))
    for rule in [*pctx.allow, *pctx.session_allow]:
        if rule.names_whole_tool(tool.name):
            source = "user_temporary" if rule.origin == "session" else "config"
            return PermissionResult.allow(input, f"allowed by {rule.text}", source, rule.text)
    if read_only:
        return PermissionResult.allow(input, f"{tool.name} is read-only", source="config")
    return PermissionResult.ask(f"{tool.name} may change things", suggestions=[tool.name])


async def resolve_permission(
    tool: Tool,
    input: Any,
    ctx: ToolUseContext,
    hook_decision: PermissionResult | None = None,
) -> PermissionResult:
    """The final decision for one use, asking the user when needed."""
    own = await tool.check_permissions(input, ctx)
    if own.behavior == "deny":
        own.source = own.source or "config"
        return own
    if own.updated_input is not None:
        input = own.updated_input
    decision = await decide(tool, input, ctx)
    if decision.behavior == "allow" and decision.updated_input is None:
        decision.updated_input = input
    if hook_decision is not None and decision.behavior != "deny":
        if hook_decision.behavior == "deny":
            return PermissionResult.deny(
                hook_decision.reason or "a PreToolUse hook denied this tool use", source="hook"
            )
        if hook_decision.behavior == "allow":
            return PermissionResult.allow(input, hook_decision.reason, source="hook")
        if hook_decision.behavior == "ask":
            decision = PermissionResult.ask(
                hook_decision.reason or "a PreToolUse hook asks for confirmation",
                suggestions=decision.suggestions,
            )
    if own.behavior == "ask" and decision.behavior == "allow" and decision.source != "hook":
        decision = own
    if decision.behavior != "ask":
        return decision
    return await ask_user(tool, input, ctx, decision)


async def ask_user(
    tool: Tool, input: Any, ctx: ToolUseContext, decision: PermissionResult
) -> PermissionResult:
    """Put the question to the user through the bridge and turn the answer into a decision."""
    if getattr(tool, "edit_preview", False) and ctx.bridge.capabilities.edit_preview_approval:
        # The editor's preview of the edit is the approval: the tool applies the edit
        # with needsConfirmation and raises ToolRejected if the user refuses it.
        ctx.edit_preview_approval = True
        return PermissionResult.allow(
            input, "approved in the editor's edit preview", "user_temporary"
        )
    subject = tool.permission_subject(input, ctx)
    rule = decision.suggestions[0] if decision.suggestions else None
    request = PermissionRequest(
        tool_use_id=ctx.tool_use_id,
        tool_name=tool.name,
        message=f"{tool.user_facing_name(input)}: {subject.summary}",
        detail=subject.detail,
        reason=decision.reason,
        session_rule=rule,
        always_rule=rule,
    )
    try:
        answer = await ctx.bridge.ask_permission(request)
    except Exception as exc:  # a lost editor is a rejection, never an allow
        return PermissionResult.deny(
            f"The permission question could not be answered ({type(exc).__name__}); rejected.",
            source="user_reject",
        )
    if answer.choice == "allow_once":
        return PermissionResult.allow(input, "allowed once by the user", "user_temporary")
    if answer.choice in ("allow_session", "allow_always") and rule:
        kept = parse_rule(rule, origin="session")
        ctx.engine.permission_context.session_allow.append(kept)
        source = "user_permanent" if answer.choice == "allow_always" else "user_temporary"
        return PermissionResult.allow(input, f"allowed by the user ({rule})", source, rule)
    reason = "the user rejected it"
    if answer.feedback:
        reason += f": {answer.feedback}"
    return PermissionResult.deny(reason, source="user_reject")


def _safe(fn: Any, default: bool) -> bool:
    try:
        return bool(fn())
    except Exception:
        return default
