"""Every action against the fake Google Maps, through Engine + ScriptedBridge + run_tool.

The default is Places API (New) and the Routes API; the tests marked with the ``legacy``
fixture run the same actions on the legacy Places and Directions APIs
(``GOOGLE_MAPS_API=legacy``).
"""

from __future__ import annotations

import pytest

from codev_ls.tools.location.datum import LatLng, distance_m, gcj02_to_wgs84, wgs84_to_gcj02
from codev_ls.tools.location.google import (
    MAX_RESULTS,
    NEARBY_FIELDS,
    ROUTE_FIELDS,
    TEXT_SEARCH_FIELDS,
)
from tests.fakes.google_maps import default_places
from tests.unit.tools.location.conftest import GOOGLE_KEY

TEXT = "/v1/places:searchText"
NEARBY = "/v1/places:searchNearby"
ROUTES = "/directions/v2:computeRoutes"


async def test_geocode_an_address(run, google) -> None:
    out = await run(action="geocode", location="Empire State Building", language="en")
    assert out.status == "success", out.text()
    assert out.text().startswith("Google Maps:")
    assert "20 W 34th St., New York, NY 10001, USA — 40.748441,-73.985664 [WGS-84]" in out.text()
    (call,) = google.calls("/maps/api/geocode/json")
    assert call.params == {"address": "Empire State Building", "language": "en", "key": GOOGLE_KEY}
    assert out.meta == {"provider": "google", "region": "intl"}


async def test_geocode_coordinates_reverse_geocodes(run, google) -> None:
    out = await run(action="geocode", location="40.7580,-73.9855")
    assert out.status == "success", out.text()
    assert google.calls("/maps/api/geocode/json")[0].params["latlng"] == "40.758000,-73.985500"
    assert "Manhattan, NY 10036, USA" in out.text()


async def test_nearby_search_follows_page_tokens_up_to_sixty(run, google, legacy) -> None:
    google.places = default_places(90)
    out = await run(action="search_places", location="Times Square", query="Coffee", radius=5000)
    assert out.status == "success", out.text()
    calls = google.calls("/maps/api/place/nearbysearch/json")
    first = calls[0].params
    assert first["location"] == "40.757975,-73.985543" and first["radius"] == "5000"
    assert first["keyword"] == "Coffee"
    with_token = [c for c in calls if "pagetoken" in c.params]
    # Two further pages; asked too early at first, so some tries answered INVALID_REQUEST.
    assert len({c.params["pagetoken"] for c in with_token}) == 2
    assert len(with_token) > 2
    assert f"{MAX_RESULTS} places for 'Coffee'" in out.text()
    assert "(3 pages fetched" in out.text()
    assert "★" in out.text() and "open now" in out.text() and "cafe" in out.text()
    assert "Google: page 3 fetched (60 places)" in run.progress()
    assert any("waiting for the next page" in m for m in run.progress())


async def test_fewer_results_than_a_page_mean_one_request(run, google, legacy) -> None:
    google.places = default_places(12)
    out = await run(action="search_places", location="Times Square", query="pizza", radius=800)
    assert out.status == "success", out.text()
    assert len(google.calls("/maps/api/place/nearbysearch/json")) == 1
    assert "(1 page fetched)" in out.text()


async def test_search_in_a_city_uses_text_search(run, google, legacy) -> None:
    out = await run(action="search_places", location="New York", query="coffee", type="cafe")
    assert out.status == "success", out.text()
    call = google.calls("/maps/api/place/textsearch/json")[0]
    assert call.params["query"] == "coffee in New York" and call.params["type"] == "cafe"
    assert "in New York, NY, USA" in out.text()
    assert "NY 10036, United States" in out.text()


async def test_directions_strip_html_and_give_the_totals(run, google, legacy) -> None:
    out = await run(action="get_directions", location="Times Square", destination="Central Park")
    assert out.status == "success", out.text()
    (call,) = google.calls("/maps/api/directions/json")
    assert call.params["origin"] == "Times Square" and call.params["mode"] == "driving"
    assert "waypoints" not in call.params
    text = out.text()
    assert text.startswith(
        "Google Maps driving route: Manhattan, NY 10036, USA → New York, NY, USA"
    )
    assert "Head north on 7th Ave toward W 44th St" in text
    assert "Turn left onto W 34th St — Destination will be on the right" in text
    assert "<b>" not in text and "<div" not in text
    assert "Distance " in text and "Via 7th Ave" in text


