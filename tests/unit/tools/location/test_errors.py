"""Every error path: input, missing keys, provider codes, HTTP trouble, cancellation, secrecy."""

from __future__ import annotations

import asyncio
import logging

import pytest

from codev_ls.engine.outcome import StartedUpdate
from codev_ls.tools.location.common import redact
from tests.fakes._location_server import Reply
from tests.unit.tools.location.conftest import AMAP_KEY, CLOSED, GOOGLE_KEY

# ------------------------------------------------------------------ input


@pytest.mark.parametrize(
    ("tool_input", "needle"),
    [
        ({"action": "geocode"}, "`location` is required for geocode"),
        ({"action": "search_places", "location": "西单"}, "needs `query`"),
        ({"action": "get_directions", "location": "西单"}, "needs `destination`"),
        (
            {"action": "get_directions", "location": "a", "destination": "b", "waypoints": ["c"]},
            "use plan_trip",
        ),
        ({"action": "plan_trip", "location": "a", "destination": "b"}, "needs `waypoints`"),
        ({"action": "plan_trip", "location": "a", "waypoints": [" "]}, "empty entries"),
        ({"action": "geocode", "location": "   "}, "`location` is required"),
        ({"action": "fly"}, "`action`"),
        ({"action": "search_places", "location": "x", "query": "y", "radius": 90000}, "`radius`"),
        ({"action": "locate", "region": "eu"}, "`region`"),
        ({"action": "locate", "city": "Paris"}, "`city` is not a known parameter"),
        ({"action": "plan_trip", "location": "a", "waypoints": ["w"] * 26}, "`waypoints`"),
    ],
)
async def test_bad_input_is_an_error_the_model_can_act_on(run, tool_input, needle) -> None:
    out = await run(**tool_input)
    assert out.status == "error"
    assert needle in out.text()


# ------------------------------------------------------------------ keys


async def test_no_amap_key_for_a_chinese_place(run) -> None:
    out = await run(action="geocode", location="西单")
    assert out.status == "error"
    text = out.text()
    assert "goes to Amap (高德地图) because a mainland Chinese place is named" in text
    assert "AMAP_API_KEY is not set" in text and "「Web服务」" in text and "lbs.amap.com" in text
    assert "region='intl'" in text


async def test_no_google_key_for_a_place_abroad(run) -> None:
    out = await run(action="geocode", location="Times Square")
    assert out.status == "error"
    text = out.text()
    assert "GOOGLE_MAPS_API_KEY is not set" in text
    assert "Geocoding API, Places API (New) and Routes API" in text
    assert "Create credentials" in text


async def test_a_forced_region_without_its_key_does_not_fall_back(run, google) -> None:
    out = await run(action="geocode", location="Times Square", region="cn")
    assert out.status == "error"
    assert "because region=cn was requested" in out.text() and "AMAP_API_KEY" in out.text()
    assert "region='intl'" not in out.text()
    assert not google.requests


async def test_without_the_amap_key_google_answers_with_a_note(run, google) -> None:
    out = await run(action="geocode", location="Beijing")
    assert out.status == "success", out.text()
    assert "Google Maps:" in out.text()
    assert "Note: Amap would suit this request" in out.text() and "AMAP_API_KEY" in out.text()


async def test_without_the_google_key_amap_answers_with_a_note(run, amap) -> None:
    out = await run(action="geocode", location="西单", region=None)
    assert out.status == "success"
    out = await run(action="search_places", location="39.913130,116.373487 [GCJ-02]", query="x")
    assert "Amap" in out.text()


