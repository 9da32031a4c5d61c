"""WebSearch through the whole lifecycle against fake Tavily and SearXNG servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.outcome import ProgressUpdate, ToolUseUpdate
from codev_ls.engine.runtime import Engine
from codev_ls.tools._web import WebServices, host_matches, normalize_domain
from codev_ls.tools.web_search import (
    SearxngBackend,
    TavilyBackend,
    WebSearchTool,
    choose_backend,
)
from tests.fakes.searxng import Doc as SDoc
from tests.fakes.searxng import FakeSearxng
from tests.fakes.tavily import Doc as TDoc
from tests.fakes.tavily import FakeTavily
from tests.fakes.web import FakeWeb

KEY = "tvly-secret-abcdef123456"

DOCS = [
    (
        "asyncio — Asynchronous I/O",
        "https://docs.python.org/3/library/asyncio.html",
        "asyncio is a library to write concurrent code using the async/await syntax.",
    ),
    (
        "Python release 3.13",
        "https://www.python.org/downloads/release/python-3130/",
        "Python 3.13 is the newest major release of the Python programming language.",
    ),
    (
        "NotPython asyncio clone",
        "https://notpython.org/asyncio",
        "A look-alike site about asyncio that must not match python.org.",
    ),
    (
        "asyncio tutorial",
        "https://realpython.example.com/async-io-python/",
        "A walk-through of async IO in Python with asyncio.",
    ),
    (
        "Stack Overflow: asyncio gather",
        "https://stackoverflow.com/questions/1/asyncio-gather",
        "How does asyncio.gather work? <b>Answer</b> &amp; examples.",
    ),
]


@pytest.fixture
def searxng() -> Iterator[FakeSearxng]:
    with FakeSearxng([SDoc(*d) for d in DOCS]) as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(KEY, [TDoc(*d) for d in DOCS]) as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def use_searxng(searxng: FakeSearxng, monkeypatch: pytest.MonkeyPatch) -> FakeSearxng:
    monkeypatch.setenv("CODEV_SEARXNG_URL", searxng.url)
    return searxng


@pytest.fixture
def use_tavily(tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch) -> FakeTavily:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    monkeypatch.setenv("TAVILY_BASE_URL", tavily.url)
    return tavily


@pytest.fixture
def bridge() -> ScriptedBridge:
    return ScriptedBridge()


@pytest.fixture
def engine(workspace: Path, bridge: ScriptedBridge, tmp_path: Path) -> Iterator[Engine]:
    """Default mode: WebSearch is read-only, so it runs without asking."""
    eng = Engine(workspace, bridge, mode="default", data_root=tmp_path / "data")
    eng.services["web"] = WebServices(timeout=2.0)
    yield eng


@pytest.fixture(autouse=True)
async def _close_clients(engine: Engine):
    """Close the HTTP clients inside the test's own event loop."""
    yield
    await engine.services["web"].aclose()


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


async def search(engine: Engine, updates: list[ToolUseUpdate] | None = None, **input: object):
    return await engine.run_tool(
        "WebSearch", input, on_update=updates.append if updates is not None else None
    )


# --------------------------------------------------------------------------- backend choice


def test_backend_choice_follows_the_environment():
    assert isinstance(choose_backend({}), SearxngBackend)
    assert choose_backend({}).base_url == "http://127.0.0.1:8080"
    assert (
        choose_backend({"CODEV_SEARXNG_URL": "http://search.lan:8888/"}).base_url
        == "http://search.lan:8888"
    )
    tav = choose_backend({"TAVILY_API_KEY": "k-1234", "CODEV_SEARXNG_URL": "http://x"})
    assert isinstance(tav, TavilyBackend) and tav.base_url == "https://api.tavily.com"
    tav = choose_backend({"TAVILY_API_KEY": "k-1234", "TAVILY_BASE_URL": "http://127.0.0.1:9/"})
    assert isinstance(tav, TavilyBackend) and tav.base_url == "http://127.0.0.1:9"
    assert isinstance(choose_backend({"TAVILY_API_KEY": "  "}), SearxngBackend)


