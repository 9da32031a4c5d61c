"""The editor bridge: the only way the engine talks to the user's editor.

The engine never imports pygls. It asks the user, applies edits, reports
progress and reads open buffers through :class:`EditorBridge`. The LSP server
implements it over LSP (``server.py``); :class:`TerminalBridge` implements it on
a terminal for ``codev-ls tool``; :class:`ScriptedBridge` implements it for
tests and scripts (answers given in advance, everything recorded).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO, runtime_checkable

from codev_ls.engine.files import atomic_write_text

# --------------------------------------------------------------------------- values

PermissionChoice = Literal["allow_once", "allow_session", "allow_always", "reject"]
# What a question is about: a tool use, or starting a project's MCP server (which
# ``--yes`` and bypassPermissions never answer: opening a repository must not run it).
# "mcp_server": start a project's MCP server; "project_settings": put in force what the
# workspace's settings files grant (hooks, allow rules). Neither is a tool use: --yes
# does not answer them.
RequestKind = Literal["tool_use", "mcp_server", "project_settings"]


@dataclass(slots=True)
class PermissionRequest:
    """A question to the user: may this tool use run?"""

    tool_use_id: str
    tool_name: str
    # One line naming the tool and what it will do.
    message: str
    # The command, the unified diff... cut to a readable length by the bridge.
    detail: str = ""
    # Why the engine asks (e.g. "writes outside the workspace").
    reason: str = ""
    # The generalised rule that "Allow for this session" / "Always allow" would keep.
    session_rule: str | None = None
    always_rule: str | None = None
    # A whole first line for questions that are not about a tool use (an MCP server's
    # start): editors show it instead of "Codev wants to use <message>".
    headline: str = ""
    kind: RequestKind = "tool_use"

    @property
    def shown_detail(self) -> str:
        """The detail to show under the message: none when the message already says it all.

        A short command is both the summary and the detail of a Bash use; a
        prompt that repeats it reads as if two things will run.
        """
        detail = self.detail.strip()
        if detail and "\n" not in detail and detail in (self.headline or self.message):
            return ""
        return self.detail


@dataclass(slots=True)
class PermissionAnswer:
    choice: PermissionChoice
    # Free text from the user (e.g. why they rejected), passed to the model.
    feedback: str = ""
    # No choice was made (the question was dismissed, failed, or could not be asked):
    # ``choice`` is then "reject", but nothing should be remembered as the user's answer
    # (an MCP server's approval question is asked again next time).
    dismissed: bool = False


@dataclass(slots=True)
class FileEdit:
    """A whole-file change the engine wants in the editor and on disk.

    ``old_text`` is what the change was computed against (the buffer when the
    file is open, else the disk); ``new_text`` is the full new content. The
    bridge turns it into the smallest edits it can (hunks) and reports which
    landed.
    """

    path: Path
    old_text: str | None  # None: a new file
    new_text: str
    label: str
    tool_name: str
    # Ask the editor to confirm (preview as approval) instead of a separate prompt.
    needs_confirmation: bool = False
    # The unified diff, for previews and annotations.
    diff: str = ""
    # How new_text is written; old_encoding is how the file on disk was read (None: the
    # same), different when a legacy encoding cannot hold the new text (written as UTF-8).
    encoding: str = "utf-8"
    old_encoding: str | None = None


@dataclass(slots=True)
class EditApplyResult:
    applied: bool
    # The text that is now in the file (may differ from new_text if only some hunks landed).
    final_text: str | None = None
    # Indices of hunks that landed / were refused, when the bridge applied per hunk.
    hunks_applied: list[int] | None = None
    hunks_rejected: list[int] | None = None
    reason: str = ""
    # Set when the edit failed for a reason other than the user's refusal. With
    # ``applied`` False nothing changed; with ``applied`` True the editor's buffer
    # holds ``final_text`` but the disk could not be written (``error`` says why).
    error: str = ""


@dataclass(slots=True)
class BufferSnapshot:
    """An open editor buffer: its text as the user sees it (unsaved changes included)."""

    path: Path
    text: str
    version: int | None
    dirty: bool = False


ProgressKind = Literal["begin", "report", "end"]


@dataclass(slots=True)
class ProgressEvent:
    """A tool run's progress, keyed by its tool use id."""

    kind: ProgressKind
    tool_use_id: str
    title: str = ""
    message: str = ""
    percentage: int | None = None
    # On "begin": call to interrupt the run (the editor's cancel button).
    cancel: Callable[[], None] | None = None