# ------------------------------------------------------------------ provider codes


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        ("10003", "daily quota is used up (DAILY_QUERY_OVER_LIMIT)"),
        ("10009", "belongs to another platform (USERKEY_PLAT_NOMATCH)"),
        ("10004", "ACCESS_TOO_FREQUENT"),
        ("20011", "use region='intl'"),
        ("20000", "rejected the request (INVALID_PARAMS, 20000)"),
    ],
)
async def test_amap_error_codes_become_clear_messages(run, amap, code, needle) -> None:
    amap.fail["*"] = code
    out = await run(action="geocode", location="西单")
    assert out.status == "error"
    assert out.text().startswith("Amap (高德)")
    assert needle in out.text()


async def test_a_wrong_amap_key(run, amap, monkeypatch) -> None:
    monkeypatch.setenv("AMAP_API_KEY", "wrong-key-abcdef123456")
    out = await run(action="search_places", location="西单", query="咖啡")
    assert out.status == "error"
    assert "rejected the API key (INVALID_USER_KEY)" in out.text()
    assert "wrong-key-abcdef123456" not in out.text()


async def test_amap_per_second_limits_are_retried_once(run, amap) -> None:
    amap.fail_once["/v3/geocode/geo"] = "10021"
    out = await run(action="geocode", location="西单")
    assert out.status == "success", out.text()
    assert len(amap.calls("/v3/geocode/geo")) == 2


async def test_amap_v4_errors_are_read_too(run, amap) -> None:
    amap.fail["/v4/direction/bicycling"] = "10003"
    out = await run(
        action="get_directions", location="天安门", destination="故宫", mode="bicycling"
    )
    assert out.status == "error" and "DAILY_QUERY_OVER_LIMIT" in out.text()


async def test_amap_route_too_long_for_walking(run, amap) -> None:
    out = await run(action="get_directions", location="北京", destination="上海", mode="walking")
    assert out.status == "error"
    assert "too far apart for this mode (OVER_DIRECTION_RANGE)" in out.text()


@pytest.mark.parametrize(
    ("status", "message", "needle"),
    [
        ("REQUEST_DENIED", "This API project is not authorized to use this API.",
         "denied the request (REQUEST_DENIED): This API project is not authorized"),
        ("OVER_QUERY_LIMIT", "You have exceeded your daily request quota for this API.",
         "quota exceeded (OVER_QUERY_LIMIT)"),
        ("OVER_DAILY_LIMIT", "", "billing may not be enabled"),
        ("INVALID_REQUEST", "Invalid request. Missing the 'address' parameter.",
         "rejected the request as invalid (INVALID_REQUEST)"),
        ("UNKNOWN_ERROR", "", "server error (UNKNOWN_ERROR)"),
    ],
)  # fmt: skip
async def test_google_statuses_become_clear_messages(run, google, status, message, needle) -> None:
    google.fail["*"] = (status, message)
    out = await run(action="geocode", location="Times Square")
    assert out.status == "error"
    assert needle in out.text()


async def test_a_wrong_google_key(run, google, monkeypatch, legacy) -> None:
    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", "AIzaWRONG-wrong-wrong-123")
    out = await run(action="search_places", location="40.7580,-73.9855", query="coffee")
    assert out.status == "error"
    assert "REQUEST_DENIED" in out.text() and "The provided API key is invalid." in out.text()
    assert "AIzaWRONG" not in out.text()


async def test_a_redirect_is_not_followed_with_the_key(run, amap) -> None:
    """The key rides in the query string: following a redirect would hand it to another host."""
    from tests.fakes.amap import FakeAmap

    elsewhere = FakeAmap(AMAP_KEY)
    url = elsewhere.start()
    try:
        amap.raw_reply = Reply(
            302, b"", headers={"Location": f"{url}/v3/geocode/geo?address=x&key={AMAP_KEY}"}
        )
        out = await run(action="geocode", location="西单")
    finally:
        elsewhere.stop()
    assert out.status == "error"
    assert "answered with a redirect (HTTP 302)" in out.text() and "not followed" in out.text()
    assert not elsewhere.requests
    assert AMAP_KEY not in out.text()


# ------------------------------------------------------------------ transport


