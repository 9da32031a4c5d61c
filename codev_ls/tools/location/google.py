"""Google Maps Platform web services: Geocoding, Places, Routes/Directions, Geolocation.

Two generations of the place and route services, chosen with
``GOOGLE_MAPS_API`` (``new``, the default, or ``legacy``):

- new (what a Cloud project created today can enable): Places API (New)
  ``POST /v1/places:searchText`` (``textQuery``, ``pageSize`` ≤ 20,
  ``pageToken`` → ``nextPageToken``, at most 60 results; its
  ``locationRestriction`` takes a rectangle only) and
  ``POST /v1/places:searchNearby`` (a circle, ``includedTypes``,
  ``maxResultCount`` ≤ 20, no further pages); Routes API
  ``POST /directions/v2:computeRoutes`` (``origin``/``destination``/
  ``intermediates`` as ``{"address"}`` or ``{"location": {"latLng"}}``,
  ``travelMode`` DRIVE/WALK/BICYCLE/TRANSIT). They take the key in
  ``X-Goog-Api-Key`` and need a response field mask in ``X-Goog-FieldMask``;
  errors are ``{"error": {"code", "message", "status", "details"}}``.
- legacy (Legacy status; Google's notice said new projects could not enable
  them from 1 March 2025, projects that had them keep them): ``/maps/api/place/nearbysearch|textsearch/json`` (20 a page, at most
  60, the next page through ``next_page_token``, which becomes valid only a
  short while after it is issued — asking too early answers
  ``INVALID_REQUEST``, so the client waits, then retries a few times) and
  ``/maps/api/directions/json`` (``waypoints=a|b|c``). A project without them
  answers ``REQUEST_DENIED``, "You're calling a legacy API, which is not
  enabled for your project".

When the new API answers that it is not enabled for the key's project
(``SERVICE_DISABLED``, ``API_KEY_SERVICE_BLOCKED``), the legacy one is tried
once, with a note saying what to enable. Neither takes waypoints for transit:
trips are then asked leg by leg.

Also: ``/maps/api/geocode/json`` (Geocoding API, current) and
``POST https://www.googleapis.com/geolocation/v1/geolocate`` (WiFi/cells → point).

Datums: Google's map data inside mainland China is GCJ-02 (its street map
there is licensed Chinese data, shifted like Amap's: its Beijing geocode lies
within metres of Amap's GCJ-02 point), and WGS-84 everywhere else, Hong Kong,
Macau and Taiwan included. So every point Google returns is tagged by where it
lies (``datum_at``), and points sent to Google are put in the datum of their
place. The Geolocation API positions a device and answers in WGS-84.
"""

from __future__ import annotations

import asyncio
import html
import math
import os
import re
import time
from collections.abc import Callable
from typing import Any, Literal

