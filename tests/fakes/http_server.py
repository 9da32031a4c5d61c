"""A real HTTP server on 127.0.0.1 in a thread, the base of the web fakes.

Each fake subclasses :class:`FakeHTTPServer` and implements ``handle(req)``
returning a :class:`Reply` (or writing to ``req.handler`` itself for streams).
Every request is recorded (method, path, headers, body) so tests can count
requests and check what was sent. ``hold()`` makes requests wait until the
test releases them or the server stops — for timeouts and cancellation —
without leaving threads behind.

``tls=True`` makes the port speak both plain HTTP and HTTPS (the first byte of
a connection says which), with a self-signed certificate for 127.0.0.1 that
``ca_file`` points to: that is how an http → https upgrade is tested.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    scheme: str
    handler: BaseHTTPRequestHandler = field(repr=False)

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/plain; charset=utf-8"

    @classmethod
    def json(cls, value: Any, status: int = 200, **headers: str) -> Reply:
        return cls(status, json.dumps(value), dict(headers), "application/json")


STREAMED = object()
"""Returned by ``handle`` when it wrote the response itself."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, fake: FakeHTTPServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        context = self.fake._tls_context
        if context is None:
            return sock, addr
        sock.settimeout(5)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
        except OSError:
            first = b""
        sock.settimeout(None)
        if first == b"\x16":  # a TLS ClientHello
            try:
                sock = context.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                sock.close()
                raise OSError("TLS handshake failed") from None
        return sock, addr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _dispatch(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        req = Request(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            scheme=scheme,
            handler=self,
        )
        with fake._lock:
            fake.requests.append(req)
        if fake._holding:
            fake._held.wait(timeout=fake.hold_limit)
        elif fake.delay:
            fake._stopping.wait(timeout=fake.delay)
        try:
            reply = fake.handle(req)
        except Exception as exc:  # a bug in a fake shows up as a 500 with its message
            reply = Reply(500, f"fake server error: {type(exc).__name__}: {exc}")
        if reply is STREAMED:
            self.close_connection = True
            return
        assert isinstance(reply, Reply)
        data = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
        try:
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _dispatch


class FakeHTTPServer:
    """Base class: start/stop, the request log, holding requests."""

    hold_limit = 30.0

    def __init__(self, *, tls: bool = False, cert_dir: Path | None = None) -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._held = threading.Event()
        self._holding = False
        self._stopping = threading.Event()
        # Seconds every request waits before it is answered (cut short when the server stops).
        self.delay = 0.0
        self._tls_context: ssl.SSLContext | None = None
        self.ca_file: Path | None = None
        if tls:
            if cert_dir is None:
                raise ValueError("tls=True needs cert_dir (a temp folder for the certificate)")
            self.ca_file, self._tls_context = _self_signed(cert_dir)
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # ---- life

    def start(self) -> FakeHTTPServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- holding requests (timeouts, cancellation)

    def hold(self) -> None:
        """Make requests wait (until ``release()``, the server stops, or ``hold_limit``)."""
        self._held.clear()
        self._holding = True

    def release(self) -> None:
        self._holding = False
        self._held.set()

    # ---- what was asked

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def count(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def handle(self, req: Request) -> Reply | object:  # pragma: no cover - subclasses
        return Reply(404, "not found")


def write_chunked(
    handler: BaseHTTPRequestHandler, status: int, content_type: str, chunks: Iterable[bytes]
) -> None:
    """Write a response with chunked transfer encoding (no Content-Length)."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for chunk in chunks:
            if not chunk:
                continue
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        pass


def _self_signed(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1/localhost made with the openssl CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    if not cert.exists():
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-keyout", str(key), "-out", str(cert), "-days", "2",
                "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context
