"""GCJ-02 ↔ WGS-84 against published reference values (googollee/eviltransform's tests)."""

from __future__ import annotations

import pytest

from codev_ls.tools.location.datum import (
    GCJ02,
    WGS84,
    LatLng,
    distance_m,
    gcj02_to_wgs84,
    out_of_china,
    wgs84_to_gcj02,
)

# (WGS-84 lat, lng, GCJ-02 lat, lng): Shanghai, Shenzhen, Beijing.
REFERENCE = [
    (31.1774276, 121.5272106, 31.17530398364597, 121.531541859215),
    (22.543847, 113.912316, 22.540796131694766, 113.9171764808363),
    (39.911954, 116.377817, 39.91334545536069, 116.38404722455657),
]


@pytest.mark.parametrize(("wlat", "wlng", "glat", "glng"), REFERENCE)
def test_wgs84_to_gcj02_matches_the_reference(wlat, wlng, glat, glng) -> None:
    lat, lng = wgs84_to_gcj02(wlat, wlng)
    assert lat == pytest.approx(glat, abs=1e-7)
    assert lng == pytest.approx(glng, abs=1e-7)


@pytest.mark.parametrize(("wlat", "wlng", "glat", "glng"), REFERENCE)
def test_gcj02_to_wgs84_comes_back_within_centimetres(wlat, wlng, glat, glng) -> None:
    lat, lng = gcj02_to_wgs84(glat, glng)
    assert distance_m(LatLng(lat, lng), LatLng(wlat, wlng)) < 0.05


def test_the_shift_is_hundreds_of_metres_in_china() -> None:
    wgs = LatLng(39.911954, 116.377817, WGS84)
    gcj = wgs.to(GCJ02)
    assert gcj.datum == GCJ02
    raw = distance_m(LatLng(gcj.lat, gcj.lng, WGS84), wgs)
    assert 100 < raw < 800
    # Reconciled by distance_m itself: the same place.
    assert distance_m(gcj, wgs) < 0.05


def test_outside_china_nothing_moves() -> None:
    paris = (48.8583701, 2.2944813)
    assert out_of_china(*paris)
    assert wgs84_to_gcj02(*paris) == paris
    assert gcj02_to_wgs84(*paris) == paris
    assert LatLng(*paris).to(GCJ02).lat == paris[0]


def test_text_forms() -> None:
    p = LatLng(39.9, 116.4, GCJ02)
    assert p.text() == "39.900000,116.400000 [GCJ-02]"
    assert p.lnglat() == "116.400000,39.900000"
    assert p.latlng() == "39.900000,116.400000"
