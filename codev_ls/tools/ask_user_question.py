"""AskUserQuestion: the model asks the user a multiple-choice question in the editor.

Each question goes through ``ctx.bridge.ask_question`` (over LSP a
``window/showMessageRequest`` whose actions are the options); the chosen
option's label — or "dismissed" — goes back to the model. A ``multiSelect``
question lets the user choose several options (or none): the LSP bridge asks
again with the remaining options and "Done" until the user is done, the
terminal takes "1,3"; all chosen labels go back.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.bridge import Question, QuestionAnswer
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import ProgressCallback, Tool, ToolResult, ValidationResult
from codev_ls.permissions.types import PermissionSubject

PROMPT = """\
Asks the user one to four multiple-choice questions in the editor and returns their answers.
Use it when you need the user's decision to go on: a choice between approaches, a missing \
requirement, a preference. Do not use it for things you can find out yourself with the tools.
- Each question has a short `header` (a label of at most 12 characters), 2 to 4 `options` \
(each a `label` of a few words and a `description` of what it means), and `multiSelect` when \
several options may be chosen: then the user picks any number of them (possibly none) and you \
get every chosen label.
- The user may dismiss a question; then decide sensibly yourself or stop and explain.
- In plan mode, use ExitPlanMode (not this tool) to ask for approval of your plan."""


class QuestionOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="The option's text shown to the user (1-5 words).")
    description: str = Field(
        default="", description="What choosing this option means, or its trade-offs."
    )


class QuestionItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    question: str = Field(description="The complete question, ending with a question mark.")
    header: str = Field(default="", description="A very short label for the question (≤12 chars).")
    options: list[QuestionOption] = Field(
        min_length=2, max_length=4, description="The choices (2 to 4)."
    )
    multi_select: bool = Field(
        default=False,
        alias="multiSelect",
        description="Whether the user may pick several options (any number, none too).",
    )


class AskUserQuestionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[QuestionItem] = Field(
        min_length=1, max_length=4, description="The questions to ask (1 to 4)."
    )


class AskUserQuestionTool(Tool):
    name = "AskUserQuestion"
    search_hint = "ask the user a multiple choice question"
    input_model = AskUserQuestionInput

    def description(self) -> str:
        return "Ask the user multiple-choice questions and get their answers."

    def prompt(self) -> str:
        return PROMPT

    # Asking changes nothing; the user answers in the editor (no separate permission).
    def is_read_only(self, input: Any) -> bool:
        return True

    def user_facing_name(self, input: Any = None) -> str:
        return "Question"

    def get_activity_description(self, input: AskUserQuestionInput) -> str:
        return "waiting for your answer"

    def render_tool_use_message(self, input: AskUserQuestionInput) -> str:
        return "; ".join(q.question for q in input.questions)

    def permission_subject(
        self, input: AskUserQuestionInput, ctx: ToolUseContext
    ) -> PermissionSubject:
        return PermissionSubject(summary=f"ask: {self.render_tool_use_message(input)[:200]}")

    async def validate_input(
        self, input: AskUserQuestionInput, ctx: ToolUseContext
    ) -> ValidationResult:
        for q in input.questions:
            labels = [o.label.strip() for o in q.options]
            if any(not label for label in labels):
                return ValidationResult.fail(f"Every option needs a label ({q.question!r}).")
            if len(set(labels)) != len(labels):
                return ValidationResult.fail(
                    f"The options of {q.question!r} must have different labels."
                )
        if ctx.session.depth > 0:
            return ValidationResult.fail(
                "A sub-agent cannot ask the user questions: decide yourself, or end with a "
                "report that names what needs the user's decision."
            )
        return ValidationResult.success()

    async def call(
        self, input: AskUserQuestionInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        answers: list[tuple[str, QuestionAnswer]] = []
        for q in input.questions:
            labels = [o.label.strip() for o in q.options]
            text = q.question
            details = [f"{o.label}: {o.description}" for o in q.options if o.description]
            if details:
                text += "\n" + "\n".join(details)
            answer = await ctx.bridge.ask_question(
                Question(
                    question=text, options=labels, header=q.header, multi_select=q.multi_select
                )
            )
            if q.multi_select and isinstance(answer, str):
                answer = [answer]  # a bridge that can only take one answer
            answers.append((q.question, answer))
        lines = [f'"{question}" = {_render(answer)}' for question, answer in answers]
        if all(a is None for _, a in answers):
            text = (
                "The user dismissed the question(s) without answering:\n"
                + "\n".join(lines)
                + "\nDo not ask again; go on with a sensible default or stop and explain."
            )
        else:
            text = (
                "The user answered your questions:\n"
                + "\n".join(lines)
                + "\nGo on with these answers in mind."
            )
        return ToolResult(text, meta={"answers": [a for _, a in answers]})


def _render(answer: QuestionAnswer) -> str:
    """An answer as the model reads it: "A", or "A", "B" for several, or why there is none."""
    if answer is None:
        return "(dismissed without an answer)"
    if isinstance(answer, str):
        return f'"{answer}"'
    if not answer:
        return "(none of the options chosen)"
    return ", ".join(f'"{a}"' for a in answer)
