"""PDF pages as text (pypdf), with the images of pages that have no text layer.

Large PDFs are read a range at a time (``pages``: ``"3"``, ``"1-5"``,
``"1-3,7"``), so one Read never floods the model's context. pypdf is imported
only when a PDF is read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from codev_ls.engine.tool import ToolError

# Without `pages`, PDFs up to this many pages are read whole.
MAX_PAGES_WITHOUT_RANGE = 10
# At most this many pages per Read.
MAX_PAGES_PER_READ = 20
# Scanned pages (no text layer): at most this many embedded images per Read.
MAX_PAGE_IMAGES = 4
# Text per page beyond this is cut.
MAX_PAGE_CHARS = 40_000

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


class PagesError(ValueError):
    pass


def parse_pages(spec: str) -> list[int]:
    """``"1-3,7"`` → ``[1, 2, 3, 7]`` (1-based, in order, no repeats)."""
    pages: list[int] = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if not m:
            raise PagesError(
                f'pages must look like "3", "1-5" or "1-3,7" (1-based page numbers), got {spec!r}.'
            )
        first = int(m.group(1))
        last = int(m.group(2) or first)
        if first < 1 or last < first:
            raise PagesError(f"pages {part.strip()!r} is not a valid range (pages start at 1).")
        if last - first + 1 > MAX_PAGES_PER_READ:
            raise PagesError(
                f"pages {part.strip()!r} names {last - first + 1} pages; read at most "
                f"{MAX_PAGES_PER_READ} pages at a time."
            )
        for p in range(first, last + 1):
            if p not in pages:
                pages.append(p)
    if len(pages) > MAX_PAGES_PER_READ:
        raise PagesError(
            f"pages names {len(pages)} pages; read at most {MAX_PAGES_PER_READ} at a time."
        )
    return pages


def read_pdf(path: Path, pages_spec: str | None) -> list[dict[str, Any]]:
    """Content blocks: one text block with the pages' text, plus images of scanned pages."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise ToolError(
                        f"{path} is an encrypted PDF with a password; it cannot be read."
                    )
            except ToolError:
                raise
            except Exception as exc:
                raise ToolError(
                    f"{path} is an encrypted PDF that cannot be opened ({exc})."
                ) from exc
        count = len(reader.pages)
    except ToolError:
        raise
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise ToolError(f"{path} is not a readable PDF ({exc}).") from exc
    if count == 0:
        return [
            {
                "type": "text",
                "text": f"<system-reminder>The PDF {path} has no pages.</system-reminder>",
            }
        ]
    if pages_spec is None:
        if count > MAX_PAGES_WITHOUT_RANGE:
            raise ToolError(
                f"{path} has {count} pages, too many to read at once. Read it in ranges with "
                f'`pages` (at most {MAX_PAGES_PER_READ} pages per Read), e.g. pages "1-10", then '
                '"11-20".'
            )
        wanted = list(range(1, count + 1))
    else:
        try:
            wanted = parse_pages(pages_spec)
        except PagesError as exc:
            raise ToolError(str(exc)) from exc
        beyond = [p for p in wanted if p > count]
        if beyond:
            raise ToolError(
                f"{path} has {count} page{'s' if count != 1 else ''}; page {beyond[0]} does not exist."
            )
    parts: list[str] = []
    images: list[dict[str, Any]] = []
    notes: list[str] = []
    for number in wanted:
        page = reader.pages[number - 1]
        try:
            text = (page.extract_text() or "").strip()
        except Exception as exc:  # a broken content stream on one page
            text = ""
            notes.append(f"page {number}: text could not be extracted ({exc})")
        if len(text) > MAX_PAGE_CHARS:
            text = text[:MAX_PAGE_CHARS] + f"\n… [page cut: {len(text):,} characters]"
        if not text:
            text = "(no text on this page: it may be a scanned image"
            added = _page_images(page, number, images)
            text += f"; {added} image(s) of it follow)" if added else ")"
        parts.append(f"--- Page {number} of {count} ---\n{text}")
    header = f"PDF {path} ({count} page{'s' if count != 1 else ''}); showing page"
    header += f"s {_ranges(wanted)}" if len(wanted) > 1 else f" {wanted[0]}"
    body = header + ":\n\n" + "\n\n".join(parts)
    if notes:
        body += "\n\n(" + "; ".join(notes) + ")"
    shown_end = max(wanted)
    if pages_spec is None and shown_end < count:
        body += f'\n\n(Use pages to read the rest, e.g. "{shown_end + 1}-{min(count, shown_end + 10)}".)'
    return [*images, {"type": "text", "text": body}]


def _page_images(page: Any, number: int, images: list[dict[str, Any]]) -> int:
    from codev_ls.tools._images import ImageError, image_block

    added = 0
    try:
        page_images = list(page.images)
    except Exception:
        return 0
    for img in page_images:
        if len(images) >= MAX_PAGE_IMAGES:
            break
        try:
            block = image_block(img.data)
        except (ImageError, Exception):
            continue
        images.append(block.block)
        added += 1
    return added


def _ranges(pages: list[int]) -> str:
    out: list[str] = []
    start = prev = pages[0]
    for p in [*pages[1:], None]:
        if p is not None and p == prev + 1:
            prev = p
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(out)
