"""A fake Amap (高德) Web Service API speaking the documented v3/v4 wire format.

What it reproduces, from Amap's Web Service API documentation:

- the v3 envelope ``{"status": "1"|"0", "info": "OK"|<CODE>, "infocode": "10000"|...}``
  with string-typed numbers, and empty string fields written as ``[]``;
- ``/v3/geocode/geo`` (``geocodes[]`` with ``formatted_address``, ``location`` "lng,lat",
  ``level``, ``citycode``, ``adcode``…) and ``/v3/geocode/regeo``. ``city`` (a Chinese
  name with or without 市, a citycode or an adcode) is honoured as documented: matches in
  that city come first, and when it has none the search is nationwide. A city named at
  the start of the address (上海中山公园) or after a comma at its end (北京东路, 南京)
  counts the same way when no ``city`` is given;
- ``/v3/place/text`` and ``/v3/place/around`` with ``page``/``offset`` paging, ``count``,
  ``offset`` above 25 and ``page`` above 100 refused, and at most 200 results per query
  (the documented cap; ``result_cap=None`` lifts it to test the client's own page limit);
  ``place/text`` puts POIs of ``city`` first, or only those with ``citylimit=true``;
- ``/v3/direction/driving|walking``, ``/v3/direction/transit/integrated`` (needs ``city``)
  and ``/v4/direction/bicycling`` (the v4 ``errcode``/``errmsg``/``data`` envelope);
- ``/position`` (智能硬件定位): WiFi (``accesstype=1``, ``macs`` with 2 to 30 entries)
  or cell towers (``accesstype=0``, ``bts`` ``mcc,mnc,lac,cellid,signal``, ``cdma``,
  ``network``) → location;
- error codes: ``INVALID_USER_KEY`` 10001, ``DAILY_QUERY_OVER_LIMIT`` 10003,
  ``CUQPS_HAS_EXCEEDED_THE_LIMIT`` 10021, ``INVALID_PARAMS`` 20000,
  ``MISSING_REQUIRED_PARAMS`` 20001, ``OVER_DIRECTION_RANGE`` 20803…

All coordinates here are GCJ-02.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tests.fakes._location_server import JsonServer, Reply, Request

OK = {"status": "1", "info": "OK", "infocode": "10000"}

ERRORS = {
    "10001": "INVALID_USER_KEY",
    "10003": "DAILY_QUERY_OVER_LIMIT",
    "10004": "ACCESS_TOO_FREQUENT",
    "10009": "USERKEY_PLAT_NOMATCH",
    "10021": "CUQPS_HAS_EXCEEDED_THE_LIMIT",
    "20000": "INVALID_PARAMS",
    "20001": "MISSING_REQUIRED_PARAMS",
    "20003": "UNKNOWN_ERROR",
    "20011": "INSUFFICIENT_ABROAD_PRIVILEGES",
    "20803": "OVER_DIRECTION_RANGE",
}


@dataclass(frozen=True)
class GeoEntry:
    formatted_address: str
    location: str  # "lng,lat", GCJ-02
    level: str
    province: str
    city: str  # "" for the municipalities, where Amap writes []
    district: str
    citycode: str
    adcode: str


GEOCODES: dict[str, GeoEntry] = {
    "北京市朝阳区阜通东大街6号": GeoEntry(
        "北京市朝阳区阜通东大街6号", "116.482086,39.990496", "门牌号", "北京市", "", "朝阳区", "010", "110105"
    ),
    "西单": GeoEntry("北京市西城区西单", "116.373487,39.913130", "热点商圈", "北京市", "", "西城区", "010", "110102"),
    "天安门": GeoEntry("北京市东城区天安门", "116.397499,39.908722", "兴趣点", "北京市", "", "东城区", "010", "110101"),
    "故宫": GeoEntry("北京市东城区故宫", "116.397029,39.917839", "兴趣点", "北京市", "", "东城区", "010", "110101"),
    "颐和园": GeoEntry("北京市海淀区颐和园", "116.275179,39.999617", "兴趣点", "北京市", "", "海淀区", "010", "110108"),
    "北京": GeoEntry("北京市", "116.407387,39.904179", "省", "北京市", "", "", "010", "110000"),
    "北京市": GeoEntry("北京市", "116.407387,39.904179", "省", "北京市", "", "", "010", "110000"),
    "杭州": GeoEntry("浙江省杭州市", "120.155070,30.274084", "市", "浙江省", "杭州市", "", "0571", "330100"),
    "杭州东站": GeoEntry("浙江省杭州市上城区杭州东站", "120.212600,30.290851", "兴趣点", "浙江省", "杭州市", "上城区", "0571", "330102"),
    "西湖": GeoEntry("浙江省杭州市西湖区西湖", "120.130396,30.259242", "兴趣点", "浙江省", "杭州市", "西湖区", "0571", "330106"),
    "上海": GeoEntry("上海市", "121.473701,31.230416", "省", "上海市", "", "", "021", "310000"),
    "外滩": GeoEntry("上海市黄浦区外滩", "121.490317,31.241701", "兴趣点", "上海市", "", "黄浦区", "021", "310101"),
    "乌鲁木齐": GeoEntry("新疆维吾尔自治区乌鲁木齐市", "87.616880,43.826630", "市", "新疆维吾尔自治区", "乌鲁木齐市", "", "0991", "650100"),
    "南京": GeoEntry("江苏省南京市", "118.796877,32.060255", "市", "江苏省", "南京市", "", "025", "320100"),
}  # fmt: skip

# Addresses found in several cities (the first is the nationwide best match).
HOMONYMS: list[tuple[str, GeoEntry]] = [
    ("中山公园", GeoEntry("北京市东城区中山公园", "116.391097,39.910287", "兴趣点", "北京市", "", "东城区", "010", "110101")),
    ("中山公园", GeoEntry("上海市长宁区中山公园", "121.417386,31.221517", "兴趣点", "上海市", "", "长宁区", "021", "310105")),
    ("北京东路", GeoEntry("上海市黄浦区北京东路", "121.483126,31.242432", "道路", "上海市", "", "黄浦区", "021", "310101")),
    ("北京东路", GeoEntry("江苏省南京市玄武区北京东路", "118.800972,32.060911", "道路", "江苏省", "南京市", "玄武区", "025", "320102")),
    ("南京东路", GeoEntry("上海市黄浦区南京东路", "121.480237,31.237420", "道路", "上海市", "", "黄浦区", "021", "310101")),
]  # fmt: skip
ENTRIES: list[tuple[str, GeoEntry]] = [*GEOCODES.items(), *HOMONYMS]

# The WiFi access points the fake positioning service knows.
KNOWN_MACS = {"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02", "aa:bb:cc:dd:ee:03"}
POSITION = "116.482086,39.990496"
# The cell it knows: (mcc, mnc, lac, cellid).
KNOWN_CELL = (460, 0, 4387, 72910925)
CELL_POSITION = "116.480000,39.988000"


def _city_names(entry: GeoEntry) -> set[str]:
    names = {entry.citycode, entry.adcode}
    for name in (entry.city, entry.province):
        if name:
            names |= {name, name.removesuffix("市").removesuffix("省")}
    return names


def in_city(entry: GeoEntry, city: str) -> bool:
    """Whether ``entry`` lies in ``city`` (Chinese name, citycode or adcode)."""
    if city.isdigit() and len(city) == 6:
        prefix = city.rstrip("0") if city.endswith("0000") else city.removesuffix("00")
        return entry.adcode.startswith(prefix)
    return city in _city_names(entry)


KNOWN_CITIES = sorted(
    {n for _, e in ENTRIES for n in _city_names(e) if n and not n.isdigit()}, key=len, reverse=True
)


def split_city(address: str) -> tuple[str, str | None]:
    """``上海中山公园`` → (``中山公园``, ``上海``); ``北京东路, 南京`` → (``北京东路``, ``南京``)."""
    text = address.strip()
    head, sep, tail = text.rpartition(",") if "," in text else text.rpartition("，")
    if sep and tail.strip() in KNOWN_CITIES:
        return head.strip(), tail.strip()
    keys = {k for k, _ in ENTRIES}
    if text in keys:
        return text, None
    for name in KNOWN_CITIES:
        rest = text[len(name) :].removeprefix("市").strip()
        if text.startswith(name) and rest in keys:
            return rest, name
    return text, None


def _lnglat(text: str) -> tuple[float, float]:
    lng, lat = text.split(",")
    return float(lng), float(lat)


def haversine(a: tuple[float, float], b: tuple[float, float]) -> float:
    (lng1, lat1), (lng2, lat2) = a, b
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return 2 * 6_371_000 * math.asin(math.sqrt(h))


def make_poi(i: int, name: str, type_: str, typecode: str, lng: float, lat: float, adcode: str,
             rating: str | None) -> dict[str, Any]:  # fmt: skip
    """A POI with the fields of the documented ``extensions=all`` answer."""
    return {
        "id": f"B000A{i:05d}",
        "parent": [],
        "childtype": [],
        "name": name,
        "tag": [],
        "type": type_,
        "typecode": typecode,
        "biz_type": [],
        "address": f"西单北大街{i}号" if i % 7 else [],
        "location": f"{lng:.6f},{lat:.6f}",
        "tel": "010-6600" + f"{i:04d}" if i % 3 else [],
        "postcode": [],
        "website": [],
        "email": [],
        "pcode": "110000",
        "pname": "北京市",
        "citycode": "010",
        "cityname": "北京市",
        "adcode": adcode,
        "adname": "西城区",
        "importance": [],
        "shopid": [],
        "shopinfo": "0",
        "poiweight": [],
        "gridcode": "5916729402",
        "distance": [],
        "navi_poiid": [],
        "entr_location": [],
        "business_area": "西单",
        "exit_location": [],
        "match": "0",
        "recommend": "0",
        "timestamp": "2024-05-01 10:00:00",
        "alias": [],
        "indoor_map": "0",
        "indoor_data": {"cpid": [], "floor": [], "truefloor": [], "cmsid": []},
        "groupbuy_num": "0",
        "discount_num": "0",
        "biz_ext": {"rating": rating if rating else [], "cost": []},
        "event": [],
        "children": [],
        "photos": [],
    }


def default_pois(count: int = 130) -> list[dict[str, Any]]:
    """Coffee shops and hot-pot places spread around 西单 (up to ~7 km away)."""
    centre = _lnglat(GEOCODES["西单"].location)
    pois = []
    for i in range(count):
        angle = i * 2.399963  # golden angle: an even spread
        dist_deg = 0.0006 * (i + 1) ** 0.85
        lng = centre[0] + dist_deg * math.cos(angle) * 1.3
        lat = centre[1] + dist_deg * math.sin(angle)
        if i % 4 == 3:
            name, type_, code = f"海底捞火锅(西单{i}店)", "餐饮服务;中餐厅;火锅店", "050117"
        else:
            name, type_, code = f"星巴克咖啡(西单{i}店)", "餐饮服务;咖啡厅;星巴克咖啡", "050501"
        rating = f"{3.5 + (i % 15) / 10:.1f}" if i % 5 else None
        pois.append(make_poi(i, name, type_, code, lng, lat, "110102", rating))
    return pois


class FakeAmap(JsonServer):
    """Fake restapi.amap.com (and apilocate.amap.com's ``/position``)."""

    def __init__(self, key: str, pois: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.key = key
        self.pois = pois if pois is not None else default_pois()
        # The documented cap of results one query can page through (None: no cap).
        self.result_cap: int | None = 200
        # infocode forced on every answer of a path (or "*" for all paths).
        self.fail: dict[str, str] = {}
        # infocode returned once, then normal answers (to test the client's retry).
        self.fail_once: dict[str, str] = {}
        self.delay = 0.0
        # Sent instead of any API answer (an HTML error page from a proxy, say).
        self.raw_reply: Reply | None = None

    # ------------------------------------------------------------ dispatch

    def _error(self, code: str) -> dict[str, Any]:
        return {"status": "0", "info": ERRORS.get(code, "UNKNOWN_ERROR"), "infocode": code}

    def handle(self, request: Request) -> Reply:
        if self.raw_reply is not None:
            return self.raw_reply
        p = request.params
        v4 = request.path.startswith("/v4/")
        forced = self.fail.get(request.path) or self.fail.get("*")
        with self.lock:
            once = self.fail_once.pop(request.path, None)
        code = None
        if p.get("key") != self.key:
            code = "10001"
        elif forced or once:
            code = forced or once
        if code:
            if v4:
                body = {"errcode": int(code), "errmsg": ERRORS.get(code, "UNKNOWN_ERROR"),
                        "errdetail": None, "data": ""}  # fmt: skip
                return Reply(200, body, delay=self.delay)
            return Reply(200, self._error(code), delay=self.delay)
        routes = {
            "/v3/geocode/geo": self.geocode,
            "/v3/geocode/regeo": self.regeo,
            "/v3/place/text": self.place_text,
            "/v3/place/around": self.place_around,
            "/v3/direction/driving": lambda r: self.path_route(r, "driving"),
            "/v3/direction/walking": lambda r: self.path_route(r, "walking"),
            "/v3/direction/transit/integrated": self.transit,
            "/v4/direction/bicycling": self.bicycling,
            "/position": self.position,
        }
        handler = routes.get(request.path)
        if handler is None:
            return Reply(200, self._error("10002") | {"info": "SERVICE_NOT_AVAILABLE"})
        return Reply(200, handler(request), delay=self.delay)

    # ------------------------------------------------------------ geocoding

    def geocode(self, r: Request) -> dict[str, Any]:
        address = r.params.get("address", "")
        if not address:
            return self._error("20001")
        key, implied = split_city(address)
        candidates = [e for k, e in ENTRIES if k == key]
        for city in (r.params.get("city"), implied):
            if city:
                inside = [e for e in candidates if in_city(e, city)]
                if inside:  # none in that city: nationwide, as documented
                    candidates = inside
                    break
        return OK | {
            "count": str(len(candidates)),
            "geocodes": [self._geocode_item(e) for e in candidates],
        }

    @staticmethod
    def _geocode_item(entry: GeoEntry) -> dict[str, Any]:
        return {
            "formatted_address": entry.formatted_address,
            "country": "中国",
            "province": entry.province,
            "citycode": entry.citycode,
            "city": entry.city or entry.province,
            "district": entry.district or [],
            "township": [],
            "neighborhood": {"name": [], "type": []},
            "building": {"name": [], "type": []},
            "adcode": entry.adcode,
            "street": [],
            "number": [],
            "location": entry.location,
            "level": entry.level,
        }

    def regeo(self, r: Request) -> dict[str, Any]:
        location = r.params.get("location", "")
        if not location:
            return self._error("20001")
        point = _lnglat(location)
        entry = min(GEOCODES.values(), key=lambda e: haversine(point, _lnglat(e.location)))
        component = {
            "country": "中国",
            "province": entry.province,
            "city": entry.city or [],
            "citycode": entry.citycode,
            "district": entry.district or [],
            "adcode": entry.adcode,
            "township": [],
            "towncode": [],
            "neighborhood": {"name": [], "type": []},
            "building": {"name": [], "type": []},
            "streetNumber": {
                "street": [],
                "number": [],
                "location": location,
                "direction": [],
                "distance": [],
            },
            "businessAreas": [[]],
        }
        return OK | {"regeocode": {"formatted_address": entry.formatted_address,
                                   "addressComponent": component}}  # fmt: skip

    # ------------------------------------------------------------ POI search

    def _matches(self, poi: dict[str, Any], keywords: str, types: str) -> bool:
        if keywords and keywords not in poi["name"] and keywords not in poi["type"]:
            return False
        if types:
            wanted = types.split("|")
            return any(
                poi["typecode"].startswith(t.rstrip("0")) or t in poi["type"] for t in wanted
            )
        return True

    def _page(self, r: Request, hits: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            offset = int(r.params.get("offset", "20"))
            page = int(r.params.get("page", "1"))
        except ValueError:
            return self._error("20000")
        if offset > 25 or offset < 1 or page < 1 or page > 100:
            return self._error("20000")
        reachable = hits if self.result_cap is None else hits[: self.result_cap]
        chunk = reachable[(page - 1) * offset : page * offset]
        if r.params.get("extensions") != "all":
            chunk = [{k: v for k, v in poi.items() if k not in ("biz_ext", "photos", "children")}
                     for poi in chunk]  # fmt: skip
        return OK | {
            "count": str(len(hits)),
            "suggestion": {"keywords": [], "cities": []},
            "pois": chunk,
        }

    def place_text(self, r: Request) -> dict[str, Any]:
        keywords, types = r.params.get("keywords", ""), r.params.get("types", "")
        if not keywords and not types:
            return self._error("20001")
        city = r.params.get("city", "")
        hits = [p for p in self.pois if self._matches(p, keywords, types)]
        if city:
            inside = [p for p in hits if poi_in_city(p, city)]
            if r.params.get("citylimit") == "true":
                hits = inside
            else:  # documented: the city's results first, others may follow
                hits = inside + [p for p in hits if p not in inside]
        return self._page(r, hits)

    def place_around(self, r: Request) -> dict[str, Any]:
        location = r.params.get("location", "")
        if not location:
            return self._error("20001")
        centre = _lnglat(location)
        radius = float(r.params.get("radius", "3000"))
        if radius > 50000:
            radius = 3000  # documented: larger values fall back to the default
        keywords, types = r.params.get("keywords", ""), r.params.get("types", "")
        hits = []
        for poi in self.pois:
            if not self._matches(poi, keywords, types):
                continue
            d = haversine(centre, _lnglat(poi["location"]))
            if d <= radius:
                hits.append(poi | {"distance": str(round(d))})
        hits.sort(key=lambda poi: int(poi["distance"]))
        return self._page(r, hits)

    # ------------------------------------------------------------ routes

    def _ends(self, r: Request) -> tuple[tuple[float, float], tuple[float, float]] | None:
        try:
            return _lnglat(r.params["origin"]), _lnglat(r.params["destination"])
        except (KeyError, ValueError):
            return None

    @staticmethod
    def _steps(total: int, speed: float, mode: str) -> list[dict[str, Any]]:
        parts = [0.1, 0.6, 0.3]
        names = ["西长安街", "东长安街", "建国门内大街"]
        steps = []
        verb = {"driving": "行驶", "walking": "步行", "bicycling": "骑行"}[mode]
        for i, share in enumerate(parts):
            d = round(total * share)
            steps.append({
                "instruction": f"沿{names[i]}向东{verb}{d}米"
                               + ("右转" if i < 2 else "到达目的地"),
                "orientation": "东",
                "road": names[i],
                "distance": str(d),
                "duration": str(round(d / speed)),
                "polyline": "116.397499,39.908722;116.407,39.908",
                "action": "右转" if i < 2 else [],
                "assistant_action": [] if i < 2 else "到达目的地",
            })  # fmt: skip
        return steps

    def path_route(self, r: Request, mode: str) -> dict[str, Any]:
        ends = self._ends(r)
        if ends is None:
            return self._error("20001")
        direct = haversine(*ends)
        if mode == "walking" and direct > 100_000:
            return self._error("20803")
        total = round(direct * 1.25)
        speed = 11.0 if mode == "driving" else 1.3
        path: dict[str, Any] = {
            "distance": str(total),
            "duration": str(round(total / speed)),
            "steps": self._steps(total, speed, mode),
        }
        if mode == "driving":
            path |= {"strategy": "速度最快", "tolls": "0", "toll_distance": "0",
                     "restriction": "0", "traffic_lights": "7"}  # fmt: skip
        route: dict[str, Any] = {"origin": r.params["origin"],
                                 "destination": r.params["destination"], "paths": [path]}  # fmt: skip
        if mode == "driving":
            route["taxi_cost"] = str(round(13 + total / 1000 * 2.3))
        return OK | {"count": "1", "route": route}

    def transit(self, r: Request) -> dict[str, Any]:
        ends = self._ends(r)
        if ends is None or not r.params.get("city"):
            return self._error("20001")
        total = round(haversine(*ends) * 1.3)
        bus_d = max(0, total - 500)
        segment_walk = {
            "origin": r.params["origin"], "destination": r.params["destination"],
            "distance": "300", "duration": "240",
            "steps": [{"instruction": "步行300米", "road": [], "distance": "300",
                       "duration": "240", "polyline": "", "action": [], "assistant_action": []}],
        }  # fmt: skip
        bus = {
            "buslines": [{
                "departure_stop": {"name": "西单", "id": "BV10013211", "location": "116.373,39.907"},
                "arrival_stop": {"name": "建国门", "id": "BV10013215", "location": "116.435,39.908"},
                "name": "地铁1号线八通线(古城--环球度假区)", "id": "110100023110",
                "type": "地铁线路", "distance": str(bus_d), "duration": str(round(bus_d / 9)),
                "polyline": "", "start_time": "0510", "end_time": "2249", "via_num": "4",
                "via_stops": [],
            }],
        }  # fmt: skip
        transit = {
            "cost": "4", "duration": str(round(bus_d / 9) + 420), "nightflag": "0",
            "walking_distance": "500", "distance": str(total), "missed": "0",
            "segments": [
                {"taxi": [], "walking": segment_walk, "bus": bus, "entrance": [], "exit": [],
                 "railway": {"spaces": [], "alters": []}},
                {"taxi": [], "walking": segment_walk | {"distance": "200", "duration": "180"},
                 "bus": {"buslines": []}, "entrance": [], "exit": [],
                 "railway": {"spaces": [], "alters": []}},
            ],
        }  # fmt: skip
        route = {"origin": r.params["origin"], "destination": r.params["destination"],
                 "distance": str(total), "taxi_cost": "35", "transits": [transit]}  # fmt: skip
        return OK | {"count": "1", "route": route}

    def bicycling(self, r: Request) -> dict[str, Any]:
        ends = self._ends(r)
        if ends is None:
            return {
                "errcode": 20001,
                "errmsg": "MISSING_REQUIRED_PARAMS",
                "errdetail": None,
                "data": "",
            }
        total = round(haversine(*ends) * 1.2)
        steps = [s | {"distance": int(s["distance"]), "duration": int(s["duration"])}
                 for s in self._steps(total, 4.0, "bicycling")]  # fmt: skip
        data = {"origin": r.params["origin"], "destination": r.params["destination"],
                "paths": [{"distance": total, "duration": round(total / 4.0), "steps": steps}]}  # fmt: skip
        return {"data": data, "errcode": 0, "errdetail": None, "errmsg": "OK", "ext": None}

    # ------------------------------------------------------------ positioning

    def position(self, r: Request) -> dict[str, Any]:
        access = r.params.get("accesstype")
        if access == "0":
            return self._cell_position(r)
        if access != "1" or not r.params.get("macs"):
            return self._error("20001")
        entries = [part for part in r.params["macs"].split("|") if part]
        if len(entries) > 30:
            return self._error("20000")
        macs = {part.split(",")[0].lower() for part in entries}
        if len(macs & KNOWN_MACS) < 2:
            return OK | {"result": {"type": "0"}}
        return OK | {
            "result": {
                "type": "4",
                "location": POSITION,
                "radius": "35",
                "desc": "北京市 朝阳区 望京街道 阜通东大街6号",
                "country": "中国",
                "province": "北京市",
                "city": "北京市",
                "citycode": "010",
                "adcode": "110105",
                "road": "阜通东大街",
                "street": "阜通东大街",
                "poi": "望京SOHO",
            }
        }

    def _cell_position(self, r: Request) -> dict[str, Any]:
        p = r.params
        if not p.get("bts") or p.get("cdma") not in ("0", "1") or not p.get("network"):
            return self._error("20001")
        try:
            mcc, mnc, lac, cid = (int(x) for x in p["bts"].split(",")[:4])
        except ValueError:
            return self._error("20000")
        if (mcc, mnc, lac, cid) != KNOWN_CELL:
            return OK | {"result": {"type": "0"}}
        return OK | {
            "result": {
                "type": "2",
                "location": CELL_POSITION,
                "radius": "550",
                "desc": "北京市 朝阳区 望京街道",
                "country": "中国",
                "province": "北京市",
                "city": "北京市",
                "citycode": "010",
                "adcode": "110105",
            }
        }


def poi_in_city(poi: dict[str, Any], city: str) -> bool:
    """Whether a POI lies in ``city`` (Chinese name, citycode or adcode)."""
    if city.isdigit() and len(city) == 6:
        prefix = city.rstrip("0") if city.endswith("0000") else city.removesuffix("00")
        return str(poi["adcode"]).startswith(prefix)
    if city.isdigit():
        return poi["citycode"] == city
    names = {str(poi.get(k) or "") for k in ("cityname", "pname")}
    return any(n and (n == city or n.removesuffix("市") == city) for n in names)
