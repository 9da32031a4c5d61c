"""The permission prompt's diff: only the changed window is diffed, line numbers stay true."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from codev_ls.tools._text import (
    changed_window,
    common_prefix_length,
    common_suffix_length,
    count_lines,
    normalize_newlines,
    unified_diff,
)

pieces = st.lists(
    st.sampled_from(["a", "b", "\n", "\r\n", "\r", "\x0c", "x\n", "\u2028", "ü\n"]), max_size=40
)


def _lines(text: str) -> list[str]:
    return normalize_newlines(text).splitlines(keepends=True)


def _apply(old: str, diff: str) -> list[str]:
    """Apply a unified diff to ``old``'s lines, trusting only its ``@@`` line numbers.

    Every removed and context row must be the old line at that number.
    """
    a = _lines(old)
    out: list[str] = []
    pos = 0
    # Each row of the diff ends with "\n" (one is added, with a marker, where a line has none).
    rows = [r for r in diff.split("\n")[2:] if r and not r.startswith("\\ No newline")]
    i = 0
    while i < len(rows):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$", rows[i])
        assert m, rows[i]
        length = int(m.group(2)) if m.group(2) is not None else 1
        start = int(m.group(1)) - 1 if length else int(m.group(1))
        assert start >= pos
        out.extend(a[pos:start])
        pos = start
        i += 1
        while i < len(rows) and not rows[i].startswith("@@ "):
            mark, body = rows[i][0], rows[i][1:]
            i += 1
            if mark in " -":
                assert a[pos].removesuffix("\n") == body, (pos, a[pos], body)
                if mark == " ":
                    out.append(a[pos])
                pos += 1
            else:
                assert mark == "+"
                out.append(body + "\n")
    out.extend(a[pos:])
    return out


def _same_lines(x: list[str], y: list[str]) -> bool:
    """The same lines, whatever ends the last one (the diff marks a missing newline)."""
    return [s.removesuffix("\n") for s in x] == [s.removesuffix("\n") for s in y]


def test_affixes_are_measured_exactly_across_blocks() -> None:
    a = "x" * 200_000 + "A" + "y" * 150_000
    b = "x" * 200_000 + "BB" + "y" * 150_000
    assert common_prefix_length(a, b) == 200_000
    assert common_suffix_length(a, b, len(a) - 200_000) == 150_000
    assert common_prefix_length("abc", "abc") == 3
    assert common_suffix_length("abc", "xbc", 3) == 2


def test_the_window_starts_and_ends_between_lines() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 50\n", "fifty\n")
    start, tail = changed_window(old, new, 3)
    assert old[:start] == new[:start] and old[start - 1] == "\n"
    assert count_lines(old, start) == 47  # three lines of context before line 50 (0-based)
    assert old[len(old) - tail :] == new[len(new) - tail :]
    assert count_lines(old[len(old) - tail :]) == 46


def test_a_one_line_edit_deep_in_a_big_file_has_its_real_line_number() -> None:
    old = "".join(f"row {i}\n" for i in range(100_000))
    new = old.replace("row 70000\n", "ROW\n")
    diff = unified_diff(old, new, "big.txt")
    assert "@@ -69998,7 +69998,7 @@" in diff
    assert "-row 70000\n+ROW\n" in diff


@settings(max_examples=400, deadline=None)
@given(pieces, st.data())
def test_the_diff_turns_the_old_text_into_the_new(a: list[str], data: st.DataObject) -> None:
    old = "".join(a)
    edited = list(a)
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(edited)))
        if edited and data.draw(st.booleans()):
            del edited[min(at, len(edited) - 1)]
        else:
            edited.insert(at, data.draw(st.sampled_from(["z\n", "\r", "q", "\x0c"])))
    new = "".join(edited)
    diff = unified_diff(old, new, "f")
    whole = difflib.unified_diff(_lines(old), _lines(new), n=3)
    assert (diff == "") == (next(whole, None) is None)
    if diff:
        assert _same_lines(_apply(old, diff), _lines(new))
