"""A plain web server for WebFetch: pages, redirects, large and binary bodies, PDFs, errors.

Routes map a path to a reply (or to a function of the request). Helpers add
the usual cases: HTML/text/JSON pages, redirects (same host or elsewhere),
bodies streamed without a length (to test the size cap), binary files, PDFs
made by :func:`make_pdf`, error statuses, and slow pages (``hold()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fakes.http_server import STREAMED, FakeHTTPServer, Reply, Request, write_chunked

Route = Reply | Callable[[Request], Any]


class FakeWeb(FakeHTTPServer):
    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.routes: dict[str, Route] = {}
        # Paths that only answer over HTTPS (plain HTTP gets a 404), for upgrade tests.
        self.https_only: set[str] = set()

    def handle(self, req: Request) -> Any:
        route = self.routes.get(req.path)
        if route is None or (req.path in self.https_only and req.scheme != "https"):
            return Reply(
                404,
                "<html><body><h1>Not Found</h1><p>No such page here.</p></body></html>",
                content_type="text/html",
            )
        return route(req) if callable(route) else route

    # ---- helpers

    def page(
        self,
        path: str,
        body: str | bytes,
        content_type: str = "text/html; charset=utf-8",
        **headers: str,
    ) -> None:
        self.routes[path] = Reply(200, body, dict(headers), content_type)

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        self.routes[path] = Reply(status, "", {"Location": location}, None)

    def status(
        self, path: str, status: int, body: str = "", content_type: str = "text/html"
    ) -> None:
        self.routes[path] = Reply(status, body, {}, content_type)

    def streamed(self, path: str, content_type: str, chunk: bytes, count: int) -> None:
        """A body of ``count`` chunks sent chunked, with no Content-Length."""

        def respond(req: Request) -> object:
            write_chunked(req.handler, 200, content_type, (chunk for _ in range(count)))
            return STREAMED

        self.routes[path] = respond


def make_pdf(pages: list[list[str]]) -> bytes:
    """A small valid PDF with one text line per entry, one page per list (Helvetica)."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_id = 3 + 2 * n_pages
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, lines in enumerate(pages):
        content_id = 4 + 2 * i
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