@dataclass(slots=True)
class Question:
    """A question the model asks the user (AskUserQuestion).

    ``multi_select``: the user may choose any number of the options (none too),
    and the bridge answers with the list of chosen labels.
    """

    question: str
    options: list[str]
    header: str = ""
    multi_select: bool = False


# An answer to a Question: the chosen label; for a multi_select question the list of chosen
# labels (empty when the user finished without choosing any); None when dismissed.
QuestionAnswer = str | list[str] | None


@dataclass(slots=True)
class BridgeCapabilities:
    # The editor's edit preview is the approval (LSP change annotations with needsConfirmation).
    edit_preview_approval: bool = False
    # The bridge can show progress.
    progress: bool = True


MessageLevel = Literal["error", "warning", "info", "log"]


@runtime_checkable
class EditorBridge(Protocol):
    """What the engine needs from an editor."""

    capabilities: BridgeCapabilities

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """Ask the user; any failure to get an answer must come back as ``reject``."""
        ...

    async def apply_edit(self, edit: FileEdit) -> EditApplyResult:
        """Apply a change in the editor; when it returns applied, disk holds the result."""
        ...

    def read_buffer(self, path: Path) -> BufferSnapshot | None:
        """The open buffer of ``path`` (None when the file is not open)."""
        ...

    def open_buffers(self) -> list[BufferSnapshot]:
        """Every open buffer (Grep searches the dirty ones as the user sees them)."""
        ...

    def report_progress(self, event: ProgressEvent) -> None: ...

    def show_message(self, level: MessageLevel, message: str) -> None: ...

    async def ask_question(self, question: Question) -> QuestionAnswer:
        """The chosen option's text (a list of them for ``multi_select``), None when dismissed."""
        ...


# --------------------------------------------------------------------------- shared helpers


async def write_edit_to_disk(edit: FileEdit) -> EditApplyResult:
    """Apply an edit directly to disk, atomically (no editor, or file not open)."""
    await asyncio.to_thread(atomic_write_text, edit.path, edit.new_text, edit.encoding)
    return EditApplyResult(applied=True, final_text=edit.new_text)


def cut_detail(text: str, limit: int = 4000) -> str:
    """Cut a command or diff for display, saying how much was left out."""
    if len(text) <= limit:
        return text
    lines = text[:limit].rsplit("\n", 1)[0]
    return f"{lines}\n… ({len(text) - len(lines)} more characters not shown)"


# --------------------------------------------------------------------------- terminal