async def test_searxng_is_used_without_a_tavily_key(engine: Engine, use_searxng: FakeSearxng):
    out = await search(engine, query="asyncio gather")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith('Web search results for "asyncio gather" (SearXNG, ')
    assert (
        "[1] asyncio — Asynchronous I/O\n    https://docs.python.org/3/library/asyncio.html\n"
        in text
    )
    assert "[2] " in text and "Cite the results you rely on" in text
    # HTML in snippets is flattened for the model.
    assert "How does asyncio.gather work? Answer & examples." in text
    (req,) = use_searxng.requests
    assert req.method == "GET" and req.path == "/search"
    assert req.param("format") == "json" and req.param("q") == "asyncio gather"
    assert out.meta and out.meta["backend"] == "SearXNG"
    assert out.meta["results"][0]["url"] == "https://docs.python.org/3/library/asyncio.html"


async def test_tavily_is_used_when_its_key_is_set(
    engine: Engine, use_tavily: FakeTavily, use_searxng: FakeSearxng
):
    out = await search(engine, query="python release")
    assert out.status == "success", out.text()
    assert "(Tavily, " in out.text()
    assert "[1] Python release 3.13" in out.text()
    assert use_searxng.count() == 0
    (req,) = use_tavily.requests
    assert req.method == "POST" and req.path == "/search"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    body = req.json()
    assert body["query"] == "python release" and body["max_results"] == 10
    assert "include_domains" not in body and "exclude_domains" not in body
    assert KEY not in out.text()


async def test_no_results_is_a_success_that_says_so(engine: Engine, use_searxng: FakeSearxng):
    use_searxng.unresponsive = [["google", "timeout"]]
    out = await search(engine, query="zzqx nothing matches")
    assert out.status == "success"
    assert out.text().startswith('No web results for "zzqx nothing matches" (SearXNG).')
    assert "google (timeout)" in out.text()


# --------------------------------------------------------------------------- domain filters


def test_domains_cover_their_subdomains_only():
    assert host_matches("docs.python.org", "python.org")
    assert host_matches("python.org", "python.org")
    assert not host_matches("notpython.org", "python.org")
    assert not host_matches("python.org.evil.com", "python.org")
    assert normalize_domain("https://Docs.Python.org:443/3/") == "docs.python.org"
    assert normalize_domain("*.example.com") == "example.com"


async def test_allowed_domains_keep_a_domain_and_its_subdomains_searxng(
    engine: Engine, use_searxng: FakeSearxng
):
    out = await search(engine, query="python asyncio", allowed_domains=["python.org"])
    assert out.status == "success", out.text()
    urls = [r["url"] for r in out.meta["results"]]  # type: ignore[index]
    assert urls == [
        "https://docs.python.org/3/library/asyncio.html",
        "https://www.python.org/downloads/release/python-3130/",
    ]
    # One allowed domain is also passed to the engines as `site:`.
    assert use_searxng.requests[0].param("q") == "python asyncio site:python.org"


async def test_filters_apply_even_when_the_backend_ignores_them(
    engine: Engine, use_searxng: FakeSearxng
):
    # Two allowed domains: SearXNG gets the plain query and returns everything; we filter.
    out = await search(engine, query="asyncio", allowed_domains=["python.org", "stackoverflow.com"])
    urls = [r["url"] for r in out.meta["results"]]  # type: ignore[index]
    assert urls == [
        "https://docs.python.org/3/library/asyncio.html",
        "https://stackoverflow.com/questions/1/asyncio-gather",
    ]
    assert use_searxng.requests[0].param("q") == "asyncio"
    assert "were left out" in out.text()
    assert "notpython.org" not in out.text()


async def test_blocked_domains_leave_results_out(engine: Engine, use_searxng: FakeSearxng):
    out = await search(engine, query="asyncio", blocked_domains=["python.org", "stackoverflow.com"])
    urls = [r["url"] for r in out.meta["results"]]  # type: ignore[index]
    assert urls == [
        "https://notpython.org/asyncio",
        "https://realpython.example.com/async-io-python/",
    ]


