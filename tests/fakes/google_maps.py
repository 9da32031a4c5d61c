"""A fake Google Maps Platform: legacy web services, Places API (New), Routes API, Geolocation.

What it reproduces, from the Google Maps Platform documentation:

- Places API (New) ``POST /v1/places:searchText`` and ``POST /v1/places:searchNearby``, and
  Routes API ``POST /directions/v2:computeRoutes``: the key in ``X-Goog-Api-Key``, a
  required response field mask in ``X-Goog-FieldMask`` (only the named fields come back;
  ``nextPageToken`` too must be named), errors as ``{"error": {"code", "message",
  "status", "details": [ErrorInfo {"reason"}]}}`` (``API_KEY_INVALID``, a missing field
  mask, ``SERVICE_DISABLED`` when ``new_enabled`` is off). Text Search: ``textQuery``,
  ``pageSize`` 1–20, ``includedType``, ``locationRestriction.rectangle`` (``low``/``high``;
  a circle is refused), ``pageToken`` (the other fields must match the first request),
  at most 60 results. Nearby Search: ``locationRestriction.circle`` (radius ≤ 50 000),
  ``includedTypes``, ``maxResultCount`` 1–20, ``rankPreference``, no further pages.
  computeRoutes: ``origin``/``destination``/``intermediates`` (``address`` or
  ``location.latLng``), ``travelMode``; intermediates refused for ``TRANSIT``; more than 25
  refused; a place it cannot geocode → no route, its ``geocodingResults`` entry carrying a
  non-zero ``geocoderStatus.code``.
- With ``legacy_enabled`` off, the legacy Places and Directions paths answer
  ``REQUEST_DENIED`` with "You're calling a legacy API, which is not enabled for your
  project", as for a Cloud project created after March 2025.

- Geocoding ``/maps/api/geocode/json`` (``address=`` or ``latlng=``): ``results[]`` with
  ``formatted_address``, ``geometry.location {lat,lng}``, ``place_id``, ``types``; ``status``.
- Places Nearby ``/maps/api/place/nearbysearch/json`` (``location`` + ``radius`` required)
  and Text Search ``/maps/api/place/textsearch/json`` (``query``): 20 results a page, at most
  60, ``next_page_token``; a token used before it becomes valid (``token_delay`` seconds
  after it was issued) answers ``INVALID_REQUEST``.
- Directions ``/maps/api/directions/json``: ``geocoded_waypoints``, ``routes[].legs[]``
  with ``distance``/``duration`` ``{text,value}`` and ``steps`` (``html_instructions``,
  ``transit_details``); ``waypoints=a|b``; waypoints with ``mode=transit`` are refused;
  more than 25 waypoints → ``MAX_WAYPOINTS_EXCEEDED``; an unknown place → ``NOT_FOUND``.
- Statuses ``OK``, ``ZERO_RESULTS``, ``OVER_QUERY_LIMIT``, ``REQUEST_DENIED`` (with
  ``error_message``), ``INVALID_REQUEST``.
- Geolocation ``POST /geolocation/v1/geolocate?key=``: ``wifiAccessPoints`` and/or
  ``cellTowers`` → ``{"location": {lat,lng}, "accuracy"}``, errors as ``{"error": {"errors":
  [{"domain", "reason", "message"}], "code", "message"}}`` (``notFound`` 404, ``keyInvalid``
  400).

Coordinates are WGS-84 outside mainland China; inside it (the "beijing" entry) they are
GCJ-02, as Google's data there is.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
import secrets
import time
from typing import Any

from tests.fakes._location_server import JsonServer, Reply, Request

# Known places: query text → (formatted_address, lat, lng, types).
PLACES: dict[str, tuple[str, float, float, list[str]]] = {
    "times square": ("Manhattan, NY 10036, USA", 40.7579747, -73.9855426,
                     ["tourist_attraction", "point_of_interest", "establishment"]),
    "new york": ("New York, NY, USA", 40.7127753, -74.0059728, ["locality", "political"]),
    "central park": ("New York, NY, USA", 40.7812199, -73.9665138,
                     ["park", "point_of_interest", "establishment"]),
    "empire state building": ("20 W 34th St., New York, NY 10001, USA", 40.7484405,
                              -73.9856644, ["premise", "point_of_interest", "establishment"]),
    "brooklyn bridge": ("Brooklyn Bridge, New York, NY 10038, USA", 40.7060855, -73.9968643,
                        ["tourist_attraction", "point_of_interest", "establishment"]),
    "taipei 101": ("No. 7, Section 5, Xinyi Rd, Xinyi District, Taipei City, Taiwan 110",
                   25.0339639, 121.5644722, ["point_of_interest", "establishment"]),
    "台北101": ("110台灣台北市信義區信義路五段7號", 25.0339639, 121.5644722,
               ["point_of_interest", "establishment"]),
    # GCJ-02, like Google's real answer (within metres of Amap's 116.407387,39.904179).
    "beijing": ("Beijing, China", 39.904211, 116.407395, ["locality", "political"]),
    "shanghai": ("Shanghai, China", 31.230416, 121.473701, ["locality", "political"]),
    "eiffel tower": ("Av. Gustave Eiffel, 75007 Paris, France", 48.8583701, 2.2944813,
                     ["tourist_attraction", "point_of_interest", "establishment"]),
}  # fmt: skip

KNOWN_MACS = {"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02", "aa:bb:cc:dd:ee:03"}
GEOLOCATION = {"lat": 37.4220936, "lng": -122.083922}
# (mcc, mnc, lac, cellId) of the one cell tower the fake knows, and where it is.
KNOWN_CELL = (460, 0, 4387, 72910925)
CELL_LOCATION = {"lat": 39.9855, "lng": 116.4754}

LEGACY_DENIED = (
    "You're calling a legacy API, which is not enabled for your project. To get newer "
    "features and more functionality, switch to the Places API (New) or Routes API. Learn "
    "more: https://developers.google.com/maps/legacy#LegacyApiNotActivatedMapError"
)
NEW_PATHS = {"/v1/places:searchText", "/v1/places:searchNearby", "/directions/v2:computeRoutes"}


def haversine(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return 2 * 6_371_000 * math.asin(math.sqrt(h))


def make_place(i: int, lat: float, lng: float) -> dict[str, Any]:
    """A Places (legacy) search result with the documented fields."""
    coffee = i % 3 != 2
    name = f"Blue Bottle Coffee #{i}" if coffee else f"Joe's Pizza #{i}"
    place: dict[str, Any] = {
        "business_status": "OPERATIONAL",
        "geometry": {
            "location": {"lat": lat, "lng": lng},
            "viewport": {
                "northeast": {"lat": lat + 0.0013, "lng": lng + 0.0013},
                "southwest": {"lat": lat - 0.0013, "lng": lng - 0.0013},
            },
        },
        "icon": "https://maps.gstatic.com/mapfiles/place_api/icons/v1/png_71/cafe-71.png",
        "icon_background_color": "#FF9E67",
        "icon_mask_base_uri": "https://maps.gstatic.com/mapfiles/place_api/icons/v2/cafe_pinlet",
        "name": name,
        "opening_hours": {"open_now": i % 2 == 0},
        "photos": [],
        "place_id": f"ChIJfake{i:04d}",
        "plus_code": {"compound_code": "Q257+XX New York", "global_code": "87G8Q257+XX"},
        "price_level": 2,
        "rating": round(3.6 + (i % 14) / 10, 1),
        "reference": f"ChIJfake{i:04d}",
        "scope": "GOOGLE",
        "types": ["cafe", "food", "point_of_interest", "establishment"]
        if coffee
        else ["restaurant", "food", "point_of_interest", "establishment"],
        "user_ratings_total": 100 + i * 7,
        "vicinity": f"{100 + i} W {40 + i % 20}th St, New York",
    }
    return place


def default_places(count: int = 75) -> list[dict[str, Any]]:
    _, lat0, lng0, _ = PLACES["times square"]
    out = []
    for i in range(count):
        angle = i * 2.399963
        d = 0.0005 * (i + 1) ** 0.8
        out.append(make_place(i, lat0 + d * math.sin(angle), lng0 + d * math.cos(angle)))
    return out


def _denied(extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "error_message": "The provided API key is invalid. ",
        **extra,
        "status": "REQUEST_DENIED",
    }


class FakeGoogleMaps(JsonServer):
    """Fake maps.googleapis.com (and www.googleapis.com's Geolocation API)."""

    def __init__(self, key: str, places: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.key = key
        self.places = places if places is not None else default_places()
        self.token_delay = 0.3
        self._tokens: dict[str, tuple[float, list[dict[str, Any]], int]] = {}
        # Places API (New) page tokens: token → (first request without paging fields, hits,
        # start).
        self._new_tokens: dict[str, tuple[str, list[dict[str, Any]], int]] = {}
        # status forced on every answer of a path (or "*"), with an optional error_message.
        self.fail: dict[str, tuple[str, str]] = {}
        # A project created today has the new APIs and cannot enable the legacy ones.
        self.new_enabled = True
        self.legacy_enabled = True

    def handle(self, request: Request) -> Reply:
        p = request.params
        if request.path == "/geolocation/v1/geolocate":
            return self.geolocate(request)
        if request.path in NEW_PATHS:
            return self.new_api(request)
        empty = {"html_attributions": [], "results": []}
        if request.path.endswith("/directions/json"):
            empty = {"geocoded_waypoints": [], "routes": []}
        elif request.path.endswith("/geocode/json"):
            empty = {"results": []}
        if p.get("key") != self.key:
            return Reply(200, _denied(empty))
        legacy = request.path.startswith("/maps/api/place/") or request.path.endswith(
            "/directions/json"
        )
        if legacy and not self.legacy_enabled:
            return Reply(200, {**empty, "error_message": LEGACY_DENIED, "status": "REQUEST_DENIED"})
        forced = self.fail.get(request.path) or self.fail.get("*")
        if forced:
            status, message = forced
            body = {**empty, "status": status}
            if message:
                body["error_message"] = message
            return Reply(200, body)
        routes = {
            "/maps/api/geocode/json": self.geocode,
            "/maps/api/place/nearbysearch/json": self.nearby,
            "/maps/api/place/textsearch/json": self.textsearch,
            "/maps/api/directions/json": self.directions,
        }
        handler = routes.get(request.path)
        if handler is None:
            return Reply(404, b"<html><body>Not Found</body></html>")
        return Reply(200, handler(request))

    # ------------------------------------------------------------ geocoding

    @staticmethod
    def _lookup(text: str) -> tuple[str, float, float, list[str]] | None:
        key = text.strip().lower()
        if key in PLACES:
            return PLACES[key]
        parts = key.split(",")
        if len(parts) == 2:
            try:
                lat, lng = float(parts[0]), float(parts[1])
            except ValueError:
                return None
            return (f"{lat:.4f},{lng:.4f}", lat, lng, ["street_address"])
        return None

    @staticmethod
    def _geocode_result(found: tuple[str, float, float, list[str]]) -> dict[str, Any]:
        address, lat, lng, types = found
        return {
            "address_components": [{"long_name": address.split(",")[0],
                                     "short_name": address.split(",")[0], "types": types}],
            "formatted_address": address,
            "geometry": {
                "location": {"lat": lat, "lng": lng},
                "location_type": "APPROXIMATE" if "locality" in types else "ROOFTOP",
                "viewport": {"northeast": {"lat": lat + 0.01, "lng": lng + 0.01},
                             "southwest": {"lat": lat - 0.01, "lng": lng - 0.01}},
            },
            "place_id": "ChIJ" + secrets.token_hex(8),
            "types": types,
        }  # fmt: skip

    def geocode(self, r: Request) -> dict[str, Any]:
        if "latlng" in r.params:
            lat, lng = (float(x) for x in r.params["latlng"].split(","))
            best = min(PLACES.values(), key=lambda e: haversine(lat, lng, e[1], e[2]))
            return {"results": [self._geocode_result(best)], "status": "OK"}
        address = r.params.get("address", "")
        if not address:
            return {"results": [], "status": "INVALID_REQUEST"}
        found = PLACES.get(address.strip().lower())
        if found is None:
            return {"results": [], "status": "ZERO_RESULTS"}
        return {"results": [self._geocode_result(found)], "status": "OK"}

    # ------------------------------------------------------------ places

    def _paged(self, hits: list[dict[str, Any]], start: int) -> dict[str, Any]:
        hits = hits[:60]
        page = hits[start : start + 20]
        body: dict[str, Any] = {"html_attributions": [], "results": page,
                                "status": "OK" if page else "ZERO_RESULTS"}  # fmt: skip
        if start + 20 < len(hits):
            token = secrets.token_urlsafe(24)
            with self.lock:
                self._tokens[token] = (time.monotonic() + self.token_delay, hits, start + 20)
            body["next_page_token"] = token
        return body

    def _from_token(self, token: str) -> dict[str, Any]:
        with self.lock:
            entry = self._tokens.get(token)
        if entry is None or time.monotonic() < entry[0]:
            return {"html_attributions": [], "results": [], "status": "INVALID_REQUEST"}
        return self._paged(entry[1], entry[2])

    def _filter(self, keyword: str, type_: str) -> list[dict[str, Any]]:
        out = []
        for place in self.places:
            if (
                keyword
                and keyword.lower() not in place["name"].lower()
                and not any(keyword.lower() in t for t in place["types"])
            ):
                continue
            if type_ and type_ not in place["types"]:
                continue
            out.append(place)
        return out

    def nearby(self, r: Request) -> dict[str, Any]:
        if "pagetoken" in r.params:
            return self._from_token(r.params["pagetoken"])
        try:
            lat, lng = (float(x) for x in r.params["location"].split(","))
            radius = float(r.params["radius"])
        except (KeyError, ValueError):
            return {"html_attributions": [], "results": [], "status": "INVALID_REQUEST"}
        if radius > 50000:
            return {"html_attributions": [], "results": [], "status": "INVALID_REQUEST"}
        hits = [
            p
            for p in self._filter(r.params.get("keyword", ""), r.params.get("type", ""))
            if haversine(
                lat, lng, p["geometry"]["location"]["lat"], p["geometry"]["location"]["lng"]
            )
            <= radius
        ]
        return self._paged(hits, 0)

    def textsearch(self, r: Request) -> dict[str, Any]:
        if "pagetoken" in r.params:
            return self._from_token(r.params["pagetoken"])
        query = r.params.get("query", "")
        if not query:
            return {"html_attributions": [], "results": [], "status": "INVALID_REQUEST"}
        word = query.split(" in ")[0].strip()
        hits = [p | {"formatted_address": p["vicinity"] + ", NY 10036, United States"}
                for p in self._filter(word, r.params.get("type", ""))]  # fmt: skip
        return self._paged(hits, 0)

    # ------------------------------------------------------------ directions

    def directions(self, r: Request) -> dict[str, Any]:
        p = r.params
        mode = p.get("mode", "driving")
        if "origin" not in p or "destination" not in p:
            return {"geocoded_waypoints": [], "routes": [], "status": "INVALID_REQUEST"}
        waypoints = [w for w in p.get("waypoints", "").split("|") if w]
        if waypoints and mode == "transit":
            return {"geocoded_waypoints": [], "routes": [], "status": "INVALID_REQUEST"}
        if len(waypoints) > 25:
            return {"geocoded_waypoints": [], "routes": [], "status": "MAX_WAYPOINTS_EXCEEDED"}
        stops = [p["origin"], *waypoints, p["destination"]]
        found = [self._lookup(s) for s in stops]
        geocoded = [
            {"geocoder_status": "OK", "place_id": f"ChIJstop{i}", "types": f[3]}
            if f else {"geocoder_status": "ZERO_RESULTS"}
            for i, f in enumerate(found)
        ]  # fmt: skip
        if not all(found):
            return {"geocoded_waypoints": geocoded, "routes": [], "status": "NOT_FOUND"}
        legs = []
        for a, b in itertools.pairwise(found):
            assert a and b
            legs.append(self._leg(a, b, mode))
        route = {
            "bounds": {}, "copyrights": "Map data ©2024 Google", "legs": legs,
            "overview_polyline": {"points": "a~l~Fjk~uOwHJy@P"}, "summary": "7th Ave",
            "warnings": [], "waypoint_order": list(range(len(waypoints))),
        }  # fmt: skip
        if mode == "transit":
            route["fare"] = {"currency": "USD", "text": "$2.90", "value": 2.9}
        return {"geocoded_waypoints": geocoded, "routes": [route], "status": "OK"}

    @staticmethod
    def _leg(a: tuple[str, float, float, list[str]], b: tuple[str, float, float, list[str]],
             mode: str) -> dict[str, Any]:  # fmt: skip
        total = round(haversine(a[1], a[2], b[1], b[2]) * 1.3) + 50
        speed = {"driving": 8.0, "walking": 1.4, "bicycling": 4.5, "transit": 6.0}[mode]
        shares = [0.2, 0.7, 0.1]
        texts = [
            "Head <b>north</b> on <b>7th Ave</b> toward <b>W 44th St</b>",
            "Turn <b>right</b> onto <b>Broadway</b>",
            'Turn <b>left</b> onto <b>W 34th St</b><div style="font-size:0.9em">Destination '
            "will be on the right</div>",
        ]
        steps = []
        for i, share in enumerate(shares):
            d = max(1, round(total * share))
            step: dict[str, Any] = {
                "distance": {"text": f"{d / 1000:.1f} km", "value": d},
                "duration": {
                    "text": f"{max(1, round(d / speed / 60))} mins",
                    "value": round(d / speed),
                },
                "end_location": {"lat": b[1], "lng": b[2]},
                "html_instructions": texts[i],
                "polyline": {"points": "a~l~Fjk~uOwHJy@P"},
                "start_location": {"lat": a[1], "lng": a[2]},
                "travel_mode": mode.upper(),
            }
            if mode == "transit" and i == 1:
                step["html_instructions"] = "Subway towards Brooklyn Bridge-City Hall"
                step["transit_details"] = {
                    "arrival_stop": {
                        "location": {"lat": b[1], "lng": b[2]},
                        "name": "34 St-Herald Sq",
                    },
                    "departure_stop": {
                        "location": {"lat": a[1], "lng": a[2]},
                        "name": "Times Sq-42 St",
                    },
                    "headsign": "Brooklyn Bridge-City Hall",
                    "line": {
                        "name": "Broadway - 7 Avenue Local",
                        "short_name": "1",
                        "vehicle": {"name": "Subway", "type": "SUBWAY"},
                    },
                    "num_stops": 3,
                }
                step["travel_mode"] = "TRANSIT"
            elif mode == "transit":
                step["travel_mode"] = "WALKING"
                step["html_instructions"] = (
                    "Walk to Times Sq-42 St" if i == 0 else "Walk to destination"
                )
            steps.append(step)
        duration = sum(s["duration"]["value"] for s in steps)
        return {
            "distance": {"text": f"{total / 1000:.1f} km", "value": total},
            "duration": {"text": f"{round(duration / 60)} mins", "value": duration},
            "end_address": b[0], "end_location": {"lat": b[1], "lng": b[2]},
            "start_address": a[0], "start_location": {"lat": a[1], "lng": a[2]},
            "steps": steps, "traffic_speed_entry": [], "via_waypoint": [],
        }  # fmt: skip

    # ------------------------------------------------------------ geolocation

    def geolocate(self, r: Request) -> Reply:
        if r.params.get("key") != self.key:
            message = "API key not valid. Please pass a valid API key."
            return Reply(400, {"error": {"code": 400, "message": message, "errors": [
                {"message": message, "domain": "usageLimits", "reason": "keyInvalid"}]}})  # fmt: skip
        body = r.body if isinstance(r.body, dict) else {}
        if not isinstance(r.body, dict):
            return Reply(400, {"error": {"code": 400, "message": "Parse Error", "errors": [
                {"message": "Parse Error", "domain": "global", "reason": "parseError"}]}})  # fmt: skip
        macs = {ap.get("macAddress", "").lower() for ap in body.get("wifiAccessPoints") or []}
        if len(macs & KNOWN_MACS) >= 2:
            return Reply(200, {"location": GEOLOCATION, "accuracy": 24.0})
        cells = {
            (c.get("mobileCountryCode"), c.get("mobileNetworkCode"), c.get("locationAreaCode"),
             c.get("cellId"))
            for c in body.get("cellTowers") or []
        }  # fmt: skip
        if KNOWN_CELL in cells:
            return Reply(200, {"location": CELL_LOCATION, "accuracy": 1200.0})
        return Reply(404, {"error": {"code": 404, "message": "Not Found", "errors": [
            {"message": "Not Found", "domain": "geolocation", "reason": "notFound"}]}})  # fmt: skip

    # ------------------------------------------------------------ the new APIs

    @staticmethod
    def _rpc_error(code: int, status: str, message: str, reason: str = "") -> Reply:
        error: dict[str, Any] = {"code": code, "message": message, "status": status}
        if reason:
            error["details"] = [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                "domain": "googleapis.com", "metadata": {"service": "places.googleapis.com"},
            }]  # fmt: skip
        return Reply(code, {"error": error})

    def new_api(self, r: Request) -> Reply:
        if r.method != "POST":
            return Reply(404, b"<html><body>Not Found</body></html>")
        if r.headers.get("x-goog-api-key") != self.key:
            return self._rpc_error(
                400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                "API_KEY_INVALID",
            )  # fmt: skip
        api = "Routes API" if "directions" in r.path else "Places API (New)"
        service = "routes" if "directions" in r.path else "places"
        if not self.new_enabled:
            return self._rpc_error(
                403, "PERMISSION_DENIED",
                f"{api} has not been used in project 123456789 before or it is disabled. "
                f"Enable it by visiting https://console.developers.google.com/apis/api/"
                f"{service}.googleapis.com/overview?project=123456789 then retry.",
                "SERVICE_DISABLED",
            )  # fmt: skip
        mask = r.headers.get("x-goog-fieldmask", "").strip()
        if not mask:
            return self._rpc_error(
                400, "INVALID_ARGUMENT",
                "FieldMask is a required parameter. See https://cloud.google.com/apis/docs/"
                "system-parameters on how to provide it. As an example, you can set the header "
                "'X-Goog-FieldMask' to value 'places.displayName', 'places.id' to ask for the "
                "display name and the ID of a place.",
            )  # fmt: skip
        body = r.body if isinstance(r.body, dict) else None
        if body is None:
            return self._rpc_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        handler = {
            "/v1/places:searchText": self.search_text,
            "/v1/places:searchNearby": self.search_nearby,
            "/directions/v2:computeRoutes": self.compute_routes,
        }[r.path]
        reply = handler(body)
        if reply.status == 200:
            reply = Reply(200, apply_mask(reply.body, mask.split(",")))
        return reply

    @staticmethod
    def _new_place(place: dict[str, Any]) -> dict[str, Any]:
        """A legacy result as a Places API (New) ``Place``."""
        loc = place["geometry"]["location"]
        return {
            "id": place["place_id"],
            "displayName": {"text": place["name"], "languageCode": "en"},
            "formattedAddress": place.get("formatted_address")
            or place["vicinity"] + ", NY 10036, USA",
            "location": {"latitude": loc["lat"], "longitude": loc["lng"]},
            "rating": place["rating"],
            "userRatingCount": place["user_ratings_total"],
            "types": place["types"],
            "primaryType": place["types"][0],
            "currentOpeningHours": {"openNow": place["opening_hours"]["open_now"]},
            "businessStatus": place["business_status"],
        }

    def search_text(self, body: dict[str, Any]) -> Reply:
        query = str(body.get("textQuery") or "").strip()
        if not query:
            return self._rpc_error(400, "INVALID_ARGUMENT", "Empty text_query.")
        size = int(body.get("pageSize") or body.get("maxResultCount") or 20)
        if size < 1:
            return self._rpc_error(400, "INVALID_ARGUMENT", "page_size must be positive.")
        size = min(size, 20)
        restriction = body.get("locationRestriction")
        if restriction is not None and "rectangle" not in restriction:
            return self._rpc_error(
                400, "INVALID_ARGUMENT",
                "Invalid location_restriction: only a rectangle is supported.",
            )  # fmt: skip
        first = json.dumps(
            {k: v for k, v in body.items() if k not in ("pageToken", "pageSize", "maxResultCount")},
            sort_keys=True,
        )
        token = body.get("pageToken")
        if token:
            with self.lock:
                entry = self._new_tokens.get(token)
            if entry is None:
                return self._rpc_error(400, "INVALID_ARGUMENT", "Invalid page_token.")
            if entry[0] != first:
                return self._rpc_error(
                    400, "INVALID_ARGUMENT",
                    "The request parameters do not match the initial request of the page token.",
                )  # fmt: skip
            hits, start = entry[1], entry[2]
        else:
            word = query.split(" in ")[0].strip()
            hits = self._filter(word, str(body.get("includedType") or ""))
            if restriction is not None:
                rect = restriction["rectangle"]
                low, high = rect["low"], rect["high"]
                hits = [
                    p for p in hits
                    if low["latitude"] <= p["geometry"]["location"]["lat"] <= high["latitude"]
                    and low["longitude"] <= p["geometry"]["location"]["lng"] <= high["longitude"]
                ]  # fmt: skip
            hits, start = hits[:60], 0
        page = hits[start : start + size]
        answer: dict[str, Any] = {"places": [self._new_place(p) for p in page]}
        if start + size < len(hits):
            new_token = secrets.token_urlsafe(24)
            with self.lock:
                self._new_tokens[new_token] = (first, hits, start + size)
            answer["nextPageToken"] = new_token
        return Reply(200, answer)

    def search_nearby(self, body: dict[str, Any]) -> Reply:
        try:
            circle = body["locationRestriction"]["circle"]
            lat = float(circle["center"]["latitude"])
            lng = float(circle["center"]["longitude"])
            radius = float(circle["radius"])
        except (KeyError, TypeError, ValueError):
            return self._rpc_error(
                400, "INVALID_ARGUMENT", "location_restriction (a circle) is required."
            )
        if not 0 < radius <= 50000:
            return self._rpc_error(
                400, "INVALID_ARGUMENT", "Invalid radius: it must be in (0, 50000]."
            )
        count = int(body.get("maxResultCount") or 20)
        if not 1 <= count <= 20:
            return self._rpc_error(
                400, "INVALID_ARGUMENT", "max_result_count must be between 1 and 20."
            )
        types = [t for t in body.get("includedTypes") or [] if t]
        hits = []
        for p in self.places:
            if types and not set(types) & set(p["types"]):
                continue
            loc = p["geometry"]["location"]
            d = haversine(lat, lng, loc["lat"], loc["lng"])
            if d <= radius:
                hits.append((d, p))
        if body.get("rankPreference") == "DISTANCE":
            hits.sort(key=lambda h: h[0])
        return Reply(200, {"places": [self._new_place(p) for _, p in hits[:count]]})

    def compute_routes(self, body: dict[str, Any]) -> Reply:
        mode = str(body.get("travelMode") or "DRIVE")
        if mode not in ("DRIVE", "WALK", "BICYCLE", "TRANSIT", "TWO_WHEELER"):
            return self._rpc_error(400, "INVALID_ARGUMENT", f"Invalid travel_mode: {mode}.")
        if "origin" not in body or "destination" not in body:
            return self._rpc_error(400, "INVALID_ARGUMENT", "Origin and destination must be set.")
        intermediates = list(body.get("intermediates") or [])
        if intermediates and mode == "TRANSIT":
            return self._rpc_error(
                400, "INVALID_ARGUMENT",
                "Intermediate waypoints are not supported for the TRANSIT travel mode.",
            )  # fmt: skip
        if len(intermediates) > 25:
            return self._rpc_error(
                400, "INVALID_ARGUMENT", "Too many intermediate waypoints (at most 25)."
            )
        waypoints = [body["origin"], *intermediates, body["destination"]]
        found = [self._waypoint(w) for w in waypoints]

        def geocoded(i: int, f: Any) -> dict[str, Any]:
            status = {} if f else {"code": 5, "message": "Address not found."}
            entry: dict[str, Any] = {"geocoderStatus": status}
            if f:
                entry |= {"type": f[3], "placeId": f"ChIJstop{i}"}
            return entry

        results: dict[str, Any] = {}
        if any("address" in w for w in waypoints):
            results = {"origin": geocoded(0, found[0]), "destination": geocoded(-1, found[-1])}
            if intermediates:
                results["intermediates"] = [
                    geocoded(i, f) | {"intermediateWaypointRequestIndex": i - 1}
                    for i, f in enumerate(found[1:-1], 1)
                ]
        if not all(found):
            return Reply(200, {"geocodingResults": results})
        legacy_mode = {"DRIVE": "driving", "WALK": "walking", "BICYCLE": "bicycling",
                       "TRANSIT": "transit", "TWO_WHEELER": "driving"}[mode]  # fmt: skip
        legs = []
        for a, b in itertools.pairwise(found):
            assert a and b
            legs.append(_new_leg(self._leg(a, b, legacy_mode), mode))
        route: dict[str, Any] = {
            "legs": legs,
            "distanceMeters": sum(leg["distanceMeters"] for leg in legs),
            "duration": f"{sum(int(leg['duration'][:-1]) for leg in legs)}s",
            "description": "7th Ave",
            "polyline": {"encodedPolyline": "a~l~Fjk~uOwHJy@P"},
        }
        if mode == "TRANSIT":
            route["travelAdvisory"] = {
                "transitFare": {"currencyCode": "USD", "units": "2", "nanos": 900000000}
            }
            route["localizedValues"] = {"transitFare": {"text": "$2.90"}}
        answer: dict[str, Any] = {"routes": [route]}
        if results:
            answer["geocodingResults"] = results
        return Reply(200, answer)

    def _waypoint(self, waypoint: Any) -> tuple[str, float, float, list[str]] | None:
        if not isinstance(waypoint, dict):
            return None
        if "address" in waypoint:
            return self._lookup(str(waypoint["address"]))
        try:
            ll = waypoint["location"]["latLng"]
            lat, lng = float(ll["latitude"]), float(ll["longitude"])
        except (KeyError, TypeError, ValueError):
            return None
        return (f"{lat:.4f},{lng:.4f}", lat, lng, ["street_address"])


def _new_leg(leg: dict[str, Any], mode: str) -> dict[str, Any]:
    """A legacy Directions leg as a Routes API ``RouteLeg``."""
    steps = []
    for s in leg["steps"]:
        step: dict[str, Any] = {
            "distanceMeters": s["distance"]["value"],
            "staticDuration": f"{s['duration']['value']}s",
            "navigationInstruction": {
                "maneuver": "DEPART",
                "instructions": re.sub(r"<[^>]+>", "", s["html_instructions"].replace(
                    '<div style="font-size:0.9em">', "\n")),
            },
            "travelMode": "TRANSIT" if "transit_details" in s else (
                "WALK" if mode == "TRANSIT" else mode),
        }  # fmt: skip
        details = s.get("transit_details")
        if details:
            step["transitDetails"] = {
                "stopDetails": {
                    "arrivalStop": {"name": details["arrival_stop"]["name"]},
                    "departureStop": {"name": details["departure_stop"]["name"]},
                },
                "headsign": details["headsign"],
                "transitLine": {
                    "name": details["line"]["name"],
                    "nameShort": details["line"]["short_name"],
                    "vehicle": {
                        "name": {"text": details["line"]["vehicle"]["name"]},
                        "type": details["line"]["vehicle"]["type"],
                    },
                },
                "stopCount": details["num_stops"],
            }
        steps.append(step)
    return {
        "distanceMeters": leg["distance"]["value"],
        "duration": f"{leg['duration']['value']}s",
        "staticDuration": f"{leg['duration']['value']}s",
        "startLocation": {"latLng": {"latitude": leg["start_location"]["lat"],
                                     "longitude": leg["start_location"]["lng"]}},
        "endLocation": {"latLng": {"latitude": leg["end_location"]["lat"],
                                   "longitude": leg["end_location"]["lng"]}},
        "steps": steps,
    }  # fmt: skip


def apply_mask(value: Any, paths: list[str]) -> Any:
    """Only the fields a response field mask names (``places.displayName``, ``*``…)."""
    paths = [p.strip() for p in paths]
    if "*" in paths or "" in paths:  # the whole field is named
        return copy.deepcopy(value)
    if isinstance(value, list):
        return [apply_mask(v, paths) for v in value]
    if not isinstance(value, dict):
        return copy.deepcopy(value)
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = [p[len(key) + 1 :] if p != key else "" for p in paths
               if p == key or p.startswith(key + ".")]  # fmt: skip
        if sub:
            out[key] = apply_mask(item, sub)
    return out