from codev_ls.tools.location.cell import CellTower
from codev_ls.tools.location.common import (
    GeocodeResult,
    HttpReply,
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
from codev_ls.tools.location.datum import GCJ02, WGS84, Datum, LatLng, distance_m
from codev_ls.tools.location.region import in_mainland, parse_coordinates

DEFAULT_BASE_URL = "https://maps.googleapis.com"
DEFAULT_PLACES_URL = "https://places.googleapis.com"
DEFAULT_ROUTES_URL = "https://routes.googleapis.com"
DEFAULT_GEOLOCATION_URL = "https://www.googleapis.com"
KEY_ENV = "GOOGLE_MAPS_API_KEY"
FLAVOUR_ENV = "GOOGLE_MAPS_API"
NAME = "Google Maps"

PAGE_SIZE = 20
MAX_RESULTS = 60
TIMEOUT_S = 10.0
# How long a legacy next_page_token takes to become valid is not documented beyond
# "a short delay"; about two seconds is what works in practice.
DEFAULT_PAGETOKEN_DELAY_S = 2.0
PAGETOKEN_ATTEMPTS = 5

PLACES_NEW = "Places API (New)"
ROUTES = "Routes API"
PLACES_LEGACY = "Places API"
DIRECTIONS_LEGACY = "Directions API"

# Response field masks (the new APIs return nothing without one). nextPageToken must be
# named too, or Text Search (New) leaves it out.
_PLACE_FIELDS = (
    "places.id,places.displayName,places.formattedAddress,places.location,places.rating,"
    "places.userRatingCount,places.types,places.primaryType,places.currentOpeningHours.openNow"
)
TEXT_SEARCH_FIELDS = _PLACE_FIELDS + ",nextPageToken"
NEARBY_FIELDS = _PLACE_FIELDS
ROUTE_FIELDS = (
    "routes.distanceMeters,routes.duration,routes.description,routes.legs.distanceMeters,"
    "routes.legs.duration,routes.legs.steps.distanceMeters,routes.legs.steps.staticDuration,"
    "routes.legs.steps.navigationInstruction.instructions,routes.legs.steps.travelMode,"
    "routes.legs.steps.transitDetails,routes.travelAdvisory.transitFare,"
    "routes.localizedValues.transitFare,geocodingResults"
)
_TRAVEL_MODES = {
    "driving": "DRIVE",
    "walking": "WALK",
    "bicycling": "BICYCLE",
    "transit": "TRANSIT",
}
# The new APIs' answers that mean "not enabled for this key's project": try the legacy API.
_NOT_ENABLED = frozenset({"SERVICE_DISABLED", "API_KEY_SERVICE_BLOCKED"})

_AREA_TYPES = frozenset(
    {"country", "administrative_area_level_1", "administrative_area_level_2", "locality",
     "postal_town", "colloquial_area"}
)  # fmt: skip
_GENERIC_TYPES = frozenset({"point_of_interest", "establishment"})

KEY_HELP = (
    "Set GOOGLE_MAPS_API_KEY to a Google Maps Platform API key: in the Google Cloud Console "
    "create a project, enable the Geocoding API, Places API (New) and Routes API (and the "
    "Geolocation API for WiFi positioning) under 'APIs & Services' → 'Library', then "
    "'Credentials' → 'Create credentials' → 'API key'. The README's 'Location tool' section "
    "has the steps."
)
LEGACY_HELP = (
    "Google no longer lets new Cloud projects enable the legacy Places API and Directions "
    "API. Enable 'Places API (New)' and 'Routes API' for the key's project and leave "
    f"{FLAVOUR_ENV} unset (the tool uses those by default)."
)

Flavour = Literal["new", "legacy"]


def base_url() -> str:
    return os.environ.get("GOOGLE_MAPS_BASE_URL") or DEFAULT_BASE_URL


def places_url() -> str:
    """Places API (New); ``GOOGLE_MAPS_BASE_URL``, when set, serves it too (a proxy, a fake)."""
    return (
        os.environ.get("GOOGLE_PLACES_BASE_URL")
        or os.environ.get("GOOGLE_MAPS_BASE_URL")
        or DEFAULT_PLACES_URL
    )


def routes_url() -> str:
    """Routes API; ``GOOGLE_MAPS_BASE_URL``, when set, serves it too."""
    return (
        os.environ.get("GOOGLE_ROUTES_BASE_URL")
        or os.environ.get("GOOGLE_MAPS_BASE_URL")
        or DEFAULT_ROUTES_URL
    )


def geolocation_url() -> str:
    return os.environ.get("GOOGLE_GEOLOCATION_BASE_URL") or DEFAULT_GEOLOCATION_URL


def flavour() -> Flavour:
    value = os.environ.get(FLAVOUR_ENV, "").strip().lower()
    return "legacy" if value == "legacy" else "new"


def pagetoken_delay() -> float:
    try:
        return max(0.0, float(os.environ.get("GOOGLE_MAPS_PAGETOKEN_DELAY", "")))
    except ValueError:
        return DEFAULT_PAGETOKEN_DELAY_S


def datum_at(point: LatLng) -> Datum:
    """The datum Google's data uses where ``point`` lies: GCJ-02 in the mainland."""
    return GCJ02 if in_mainland(point) else WGS84


def on_wire(point: LatLng) -> LatLng:
    """``point`` in the datum Google expects at that place."""
    return point.to(datum_at(point))


def google_point(lat: float, lng: float) -> LatLng:
    """A point Google returned, tagged with the datum of its place."""
    return LatLng(lat, lng, datum_at(LatLng(lat, lng)))


def error_message(status: str, detail: str, api: str) -> str:
    """A legacy web service status written for the model and the user."""
    legacy = "legacy API" in detail
    detail = f": {detail.strip()}" if detail.strip() else "."
    if status == "REQUEST_DENIED" and legacy:
        return (
            f"{NAME} denied the request (REQUEST_DENIED){detail} The key's Cloud project "
            f"does not have the legacy {api} enabled. {LEGACY_HELP}"
        )
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


def new_api_error(reply: HttpReply, api: str) -> tuple[str, str]:
    """(message, code) for an error of the new APIs (``google.rpc.Status`` JSON)."""
    data = reply.data if isinstance(reply.data, dict) else {}
    error = data.get("error") if isinstance(data.get("error"), dict) else {}
    status = text_of(error.get("status")) or f"HTTP {reply.status}"
    message = text_of(error.get("message"))
    reason = ""
    for item in error.get("details") or []:
        if isinstance(item, dict) and text_of(item.get("reason")):
            reason = text_of(item.get("reason"))
            break
    code = reason or status
    said = f": {message}" if message else ""
    if reason == "API_KEY_INVALID" or "API key not valid" in message:
        text = f"{NAME} rejected the API key (API_KEY_INVALID){said} {KEY_HELP}"
    elif reason == "SERVICE_DISABLED":
        text = (
            f"{NAME}: the {api} is not enabled for the key's Cloud project (SERVICE_DISABLED). "
            f"Enable '{api}' under 'APIs & Services' → 'Library' (it can take a few minutes)."
        )
    elif reason == "API_KEY_SERVICE_BLOCKED":
        text = (
            f"{NAME}: the key's API restrictions do not allow the {api} "
            f"(API_KEY_SERVICE_BLOCKED); add it to the key's allowed APIs under 'Credentials'."
        )
    elif reason == "BILLING_DISABLED":
        text = f"{NAME}: billing is not enabled for the key's Cloud project (BILLING_DISABLED)."
    elif status == "RESOURCE_EXHAUSTED" or reply.status == 429:
        text = (
            f"{NAME} quota exceeded for the {api} (RESOURCE_EXHAUSTED){said} Wait and try "
            "again, or raise the quota in the Cloud Console."
        )
    else:
        text = f"{NAME} {api} refused the request ({status}){said}"
    return text, code


ProgressFn = Callable[[str, dict[str, Any]], None]


class Google:
    """A client for one tool use (the HTTP clients are shared engine-wide)."""

    name = NAME
    # The datum outside mainland China; see ``datum_at``.
    datum = WGS84

    def __init__(
        self, services: LocationServices, key: str, progress: ProgressFn, language: str | None
    ) -> None:
        self.key = key
        self.language = language
        self.http = services.service(NAME, base_url(), TIMEOUT_S)
        self._services = services
        self._progress = progress
        self.flavour: Flavour = flavour()
        # Said once in the result (a fallback to the legacy API, say).
        self.notes: list[str] = []

    def datum_at(self, point: LatLng) -> Datum:
        return datum_at(point)

    # ------------------------------------------------------------- transport

    async def _call(self, path: str, params: dict[str, Any], api: str) -> dict[str, Any]:
        """A legacy web service call (key in the query string, ``status`` in the body)."""
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

    async def _post(
        self, base: str, path: str, body: dict[str, Any], fields: str, api: str
    ) -> dict[str, Any]:
        """A new API call: JSON body, key and field mask in headers."""
        http = self._services.service(f"{NAME} ({api})", base, TIMEOUT_S)
        headers = {"X-Goog-Api-Key": self.key, "X-Goog-FieldMask": fields}
        reply = await http.post_json(path, body, {}, secrets=[self.key], headers=headers)
        if reply.status >= 400 or not isinstance(reply.data, dict):
            message, code = new_api_error(reply, api)
            raise ProviderError(NAME, redact(message, [self.key]), code)
        return reply.data

    def _fell_back(self, exc: ProviderError, new: str, legacy: str) -> None:
        self.notes.append(
            f"the {new} is not enabled for this key ({exc.code}), so the legacy {legacy} "
            f"answered. Enable '{new}' for the key's project: the legacy API is not available "
            "to new projects."
        )

    # ------------------------------------------------------------- geocoding

    async def geocode(self, address: str) -> list[GeocodeResult]:
        data = await self._call("/maps/api/geocode/json", {"address": address}, "Geocoding API")
        return [r for r in (_geocode_result(item) for item in data.get("results") or []) if r]

    async def reverse_geocode(self, point: LatLng) -> GeocodeResult:
        point = on_wire(point)
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
            return GeocodeResult(address=text.strip(), point=on_wire(coords))
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
        """Places matching ``query``/``place_type`` around a spot or in an area (≤ 60)."""
        if self.flavour == "new":
            try:
                return await self._search_new(query, place_type, center, radius, area_text)
            except ProviderError as exc:
                if exc.code not in _NOT_ENABLED:
                    raise
                try:
                    result = await self._search_legacy(query, place_type, center, radius, area_text)
                except ProviderError as legacy:
                    raise ProviderError(
                        NAME, f"{exc.message} The legacy Places API failed too: {legacy.message}"
                    ) from legacy
                self._fell_back(exc, PLACES_NEW, PLACES_LEGACY)
                return result
        return await self._search_legacy(query, place_type, center, radius, area_text)

    async def _search_new(
        self,
        query: str | None,
        place_type: str | None,
        center: GeocodeResult,
        radius: int,
        area_text: str,
    ) -> SearchResult:
        base = places_url()
        language = {"languageCode": self.language} if self.language else {}
        origin = center.point
        if not center.is_area and not query:
            # A category around a spot: Nearby Search (New), one page of at most 20.
            body: dict[str, Any] = {
                "includedTypes": [place_type],
                "maxResultCount": PAGE_SIZE,
                "locationRestriction": {"circle": {"center": _lat_lng(origin), "radius": radius}},
                "rankPreference": "DISTANCE",
                **language,
            }
            data = await self._post(
                base, "/v1/places:searchNearby", body, NEARBY_FIELDS, PLACES_NEW
            )
            places = [_new_place(p, origin) for p in data.get("places") or []]
            self._progress(
                f"Google: page 1 fetched ({len(places)} places)",
                {"provider": "google", "page": 1, "fetched": len(places)},
            )
            note = (
                f"Nearby Search (New) returns at most {PAGE_SIZE} places"
                if len(places) >= PAGE_SIZE
                else ""
            )
            return SearchResult(places, 1, None, note)
        words = query or (place_type or "").replace("_", " ")
        body = {"textQuery": words, "pageSize": PAGE_SIZE, **language}
        if place_type:
            body["includedType"] = place_type
        if center.is_area:
            body["textQuery"] = f"{words} in {area_text}"
        else:
            # Text Search (New) restricts to rectangles only: the circle's bounding box,
            # then the corners outside the circle are left out here.
            body["locationRestriction"] = {"rectangle": _bounding_box(origin, radius)}
        places: list[Place] = []
        seen: set[str] = set()
        pages = 0
        outside = 0
        note = ""
        token: str | None = None
        while True:
            page_body = {**body, "pageToken": token} if token else body
            data = await self._post(
                base, "/v1/places:searchText", page_body, TEXT_SEARCH_FIELDS, PLACES_NEW
            )
            pages += 1
            for item in data.get("places") or []:
                place = _new_place(item, origin)
                key = place.place_id or f"{place.name}|{place.address}"
                if key in seen:
                    continue
                seen.add(key)
                if (
                    not center.is_area
                    and place.distance_m is not None
                    and place.distance_m > radius
                ):
                    outside += 1
                    continue
                places.append(place)
            self._progress(
                f"Google: page {pages} fetched ({len(places)} places)",
                {"provider": "google", "page": pages, "fetched": len(places)},
            )
            token = text_of(data.get("nextPageToken")) or None
            if token is None:
                break
            if len(seen) >= MAX_RESULTS:
                note = f"Google returns at most {MAX_RESULTS} results"
                break
        if outside:
            extra = f"{outside} found just outside the radius left out"
            note = f"{note}; {extra}" if note else extra
        return SearchResult(places[:MAX_RESULTS], pages, None, note)

    async def _search_legacy(
        self,
        query: str | None,
        place_type: str | None,
        center: GeocodeResult,
        radius: int,
        area_text: str,
    ) -> SearchResult:
        """Nearby Search around a spot, Text Search in an area; all pages up to 60 results."""
        if center.is_area:
            path = "/maps/api/place/textsearch/json"
            words = query or (place_type or "").replace("_", " ")
            params: dict[str, Any] = {"query": f"{words} in {area_text}", "type": place_type}
        else:
            path = "/maps/api/place/nearbysearch/json"
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
                data = await self._call(path, params, PLACES_LEGACY)
            else:
                data = await self._next_page(path, token, PLACES_LEGACY)
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
        """One route request through ``stops`` (texts or ``lat,lng``), leg by leg."""
        names = labels or stops
        if self.flavour == "new":
            try:
                return await self._routes_new(stops, mode, names)
            except ProviderError as exc:
                if exc.code not in _NOT_ENABLED:
                    raise
                try:
                    legs = await self._directions_legacy(stops, mode, names)
                except ProviderError as legacy:
                    raise ProviderError(
                        NAME,
                        f"{exc.message} The legacy Directions API failed too: {legacy.message}",
                    ) from legacy
                self._fell_back(exc, ROUTES, DIRECTIONS_LEGACY)
                return legs
        return await self._directions_legacy(stops, mode, names)

    async def _routes_new(self, stops: list[str], mode: str, names: list[str]) -> list[Leg]:
        body: dict[str, Any] = {
            "origin": _waypoint(stops[0]),
            "destination": _waypoint(stops[-1]),
            "travelMode": _TRAVEL_MODES[mode],
            "units": "METRIC",
            "computeAlternativeRoutes": False,
        }
        if len(stops) > 2:
            body["intermediates"] = [_waypoint(s) for s in stops[1:-1]]
        if self.language:
            body["languageCode"] = self.language
        data = await self._post(
            routes_url(), "/directions/v2:computeRoutes", body, ROUTE_FIELDS, ROUTES
        )
        routes = data.get("routes") or []
        if not routes:
            missing = _not_geocoded(data.get("geocodingResults"), names)
            if missing:
                which = ", ".join(repr(m) for m in missing)
                raise LocationError(f"{NAME} could not find {which}; check the spelling.")
            raise LocationError(_no_route(mode))
        route = routes[0] if isinstance(routes[0], dict) else {}
        legs = []
        for i, leg in enumerate(route.get("legs") or []):
            if not isinstance(leg, dict):
                continue
            start, end = names[min(i, len(names) - 1)], names[min(i + 1, len(names) - 1)]
            legs.append(Leg(start, end, _new_leg_route(leg, text_of(route.get("description")))))
        if not legs:
            raise LocationError(_no_route(mode))
        fare = _fare(route)
        if fare:
            legs[-1].route.notes.append(f"fare {fare}")
        return legs

    async def _directions_legacy(self, stops: list[str], mode: str, names: list[str]) -> list[Leg]:
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
        data = await self._call("/maps/api/directions/json", params, DIRECTIONS_LEGACY)
        status = text_of(data.get("status"))
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
            raise LocationError(_no_route(mode))
        legs = []
        for i, leg in enumerate(routes[0].get("legs") or []):
            start = text_of(leg.get("start_address")) or names[i]
            end = text_of(leg.get("end_address")) or names[min(i + 1, len(names) - 1)]
            legs.append(Leg(start, end, _leg_route(leg, text_of(routes[0].get("summary")))))
        if not legs:
            raise LocationError(_no_route(mode))
        fare = routes[0].get("fare")
        if isinstance(fare, dict) and text_of(fare.get("text")):
            legs[-1].route.notes.append(f"fare {text_of(fare.get('text'))}")
        return legs

    # ------------------------------------------------------------- positioning

    async def hw_locate(
        self, access_points: list[tuple[str, int, str]], cells: list[CellTower] | None = None
    ) -> Position:
        """Geolocation API with WiFi access points and/or cell towers (no IP guess)."""
        http = self._services.service("Google Geolocation", geolocation_url(), 8.0)
        cells = cells or []
        body: dict[str, Any] = {"considerIp": False}
        if len(access_points) >= 2:
            body["wifiAccessPoints"] = [
                {"macAddress": mac, "signalStrength": dbm} for mac, dbm, _ in access_points
            ]
        if cells:
            body["radioType"] = _radio_type(cells[0].radio)
            body["cellTowers"] = [
                {
                    "cellId": c.cell_id,
                    "locationAreaCode": c.lac,
                    "mobileCountryCode": c.mcc,
                    "mobileNetworkCode": c.mnc,
                    **({"signalStrength": c.dbm} if c.dbm is not None else {}),
                }
                for c in cells
            ]
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
            what = "WiFi networks" if "wifiAccessPoints" in body else "cell towers"
            hint = {
                "notFound": f"Google could not place these {what}.",
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
        how = "WiFi" if "wifiAccessPoints" in body else "cell"
        return Position(
            point=LatLng(lat, lng, WGS84),
            source=f"{how} positioning by Google",
            accuracy_m=number_of(data.get("accuracy")),
        )

    async def wifi_locate(self, access_points: list[tuple[str, int, str]]) -> Position:
        return await self.hw_locate(access_points, [])


# ------------------------------------------------------------------ helpers


def _no_route(mode: str) -> str:
    hint = (
        " Google has little routing data in mainland China; try region='cn'."
        if mode != "walking"
        else ""
    )
    return f"{NAME} found no {mode} route between these places.{hint}"


def _lat_lng(point: LatLng) -> dict[str, float]:
    return {"latitude": round(point.lat, 7), "longitude": round(point.lng, 7)}


def _bounding_box(center: LatLng, radius: float) -> dict[str, dict[str, float]]:
    """The rectangle (``low`` south-west, ``high`` north-east) around a circle."""
    dlat = radius / 111_320.0
    dlng = radius / (111_320.0 * max(0.01, math.cos(math.radians(center.lat))))
    low = LatLng(max(-90.0, center.lat - dlat), max(-180.0, center.lng - dlng), center.datum)
    high = LatLng(min(90.0, center.lat + dlat), min(180.0, center.lng + dlng), center.datum)
    return {"low": _lat_lng(low), "high": _lat_lng(high)}


def _waypoint(text: str) -> dict[str, Any]:
    """A Routes API waypoint: ``lat,lng`` texts as a location, anything else as an address."""
    parts = text.split(",")
    if len(parts) == 2:
        try:
            lat, lng = float(parts[0]), float(parts[1])
        except ValueError:
            pass
        else:
            return {"location": {"latLng": {"latitude": lat, "longitude": lng}}}
    return {"address": text}


def _not_geocoded(results: Any, names: list[str]) -> list[str]:
    """The stops whose ``geocoderStatus`` (a ``google.rpc.Status``) is not OK."""
    if not isinstance(results, dict):
        return []
    bad: list[int] = []

    def failed(item: Any) -> bool:
        status = item.get("geocoderStatus") if isinstance(item, dict) else None
        return isinstance(status, dict) and bool(status.get("code"))

    if failed(results.get("origin")):
        bad.append(0)
    for item in results.get("intermediates") or []:
        if failed(item):
            index = number_of(item.get("intermediateWaypointRequestIndex")) or 0
            bad.append(int(index) + 1)
    if failed(results.get("destination")):
        bad.append(len(names) - 1)
    return [names[i] for i in sorted(set(bad)) if 0 <= i < len(names)]


def _seconds(value: Any) -> float | None:
    """A protobuf Duration as JSON (``"165s"``, ``"1.5s"``) → seconds."""
    text = text_of(value)
    return number_of(text[:-1]) if text.endswith("s") else number_of(text)


def _fare(route: dict[str, Any]) -> str:
    localized = (route.get("localizedValues") or {}).get("transitFare")
    if isinstance(localized, dict) and text_of(localized.get("text")):
        return text_of(localized.get("text"))
    money = (route.get("travelAdvisory") or {}).get("transitFare")
    if isinstance(money, dict) and money.get("currencyCode"):
        amount = (number_of(money.get("units")) or 0) + (number_of(money.get("nanos")) or 0) / 1e9
        return f"{amount:.2f} {text_of(money.get('currencyCode'))}"
    return ""


def _new_leg_route(leg: dict[str, Any], summary: str) -> Route:
    steps = []
    for s in leg.get("steps") or []:
        if not isinstance(s, dict):
            continue
        said = text_of((s.get("navigationInstruction") or {}).get("instructions"))
        # Sub-notes come on their own lines ("Turn left…\nDestination will be on the right").
        text = " — ".join(line.strip() for line in said.splitlines() if line.strip())
        details = s.get("transitDetails") if isinstance(s.get("transitDetails"), dict) else None
        if details:
            line = details.get("transitLine") or {}
            vehicle_name = (line.get("vehicle") or {}).get("name")
            vehicle = (
                text_of((vehicle_name or {}).get("text")) if isinstance(vehicle_name, dict) else ""
            )
            name = text_of(line.get("nameShort")) or text_of(line.get("name"))
            stops = details.get("stopDetails") or {}
            dep = text_of((stops.get("departureStop") or {}).get("name"))
            arr = text_of((stops.get("arrivalStop") or {}).get("name"))
            count = number_of(details.get("stopCount"))
            head = text_of(details.get("headsign"))
            text = (
                f"Take {vehicle or 'transit'} {name}"
                + (f" toward {head}" if head else "")
                + f" from {dep} to {arr}"
                + (f", {int(count)} stops" if count else "")
            )
        if not text:
            continue
        steps.append(
            Step(text, number_of(s.get("distanceMeters")), _seconds(s.get("staticDuration")))
        )
    return Route(
        distance_m=number_of(leg.get("distanceMeters")) or 0.0,
        duration_s=_seconds(leg.get("duration")) or 0.0,
        steps=steps,
        summary=summary,
    )


def _radio_type(radio: str) -> str:
    if radio in ("gsm", "gprs", "edge"):
        return "gsm"
    if radio in ("lte",):
        return "lte"
    if radio in ("5gnr",):
        return "nr"
    return "wcdma"


def _geocode_result(item: dict[str, Any]) -> GeocodeResult | None:
    loc = ((item.get("geometry") or {}).get("location")) or {}
    lat, lng = number_of(loc.get("lat")), number_of(loc.get("lng"))
    if lat is None or lng is None:
        return None
    types = [t for t in item.get("types") or [] if isinstance(t, str)]
    return GeocodeResult(
        address=text_of(item.get("formatted_address")),
        point=google_point(lat, lng),
        level=", ".join(types),
        is_area=bool(_AREA_TYPES.intersection(types)),
    )


def _place(item: dict[str, Any], center: LatLng) -> Place:
    """A legacy Places search result."""
    loc = ((item.get("geometry") or {}).get("location")) or {}
    lat, lng = number_of(loc.get("lat")), number_of(loc.get("lng"))
    point = google_point(lat, lng) if lat is not None and lng is not None else None
    types = [t for t in item.get("types") or [] if t not in _GENERIC_TYPES]
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


def _new_place(item: dict[str, Any], center: LatLng) -> Place:
    """A Places API (New) ``Place``."""
    loc = item.get("location") if isinstance(item.get("location"), dict) else {}
    lat, lng = number_of(loc.get("latitude")), number_of(loc.get("longitude"))
    point = google_point(lat, lng) if lat is not None and lng is not None else None
    display = item.get("displayName") if isinstance(item.get("displayName"), dict) else {}
    types = [t for t in item.get("types") or [] if isinstance(t, str) and t not in _GENERIC_TYPES]
    category = text_of(item.get("primaryType")) or (types[0] if types else "")
    hours = item.get("currentOpeningHours")
    open_now = hours.get("openNow") if isinstance(hours, dict) else None
    total = number_of(item.get("userRatingCount"))
    return Place(
        name=text_of(display.get("text")),
        address=text_of(item.get("formattedAddress")),
        point=point,
        distance_m=distance_m(center, point) if point is not None else None,
        rating=number_of(item.get("rating")),
        ratings_total=int(total) if total is not None else None,
        category=category.replace("_", " "),
        open_now=open_now if isinstance(open_now, bool) else None,
        place_id=text_of(item.get("id")),
    )


_TAG = re.compile(r"<[^>]+>")


def plain(instruction: str) -> str:
    """Google's ``html_instructions`` as plain text (sub-notes after an em dash)."""
    text = re.sub(r"<div[^>]*>", " — ", instruction)
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub("", text))).strip()


def _leg_route(leg: dict[str, Any], summary: str) -> Route:
    """A legacy Directions leg."""
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
    return Route(
        distance_m=number_of((leg.get("distance") or {}).get("value")) or 0.0,
        duration_s=number_of((leg.get("duration") or {}).get("value")) or 0.0,
        steps=steps,
        summary=summary,
    )
