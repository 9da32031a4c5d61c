"""A fake Google Maps Platform (legacy web services + Geolocation API), documented JSON.

What it reproduces, from the Google Maps Platform documentation:

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
- Geolocation ``POST /geolocation/v1/geolocate?key=``: ``{"location": {lat,lng},
  "accuracy"}``, errors as ``{"error": {"errors": [{"domain", "reason", "message"}],
  "code", "message"}}`` (``notFound`` 404, ``keyInvalid`` 400).
"""

from __future__ import annotations

import itertools
import math
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
    "beijing": ("Beijing, China", 39.904211, 116.407395, ["locality", "political"]),
    "eiffel tower": ("Av. Gustave Eiffel, 75007 Paris, France", 48.8583701, 2.2944813,
                     ["tourist_attraction", "point_of_interest", "establishment"]),
}  # fmt: skip

KNOWN_MACS = {"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02", "aa:bb:cc:dd:ee:03"}
GEOLOCATION = {"lat": 37.4220936, "lng": -122.083922}


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
        # status forced on every answer of a path (or "*"), with an optional error_message.
        self.fail: dict[str, tuple[str, str]] = {}

    def handle(self, request: Request) -> Reply:
        p = request.params
        if request.path == "/geolocation/v1/geolocate":
            return self.geolocate(request)
        empty = {"html_attributions": [], "results": []}
        if request.path.endswith("/directions/json"):
            empty = {"geocoded_waypoints": [], "routes": []}
        elif request.path.endswith("/geocode/json"):
            empty = {"results": []}
        if p.get("key") != self.key:
            return Reply(200, _denied(empty))
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
        if len(macs & KNOWN_MACS) < 2:
            return Reply(404, {"error": {"code": 404, "message": "Not Found", "errors": [
                {"message": "Not Found", "domain": "geolocation", "reason": "notFound"}]}})  # fmt: skip
        return Reply(200, {"location": GEOLOCATION, "accuracy": 24.0})
