"""Every action against the fake Google Maps, through Engine + ScriptedBridge + run_tool."""

from __future__ import annotations

from codev_ls.tools.location.datum import gcj02_to_wgs84
from codev_ls.tools.location.google import MAX_RESULTS
from tests.fakes.google_maps import default_places
from tests.unit.tools.location.conftest import GOOGLE_KEY


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


async def test_nearby_search_follows_page_tokens_up_to_sixty(run, google) -> None:
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


async def test_fewer_results_than_a_page_mean_one_request(run, google) -> None:
    google.places = default_places(12)
    out = await run(action="search_places", location="Times Square", query="pizza", radius=800)
    assert out.status == "success", out.text()
    assert len(google.calls("/maps/api/place/nearbysearch/json")) == 1
    assert "(1 page fetched)" in out.text()


async def test_search_in_a_city_uses_text_search(run, google) -> None:
    out = await run(action="search_places", location="New York", query="coffee", type="cafe")
    assert out.status == "success", out.text()
    call = google.calls("/maps/api/place/textsearch/json")[0]
    assert call.params["query"] == "coffee in New York" and call.params["type"] == "cafe"
    assert "in New York, NY, USA" in out.text()
    assert "NY 10036, United States" in out.text()


async def test_directions_strip_html_and_give_the_totals(run, google) -> None:
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


async def test_transit_directions_name_the_line(run, google) -> None:
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


async def test_plan_trip_is_one_request_with_waypoints(run, google) -> None:
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


async def test_plan_trip_by_transit_asks_leg_by_leg(run, google) -> None:
    out = await run(
        action="plan_trip", location="Times Square",
        waypoints=["Empire State Building"], destination="Central Park", mode="transit",
    )  # fmt: skip
    assert out.status == "success", out.text()
    calls = google.calls("/maps/api/directions/json")
    assert len(calls) == 2 and not any("waypoints" in c.params for c in calls)
    assert "each leg was asked separately" in out.text()


async def test_amap_coordinates_are_converted_for_google(run, google) -> None:
    out = await run(
        action="get_directions",
        location="39.908722,116.397499 [GCJ-02]",
        destination="Beijing",
        region="intl",
    )
    assert out.status == "success", out.text()
    lat, lng = gcj02_to_wgs84(39.908722, 116.397499)
    assert google.calls("/maps/api/directions/json")[0].params["origin"] == f"{lat:.6f},{lng:.6f}"
    assert "39.908722,116.397499 [GCJ-02] was converted to WGS-84 for Google Maps" in out.text()


async def test_taiwan_goes_to_google_even_in_chinese(run, amap, google) -> None:
    out = await run(action="geocode", location="台北101")
    assert out.status == "success", out.text()
    assert google.calls("/maps/api/geocode/json") and not amap.requests
    assert "25.033964,121.564472 [WGS-84]" in out.text()


async def test_a_place_google_cannot_find_is_named(run, google) -> None:
    out = await run(
        action="plan_trip", location="Times Square", waypoints=["Nowhere Special 123"],
        destination="Central Park",
    )  # fmt: skip
    assert out.status == "error"
    assert "could not find 'Nowhere Special 123'" in out.text()


async def test_no_route_is_an_error_with_a_hint(run, google) -> None:
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
