"""Results written for the model: short lines, units, the datum of every point."""

from __future__ import annotations

from collections.abc import Iterable

from codev_ls.tools.location.common import GeocodeResult, Leg, Place, Position, Route, SearchResult
from codev_ls.tools.location.datum import GCJ02, WGS84, LatLng, out_of_china

MAX_STEPS = 15
TRIP_LEG_STEPS = 5
MAX_GEOCODES = 5


def distance(m: float | None) -> str:
    if m is None:
        return ""
    return f"{m:.0f} m" if m < 1000 else f"{m / 1000:.1f} km"


def duration(s: float | None) -> str:
    if s is None:
        return ""
    minutes = max(1, round(s / 60))
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min" if minutes % 60 else f"{minutes // 60} h"


def point(p: LatLng | None) -> str:
    return p.text() if p is not None else "(no coordinates)"


def datum_line(datums: str | Iterable[str]) -> str:
    """One line on the datums of the points shown (each point also carries its tag)."""
    found = {datums} if isinstance(datums, str) else set(datums)
    if found == {GCJ02}:
        return (
            "Coordinates are lat,lng in GCJ-02, China's legal datum (Amap's, and Google Maps' "
            "inside mainland China); pass them back with the [GCJ-02] tag and they are "
            "converted when another service needs WGS-84."
        )
    if GCJ02 in found:
        return (
            "Coordinates are lat,lng, each tagged with its datum: GCJ-02 (China's legal datum, "
            "used inside mainland China) or WGS-84 (GPS); pass them back with the tag."
        )
    return "Coordinates are lat,lng in WGS-84 (GPS, Google Maps)."


def _datums(points: Iterable[LatLng | None], default: str) -> set[str]:
    return {p.datum for p in points if p is not None} or {default}


def place_line(i: int, place: Place) -> str:
    parts = [f"{i}. {place.name}"]
    if place.address:
        parts.append(place.address)
    parts.append(point(place.point))
    if place.distance_m is not None:
        parts.append(distance(place.distance_m))
    if place.rating is not None:
        total = f" ({place.ratings_total:,})" if place.ratings_total else ""
        parts.append(f"★{place.rating:g}{total}")
    if place.category:
        parts.append(place.category)
    if place.open_now is not None:
        parts.append("open now" if place.open_now else "closed now")
    return " — ".join(parts)


def search(provider: str, what: str, where: str, result: SearchResult, datum: str) -> str:
    pages = f"{result.pages} page{'s' if result.pages != 1 else ''} fetched"
    total = (
        f", the provider reports {result.reported_total} matches"
        if result.reported_total is not None
        else ""
    )
    note = f"; {result.note}" if result.note else ""
    if not result.places:
        return f"{provider}: no places found for {what} {where} ({pages})."
    lines = [
        f"{provider}: {len(result.places)} places for {what} {where} ({pages}{total}{note}).",
        datum_line(_datums((p.point for p in result.places), datum)),
    ]
    lines += [place_line(i, p) for i, p in enumerate(result.places, 1)]
    return "\n".join(lines)


def geocode(provider: str, query: str, results: list[GeocodeResult], datum: str) -> str:
    lines = [f"{provider}: {query!r} →", datum_line(_datums((r.point for r in results), datum))]
    for i, r in enumerate(results[:MAX_GEOCODES], 1):
        line = f"{i}. {r.address} — {point(r.point)}"
        if r.point.datum == GCJ02 and not out_of_china(r.point.lat, r.point.lng):
            line += f" (= {r.point.to(WGS84).text()})"
        if r.level:
            line += f" — {r.level}"
        lines.append(line)
    if len(results) > MAX_GEOCODES:
        lines.append(f"({len(results) - MAX_GEOCODES} more matches left out)")
    return "\n".join(lines)


def main_steps(route: Route, limit: int) -> tuple[list[int], int]:
    """Indexes of the steps to show (the longest ``limit``, in route order) and how many are left out."""
    steps = route.steps
    if len(steps) <= limit:
        return list(range(len(steps))), 0
    ranked = sorted(range(len(steps)), key=lambda i: -(steps[i].distance_m or 0))[:limit]
    return sorted(ranked), len(steps) - limit


def route_lines(route: Route, limit: int, indent: str = "") -> list[str]:
    shown, left = main_steps(route, limit)
    lines = []
    for n, i in enumerate(shown, 1):
        s = route.steps[i]
        extra = ", ".join(x for x in (distance(s.distance_m), duration(s.duration_s)) if x)
        lines.append(f"{indent}{n}. {s.instruction}" + (f" ({extra})" if extra else ""))
    if left:
        lines.append(f"{indent}({left} shorter steps left out)")
    return lines


def directions(provider: str, mode: str, start: str, end: str, route: Route) -> str:
    facts = [f"Distance {distance(route.distance_m)}", f"duration {duration(route.duration_s)}"]
    facts += route.notes
    lines = [f"{provider} {mode} route: {start} → {end}", " · ".join(facts)]
    if route.summary:
        lines.append(f"Via {route.summary}")
    if route.steps:
        lines.append("Main steps:")
        lines += route_lines(route, MAX_STEPS)
    return "\n".join(lines)


def trip(provider: str, mode: str, stops: list[str], legs: list[Leg], how: str) -> str:
    total_m = sum(leg.route.distance_m for leg in legs)
    total_s = sum(leg.route.duration_s for leg in legs)
    lines = [f"{provider} {mode} trip, {len(legs)} legs ({how}): " + " → ".join(stops)]
    for i, leg in enumerate(legs, 1):
        facts = [distance(leg.route.distance_m), duration(leg.route.duration_s), *leg.route.notes]
        lines.append(f"Leg {i}: {leg.start} → {leg.end} — " + ", ".join(f for f in facts if f))
        lines += route_lines(leg.route, TRIP_LEG_STEPS, indent="   ")
    lines.append(f"Total: {distance(total_m)}, {duration(total_s)} ({mode}, without stops)")
    return "\n".join(lines)


def position(pos: Position, tried: list[str]) -> str:
    accuracy = f", accuracy about ±{distance(pos.accuracy_m)}" if pos.accuracy_m else ""
    lines = [f"Location from {pos.source}{accuracy}:"]
    if pos.label:
        lines.append(pos.label)
    if pos.point is not None:
        line = point(pos.point)
        if pos.point.datum == GCJ02 and not out_of_china(pos.point.lat, pos.point.lng):
            line += f" (= {pos.point.to(WGS84).text()})"
        elif pos.point.datum == WGS84 and not out_of_china(pos.point.lat, pos.point.lng):
            line += f" (= {pos.point.to(GCJ02).text()} for Amap)"
        lines.append(line)
    if pos.detail:
        lines.append(pos.detail)
    if pos.source.startswith("IP"):
        lines.append(
            "IP geolocation is approximate (city level; VPNs and mobile networks can be far off)."
        )
    if tried:
        lines.append("Tried first: " + "; ".join(tried))
    return "\n".join(lines)
