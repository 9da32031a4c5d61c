"""The terminal bridge: questions on the terminal, answers mapped, never an allow by default."""

from __future__ import annotations

import io
from pathlib import Path

from codev_ls.bridge import (
    FileEdit,
    PermissionRequest,
    ProgressEvent,
    Question,
    TerminalBridge,
    cut_detail,
)


def _request() -> PermissionRequest:
    return PermissionRequest(
        tool_use_id="t",
        tool_name="Bash",
        message="Bash: run `npm test`",
        detail="npm test",
        session_rule="Bash(npm test:*)",
        always_rule="Bash(npm test:*)",
    )


async def _ask(answer: str, **kw: object) -> tuple[str, str]:
    err = io.StringIO()
    bridge = TerminalBridge(stdin=io.StringIO(answer), stderr=err, interactive=True, **kw)  # type: ignore[arg-type]
    result = await bridge.ask_permission(_request())
    return result.choice, err.getvalue()


async def test_choices_map_to_answers() -> None:
    assert (await _ask("1\n"))[0] == "allow_once"
    assert (await _ask("y\n"))[0] == "allow_once"
    assert (await _ask("2\n"))[0] == "allow_session"
    assert (await _ask("3\n"))[0] == "allow_always"
    assert (await _ask("n\n"))[0] == "reject"


async def test_anything_else_and_eof_reject() -> None:
    assert (await _ask("maybe\n"))[0] == "reject"
    assert (await _ask(""))[0] == "reject"


async def test_the_prompt_shows_the_rules_it_would_keep() -> None:
    _, shown = await _ask("n\n")
    assert "Bash: run `npm test`" in shown
    assert "[2] Allow for this session: Bash(npm test:*)" in shown
    assert "[3] Always allow: Bash(npm test:*)" in shown
    assert "[n] Reject" in shown


async def test_yes_allows_once_and_no_terminal_rejects() -> None:
    choice, shown = await _ask("", assume_yes=True)
    assert choice == "allow_once" and "--yes" in shown
    err = io.StringIO()
    bridge = TerminalBridge(stdin=io.StringIO("1\n"), stderr=err, interactive=False)
    assert (await bridge.ask_permission(_request())).choice == "reject"
    assert "no terminal" in err.getvalue()


async def test_edits_are_written_atomically(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.txt"
    bridge = TerminalBridge(stdin=io.StringIO(""), stderr=io.StringIO())
    result = await bridge.apply_edit(
        FileEdit(target, None, "hello\r\n", "Codev: Write f.txt", "Write")
    )
    assert result.applied and target.read_bytes() == b"hello\r\n"


async def test_progress_and_questions_on_stderr() -> None:
    err = io.StringIO()
    bridge = TerminalBridge(stdin=io.StringIO("2\n"), stderr=err, interactive=True)
    bridge.report_progress(ProgressEvent("begin", "t", title="Bash: npm test"))
    bridge.report_progress(ProgressEvent("report", "t", message="line 1\nline 2"))
    bridge.report_progress(ProgressEvent("end", "t"))
    assert "… Bash: npm test line 2" in err.getvalue()
    answer = await bridge.ask_question(Question("Which?", ["red", "blue"]))
    assert answer == "blue"


def test_cut_detail_says_what_was_left_out() -> None:
    text = "\n".join(f"line {i}" for i in range(2000))
    cut = cut_detail(text, 100)
    assert len(cut) < 200 and "more characters not shown" in cut
    assert cut_detail("short") == "short"