async def test_transit_directions_name_the_line(run, google, legacy) -> None:
    out = await run(
        action="get_directions", location="Times Square", destination="Empire State Building",
        mode="transit",
    )  # fmt: skip
    assert out.status == "success", out.text()
    call = google.calls("/maps/api/directions/json")[0]
    assert call.params["mode"] == "transit" and call.params["departure_time"] == "now"
    text = out.text()
    assert (
        "Take Subway 1 toward Brooklyn Bridge-City Hall from Times Sq-42 St to 34 St-Herald Sq, 3 stops"
        in text
    )
    assert "fare $2.90" in text


async def test_plan_trip_is_one_request_with_waypoints(run, google, legacy) -> None:
    out = await run(
        action="plan_trip",
        location="Times Square",
        waypoints=["Empire State Building", "Brooklyn Bridge"],
        destination="Central Park",
        mode="walking",
    )
    assert out.status == "success", out.text()
    (call,) = google.calls("/maps/api/directions/json")
    assert call.params["waypoints"] == "Empire State Building|Brooklyn Bridge"
    text = out.text()
    assert "3 legs (one Directions request with waypoints)" in text
    assert "Leg 2: 20 W 34th St., New York, NY 10001, USA → Brooklyn Bridge" in text
    assert "Total: " in text and "(walking, without stops)" in text


async def test_plan_trip_by_transit_asks_leg_by_leg(run, google, legacy) -> None:
    out = await run(
        action="plan_trip", location="Times Square",
        waypoints=["Empire State Building"], destination="Central Park", mode="transit",
    )  # fmt: skip
    assert out.status == "success", out.text()
    calls = google.calls("/maps/api/directions/json")
    assert len(calls) == 2 and not any("waypoints" in c.params for c in calls)
    assert "each leg was asked separately" in out.text()


async def test_amap_points_in_the_mainland_go_to_google_unconverted(run, google, legacy) -> None:
    """Google's mainland data is GCJ-02 too: an Amap point is sent as it is."""
    out = await run(
        action="get_directions",
        location="39.908722,116.397499 [GCJ-02]",
        destination="Beijing",
        region="intl",
    )
    assert out.status == "success", out.text()
    assert google.calls("/maps/api/directions/json")[0].params["origin"] == "39.908722,116.397499"
    assert "was converted" not in out.text()


async def test_gps_points_in_the_mainland_are_shifted_to_gcj02_for_google(run, google) -> None:
    out = await run(
        action="get_directions", location="39.9087,116.3975 [WGS-84]", destination="Beijing",
        region="intl",
    )  # fmt: skip
    assert out.status == "success", out.text()
    lat, lng = wgs84_to_gcj02(39.9087, 116.3975)
    (call,) = google.calls(ROUTES)
    sent = call.body["origin"]["location"]["latLng"]
    assert (sent["latitude"], sent["longitude"]) == (round(lat, 6), round(lng, 6))
    assert "39.908700,116.397500 [WGS-84] was converted to GCJ-02 for Google Maps" in out.text()


async def test_gcj02_points_outside_the_mainland_are_shifted_to_wgs84_for_google(
    run, google
) -> None:
    """Taipei: Google is WGS-84 there, so a GCJ-02-tagged point (from Amap) is converted."""
    out = await run(action="geocode", location="25.0339639,121.5644722 [GCJ-02]")
    assert out.status == "success", out.text()
    lat, lng = gcj02_to_wgs84(25.0339639, 121.5644722)
    assert google.calls("/maps/api/geocode/json")[0].params["latlng"] == f"{lat:.6f},{lng:.6f}"
    assert "converted to WGS-84 for Google Maps" in out.text()


async def test_google_points_in_the_mainland_are_labelled_gcj02(run, google) -> None:
    out = await run(action="geocode", location="Beijing")
    assert out.status == "success", out.text()
    assert "39.904211,116.407395 [GCJ-02]" in out.text()
    assert "[WGS-84]" in out.text()  # the GPS equivalent is given too
    # Amap's GCJ-02 Beijing point is within metres: the same datum.
    amap_point = LatLng(39.904179, 116.407387, "GCJ-02")
    assert distance_m(amap_point, LatLng(39.904211, 116.407395, "GCJ-02")) < 5


async def test_taiwan_goes_to_google_even_in_chinese(run, amap, google) -> None:
    out = await run(action="geocode", location="台北101")
    assert out.status == "success", out.text()
    assert google.calls("/maps/api/geocode/json") and not amap.requests
    assert "25.033964,121.564472 [WGS-84]" in out.text()  # WGS-84 outside the mainland


async def test_a_place_google_cannot_find_is_named_legacy(run, google, legacy) -> None:
    out = await run(
        action="plan_trip", location="Times Square", waypoints=["Nowhere Special 123"],
        destination="Central Park",
    )  # fmt: skip
    assert out.status == "error"
    assert "could not find 'Nowhere Special 123'" in out.text()


