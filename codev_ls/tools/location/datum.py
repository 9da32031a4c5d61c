"""GCJ-02 ↔ WGS-84: the two datums the map providers speak.

Mainland Chinese law requires published maps to use GCJ-02, an obfuscated
datum that shifts WGS-84 (GPS) coordinates by a few hundred metres in a
deterministic, non-linear way. Amap returns and expects GCJ-02; Google Maps
and the IP geolocation services use WGS-84. A point taken from one and given
to the other lands ~100–700 m off unless it is converted.

The forward transform (WGS-84 → GCJ-02) is the well-known public formula on
the Krasovsky 1940 ellipsoid; the inverse is not closed-form, so it is solved
by fixed-point iteration to well under a metre. Outside the rough bounding box
of China the two datums coincide and nothing is shifted (the same box the
common open-source converters and Amap's own converter use; it includes Hong
Kong, Macau and Taiwan).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Datum = Literal["WGS-84", "GCJ-02"]

WGS84: Datum = "WGS-84"
GCJ02: Datum = "GCJ-02"

# Krasovsky 1940 semi-major axis and first eccentricity squared.
_A = 6378245.0
_EE = 0.00669342162296594323


@dataclass(frozen=True, slots=True)
class LatLng:
    """A point with the datum its numbers are in."""

    lat: float
    lng: float
    datum: Datum = WGS84

    def to(self, datum: Datum) -> LatLng:
        """The same place expressed in ``datum``."""
        if datum == self.datum:
            return self
        if datum == GCJ02:
            lat, lng = wgs84_to_gcj02(self.lat, self.lng)
        else:
            lat, lng = gcj02_to_wgs84(self.lat, self.lng)
        return LatLng(lat, lng, datum)

    def text(self) -> str:
        """``lat,lng [DATUM]`` with 6 decimals (≈ 0.1 m): how results show points."""
        return f"{self.lat:.6f},{self.lng:.6f} [{self.datum}]"

    def lnglat(self) -> str:
        """``lng,lat``: the order Amap's APIs take."""
        return f"{self.lng:.6f},{self.lat:.6f}"

    def latlng(self) -> str:
        """``lat,lng``: the order Google's APIs take."""
        return f"{self.lat:.6f},{self.lng:.6f}"


def out_of_china(lat: float, lng: float) -> bool:
    """True outside the bounding box where GCJ-02 differs from WGS-84."""
    return not (72.004 <= lng <= 137.8347 and 0.8293 <= lat <= 55.8271)


def _transform_lat(x: float, y: float) -> float:
    ret = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(y * math.pi) + 40.0 * math.sin(y / 3.0 * math.pi)) * 2.0 / 3.0
    ret += (160.0 * math.sin(y / 12.0 * math.pi) + 320.0 * math.sin(y * math.pi / 30.0)) * 2.0 / 3.0
    return ret


def _transform_lng(x: float, y: float) -> float:
    ret = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(x * math.pi) + 40.0 * math.sin(x / 3.0 * math.pi)) * 2.0 / 3.0
    ret += (150.0 * math.sin(x / 12.0 * math.pi) + 300.0 * math.sin(x / 30.0 * math.pi)) * 2.0 / 3.0
    return ret


def _delta(lat: float, lng: float) -> tuple[float, float]:
    dlat = _transform_lat(lng - 105.0, lat - 35.0)
    dlng = _transform_lng(lng - 105.0, lat - 35.0)
    radlat = lat / 180.0 * math.pi
    magic = 1.0 - _EE * math.sin(radlat) ** 2
    sqrt_magic = math.sqrt(magic)
    dlat = (dlat * 180.0) / ((_A * (1.0 - _EE)) / (magic * sqrt_magic) * math.pi)
    dlng = (dlng * 180.0) / (_A / sqrt_magic * math.cos(radlat) * math.pi)
    return dlat, dlng


def wgs84_to_gcj02(lat: float, lng: float) -> tuple[float, float]:
    """WGS-84 → GCJ-02 (unchanged outside China)."""
    if out_of_china(lat, lng):
        return lat, lng
    dlat, dlng = _delta(lat, lng)
    return lat + dlat, lng + dlng


def gcj02_to_wgs84(lat: float, lng: float) -> tuple[float, float]:
    """GCJ-02 → WGS-84 by iteration, accurate to a few centimetres (unchanged outside China)."""
    if out_of_china(lat, lng):
        return lat, lng
    wlat, wlng = lat - _delta(lat, lng)[0], lng - _delta(lat, lng)[1]
    for _ in range(30):
        glat, glng = wgs84_to_gcj02(wlat, wlng)
        dlat, dlng = glat - lat, glng - lng
        wlat, wlng = wlat - dlat, wlng - dlng
        if abs(dlat) < 1e-10 and abs(dlng) < 1e-10:
            break
    return wlat, wlng


def distance_m(a: LatLng, b: LatLng) -> float:
    """Great-circle distance in metres (haversine on a 6 371 km sphere), datums reconciled."""
    b = b.to(a.datum)
    p1, p2 = math.radians(a.lat), math.radians(b.lat)
    dp = p2 - p1
    dl = math.radians(b.lng - a.lng)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6_371_000.0 * math.asin(min(1.0, math.sqrt(h)))
