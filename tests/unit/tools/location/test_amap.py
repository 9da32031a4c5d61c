"""Every action against the fake Amap, through Engine + ScriptedBridge + run_tool."""

from __future__ import annotations

import re

import pytest

from codev_ls.tools.location.amap import DOCUMENTED_CAP, MAX_PAGE_NUMBER, MAX_PAGES, PAGE_SIZE
from codev_ls.tools.location.datum import wgs84_to_gcj02
from tests.fakes.amap import make_poi
from tests.unit.tools.location.conftest import AMAP_KEY


async def test_the_tool_is_registered_read_only_and_concurrency_safe(run) -> None:
    tool = next(t for t in run.engine.tool_pool() if t.name == "Location")
    parsed = tool.parse_input({"action": "locate"})
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    assert "WebSearch" in tool.prompt() and "WebFetch" in tool.prompt()
    assert set(tool.input_schema()["properties"]) == {
        "action", "location", "destination", "query", "radius", "mode", "waypoints", "type",
        "region", "language",
    }  # fmt: skip


async def test_geocode_a_chinese_address(run, amap) -> None:
    out = await run(action="geocode", location="北京市朝阳区阜通东大街6号")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith("Amap (高德)")
    assert "39.990496,116.482086 [GCJ-02]" in text
    assert "[WGS-84]" in text  # the GPS equivalent is given too
    assert "门牌号" in text
    (call,) = amap.calls("/v3/geocode/geo")
    assert call.params["address"] == "北京市朝阳区阜通东大街6号"
    assert call.params["city"] == "北京"
    assert out.meta == {"provider": "amap", "region": "cn"}


async def test_geocode_coordinates_reverse_geocodes_in_gcj02(run, amap) -> None:
    out = await run(action="geocode", location="39.9087,116.3975", region="cn")
    assert out.status == "success", out.text()
    (call,) = amap.calls("/v3/geocode/regeo")
    lat, lng = wgs84_to_gcj02(39.9087, 116.3975)
    assert call.params["location"] == f"{lng:.6f},{lat:.6f}"
    assert "天安门" in out.text()
    assert "converted to GCJ-02 for Amap" in out.text()


async def test_geocode_gcj_tagged_coordinates_are_not_shifted_again(run, amap) -> None:
    out = await run(action="geocode", location="39.908722,116.397499 [GCJ-02]")
    assert out.status == "success", out.text()
    (call,) = amap.calls("/v3/geocode/regeo")
    assert call.params["location"] == "116.397499,39.908722"
    assert "was converted" not in out.text()


async def test_search_around_a_spot_pages_through_every_result(run, amap) -> None:
    out = await run(action="search_places", location="西单", query="咖啡", radius=5000)
    assert out.status == "success", out.text()
    calls = amap.calls("/v3/place/around")
    assert all(c.params["offset"] == str(PAGE_SIZE) for c in calls)
    assert [c.params["page"] for c in calls] == [str(i) for i in range(1, len(calls) + 1)]
    assert all(c.params["radius"] == "5000" and c.params["sortrule"] == "distance" for c in calls)
    assert calls[0].params["location"] == "116.373487,39.913130"
    expected = sum(
        1 for p in amap.pois if "咖啡" in p["name"]
    )  # the fake's own count within 5 km is what it reports
    reported = int(
        next(line for line in out.text().splitlines() if "reports" in line)
        .split("reports ")[1]
        .split(" ")[0]
    )
    assert reported <= expected
    assert f"{reported} places for '咖啡'" in out.text()
    assert len(calls) == reported // PAGE_SIZE + 1
    assert "★" in out.text() and " m — " in out.text()
    assert "火锅" not in out.text()
    pages = [m for m in run.progress() if m.startswith("Amap: page")]
    assert len(pages) == len(calls)
    assert run.progress_types() == {"LocationToolProgress"}
    reports = [e for e in run.bridge.progress if e.kind == "report"]
    assert any("page 2" in (e.message or "") for e in reports)


async def test_search_in_a_city_stops_at_the_documented_cap(run, amap) -> None:
    amap.pois = [
        make_poi(i, f"咖啡馆{i}", "餐饮服务;咖啡厅;咖啡厅", "050500", 116.4, 39.9, "110105", "4.0")
        for i in range(300)
    ]
    out = await run(action="search_places", location="北京", query="咖啡")
    assert out.status == "success", out.text()
    calls = amap.calls("/v3/place/text")
    assert calls[-1].params["city"] == "110000" and calls[-1].params["citylimit"] == "true"
    # 8 full pages of 25 reach the documented 200; no 9th request that could only be empty.
    assert len(calls) == DOCUMENTED_CAP // PAGE_SIZE == MAX_PAGES == 8
    assert f"{DOCUMENTED_CAP} places" in out.text()
    assert "300 matches" in out.text() and "narrow the search" in out.text()