class TerminalBridge:
    """The bridge of ``codev-ls tool``: prompts on the terminal, progress on stderr.

    With ``assume_yes`` every question about a tool use is answered "Allow
    once" (``--yes``); a question about starting a project's MCP server is
    not: it is asked on the terminal when stdin is one, else the server is
    not started. Without a terminal to ask on (stdin not a tty and no
    answers), the answer is ``reject``: never allow what the user could not see.
    An empty line, end of input or an answer that is none of the choices is a
    rejection marked ``dismissed`` (nothing is remembered of it).
    """

    def __init__(
        self,
        *,
        assume_yes: bool = False,
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        self.capabilities = BridgeCapabilities(edit_preview_approval=False, progress=True)
        self.assume_yes = assume_yes
        self._in = stdin or sys.stdin
        self._err = stderr or sys.stderr
        self._interactive = interactive
        self._lock = asyncio.Lock()
        self._titles: dict[str, str] = {}

    def _can_ask(self) -> bool:
        if self._interactive is not None:
            return self._interactive
        try:
            return self._in.isatty() or not self._in.closed
        except (ValueError, AttributeError):
            return False

    def _is_tty(self) -> bool:
        if self._interactive is not None:
            return self._interactive
        try:
            return self._in.isatty()
        except (ValueError, AttributeError):
            return False

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        async with self._lock:
            self._print(f"\n? {request.message}")
            if request.shown_detail:
                self._print(_indent(cut_detail(request.shown_detail)))
            if request.reason:
                self._print(f"  ({request.reason})")
            server = request.kind in ("mcp_server", "project_settings")
            held = "Not started" if request.kind == "mcp_server" else "Not approved"
            if self.assume_yes and not server:
                self._print("  → Allow once (--yes)")
                return PermissionAnswer("allow_once")
            options: list[tuple[str, PermissionChoice, str]] = [("1", "allow_once", "Allow once")]
            if request.session_rule:
                options.append(
                    ("2", "allow_session", f"Allow for this session: {request.session_rule}")
                )
            if request.always_rule:
                options.append(("3", "allow_always", f"Always allow: {request.always_rule}"))
            options.append(("n", "reject", "Reject"))
            for key, _, title in options:
                self._print(f"  [{key}] {title}")
            if server and self.assume_yes:
                # --yes answers tool uses, never a project's servers. Ask on a terminal
                # only: reading from a pipe a script left open could hang.
                if not self._is_tty():
                    what = (
                        "a project's MCP servers"
                        if request.kind == "mcp_server"
                        else "a workspace's hooks and allow rules"
                    )
                    self._print(
                        f"  → {held}: --yes does not approve {what} "
                        "(answer on a terminal, or approve them in your user settings)"
                    )
                    return PermissionAnswer("reject", dismissed=True)
                self._print("  (--yes does not answer this question)")
            if not self._can_ask():
                if server:
                    self._print(f"  → {held} (no terminal to ask on)")
                else:
                    self._print("  → Reject (no terminal to ask on; pass --yes to allow)")
                return PermissionAnswer("reject", dismissed=True)
            self._err.write("  choice: ")
            self._err.flush()
            line = await asyncio.to_thread(self._in.readline)
            answer = line.strip().lower()
            for key, choice, _ in options:
                if answer == key or (choice == "allow_once" and answer in ("y", "yes")):
                    return PermissionAnswer(choice)
            if answer in ("n", "no"):
                return PermissionAnswer("reject")
            # End of input, an empty line or an answer that is none of the choices.
            self._print(f"  → {held} (no choice made)" if server else "  → Reject (no choice made)")
            return PermissionAnswer("reject", dismissed=True)

    async def apply_edit(self, edit: FileEdit) -> EditApplyResult:
        return await write_edit_to_disk(edit)

    def read_buffer(self, path: Path) -> BufferSnapshot | None:
        return None

    def open_buffers(self) -> list[BufferSnapshot]:
        return []

    def report_progress(self, event: ProgressEvent) -> None:
        if event.kind == "begin":
            self._titles[event.tool_use_id] = event.title
        elif event.kind == "report" and event.message:
            title = self._titles.get(event.tool_use_id, "")
            last = event.message.strip().splitlines()[-1:] or [""]
            self._print(f"… {title} {last[0][:160]}")
        elif event.kind == "end":
            self._titles.pop(event.tool_use_id, None)

    def show_message(self, level: MessageLevel, message: str) -> None:
        if level != "log":
            self._print(f"[{level}] {message}")

    async def ask_question(self, question: Question) -> QuestionAnswer:
        async with self._lock:
            self._print(f"\n? {question.question}")
            for i, opt in enumerate(question.options, 1):
                self._print(f"  [{i}] {opt}")
            if self.assume_yes or not self._can_ask():
                if not (self.assume_yes and question.options):
                    return None
                first = question.options[0]
                return [first] if question.multi_select else first
            multi = question.multi_select
            prompt = (
                "  choices (numbers separated by commas; - for none): " if multi else "  choice: "
            )
            self._err.write(prompt)
            self._err.flush()
            line = (await asyncio.to_thread(self._in.readline)).strip()
            if not multi:
                if line.isdigit() and 1 <= int(line) <= len(question.options):
                    return question.options[int(line) - 1]
                return line or None
            if not line:
                return None
            if line == "-":
                return []
            # "1, 3" or "1 3" pick options by number; other text is the user's own answer.
            items: list[str] = []
            for part in (p.strip() for p in line.split(",")):
                items.extend(part.split() if part.replace(" ", "").isdigit() else [part])
            chosen: list[str] = []
            for item in items:
                if item.isdigit() and 1 <= int(item) <= len(question.options):
                    item = question.options[int(item) - 1]
                if item and item not in chosen:
                    chosen.append(item)
            return chosen

    def _print(self, text: str) -> None:
        print(text, file=self._err, flush=True)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


# --------------------------------------------------------------------------- scripted (tests)


@dataclass
class ScriptedBridge:
    """A bridge for tests and scripts: answers are given in advance, everything is recorded.

    ``answers`` are consumed in order; when they run out, ``default_answer``
    is used; ``"dismiss"`` answers like an editor whose prompt was closed
    (a rejection with ``dismissed`` set). Buffers can be opened with
    :meth:`open_buffer`.
    """

    answers: list[PermissionChoice | Literal["dismiss"]] = field(default_factory=list)
    default_answer: PermissionChoice | Literal["dismiss"] = "reject"
    edit_preview_approval: bool = False
    # Decide edits: None applies them all; a callable may refuse or apply some hunks.
    edit_decider: Callable[[FileEdit], EditApplyResult | None] | None = None
    question_answers: list[QuestionAnswer] = field(default_factory=list)
    requests: list[PermissionRequest] = field(default_factory=list)
    edits: list[FileEdit] = field(default_factory=list)
    progress: list[ProgressEvent] = field(default_factory=list)
    messages: list[tuple[str, str]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    buffers: dict[Path, BufferSnapshot] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.capabilities = BridgeCapabilities(edit_preview_approval=self.edit_preview_approval)

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.requests.append(request)
        choice = self.answers.pop(0) if self.answers else self.default_answer
        if choice == "dismiss":
            return PermissionAnswer("reject", dismissed=True)
        return PermissionAnswer(choice)

    async def apply_edit(self, edit: FileEdit) -> EditApplyResult:
        self.edits.append(edit)
        if self.edit_decider is not None:
            decided = self.edit_decider(edit)
            if decided is not None:
                if decided.applied and decided.final_text is not None:
                    await asyncio.to_thread(
                        atomic_write_text, edit.path, decided.final_text, edit.encoding
                    )
                return decided
        result = await write_edit_to_disk(edit)
        snap = self.buffers.get(edit.path)
        if snap is not None:
            self.buffers[edit.path] = BufferSnapshot(
                edit.path, edit.new_text, (snap.version or 0) + 1, dirty=False
            )
        return result

    def open_buffer(self, path: Path, text: str, version: int = 1, dirty: bool = True) -> None:
        self.buffers[path] = BufferSnapshot(path, text, version, dirty)

    def read_buffer(self, path: Path) -> BufferSnapshot | None:
        return self.buffers.get(path)

    def open_buffers(self) -> list[BufferSnapshot]:
        return list(self.buffers.values())

    def report_progress(self, event: ProgressEvent) -> None:
        self.progress.append(event)

    def show_message(self, level: MessageLevel, message: str) -> None:
        self.messages.append((level, message))

    async def ask_question(self, question: Question) -> QuestionAnswer:
        self.questions.append(question)
        return self.question_answers.pop(0) if self.question_answers else None
