"""locate: provider WiFi/cell positioning first, then three IP services in turn."""

from __future__ import annotations

from codev_ls.tools.location.cell import CellTower, parse_cell, parse_keyvalue
from codev_ls.tools.location.wifi import parse_netsh, parse_nmcli, percent_to_dbm
from tests.unit.tools.location.conftest import MMCLI_GENERIC, MMCLI_LOCATION, NMCLI_OUTPUT


async def test_the_first_ip_service_answers(run, ipgeo) -> None:
    out = await run(action="locate")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith("Location from IP geolocation by ip-api.com:")
    assert "Mountain View, California, United States" in text
    assert "37.419200,-122.057400 [WGS-84]" in text
    assert "city level" in text
    assert len(ipgeo.ip_api.requests) == 1 and not ipgeo.ipinfo.requests
    assert (
        "WiFi and cell positioning skipped: they need AMAP_API_KEY or GOOGLE_MAPS_API_KEY" in text
    )


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


# ------------------------------------------------------------------ cell positioning


async def test_cell_positioning_with_google_when_no_wifi(run, google, ipgeo, fake_mmcli) -> None:
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert out.text().startswith("Location from cell positioning by Google, accuracy about ±1.2 km")
    assert "39.985500,116.475400 [WGS-84]" in out.text()
    (call,) = google.calls("/geolocation/v1/geolocate")
    assert "wifiAccessPoints" not in call.body and call.body["considerIp"] is False
    assert call.body["radioType"] == "wcdma"
    assert call.body["cellTowers"] == [
        {
            "cellId": 0x0458884D,
            "locationAreaCode": 0x1123,
            "mobileCountryCode": 460,
            "mobileNetworkCode": 0,
            "signalStrength": percent_to_dbm(60),
        }
    ]
    assert not ipgeo.ip_api.requests
    assert "WiFi positioning skipped" in out.text()


async def test_cell_positioning_with_amap(run, amap, ipgeo, fake_mmcli) -> None:
    out = await run(action="locate", region="cn")
    assert out.status == "success", out.text()
    assert out.text().startswith("Location from cell positioning by Amap (高德)")
    assert "39.988000,116.480000 [GCJ-02]" in out.text()
    (call,) = amap.calls("/position")
    assert call.params["accesstype"] == "0" and call.params["cdma"] == "0"
    assert call.params["network"] == "WCDMA"
    assert call.params["bts"] == f"460,0,4387,72910925,{percent_to_dbm(60)}"
    assert "imei" not in call.params and "macs" not in call.params


async def test_wifi_and_cell_go_together_to_google(
    run, google, ipgeo, fake_nmcli, fake_mmcli
) -> None:
    out = await run(action="locate")
    assert out.status == "success", out.text()
    (call,) = google.calls("/geolocation/v1/geolocate")
    assert len(call.body["wifiAccessPoints"]) == 3 and len(call.body["cellTowers"]) == 1
    assert out.text().startswith("Location from WiFi positioning by Google")


async def test_no_modem_means_ip_geolocation(run, google, ipgeo, fake_mmcli) -> None:
    (fake_mmcli / "exit").write_text("")
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "IP geolocation by ip-api.com" in out.text()
    assert "no cell positioning: ModemManager found no modem" in out.text()
    assert not google.calls("/geolocation/v1/geolocate")


async def test_a_modem_with_its_location_source_off(run, google, ipgeo, fake_mmcli) -> None:
    (fake_mmcli / "location.txt").write_text(
        "modem.location.3gpp.mcc : --\nmodem.location.3gpp.mnc : --\n"
        "modem.location.3gpp.lac : --\nmodem.location.3gpp.cid : --\n"
    )
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "--location-enable-3gpp" in out.text()
    assert not google.calls("/geolocation/v1/geolocate")


async def test_without_mmcli_cell_positioning_is_said_to_need_a_modem(
    run, google, ipgeo, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("CODEV_LOCATION_CELL", "1")
    monkeypatch.setenv("PATH", str(tmp_path))
    out = await run(action="locate")
    assert out.status == "success", out.text()
    assert "needs a mobile broadband modem and ModemManager (mmcli not found)" in out.text()


async def test_amap_gets_at_most_thirty_networks_the_strongest(
    run, amap, ipgeo, fake_nmcli
) -> None:
    many = [f"10\\:20\\:30\\:40\\:50\\:{i:02X}:{20 + i % 30}:Net{i}" for i in range(40)]
    fake_nmcli.write_text(NMCLI_OUTPUT + "\n".join(many) + "\n")
    out = await run(action="locate", region="cn")
    assert out.status == "success", out.text()
    (call,) = amap.calls("/position")
    entries = call.params["macs"].split("|")
    assert len(entries) == 30
    signals = [int(e.split(",")[1]) for e in entries]
    assert signals == sorted(signals, reverse=True)
    assert entries[0].startswith("aa:bb:cc:dd:ee:01")


def test_parse_mmcli_keyvalue() -> None:
    location = parse_keyvalue(MMCLI_LOCATION)
    assert "modem.location.3gpp.tac" not in location  # "--" means unknown
    tower = parse_cell(location, parse_keyvalue(MMCLI_GENERIC))
    assert tower == CellTower(460, 0, 0x1123, 0x0458884D, percent_to_dbm(60), "umts")
    lte = parse_cell(
        {"modem.location.3gpp.mcc": "460", "modem.location.3gpp.mnc": "11",
         "modem.location.3gpp.tac": "00A3F1", "modem.location.3gpp.cid": "0B2C3D4E"},
        {"modem.generic.access-technologies.value[1]": "lte"},
    )  # fmt: skip
    assert lte == CellTower(460, 11, 0xA3F1, 0x0B2C3D4E, None, "lte")
    assert parse_cell({}, {}) is None
