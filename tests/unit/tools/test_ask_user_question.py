"""AskUserQuestion: the question goes to the editor, the answer back to the model."""

from __future__ import annotations

from typing import Any

from codev_ls.bridge import ScriptedBridge
from tests.fakes.harness import FakeModel

QUESTION = {
    "questions": [
        {
            "question": "Which database should the service use?",
            "header": "Database",
            "options": [
                {"label": "SQLite", "description": "simple, one file"},
                {"label": "Postgres", "description": "a server"},
            ],
            "multiSelect": False,
        }
    ]
}


async def test_answer_goes_back_to_the_model(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(question_answers=["Postgres"]))
    fake.push(fake.reply(("AskUserQuestion", QUESTION)), fake.reply("Postgres it is."))
    result = await rig.chat("set up a database")
    assert result.stop_reason == "end_turn"
    asked = rig.bridge.questions[0]
    assert asked.options == ["SQLite", "Postgres"]
    assert asked.question.startswith("Which database should the service use?")
    assert "SQLite: simple, one file" in asked.question
    assert asked.header == "Database"
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert '"Which database should the service use?" = "Postgres"' in text
    assert not rig.bridge.requests  # no separate permission prompt


async def test_dismissed_question(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake, bridge=ScriptedBridge(question_answers=[None]))
    fake.push(fake.reply(("AskUserQuestion", QUESTION)), fake.reply("I'll pick SQLite."))
    await rig.chat("set up a database")
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert "dismissed" in text


async def test_bad_questions_are_refused(fake_anthropic: FakeModel, make_rig: Any) -> None:
    fake = fake_anthropic
    rig = make_rig(fake)
    one_option = {"questions": [{"question": "Ok?", "options": [{"label": "Yes"}]}]}
    same = {"questions": [{"question": "Ok?", "options": [{"label": "Yes"}, {"label": "Yes"}]}]}
    fake.push(
        fake.reply(("AskUserQuestion", one_option), ("AskUserQuestion", same)), fake.reply("ok")
    )
    await rig.chat("ask")
    first, second = fake.results(fake.bodies[1]).values()
    assert "options" in first and "invalid input" in first
    assert "different labels" in second
    assert not rig.bridge.questions
