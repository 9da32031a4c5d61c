"""Agent (alias Task): hand a task to a sub-agent with its own context and tools.

The sub-agent runs the same agent loop in a session of its own (depth + 1):
its own history, the tool pool of its type (``.codev/agents/*.md`` or the
built-in general-purpose one) minus what a sub-agent may not use, a
permission mode never more permissive than the caller's. Its tool calls go
through the same lifecycle and rules (the user is asked as usual). Its final
message is the report returned to the caller; AgentProgress shows its current
step in the editor.

- ``run_in_background``: returns a task id at once; TaskOutput reads the
  agent's steps and report, TaskStop interrupts it.
- ``isolation: "worktree"``: runs it in a temporary git worktree and reports
  the diff of what it changed (the worktree is kept when it changed anything).
- Depth is limited (``CODEV_AGENT_MAX_DEPTH``, default 1: sub-agents cannot
  start sub-agents).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import AbortSignal, Session, ToolUseContext
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.model.agents import (
    GENERAL_PURPOSE,
    AgentType,
    clamp_mode,
    find_agent_types,
    mode_allowed_under,
)
from codev_ls.permissions.types import PermissionMode, PermissionResult, PermissionSubject

if TYPE_CHECKING:
    from codev_ls.model.events import ChatEvent
    from codev_ls.model.service import ModelService

DEFAULT_MAX_DEPTH = 1
# Tools a sub-agent never gets: it cannot talk to the user or leave the caller's plan mode.
SUBAGENT_EXCLUDED = frozenset({"AskUserQuestion", "ExitPlanMode"})

PROMPT = """\
Starts a sub-agent: an autonomous agent with its own context that carries out a task and \
returns a report. Use it for broad searches or research that would fill your context, and for \
independent pieces of work that can run in parallel (several Agent calls in one message).
- `description`: 3-5 words saying what it does; `prompt`: the full task, with everything the \
agent needs to know (it does not see this conversation) and what its report should contain.
- `subagent_type`: which kind of agent (see the list below; default general-purpose).
- `run_in_background`: start it and go on; read its output later with TaskOutput (task id).
- `isolation: "worktree"`: let it work in a temporary git worktree; you get the diff back.
- `mode`: its permission mode (never more permissive than yours: under auto it may be auto, \
default or plan; under acceptEdits, acceptEdits, default or plan). In plan mode, use \
`mode: "plan"` to research with a sub-agent.
- The agent's report is not shown to the user: summarize what matters for them."""


class AgentInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(description="A short (3-5 words) description of the task.")
    prompt: str = Field(description="The task for the agent to perform, in full.")
    subagent_type: str | None = Field(
        default=None, description="The type of agent to use (default: general-purpose)."
    )
    model: str | None = Field(
        default=None,
        description="The model for the agent: sonnet, opus, haiku, inherit, or a model name.",
    )
    run_in_background: bool = Field(
        default=False,
        description="Run the agent in the background and return a task id for TaskOutput.",
    )
    name: str | None = Field(default=None, description="A name for the agent (shown to the user).")
    team_name: str | None = Field(
        default=None, description="The team the agent belongs to (a label for the user)."
    )
    mode: PermissionMode | None = Field(
        default=None,
        description="The agent's permission mode; never more permissive than yours.",
    )
    isolation: Literal["worktree"] | None = Field(
        default=None, description='"worktree" runs the agent in a temporary git worktree.'
    )
    cwd: str | None = Field(
        default=None, description="The agent's working directory (absolute; default yours)."
    )


def max_depth() -> int:
    try:
        return int(os.environ.get("CODEV_AGENT_MAX_DEPTH", DEFAULT_MAX_DEPTH))
    except ValueError:
        return DEFAULT_MAX_DEPTH


