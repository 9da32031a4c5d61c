"""Fake IP geolocation services: ip-api.com, ipinfo.io and ipapi.co, their documented JSON.

- ip-api.com ``GET /json/``: ``{"status": "success", "country", "countryCode", "region",
  "regionName", "city", "zip", "lat", "lon", "timezone", "isp", "org", "as", "query"}``;
  failures ``{"status": "fail", "message": "private range"|"reserved range"|"invalid query",
  "query"}``; over 45 requests a minute, HTTP 429.
- ipinfo.io ``GET /json``: ``{"ip", "hostname", "city", "region", "country", "loc": "lat,lng",
  "org", "postal", "timezone"}``; ``{"ip", "bogon": true}`` for private addresses; HTTP 429
  ``{"status": 429, "error": {"title": "Rate limit exceeded", "message": ...}}``.
- ipapi.co ``GET /json/``: ``{"ip", "city", "region", "country_name", "country_code",
  "latitude", "longitude", "timezone", "org", ...}``; errors ``{"error": true,
  "reason": "RateLimited"|"Reserved IP Address", "message"}``.

``mode`` chooses the answer: ``ok``, ``fail`` (the service's own failure JSON),
``ratelimit`` (HTTP 429), ``down`` (HTTP 502 with an HTML page) or ``slow``.
"""

from __future__ import annotations

from typing import Any, Literal

from tests.fakes._location_server import JsonServer, Reply, Request

Mode = Literal["ok", "fail", "ratelimit", "down", "slow"]
Kind = Literal["ip-api", "ipinfo", "ipapi.co"]

PATHS = {"ip-api": "/json/", "ipinfo": "/json", "ipapi.co": "/json/"}


class FakeIpService(JsonServer):
    def __init__(self, kind: Kind, mode: Mode = "ok") -> None:
        super().__init__()
        self.kind = kind
        self.mode: Mode = mode

    def handle(self, request: Request) -> Reply:
        if request.path != PATHS[self.kind]:
            return Reply(404, b"<html><body>404 Not Found</body></html>")
        if self.mode == "down":
            return Reply(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>")
        if self.mode == "slow":
            return Reply(200, self.ok(request), delay=10.0)
        if self.mode == "ratelimit":
            return Reply(429, self.rate_limited(), headers={"Retry-After": "60"})
        if self.mode == "fail":
            return Reply(200, self.failure())
        return Reply(200, self.ok(request))

    def ok(self, request: Request) -> dict[str, Any]:
        if self.kind == "ip-api":
            zh = request.params.get("lang") == "zh-CN"
            return {
                "status": "success", "country": "美国" if zh else "United States",
                "countryCode": "US", "region": "CA", "regionName": "California",
                "city": "山景城" if zh else "Mountain View", "zip": "94043",
                "lat": 37.4192, "lon": -122.0574, "timezone": "America/Los_Angeles",
                "isp": "Google LLC", "org": "Google Public DNS", "as": "AS15169 Google LLC",
                "query": "8.8.8.8",
            }  # fmt: skip
        if self.kind == "ipinfo":
            return {
                "ip": "203.0.113.7", "hostname": "host.example.net", "city": "Hangzhou",
                "region": "Zhejiang", "country": "CN", "loc": "30.2936,120.1614",
                "org": "AS4134 CHINANET-BACKBONE", "postal": "310000",
                "timezone": "Asia/Shanghai", "readme": "https://ipinfo.io/missingauth",
            }  # fmt: skip
        return {
            "ip": "198.51.100.23", "network": "198.51.100.0/24", "version": "IPv4",
            "city": "Paris", "region": "Île-de-France", "region_code": "IDF",
            "country": "FR", "country_name": "France", "country_code": "FR",
            "country_code_iso3": "FRA", "country_capital": "Paris", "country_tld": ".fr",
            "continent_code": "EU", "in_eu": True, "postal": "75001",
            "latitude": 48.8566, "longitude": 2.3522, "timezone": "Europe/Paris",
            "utc_offset": "+0200", "country_calling_code": "+33", "currency": "EUR",
            "currency_name": "Euro", "languages": "fr-FR", "country_area": 547030.0,
            "country_population": 66987244, "asn": "AS3215", "org": "Orange",
        }  # fmt: skip

    def failure(self) -> dict[str, Any]:
        if self.kind == "ip-api":
            return {"status": "fail", "message": "reserved range", "query": "127.0.0.1"}
        if self.kind == "ipinfo":
            return {"ip": "10.0.0.1", "bogon": True}
        return {"ip": "127.0.0.1", "error": True, "reason": "Reserved IP Address", "reserved": True}

    def rate_limited(self) -> Any:
        if self.kind == "ip-api":
            return b"<html><body>Too Many Requests</body></html>"
        if self.kind == "ipinfo":
            return {"status": 429, "error": {"title": "Rate limit exceeded",
                    "message": "You've hit the daily limit for the unauthenticated API."}}  # fmt: skip
        return {"error": True, "reason": "RateLimited",
                "message": "Visit https://ipapi.co/ratelimited/ for details"}  # fmt: skip