async def test_tavily_gets_the_domain_lists_and_results_are_filtered(
    engine: Engine, use_tavily: FakeTavily
):
    out = await search(
        engine, query="asyncio", allowed_domains=["python.org"], blocked_domains=["www.python.org"]
    )
    assert out.status == "success", out.text()
    body = use_tavily.requests[0].json()
    assert body["include_domains"] == ["python.org"]
    assert body["exclude_domains"] == ["www.python.org"]
    urls = [r["url"] for r in out.meta["results"]]  # type: ignore[index]
    assert urls == ["https://docs.python.org/3/library/asyncio.html"]


async def test_a_domain_that_is_not_one_is_refused(engine: Engine, use_searxng: FakeSearxng):
    out = await search(engine, query="x y", allowed_domains=["not a domain!"])
    assert out.status == "error"
    assert "allowed_domains holds 'not a domain!'" in out.text()
    assert use_searxng.count() == 0


async def test_input_schema_errors_name_the_field(engine: Engine):
    out = await search(engine, query="x")
    assert out.status == "error" and "`query`" in out.text()
    out = await search(engine, query="ok query", domains=["a.com"])
    assert out.status == "error" and "`domains` is not a known parameter" in out.text()


# --------------------------------------------------------------------------- progress


async def test_progress_reports_the_query_and_the_result_count(
    engine: Engine, bridge: ScriptedBridge, use_searxng: FakeSearxng
):
    updates: list[ToolUseUpdate] = []
    out = await search(engine, updates, query="asyncio gather")
    assert out.status == "success"
    progress = [u.progress for u in updates if isinstance(u, ProgressUpdate)]
    assert [p.type for p in progress] == ["WebSearchProgress", "WebSearchProgress"]
    assert progress[0].message == 'Searching the web for "asyncio gather" (SearXNG)'
    assert progress[0].data == {"query": "asyncio gather", "backend": "SearXNG"}
    assert progress[1].data["result_count"] == 4
    assert progress[1].message == '4 results for "asyncio gather"'
    # The engine forwards them to the editor as workDoneProgress.
    kinds = [(e.kind, e.title or e.message) for e in bridge.progress]
    assert kinds[0] == ("begin", 'WebSearch: searching "asyncio gather"')
    assert ("report", '4 results for "asyncio gather"') in kinds
    assert kinds[-1][0] == "end"


# --------------------------------------------------------------------------- failures


async def test_unreachable_searxng_says_how_to_start_one(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
):
    port = closed_port()
    monkeypatch.setenv("CODEV_SEARXNG_URL", f"http://127.0.0.1:{port}")
    out = await search(engine, query="anything at all")
    assert out.status == "error"
    text = out.text()
    assert f"No web search backend is reachable: SearXNG at http://127.0.0.1:{port}" in text
    assert "connection was refused" in text
    assert "docker compose -f deploy/searxng/compose.yaml up -d" in text
    assert "TAVILY_API_KEY" in text


async def test_searxng_without_the_json_format_is_explained(
    engine: Engine, use_searxng: FakeSearxng
):
    use_searxng.formats = ["html"]
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert "refused the JSON format (HTTP 403)" in out.text()
    assert "formats: [html, json]" in out.text()


async def test_searxng_limiter_and_server_errors(engine: Engine, use_searxng: FakeSearxng):
    use_searxng.limited = True
    out = await search(engine, query="asyncio")
    assert out.status == "error" and "(HTTP 429)" in out.text() and "limiter: false" in out.text()
    use_searxng.limited = False
    use_searxng.fail_status = 502
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert f"SearXNG at {use_searxng.url} had a server error (HTTP 502)" in out.text()


async def test_a_url_that_is_not_searxng_is_explained(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
):
    with FakeWeb() as web:
        web.page("/search", "<html><body>My blog</body></html>")  # type: ignore[attr-defined]
        monkeypatch.setenv("CODEV_SEARXNG_URL", web.url)
        out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert "answered with text/html, not its JSON search format" in out.text()


async def test_tavily_bad_key_names_the_backend_and_status_not_the_key(
    engine: Engine, use_tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
):
    wrong = "tvly-wrong-key-987654"
    monkeypatch.setenv("TAVILY_API_KEY", wrong)
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    text = out.text()
    assert (
        "Tavily rejected the API key (HTTP 401): Unauthorized: missing or invalid API key." in text
    )
    assert "TAVILY_API_KEY" in text
    assert wrong not in text and KEY not in text