async def test_no_route_is_an_error_with_a_hint(run, google, legacy) -> None:
    google.fail["/maps/api/directions/json"] = ("ZERO_RESULTS", "")
    out = await run(action="get_directions", location="Times Square", destination="Eiffel Tower")
    assert out.status == "error"
    assert "found no driving route" in out.text()


async def test_uses_in_one_batch_run_side_by_side(run, amap, google) -> None:
    from codev_ls.engine.execution import ToolUse

    uses = [
        ToolUse("toolu_a", "Location", {"action": "search_places", "location": "西单", "query": "咖啡"}),
        ToolUse("toolu_b", "Location", {"action": "search_places", "location": "Times Square",
                                        "query": "coffee"}),
        ToolUse("toolu_c", "Location", {"action": "geocode", "location": "天安门"}),
    ]  # fmt: skip
    outcomes = await run.engine.run_batch(uses)
    assert [o.status for o in outcomes] == ["success"] * 3
    assert outcomes[0].text().startswith("Amap") and outcomes[1].text().startswith("Google")


# ------------------------------------------------------------------ Places API (New), Routes API


def _headers_ok(call, mask: str) -> None:
    assert call.method == "POST"
    assert call.headers["x-goog-api-key"] == GOOGLE_KEY
    assert call.headers["x-goog-fieldmask"] == mask
    assert "key" not in call.params and GOOGLE_KEY not in call.raw_query


async def test_new_text_search_around_a_spot_pages_to_sixty(run, google) -> None:
    google.places = default_places(90)
    out = await run(action="search_places", location="Times Square", query="Coffee", radius=5000)
    assert out.status == "success", out.text()
    calls = google.calls(TEXT)
    assert len(calls) == 3
    for call in calls:
        _headers_ok(call, TEXT_SEARCH_FIELDS)
    first = calls[0].body
    assert first["textQuery"] == "Coffee" and first["pageSize"] == 20
    rect = first["locationRestriction"]["rectangle"]
    assert rect["low"]["latitude"] < 40.757975 < rect["high"]["latitude"]
    assert rect["low"]["longitude"] < -73.985543 < rect["high"]["longitude"]
    # Paging: the same request plus the token of the page before.
    assert [c.body.get("pageToken") is None for c in calls] == [True, False, False]
    assert {k: v for k, v in calls[1].body.items() if k != "pageToken"} == first
    assert not google.calls("/maps/api/place/nearbysearch/json")
    assert f"{MAX_RESULTS} places for 'Coffee'" in out.text()
    assert "(3 pages fetched" in out.text()
    assert "★" in out.text() and "open now" in out.text() and "cafe" in out.text()
    assert not any("waiting" in m for m in run.progress())  # new tokens need no wait


async def test_new_text_search_leaves_out_the_corners_beyond_the_radius(run, google) -> None:
    out = await run(action="search_places", location="Times Square", query="coffee", radius=300)
    assert out.status == "success", out.text()
    lines = [ln for ln in out.text().splitlines() if ln[:1].isdigit()]
    assert lines and all(
        float(ln.split(" m — ")[0].rsplit(" — ", 1)[1]) <= 300 for ln in lines if " m — " in ln
    )
    assert "outside the radius left out" in out.text()


async def test_new_nearby_search_for_a_type(run, google) -> None:
    out = await run(action="search_places", location="Times Square", type="restaurant", radius=2000)
    assert out.status == "success", out.text()
    (call,) = google.calls(NEARBY)
    _headers_ok(call, NEARBY_FIELDS)
    assert call.body["includedTypes"] == ["restaurant"]
    assert call.body["maxResultCount"] == 20 and call.body["rankPreference"] == "DISTANCE"
    circle = call.body["locationRestriction"]["circle"]
    assert circle["radius"] == 2000 and circle["center"]["latitude"] == 40.7579747
    assert "Joe's Pizza" in out.text() and "Blue Bottle" not in out.text()
    assert "(1 page fetched" in out.text()


async def test_new_text_search_in_a_city(run, google) -> None:
    out = await run(action="search_places", location="New York", query="coffee", type="cafe")
    assert out.status == "success", out.text()
    call = google.calls(TEXT)[0]
    assert call.body["textQuery"] == "coffee in New York" and call.body["includedType"] == "cafe"
    assert "locationRestriction" not in call.body
    assert "in New York, NY, USA" in out.text() and "NY 10036, USA" in out.text()