class AgentTool(Tool):
    name = "Agent"
    aliases = ("Task",)
    search_hint = "delegate a task to a sub-agent subagent"
    input_model = AgentInput
    progress_type = "AgentProgress"

    def description(self) -> str:
        return "Start a sub-agent that carries out a task on its own and reports back."

    def prompt(self) -> str:
        return PROMPT

    def _types_listing(self, session: Session) -> str:
        types, _ = find_agent_types(session.root)
        lines = []
        for t in types.values():
            tools = ", ".join(t.tools) if t.tools else "all tools"
            lines.append(f"- {t.name}: {t.description or '(no description)'} (Tools: {tools})")
        return "\n".join(lines)

    def prompt_for(self, session: Session) -> str:
        return f"{PROMPT}\n\nAvailable agent types:\n{self._types_listing(session)}"

    def description_for(self, session: Session) -> str:
        return (
            "Start a sub-agent that carries out a task on its own and reports back. "
            f"Agent types:\n{self._types_listing(session)}"
        )

    # A sub-agent in plan mode changes nothing; otherwise it may (through its own tools).
    def is_read_only(self, input: AgentInput) -> bool:
        return input.mode == "plan"

    def is_concurrency_safe(self, input: AgentInput) -> bool:
        return input.isolation == "worktree" or input.mode == "plan"

    def user_facing_name(self, input: Any = None) -> str:
        if isinstance(input, AgentInput) and input.name:
            return f"Agent {input.name}"
        return "Agent"

    def get_activity_description(self, input: AgentInput) -> str:
        return input.description[:80]

    def render_tool_use_message(self, input: AgentInput) -> str:
        kind = input.subagent_type or GENERAL_PURPOSE
        return f"Agent ({kind}): {input.description}"

    async def check_permissions(self, input: AgentInput, ctx: ToolUseContext) -> PermissionResult:
        """In plan mode a sub-agent is a plan-mode (read-only) researcher: say so in its input."""
        if ctx.mode == "plan" and input.mode != "plan":
            return PermissionResult.allow(updated_input=input.model_copy(update={"mode": "plan"}))
        return PermissionResult.allow(updated_input=input)

    def permission_subject(self, input: AgentInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(
            summary=f"start a sub-agent: {input.description}", detail=input.prompt[:2000]
        )

    def to_auto_classifier_input(self, input: AgentInput) -> str:
        return input.prompt[:500]

    async def validate_input(self, input: AgentInput, ctx: ToolUseContext) -> ValidationResult:
        if ctx.engine.services.get("model") is None:
            return ValidationResult.fail(
                "The Agent tool needs a model, and none is configured (ANTHROPIC_API_KEY, or "
                "CODEV_PROVIDER=openai with OPENAI_API_KEY/OPENAI_BASE_URL)."
            )
        if ctx.session.depth >= max_depth():
            return ValidationResult.fail(
                f"Sub-agents cannot start further sub-agents (depth limit {max_depth()}). "
                "Do the work yourself."
            )
        if not input.prompt.strip():
            return ValidationResult.fail("prompt must not be empty: give the agent its task.")
        types, problems = find_agent_types(ctx.root)
        kind = input.subagent_type or GENERAL_PURPOSE
        if kind not in types:
            extra = f" (skipped: {'; '.join(problems)})" if problems else ""
            return ValidationResult.fail(
                f"Unknown subagent_type {kind!r}. Available: {', '.join(sorted(types))}.{extra}"
            )
        if input.cwd is not None:
            cwd = Path(input.cwd)
            if not cwd.is_absolute():
                return ValidationResult.fail(f"cwd must be an absolute path, got {input.cwd!r}.")
            if not cwd.is_dir():
                return ValidationResult.fail(f"cwd {input.cwd} is not a folder.")
        return ValidationResult.success()

    # ---------------------------------------------------------------- running

    def _pool(self, ctx: ToolUseContext, agent: AgentType, depth: int) -> list[Tool]:
        pool = [t for t in ctx.tools if t.name not in SUBAGENT_EXCLUDED]
        if depth >= max_depth():
            pool = [t for t in pool if t.name != self.name]
        if agent.tools is not None:
            wanted = set(agent.tools)
            keep = [t for t in pool if t.name in wanted or wanted & set(t.aliases)]
            # Loading deferred tools stays possible when any of them is wanted.
            search = [t for t in pool if t.name == "ToolSearch" and t not in keep]
            pool = keep + search
        return pool

    async def call(
        self, input: AgentInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        service: ModelService = ctx.engine.services["model"]
        types, _ = find_agent_types(ctx.root)
        agent = types[input.subagent_type or GENERAL_PURPOSE]
        parent_mode = ctx.mode
        requested = input.mode or agent.permission_mode
        mode = clamp_mode(requested, parent_mode)
        notes = []
        if requested and mode != requested:
            if mode_allowed_under(parent_mode, requested):
                why = f"is more permissive than yours ({parent_mode!r})"
            else:
                why = (
                    f"allows what yours ({parent_mode!r}) does not (acceptEdits approves "
                    "every edit; auto leaves edits and commands to the classifier)"
                )
            notes.append(f"The requested mode {requested!r} {why}, so the agent ran in {mode!r}.")
        model = service.config.resolve_model(input.model or agent.model)
        label = input.name or agent.name

        if input.run_in_background:
            from codev_ls.model.background import start_background

            async def run_bg(task: Any) -> str:
                def step(message: str) -> None:
                    task.write(f"{message}\n")

                return await self._run(
                    input, ctx, service, agent, mode, model, task.abort, step, notes
                )

            task = start_background(
                ctx.engine,
                description=input.description,
                session_id=ctx.session.id,
                output_dir=ctx.session.data_dir / "tasks",
                run=run_bg,
            )
            on_progress(
                Progress(type="AgentProgress", message=f"started in the background: {task.id}")
            )
            return ToolResult(
                f"The agent {label!r} is running in the background with task id {task.id}. "
                f"Read its progress and final report with TaskOutput (task_id {task.id!r}); "
                "stop it with TaskStop. Go on with other work meanwhile.",
                meta={"taskId": task.id, "background": True},
            )

        def step(message: str) -> None:
            on_progress(Progress(type="AgentProgress", message=message))

        report = await self._run(input, ctx, service, agent, mode, model, ctx.abort, step, notes)
        return ToolResult(report, meta={"agentType": agent.name, "mode": mode})

    async def _run(
        self,
        input: AgentInput,
        ctx: ToolUseContext,
        service: ModelService,
        agent: AgentType,
        mode: PermissionMode,
        model: str,
        abort: AbortSignal,
        step: Any,
        notes: list[str],
    ) -> str:
        from codev_ls.model import worktree as wt
        from codev_ls.model.events import StatusEvent, TextEvent, ToolResultEvent, ToolUseEvent
        from codev_ls.model.history import conversation_of
        from codev_ls.model.loop import TurnOptions

        depth = ctx.session.depth + 1
        tree = None
        root = ctx.session.root
        cwd = Path(input.cwd) if input.cwd else ctx.session.cwd
        if input.isolation == "worktree":
            tree = await wt.create(ctx.session.root, label=f"agent-{agent.name}")
            root = tree.path
            rel = None
            if cwd is not None:
                try:
                    rel = Path(cwd).resolve().relative_to(tree.repo)
                except ValueError:
                    rel = None
            cwd = tree.path / rel if rel is not None else tree.path
        session = Session(
            root,
            data_root=ctx.session.data_root,
            cwd=cwd,
            mode=mode,
            depth=depth,
        )
        session.extras["parent_session"] = ctx.session.id
        pool = self._pool(ctx, agent, depth)
        uses = 0
        text_tail: list[str] = []

        def on_event(event: ChatEvent) -> None:
            nonlocal uses
            if isinstance(event, ToolUseEvent):
                uses += 1
                step(f"{event.name}: {_brief(event.input)}")
            elif isinstance(event, ToolResultEvent) and event.outcome.status != "success":
                step(f"{event.outcome.tool_name} {event.outcome.status}")
            elif isinstance(event, TextEvent):
                text_tail.append(event.delta)
            elif isinstance(event, StatusEvent) and event.message.startswith("Retrying"):
                step(event.message)

        step(f"starting ({agent.name}, {mode} mode)")
        # Listed among the engine's sessions while it runs; dropped (with its history and
        # read state) once the report is made — a sub-agent's session is never resumed, and
        # keeping each one would grow the server's memory with every Agent call.
        ctx.engine.sessions[session.id] = session
        try:
            result = await service.run_agent_turn(
                session,
                input.prompt,
                abort=abort,
                options=TurnOptions(
                    tools=pool, model=model, agent_prompt=agent.prompt, on_event=on_event
                ),
            )
            messages = conversation_of(session).messages
            final = ""
            for msg in reversed(messages):
                if msg["role"] == "assistant":
                    final = "".join(
                        b.get("text", "") for b in msg["content"] if b.get("type") == "text"
                    ).strip()
                    if final:
                        break
            parts = [final or "(The agent ended without a report.)"]
            if result.stop_reason == "cancelled":
                parts.append("(The agent was interrupted before it finished.)")
            elif result.stop_reason == "error":
                parts.append(f"(The agent stopped on an error: {result.error})")
            elif result.stop_reason == "max_turns":
                parts.append("(The agent hit its turn limit before it finished.)")
            if tree is not None:
                changes = await wt.diff(tree)
                if changes.strip():
                    parts.append(
                        f"The agent worked in the git worktree {tree.path} (kept; remove it "
                        f"with `git worktree remove --force {tree.path}`). Its changes against "
                        f"HEAD:\n```diff\n{changes}```"
                    )
                else:
                    parts.append(
                        "The agent worked in a temporary git worktree and changed nothing."
                    )
                    await wt.remove(tree)
                    tree = None
            parts.extend(notes)
            parts.append(f"[agent {agent.name}: {uses} tool use(s), {result.turns} model step(s)]")
            if result.stop_reason == "error" and not final:
                raise ToolError("\n\n".join(parts))
            return "\n\n".join(parts)
        finally:
            ctx.engine.end_session(session.id)
            if tree is not None and abort.aborted:
                # Interrupted: keep nothing half-done around unless it holds changes.
                try:
                    if not (await wt.diff(tree)).strip():
                        await wt.remove(tree)
                except Exception:
                    pass
            step("done")


def _brief(data: dict[str, Any]) -> str:
    for key in ("command", "file_path", "pattern", "query", "url", "description", "skill"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value[:120]
    return ""
