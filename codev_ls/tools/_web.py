"""What WebSearch and WebFetch share: HTTP clients, the fetch cache, domains, secrets.

Server-wide state lives in one :class:`WebServices` object kept in
``engine.services["web"]`` (made on first use, closed with the engine): one
``httpx.AsyncClient`` per outside service with explicit timeouts, and the
15-minute WebFetch cache. httpx is imported only when a web tool first runs,
so the server's cold start does not pay for it.

Domains are compared the way ``WebFetch(domain:...)`` rules and the
``allowed_domains``/``blocked_domains`` filters mean them: a domain covers
itself and its subdomains (``python.org`` covers ``docs.python.org``, not
``notpython.org``).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx

    from codev_ls.engine.runtime import Engine

USER_AGENT = "Mozilla/5.0 (compatible; Codev-LS/0.1; +https://github.com/codev-ls)"
DEFAULT_TIMEOUT = 30.0
CACHE_TTL_SECONDS = 15 * 60
CACHE_MAX_CHARS = 50_000_000


def env_timeout() -> float:
    """The bound on one web request, in seconds: ``CODEV_WEB_TIMEOUT`` or 30."""
    raw = os.environ.get("CODEV_WEB_TIMEOUT", "").strip()
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


# --------------------------------------------------------------------------- domains


def normalize_domain(value: str) -> str:
    """``https://Docs.Python.org:443/x`` → ``docs.python.org``; ``*.example.com`` → ``example.com``."""
    text = value.strip().lower()
    if "://" in text:
        text = urlsplit(text).hostname or ""
    text = text.split("/", 1)[0]
    if text.startswith("[") and "]" in text:  # an IPv6 literal
        return text[1 : text.index("]")]
    if text.count(":") == 1:
        text = text.split(":", 1)[0]
    text = text.removeprefix("*.").strip(".")
    return _idna(text)


def _idna(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def url_host(url: str) -> str:
    """The URL's host, lower-cased and IDNA-encoded ('' when there is none)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return _idna(host.lower().strip("."))


def host_matches(host: str, domain: str) -> bool:
    """True when ``host`` is ``domain`` or one of its subdomains."""
    host = host.lower().strip(".")
    domain = normalize_domain(domain)
    if not host or not domain:
        return False
    return host == domain or host.endswith("." + domain)


def host_in_any(host: str, domains: Iterable[str]) -> bool:
    return any(host_matches(host, d) for d in domains)


def same_site(host_a: str, host_b: str) -> bool:
    """Hosts a redirect may move between without a new permission: equal up to ``www.``."""
    return host_a.removeprefix("www.") == host_b.removeprefix("www.")


# --------------------------------------------------------------------------- secrets


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``***`` (servers may echo what they were sent)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- cache


@dataclass(slots=True)
class _Entry:
    value: Any
    size: int
    stored_at: float


@dataclass
class TTLCache:
    """A per-URL cache: entries live ``ttl`` seconds; the least recently used go first when full."""

    ttl: float = CACHE_TTL_SECONDS
    max_chars: int = CACHE_MAX_CHARS
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)
    _size: int = 0

    def get(self, key: str) -> Any | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self.clock() - entry.stored_at > self.ttl:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry.value

    def put(self, key: str, value: Any, size: int) -> None:
        if key in self._entries:
            self._drop(key)
        if size > self.max_chars:
            return
        self._entries[key] = _Entry(value, size, self.clock())
        self._size += size
        while self._size > self.max_chars and self._entries:
            self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        self._entries.clear()
        self._size = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._size -= entry.size


# --------------------------------------------------------------------------- services


class WebServices:
    """The web tools' server-wide state: HTTP clients (one per service) and the fetch cache."""

    def __init__(
        self, *, timeout: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.timeout = timeout if timeout is not None else env_timeout()
        self.cache = TTLCache(clock=clock)
        self._clients: dict[str, httpx.AsyncClient] = {}

    def client(self, name: str, *, follow_redirects: bool = False) -> httpx.AsyncClient:
        """The client of one service (``"tavily"``, ``"searxng"``, ``"jina"``, ``"fetch"``)."""
        client = self._clients.get(name)
        if client is None or client.is_closed:
            import httpx

            client = httpx.AsyncClient(
                timeout=self.http_timeout(),
                follow_redirects=follow_redirects,
                headers={"User-Agent": USER_AGENT},
            )
            self._clients[name] = client
        return client

    def http_timeout(self, connect: float | None = None) -> httpx.Timeout:
        import httpx

        return httpx.Timeout(self.timeout, connect=min(connect or 10.0, self.timeout))

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.aclose()
            except Exception:  # closing must never fail the server's shutdown
                pass
        self.cache.clear()


def web_services(engine: Engine) -> WebServices:
    """The engine's :class:`WebServices`, made (and its clean-up registered) on first use."""
    services = engine.services.get("web")
    if not isinstance(services, WebServices):
        services = WebServices()
        engine.services["web"] = services
        engine.on_close(services.aclose)
    return services


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (at most ten, loops cut)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen and len(chain) < 10:
        chain.append(node)
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    return chain


def describe_transport_error(exc: BaseException) -> str:
    """A short, key-free description of an httpx transport failure."""
    import socket
    import ssl

    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return "the connection timed out"
    if isinstance(exc, httpx.TimeoutException):
        return "it did not answer in time"
    chain = exception_chain(exc)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "the connection was refused"
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "its host name could not be resolved"
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        return f"the TLS handshake failed ({cut(str(tls), 160)})"
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "refused" in low:
        return "the connection was refused"
    if "name or service not known" in low or "nodename nor servname" in low:
        return "its host name could not be resolved"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "it closed the connection unexpectedly"
    if isinstance(exc, httpx.ConnectError):
        return f"it could not be reached ({cut(text, 160)})"
    return f"{type(exc).__name__}: {cut(text, 160)}"
