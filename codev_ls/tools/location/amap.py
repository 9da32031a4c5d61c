"""Amap (高德地图) Web Service API: geocoding, POI search, routes, WiFi positioning.

Endpoints (v3 unless noted; responses have ``status`` "1"/"0", ``info`` and
``infocode``; empty string fields come back as ``[]``):

- ``/v3/geocode/geo`` (address → point) and ``/v3/geocode/regeo`` (point → address)
- ``/v3/place/text`` (keyword search in a city) and ``/v3/place/around`` (radius search),
  paged with ``page`` and ``offset``
- ``/v3/direction/driving``, ``/v3/direction/walking``,
  ``/v3/direction/transit/integrated`` and ``/v4/direction/bicycling`` (whose
  envelope is ``errcode``/``errmsg``/``data`` instead)
- ``https://apilocate.amap.com/position`` (智能硬件定位: WiFi → point)

Every coordinate Amap takes or returns is GCJ-02, written ``lng,lat``.

Paging (the search API's documentation, developer.amap.com → Web服务 API →
搜索POI): ``offset`` (page size) is "strongly advised not above 25, larger
values may fail" (强烈建议不超过25，若超过25可能造成访问报错), ``page`` goes up
to 100 (最大翻页数100), and "one query can page through at most 200 results"
(同请求参数翻页查询最多支持获取200条数据). So the seed's "1000 per page, 20
pages ≈ 10 000 results" cannot be had: this client asks 25 per page and stops
when Amap runs out or at the documented 200 results (8 pages), and says when
Amap reports more matches than one query can reach. The v5 search
(``page_size`` ≤ 25, ``page_num``) has the same 200-result cap.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from codev_ls.tools.location.cell import CellTower
from codev_ls.tools.location.common import (
    GeocodeResult,
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
from codev_ls.tools.location.datum import GCJ02, Datum, LatLng
from codev_ls.tools.location.region import has_chinese, parse_coordinates

DEFAULT_BASE_URL = "https://restapi.amap.com"
DEFAULT_LOCATE_URL = "https://apilocate.amap.com"
KEY_ENV = "AMAP_API_KEY"
NAME = "Amap (高德)"

PAGE_SIZE = 25
# "同请求参数翻页查询最多支持获取200条数据" (the search API's overview page).
DOCUMENTED_CAP = 200
# The documented highest ``page`` (最大翻页数100); the cap above is reached first.
MAX_PAGE_NUMBER = 100
MAX_PAGES = min(MAX_PAGE_NUMBER, -(-DOCUMENTED_CAP // PAGE_SIZE))
# 智能硬件定位: "macs 必须填写2个及2个以上,30个以内的方可正常定位".
MAX_MACS = 30
TIMEOUT_S = 10.0
# Retried once after a short pause: per-second limits and transient server trouble.
_RETRY_CODES = frozenset({"10014", "10015", "10016", "10019", "10020", "10021", "20003"})
RETRY_DELAY_S = 0.5

# Geocode match levels that name a whole area rather than a spot.
_AREA_LEVELS = frozenset({"国家", "省", "市", "区县", "开发区"})

KEY_HELP = (
    "Set AMAP_API_KEY to an Amap key of the service type 「Web服务」 (Web Service): "
    "register at https://lbs.amap.com (高德开放平台), then in the console "
    "「应用管理」 → 「我的应用」 → 「创建新应用」, and 「添加Key」 with 「Web服务」 "
    "as the service platform. The README's 'Location tool' section has the steps."
)

_ERRORS: dict[str, str] = {
    "10001": "Amap rejected the API key (INVALID_USER_KEY): AMAP_API_KEY is wrong or expired. "
    + KEY_HELP,
    "10002": "The Amap key may not use this service (SERVICE_NOT_AVAILABLE): it must be a "
    "「Web服务」 key.",
    "10003": "The Amap key's daily quota is used up (DAILY_QUERY_OVER_LIMIT); it resets at "
    "00:00 Beijing time. Try again tomorrow or raise the quota in the Amap console.",
    "10004": "Too many Amap requests within a minute (ACCESS_TOO_FREQUENT); wait a minute "
    "and try again.",
    "10005": "Amap refused this machine's IP address (INVALID_USER_IP): the key has an IP "
    "whitelist that does not include it; edit the whitelist in the Amap console.",
    "10006": "Amap refused the request (INVALID_USER_DOMAIN): the key is bound to other "
    "domains; edit its settings in the Amap console.",
    "10007": "The Amap key requires a digital signature (数字签名, INVALID_USER_SIGNATURE), "
    "which this tool does not send; turn signing off for this key in the Amap console.",
    "10008": "Amap rejected the key's security code (INVALID_USER_SCODE); use a 「Web服务」 key.",
    "10009": "The Amap key belongs to another platform (USERKEY_PLAT_NOMATCH), e.g. the JS API "
    "or a mobile SDK; create a key of the type 「Web服务」.",
    "10010": "Amap blocked this IP address for too many requests (IP_QUERY_OVER_LIMIT).",
    "10012": "The Amap key has no permission for this service (INSUFFICIENT_PRIVILEGES).",
    "10013": "The Amap key was deleted (USER_KEY_RECYCLED); create a new one. " + KEY_HELP,
    "10017": "This Amap service is unavailable right now (RESOURCE_UNAVAILABLE); try later.",
    "10029": "The Amap key's daily quota for places outside mainland China is used up "
    "(ABROAD_DAILY_QUERY_OVER_LIMIT); use region='intl' for Google Maps.",
    "10044": "The Amap account's daily quota is used up (USER_DAILY_QUERY_OVER_LIMIT); it "
    "resets at 00:00 Beijing time.",
    "10045": "The Amap account's daily quota for places abroad is used up "
    "(USER_ABROAD_DAILY_QUERY_OVER_LIMIT); use region='intl' for Google Maps.",
    "20011": "Amap may not search outside mainland China with this key "
    "(INSUFFICIENT_ABROAD_PRIVILEGES); use region='intl' for Google Maps.",
    "20800": "Amap cannot plan routes here (OUT_OF_SERVICE).",
    "20801": "Amap found no road near the start or the end (NO_ROADS_NEARBY); give a point "
    "closer to a road.",
    "20802": "Amap could not plan this route (ROUTE_FAIL); try another mode or nearby points.",
    "20803": "The places are too far apart for this mode (OVER_DIRECTION_RANGE); try "
    "driving or transit, or split the trip.",
}
_QPS_CODES = frozenset({"10014", "10015", "10019", "10020", "10021"})


def error_message(code: str, info: str) -> str:
    """A provider error written for the model and the user."""
    if code in _ERRORS:
        return f"{NAME}: {_ERRORS[code]}"
    if code in _QPS_CODES:
        return (
            f"{NAME}: too many requests per second for this key ({info}); "
            "wait a moment and try again."
        )
    if code in ("20000", "20001", "20002"):
        return f"{NAME} rejected the request ({info}, {code}); check the place names and values."
    return f"{NAME} returned an error: {info or 'unknown'} (infocode {code or '?'})."


def base_url() -> str:
    return os.environ.get("AMAP_BASE_URL") or DEFAULT_BASE_URL


def locate_url() -> str:
    return os.environ.get("AMAP_LOCATE_BASE_URL") or DEFAULT_LOCATE_URL


def parse_lnglat(value: Any) -> LatLng | None:
    """Amap's ``"lng,lat"`` (GCJ-02) → a point."""
    parts = text_of(value).split(",")
    if len(parts) != 2:
        return None
    try:
        return LatLng(float(parts[1]), float(parts[0]), GCJ02)
    except ValueError:
        return None


