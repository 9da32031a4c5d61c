"""Provider choice: Chinese text, Chinese city names in Latin script, forced region, HK/MO/TW."""

from __future__ import annotations

import pytest

from codev_ls.tools.location.datum import GCJ02, WGS84
from codev_ls.tools.location.region import city_of, detect_region, parse_coordinates


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("西单", "北京"),
        ("Xidan", "北京"),
        ("find coffee near Xidan", "北京"),
        ("Dali Old Town", "大理"),
        ("Ürümqi", "乌鲁木齐"),
        ("Tibet", None),  # a province: a mainland sign that does not scope
        ("Zhongshan, Guangdong", "中山"),
        ("Zhongshan Park", None),  # Zhongshan parks are in every city
        ("Lujiazui", "上海"),
        ("The Bund", "上海"),
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
        "Bank of China",
        "中国银行伦敦分行",  # 中国 counts only when nothing foreign is named
        "Hunan Restaurant, New York",  # in Latin script the place named last wins
        "West Lake, Hanoi",  # a landmark name loses to a foreign place
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


@pytest.mark.parametrize(
    "text", ["上海中环路", "深圳铜锣湾广场", "香港路, 青岛", "Hong Kong Road, Qingdao"]
)
def test_mainland_namesakes_of_hong_kong_places_stay_with_amap(text: str) -> None:
    assert detect_region([text]).region == "cn"


@pytest.mark.parametrize(
    "text",
    ["Chungking Mansions, Hong Kong", "重慶大廈", "北京道, 尖沙咀", "Nanking Street, Taipei"],
)
def test_a_hong_kong_or_taiwan_name_overrides_a_mainland_alias_in_the_same_text(
    text: str,
) -> None:
    choice = detect_region([text])
    assert choice.region == "intl" and choice.city is None


@pytest.mark.parametrize(
    "text",
    ["東京タワー", "东京塔", "纽约时代广场", "首尔", "北海道札幌", "北海道", "札幌", "京都"],
)
def test_foreign_places_written_in_chinese_or_japanese_go_to_google(text: str) -> None:
    assert detect_region([text]).region == "intl"


@pytest.mark.parametrize("text", ["上海日本领事馆", "日本料理, 上海", "济南银座商城"])
def test_a_chinese_mainland_city_wins_over_a_foreign_name(text: str) -> None:
    assert detect_region([text]).region == "cn"


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("Nanjing Road, Shanghai", "上海"),  # a street named after Nanjing, in Shanghai
        ("Nanjing West Road", None),  # still the mainland, but no city to scope
        ("南京西路", None),
        ("上海市南京东路", "上海"),
        ("北京东路, 南京", "南京"),
        ("Beijing Road, Guangzhou", "广州"),
        ("西单北大街", "北京"),  # a street of a district is in that district's city
        ("上海中山公园", "上海"),
        ("中山公园", None),
        ("中山市", "中山"),
        ("北海公园", None),  # Beihai Park is in Beijing, not in Beihai
        ("Xidan, Beijing", "北京"),
        ("SHANGHAI Pudong airport", "上海"),
    ],
)
def test_the_city_of_each_text(text: str, city: str | None) -> None:
    assert detect_region([text]).region == "cn"
    assert city_of(text) == city


def test_foreign_and_hong_kong_texts_scope_no_amap_city() -> None:
    assert city_of("北海道札幌") is None
    assert city_of("Chungking Mansions, Hong Kong") is None
    assert city_of(None) is None and city_of("  ") is None


def test_forced_region_wins_both_ways() -> None:
    assert detect_region(["西单"], forced="intl").region == "intl"
    assert detect_region(["Times Square"], forced="cn").region == "cn"
    assert detect_region(["台北101"], forced="cn").region == "cn"
    assert "requested" in detect_region(["x"], forced="cn").reason


def test_coordinates_decide_when_the_text_says_nothing() -> None:
    assert detect_region(["39.9087,116.3975"]).region == "cn"  # Tiananmen
    assert detect_region(["87.6,43.8"]).region == "cn"  # Ürümqi in Amap's lng,lat order
    assert detect_region(["75.99,39.47"]).region == "cn"  # Kashgar, likewise
    assert detect_region(["22.2988,114.1722"]).region == "intl"  # Tsim Sha Tsui
    assert detect_region(["25.0340,121.5645"]).region == "intl"  # Taipei
    assert detect_region(["40.7580,-73.9855"]).region == "intl"


def test_a_chinese_query_counts_only_when_the_places_say_nothing() -> None:
    assert detect_region(["Rue Cler"], query="咖啡").region == "cn"  # unknown: region= fixes it
    assert detect_region(["Paris"], query="咖啡").region == "intl"
    assert detect_region(["Eiffel Tower"], query="Sichuan restaurant").region == "intl"
    assert detect_region(["巴黎"], query="咖啡").region == "intl"
    assert detect_region(["Rue Cler"], query="东京拉面").region == "intl"


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


@pytest.mark.parametrize(
    ("text", "latlng", "amap"),
    [
        ("87.6,43.8", (87.6, 43.8), (43.8, 87.6)),  # Ürümqi: lng,lat for Amap only
        ("75.99,39.47", (75.99, 39.47), (39.47, 75.99)),  # Kashgar
        ("43.8,87.6", (43.8, 87.6), (43.8, 87.6)),  # already lat,lng in China
        ("39.9,116.4", (39.9, 116.4), (39.9, 116.4)),
        ("116.4,39.9", (39.9, 116.4), (39.9, 116.4)),  # first > 90: lng,lat for both
        ("45.0,30.0", (45.0, 30.0), (45.0, 30.0)),  # neither reading in China: lat,lng
        ("-33.8568,151.2153", (-33.8568, 151.2153), (-33.8568, 151.2153)),
    ],
)
def test_both_readings_plausible_prefer_china_for_amap(
    text: str, latlng: tuple[float, float], amap: tuple[float, float]
) -> None:
    as_latlng, as_amap = parse_coordinates(text), parse_coordinates(text, "amap")
    assert as_latlng is not None and as_amap is not None
    assert (as_latlng.lat, as_latlng.lng) == latlng
    assert (as_amap.lat, as_amap.lng) == amap
