"""WebFetch through the whole lifecycle against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.outcome import ProgressUpdate, ToolUseUpdate
from codev_ls.engine.runtime import Engine
from codev_ls.permissions.rules import parse_rule
from codev_ls.tools import web_fetch
from codev_ls.tools._web import WebServices
from codev_ls.tools.web_fetch import WebFetchTool, classify, url_problem
from tests.fakes.jina import FakeJina, JinaPage
from tests.fakes.web import FakeWeb, make_pdf

JINA_KEY = "jina_secret_0123456789"

ARTICLE = """<!DOCTYPE html>
<html><head><title>Ownership | The Guide</title><script>var tracking = 1;</script></head>
<body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<main>
  <h1>What is ownership?</h1>
  <p>Every value has an <a href="/book/owner.html">owner</a>; see also
     <a href="https://doc.rust-lang.org/std/">the std docs</a>.</p>
  <img src="img/diagram.png" alt="Ownership diagram">
  <h2>Rules</h2>
  <ul><li>Each value has one owner.</li><li>Values are dropped at scope end.</li></ul>
  <pre><code class="language-rust">let s = String::from("hello");</code></pre>
</main>
<footer>© 2024 The Guide</footer>
</body></html>"""


class FakeModel:
    """Stands in for ``engine.services["model"]`` (the model layer's small-model call)."""

    def __init__(self, answer: str = "The answer, from the page.", fail: bool = False) -> None:
        self.answer = answer
        self.fail = fail
        self.calls: list[dict[str, object]] = []

    async def complete(
        self, system: str, prompt: str, *, small: bool = True, max_tokens: int = 1024
    ) -> str:
        self.calls.append(
            {"system": system, "prompt": prompt, "small": small, "max_tokens": max_tokens}
        )
        if self.fail:
            raise RuntimeError("model overloaded")
        return self.answer


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    with FakeWeb() as fake:
        fake.page("/article", ARTICLE)  # type: ignore[attr-defined]
        yield fake  # type: ignore[misc]


@pytest.fixture
def bridge() -> ScriptedBridge:
    return ScriptedBridge()


@pytest.fixture
def engine(workspace: Path, bridge: ScriptedBridge, tmp_path: Path) -> Engine:
    """bypassPermissions: these tests are about fetching (permission tests set the mode)."""
    eng = Engine(workspace, bridge, mode="bypassPermissions", data_root=tmp_path / "data")
    eng.services["web"] = WebServices(timeout=3.0)
    return eng


@pytest.fixture(autouse=True)
async def _close_clients(engine: Engine):
    yield
    await engine.services["web"].aclose()


async def fetch(engine: Engine, url: str, prompt: str = "What does it say?", updates=None):
    return await engine.run_tool(
        "WebFetch",
        {"url": url, "prompt": prompt},
        on_update=updates.append if updates is not None else None,
    )


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


# --------------------------------------------------------------------------- content


async def test_html_becomes_markdown_with_headings_links_and_images(engine: Engine, web: FakeWeb):
    out = await fetch(engine, f"{web.url}/article")
    assert out.status == "success", out.text()
    text = out.text()
    assert text.startswith(f"URL: {web.url}/article\nTitle: Ownership | The Guide\n")
    assert "Content-Type: text/html" in text
    assert "# What is ownership?" in text and "## Rules" in text
    assert f"[owner]({web.url}/book/owner.html)" in text
    assert "[the std docs](https://doc.rust-lang.org/std/)" in text
    assert f"![Ownership diagram]({web.url}/img/diagram.png)" in text
    assert '```rust\nlet s = String::from("hello");\n```' in text
    assert "- Each value has one owner." in text
    # Page chrome and scripts are not content.
    assert "tracking" not in text and "© 2024" not in text and "[Blog]" not in text
    assert "No model is configured to apply the prompt" in text
    assert out.meta and out.meta["via"] == "local" and out.meta["cached"] is False


async def test_plain_text_json_and_pdf(engine: Engine, web: FakeWeb):
    web.page("/notes.txt", "line one\nline two\n", "text/plain")
    web.page("/api", json.dumps({"name": "codev", "tags": ["a", "b"]}), "application/json")
    web.page(
        "/paper.pdf",
        make_pdf([["Attention is all you need"], ["Section 2: Results"]]),
        "application/pdf",
    )
    out = await fetch(engine, f"{web.url}/notes.txt")
    assert "line one\nline two" in out.text() and "Content-Type: text/plain" in out.text()
    out = await fetch(engine, f"{web.url}/api")
    assert '```json\n{\n  "name": "codev",\n  "tags": [\n    "a",' in out.text()
    out = await fetch(engine, f"{web.url}/paper.pdf")
    assert out.status == "success", out.text()
    assert "--- page 1 ---\nAttention is all you need" in out.text()
    assert "--- page 2 ---\nSection 2: Results" in out.text()
    assert "Content-Type: application/pdf" in out.text()


async def test_content_without_a_type_is_sniffed(engine: Engine, web: FakeWeb):
    web.page("/doc", make_pdf([["Sniffed PDF"]]), "")
    web.page("/page", "<!doctype html><html><body><h2>Sniffed</h2></body></html>", "")
    out = await fetch(engine, f"{web.url}/doc")
    assert "Sniffed PDF" in out.text()
    out = await fetch(engine, f"{web.url}/page")
    assert "## Sniffed" in out.text()


async def test_binary_content_is_refused(engine: Engine, web: FakeWeb):
    web.page("/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40, "image/png")
    web.page("/blob", bytes(range(256)) * 40, "")
    web.page("/lib.zip", b"PK\x03\x04" + b"\x00" * 100, "application/zip")
    out = await fetch(engine, f"{web.url}/logo.png")
    assert out.status == "error"
    assert (
        f"{web.url}/logo.png is binary content (image/png, 10 KB), which WebFetch cannot read"
        in out.text()
    )
    out = await fetch(engine, f"{web.url}/blob")
    assert out.status == "error" and "is binary content (no content type" in out.text()
    out = await fetch(engine, f"{web.url}/lib.zip")
    assert out.status == "error" and "application/zip" in out.text()


def test_content_types_are_classified():
    assert classify("text/html; charset=utf-8") == "html"
    assert classify("application/xhtml+xml") == "html"
    assert classify("application/vnd.api+json") == "json"
    assert classify("text/markdown") == "text"
    assert classify("application/atom+xml") == "text"
    assert classify("application/pdf") == "pdf"
    assert classify("image/svg+xml") == "binary"
    assert classify("video/mp4") == "binary"
    assert classify("") == "unknown"


async def test_charset_from_the_header_and_from_meta(engine: Engine, web: FakeWeb):
    web.page("/latin", "café crème".encode("latin-1"), "text/plain; charset=iso-8859-1")
    web.page(
        "/meta",
        '<html><head><meta charset="windows-1252"></head><body><p>naïve “quotes”</p></body></html>'.encode(
            "cp1252"
        ),
        "text/html",
    )
    assert "café crème" in (await fetch(engine, f"{web.url}/latin")).text()
    assert "naïve “quotes”" in (await fetch(engine, f"{web.url}/meta")).text()


# --------------------------------------------------------------------------- size caps


async def test_a_large_page_is_cut_at_the_cap(
    engine: Engine, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(web_fetch, "MAX_BODY_BYTES", 64 * 1024)
    web.streamed("/huge.txt", "text/plain", b"0123456789abcdef" * 1024, 100)  # 1.6 MB, no length
    out = await fetch(engine, f"{web.url}/huge.txt")
    assert out.status == "success", out.text()
    assert "Note: The page is larger than 64 KB; only its start was read." in out.text()
    assert out.meta and out.meta["bytes"] == 64 * 1024


async def test_the_raw_result_is_cut_to_a_readable_length(engine: Engine, web: FakeWeb):
    body = "\n".join(f"line {i:06d} " + "x" * 60 for i in range(2000))  # ~140k chars
    web.page("/long.txt", body, "text/plain")
    out = await fetch(engine, f"{web.url}/long.txt", prompt="find line 1999")
    text = out.text()
    assert "line 000000" in text and "line 001999" not in text
    assert f"of {len(body):,} characters" in text
    assert "Answer the prompt from it: find line 1999" in text
    assert len(text) < web_fetch.MAX_RAW_RESULT_CHARS + 2_000


async def test_a_pdf_over_the_cap_is_refused(
    engine: Engine, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(web_fetch, "MAX_BODY_BYTES", 1024)
    web.page("/big.pdf", make_pdf([["x" * 60] * 40] * 3), "application/pdf")
    out = await fetch(engine, f"{web.url}/big.pdf")
    assert out.status == "error"
    assert "PDF; WebFetch reads PDFs up to 1 KB" in out.text()


# --------------------------------------------------------------------------- redirects, https


async def test_same_host_redirects_are_followed(engine: Engine, web: FakeWeb):
    web.redirect("/old", "/middle", 301)
    web.redirect("/middle", f"{web.url}/article", 302)
    out = await fetch(engine, f"{web.url}/old")
    assert out.status == "success", out.text()
    assert out.text().startswith(f"URL: {web.url}/article\n")
    assert web.paths() == ["/old", "/middle", "/article"]


async def test_a_redirect_to_another_host_is_reported_not_followed(engine: Engine, web: FakeWeb):
    elsewhere = f"http://localhost:{web.port}/article"
    web.redirect("/moved", elsewhere, 308)
    out = await fetch(engine, f"{web.url}/moved")
    assert out.status == "success"
    text = out.text()
    assert text.startswith(
        f"REDIRECT to another host (HTTP 308): {web.url}/moved redirects to {elsewhere}."
    )
    assert f'call WebFetch again with url "{elsewhere}"' in text
    assert web.paths() == ["/moved"]
    assert out.meta == {"url": f"{web.url}/moved", "redirect": elsewhere}


async def test_a_redirect_loop_ends_with_an_error(engine: Engine, web: FakeWeb):
    web.redirect("/a", "/b")
    web.redirect("/b", "/a")
    out = await fetch(engine, f"{web.url}/a")
    assert out.status == "error" and "redirected more than 10 times" in out.text()


async def test_http_falls_back_when_the_host_has_no_https(engine: Engine, web: FakeWeb):
    # The fake speaks plain HTTP only: the https:// attempt fails its handshake, then http works.
    out = await fetch(engine, f"{web.url}/article")
    assert out.status == "success"
    assert out.text().startswith(f"URL: {web.url}/article")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI for a test cert")
async def test_http_is_upgraded_to_https_where_the_host_supports_it(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    with FakeWeb(tls=True, cert_dir=tmp_path / "tls") as secure:
        assert secure.ca_file is not None
        monkeypatch.setenv("SSL_CERT_FILE", str(secure.ca_file))
        secure.page("/only-https", "<h1>Secure page</h1>")  # type: ignore[attr-defined]
        secure.https_only.add("/only-https")  # type: ignore[attr-defined]
        url = f"http://127.0.0.1:{secure.port}/only-https"
        out = await fetch(engine, url)
        assert out.status == "success", out.text()
        assert out.text().startswith(f"URL: https://127.0.0.1:{secure.port}/only-https")
        assert "# Secure page" in out.text()
        assert [r.scheme for r in secure.requests] == ["https"]  # type: ignore[attr-defined]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI for a test cert")
async def test_an_unverifiable_certificate_falls_back_to_the_http_asked_for_with_a_note(
    engine: Engine, tmp_path: Path
):
    # The certificate is self-signed and not trusted here: https:// fails to verify,
    # so the page comes over plain http:// (what the URL asked for), and the model is told.
    with FakeWeb(tls=True, cert_dir=tmp_path / "tls") as site:
        site.page("/doc", "<h1>Plain page</h1>")  # type: ignore[attr-defined]
        url = f"http://127.0.0.1:{site.port}/doc"
        out = await fetch(engine, url)
        assert out.status == "success", out.text()
        text = out.text()
        assert text.startswith(f"URL: {url}\n")
        assert "Note: Fetched over plain http:// as asked: https:// did not work" in text
        assert "certificate verify failed" in text
        assert [r.scheme for r in site.requests] == ["http"]  # type: ignore[attr-defined]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI for a test cert")
async def test_a_same_host_redirect_from_https_to_http_is_followed_with_a_note(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    with FakeWeb(tls=True, cert_dir=tmp_path / "tls") as site:
        monkeypatch.setenv("SSL_CERT_FILE", str(site.ca_file))
        base = f"127.0.0.1:{site.port}"
        site.redirect("/secure", f"http://{base}/plain")  # type: ignore[attr-defined]
        site.https_only.add("/secure")  # type: ignore[attr-defined]
        site.page("/plain", "<h1>Downgraded</h1>")  # type: ignore[attr-defined]
        out = await fetch(engine, f"https://{base}/secure")
        assert out.status == "success", out.text()
        text = out.text()
        assert text.startswith(f"URL: http://{base}/plain\n")
        assert f"Note: https://{base}/secure redirected from https:// to plain http://." in text
        assert "# Downgraded" in text


# --------------------------------------------------------------------------- errors


async def test_http_errors_name_the_status(engine: Engine, web: FakeWeb):
    out = await fetch(engine, f"{web.url}/missing")
    assert out.status == "error"
    assert (
        f"{web.url}/missing answered HTTP 404 Not Found. The page says: Not Found No such page here."
        in out.text()
    )
    web.status("/boom", 503, "<p>Service down for maintenance</p>")
    out = await fetch(engine, f"{web.url}/boom")
    assert out.status == "error"
    assert "answered HTTP 503 Service Unavailable" in out.text() and "maintenance" in out.text()


async def test_connection_refused(engine: Engine):
    port = closed_port()
    out = await fetch(engine, f"http://127.0.0.1:{port}/x")
    assert out.status == "error"
    assert (
        f"http://127.0.0.1:{port}/x could not be fetched: the connection was refused." in out.text()
    )


async def test_a_silent_server_times_out_within_the_bound(engine: Engine, web: FakeWeb):
    engine.services["web"] = WebServices(timeout=0.5)
    web.hold()
    started = time.monotonic()
    out = await fetch(engine, f"{web.url}/article")
    web.release()
    assert out.status == "error"
    assert "did not answer in time" in out.text() or "did not finish within" in out.text()
    assert time.monotonic() - started < 5


async def test_cancelling_aborts_the_fetch_in_flight(engine: Engine, web: FakeWeb):
    engine.services["web"] = WebServices(timeout=30)
    web.hold()
    task = asyncio.ensure_future(
        engine.run_tool(
            "WebFetch", {"url": f"{web.url}/article", "prompt": "x"}, tool_use_id="toolu_fetch_1"
        )
    )
    for _ in range(300):
        if web.count("/article"):
            break
        await asyncio.sleep(0.01)
    assert web.count("/article") == 1
    started = time.monotonic()
    assert engine.cancel("toolu_fetch_1") == 1
    out = await asyncio.wait_for(task, 5)
    assert out.status == "interrupted"
    assert time.monotonic() - started < 2
    web.release()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/file", "url must be http or https, not ftp:."),
        ("example.com/page", "needs a scheme: did you mean https://example.com/page?"),
        ("https://user:pw@example.com/", "must not carry a user name or password"),
        ("https:///path", "has no host name"),
        ("https://example.com:99999/", "is not a valid URL"),
        ("https://example.com/a b", "must not contain spaces"),
    ],
)
async def test_bad_urls_are_refused_before_any_request(engine: Engine, url: str, message: str):
    out = await fetch(engine, url)
    assert out.status == "error"
    assert message in out.text()


def test_url_problem_accepts_ordinary_urls():
    assert url_problem("https://docs.python.org/3/library/asyncio.html#top") is None
    assert url_problem("http://127.0.0.1:8080/?q=1") is None


# --------------------------------------------------------------------------- cache


async def test_a_second_fetch_within_15_minutes_is_served_from_the_cache(
    engine: Engine, web: FakeWeb
):
    now = [1000.0]
    engine.services["web"] = WebServices(timeout=3.0, clock=lambda: now[0])
    first = await fetch(engine, f"{web.url}/article", prompt="one")
    second = await fetch(engine, f"{web.url}/article#rules", prompt="another question")
    assert web.count("/article") == 1
    assert first.meta and first.meta["cached"] is False
    assert second.meta and second.meta["cached"] is True
    assert "(from the 15-minute cache)" in second.text()
    assert "Answer the prompt from it: another question" in second.text()
    now[0] += 14 * 60
    await fetch(engine, f"{web.url}/article")
    assert web.count("/article") == 1
    now[0] += 2 * 60  # 16 minutes after the first fetch
    third = await fetch(engine, f"{web.url}/article")
    assert web.count("/article") == 2
    assert third.meta and third.meta["cached"] is False


async def test_errors_are_not_cached(engine: Engine, web: FakeWeb):
    await fetch(engine, f"{web.url}/later")
    web.page("/later", "<p>now it exists</p>")
    out = await fetch(engine, f"{web.url}/later")
    assert out.status == "success" and "now it exists" in out.text()
    assert web.count("/later") == 2


# --------------------------------------------------------------------------- progress


async def test_progress_reports(engine: Engine, web: FakeWeb, bridge: ScriptedBridge):
    updates: list[ToolUseUpdate] = []
    await fetch(engine, f"{web.url}/article", updates=updates)
    progress = [u.progress for u in updates if isinstance(u, ProgressUpdate)]
    assert {p.type for p in progress} == {"WebFetchProgress"}
    assert progress[0].message == f"Fetching {web.url}/article"
    assert any(p.message.startswith("Read ") and "extracting text" in p.message for p in progress)
    assert bridge.progress[0].kind == "begin"
    assert bridge.progress[0].title == f"WebFetch: fetching {web.url}/article"


# --------------------------------------------------------------------------- the prompt


async def test_the_prompt_is_applied_by_the_small_model(engine: Engine, web: FakeWeb):
    model = FakeModel("Each value has one owner; values drop at scope end.")
    engine.services["model"] = model
    out = await fetch(engine, f"{web.url}/article", prompt="List the ownership rules.")
    assert out.status == "success", out.text()
    assert out.text() == (
        f"URL: {web.url}/article\nTitle: Ownership | The Guide\nContent-Type: text/html\n\n"
        "Each value has one owner; values drop at scope end."
    )
    (call,) = model.calls
    assert call["small"] is True and call["max_tokens"] == 2048
    assert "untrusted data" in str(call["system"])
    prompt = str(call["prompt"])
    assert prompt.startswith(f"Web page: {web.url}/article\nTitle: Ownership | The Guide\n")
    assert "## Rules" in prompt and prompt.endswith(
        "Question about this page: List the ownership rules."
    )


async def test_a_failing_model_falls_back_to_the_page(engine: Engine, web: FakeWeb):
    engine.services["model"] = FakeModel(fail=True)
    out = await fetch(engine, f"{web.url}/article", prompt="rules?")
    assert out.status == "success"
    assert "# What is ownership?" in out.text()
    assert "The small model failed to answer, so here is the page itself" in out.text()


async def test_the_model_reads_at_most_the_input_limit(
    engine: Engine, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(web_fetch, "MAX_MODEL_INPUT_CHARS", 1000)
    web.page("/long.txt", "word " * 5000, "text/plain")
    model = FakeModel()
    engine.services["model"] = model
    await fetch(engine, f"{web.url}/long.txt")
    prompt = str(model.calls[0]["prompt"])
    assert "[… the page goes on; it was cut here]" in prompt
    assert len(prompt) < 1500


# --------------------------------------------------------------------------- Jina Reader


@pytest.fixture
def jina(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJina]:
    with FakeJina(JINA_KEY) as fake:
        monkeypatch.setenv("JINA_API_KEY", JINA_KEY)
        monkeypatch.setenv("JINA_BASE_URL", fake.url)
        yield fake  # type: ignore[misc]


async def test_jina_reader_extracts_when_its_key_is_set(
    engine: Engine, web: FakeWeb, jina: FakeJina
):
    url = f"{web.url}/article"
    jina.pages[url] = JinaPage("Ownership (Jina)", "# Ownership\n\nJina's markdown of the page.")
    out = await fetch(engine, url)
    assert out.status == "success", out.text()
    text = out.text()
    assert "Title: Ownership (Jina)" in text and "Jina's markdown of the page." in text
    assert "Content-Type: text/markdown (via Jina Reader)" in text
    assert web.count() == 0
    (req,) = jina.requests
    assert req.handler.path == f"/{url}"
    assert req.headers["authorization"] == f"Bearer {JINA_KEY}"
    assert req.headers["accept"] == "application/json"
    assert req.headers["x-return-format"] == "markdown"
    assert JINA_KEY not in text


@pytest.mark.parametrize("failure", ["status", "unknown page", "bad key"])
async def test_jina_failures_fall_back_to_local_extraction(
    engine: Engine, web: FakeWeb, jina: FakeJina, monkeypatch: pytest.MonkeyPatch, failure: str
):
    url = f"{web.url}/article"
    jina.pages[url] = JinaPage("t", "jina content")
    if failure == "status":
        jina.fail_status = 503
    elif failure == "unknown page":
        jina.pages.clear()
    else:
        monkeypatch.setenv("JINA_API_KEY", "jina_wrong_key_42")
    out = await fetch(engine, url)
    assert out.status == "success", out.text()
    text = out.text()
    assert "# What is ownership?" in text and "jina content" not in text
    assert "Note: Jina Reader failed (HTTP " in text and "the page was extracted locally" in text
    assert JINA_KEY not in text and "jina_wrong_key_42" not in text
    assert web.count("/article") == 1


async def test_jina_landing_on_another_host_is_a_redirect(
    engine: Engine, web: FakeWeb, jina: FakeJina
):
    url = f"{web.url}/article"
    jina.pages[url] = JinaPage("t", "content", final_url="https://elsewhere.example/landing")
    out = await fetch(engine, url)
    assert out.text().startswith(
        f"REDIRECT to another host: {url} redirects to https://elsewhere.example/landing."
    )


async def test_private_urls_are_not_sent_to_a_public_jina(
    engine: Engine, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    # With the hosted Reader (the default base URL), a 127.0.0.1 page is fetched locally:
    # nothing leaves the machine.
    monkeypatch.setenv("JINA_API_KEY", JINA_KEY)
    monkeypatch.delenv("JINA_BASE_URL", raising=False)
    out = await fetch(engine, f"{web.url}/article")
    assert out.status == "success"
    assert "via Jina" not in out.text() and "Jina Reader failed" not in out.text()
    assert web.count("/article") == 1


# --------------------------------------------------------------------------- permissions


@pytest.fixture
def asking_engine(engine: Engine) -> Engine:
    engine.set_mode("default")
    return engine


async def test_the_first_fetch_of_a_host_asks_and_allow_for_session_sticks(
    asking_engine: Engine, bridge: ScriptedBridge, web: FakeWeb
):
    web.page("/other", "<p>other page</p>")
    bridge.answers = ["allow_session"]
    first = await fetch(asking_engine, f"{web.url}/article")
    assert first.status == "success", first.text()
    (request,) = bridge.requests
    assert request.tool_name == "WebFetch"
    assert request.message == f"WebFetch: fetch {web.url}/article"
    assert request.session_rule == "WebFetch(domain:127.0.0.1)"
    assert request.always_rule == "WebFetch(domain:127.0.0.1)"
    assert first.decision_source == "user_temporary"
    second = await fetch(asking_engine, f"{web.url}/other")
    assert second.status == "success"
    assert len(bridge.requests) == 1  # no second question for the same host


async def test_allow_once_asks_again_next_time(
    asking_engine: Engine, bridge: ScriptedBridge, web: FakeWeb
):
    bridge.answers = ["allow_once", "allow_once"]
    await fetch(asking_engine, f"{web.url}/article")
    await fetch(asking_engine, f"{web.url}/article?page=2")
    assert len(bridge.requests) == 2


async def test_a_rejected_fetch_sends_no_request(
    asking_engine: Engine, bridge: ScriptedBridge, web: FakeWeb
):
    bridge.answers = ["reject"]
    out = await fetch(asking_engine, f"{web.url}/article")
    assert out.status == "rejected" and out.decision_source == "user_reject"
    assert web.count() == 0


async def test_domain_rules_allow_and_deny_without_asking(
    asking_engine: Engine, bridge: ScriptedBridge, web: FakeWeb
):
    pctx = asking_engine.permission_context
    pctx.allow.append(parse_rule("WebFetch(domain:127.0.0.1)", origin="project"))
    out = await fetch(asking_engine, f"{web.url}/article")
    assert out.status == "success" and bridge.requests == []
    pctx.deny.append(parse_rule("WebFetch(domain:127.0.0.1)", origin="project"))
    out = await fetch(asking_engine, f"{web.url}/article?x=1")
    assert out.status == "rejected"
    assert "denied by the rule WebFetch(domain:127.0.0.1)" in out.text()
    assert bridge.requests == [] and web.count() == 1


def test_domain_rules_cover_subdomains(engine: Engine):
    from codev_ls.tools.web_fetch import _matching_rule

    rules = [parse_rule("WebFetch(domain:python.org)")]
    assert _matching_rule(rules, "https://docs.python.org/3/") is not None
    assert _matching_rule(rules, "http://python.org:8080/") is not None
    assert _matching_rule(rules, "https://notpython.org/") is None
    assert _matching_rule(rules, "https://python.org.evil.com/") is None
    assert _matching_rule([parse_rule("WebFetch")], "https://any.host/") is not None
    assert _matching_rule([parse_rule("Read(domain:python.org)")], "https://python.org/") is None


def test_traits_and_subject(engine: Engine):
    tool = WebFetchTool()
    parsed = tool.parse_input({"url": "https://docs.python.org/3/", "prompt": "p"})
    assert tool.is_read_only(parsed) and tool.is_concurrency_safe(parsed)
    subject = tool.permission_subject(parsed, engine.context())
    assert subject.url == "https://docs.python.org/3/"
    assert subject.summary == "fetch https://docs.python.org/3/"
    assert "WebFetch" in [t.name for t in engine.tool_pool()]


async def test_a_page_the_converter_chokes_on_is_read_as_text(
    engine: Engine, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    from codev_ls.tools import _html

    def broken(html: str, base_url: str = "") -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(_html, "html_to_markdown", broken)
    out = await fetch(engine, f"{web.url}/article")
    assert out.status == "success", out.text()
    assert "The HTML could not be converted to Markdown; this is its text only." in out.text()
    assert "What is ownership?" in out.text() and "tracking" not in out.text()


# --------------------------------------------------------------------------- HTML → Markdown


def test_markdown_keeps_structure_and_drops_chrome():
    from codev_ls.tools._html import html_to_markdown

    page = html_to_markdown(
        """<html><head><title> A  page </title><base href="https://cdn.example.org/docs/"></head><body>
        <div id="cookie-banner">We use cookies</div>
        <header><a href="/">Site</a></header>
        <div class="content">
          <h1>Main title</h1>
          <p hidden>secret hidden text</p>
          <p style="display: none">also hidden</p>
          <p>Read <a href="guide.html">the guide</a> or <a href="javascript:void(0)">click</a>.</p>
          <p><img src="data:image/png;base64,AAAA" alt="inline pixel"> <img src="pic.png" alt="A picture"></p>
          <h3>Table</h3>
          <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
          <aside>Sponsored</aside>
        </div>
        <article><p>Short teaser in a box.</p></article>
        <footer>Copyright</footer>
        </body></html>""",
        "https://example.org/start",
    )
    md = page.markdown
    assert page.title == "A page"
    assert md.startswith("# Main title")
    assert "[the guide](https://cdn.example.org/docs/guide.html)" in md
    assert "click" in md and "javascript:" not in md
    assert "![A picture](https://cdn.example.org/docs/pic.png)" in md
    assert "inline pixel" in md and "data:image" not in md
    assert "### Table" in md and "| k | v |" in md and "| a | 1 |" in md
    # The small article is not mistaken for the page's content.
    assert "Short teaser" in md
    for chrome in (
        "We use cookies",
        "Site",
        "Sponsored",
        "Copyright",
        "secret hidden",
        "also hidden",
    ):
        assert chrome not in md


async def test_settings_rules_and_always_allow_through_the_real_permission_system(
    workspace: Path, web: FakeWeb
):
    from codev_ls.app import build_engine

    settings = workspace / ".codev" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["WebFetch(domain:localhost)"]}}))
    bridge = ScriptedBridge(answers=["allow_always"])
    engine = build_engine(workspace, bridge, start_mcp=False)
    engine.services["web"] = WebServices(timeout=3.0)
    try:
        denied = await fetch(engine, f"http://localhost:{web.port}/article")
        assert denied.status == "rejected" and "WebFetch(domain:localhost)" in denied.text()
        first = await fetch(engine, f"{web.url}/article")
        assert first.status == "success" and first.decision_source == "user_permanent"
        assert len(bridge.requests) == 1
        saved = json.loads((workspace / ".codev" / "settings.local.json").read_text())
        assert "WebFetch(domain:127.0.0.1)" in saved["permissions"]["allow"]
        again = await fetch(engine, f"{web.url}/article?again=1")
        assert again.status == "success" and len(bridge.requests) == 1
    finally:
        await engine.aclose()


async def test_the_prompt_goes_to_the_small_model_of_the_configured_provider(
    workspace: Path, web: FakeWeb, monkeypatch: pytest.MonkeyPatch
):
    """The real model layer (Anthropic provider) against a fake Messages API on 127.0.0.1."""
    # The fake Messages API arrives with the model layer (`model` branch); skipped until then.
    anthropic_api = pytest.importorskip("tests.fakes.anthropic_api")
    from codev_ls.app import build_engine

    with anthropic_api.FakeAnthropic() as api:
        api.push(anthropic_api.reply("Each value has one owner; it is dropped at scope end."))
        monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_api.API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("CODEV_SMALL_MODEL", "claude-small-for-tests")
        engine = build_engine(
            workspace, ScriptedBridge(), mode="bypassPermissions", start_mcp=False
        )
        engine.services["web"] = WebServices(timeout=3.0)
        try:
            assert engine.services.get("model") is not None
            out = await fetch(engine, f"{web.url}/article", prompt="What are the rules?")
        finally:
            await engine.aclose()
    assert out.status == "success", out.text()
    assert out.text() == (
        f"URL: {web.url}/article\nTitle: Ownership | The Guide\nContent-Type: text/html\n\n"
        "Each value has one owner; it is dropped at scope end."
    )
    assert not api.problems  # the request matched the Messages API schema
    (body,) = api.bodies
    assert body["model"] == "claude-small-for-tests"
    assert body["max_tokens"] == 2048
    assert "untrusted data" in anthropic_api.system_text(body)
    text = body["messages"][0]["content"][0]["text"]
    assert "# What is ownership?" in text and text.endswith(
        "Question about this page: What are the rules?"
    )
    assert anthropic_api.API_KEY not in out.text()
