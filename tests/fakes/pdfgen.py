"""A minimal but real PDF writer for tests: text pages and image-only ("scanned") pages.

It writes PDF 1.4 by the book — numbered objects, a content stream per page
using the standard Helvetica font, and a cross-reference table with the true
byte offsets — so any PDF reader (pypdf, poppler) opens the result.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass
class ImagePage:
    """A page that is only a picture: ``rgb`` is width*height*3 bytes."""

    width: int
    height: int
    rgb: bytes


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str | ImagePage]) -> bytes:
    """A PDF whose pages show the given text lines (``\\n`` separated) or images."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids: list[int] = []
    for page in pages:
        if isinstance(page, ImagePage):
            data = zlib.compress(page.rgb)
            image = add(
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
                % (page.width, page.height, len(data))
                + data
                + b"\nendstream"
            )
            content = b"q %d 0 0 %d 72 400 cm /Im1 Do Q" % (page.width, page.height)
            resources = b"<< /XObject << /Im1 %d 0 R >> >>" % image
        else:
            ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
            for line in page.split("\n"):
                ops.append(f"({_escape(line)}) Tj T*")
            ops.append("ET")
            content = "\n".join(ops).encode("latin-1")
            resources = b"<< /Font << /F1 %d 0 R >> >>" % font
        stream = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources %s "
                b"/Contents %d 0 R >>" % (pages_obj, resources, stream)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        xref,
    )
    return bytes(out)
