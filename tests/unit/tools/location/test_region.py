"""Provider choice: Chinese text, Chinese city names in Latin script, forced region, HK/MO/TW."""

from __future__ import annotations

import pytest

from codev_ls.tools.location.datum import GCJ02, WGS84
from codev_ls.tools.location.region import detect_region, parse_coordinates


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("西单", None),
        ("北京市朝阳区阜通东大街6号", "北京"),
        ("杭州东站", "杭州"),
        ("Beijing", "北京"),
        ("Hangzhou East Station", "杭州"),
        ("Xi'an Bell Tower", "西安"),
        ("SHANGHAI Pudong airport", "上海"),
        ("Chengdu panda base", "成都"),
        ("Guilin, Guangxi", "桂林"),
    ],
)
def test_mainland_places_go_to_amap(text: str, city: str | None) -> None:
    choice = detect_region([text])
    assert choice.region == "cn"
    assert choice.city == city


@pytest.mark.parametrize(
    "text",
    [
        "Times Square",
        "Eiffel Tower, Paris",
        "Bank of China, London",  # "China" alone is not a place
        "Canton, Ohio",
        "Peking Duck House, New York",
        "Chinatown, San Francisco",
    ],
)
def test_other_places_go_to_google(text: str) -> None:
    assert detect_region([text]).region == "intl"


@pytest.mark.parametrize(
    "text",
    [
        "香港中環",
        "台北101",
        "臺北車站",
        "澳門大三巴",
        "Kowloon",
        "Macau Tower",
        "Taipei 101",
        "高雄",
    ],
)
def test_hong_kong_macau_taiwan_go_to_google(text: str) -> None:
    choice = detect_region([text])
    assert choice.region == "intl"
    assert "Hong Kong" in choice.reason


def test_a_cross_border_trip_goes_to_amap() -> None:
    choice = detect_region(["深圳北站", "香港西九龍站"])
    assert choice.region == "cn" and choice.city == "深圳"
    assert detect_region(["Shenzhen Bay", "Hong Kong Airport"]).region == "cn"


@pytest.mark.parametrize("text", ["上海中环路", "深圳铜锣湾广场"])
def test_mainland_namesakes_of_hong_kong_districts_stay_with_amap(text: str) -> None:
    assert detect_region([text]).region == "cn"


@pytest.mark.parametrize("text", ["東京タワー", "东京塔", "纽约时代广场", "首尔"])
def test_foreign_places_written_in_chinese_or_japanese_go_to_google(text: str) -> None:
    assert detect_region([text]).region == "intl"


def test_forced_region_wins_both_ways() -> None:
    assert detect_region(["西单"], forced="intl").region == "intl"
    assert detect_region(["Times Square"], forced="cn").region == "cn"
    assert detect_region(["台北101"], forced="cn").region == "cn"
    assert "requested" in detect_region(["x"], forced="cn").reason


def test_coordinates_decide_when_the_text_says_nothing() -> None:
    assert detect_region(["39.9087,116.3975"]).region == "cn"  # Tiananmen
    assert detect_region(["22.2988,114.1722"]).region == "intl"  # Tsim Sha Tsui
    assert detect_region(["25.0340,121.5645"]).region == "intl"  # Taipei
    assert detect_region(["40.7580,-73.9855"]).region == "intl"


def test_a_chinese_query_counts_only_when_the_places_say_nothing() -> None:
    assert detect_region(["Xidan"], query="咖啡").region == "cn"
    assert detect_region(["Paris"], query="咖啡").region == "cn"  # no gazetteer: region= fixes it
    assert detect_region(["Eiffel Tower"], query="Sichuan restaurant").region == "intl"
    assert detect_region(["巴黎"], query="咖啡").region == "intl"


def test_the_first_named_mainland_city_scopes_amap() -> None:
    assert detect_region(["Times Square", "杭州西湖"], forced="cn").city == "杭州"


@pytest.mark.parametrize(
    ("text", "lat", "lng", "datum"),
    [
        ("39.9087,116.3975", 39.9087, 116.3975, WGS84),
        (" 39.9087 , 116.3975 ", 39.9087, 116.3975, WGS84),
        ("39.910135,116.403709 [GCJ-02]", 39.910135, 116.403709, GCJ02),
        ("39.91,116.40 (gcj02)", 39.91, 116.40, GCJ02),
        ("39.91,116.40 WGS-84", 39.91, 116.40, WGS84),
        ("116.3975,39.9087", 39.9087, 116.3975, WGS84),  # Amap's lng,lat order
        ("-33.8568,151.2153", -33.8568, 151.2153, WGS84),
        ("31.23，121.47", 31.23, 121.47, WGS84),  # full-width comma
    ],
)
def test_parse_coordinates(text: str, lat: float, lng: float, datum: str) -> None:
    point = parse_coordinates(text)
    assert point is not None
    assert (point.lat, point.lng, point.datum) == (lat, lng, datum)


@pytest.mark.parametrize("text", ["西单", "100,200", "39.9", "Route 66, 12", "95,95"])
def test_non_coordinates(text: str) -> None:
    assert parse_coordinates(text) is None
