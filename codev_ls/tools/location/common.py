"""What the providers share: HTTP with bounded timeouts, errors, result values.

Errors, by who reads them (all are ``ToolError``s: the model sees them and
can act — fix the input, pick the other region, tell the user to set a key)::

    LocationError        bad place text, nothing found, nothing to route
    ├── MissingKeyError  the provider needs a key that is not set (says how to get one)
    └── ProviderError    the provider answered with an error code, an HTTP error,
                         or not at all (timeout, unreachable)

API keys travel in query strings (Amap and Google's older web services take
them no other way; Google's newer Places and Routes APIs take a header), so
every message built here is scrubbed of them, and a filter on the ``httpx``
logger scrubs the request lines it logs. Redirects are never followed: the
next hop would receive the key too.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from codev_ls.engine.tool import ToolError
from codev_ls.tools.location.datum import LatLng

if TYPE_CHECKING:
    import httpx

    from codev_ls.engine.runtime import Engine

log = logging.getLogger(__name__)

# ------------------------------------------------------------------ errors


class LocationError(ToolError):
    """A place could not be found or a request cannot be made as asked."""


class MissingKeyError(LocationError):
    """The chosen provider needs an API key that is not configured."""


class ProviderError(LocationError):
    """A provider refused, failed or did not answer."""

    def __init__(self, provider: str, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.code = code


# ------------------------------------------------------------------ redaction

_SECRET_PARAM = re.compile(r"(?i)\b(key|token|apikey|api_key)=([^&\s\"'#]+)")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and every ``key=…``/``token=…`` value masked."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _SECRET_PARAM.sub(lambda m: f"{m.group(1)}=***", text)


class _RedactFilter(logging.Filter):
    """Masks keys in log records (httpx logs each request's full URL at INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = ()
        return True


_FILTER = _RedactFilter()


def install_log_redaction() -> None:
    """Attach the key-masking filter to the loggers that see request URLs (idempotent)."""
    for name in ("httpx", "httpcore"):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


# ------------------------------------------------------------------ HTTP


@dataclass(slots=True)
class HttpReply:
    status: int
    data: Any


class HttpService:
    """One provider endpoint family: its own ``httpx.AsyncClient`` and timeout.

    Cancellation (the engine cancels the tool's task on interrupt) propagates
    through ``await`` into httpx, which drops the connection at once.
    """

    def __init__(self, name: str, base_url: str, timeout: float) -> None:
        import httpx

        install_log_redaction()
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.host = urlsplit(self.base_url).netloc or self.base_url
        self.timeout = timeout
        self.client: httpx.AsyncClient = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)),
            headers={"User-Agent": "codev-ls (Location tool)", "Accept": "application/json"},
            # The key is in the URL (or a header): a redirect would hand it to another host.
            follow_redirects=False,
        )

    async def get(
        self, path: str, params: dict[str, Any], *, secrets: Iterable[str] = ()
    ) -> HttpReply:
        return await self._send("GET", path, params=params, secrets=tuple(secrets))

    async def post_json(
        self,
        path: str,
        body: Any,
        params: dict[str, Any],
        *,
        secrets: Iterable[str] = (),
        headers: dict[str, str] | None = None,
    ) -> HttpReply:
        return await self._send(
            "POST", path, params=params, body=body, secrets=tuple(secrets), headers=headers
        )

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any],
        secrets: tuple[str, ...],
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> HttpReply:
        import httpx

        clean = {k: v for k, v in params.items() if v is not None and v != ""}
        try:
            response = await self.client.request(
                method, path, params=clean, json=body, headers=headers
            )
        except httpx.TimeoutException as exc:
            raise ProviderError(
                self.name, f"{self.name} did not answer within {self.timeout:g} s."
            ) from exc
        except httpx.HTTPError as exc:
            detail = redact(str(exc) or type(exc).__name__, secrets)
            raise ProviderError(
                self.name, f"Could not reach {self.name} ({self.host}): {detail}"
            ) from exc
        if response.is_redirect:
            target = urlsplit(response.headers.get("Location", "")).netloc or "another address"
            raise ProviderError(
                self.name,
                f"{self.name} answered with a redirect (HTTP {response.status_code}) to "
                f"{redact(target, secrets)}; it was not followed, since the request carries "
                "the API key. Check the service's base URL.",
            )
        try:
            data = response.json()
        except ValueError:
            data = None
        if data is None and response.status_code < 400:
            raise ProviderError(
                self.name,
                f"{self.name} answered with something that is not JSON "
                f"(HTTP {response.status_code}).",
            )
        return HttpReply(response.status_code, data)

    async def aclose(self) -> None:
        await self.client.aclose()


