"""A session's conversation, and keeping it inside the context window.

The history lives on the session (``session.extras["conversation"]``) in the
Anthropic block shape. Before each request it is bounded, cheapest first:

1. old large tool results (all but the latest round's) are replaced by a short
   note — the model can run the tool again if it needs the output;
2. if that is not enough, the older part is summarized by the model and
   replaced by the summary; the kept tail starts at an assistant message, so
   every ``tool_use`` keeps its ``tool_result`` pair.

Sizes are estimated from the last request's reported usage plus ~4
characters per token for what was added since.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codev_ls.model.types import Message

if TYPE_CHECKING:
    from codev_ls.engine.context import Session

CLEARED_NOTE = "[Old tool result cleared to save context. Run the tool again if you need it.]"
SUMMARY_PREFIX = (
    "This conversation was summarized to fit the context window. Summary of the earlier part:"
)
INTERRUPTED_NOTE = "[Request interrupted by user]"

# Shares of the context window that trigger each step.
CLEAR_AT = 0.60
SUMMARIZE_AT = 0.80
# Tool results longer than this (characters) are cleared in step 1.
CLEAR_MIN_CHARS = 1_000
# The tail kept verbatim by a summary, as a share of the window.
KEEP_SHARE = 0.25

SUMMARY_SYSTEM = """\
You summarize a coding assistant's conversation so that it can continue without the full \
history. Keep: the user's requests and constraints, decisions made, files read or changed \
(with paths), commands run and their important results, errors met, and what remains to do. \
Be concise and factual; write in the second person to the assistant."""


def chars_of(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


@dataclass
class Conversation:
    messages: list[Message] = field(default_factory=list)
    # From the last answer's usage: tokens in context, and the history size then (chars).
    last_tokens: int = 0
    chars_at_last: int = 0
    summaries: int = 0
    cleared: int = 0

    def add_user(self, content: str | list[dict[str, Any]]) -> None:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})

    def add_assistant(self, blocks: list[dict[str, Any]]) -> None:
        if blocks:
            self.messages.append({"role": "assistant", "content": list(blocks)})

    def record_usage(self, context_tokens: int) -> None:
        self.last_tokens = context_tokens
        self.chars_at_last = chars_of(self.messages)

    def estimate_tokens(self, overhead_chars: int = 0) -> int:
        now = chars_of(self.messages)
        by_chars = (now + overhead_chars) // 4
        if self.last_tokens:
            return max(self.last_tokens + max(0, now - self.chars_at_last) // 4, by_chars)
        return by_chars


def conversation_of(session: Session) -> Conversation:
    conv = session.extras.get("conversation")
    if not isinstance(conv, Conversation):
        conv = session.extras["conversation"] = Conversation()
    return conv


Summarizer = Callable[[str], Awaitable[str]]


def clear_old_tool_results(conv: Conversation) -> int:
    """Step 1: replace large tool results older than the latest round. Returns how many."""
    user_rounds = [i for i, m in enumerate(conv.messages) if m["role"] == "user"]
    keep_from = user_rounds[-1] if user_rounds else len(conv.messages)
    count = 0
    for msg in conv.messages[:keep_from]:
        if msg["role"] != "user":
            continue
        for block in msg["content"]:
            if block.get("type") != "tool_result" or block.get("content") == CLEARED_NOTE:
                continue
            if chars_of(block.get("content", "")) > CLEAR_MIN_CHARS:
                block["content"] = CLEARED_NOTE
                count += 1
    conv.cleared += count
    if count:
        conv.last_tokens = 0  # the usage figure no longer describes the history
    return count


def render_transcript(messages: list[Message], limit_chars: int) -> str:
    """The history as plain text for the summarizer (tool output cut short)."""
    lines: list[str] = []
    for msg in messages:
        who = "User" if msg["role"] == "user" else "Assistant"
        for block in msg["content"]:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"{who}: {block.get('text', '')}")
            elif kind == "tool_use":
                args = json.dumps(block.get("input", {}), ensure_ascii=False)[:500]
                lines.append(f"Assistant called {block.get('name')}({args})")
            elif kind == "tool_result":
                content = block.get("content", "")
                text = (
                    content
                    if isinstance(content, str)
                    else "\n".join(b.get("text", f"[{b.get('type')}]") for b in content)
                )
                flag = " (error)" if block.get("is_error") else ""
                lines.append(f"Tool result{flag}: {text[:1500]}")
    text = "\n".join(lines)
    if len(text) > limit_chars:
        text = "… (earliest part cut)\n" + text[-limit_chars:]
    return text


def _split_point(messages: list[Message], keep_chars: int) -> int:
    """Index of the assistant message where the kept tail starts (0: nothing to summarize)."""
    best = 0
    size = 0
    for i in range(len(messages) - 1, 0, -1):
        size += chars_of(messages[i])
        if size > keep_chars:
            break
        if messages[i]["role"] == "assistant":
            best = i
    if best == 0:
        # Even the last exchange is larger than the budget: keep from the last assistant message.
        for i in range(len(messages) - 1, 0, -1):
            if messages[i]["role"] == "assistant":
                return i
    return best


async def bound_context(
    conv: Conversation,
    context_window: int,
    summarize: Summarizer,
    *,
    overhead_chars: int = 0,
) -> str | None:
    """Keep the history within the window; returns a note of what was done (or None)."""
    if conv.estimate_tokens(overhead_chars) <= CLEAR_AT * context_window:
        return None
    notes = []
    cleared = clear_old_tool_results(conv)
    if cleared:
        notes.append(f"cleared {cleared} old tool result(s)")
    if conv.estimate_tokens(overhead_chars) <= SUMMARIZE_AT * context_window:
        return "; ".join(notes) or None
    split = _split_point(conv.messages, int(KEEP_SHARE * context_window * 4))
    if split <= 0:
        return "; ".join(notes) or None
    head, tail = conv.messages[:split], conv.messages[split:]
    transcript = render_transcript(head, limit_chars=int(context_window * 4 * 0.5))
    try:
        summary = (await summarize(transcript)).strip()
    except Exception as exc:
        summary = f"(The summary could not be made: {exc}. The earlier part was dropped.)"
    last_request = next(
        (
            b.get("text", "")
            for m in reversed(head)
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "text" and not b.get("text", "").startswith(SUMMARY_PREFIX)
        ),
        "",
    )
    text = f"{SUMMARY_PREFIX}\n\n{summary}"
    if last_request:
        text += f"\n\nThe user's latest request before this point was:\n{last_request}"
    conv.messages = [{"role": "user", "content": [{"type": "text", "text": text}]}, *tail]
    conv.summaries += 1
    conv.last_tokens = 0
    notes.append("summarized the earlier conversation")
    return "; ".join(notes)
