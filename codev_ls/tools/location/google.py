"""Google Maps Platform web services: Geocoding, Places, Directions, Geolocation.

- ``/maps/api/geocode/json`` (``address=`` or ``latlng=``)
- ``/maps/api/place/nearbysearch/json`` (point + radius) and
  ``/maps/api/place/textsearch/json`` ("cafes in Lyon"): 20 results a page,
  at most 60, the next page through ``next_page_token``. A token only becomes
  valid a short while after it is issued; asking too early answers
  ``INVALID_REQUEST``, so the client waits, then retries a few times.
- ``/maps/api/directions/json`` with ``waypoints=a|b|c`` (not for transit,
  where Google takes no waypoints: trips are then asked leg by leg)
- ``POST https://www.googleapis.com/geolocation/v1/geolocate`` (WiFi → point)

Responses carry ``status`` (OK, ZERO_RESULTS, OVER_QUERY_LIMIT,
REQUEST_DENIED, INVALID_REQUEST, …) and sometimes ``error_message``.
Coordinates are WGS-84, ``lat,lng``.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import time
from collections.abc import Callable
from typing import Any

from codev_ls.tools.location.common import (
    GeocodeResult,
    Leg,
    LocationError,
    LocationServices,
    Place,
    Position,
    ProviderError,
    Route,
    SearchResult,
    Step,
    number_of,
    redact,
    text_of,
)
from codev_ls.tools.location.datum import WGS84, LatLng, distance_m
from codev_ls.tools.location.region import parse_coordinates

DEFAULT_BASE_URL = "https://maps.googleapis.com"
DEFAULT_GEOLOCATION_URL = "https://www.googleapis.com"
KEY_ENV = "GOOGLE_MAPS_API_KEY"
NAME = "Google Maps"

PAGE_SIZE = 20
MAX_RESULTS = 60
TIMEOUT_S = 10.0
# How long a next_page_token takes to become valid is not documented beyond
# "a short delay"; about two seconds is what works in practice.
DEFAULT_PAGETOKEN_DELAY_S = 2.0
PAGETOKEN_ATTEMPTS = 5

_AREA_TYPES = frozenset(
    {"country", "administrative_area_level_1", "administrative_area_level_2", "locality",
     "postal_town", "colloquial_area"}
)  # fmt: skip

KEY_HELP = (
    "Set GOOGLE_MAPS_API_KEY to a Google Maps Platform API key: in the Google Cloud Console "
    "create a project, enable the Geocoding API, Places API and Directions API (and the "
    "Geolocation API for WiFi positioning) under 'APIs & Services' → 'Library', then "
    "'Credentials' → 'Create credentials' → 'API key'. The README's 'Location tool' section "
    "has the steps."
)


def base_url() -> str:
    return os.environ.get("GOOGLE_MAPS_BASE_URL") or DEFAULT_BASE_URL


def geolocation_url() -> str:
    return os.environ.get("GOOGLE_GEOLOCATION_BASE_URL") or DEFAULT_GEOLOCATION_URL


def pagetoken_delay() -> float:
    try:
        return max(0.0, float(os.environ.get("GOOGLE_MAPS_PAGETOKEN_DELAY", "")))
    except ValueError:
        return DEFAULT_PAGETOKEN_DELAY_S


def error_message(status: str, detail: str, api: str) -> str:
    detail = f": {detail.strip()}" if detail.strip() else "."
    messages = {
        "REQUEST_DENIED": f"{NAME} denied the request (REQUEST_DENIED){detail} Check that "
        f"GOOGLE_MAPS_API_KEY is valid and the {api} is enabled for its project.",
        "OVER_DAILY_LIMIT": f"{NAME} refused the request (OVER_DAILY_LIMIT){detail} The key "
        "may be invalid, billing may not be enabled, or a usage cap was reached.",
        "OVER_QUERY_LIMIT": f"{NAME} quota exceeded (OVER_QUERY_LIMIT){detail} Wait and try "
        "again, or raise the quota in the Cloud Console.",
        "INVALID_REQUEST": f"{NAME} rejected the request as invalid (INVALID_REQUEST){detail}",
        "MAX_WAYPOINTS_EXCEEDED": f"{NAME}: too many waypoints (MAX_WAYPOINTS_EXCEEDED); "
        "at most 25 are allowed.",
        "MAX_ROUTE_LENGTH_EXCEEDED": f"{NAME}: the route is too long to plan "
        "(MAX_ROUTE_LENGTH_EXCEEDED); split the trip.",
        "NOT_FOUND": f"{NAME} could not find one of the places of this route (NOT_FOUND).",
        "UNKNOWN_ERROR": f"{NAME} had a server error (UNKNOWN_ERROR); try again.",
    }
    return messages.get(status, f"{NAME} returned {status or 'an unknown status'}{detail}")


ProgressFn = Callable[[str, dict[str, Any]], None]


class Google:
    """A client for one tool use (the HTTP clients are shared engine-wide)."""

    name = NAME
    datum = WGS84

    def __init__(
        self, services: LocationServices, key: str, progress: ProgressFn, language: str | None
    ) -> None:
        self.key = key
        self.language = language
        self.http = services.service(NAME, base_url(), TIMEOUT_S)
        self._services = services
        self._progress = progress

    # ------------------------------------------------------------- transport

    async def _call(self, path: str, params: dict[str, Any], api: str) -> dict[str, Any]:
        for attempt in (1, 2):
            reply = await self.http.get(
                path,
                {**params, "language": self.language, "key": self.key},
                secrets=[self.key],
            )
            data = reply.data if isinstance(reply.data, dict) else {}
            status = text_of(data.get("status"))
            if reply.status >= 400 and not status:
                raise ProviderError(NAME, f"{NAME} answered HTTP {reply.status}.")
            if status in ("OK", "ZERO_RESULTS"):
                return data
            if status == "UNKNOWN_ERROR" and attempt == 1:
                await asyncio.sleep(0.5)
                continue
            if status == "NOT_FOUND" and data.get("geocoded_waypoints") is not None:
                return data  # the caller names the place that was not found
            message = error_message(status, text_of(data.get("error_message")), api)
            raise ProviderError(NAME, redact(message, [self.key]), status)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------- geocoding

    async def geocode(self, address: str) -> list[GeocodeResult]:
        data = await self._call("/maps/api/geocode/json", {"address": address}, "Geocoding API")
        return [r for r in (_geocode_result(item) for item in data.get("results") or []) if r]

    async def reverse_geocode(self, point: LatLng) -> GeocodeResult:
        point = point.to(WGS84)
        data = await self._call(
            "/maps/api/geocode/json", {"latlng": point.latlng()}, "Geocoding API"
        )
        results = [r for r in (_geocode_result(i) for i in data.get("results") or []) if r]
        if not results:
            raise LocationError(f"{NAME} has no address for {point.text()}.")
        first = results[0]
        return GeocodeResult(first.address, point, level=first.level)

    async def resolve(self, text: str) -> GeocodeResult:
        coords = parse_coordinates(text)
        if coords is not None:
            return GeocodeResult(address=text.strip(), point=coords.to(WGS84))
        self._progress(f"Google: geocoding {text}", {"provider": "google", "step": "geocode"})
        found = await self.geocode(text)
        if not found:
            raise LocationError(f"{NAME} found no place called {text!r}.")
        return found[0]

    # ------------------------------------------------------------- search

    async def search(
        self,
        query: str | None,
        place_type: str | None,
        center: GeocodeResult,
        radius: int,
        area_text: str,
    ) -> SearchResult:
        """Nearby Search around a spot, Text Search in an area; all pages up to 60 results."""
        if center.is_area:
            path, api = "/maps/api/place/textsearch/json", "Places API"
            words = query or (place_type or "").replace("_", " ")
            params: dict[str, Any] = {"query": f"{words} in {area_text}", "type": place_type}
        else:
            path, api = "/maps/api/place/nearbysearch/json", "Places API"
            params = {
                "location": center.point.latlng(),
                "radius": radius,
                "keyword": query,
                "type": place_type,
            }
        places: list[Place] = []
        seen: set[str] = set()
        pages = 0
        token: str | None = None
        note = ""
        while True:
            if token is None:
                data = await self._call(path, params, api)
            else:
                data = await self._next_page(path, token, api)
            pages += 1
            for item in data.get("results") or []:
                place = _place(item, center.point)
                key = place.place_id or f"{place.name}|{place.address}"
                if key not in seen:
                    seen.add(key)
                    places.append(place)
            self._progress(
                f"Google: page {pages} fetched ({len(places)} places)",
                {"provider": "google", "page": pages, "fetched": len(places)},
            )
            token = text_of(data.get("next_page_token")) or None
            if token is None:
                break
            if len(places) >= MAX_RESULTS:
                note = f"Google returns at most {MAX_RESULTS} results"
                break
        return SearchResult(places[:MAX_RESULTS], pages, None, note)

    async def _next_page(self, path: str, token: str, api: str) -> dict[str, Any]:
        """The page behind ``token``, waiting until Google has made the token valid."""
        delay = pagetoken_delay()
        started = time.monotonic()
        for attempt in range(1, PAGETOKEN_ATTEMPTS + 1):
            await asyncio.sleep(delay)
            try:
                return await self._call(path, {"pagetoken": token}, api)
            except ProviderError as exc:
                if exc.code != "INVALID_REQUEST" or attempt == PAGETOKEN_ATTEMPTS:
                    raise
            self._progress(
                f"Google: waiting for the next page ({time.monotonic() - started:.1f} s)",
                {"provider": "google", "step": "pagetoken"},
            )
        raise AssertionError("unreachable")

    # ------------------------------------------------------------- routes

    async def directions(
        self, stops: list[str], mode: str, labels: list[str] | None = None
    ) -> list[Leg]:
        """One Directions request through ``stops`` (texts or ``lat,lng``), leg by leg."""
        params: dict[str, Any] = {
            "origin": stops[0],
            "destination": stops[-1],
            "mode": mode,
            "units": "metric",
        }
        if len(stops) > 2:
            params["waypoints"] = "|".join(stops[1:-1])
        if mode == "transit":
            params["departure_time"] = "now"
        data = await self._call("/maps/api/directions/json", params, "Directions API")
        status = text_of(data.get("status"))
        names = labels or stops
        if status == "NOT_FOUND":
            missing = [
                names[i]
                for i, wp in enumerate(data.get("geocoded_waypoints") or [])
                if i < len(names) and text_of((wp or {}).get("geocoder_status")) != "OK"
            ]
            which = ", ".join(repr(m) for m in missing) or "one of the places"
            raise LocationError(f"{NAME} could not find {which}; check the spelling.")
        routes = data.get("routes") or []
        if status == "ZERO_RESULTS" or not routes:
            raise LocationError(
                f"{NAME} found no {mode} route between these places."
                + (
                    " Google has little routing data in mainland China; try region='cn'."
                    if mode != "walking"
                    else ""
                )
            )
        legs = []
        for i, leg in enumerate(routes[0].get("legs") or []):
            start = text_of(leg.get("start_address")) or names[i]
            end = text_of(leg.get("end_address")) or names[min(i + 1, len(names) - 1)]
            legs.append(Leg(start, end, _leg_route(leg, text_of(routes[0].get("summary")))))
        if not legs:
            raise LocationError(f"{NAME} found no {mode} route between these places.")
        fare = routes[0].get("fare")
        if isinstance(fare, dict) and text_of(fare.get("text")):
            legs[-1].route.notes.append(f"fare {text_of(fare.get('text'))}")
        return legs

    # ------------------------------------------------------------- positioning

    async def wifi_locate(self, access_points: list[tuple[str, int, str]]) -> Position:
        """Geolocation API with WiFi access points only (no IP guess from Google)."""
        http = self._services.service("Google Geolocation", geolocation_url(), 8.0)
        body = {
            "considerIp": False,
            "wifiAccessPoints": [
                {"macAddress": mac, "signalStrength": dbm} for mac, dbm, _ in access_points
            ],
        }
        reply = await http.post_json(
            "/geolocation/v1/geolocate", body, {"key": self.key}, secrets=[self.key]
        )
        data = reply.data if isinstance(reply.data, dict) else {}
        if reply.status >= 400 or "error" in data:
            error = data.get("error") if isinstance(data.get("error"), dict) else {}
            reasons = [
                e.get("reason", "") for e in error.get("errors") or [] if isinstance(e, dict)
            ]
            reason = reasons[0] if reasons else ""
            message = text_of(error.get("message")) or f"HTTP {reply.status}"
            hint = {
                "notFound": "Google could not place these WiFi networks.",
                "keyInvalid": "the API key is invalid.",
                "dailyLimitExceeded": "the daily quota is used up.",
                "userRateLimitExceeded": "too many requests; try again later.",
                "accessNotConfigured": "the Geolocation API is not enabled for the key's project.",
            }.get(reason, message)
            raise ProviderError(
                NAME,
                redact(f"Google Geolocation: {hint} ({reason or reply.status})", [self.key]),
                reason or str(reply.status),
            )
        loc = data.get("location") or {}
        lat, lng = number_of(loc.get("lat")), number_of(loc.get("lng"))
        if lat is None or lng is None:
            raise ProviderError(NAME, "Google Geolocation answered without a position.")
        return Position(
            point=LatLng(lat, lng, WGS84),
            source="WiFi positioning by Google",
            accuracy_m=number_of(data.get("accuracy")),
        )


def _geocode_result(item: dict[str, Any]) -> GeocodeResult | None:
    loc = ((item.get("geometry") or {}).get("location")) or {}
    lat, lng = number_of(loc.get("lat")), number_of(loc.get("lng"))
    if lat is None or lng is None:
        return None
    types = [t for t in item.get("types") or [] if isinstance(t, str)]
    return GeocodeResult(
        address=text_of(item.get("formatted_address")),
        point=LatLng(lat, lng, WGS84),
        level=", ".join(types),
        is_area=bool(_AREA_TYPES.intersection(types)),
    )


def _place(item: dict[str, Any], center: LatLng) -> Place:
    loc = ((item.get("geometry") or {}).get("location")) or {}
    lat, lng = number_of(loc.get("lat")), number_of(loc.get("lng"))
    point = LatLng(lat, lng, WGS84) if lat is not None and lng is not None else None
    types = [t for t in item.get("types") or [] if t not in ("point_of_interest", "establishment")]
    hours = item.get("opening_hours") if isinstance(item.get("opening_hours"), dict) else {}
    total = number_of(item.get("user_ratings_total"))
    return Place(
        name=text_of(item.get("name")),
        address=text_of(item.get("formatted_address")) or text_of(item.get("vicinity")),
        point=point,
        distance_m=distance_m(center, point) if point is not None else None,
        rating=number_of(item.get("rating")),
        ratings_total=int(total) if total is not None else None,
        category=types[0].replace("_", " ") if types else "",
        open_now=hours.get("open_now") if isinstance(hours.get("open_now"), bool) else None,
        place_id=text_of(item.get("place_id")),
    )


_TAG = re.compile(r"<[^>]+>")


def plain(instruction: str) -> str:
    """Google's ``html_instructions`` as plain text (sub-notes after an em dash)."""
    text = re.sub(r"<div[^>]*>", " — ", instruction)
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub("", text))).strip()


