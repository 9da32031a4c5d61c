"""Skill: .codev/skills/NAME/SKILL.md listed in the prompt and loaded on request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codev_ls.engine.context import Session
from codev_ls.tools.skill import SkillTool, find_skills
from tests.fakes.harness import FakeModel


def make_skill(root: Path, name: str, description: str, body: str, *, user: bool = False) -> Path:
    folder = (root if user else root / ".codev") / "skills" / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return path


async def test_skill_listed_and_loaded(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake)
    make_skill(
        rig.root, "release", "Cut a release of this project", "1. Bump the version.\n2. Tag it."
    )
    fake.push(fake.reply(("Skill", {"skill": "release"})), fake.reply("Following the skill."))
    result = await rig.chat("make a release")
    assert result.stop_reason == "end_turn"
    assert "release: Cut a release of this project" in fake.system(fake.bodies[0])
    loaded = next(iter(fake.results(fake.bodies[1]).values()))
    assert "1. Bump the version." in loaded
    assert str(rig.root / ".codev" / "skills" / "release") in loaded
    reports = [p.message for p in rig.bridge.progress if p.kind == "report"]
    assert "Loaded skill release" in reports


async def test_unknown_skill_names_the_available_ones(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake)
    make_skill(rig.root, "release", "Cut a release", "steps")
    fake.push(fake.reply(("Skill", {"skill": "deploy"})), fake.reply("ok"))
    await rig.chat("deploy")
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert "Unknown skill 'deploy'" in text and "release" in text


def test_user_skills_and_broken_files(workspace: Path, _isolated_config: Path) -> None:
    make_skill(workspace, "a", "workspace a", "from workspace")
    make_skill(_isolated_config, "a", "user a", "from user", user=True)
    make_skill(_isolated_config, "b", "user b", "user only", user=True)
    broken = workspace / ".codev" / "skills" / "bad"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody")
    skills = find_skills(workspace)
    assert skills["a"].body == "from workspace"
    assert skills["b"].body == "user only"
    assert "bad" not in skills and "[unclosed" not in str(list(skills))
    prompt = SkillTool().prompt_for(Session(workspace))
    assert "- a: workspace a" in prompt and "- b: user b" in prompt
