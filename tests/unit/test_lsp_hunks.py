"""Hunks: cutting a change into pieces, and telling which pieces landed."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from codev_ls.lsp_hunks import (
    apply_hunks,
    compute_hunks,
    detect_landed,
    rebase_hunks,
    split_lines,
    unified_diff,
)

TEXT = "".join(f"line {i}\n" for i in range(1, 41))

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\r\n", "e", "\n", "ü😀\n"]), max_size=40)


def test_lines_are_split_as_lsp_counts_them() -> None:
    assert split_lines("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]
    # Form feeds and U+2028 do not end lines in LSP (they do for str.splitlines).
    assert split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c\n"]
    assert split_lines("") == []
    assert split_lines("\n\n") == ["\n", "\n"]


def test_far_apart_changes_are_separate_hunks() -> None:
    new = TEXT.replace("line 3\n", "LINE 3\n").replace("line 30\n", "")
    hunks = compute_hunks(TEXT, new)
    assert [(h.start, h.end) for h in hunks] == [(2, 3), (29, 30)]
    assert hunks[0].old_text == "line 3\n" and hunks[0].new_text == "LINE 3\n"
    assert hunks[1].new_text == ""
    assert hunks[0].summary == "line 3" and hunks[1].summary == "line 30"


def test_close_changes_share_a_hunk() -> None:
    new = TEXT.replace("line 3\n", "x\n").replace("line 6\n", "y\n")
    [hunk] = compute_hunks(TEXT, new)
    assert (hunk.start, hunk.end) == (2, 6)


def test_each_hunk_diff_matches_difflib() -> None:
    new = TEXT.replace("line 3\n", "LINE 3\n").replace("line 30\n", "thirty\nmore\n")
    ours = unified_diff(TEXT, new, "f.txt")
    theirs = "".join(
        difflib.unified_diff(
            TEXT.splitlines(True), new.splitlines(True), "a/f.txt", "b/f.txt", lineterm="\n"
        )
    )
    assert ours == theirs


def test_a_missing_final_newline_is_marked() -> None:
    [hunk] = compute_hunks("a\nb", "a\nc")
    assert hunk.diff.endswith("+c\n\\ No newline at end of file\n")


def test_insertions_at_the_top_and_bottom() -> None:
    hunks = compute_hunks(TEXT, "first\n" + TEXT + "last\n")
    assert [(h.start, h.end, h.new_text) for h in hunks] == [(0, 0, "first\n"), (40, 40, "last\n")]
    assert hunks[0].summary == "at the top" and hunks[1].summary == "after line 40"


def test_a_large_file_with_one_change_is_fast_and_exact() -> None:
    big = "".join(f"row {i}\n" for i in range(200_000))
    new = big.replace("row 100000\n", "ROW\n")
    [hunk] = compute_hunks(big, new)
    assert (hunk.start, hunk.end, hunk.new_text) == (100_000, 100_001, "ROW\n")


def test_landed_hunks_are_recognised() -> None:
    new = TEXT.replace("line 3\n", "three\n").replace("line 20\n", "twenty\n")
    new = new.replace("line 38\n", "thirty-eight\n")
    hunks = compute_hunks(TEXT, new)
    assert detect_landed(TEXT, hunks, apply_hunks(TEXT, hunks, [0, 2])) == [0, 2]
    assert detect_landed(TEXT, hunks, TEXT) == []
    assert detect_landed(TEXT, hunks, new) == [0, 1, 2]
    assert detect_landed(TEXT, hunks, new + "typed by the user\n") is None


def test_rebase_carries_the_edit_past_unsaved_changes() -> None:
    new = TEXT.replace("line 20\n", "twenty\n")
    hunks = compute_hunks(TEXT, new)
    saved = TEXT.replace("line 1\n", "saved differently\n")
    assert rebase_hunks(TEXT, saved, hunks, [0]) == saved.replace("line 20\n", "twenty\n")
    # The hunk's lines are not in the saved copy: no guess.
    assert rebase_hunks(TEXT, "other\n", hunks, [0]) is None


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_hunks_rebuild_the_new_text(a: list[str], b: list[str]) -> None:
    old, new = "".join(a), "".join(b)
    hunks = compute_hunks(old, new)
    assert apply_hunks(old, hunks) == new
    assert apply_hunks(old, hunks, []) == old
    assert (old == new) == (hunks == [])


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.data())
def test_any_subset_of_hunks_is_recognised(a: list[str], b: list[str], data: st.DataObject) -> None:
    old, new = "".join(a), "".join(b)
    hunks = compute_hunks(old, new)
    chosen = sorted(
        data.draw(st.sets(st.sampled_from([h.index for h in hunks]))) if hunks else set()
    )
    actual = apply_hunks(old, hunks, chosen)
    landed = detect_landed(old, hunks, actual)
    # Ambiguous texts may be explained by another subset; it must rebuild the same text.
    assert landed is not None
    assert apply_hunks(old, hunks, landed) == actual


# Texts that exercise every way of ending a line, for LSP and for str.splitlines.
tricky = st.lists(
    st.sampled_from(["a", "b", "\n", "\r\n", "\r", "\x0c", "x\n", "\u2028", "é\n"]), max_size=40
)


def _whole_text_hunks(old: str, new: str) -> list[tuple[int, int, str, str, int, int]]:
    """The hunks as splitting every line of both texts gives them (the reference)."""
    a, b = split_lines(old), split_lines(new)
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    out = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        changed = [op for op in group if op[0] != "equal"]
        start, end, nstart, nend = changed[0][1], changed[-1][2], changed[0][3], changed[-1][4]
        out.append(
            ("".join(a[start:end]), "".join(b[nstart:nend]), start, end, offsets[start],
             offsets[end])
        )  # fmt: skip
    return out


@settings(max_examples=400, deadline=None)
@given(tricky, st.data())
def test_only_the_changed_window_is_split_yet_hunks_are_exact(
    a: list[str], data: st.DataObject
) -> None:
    """Hunks computed on the window around the change equal those of the whole texts."""
    old = "".join(a)
    edited = list(a)
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(edited)))
        edited.insert(at, data.draw(st.sampled_from(["z\n", "\r", "q", "\r\n"])))
    new = "".join(edited)
    hunks = compute_hunks(old, new)
    got = [(h.old_text, h.new_text, h.start, h.end, h.char_start, h.char_end) for h in hunks]
    whole = _whole_text_hunks(old, new)
    # Where a change sits among identical lines is ambiguous; both must then rebuild `new`.
    if got != whole:
        assert apply_hunks(old, hunks) == new
    for hunk in hunks:
        assert old[hunk.char_start : hunk.char_end] == hunk.old_text
        assert len(split_lines(old[: hunk.char_start])) == hunk.start


def test_hunks_far_into_a_big_text_have_whole_text_line_numbers() -> None:
    big = "".join(f"row {i}\r\n" if i % 3 else f"row {i}\r" for i in range(50_000))
    new = big.replace("row 40000\r\n", "changed\r\n")
    [hunk] = compute_hunks(big, new)
    assert (hunk.start, hunk.end) == (40_000, 40_001)
    assert hunk.diff.startswith("@@ -39998,7 +39998,7 @@\n")
    assert apply_hunks(big, [hunk]) == new
    assert rebase_hunks(big, "top\n" + big, [hunk], [0]) == "top\n" + new