async def test_search_never_pages_past_the_documented_limits(run, amap) -> None:
    amap.result_cap = None  # pretend Amap would go on for ever
    amap.pois = [
        make_poi(i, f"咖啡馆{i}", "餐饮服务;咖啡厅;咖啡厅", "050500", 116.4, 39.9, "110105", None)
        for i in range(700)
    ]
    out = await run(action="search_places", location="北京", query="咖啡")
    assert out.status == "success", out.text()
    calls = amap.calls("/v3/place/text")
    assert len(calls) == MAX_PAGES
    assert all(int(c.params["page"]) <= MAX_PAGE_NUMBER for c in calls)
    assert all(int(c.params["offset"]) <= 25 for c in calls)
    assert f"{DOCUMENTED_CAP} places" in out.text()
    assert "Amap gave 200 of its 700 matches" in out.text()


async def test_search_by_type_passes_the_amap_type_filter(run, amap) -> None:
    out = await run(action="search_places", location="西单", type="050117", radius=3000)
    assert out.status == "success", out.text()
    assert amap.calls("/v3/place/around")[0].params["types"] == "050117"
    assert "火锅" in out.text() and "星巴克" not in out.text()


async def test_search_with_nothing_found_is_a_plain_answer(run, amap) -> None:
    out = await run(action="search_places", location="西单", query="滑雪场")
    assert out.status == "success"
    assert "no places found" in out.text()


@pytest.mark.parametrize(
    ("mode", "path"),
    [
        ("driving", "/v3/direction/driving"),
        ("walking", "/v3/direction/walking"),
        ("bicycling", "/v4/direction/bicycling"),
    ],
)
async def test_directions_by_mode(run, amap, mode: str, path: str) -> None:
    out = await run(action="get_directions", location="天安门", destination="故宫", mode=mode)
    assert out.status == "success", out.text()
    (call,) = amap.calls(path)
    assert call.params["origin"] == "116.397499,39.908722"
    assert call.params["destination"] == "116.397029,39.917839"
    text = out.text()
    assert f"Amap (高德) {mode} route: 北京市东城区天安门 → 北京市东城区故宫" in text
    assert re.search(r"Distance 1\.\d km · duration \d+ min", text)
    assert "Main steps:" in text and "沿东长安街" in text
    if mode == "driving":
        assert "taxi about ¥" in text and "traffic lights" in text


async def test_transit_directions_name_the_city_and_the_lines(run, amap) -> None:
    out = await run(
        action="get_directions", location="天安门", destination="颐和园", mode="transit"
    )
    assert out.status == "success", out.text()
    (call,) = amap.calls("/v3/direction/transit/integrated")
    assert call.params["city"] == "010" and call.params["cityd"] == "010"
    assert "Take 地铁1号线八通线" in out.text() and "from 西单 to 建国门, 5 stops" in out.text()
    assert "fare about ¥4" in out.text()


async def test_transit_from_coordinates_looks_up_the_city(run, amap) -> None:
    out = await run(
        action="get_directions",
        location="39.908722,116.397499 [GCJ-02]",
        destination="颐和园",
        mode="transit",
    )
    assert out.status == "success", out.text()
    assert len(amap.calls("/v3/geocode/regeo")) == 1
    assert amap.calls("/v3/direction/transit/integrated")[0].params["city"] == "010"


async def test_plan_trip_joins_the_legs(run, amap) -> None:
    out = await run(
        action="plan_trip", location="天安门", waypoints=["故宫", "西单"], destination="颐和园"
    )
    assert out.status == "success", out.text()
    calls = amap.calls("/v3/direction/driving")
    assert len(calls) == 3
    assert [c.params["origin"] for c in calls[1:]] == [c.params["destination"] for c in calls[:-1]]
    text = out.text()
    assert "3 legs (planned leg by leg and joined)" in text
    assert "Leg 1: 北京市东城区天安门 → 北京市东城区故宫" in text
    assert "Leg 3: 北京市西城区西单 → 北京市海淀区颐和园" in text
    assert "Total: " in text
    legs = [m for m in run.progress() if "leg" in m]
    assert legs == ["Amap: leg 1/3 (driving)", "Amap: leg 2/3 (driving)", "Amap: leg 3/3 (driving)"]


async def test_plan_trip_without_destination_ends_at_the_last_waypoint(run, amap) -> None:
    out = await run(
        action="plan_trip", location="天安门", waypoints=["故宫", "颐和园"], mode="walking"
    )
    assert out.status == "success", out.text()
    assert len(amap.calls("/v3/direction/walking")) == 2
    assert "颐和园" in out.text().splitlines()[0]


async def test_latin_city_names_go_to_amap_and_a_miss_suggests_the_chinese_name(run, amap) -> None:
    out = await run(action="get_directions", location="Hangzhou East Station", destination="西湖")
    assert out.status == "error"
    geo = amap.calls("/v3/geocode/geo")[0]
    assert geo.params["address"] == "Hangzhou East Station"
    assert geo.params["city"] == "杭州"
    assert "Amap (高德) found no place called 'Hangzhou East Station'" in out.text()
    assert "杭州东站" in out.text() and "region='intl'" in out.text()


