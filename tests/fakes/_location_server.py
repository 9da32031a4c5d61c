"""A real HTTP server on 127.0.0.1 for the Location fakes (Amap, Google, IP services).

Each fake subclasses :class:`JsonServer` and answers ``handle(request)`` with
``(status, body)``: a dict/list is sent as JSON, ``bytes`` as they are. The
server runs in a thread (``ThreadingHTTPServer``) so the tool's async httpx
clients talk to it over real sockets. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    body: Any = None
    raw_query: str = ""
    # Header names in lower case.
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds to hold the answer back (released early when the server stops).
    delay: float = 0.0


class JsonServer:
    """Subclass and implement :meth:`handle`."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.lock = threading.Lock()

    # -------------------------------------------------------------- to override

    def handle(self, request: Request) -> Reply:
        raise NotImplementedError

    # -------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                params = dict(parse_qsl(parts.query, keep_blank_values=True))
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body: Any = None
                if raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(method, parts.path, params, body, parts.query, headers)
                with fake.lock:
                    fake.requests.append(request)
                reply = fake.handle(request)
                if reply.delay:
                    fake._stopping.wait(reply.delay)
                if isinstance(reply.body, bytes):
                    payload, ctype = reply.body, "text/html; charset=utf-8"
                else:
                    payload = json.dumps(reply.body, ensure_ascii=False).encode("utf-8")
                    ctype = "application/json; charset=utf-8"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> JsonServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------- helpers

    def calls(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path == path]
