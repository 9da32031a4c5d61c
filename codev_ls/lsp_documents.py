"""Open documents as the editor has them: LSP's lines, and changes applied in place.

pygls' ``TextDocument`` applies an incremental ``didChange`` by splitting the
whole document with ``str.splitlines`` and joining it again. That is wrong and
slow for what Codev reads buffers for:

- **wrong**: ``splitlines`` also ends lines at form feeds, vertical tabs,
  U+0085, U+2028/U+2029 and the ASCII separators; editors count lines as LSP
  does (``\\n``, ``\\r\\n``, ``\\r`` only). In a file holding a form feed (``^L``
  in many Python and Lisp sources) every change below it landed on the wrong
  line of the server's copy — and Edit would then compute its change against a
  buffer the user never had.
- **slow**: a keystroke in a 10 MB file cost ~35 ms of Python work.

Here a change finds its two offsets with C-speed scans (``str.count`` halving
the range to the line, then a few ``str.find``) and splices the text, so its
cost is a copy of the document and nothing per line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.workspace import TextDocument, Workspace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lsprotocol import types

# Below this many characters, the rest of the way to a line is walked with str.find.
_WALK = 8192


class LspTextDocument(TextDocument):
    """A pygls document whose lines and changes follow LSP's definition of a line."""

    @property
    def lines(self) -> Sequence[str]:
        from codev_ls.lsp_hunks import split_lines

        return tuple(split_lines(self.source))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        source = self.source
        starts = _LineStarts(source)
        start = self._offset(source, starts, change.range.start)
        end = self._offset(source, starts, change.range.end)
        if end < start:
            start, end = end, start
        self._source = source[:start] + change.text + source[end:]

    def _offset(self, source: str, starts: _LineStarts, position: types.Position) -> int:
        """The index in ``source`` of an LSP position (clamped as LSP says)."""
        begin = starts.start_of(position.line)
        if begin is None:
            return len(source)  # past the last line: the end of the document
        stop = starts.content_end(begin)
        line = source[begin:stop]
        return begin + _code_points(self.position_codec, line, position.character)


def _code_points(codec: Any, line: str, units: int) -> int:
    """How many characters of ``line`` the client's ``units`` (UTF-16 by default) cover.

    A position past the end of the line means the end of the line (LSP).
    """
    if units <= 0:
        return 0
    if line.isascii():
        return min(units, len(line))
    counted = 0
    for i, char in enumerate(line):
        if counted >= units:
            return i
        counted += codec.impl.code_units_for_char(char)
    return len(line)


class _LineStarts:
    """Where lines begin in one version of a document, found on demand."""

    def __init__(self, source: str) -> None:
        self.source = source
        # A lone \r ends a line too: then the simple \n scans cannot be used.
        self.lone_cr = "\r" in source and source.count("\r") != source.count("\r\n")
        self._table: list[int] | None = None

    def start_of(self, line: int) -> int | None:
        if line <= 0:
            return 0
        if self.lone_cr:
            table = self._offsets()
            return table[line] if line < len(table) else None
        return _after_nth_newline(self.source, line)

    def content_end(self, begin: int) -> int:
        """Where the line starting at ``begin`` ends, before its line break."""
        source = self.source
        stop = source.find("\n", begin)
        if self.lone_cr:
            cr = source.find("\r", begin)
            if cr != -1 and (stop == -1 or cr < stop):
                return cr  # \r, or the \r of \r\n
        if stop == -1:
            return len(source)
        return stop - 1 if stop > begin and source[stop - 1] == "\r" else stop

    def _offsets(self) -> list[int]:
        if self._table is None:
            from codev_ls.lsp_hunks import split_lines

            table = [0]
            for text in split_lines(self.source):
                table.append(table[-1] + len(text))
            if self.source and not self.source.endswith(("\n", "\r")):
                table.pop()  # the last line has no break: no line starts after it
            self._table = table
        return self._table


def _after_nth_newline(source: str, n: int) -> int | None:
    """The index just after the ``n``-th ``\\n`` (the start of line ``n``), or None."""
    lo, before_lo = 0, 0  # before_lo: newlines in source[:lo], always < n
    hi = len(source)
    while hi - lo > _WALK:
        mid = (lo + hi) // 2
        seen = before_lo + source.count("\n", lo, mid)
        if seen >= n:
            hi = mid
        else:
            lo, before_lo = mid, seen
    pos = lo
    for _ in range(n - before_lo):
        found = source.find("\n", pos)
        if found == -1:
            return None
        pos = found + 1
    return pos


class LspWorkspace(Workspace):
    """pygls' workspace, opening :class:`LspTextDocument`s."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def use_lsp_documents(workspace: Any) -> None:
    """Make the workspace pygls built at ``initialize`` open LSP documents.

    pygls constructs its ``Workspace`` itself, with no factory to pass; the class
    of that one object is swapped for a subclass that adds no state.
    """
    if type(workspace) is Workspace:
        workspace.__class__ = LspWorkspace