async def test_routes_api_directions(run, google) -> None:
    out = await run(
        action="get_directions", location="Times Square", destination="Central Park",
        language="en",
    )  # fmt: skip
    assert out.status == "success", out.text()
    (call,) = google.calls(ROUTES)
    _headers_ok(call, ROUTE_FIELDS)
    assert call.body["origin"] == {"address": "Times Square"}
    assert call.body["destination"] == {"address": "Central Park"}
    assert call.body["travelMode"] == "DRIVE" and call.body["languageCode"] == "en"
    assert "intermediates" not in call.body
    assert not google.calls("/maps/api/directions/json")
    text = out.text()
    assert text.startswith("Google Maps driving route: Times Square → Central Park")
    assert "Head north on 7th Ave toward W 44th St" in text
    assert "Turn left onto W 34th St — Destination will be on the right" in text
    assert "Distance " in text and "Via 7th Ave" in text


async def test_routes_api_transit(run, google) -> None:
    out = await run(
        action="get_directions", location="Times Square", destination="Empire State Building",
        mode="transit",
    )  # fmt: skip
    assert out.status == "success", out.text()
    assert google.calls(ROUTES)[0].body["travelMode"] == "TRANSIT"
    assert (
        "Take Subway 1 toward Brooklyn Bridge-City Hall from Times Sq-42 St to 34 St-Herald Sq, "
        "3 stops" in out.text()
    )
    assert "fare $2.90" in out.text()


async def test_routes_api_trip_uses_intermediates(run, google) -> None:
    out = await run(
        action="plan_trip", location="Times Square",
        waypoints=["Empire State Building", "Brooklyn Bridge"], destination="Central Park",
        mode="walking",
    )  # fmt: skip
    assert out.status == "success", out.text()
    (call,) = google.calls(ROUTES)
    assert call.body["travelMode"] == "WALK"
    assert call.body["intermediates"] == [
        {"address": "Empire State Building"},
        {"address": "Brooklyn Bridge"},
    ]
    assert "3 legs (one Directions request with waypoints)" in out.text()
    assert "Leg 2: Empire State Building → Brooklyn Bridge" in out.text()


async def test_routes_api_transit_trip_asks_leg_by_leg(run, google) -> None:
    out = await run(
        action="plan_trip", location="Times Square", waypoints=["Empire State Building"],
        destination="Central Park", mode="transit",
    )  # fmt: skip
    assert out.status == "success", out.text()
    calls = google.calls(ROUTES)
    assert len(calls) == 2 and not any("intermediates" in c.body for c in calls)


async def test_routes_api_names_the_place_it_cannot_find(run, google) -> None:
    out = await run(
        action="plan_trip", location="Times Square", waypoints=["Nowhere Special 123"],
        destination="Central Park",
    )  # fmt: skip
    assert out.status == "error"
    assert "could not find 'Nowhere Special 123'" in out.text()


async def test_a_project_without_the_new_apis_falls_back_to_legacy_with_a_note(run, google) -> None:
    google.new_enabled = False
    out = await run(action="get_directions", location="Times Square", destination="Central Park")
    assert out.status == "success", out.text()
    assert google.calls(ROUTES) and google.calls("/maps/api/directions/json")
    assert "Note: the Routes API is not enabled for this key (SERVICE_DISABLED)" in out.text()
    out = await run(action="search_places", location="Times Square", query="coffee")
    assert out.status == "success", out.text()
    assert google.calls("/maps/api/place/nearbysearch/json")
    assert "Note: the Places API (New) is not enabled for this key" in out.text()


async def test_neither_api_enabled_says_what_to_enable(run, google) -> None:
    google.new_enabled = False
    google.legacy_enabled = False
    out = await run(action="search_places", location="Times Square", query="coffee")
    assert out.status == "error"
    text = out.text()
    assert (
        "the Places API (New) is not enabled for the key's Cloud project (SERVICE_DISABLED)" in text
    )
    assert "You're calling a legacy API" in text
    assert "no longer lets new Cloud projects enable the legacy Places API" in text


async def test_the_legacy_api_error_is_explained(run, google, legacy) -> None:
    google.legacy_enabled = False
    out = await run(action="get_directions", location="Times Square", destination="Central Park")
    assert out.status == "error"
    text = out.text()
    assert "REQUEST_DENIED" in text and "does not have the legacy Directions API enabled" in text
    assert "Enable 'Places API (New)' and 'Routes API'" in text
    assert "leave GOOGLE_MAPS_API unset" in text


@pytest.mark.parametrize(
    "tool_input",
    [
        {"action": "search_places", "location": "40.7580,-73.9855", "query": "coffee"},
        {"action": "get_directions", "location": "Times Square", "destination": "Central Park"},
    ],
)
async def test_a_wrong_key_on_the_new_apis(run, google, monkeypatch, tool_input) -> None:
    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", "AIzaWRONG-wrong-wrong-123")
    out = await run(**tool_input)
    assert out.status == "error"
    assert "rejected the API key (API_KEY_INVALID)" in out.text()
    assert "AIzaWRONG" not in out.text()