async def test_geocoding_a_poi_asks_the_geocoder_once_then_the_poi_search(run, amap) -> None:
    out = await run(action="geocode", location="星巴克咖啡(西单2店)")
    assert out.status == "success", out.text()
    assert len(amap.calls("/v3/geocode/geo")) == 1
    (poi,) = amap.calls("/v3/place/text")
    assert poi.params["keywords"] == "星巴克咖啡(西单2店)" and poi.params["city"] == "北京"
    assert "星巴克咖啡(西单2店)" in out.text() and "兴趣点" in out.text()


async def test_a_poi_is_found_when_geocoding_misses(run, amap) -> None:
    out = await run(
        action="search_places", location="星巴克咖啡(西单2店)", query="火锅", radius=2000
    )
    assert out.status == "success", out.text()
    assert len(amap.calls("/v3/geocode/geo")) == 1
    assert amap.calls("/v3/place/text")[0].params["keywords"] == "星巴克咖啡(西单2店)"
    assert "火锅" in out.text()


async def test_the_key_is_sent_to_amap(run, amap) -> None:
    await run(action="geocode", location="西单")
    assert all(r.params.get("key") == AMAP_KEY for r in amap.requests)


# ------------------------------------------------------------------ the city of each text


async def test_each_stop_of_a_trip_is_geocoded_in_its_own_city(run, amap) -> None:
    out = await run(action="plan_trip", location="北京", waypoints=["上海"], destination="杭州东站")
    assert out.status == "success", out.text()
    geo = amap.calls("/v3/geocode/geo")
    assert [(c.params["address"], c.params.get("city")) for c in geo] == [
        ("北京", "北京"),
        ("上海", "上海"),
        ("杭州东站", "杭州"),
    ]
    assert "Leg 2: 上海市 → 浙江省杭州市上城区杭州东站" in out.text()


async def test_a_street_named_after_a_city_does_not_scope_the_lookup(run, amap) -> None:
    out = await run(action="geocode", location="Nanjing Road, Shanghai")
    assert out.status == "error"  # the fake knows Chinese names only
    (geo,) = amap.calls("/v3/geocode/geo")
    assert geo.params["city"] == "上海"
    assert amap.calls("/v3/place/text")[0].params["city"] == "上海"


async def test_the_trailing_city_wins_over_the_city_in_a_street_name(run, amap) -> None:
    out = await run(action="geocode", location="北京东路, 南京")
    assert out.status == "success", out.text()
    assert amap.calls("/v3/geocode/geo")[0].params["city"] == "南京"
    assert "江苏省南京市玄武区北京东路" in out.text()
    assert "上海市黄浦区北京东路" not in out.text()


async def test_homonyms_resolve_in_the_city_each_text_names(run, amap) -> None:
    out = await run(action="get_directions", location="北京中山公园", destination="上海中山公园")
    assert out.status == "success", out.text()
    geo = amap.calls("/v3/geocode/geo")
    assert [c.params.get("city") for c in geo] == ["北京", "上海"]
    (route,) = amap.calls("/v3/direction/driving")
    assert route.params["origin"] == "116.391097,39.910287"
    assert route.params["destination"] == "121.417386,31.221517"
    assert "北京市东城区中山公园 → 上海市长宁区中山公园" in out.text()


async def test_the_fake_honours_city_as_amap_does(run, amap) -> None:
    """A ``city`` with matches keeps only those; a ``city`` without falls back nationwide."""
    both = await run(action="geocode", location="中山公园")  # no city named: nationwide
    assert "北京市东城区中山公园" in both.text() and "上海市长宁区中山公园" in both.text()
    assert amap.calls("/v3/geocode/geo")[-1].params.get("city") is None
    shanghai = await run(action="geocode", location="上海中山公园")
    assert "上海市长宁区中山公园" in shanghai.text()
    assert "北京市东城区中山公园" not in shanghai.text()
    assert amap.calls("/v3/geocode/geo")[-1].params["city"] == "上海"


@pytest.mark.parametrize(
    ("location", "sent"),
    [
        ("87.616880,43.826630 [GCJ-02]", "87.616880,43.826630"),  # Ürümqi, Amap's lng,lat
        ("43.826630,87.616880 [GCJ-02]", "87.616880,43.826630"),  # the same, lat,lng
        ("116.397499,39.908722 [GCJ-02]", "116.397499,39.908722"),  # first number > 90
    ],
)
async def test_amap_reads_western_china_in_its_own_lng_lat_order(
    run, amap, location: str, sent: str
) -> None:
    out = await run(action="geocode", location=location)
    assert out.status == "success", out.text()
    assert out.meta["provider"] == "amap"
    assert amap.calls("/v3/geocode/regeo")[0].params["location"] == sent
