"""Hunks: a whole-file change cut into the pieces an editor can accept one by one.

The LSP bridge sends an edit as one text edit per hunk (each with its own
change annotation holding the hunk's unified diff), so that an editor's
preview lets the user accept some hunks and refuse others. Afterwards the
bridge reads the buffer back and :func:`detect_landed` works out which hunks
landed, and :func:`rebase_hunks` carries them over to a disk copy that
differs from the buffer (unsaved user changes that must stay unsaved).

Lines follow LSP's definition (``\\n``, ``\\r\\n`` or ``\\r`` end a line), not
Python's ``str.splitlines`` (which also splits on form feeds and U+2028), so
line numbers here are the editor's line numbers. Pure functions, no pygls.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codev_ls.tools._text import changed_window, count_lines

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# Above this many lines in the changed middle, difflib's junk heuristic is kept on (speed).
_EXACT_DIFF_LIMIT = 2_000
# Unchanged lines shown around each hunk in its diff (and that merge nearby changes).
CONTEXT = 3


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split the way LSP counts lines."""
    return _LINE_RE.findall(text)


@dataclass(frozen=True, slots=True)
class Hunk:
    """One contiguous change: old lines ``[start, end)`` become ``new_text``."""

    index: int
    start: int
    end: int
    old_text: str
    new_text: str
    # The hunk's unified diff (``@@`` header, context, ``-``/``+`` lines).
    diff: str
    # Where ``old_text`` is in the old text, in characters (``[char_start, char_end)``):
    # applying and checking hunks then never splits a whole (10 MB) file into lines.
    char_start: int = -1
    char_end: int = -1

    @property
    def summary(self) -> str:
        """Where the hunk is, for labels: ``lines 10–12`` / ``after line 4``."""
        if self.end > self.start:
            first, last = self.start + 1, self.end
            return f"line {first}" if first == last else f"lines {first}–{last}"
        return f"after line {self.start}" if self.start else "at the top"


def compute_hunks(old: str, new: str, context: int = CONTEXT) -> list[Hunk]:
    """The hunks turning ``old`` into ``new`` (grouped as a unified diff groups them)."""
    # Only the lines around what changed are split and diffed (an edit usually
    # touches one region, difflib is quadratic in what is left, and splitting a
    # 10 MB file costs more than the rest of an edit); line numbers are shifted back.
    start, tail = changed_window(old, new, context)
    base = count_lines(old, start)
    a = split_lines(old[start : len(old) - tail])
    b = split_lines(new[start : len(new) - tail])
    # Trim the common head and tail first: difflib is quadratic in what is left.
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail_lines = 0
    while (
        tail_lines < len(a) - head
        and tail_lines < len(b) - head
        and a[-1 - tail_lines] == b[-1 - tail_lines]
    ):
        tail_lines += 1
    mid_a, mid_b = a[head : len(a) - tail_lines], b[head : len(b) - tail_lines]
    if not mid_a and not mid_b:
        return []
    matcher = difflib.SequenceMatcher(
        None, mid_a, mid_b, autojunk=max(len(mid_a), len(mid_b)) > _EXACT_DIFF_LIMIT
    )
    ops = [
        (tag, i1 + head, i2 + head, j1 + head, j2 + head)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]
    # Put the trimmed head and tail back as equal runs, so grouping sees the context.
    if head:
        ops.insert(0, ("equal", 0, head, 0, head))
    if tail_lines:
        ops.append(("equal", len(a) - tail_lines, len(a), len(b) - tail_lines, len(b)))
    # Character offsets of the window's lines, for each hunk's place in ``old``.
    offsets = [start]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    hunks: list[Hunk] = []
    for group in _group(ops, context):
        changed = [op for op in group if op[0] != "equal"]
        if not changed:
            continue
        first, last = changed[0][1], changed[-1][2]
        nfirst, nlast = changed[0][3], changed[-1][4]
        hunks.append(
            Hunk(
                index=len(hunks),
                start=first + base,
                end=last + base,
                old_text="".join(a[first:last]),
                new_text="".join(b[nfirst:nlast]),
                diff=_format_group(group, a, b, base),
                char_start=offsets[first],
                char_end=offsets[last],
            )
        )
    return hunks


