"""A scripted HTTP server on 127.0.0.1 for fakes of model APIs.

Each POST takes the next scripted reply from a queue (or asks a responder
function), and every request is recorded (path, headers, JSON body). Replies
are real HTTP: JSON errors with headers (``retry-after``), and Server-Sent
Event streams written event by event, which may pause (``Hold``) until a test
releases them or be cut off (``Drop``) like a lost connection.

It runs in a thread, so it serves the test process and the language server
subprocess alike.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class HttpReply:
    """A plain HTTP answer (an error, usually)."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hold:
    """A pause inside a stream until ``event`` is set (or ``timeout`` passes)."""

    event: threading.Event
    timeout: float = 30.0


@dataclass
class Drop:
    """Cut the connection here, mid-stream."""


@dataclass
class SSE:
    """A streamed answer: raw SSE frames (``str``), ``Hold`` and ``Drop`` items, in order."""

    frames: list[str | Hold | Drop]
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Reply = HttpReply | SSE
Responder = Callable[[Recorded], Reply | None]


class ScriptedServer:
    """The server: ``push`` replies, ``requests`` holds what came in."""

    #: Overridden by each fake: checks a request, returning problems (empty when valid).
    def validate(self, rec: Recorded) -> list[str]:
        return []

    def auth_error(self, rec: Recorded) -> HttpReply | None:
        return None

    def invalid_reply(self, problems: list[str]) -> HttpReply:
        return HttpReply(400, {"error": {"message": "; ".join(problems)}})

    def empty_reply(self) -> HttpReply:
        return HttpReply(500, {"error": {"message": "fake: no scripted reply left"}})

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.responder: Responder | None = None
        self.requests: list[Recorded] = []
        self.problems: list[tuple[int, list[str]]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.arrived = threading.Condition(self._lock)

    # ---------------------------------------------------------------- scripting

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def wait_for_requests(self, count: int, timeout: float = 20.0) -> None:
        with self.arrived:
            ok = self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)
        if not ok:
            raise AssertionError(f"expected {count} requests, got {len(self.requests)}")

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    # ---------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ScriptedServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                rec = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = fake._next(rec)
                try:
                    fake._write(self, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- serving

    def _next(self, rec: Recorded) -> Reply:
        with self.arrived:
            index = len(self.requests)
            self.requests.append(rec)
            self.arrived.notify_all()
        denied = self.auth_error(rec)
        if denied is not None:
            return denied
        problems = self.validate(rec)
        if problems:
            with self._lock:
                self.problems.append((index, problems))
            return self.invalid_reply(problems)
        if self.responder is not None:
            reply = self.responder(rec)
            if reply is not None:
                return reply
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        return self.empty_reply()

    @staticmethod
    def _write(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if isinstance(reply, HttpReply):
            data = json.dumps(reply.body).encode()
            handler.send_response(reply.status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for k, v in reply.headers.items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        for k, v in reply.headers.items():
            handler.send_header(k, v)
        handler.end_headers()
        for frame in reply.frames:
            if isinstance(frame, Hold):
                frame.event.wait(frame.timeout)
                continue
            if isinstance(frame, Drop):
                handler.wfile.flush()
                handler.connection.shutdown(2)
                return
            handler.wfile.write(frame.encode())
            handler.wfile.flush()
            if reply.delay:
                time.sleep(reply.delay)


def sse_frame(event: str | None, data: Any) -> str:
    """One SSE frame: ``event:`` line (if any) and one ``data:`` line of JSON (or raw text)."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"
