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


CHECKS = {
    "questions": [
        {
            "question": "Which checks should run?",
            "header": "Checks",
            "options": [{"label": "Lint"}, {"label": "Tests"}, {"label": "Docs"}],
            "multiSelect": True,
        },
        {
            "question": "Anything else?",
            "options": [{"label": "Bench"}, {"label": "Fuzz"}],
            "multiSelect": True,
        },
    ]
}


async def test_multi_select_answers_all_go_back(fake: FakeModel, make_rig: Any) -> None:
    rig = make_rig(fake, bridge=ScriptedBridge(question_answers=[["Lint", "Docs"], []]))
    fake.push(fake.reply(("AskUserQuestion", CHECKS)), fake.reply("Lint and docs."))
    await rig.chat("set up CI")
    first, second = rig.bridge.questions
    assert first.multi_select and second.multi_select
    text = next(iter(fake.results(fake.bodies[1]).values()))
    assert '"Which checks should run?" = "Lint", "Docs"' in text
    assert '"Anything else?" = (none of the options chosen)' in text
    assert "dismissed" not in text


async def test_terminal_bridge_multi_select() -> None:
    import io

    from codev_ls.bridge import Question, TerminalBridge

    def bridge(line: str, **kw: Any) -> TerminalBridge:
        return TerminalBridge(stdin=io.StringIO(line), stderr=io.StringIO(), **kw)

    q = Question("Which?", ["Lint", "Tests", "Docs"], multi_select=True)
    assert await bridge("1, 3\n", interactive=True).ask_question(q) == ["Lint", "Docs"]
    assert await bridge("3 1 3\n", interactive=True).ask_question(q) == ["Docs", "Lint"]
    assert await bridge("2, Perf\n", interactive=True).ask_question(q) == ["Tests", "Perf"]
    assert await bridge("-\n", interactive=True).ask_question(q) == []
    assert await bridge("\n", interactive=True).ask_question(q) is None
    assert await bridge("", assume_yes=True).ask_question(q) == ["Lint"]
    single = Question("Which?", ["Lint", "Tests"])
    assert await bridge("2\n", interactive=True).ask_question(single) == "Tests"