def _group(
    ops: list[tuple[str, int, int, int, int]], n: int
) -> Iterable[list[tuple[str, int, int, int, int]]]:
    """difflib's ``get_grouped_opcodes`` on a ready list of opcodes."""
    if not ops:
        return
    codes = list(ops)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    nn = n + n
    group: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > nn:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _format_group(
    group: Sequence[tuple[str, int, int, int, int]], a: list[str], b: list[str], base: int = 0
) -> str:
    first, last = group[0], group[-1]
    i1, i2, j1, j2 = first[1] + base, last[2] + base, first[3] + base, last[4] + base
    lines = [f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n"]
    for tag, a1, a2, b1, b2 in group:
        if tag == "equal":
            lines.extend(_diff_line(" ", line) for line in a[a1:a2])
            continue
        if tag in ("replace", "delete"):
            lines.extend(_diff_line("-", line) for line in a[a1:a2])
        if tag in ("replace", "insert"):
            lines.extend(_diff_line("+", line) for line in b[b1:b2])
    return "".join(lines)


def _diff_line(mark: str, line: str) -> str:
    if line.endswith(("\n", "\r")):
        return mark + line.rstrip("\r\n") + "\n"
    return f"{mark}{line}\n\\ No newline at end of file\n"


def _range(start: int, stop: int) -> str:
    """A unified diff range (1-based start, length; ``start,0`` for empty)."""
    length = stop - start
    beginning = start + 1
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified_diff(old: str, new: str, label: str, hunks: Sequence[Hunk] | None = None) -> str:
    """A whole unified diff with ``---``/``+++`` headers, from the hunks."""
    hunks = compute_hunks(old, new) if hunks is None else hunks
    if not hunks:
        return ""
    return f"--- a/{label}\n+++ b/{label}\n" + "".join(h.diff for h in hunks)


def _spans(old: str, hunks: Iterable[Hunk]) -> list[tuple[Hunk, int, int]]:
    """The hunks in order with their character span in ``old``."""
    ordered = sorted(hunks, key=lambda h: h.start)
    if all(h.char_start >= 0 for h in ordered):
        return [(h, h.char_start, h.char_end) for h in ordered]
    offsets = [0]
    for line in split_lines(old):
        offsets.append(offsets[-1] + len(line))
    return [(h, offsets[h.start], offsets[h.end]) for h in ordered]


def apply_hunks(old: str, hunks: Sequence[Hunk], selected: Iterable[int] | None = None) -> str:
    """``old`` with the selected hunks (all by default) applied."""
    chosen = {h.index for h in hunks} if selected is None else set(selected)
    out: list[str] = []
    pos = 0
    for hunk, start, end in _spans(old, hunks):
        out.append(old[pos:start])
        out.append(hunk.new_text if hunk.index in chosen else hunk.old_text)
        pos = end
    out.append(old[pos:])
    return "".join(out)


def detect_landed(old: str, hunks: Sequence[Hunk], actual: str) -> list[int] | None:
    """Which hunks ``actual`` has applied, or None when it is not ``old`` plus some hunks.

    Each hunk either landed (its new text is there) or did not (its old text
    is); the unchanged stretches between hunks must be intact. When several
    choices explain ``actual`` the one applying more hunks wins.
    """
    spans = _spans(old, hunks)
    ordered = [h for h, _, _ in spans]
    # The unchanged stretches, as spans of ``old`` (compared in place, not copied).
    gaps: list[tuple[int, int]] = []
    pos = 0
    for _, start, end in spans:
        gaps.append((pos, start))
        pos = end
    gaps.append((pos, len(old)))

    def gap_at(k: int, offset: int) -> bool:
        g0, g1 = gaps[k]
        n = g1 - g0
        return offset + n <= len(actual) and actual[offset : offset + n] == old[g0:g1]

    # Breadth-first over the hunks: offset into `actual` -> hunks applied so far.
    if not gap_at(0, 0):
        return None
    states: dict[int, list[int]] = {gaps[0][1] - gaps[0][0]: []}
    for k, hunk in enumerate(ordered):
        g0, g1 = gaps[k + 1]
        nxt: dict[int, list[int]] = {}
        for offset, applied in states.items():
            for text, landed in ((hunk.new_text, True), (hunk.old_text, False)):
                if not actual.startswith(text, offset):
                    continue
                end = offset + len(text)
                if not gap_at(k + 1, end):
                    continue
                end += g1 - g0
                choice = [*applied, hunk.index] if landed else applied
                best = nxt.get(end)
                if best is None or len(choice) > len(best):
                    nxt[end] = choice
        if not nxt:
            return None
        # Keep the search small: a pathological text cannot blow it up.
        states = dict(sorted(nxt.items())[:64])
    result = states.get(len(actual))
    return sorted(result) if result is not None else None


def _line_before(text: str, pos: int) -> str:
    """The whole line (with its ending) that ends at ``pos``, a line start; "" at the top."""
    if pos <= 0:
        return ""
    end = pos - 2 if text.startswith("\r\n", pos - 2) else pos - 1
    start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
    return text[start:pos]


def rebase_hunks(old: str, base: str, hunks: Sequence[Hunk], landed: Iterable[int]) -> str | None:
    """Apply the landed hunks to ``base`` (another version of the old text).

    Used when the buffer had unsaved changes: the disk copy gets the edit but
    not the user's unsaved work. Each hunk's old text, with the line before
    it in ``old`` as an anchor, must be found exactly once in ``base``;
    otherwise None (the caller decides what to do).
    """
    chosen = set(landed)
    text = base
    # Right to left, so earlier offsets stay valid.
    for hunk, start, _ in reversed(_spans(old, hunks)):
        if hunk.index not in chosen:
            continue
        # Anchor on the line before the hunk too, so a short hunk is found in its place.
        before = _line_before(old, start)
        needle = before + hunk.old_text
        if not needle:  # an insertion at the very top
            text = hunk.new_text + text
            continue
        first = text.find(needle)
        if first < 0 or text.find(needle, first + 1) >= 0:
            return None
        first += len(before)
        text = text[:first] + hunk.new_text + text[first + len(hunk.old_text) :]
    return text
