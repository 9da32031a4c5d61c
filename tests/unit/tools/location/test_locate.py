"""locate: provider WiFi positioning first, then three IP services in turn."""

from __future__ import annotations

from codev_ls.tools.location.wifi import parse_netsh, parse_nmcli, percent_to_dbm
from tests.unit.tools.location.conftest import NMCLI_OUTPUT


async def test_the_first_ip_service_answers(run, ipgeo) -> None:
    out = await run(action="locate")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith("Location from IP geolocation by ip-api.com:")
    assert "Mountain View, California, United States" in text
    assert "37.419200,-122.057400 [WGS-84]" in text
    assert "city level" in text
    assert len(ipgeo.ip_api.requests) == 1 and not ipgeo.ipinfo.requests
    assert "needs AMAP_API_KEY or GOOGLE_MAPS_API_KEY" in text


async def test_the_first_two_services_failing_fall_through_to_the_third(run, ipgeo) -> None:
    ipgeo.ip_api.mode = "ratelimit"
    ipgeo.ipinfo.mode = "fail"
    out = await run(action="locate")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith("Location from IP geolocation by ipapi.co:")
    assert "Paris, Île-de-France, France" in text and "48.856600,2.352200 [WGS-84]" in text
    assert "ip-api.com: HTTP 429" in text
    assert "ipinfo.io: the address is private (bogon)" in text
    asked = [m for m in run.progress() if m.startswith("IP geolocation")]
    assert asked == [
        "IP geolocation: asking ip-api.com",
        "IP geolocation: asking ipinfo.io",
        "IP geolocation: asking ipapi.co",
    ]
    assert out.meta == {"provider": "ip", "region": ""}


async def test_down_and_rate_limited_services(run, ipgeo) -> None:
    ipgeo.ip_api.mode = "down"
    ipgeo.ipinfo.mode = "ratelimit"
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "ip-api.com: HTTP 502" in out.text()
    assert "ipinfo.io: rate limited (HTTP 429)" in out.text()


async def test_ipinfo_answers_in_china_with_the_gcj_equivalent(run, ipgeo) -> None:
    ipgeo.ip_api.mode = "fail"
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "Hangzhou, Zhejiang, CN" in out.text()
    assert "30.293600,120.161400 [WGS-84] (= " in out.text() and "[GCJ-02] for Amap)" in out.text()
    assert "ip-api.com: reserved range" in out.text()


async def test_a_slow_service_is_cut_off(run, ipgeo, monkeypatch) -> None:
    monkeypatch.setenv("CODEV_LOCATION_TIMEOUT", "0.3")
    ipgeo.ip_api.mode = "slow"
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "ip-api.com did not answer within 0.3 s" in out.text()
    assert "ipinfo.io" in out.text().splitlines()[0]


async def test_all_three_failing_is_an_error_listing_each(run, ipgeo) -> None:
    ipgeo.ip_api.mode = "fail"
    ipgeo.ipinfo.mode = "down"
    ipgeo.ipapi_co.mode = "ratelimit"
    out = await run(action="locate")
    assert out.status == "error"
    text = out.text()
    assert "Could not determine this computer's location" in text
    assert "ip-api.com: reserved range" in text and "ipinfo.io: HTTP 502" in text
    assert "ipapi.co: RateLimited" in text


async def test_language_reaches_ip_api(run, ipgeo) -> None:
    out = await run(action="locate", language="zh-CN")
    assert "山景城" in out.text()
    assert ipgeo.ip_api.requests[0].params == {"lang": "zh-CN"}


async def test_google_wifi_positioning_comes_first(run, google, ipgeo, fake_nmcli) -> None:
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert out.text().startswith("Location from WiFi positioning by Google, accuracy about ±24 m:")
    assert "37.422094,-122.083922 [WGS-84]" in out.text()
    (call,) = google.calls("/geolocation/v1/geolocate")
    assert call.body["considerIp"] is False
    assert [ap["macAddress"] for ap in call.body["wifiAccessPoints"]] == [
        "aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02", "aa:bb:cc:dd:ee:03",
    ]  # fmt: skip
    assert call.body["wifiAccessPoints"][0]["signalStrength"] == percent_to_dbm(82)
    assert not ipgeo.ip_api.requests
    assert out.meta["provider"] == "google"