def _leg_route(leg: dict[str, Any], summary: str) -> Route:
    steps = []
    for s in leg.get("steps") or []:
        if not isinstance(s, dict):
            continue
        text = plain(text_of(s.get("html_instructions")))
        details = s.get("transit_details") if isinstance(s.get("transit_details"), dict) else None
        if details:
            line = details.get("line") or {}
            vehicle = text_of((line.get("vehicle") or {}).get("name")) or "transit"
            name = text_of(line.get("short_name")) or text_of(line.get("name"))
            dep = text_of((details.get("departure_stop") or {}).get("name"))
            arr = text_of((details.get("arrival_stop") or {}).get("name"))
            stops = number_of(details.get("num_stops"))
            head = text_of(details.get("headsign"))
            text = (
                f"Take {vehicle} {name}"
                + (f" toward {head}" if head else "")
                + f" from {dep} to {arr}"
                + (f", {int(stops)} stops" if stops else "")
            )
        steps.append(
            Step(
                text,
                number_of((s.get("distance") or {}).get("value")),
                number_of((s.get("duration") or {}).get("value")),
            )
        )
    route = Route(
        distance_m=number_of((leg.get("distance") or {}).get("value")) or 0.0,
        duration_s=number_of((leg.get("duration") or {}).get("value")) or 0.0,
        steps=steps,
        summary=summary,
    )
    return route