async def test_an_unreachable_provider(run, monkeypatch) -> None:
    monkeypatch.setenv("AMAP_API_KEY", AMAP_KEY)
    monkeypatch.setenv("AMAP_BASE_URL", CLOSED)
    out = await run(action="geocode", location="西单")
    assert out.status == "error"
    assert out.text().startswith("Could not reach Amap (高德) (127.0.0.1:9)")


@pytest.mark.parametrize(
    ("status", "needle"),
    [(502, "Amap (高德) answered HTTP 502."), (200, "answered with something that is not JSON")],
)
async def test_a_provider_that_answers_html(run, amap, status, needle) -> None:
    amap.raw_reply = Reply(status, b"<html><body><h1>Bad Gateway</h1></body></html>")
    out = await run(action="geocode", location="西单")
    assert out.status == "error"
    assert needle in out.text()


async def test_a_slow_provider_times_out(run, amap, monkeypatch) -> None:
    monkeypatch.setenv("CODEV_LOCATION_TIMEOUT", "0.3")
    amap.delay = 5.0
    out = await run(action="geocode", location="西单")
    assert out.status == "error"
    assert "Amap (高德) did not answer within 0.3 s." in out.text()


async def test_cancelling_aborts_the_http_request_promptly(run, amap) -> None:
    amap.delay = 30.0
    started = asyncio.Event()
    ids: list[str] = []

    def on_update(update) -> None:
        if isinstance(update, StartedUpdate):
            ids.append(update.tool_use_id)
            started.set()

    task = asyncio.ensure_future(
        run.engine.run_tool(
            "Location",
            {"action": "search_places", "location": "西单", "query": "咖啡"},
            on_update=on_update,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    for _ in range(100):  # until the request is in flight at the fake
        if amap.requests:
            break
        await asyncio.sleep(0.02)
    assert amap.requests
    assert run.engine.cancel(ids[0]) == 1
    out = await asyncio.wait_for(task, 5)  # a guard, not a timing assertion
    assert out.status == "interrupted"


# ------------------------------------------------------------------ secrecy


async def test_keys_never_appear_in_outcomes_progress_or_logs(
    run, amap, google, ipgeo, fake_nmcli, log_text
) -> None:
    logging.getLogger("httpx").setLevel(logging.DEBUG)
    outcomes = [
        await run(action="geocode", location="西单"),
        await run(action="search_places", location="西单", query="咖啡"),
        await run(action="plan_trip", location="天安门", waypoints=["故宫"], mode="transit"),
        await run(action="get_directions", location="Times Square", destination="Central Park"),
        await run(action="search_places", location="Times Square", query="coffee"),
        await run(action="locate"),
    ]
    amap.fail["*"] = "10003"
    google.fail["*"] = ("REQUEST_DENIED", f"key {GOOGLE_KEY} rejected")  # even if echoed back
    outcomes += [
        await run(action="geocode", location="西单"),
        await run(action="geocode", location="Times Square"),
        await run(action="locate", region="cn"),
    ]
    texts = [o.model_dump_json() for o in outcomes]
    texts += run.progress()
    texts += [f"{e.title} {e.message}" for e in run.bridge.progress]
    texts.append(log_text.text)
    blob = "\n".join(texts)
    assert AMAP_KEY not in blob and GOOGLE_KEY not in blob
    assert "HTTP Request: GET" in log_text.text  # httpx did log the requests…
    assert "key=***" in log_text.text  # …with the key masked
    assert any(o.status == "error" for o in outcomes) and any(
        o.status == "success" for o in outcomes
    )


def test_redact_masks_query_keys_and_known_secrets() -> None:
    text = "GET https://x/v3/ip?key=abc123&city=1 token=zzz9 and SECRET-VALUE-1"
    cleaned = redact(text, ["SECRET-VALUE-1"])
    assert cleaned == "GET https://x/v3/ip?key=***&city=1 token=*** and ***"
