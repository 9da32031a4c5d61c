"""Location: locate, geocode, search places, directions and trips on a map.

The flow of one use: pick the provider (``region.detect_region``), check its
key, resolve the place texts to points in the provider's datum (converting
coordinates that come from the other provider), call the provider, and write
the answer compactly with the datum of every point. Read-only and safe to run
in parallel: it only asks web services.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools.location import amap, google, render
from codev_ls.tools.location.cell import scan_cells
from codev_ls.tools.location.common import (
    GeocodeResult,
    Leg,
    LocationError,
    LocationServices,
    MissingKeyError,
    Position,
    ProviderError,
)
from codev_ls.tools.location.datum import LatLng, out_of_china
from codev_ls.tools.location.ip import locate_by_ip
from codev_ls.tools.location.region import (
    RegionChoice,
    city_of,
    detect_region,
    parse_coordinates,
)
from codev_ls.tools.location.wifi import scan_wifi

# The whole use, however many pages and legs, ends within this.
OVERALL_TIMEOUT_S = 120.0
MAX_WAYPOINTS = 25

Action = Literal["locate", "geocode", "search_places", "get_directions", "plan_trip"]
Mode = Literal["driving", "walking", "transit", "bicycling"]

PROMPT = """\
Looks up places and routes on a map: Amap (高德地图) in mainland China, Google Maps elsewhere.

Actions (`action`):
- `locate`: where this computer is: WiFi (or, with a mobile broadband modem, cell) \
positioning when the machine can scan, else IP geolocation (city level). Needs nothing else.
- `geocode`: `location` (an address or place name) → coordinates; coordinates → address.
- `search_places`: places matching `query` and/or `type` near `location` (within `radius` \
metres, default 5000) or inside it when `location` is a city or district. Every page the \
provider gives is fetched (Amap: all results; Google: up to 60).
- `get_directions`: from `location` to `destination` by `mode` (driving — the default —, \
walking, transit, bicycling): distance, duration and the main steps.
- `plan_trip`: from `location` through each of `waypoints` in order to `destination` (or to \
the last waypoint): every leg and the totals.

Provider: Chinese text or a mainland Chinese city, province or well-known district name, also \
in Latin script ("Beijing", "Hangzhou East Station", "Xidan"), goes to Amap; everything else \
— Hong Kong, Macau and Taiwan included — to Google Maps. Force one with `region` ("cn" = Amap, "intl" = Google). For \
mainland places Chinese names work best (杭州东站 rather than Hangzhou East Station).