def request_timeout(default: float) -> float:
    """Per-request timeout: the service's default, or ``CODEV_LOCATION_TIMEOUT`` seconds."""
    try:
        value = float(os.environ.get("CODEV_LOCATION_TIMEOUT", ""))
    except ValueError:
        return default
    return value if value > 0 else default


class LocationServices:
    """The engine-wide HTTP clients of the Location tool, one per service and base URL."""

    SERVICE_KEY = "location"

    def __init__(self) -> None:
        self._services: dict[tuple[str, str, float], HttpService] = {}

    @classmethod
    def of(cls, engine: Engine) -> LocationServices:
        """The engine's instance, created (and its clean-up registered) on first use."""
        services = engine.services.get(cls.SERVICE_KEY)
        if not isinstance(services, LocationServices):
            services = cls()
            engine.services[cls.SERVICE_KEY] = services
            engine.on_close(services.aclose)
        return services

    def service(self, name: str, base_url: str, timeout: float) -> HttpService:
        timeout = request_timeout(timeout)
        key = (name, base_url.rstrip("/"), timeout)
        svc = self._services.get(key)
        if svc is None:
            svc = self._services[key] = HttpService(name, base_url, timeout)
        return svc

    async def aclose(self) -> None:
        services, self._services = list(self._services.values()), {}
        for svc in services:
            try:
                await svc.aclose()
            except Exception:
                log.debug("closing %s failed", svc.name, exc_info=True)


# ------------------------------------------------------------------ values


@dataclass(slots=True)
class GeocodeResult:
    """One place a text or point resolved to."""

    address: str
    point: LatLng
    # Amap's match level (门牌号, 区县…) or Google's result types.
    level: str = ""
    # Amap's city code and adcode (for transit routes and city-scoped searches).
    citycode: str = ""
    adcode: str = ""
    # True when the match is a whole city/district/province rather than a spot.
    is_area: bool = False


@dataclass(slots=True)
class Place:
    name: str
    address: str = ""
    point: LatLng | None = None
    distance_m: float | None = None
    rating: float | None = None
    ratings_total: int | None = None
    category: str = ""
    open_now: bool | None = None
    place_id: str = ""


@dataclass(slots=True)
class SearchResult:
    places: list[Place]
    pages: int
    # The provider's own total when it reports one (Amap's ``count``).
    reported_total: int | None = None
    # Why paging stopped early, when it did.
    note: str = ""


@dataclass(slots=True)
class Step:
    instruction: str
    distance_m: float | None = None
    duration_s: float | None = None


@dataclass(slots=True)
class Route:
    distance_m: float
    duration_s: float
    steps: list[Step] = field(default_factory=list)
    summary: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Leg:
    start: str
    end: str
    route: Route


@dataclass(slots=True)
class Position:
    """Where the machine is, and how the answer was found."""

    point: LatLng | None
    source: str
    accuracy_m: float | None = None
    label: str = ""
    detail: str = ""


def text_of(value: Any) -> str:
    """A provider string field as text: Amap writes empty fields as ``[]``."""
    if value is None or isinstance(value, (list, dict)):
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return ";".join(value)
        return ""
    return str(value).strip()


def number_of(value: Any) -> float | None:
    text = text_of(value) if not isinstance(value, (int, float)) else value
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
