"""Skill: instructions the user keeps in ``.codev/skills/NAME/SKILL.md``, loaded on request.

A skill is a folder with a ``SKILL.md`` (front matter ``name`` and
``description``, body the instructions) and whatever files the instructions
refer to. Skills come from the workspace (``<root>/.codev/skills``) and the
user's folder (``~/.codev/skills``; the workspace wins on a name clash). The
tool's prompt lists them; calling it returns the instructions, with the
skill's folder so that its files can be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.config import config_dir
from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.model import frontmatter
from codev_ls.permissions.types import PermissionSubject

if TYPE_CHECKING:
    from codev_ls.engine.context import Session

PROMPT = """\
Loads a skill: instructions the user wrote for a kind of task, with files that may come with it.
When the task matches a skill's description, load the skill first and follow its instructions.
- `skill` is the skill's name, as listed below; `args` optionally passes details.
- Do not load a skill that is not listed; do not load one again if it is already loaded."""


@dataclass(slots=True)
class SkillInfo:
    name: str
    description: str
    path: Path  # the SKILL.md file
    body: str


def skill_dirs(root: Path) -> list[Path]:
    return [root / ".codev" / "skills", config_dir() / "skills"]


def find_skills(root: Path) -> dict[str, SkillInfo]:
    """Skills by name (workspace first); broken ones are skipped."""
    skills: dict[str, SkillInfo] = {}
    for base in skill_dirs(root):
        try:
            folders = sorted(p for p in base.iterdir() if p.is_dir())
        except OSError:
            continue
        for folder in folders:
            path = folder / "SKILL.md"
            if not path.is_file():
                continue
            try:
                doc = frontmatter.read(path)
            except (OSError, frontmatter.FrontMatterError):
                continue
            name = str(doc.meta.get("name") or folder.name).strip()
            description = str(doc.meta.get("description") or "").strip()
            if name and name not in skills:
                skills[name] = SkillInfo(name, description, path, doc.body)
    return skills


class SkillInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill: str = Field(description="The name of the skill to load, as listed.")
    args: str | None = Field(default=None, description="Optional details for the skill.")


class SkillTool(Tool):
    name = "Skill"
    search_hint = "load a skill instructions SKILL.md"
    input_model = SkillInput
    progress_type = "SkillToolProgress"

    def description(self) -> str:
        return "Load a skill (the user's instructions for a kind of task)."

    def prompt(self) -> str:
        return PROMPT

    def prompt_for(self, session: Session) -> str:
        skills = find_skills(session.root)
        if not skills:
            return PROMPT + "\n\nNo skills are available in this workspace."
        listing = "\n".join(
            f"- {s.name}: {s.description or '(no description)'}" for s in skills.values()
        )
        return f"{PROMPT}\n\nAvailable skills:\n{listing}"

    def description_for(self, session: Session) -> str:
        names = ", ".join(find_skills(session.root)) or "none"
        return f"Load a skill (the user's instructions for a kind of task). Available: {names}."

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: SkillInput) -> str:
        return f"loading skill {input.skill}"

    def permission_subject(self, input: SkillInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f"load skill {input.skill}")

    async def validate_input(self, input: SkillInput, ctx: ToolUseContext) -> ValidationResult:
        skills = find_skills(ctx.root)
        if input.skill.strip().lstrip("/") not in skills:
            names = ", ".join(sorted(skills)) or "none"
            return ValidationResult.fail(
                f"Unknown skill {input.skill!r}. Available skills: {names}."
            )
        return ValidationResult.success()

    async def call(
        self, input: SkillInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        name = input.skill.strip().lstrip("/")
        info = find_skills(ctx.root).get(name)
        if info is None:
            raise ToolError(f"The skill {name!r} disappeared before it could be loaded.")
        on_progress(Progress(type="SkillToolProgress", message=f"Loaded skill {name}"))
        loaded = ctx.session.extras.setdefault("loaded_skills", [])
        if name not in loaded:
            loaded.append(name)
        text = (
            f'<skill name="{name}">\nBase directory of this skill: {info.path.parent}\n'
            f"(Paths in the instructions are relative to it.)\n\n{info.body}\n</skill>"
        )
        if input.args:
            text += f"\n\nArguments: {input.args}"
        return ToolResult(text, meta={"skill": name, "path": str(info.path)})
