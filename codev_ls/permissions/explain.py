"""``explain``: what would decide a tool use, and why — without running it.

Used by ``codev-ls explain TOOL 'JSON'`` and the ``codev/explainPermission``
request. It runs the same decision function as a real use (rules, mode, the
tool's own check, the shell parse), lists the hooks that would run first (it
does not run them: they could have effects), and says which rule "Always
allow" would save. Nothing is asked, nothing is executed, nothing is logged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codev_ls.engine.context import Session
from codev_ls.engine.registry import find_tool, get_all_base_tools
from codev_ls.engine.tool import InputError, Tool
from codev_ls.permissions import shell
from codev_ls.permissions.decide import decide
from codev_ls.permissions.types import PermissionMode, PermissionSubject

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine


def _all_tools(engine: Engine) -> list[Tool]:
    """Every tool, including those a deny rule removed from the pool (to say so)."""
    base = engine.base_tools if engine.base_tools is not None else get_all_base_tools()
    return [*base, *engine.mcp_tools]


async def explain_permission(
    engine: Engine,
    tool_name: str,
    raw_input: Any,
    *,
    mode: PermissionMode | None = None,
) -> dict[str, Any]:
    """The decision a use would get, as JSON-ready data (``error`` set when it cannot say)."""
    engine.permission_context.refresh()
    tool = find_tool(_all_tools(engine), tool_name)
    effective_mode = mode or engine.mode
    out: dict[str, Any] = {"tool": tool_name, "mode": effective_mode, "input": raw_input}
    if tool is None:
        names = ", ".join(sorted(t.name for t in _all_tools(engine)))
        out["error"] = f"No such tool: {tool_name}. Tools: {names}."
        return out
    out["tool"] = tool.name
    try:
        parsed_input = tool.parse_input(raw_input)
    except InputError as exc:
        out["error"] = exc.message
        return out
    session = Session(engine.root, data_root=engine.data_root, mode=mode, cwd=engine.session.cwd)
    ctx = engine.context(session=session, tools=_all_tools(engine))
    own = await tool.check_permissions(parsed_input, ctx)
    out["ownCheck"] = {"behavior": own.behavior, "reason": own.reason}
    if own.behavior == "deny":
        out.update(decision="deny", source="config", rule=None, reason=own.reason, trace=[])
    else:
        if own.updated_input is not None:
            parsed_input = own.updated_input
        decision = await decide(tool, parsed_input, ctx, own=own)
        out.update(
            decision=decision.behavior,
            source=decision.source,
            rule=decision.rule,
            reason=decision.reason,
            trace=decision.trace,
        )
        if decision.behavior == "ask":
            out["wouldOffer"] = decision.suggestions
    try:
        subject = tool.permission_subject(parsed_input, ctx)
    except Exception as exc:
        subject = PermissionSubject(summary=f"({exc})")
    out["summary"] = subject.summary
    if subject.command is not None:
        out["shell"] = describe_command(subject.command)
    hooks = getattr(engine.hooks, "hooks_for", None)
    if callable(hooks):
        pre = [h.command for h in hooks("PreToolUse", tool)]
        post = [h.command for h in hooks("PostToolUse", tool)]
        out["hooks"] = {"PreToolUse": pre, "PostToolUse": post}
        if pre:
            out["note"] = (
                "PreToolUse hooks run before this decision and can allow, deny, ask or change "
                "the input; explain does not run them."
            )
    held = getattr(engine.services.get("settings"), "held_grants", None)
    if callable(held) and held():
        # Said, so that a rule that "does not work" is seen to be waiting for approval.
        out["heldSettings"] = [g.text for g in held()]
    return out


def describe_command(command: str) -> dict[str, Any]:
    """The shell parse as data: each simple command, and whether it is read-only."""
    parsed = shell.parse_command(command)
    return {
        "fullyUnderstood": parsed.fully_understood,
        "reasons": list(parsed.reasons),
        "commands": [
            {
                "argv": list(c.argv),
                "env": [f"{k}={v}" for k, v in c.env],
                "wrappers": list(c.wrappers),
                "readOnly": shell.command_problem(c) is None,
                "why": shell.command_problem(c),
            }
            for c in parsed.commands
        ],
        "writes": parsed.write_targets(),
        "readOnly": shell.read_only_problem(parsed) is None,
    }


def format_explanation(data: dict[str, Any]) -> str:
    """The explanation as text for a terminal."""
    import json

    lines = [f"{data.get('tool')} {json.dumps(data.get('input'), ensure_ascii=False)}"]
    if "error" in data:
        lines.append(f"Cannot explain: {data['error']}")
        return "\n".join(lines)
    source = f", source {data['source']}" if data.get("source") else ""
    rule = f", rule {data['rule']}" if data.get("rule") else ""
    lines.append(f"Decision: {data['decision']} (mode {data['mode']}{source}{rule})")
    if data.get("reason"):
        lines.append(f"Why: {data['reason']}")
    if data.get("trace"):
        lines.append("Steps:")
        lines.extend(f"  - {step}" for step in data["trace"])
    sh = data.get("shell")
    if sh:
        lines.append(
            "Shell parse: "
            + ("fully understood" if sh["fullyUnderstood"] else "NOT fully understood")
        )
        for reason in sh["reasons"]:
            lines.append(f"  ! {reason}")
        for c in sh["commands"]:
            words = " ".join([*c["env"], *c["argv"]]) or "(assignment)"
            via = f"  (through {', '.join(c['wrappers'])})" if c["wrappers"] else ""
            ro = "read-only" if c["readOnly"] else f"not read-only: {c['why']}"
            lines.append(f"  • {words}{via} — {ro}")
        if sh["writes"]:
            lines.append(f"  writes: {', '.join(sh['writes'])}")
    if data.get("wouldOffer"):
        lines.append(f'"Always allow" would save: {", ".join(data["wouldOffer"])}')
    elif data.get("decision") == "ask":
        lines.append('"Always allow" is not offered: no single rule would cover this use.')
    hooks = data.get("hooks") or {}
    for event in ("PreToolUse", "PostToolUse"):
        if hooks.get(event):
            lines.append(f"{event} hooks: {', '.join(hooks[event])}")
    if data.get("note"):
        lines.append(f"Note: {data['note']}")
    if data.get("heldSettings"):
        lines.append(
            "Not in force until you approve them (asked at the next tool use): "
            + "; ".join(data["heldSettings"])
        )
    return "\n".join(lines)