async def test_amap_wifi_positioning_for_region_cn(run, amap, google, ipgeo, fake_nmcli) -> None:
    fake_nmcli.write_text(
        "AA\\:BB\\:CC\\:DD\\:EE\\:01:82:Office WiFi\nAA\\:BB\\:CC\\:DD\\:EE\\:02:64:Cafe,Bar|2\n"
    )
    out = await run(action="locate", region="cn")
    assert out.status == "success", out.text()
    assert out.text().startswith("Location from WiFi positioning by Amap (高德)")
    assert "39.990496,116.482086 [GCJ-02] (= " in out.text()
    assert "北京市 朝阳区" in out.text()
    (call,) = amap.calls("/position")
    assert call.params["accesstype"] == "1"
    assert call.params["macs"].startswith("aa:bb:cc:dd:ee:01,-59,Office WiFi|")
    assert call.params["macs"].endswith(
        "|aa:bb:cc:dd:ee:02,-68,Cafe Bar 2"
    )  # separators neutralised
    assert not google.requests


async def test_chinese_users_get_amap_first(
    run, amap, google, ipgeo, fake_nmcli, monkeypatch
) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    out = await run(action="locate")
    assert "WiFi positioning by Amap" in out.text()
    assert not google.requests


async def test_unknown_networks_fall_back_to_ip(run, google, ipgeo, fake_nmcli) -> None:
    fake_nmcli.write_text(
        "11\\:22\\:33\\:44\\:55\\:66:70:Cafe\n11\\:22\\:33\\:44\\:55\\:67:50:Shop\n"
    )
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "IP geolocation by ip-api.com" in out.text()
    assert (
        "Google Geolocation: Google could not place these WiFi networks. (notFound)" in out.text()
    )


async def test_one_visible_network_is_not_enough(run, google, ipgeo, fake_nmcli) -> None:
    fake_nmcli.write_text("AA\\:BB\\:CC\\:DD\\:EE\\:01:82:Office WiFi\n")
    out = await run(action="locate")
    assert "only 1 WiFi network(s) visible, 2 are needed" in out.text()
    assert not google.calls("/geolocation/v1/geolocate")


async def test_no_scanner_means_ip_geolocation(run, google, ipgeo, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CODEV_LOCATION_WIFI", "1")
    monkeypatch.setenv("PATH", str(tmp_path))  # no nmcli here
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "no WiFi scan available (nmcli not found)" in out.text()


def test_parse_nmcli_terse_output() -> None:
    aps = parse_nmcli(NMCLI_OUTPUT + "garbage line\n")
    assert aps == [
        ("aa:bb:cc:dd:ee:01", -59, "Office WiFi"),
        ("aa:bb:cc:dd:ee:02", -68, "Guest:5G"),
        ("aa:bb:cc:dd:ee:03", -80, ""),
    ]


def test_parse_netsh_output() -> None:
    sample = """
Interface name : Wi-Fi
There are 2 networks currently visible.

SSID 1 : HomeNet
    Network type            : Infrastructure
    Authentication          : WPA2-Personal
    Encryption              : CCMP
    BSSID 1                 : a0:b1:c2:d3:e4:f5
         Signal             : 90%
         Radio type         : 802.11ac
    BSSID 2                 : a0:b1:c2:d3:e4:f6
         Signal             : 40%

SSID 2 : Cafe
    BSSID 1                 : 10:20:30:40:50:60
         Signal             : 55%
"""
    assert parse_netsh(sample) == [
        ("a0:b1:c2:d3:e4:f5", -55, "HomeNet"),
        ("a0:b1:c2:d3:e4:f6", -80, "HomeNet"),
        ("10:20:30:40:50:60", -73, "Cafe"),
    ]