async def test_a_key_echoed_by_the_server_is_redacted(engine: Engine, use_tavily: FakeTavily):
    use_tavily.fail_with = (401, f"The key {KEY} was revoked")
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert "The key *** was revoked" in out.text()
    assert KEY not in out.text()


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, "Tavily's rate limit was reached (HTTP 429): slow down"),
        (432, "Tavily refused the search (HTTP 432): slow down"),
        (433, "Tavily refused the search (HTTP 433): slow down"),
        (400, "Tavily answered HTTP 400: slow down"),
        (503, "Tavily had a server error (HTTP 503): slow down"),
    ],
)
async def test_tavily_status_errors(
    engine: Engine, use_tavily: FakeTavily, status: int, expected: str
):
    use_tavily.fail_with = (status, "slow down")
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert expected in out.text()
    assert KEY not in out.text()


async def test_unreachable_tavily_is_named(engine: Engine, monkeypatch: pytest.MonkeyPatch):
    port = closed_port()
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    monkeypatch.setenv("TAVILY_BASE_URL", f"http://127.0.0.1:{port}")
    out = await search(engine, query="asyncio")
    assert out.status == "error"
    assert (
        f"Tavily (http://127.0.0.1:{port}) could not be reached: the connection was refused"
        in out.text()
    )
    assert KEY not in out.text()


async def test_a_silent_backend_times_out_within_the_bound(
    engine: Engine, use_searxng: FakeSearxng
):
    engine.services["web"] = WebServices(timeout=0.5)
    use_searxng.hold()
    started = time.monotonic()
    out = await search(engine, query="asyncio")
    elapsed = time.monotonic() - started
    use_searxng.release()
    assert out.status == "error"
    assert f"SearXNG ({use_searxng.url}) did not answer within 0.5 s" in out.text()
    assert elapsed < 5


# --------------------------------------------------------------------------- cancellation


async def test_cancelling_aborts_the_request_in_flight(engine: Engine, use_searxng: FakeSearxng):
    engine.services["web"] = WebServices(timeout=30)
    use_searxng.hold()
    task = asyncio.ensure_future(
        engine.run_tool("WebSearch", {"query": "asyncio"}, tool_use_id="toolu_cancel_me")
    )
    for _ in range(200):
        if use_searxng.count():
            break
        await asyncio.sleep(0.01)
    assert use_searxng.count() == 1
    started = time.monotonic()
    assert engine.cancel("toolu_cancel_me") == 1
    out = await asyncio.wait_for(task, 5)
    assert out.status == "interrupted"
    assert time.monotonic() - started < 2
    use_searxng.release()


# --------------------------------------------------------------------------- traits


def test_traits_and_pool(engine: Engine):
    tool = WebSearchTool()
    parsed = tool.parse_input({"query": "abc"})
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    assert not tool.is_destructive(parsed)
    assert "WebSearch" in [t.name for t in engine.tool_pool()]
    schema = tool.input_schema()
    assert set(schema["properties"]) == {"query", "allowed_domains", "blocked_domains"}
    assert all("description" in p for p in schema["properties"].values())


async def test_default_mode_runs_it_without_asking(
    engine: Engine, bridge: ScriptedBridge, use_searxng: FakeSearxng
):
    out = await search(engine, query="asyncio")
    assert out.status == "success" and out.decision_source == "config"
    assert bridge.requests == []


def test_the_shipped_searxng_settings_enable_the_json_format():
    root = Path(__file__).resolve().parents[3] / "deploy" / "searxng"
    compose = (root / "compose.yaml").read_text()
    settings_text = (root / "settings.yml").read_text()
    assert "./settings.yml:/etc/searxng/settings.yml" in compose
    assert '"127.0.0.1:${CODEV_SEARXNG_PORT:-8080}:8080"' in compose
    yaml = pytest.importorskip("yaml")
    settings = yaml.safe_load(settings_text)
    assert "json" in settings["search"]["formats"]
    assert settings["server"]["limiter"] is False
    assert settings["use_default_settings"] is True
    services = yaml.safe_load(compose)["services"]
    assert services["searxng"]["image"].startswith("docker.io/searxng/searxng")
