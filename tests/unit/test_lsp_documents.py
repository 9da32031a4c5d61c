"""Open documents follow LSP's lines: changes land where the editor made them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from codev_ls.lsp_documents import LspTextDocument, LspWorkspace, use_lsp_documents
from codev_ls.lsp_hunks import split_lines

INCREMENTAL = types.TextDocumentSyncKind.Incremental


def doc(text: str, cls: type[TextDocument] = LspTextDocument) -> TextDocument:
    return cls("file:///t.txt", source=text, version=1, sync_kind=INCREMENTAL)


def change(d: TextDocument, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    d.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            ),
            text=text,
        )
    )
    return d.source


def reference(source: str, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    """The change as LSP defines it, the slow way: split into lines, count UTF-16 units."""

    def offset(line: int, units: int) -> int:
        lines = split_lines(source)
        if line >= len(lines):
            return len(source)
        begin = sum(len(x) for x in lines[:line])
        content = lines[line]
        for ending in ("\r\n", "\n", "\r"):
            if content.endswith(ending):
                content = content[: -len(ending)]
                break
        count = 0
        for i, char in enumerate(content):
            if count >= units:
                return begin + i
            count += 2 if ord(char) > 0xFFFF else 1
        return begin + len(content)

    a, b = sorted((offset(*start), offset(*end)))
    return source[:a] + text + source[b:]


def test_a_form_feed_does_not_end_a_line() -> None:
    # pygls (str.splitlines) counted "a\x0c" as a line of its own and put the change on "b".
    text = "a\x0cb\nc\n"
    assert change(doc(text), (1, 0), (1, 0), "X") == "a\x0cb\nXc\n"
    assert change(doc(text, TextDocument), (1, 0), (1, 0), "X") == "a\x0cXb\nc\n"  # the old bug


def test_line_breaks_of_every_kind_and_utf16_columns() -> None:
    text = "one\r\ntwo\rthree\n😀x\u2028y\nlast"
    assert change(doc(text), (1, 1), (1, 2), "W") == "one\r\ntWo\rthree\n😀x\u2028y\nlast"
    # U+2028 does not end a line either; (3, 2) is after the two-unit 😀.
    assert change(doc(text), (2, 5), (3, 2), "") == "one\r\ntwo\rthreex\u2028y\nlast"
    # 😀 is two UTF-16 units: column 2 is after it.
    assert change(doc(text), (3, 2), (3, 3), "") == "one\r\ntwo\rthree\n😀\u2028y\nlast"
    # Past the end of a line: its end (before the break); past the last line: the end.
    assert change(doc(text), (0, 99), (1, 0), "") == "onetwo\rthree\n😀x\u2028y\nlast"
    assert change(doc(text), (9, 0), (9, 0), "!") == text + "!"
    assert change(doc("a\n"), (1, 0), (1, 0), "b") == "a\nb"


def test_big_documents_take_changes_anywhere() -> None:
    lines = [f"{i:06d} some text here\n" for i in range(200_000)]
    d = doc("".join(lines))
    for line in (0, 1, 99_999, 150_123, 199_999, 200_000):
        expected = reference(d.source, (line, 3), (line, 3), "<>")
        assert change(d, (line, 3), (line, 3), "<>") == expected
    crlf = doc("".join(x.replace("\n", "\r\n") for x in lines[:50_000]))
    assert change(crlf, (40_000, 0), (40_001, 0), "").count("\r\n") == 49_999


TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\n\n\r\x0c\x0b\u2028\u0085é😀")), max_size=60)
POS = st.tuples(st.integers(0, 12), st.integers(0, 8))


@settings(max_examples=400, deadline=None)
@given(TEXT, POS, POS, st.text(alphabet="xy\n", max_size=4))
def test_changes_match_lsp_line_semantics(source: str, a: tuple, b: tuple, text: str) -> None:
    assert change(doc(source), a, b, text) == reference(source, a, b, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc\n😀", max_size=40), POS, POS, st.text(alphabet="xy\n", max_size=4))
def test_same_as_pygls_where_pygls_was_right(source: str, a: tuple, b: tuple, text: str) -> None:
    # Plain \n text and positions inside their lines: the old behaviour is kept.
    lines = split_lines(source)
    for line, col in (a, b):
        if line >= len(lines) or col > len(lines[line].rstrip("\n").encode("utf-16-le")) // 2:
            return
    if a > b:
        a, b = b, a
    assert change(doc(source), a, b, text) == change(doc(source, TextDocument), a, b, text)


def test_the_workspace_opens_lsp_documents() -> None:
    ws = Workspace(None, sync_kind=INCREMENTAL)
    use_lsp_documents(ws)
    assert isinstance(ws, LspWorkspace)
    ws.put_text_document(
        types.TextDocumentItem(
            uri="file:///f.py", language_id="python", version=1, text="a\x0cb\nc"
        )
    )
    document = ws.get_text_document("file:///f.py")
    assert isinstance(document, LspTextDocument)
    assert document.lines == ("a\x0cb\n", "c")
