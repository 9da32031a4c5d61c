"""IP geolocation: three public services, asked in turn until one answers.

The answer is city-level at best (the location of the network's exit point,
which for mobile networks and VPNs can be far away). Coordinates are WGS-84.

| service | endpoint | failure shapes |
| --- | --- | --- |
| ip-api.com | ``GET http://ip-api.com/json/`` (free tier is HTTP only) | ``{"status": "fail", "message": ...}``; HTTP 429 when over 45 requests/min |
| ipinfo.io | ``GET https://ipinfo.io/json`` (``token`` optional, ``IPINFO_TOKEN``) | ``{"bogon": true}``; HTTP 429; ``{"error": {"title", "message"}}`` |
| ipapi.co | ``GET https://ipapi.co/json/`` | ``{"error": true, "reason": ..., "message": ...}``, HTTP 429 ``RateLimited`` |

Base URLs: ``IP_API_BASE_URL``, ``IPINFO_BASE_URL``, ``IPAPI_CO_BASE_URL``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codev_ls.tools.location.common import (
    LocationServices,
    Position,
    ProviderError,
    number_of,
    text_of,
)
from codev_ls.tools.location.datum import WGS84, LatLng

TIMEOUT_S = 5.0

# ip-api.com translates place names into these languages.
_IP_API_LANGS = {"en", "de", "es", "pt-BR", "fr", "ja", "zh-CN", "ru"}


def _label(*parts: Any) -> str:
    seen: list[str] = []
    for p in parts:
        t = text_of(p)
        if t and t not in seen:
            seen.append(t)
    return ", ".join(seen)


def _parse_ip_api(status: int, data: dict[str, Any]) -> Position:
    if status == 429:
        raise ProviderError("ip-api.com", "ip-api.com: rate limited (HTTP 429)")
    if data.get("status") != "success":
        raise ProviderError("ip-api.com", f"ip-api.com: {text_of(data.get('message')) or 'failed'}")
    lat, lng = number_of(data.get("lat")), number_of(data.get("lon"))
    if lat is None or lng is None:
        raise ProviderError("ip-api.com", "ip-api.com: no coordinates in the answer")
    return Position(
        point=LatLng(lat, lng, WGS84),
        source="IP geolocation by ip-api.com",
        label=_label(data.get("city"), data.get("regionName"), data.get("country")),
        detail=_label(
            f"IP {text_of(data.get('query'))}" if data.get("query") else "", data.get("isp")
        ),
    )


def _parse_ipinfo(status: int, data: dict[str, Any]) -> Position:
    error = data.get("error")
    if status == 429:
        raise ProviderError("ipinfo.io", "ipinfo.io: rate limited (HTTP 429)")
    if error:
        msg = error.get("message") or error.get("title") if isinstance(error, dict) else error
        raise ProviderError("ipinfo.io", f"ipinfo.io: {text_of(msg) or 'failed'}")
    if data.get("bogon"):
        raise ProviderError("ipinfo.io", "ipinfo.io: the address is private (bogon)")
    if status >= 400:
        raise ProviderError("ipinfo.io", f"ipinfo.io: HTTP {status}")
    parts = text_of(data.get("loc")).split(",")
    try:
        lat, lng = float(parts[0]), float(parts[1])
    except (IndexError, ValueError):
        raise ProviderError("ipinfo.io", "ipinfo.io: no coordinates in the answer") from None
    return Position(
        point=LatLng(lat, lng, WGS84),
        source="IP geolocation by ipinfo.io",
        label=_label(data.get("city"), data.get("region"), data.get("country")),
        detail=_label(f"IP {text_of(data.get('ip'))}" if data.get("ip") else "", data.get("org")),
    )


def _parse_ipapi_co(status: int, data: dict[str, Any]) -> Position:
    if data.get("error"):
        reason = text_of(data.get("reason")) or text_of(data.get("message")) or "failed"
        raise ProviderError("ipapi.co", f"ipapi.co: {reason}")
    if status >= 400:
        raise ProviderError("ipapi.co", f"ipapi.co: HTTP {status}")
    lat, lng = number_of(data.get("latitude")), number_of(data.get("longitude"))
    if lat is None or lng is None:
        raise ProviderError("ipapi.co", "ipapi.co: no coordinates in the answer")
    return Position(
        point=LatLng(lat, lng, WGS84),
        source="IP geolocation by ipapi.co",
        label=_label(data.get("city"), data.get("region"), data.get("country_name")),
        detail=_label(f"IP {text_of(data.get('ip'))}" if data.get("ip") else "", data.get("org")),
    )


@dataclass(frozen=True, slots=True)
class IpService:
    name: str
    env: str
    default_url: str
    path: str
    parse: Callable[[int, dict[str, Any]], Position]

    def base_url(self) -> str:
        return os.environ.get(self.env) or self.default_url

    def params(self, language: str | None) -> dict[str, Any]:
        if self.name == "ip-api.com" and language in _IP_API_LANGS:
            return {"lang": language}
        if self.name == "ipinfo.io":
            return {"token": os.environ.get("IPINFO_TOKEN")}
        return {}


SERVICES: tuple[IpService, ...] = (
    IpService("ip-api.com", "IP_API_BASE_URL", "http://ip-api.com", "/json/", _parse_ip_api),
    IpService("ipinfo.io", "IPINFO_BASE_URL", "https://ipinfo.io", "/json", _parse_ipinfo),
    IpService("ipapi.co", "IPAPI_CO_BASE_URL", "https://ipapi.co", "/json/", _parse_ipapi_co),
)


async def locate_by_ip(
    services: LocationServices,
    language: str | None,
    failures: list[str],
    progress: Callable[[str, dict[str, Any]], None],
) -> Position | None:
    """The first service's answer; each failure is appended to ``failures``."""
    for svc in SERVICES:
        progress(f"IP geolocation: asking {svc.name}", {"step": "ip", "service": svc.name})
        http = services.service(svc.name, svc.base_url(), TIMEOUT_S)
        token = os.environ.get("IPINFO_TOKEN", "")
        try:
            reply = await http.get(svc.path, svc.params(language), secrets=[token])
            data = reply.data if isinstance(reply.data, dict) else {}
            if reply.data is None and reply.status >= 400:
                raise ProviderError(svc.name, f"{svc.name}: HTTP {reply.status}")
            return svc.parse(reply.status, data)
        except ProviderError as exc:
            failures.append(exc.message)
    return None