Coordinates are "lat,lng" followed by their datum: [GCJ-02] (China's legal datum: Amap, and \
Google Maps inside mainland China) or [WGS-84] (GPS; Google elsewhere). Pass coordinates back \
exactly as shown, tag included: the tool converts them when a point moves to a service that \
uses the other datum. Untagged coordinates are taken as WGS-84.

Results give names, addresses, coordinates, distances and ratings. For reviews, opening \
hours, prices or travel tips, follow up with WebSearch (the place name and city plus \
"reviews") and WebFetch on a page it finds."""


class LocationInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action = Field(
        description="locate | geocode | search_places | get_directions | plan_trip."
    )
    location: str | None = Field(
        default=None,
        description="The place: an address, a place name, or 'lat,lng' coordinates (with a "
        "[GCJ-02] or [WGS-84] tag when known). The start of a route or trip, the centre or "
        "area of a search. Required for every action except locate. Coordinates are read as "
        "lat,lng; a first number above 90 means lng,lat; when both numbers could be a "
        "latitude and only the lng,lat reading lies in China (87.6,43.8 is Ürümqi in Amap's "
        "lng,lat order), Amap reads them as lng,lat.",
    )
    destination: str | None = Field(
        default=None,
        description="Where the route ends (get_directions: required; plan_trip: optional, "
        "else the last waypoint is the end).",
    )
    query: str | None = Field(
        default=None,
        description="What to search for (search_places), e.g. 'coffee', '火锅', 'museum'.",
    )
    radius: int = Field(
        default=5000,
        ge=1,
        le=50000,
        description="Search radius in metres around `location` (search_places), 1–50000.",
    )
    mode: Mode | None = Field(
        default=None,
        description="How to travel for get_directions and plan_trip: driving (default), "
        "walking, transit or bicycling.",
    )
    waypoints: list[str] | None = Field(
        default=None,
        max_length=MAX_WAYPOINTS,
        description="plan_trip: the places to pass through, in order (names or coordinates).",
    )
    type: str | None = Field(
        default=None,
        description="Category filter for search_places. Amap: a POI type code or its Chinese "
        "name (050000 or 餐饮服务, 050500 or 咖啡厅); Google: a place type (cafe, restaurant, "
        "museum, lodging).",
    )
    region: Literal["cn", "intl"] | None = Field(
        default=None,
        description="Force the provider: 'cn' = Amap (mainland China), 'intl' = Google Maps. "
        "Omit it to decide from the place names.",
    )
    language: str | None = Field(
        default=None,
        description="Language of the results, e.g. 'en', 'zh-CN', 'ja' (Google Maps and IP "
        "geolocation; Amap answers in Chinese).",
    )


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()


class LocationTool(Tool):
    name = "Location"
    search_hint = "map places, addresses, routes and trips (Amap in China, Google Maps elsewhere)"
    input_model = LocationInput
    progress_type = "LocationToolProgress"

    def description(self) -> str:
        return (
            "Find places, addresses, routes and multi-stop trips on a map, or where this "
            "computer is (Amap in mainland China, Google Maps elsewhere)."
        )

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def user_facing_name(self, input: Any = None) -> str:
        return "Location"

    def get_activity_description(self, input: LocationInput) -> str:
        what = {
            "locate": "finding this computer's location",
            "geocode": f"looking up {input.location}",
            "search_places": f"searching {input.query or input.type} near {input.location}",
            "get_directions": f"route {input.location} → {input.destination}",
            "plan_trip": f"trip from {input.location}",
        }
        return what[input.action]

    def render_tool_use_message(self, input: LocationInput) -> str:
        return f"Location {input.action}: {self.get_activity_description(input)}"

    def to_auto_classifier_input(self, input: LocationInput) -> str:
        return f"{input.action} {input.location or ''} {input.query or ''}".strip()

    def permission_subject(self, input: LocationInput, ctx: ToolUseContext) -> PermissionSubject:
        detail = (
            "Sends the place names (and for locate: this machine's IP address, visible WiFi "
            "networks and its modem's cell) to Amap, Google Maps or IP geolocation services."
        )
        return PermissionSubject(summary=self.render_tool_use_message(input), detail=detail)

    async def validate_input(self, input: LocationInput, ctx: ToolUseContext) -> ValidationResult:
        action = input.action
        if action != "locate" and _blank(input.location):
            return ValidationResult.fail(
                f"`location` is required for {action}: an address, a place name or 'lat,lng'."
            )
        if action == "search_places" and _blank(input.query) and _blank(input.type):
            return ValidationResult.fail(
                "search_places needs `query` (what to look for) or `type` (a category)."
            )
        if action == "get_directions":
            if _blank(input.destination):
                return ValidationResult.fail("get_directions needs `destination`.")
            if input.waypoints:
                return ValidationResult.fail(
                    "get_directions goes from `location` to `destination` only; use plan_trip "
                    "for a route through `waypoints`."
                )
        if action == "plan_trip":
            if not input.waypoints:
                return ValidationResult.fail(
                    "plan_trip needs `waypoints` (the places to pass through, in order); for "
                    "two places use get_directions."
                )
            if any(_blank(w) for w in input.waypoints):
                return ValidationResult.fail("`waypoints` must not contain empty entries.")
        return ValidationResult.success()

    # ------------------------------------------------------------------ call

    async def call(
        self, input: LocationInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        run = _Run(input, LocationServices.of(ctx.engine), on_progress)
        try:
            async with asyncio.timeout(OVERALL_TIMEOUT_S):
                text = await run.execute()
        except TimeoutError as exc:
            raise LocationError(
                f"The location lookup took longer than {OVERALL_TIMEOUT_S:g} s and was stopped."
            ) from exc
        notes = [*run.notes, *(run.provider.notes if run.provider is not None else [])]
        if notes:
            text += "\n" + "\n".join(f"Note: {n}" for n in notes)
        return ToolResult(text, meta={"provider": run.provider_id, "region": run.region})


Provider = amap.Amap | google.Google


class _Run:
    """One use of the tool: the chosen provider, conversions noted on the way."""

    def __init__(
        self, input: LocationInput, services: LocationServices, on_progress: ProgressCallback
    ) -> None:
        self.input = input
        self.services = services
        self.on_progress = on_progress
        self.notes: list[str] = []
        self.provider_id = ""
        self.region = ""
        self.provider: Provider | None = None

    def progress(self, message: str, data: dict[str, Any]) -> None:
        self.on_progress(Progress(type="LocationToolProgress", message=message, data=data))

    # ------------------------------------------------------------ provider choice

    def _place_texts(self) -> list[str | None]:
        i = self.input
        return [i.location, i.destination, *(i.waypoints or [])]

    def choose(self) -> tuple[RegionChoice, Provider]:
        i = self.input
        choice = detect_region(self._place_texts(), i.region, i.query)
        amap_key = os.environ.get(amap.KEY_ENV, "").strip()
        google_key = os.environ.get(google.KEY_ENV, "").strip()
        if choice.region == "cn":
            if amap_key:
                return choice, self._amap(amap_key)
            if google_key and i.region is None:
                self.notes.append(
                    f"Amap would suit this request ({choice.reason}) but {amap.KEY_ENV} is not "
                    f"set, so Google Maps answered; its data in mainland China is limited. "
                    + amap.KEY_HELP
                )
                return RegionChoice("intl", "no Amap key"), self._google(google_key)
            other = "" if i.region else " Or pass region='intl' to use Google Maps instead."
            raise MissingKeyError(
                f"This request goes to Amap (高德地图) because {choice.reason}, but "
                f"{amap.KEY_ENV} is not set. {amap.KEY_HELP}{other}"
            )
        if google_key:
            return choice, self._google(google_key)
        if amap_key and i.region is None:
            self.notes.append(
                f"{google.KEY_ENV} is not set, so Amap answered; its data outside mainland "
                f"China is limited. {google.KEY_HELP}"
            )
            return RegionChoice("cn", "no Google key"), self._amap(amap_key)
        other = "" if i.region else " Or pass region='cn' to use Amap instead."
        raise MissingKeyError(
            f"This request goes to Google Maps because {choice.reason}, but {google.KEY_ENV} "
            f"is not set. {google.KEY_HELP}{other}"
        )

    def _amap(self, key: str) -> amap.Amap:
        self.provider_id = "amap"
        return amap.Amap(self.services, key, self.progress)

    def _google(self, key: str) -> google.Google:
        self.provider_id = "google"
        return google.Google(self.services, key, self.progress, self.input.language)

    def note_conversions(self, provider: Provider) -> None:
        """Say which input coordinates were moved to the datum the provider uses there."""
        for text in self._place_texts():
            point = _coordinates(provider, text) if text else None
            if point is None or out_of_china(point.lat, point.lng):
                continue
            target = provider.datum_at(point)
            if point.datum == target:
                continue
            self.notes.append(
                f"{point.text()} was converted to {target} for {provider.name}: "
                f"{point.to(target).text()}."
            )

    # ------------------------------------------------------------ actions

    async def execute(self) -> str:
        if self.input.action == "locate":
            return await self.locate()
        choice, provider = self.choose()
        self.provider = provider
        self.region = choice.region
        self.note_conversions(provider)
        action = self.input.action
        if action == "geocode":
            return await self.geocode(provider, choice)
        if action == "search_places":
            return await self.search(provider, choice)
        if action == "get_directions":
            return await self.directions(provider, choice)
        return await self.trip(provider, choice)

    async def _resolve(self, provider: Provider, text: str) -> GeocodeResult:
        """A place text → a point; Amap scoped to the city this very text names."""
        if isinstance(provider, amap.Amap):
            return await provider.resolve(text, city_of(text))
        return await provider.resolve(text)

    async def geocode(self, provider: Provider, choice: RegionChoice) -> str:
        text = (self.input.location or "").strip()
        coords = _coordinates(provider, text)
        if coords is not None:
            found = [await provider.reverse_geocode(coords)]
        elif isinstance(provider, amap.Amap):
            city = city_of(text)
            # One geocoding request; on a miss the POI search (no second geocode).
            found = await provider.geocode(text, city) or [await provider.find_poi(text, city)]
        else:
            found = await provider.geocode(text)
        if not found:
            raise LocationError(f"{provider.name} found no place called {text!r}.")
        return render.geocode(provider.name, text, found, provider.datum)

    async def search(self, provider: Provider, choice: RegionChoice) -> str:
        i = self.input
        where_text = (i.location or "").strip()
        center = await self._resolve(provider, where_text)
        if isinstance(provider, amap.Amap):
            result = await provider.search(i.query, i.type, center, i.radius)
        else:
            result = await provider.search(i.query, i.type, center, i.radius, where_text)
        what = repr(i.query) if i.query else f"type {i.type!r}"
        if i.query and i.type:
            what += f" (type {i.type!r})"
        if center.is_area:
            where = f"in {center.address}"
        else:
            where = (
                f"within {render.distance(i.radius)} of {center.address} ({center.point.text()})"
            )
        return render.search(provider.name, what, where, result, provider.datum)

    async def directions(self, provider: Provider, choice: RegionChoice) -> str:
        i = self.input
        mode = i.mode or "driving"
        start, end = (i.location or "").strip(), (i.destination or "").strip()
        if isinstance(provider, amap.Amap):
            origin = await self._resolve(provider, start)
            dest = await self._resolve(provider, end)
            self.progress(f"Amap: planning the {mode} route", {"provider": "amap", "step": "route"})
            route = await provider.route(origin, dest, mode)
            return render.directions(provider.name, mode, origin.address, dest.address, route)
        self.progress(f"Google: planning the {mode} route", {"provider": "google", "step": "route"})
        legs = await provider.directions(_google_stops([start, end]), mode, [start, end])
        leg = legs[0]
        return render.directions(provider.name, mode, leg.start, leg.end, leg.route)

    async def trip(self, provider: Provider, choice: RegionChoice) -> str:
        i = self.input
        mode = i.mode or "driving"
        stops = [(i.location or "").strip(), *(w.strip() for w in i.waypoints or [])]
        if not _blank(i.destination):
            stops.append((i.destination or "").strip())
        if isinstance(provider, amap.Amap):
            points = [await self._resolve(provider, s) for s in stops]
            legs = []
            for n, (a, b) in enumerate(itertools.pairwise(points), 1):
                self.progress(
                    f"Amap: leg {n}/{len(points) - 1} ({mode})",
                    {"provider": "amap", "leg": n, "legs": len(points) - 1},
                )
                legs.append(Leg(a.address, b.address, await provider.route(a, b, mode)))
            how = "planned leg by leg and joined"
            return render.trip(provider.name, mode, [p.address for p in points], legs, how)
        wire = _google_stops(stops)
        if mode == "transit":
            # Google takes no waypoints for transit: ask leg by leg.
            legs = []
            for n in range(len(wire) - 1):
                self.progress(
                    f"Google: leg {n + 1}/{len(wire) - 1} (transit)",
                    {"provider": "google", "leg": n + 1, "legs": len(wire) - 1},
                )
                legs += await provider.directions(wire[n : n + 2], mode, stops[n : n + 2])
            how = "transit takes no waypoints, so each leg was asked separately"
        else:
            self.progress(
                f"Google: planning the {mode} trip through {len(stops) - 2} waypoints",
                {"provider": "google", "step": "route"},
            )
            legs = await provider.directions(wire, mode, stops)
            how = "one Directions request with waypoints"
        return render.trip(provider.name, mode, stops, legs, how)

    async def locate(self) -> str:
        """Provider WiFi/cell positioning when available, then IP geolocation services in turn."""
        i = self.input
        tried: list[str] = []
        amap_key = os.environ.get(amap.KEY_ENV, "").strip()
        google_key = os.environ.get(google.KEY_ENV, "").strip()
        providers: list[Provider] = []
        if i.region != "intl" and amap_key:
            providers.append(amap.Amap(self.services, amap_key, self.progress))
        if i.region != "cn" and google_key:
            providers.append(google.Google(self.services, google_key, self.progress, i.language))
        if i.region is None and not (i.language or os.environ.get("LANG", "")).lower().startswith(
            "zh"
        ):
            providers.reverse()  # Google first unless the user works in Chinese
        position: Position | None = None
        if providers:
            self.progress("Scanning WiFi networks and the mobile network cell", {"step": "scan"})
            wifi, cells = await asyncio.gather(scan_wifi(), scan_cells())
            access_points = wifi.access_points if len(wifi.access_points) >= 2 else []
            if not access_points:
                tried.append(f"WiFi positioning skipped: {wifi.note}")
            if not cells.towers:
                tried.append(cells.note)
            if access_points or cells.towers:
                what = "WiFi" if access_points else "cell"
                for provider in providers:
                    self.progress(
                        f"{what} positioning with {provider.name}",
                        {"step": what.lower(), "provider": provider.name},
                    )
                    try:
                        position = await provider.hw_locate(access_points, cells.towers)
                        self.provider_id = "amap" if isinstance(provider, amap.Amap) else "google"
                        break
                    except ProviderError as exc:
                        tried.append(exc.message)
        else:
            tried.append(
                "WiFi and cell positioning skipped: they need AMAP_API_KEY or GOOGLE_MAPS_API_KEY"
            )
        if position is None:
            position = await locate_by_ip(self.services, i.language, tried, self.progress)
            self.provider_id = "ip"
        if position is None:
            raise LocationError("Could not determine this computer's location. " + "; ".join(tried))
        return render.position(position, tried)


def _coordinates(provider: Provider, text: str) -> LatLng | None:
    """``text`` as coordinates, in the order the provider's users write them (Amap: lng,lat)."""
    return parse_coordinates(text, "amap" if isinstance(provider, amap.Amap) else "latlng")


def _google_stops(texts: list[str]) -> list[str]:
    """Place texts as Google's route services take them: coordinates as ``lat,lng`` in the
    datum Google uses at that place (GCJ-02 inside mainland China, WGS-84 elsewhere)."""
    out = []
    for text in texts:
        point = parse_coordinates(text)
        out.append(google.on_wire(point).latlng() if point is not None else text)
    return out