ProgressFn = Callable[[str, dict[str, Any]], None]


class Amap:
    """A client for one tool use (the HTTP clients are shared engine-wide)."""

    name = NAME
    datum = GCJ02

    def __init__(self, services: LocationServices, key: str, progress: ProgressFn) -> None:
        self.key = key
        self.http = services.service(NAME, base_url(), TIMEOUT_S)
        self._services = services
        self._progress = progress
        self.notes: list[str] = []

    def datum_at(self, point: LatLng) -> Datum:
        """Amap speaks GCJ-02 everywhere."""
        return GCJ02

    # ------------------------------------------------------------- transport

    async def _call(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        for attempt in (1, 2):
            reply = await self.http.get(path, {**params, "key": self.key}, secrets=[self.key])
            data = reply.data if isinstance(reply.data, dict) else {}
            if reply.status >= 400:
                raise ProviderError(NAME, f"{NAME} answered HTTP {reply.status}.")
            if "errcode" in data:  # the v4 envelope
                code = str(data.get("errcode"))
                info = text_of(data.get("errmsg"))
                if code == "0":
                    return data
            else:
                if str(data.get("status")) == "1":
                    return data
                code = text_of(data.get("infocode"))
                info = text_of(data.get("info"))
            if attempt == 1 and code in _RETRY_CODES:
                await asyncio.sleep(RETRY_DELAY_S)
                continue
            raise ProviderError(NAME, redact(error_message(code, info), [self.key]), code)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------- geocoding

    async def geocode(self, address: str, city: str | None = None) -> list[GeocodeResult]:
        data = await self._call("/v3/geocode/geo", {"address": address, "city": city})
        results = []
        for item in data.get("geocodes") or []:
            point = parse_lnglat(item.get("location"))
            if point is None:
                continue
            level = text_of(item.get("level"))
            results.append(
                GeocodeResult(
                    address=text_of(item.get("formatted_address")) or address,
                    point=point,
                    level=level,
                    citycode=text_of(item.get("citycode")),
                    adcode=text_of(item.get("adcode")),
                    is_area=level in _AREA_LEVELS,
                )
            )
        return results

    async def reverse_geocode(self, point: LatLng) -> GeocodeResult:
        point = point.to(GCJ02)
        data = await self._call("/v3/geocode/regeo", {"location": point.lnglat()})
        regeo = data.get("regeocode") or {}
        comp = regeo.get("addressComponent") or {}
        return GeocodeResult(
            address=text_of(regeo.get("formatted_address")) or point.text(),
            point=point,
            citycode=text_of(comp.get("citycode")),
            adcode=text_of(comp.get("adcode")),
        )

    async def resolve(self, text: str, city: str | None = None) -> GeocodeResult:
        """A place text or coordinates → a GCJ-02 point (geocoding, then POI search)."""
        coords = parse_coordinates(text, "amap")
        if coords is not None:
            return GeocodeResult(address=text.strip(), point=coords.to(GCJ02))
        self._progress(f"Amap: geocoding {text}", {"provider": "amap", "step": "geocode"})
        found = await self.geocode(text, city)
        if found:
            return found[0]
        return await self.find_poi(text, city)

    async def find_poi(self, text: str, city: str | None = None) -> GeocodeResult:
        """The best POI called ``text``: landmarks and stations are often POIs, not addresses."""
        data = await self._call(
            "/v3/place/text",
            {"keywords": text, "city": city, "offset": 1, "page": 1, "extensions": "base"},
        )
        for poi in data.get("pois") or []:
            place = _place(poi)
            if place.point is not None:
                return GeocodeResult(
                    address=" ".join(p for p in (place.name, place.address) if p),
                    point=place.point,
                    level="兴趣点",
                    citycode=text_of(poi.get("citycode")),
                    adcode=text_of(poi.get("adcode")),
                )
        hint = (
            ""
            if has_chinese(text)
            else " Amap matches Chinese names best: try the Chinese name (e.g. 杭州东站 for "
            "Hangzhou East Station), or region='intl' to ask Google Maps."
        )
        raise LocationError(f"{NAME} found no place called {text!r}.{hint}")

    async def _with_city(self, place: GeocodeResult) -> GeocodeResult:
        if place.citycode:
            return place
        found = await self.reverse_geocode(place.point)
        place.citycode, place.adcode = found.citycode, found.adcode
        return place

    # ------------------------------------------------------------- search

    async def search(
        self,
        query: str | None,
        poi_type: str | None,
        center: GeocodeResult,
        radius: int,
    ) -> SearchResult:
        """All results of a keyword/type search, page by page (see the module docstring)."""
        params: dict[str, Any] = {
            "keywords": query,
            "types": poi_type,
            "offset": PAGE_SIZE,
            "extensions": "all",
        }
        if center.is_area:
            path = "/v3/place/text"
            params.update(city=center.adcode or center.citycode, citylimit="true")
        else:
            path = "/v3/place/around"
            params.update(location=center.point.lnglat(), radius=radius, sortrule="distance")
        places: list[Place] = []
        seen: set[str] = set()
        reported: int | None = None
        note = ""
        page = 0
        for page in range(1, MAX_PAGES + 1):
            data = await self._call(path, {**params, "page": page})
            count = number_of(data.get("count"))
            if count is not None:
                reported = int(count) if reported is None else max(reported, int(count))
            pois = data.get("pois") or []
            fresh = 0
            for poi in pois:
                place = _place(poi)
                key = place.place_id or f"{place.name}|{place.address}"
                if key in seen:
                    continue
                seen.add(key)
                places.append(place)
                fresh += 1
            total = f" of {reported}" if reported is not None else ""
            self._progress(
                f"Amap: page {page} fetched ({len(places)}{total} places)",
                {"provider": "amap", "page": page, "fetched": len(places), "total": reported},
            )
            if len(pois) < PAGE_SIZE or fresh == 0:
                break
            if reported is not None and len(places) >= reported:
                break
        else:
            if reported is None:
                note = f"stopped after {MAX_PAGES} pages ({DOCUMENTED_CAP} results, Amap's cap)"
        if not note and reported is not None and len(places) < reported:
            note = (
                f"Amap gave {len(places)} of its {reported} matches: one query pages through "
                f"at most {DOCUMENTED_CAP} results; narrow the search (a smaller radius, a type "
                "or a more specific query) to reach the others"
            )
        return SearchResult(places, page, reported, note)

    # ------------------------------------------------------------- routes

    async def route(self, origin: GeocodeResult, dest: GeocodeResult, mode: str) -> Route:
        o, d = origin.point.lnglat(), dest.point.lnglat()
        if mode == "transit":
            origin, dest = await self._with_city(origin), await self._with_city(dest)
            data = await self._call(
                "/v3/direction/transit/integrated",
                {
                    "origin": o,
                    "destination": d,
                    "city": origin.citycode or origin.adcode,
                    "cityd": dest.citycode or dest.adcode,
                },
            )
            return _transit_route(data)
        if mode == "bicycling":
            data = await self._call("/v4/direction/bicycling", {"origin": o, "destination": d})
            paths = (
                (data.get("data") or {}).get("paths") if isinstance(data.get("data"), dict) else []
            )
            return _path_route(paths or [], mode)
        path = "/v3/direction/driving" if mode == "driving" else "/v3/direction/walking"
        params = {"origin": o, "destination": d}
        if mode == "driving":
            params["extensions"] = "base"
        data = await self._call(path, params)
        route = data.get("route") or {}
        result = _path_route(route.get("paths") or [], mode)
        taxi = number_of(route.get("taxi_cost"))
        if mode == "driving" and taxi:
            result.notes.append(f"taxi about ¥{taxi:.0f}")
        return result

    # ------------------------------------------------------------- positioning

    async def hw_locate(
        self, access_points: list[tuple[str, int, str]], cells: list[CellTower] | None = None
    ) -> Position:
        """智能硬件定位: WiFi networks (``accesstype=1``) or cell towers (``accesstype=0``).

        ``access_points`` are (mac, dBm, ssid); at most 30 are sent, the strongest.
        Cells go as ``bts`` (``mcc,mnc,lac,cellid,signal``) and ``nearbts``. Amap's
        documentation also lists ``imei`` as required for ``accesstype=0``; the
        modem's IMEI is not sent (it identifies the device for good), so Amap may
        refuse cell-only positioning, and ``locate`` then goes on to IP geolocation.
        """
        http = self._services.service("Amap positioning", locate_url(), 8.0)
        cells = cells or []
        params: dict[str, Any] = {"key": self.key, "output": "json"}
        if len(access_points) >= 2:
            strongest = sorted(access_points, key=lambda ap: ap[1], reverse=True)[:MAX_MACS]
            params["accesstype"] = 1
            params["macs"] = "|".join(
                f"{mac},{dbm},{ssid.replace(',', ' ').replace('|', ' ')}"
                for mac, dbm, ssid in strongest
            )
        elif cells:
            params.update(accesstype=0, cdma=0, network=_network(cells[0].radio))
        else:
            raise ProviderError(NAME, "Amap positioning needs 2 WiFi networks or a cell tower.")
        if cells:
            params["bts"] = _bts(cells[0])
            if len(cells) > 1:
                params["nearbts"] = "|".join(_bts(c) for c in cells[1:])
        reply = await http.get("/position", params, secrets=[self.key])
        data = reply.data if isinstance(reply.data, dict) else {}
        if reply.status >= 400:
            raise ProviderError(NAME, f"Amap positioning answered HTTP {reply.status}.")
        if str(data.get("status")) != "1":
            code, info = text_of(data.get("infocode")), text_of(data.get("info"))
            raise ProviderError(NAME, redact(error_message(code, info), [self.key]), code)
        result = data.get("result") or {}
        point = parse_lnglat(result.get("location"))
        if point is None or text_of(result.get("type")) == "0":
            what = "WiFi networks" if params["accesstype"] == 1 else "cell towers"
            raise ProviderError(NAME, f"Amap positioning found no position for these {what}.")
        how = "WiFi" if params["accesstype"] == 1 else "cell"
        return Position(
            point=point,
            source=f"{how} positioning by {NAME}",
            accuracy_m=number_of(result.get("radius")),
            label=text_of(result.get("desc")),
        )

    async def wifi_locate(self, access_points: list[tuple[str, int, str]]) -> Position:
        """WiFi positioning only (see :meth:`hw_locate`)."""
        return await self.hw_locate(access_points, [])


# ModemManager access technology → the ``network`` values Amap lists (GSM/GPRS/EDGE/
# HSUPA/HSDPA/WCDMA); LTE and NR are not in Amap's list and are sent as such.
_NETWORKS = {
    "gsm": "GSM", "gprs": "GPRS", "edge": "EDGE", "umts": "WCDMA", "hsdpa": "HSDPA",
    "hsupa": "HSUPA", "hspa": "HSDPA", "hspa-plus": "HSDPA", "lte": "LTE", "5gnr": "NR",
}  # fmt: skip


def _network(radio: str) -> str:
    return _NETWORKS.get(radio, "GSM")


def _bts(cell: CellTower) -> str:
    signal = cell.dbm if cell.dbm is not None else -80
    return f"{cell.mcc},{cell.mnc},{cell.lac},{cell.cell_id},{signal}"


def _place(poi: dict[str, Any]) -> Place:
    biz = poi.get("biz_ext") if isinstance(poi.get("biz_ext"), dict) else {}
    address = text_of(poi.get("address"))
    area = "".join(text_of(poi.get(k)) for k in ("cityname", "adname"))
    category = text_of(poi.get("type")).split(";")[-1]
    return Place(
        name=text_of(poi.get("name")),
        address=address if not area or address.startswith(area) else f"{area}{address}",
        point=parse_lnglat(poi.get("location")),
        distance_m=number_of(poi.get("distance")),
        rating=number_of(biz.get("rating")),
        category=category,
        place_id=text_of(poi.get("id")),
    )


def _path_route(paths: list[Any], mode: str) -> Route:
    if not paths or not isinstance(paths[0], dict):
        raise LocationError(f"{NAME} found no {mode} route between these places.")
    path = paths[0]
    steps = [
        Step(
            instruction=text_of(s.get("instruction")),
            distance_m=number_of(s.get("distance")),
            duration_s=number_of(s.get("duration")),
        )
        for s in path.get("steps") or []
        if isinstance(s, dict) and text_of(s.get("instruction"))
    ]
    route = Route(
        distance_m=number_of(path.get("distance")) or 0.0,
        duration_s=number_of(path.get("duration")) or 0.0,
        steps=steps,
    )
    tolls = number_of(path.get("tolls"))
    if tolls:
        route.notes.append(f"tolls ¥{tolls:.0f}")
    lights = number_of(path.get("traffic_lights"))
    if lights:
        route.notes.append(f"{lights:.0f} traffic lights")
    return route


def _transit_route(data: dict[str, Any]) -> Route:
    transits = (data.get("route") or {}).get("transits") or []
    if not transits:
        raise LocationError(f"{NAME} found no public transit route between these places.")
    plan = transits[0]
    steps: list[Step] = []
    for seg in plan.get("segments") or []:
        walking = seg.get("walking")
        if isinstance(walking, dict) and number_of(walking.get("distance")):
            steps.append(
                Step(
                    "Walk",
                    number_of(walking.get("distance")),
                    number_of(walking.get("duration")),
                )
            )
        bus = seg.get("bus") if isinstance(seg.get("bus"), dict) else {}
        for line in (bus.get("buslines") or [])[:1]:
            dep = text_of((line.get("departure_stop") or {}).get("name"))
            arr = text_of((line.get("arrival_stop") or {}).get("name"))
            stops = number_of(line.get("via_num"))
            count = f", {int(stops) + 1} stops" if stops is not None else ""
            steps.append(
                Step(
                    f"Take {text_of(line.get('name'))} from {dep} to {arr}{count}",
                    number_of(line.get("distance")),
                    number_of(line.get("duration")),
                )
            )
        railway = seg.get("railway") if isinstance(seg.get("railway"), dict) else {}
        if text_of(railway.get("name")):
            dep = text_of((railway.get("departure_stop") or {}).get("name"))
            arr = text_of((railway.get("arrival_stop") or {}).get("name"))
            steps.append(
                Step(
                    f"Take train {text_of(railway.get('trip'))} {text_of(railway.get('name'))} "
                    f"from {dep} to {arr}",
                    number_of(railway.get("distance")),
                    number_of(railway.get("time")),
                )
            )
    route = Route(
        distance_m=number_of(plan.get("distance")) or sum(s.distance_m or 0 for s in steps),
        duration_s=number_of(plan.get("duration")) or 0.0,
        steps=steps,
    )
    cost = number_of(plan.get("cost"))
    if cost:
        route.notes.append(f"fare about ¥{cost:g}")
    walk = number_of(plan.get("walking_distance"))
    if walk:
        route.notes.append(f"{walk:.0f} m on foot")
    return route
