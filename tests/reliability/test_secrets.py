"""API keys never leave through logs, outcomes, error messages or the audit log.

Each provider runs with a canary key against a hostile service (``tests/fakes/hostile.py``)
that fails in every way — error statuses whose bodies quote the request (URL,
headers, body) back, HTML error pages, garbage, redirects carrying the query
string, hangs, dropped connections — and against a closed port. Everything the
engine produced is then searched for the canary: the outcome as the LSP sends
it, every log record at DEBUG level (httpx and httpcore included) with its
traceback, the permission audit log, and what went to the editor (messages,
progress). The terminal runner is checked too, with ``--log-level DEBUG``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codev_ls.app import build_engine
from codev_ls.bridge import ScriptedBridge
from tests.fakes.hostile import MODES, HostileServer

CLOSED = "http://127.0.0.1:9"


@dataclass
class Provider:
    name: str
    key_var: str
    canary: str
    url_vars: tuple[str, ...]
    tool: str
    input: dict[str, Any]
    extra_env: dict[str, str] = field(default_factory=dict)


PROVIDERS = [
    Provider(
        "tavily",
        "TAVILY_API_KEY",
        "tvly-CANARYtavily7f3a9c21",
        ("TAVILY_BASE_URL",),
        "WebSearch",
        {"query": "python asyncio"},
    ),
    Provider(
        "jina",
        "JINA_API_KEY",
        "jina_CANARYjina5e8d0b44",
        ("JINA_BASE_URL",),
        "WebFetch",
        {"url": "{url}/page", "prompt": "what does it say?"},
    ),
    Provider(
        "amap",
        "AMAP_API_KEY",
        "CANARYamap0c1d2e3f4a5b6c7d",
        ("AMAP_BASE_URL", "AMAP_LOCATE_BASE_URL"),
        "Location",
        {"action": "geocode", "location": "北京市朝阳区建国路88号"},
    ),
    Provider(
        "google",
        "GOOGLE_MAPS_API_KEY",
        "AIzaCANARYgoogle9b8a7f6e5d4c",
        ("GOOGLE_MAPS_BASE_URL", "GOOGLE_GEOLOCATION_BASE_URL"),
        "Location",
        {"action": "search_places", "location": "Times Square, New York", "query": "coffee"},
    ),
]
KEY_VARS = [p.key_var for p in PROVIDERS] + ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]


class Capture(logging.Handler):
    """Every log record, formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def capture() -> Iterator[Capture]:
    handler = Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name in ("httpx", "httpcore", "codev_ls"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(old_level)
    for name in ("httpx", "httpcore", "codev_ls"):
        logging.getLogger(name).setLevel(logging.NOTSET)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer().start()
    yield server  # type: ignore[misc]
    server.stop()


def _env(monkeypatch: pytest.MonkeyPatch, provider: Provider, base: str) -> None:
    for var in ("TAVILY_BASE_URL", "JINA_BASE_URL", "CODEV_SEARXNG_URL"):
        monkeypatch.setenv(var, CLOSED)
    for var in (
        "AMAP_BASE_URL",
        "AMAP_LOCATE_BASE_URL",
        "GOOGLE_MAPS_BASE_URL",
        "GOOGLE_GEOLOCATION_BASE_URL",
        "IP_API_BASE_URL",
        "IPINFO_BASE_URL",
        "IPAPI_CO_BASE_URL",
    ):
        monkeypatch.setenv(var, CLOSED)
    for var in provider.url_vars:
        monkeypatch.setenv(var, base)
    monkeypatch.setenv(provider.key_var, provider.canary)
    # Short timeouts: the hostile service answers at once except in "hang" mode, which
    # only has to outlast them.
    monkeypatch.setenv("CODEV_WEB_TIMEOUT", "1")
    monkeypatch.setenv("CODEV_LOCATION_TIMEOUT", "1")
    monkeypatch.setenv("CODEV_LOCATION_WIFI", "0")
    monkeypatch.setenv("GOOGLE_MAPS_PAGETOKEN_DELAY", "0.01")


def _leaks(canary: str, places: dict[str, str]) -> list[str]:
    """Where the canary (or its distinctive middle) shows up."""
    middle = canary[4:-4]
    return [name for name, text in places.items() if canary in text or middle in text]


async def _run_all_modes(
    provider: Provider, server: HostileServer, workspace: Path, tmp_path: Path
) -> dict[str, str]:
    """Run the provider's tool once per failure mode; everything it produced, by place."""
    bridge = ScriptedBridge(default_answer="allow_once")
    # build_engine: what the server and the CLI run (it installs the log redaction).
    engine = build_engine(workspace, bridge, mode="bypassPermissions", start_mcp=False)
    places: dict[str, str] = {}
    try:
        for mode in [*MODES, "closed-port"]:
            if mode == "closed-port":
                for var in provider.url_vars:
                    os.environ[var] = CLOSED
            else:
                server.mode = mode
            tool_input = json.loads(json.dumps(provider.input).replace("{url}", server.url))
            outcome = await engine.run_tool(provider.tool, tool_input)
            server.release()
            places[f"outcome ({mode})"] = json.dumps(outcome.to_protocol(), ensure_ascii=False)
            assert outcome.status in ("success", "error"), outcome
            if mode in ("401", "403", "500") and provider.name != "jina":
                # The error names the service and what went wrong, for the model and the user.
                assert outcome.status == "error" or outcome.is_error, (mode, outcome)
    finally:
        await engine.aclose()
    audit = engine.session.data_dir
    places["audit log"] = "\n".join(p.read_text() for p in audit.rglob("*.jsonl"))
    assert places["audit log"], "no audit log was written"
    places["editor messages"] = json.dumps(bridge.messages, ensure_ascii=False)
    places["progress"] = json.dumps(
        [(e.kind, e.title, e.message) for e in bridge.progress], ensure_ascii=False
    )
    places["requests the service saw"] = ""  # filled by the caller: the key *must* be there
    return places


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.name for p in PROVIDERS])
async def test_no_key_in_outcomes_logs_or_audit(
    provider: Provider,
    hostile: HostileServer,
    capture: Capture,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _env(monkeypatch, provider, hostile.url)
    places = await _run_all_modes(provider, hostile, workspace, tmp_path)
    places["logs"] = "\n".join(capture.lines)
    assert capture.lines, "nothing was logged: the log check would be vacuous"
    # Not vacuous: the key really was sent to the service (in a header, query or body).
    sent = "\n".join(
        f"{r.path}?{r.query} {r.headers} {r.body.decode('utf-8', 'replace')}"
        for r in hostile.requests
    )
    assert provider.canary in sent, f"{provider.name}: the canary key was never sent"
    places.pop("requests the service saw")
    leaks = _leaks(provider.canary, places)
    assert not leaks, f"{provider.name}: the API key leaked into {leaks}: " + "; ".join(
        places[p][:3000] for p in leaks
    )


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.name for p in PROVIDERS])
def test_no_key_on_the_terminal(
    provider: Provider,
    hostile: HostileServer,
    workspace: Path,
    codev_cmd: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``codev-ls tool`` with DEBUG logs: neither stdout nor stderr carries the key."""
    _env(monkeypatch, provider, hostile.url)
    outputs = {}
    for mode in ("401", "html", "redirect"):
        hostile.mode = mode
        tool_input = json.dumps(provider.input).replace("{url}", hostile.url)
        done = subprocess.run(
            [
                *codev_cmd,
                "--log-level",
                "DEBUG",
                "tool",
                provider.tool,
                tool_input,
                "--cwd",
                str(workspace),
                "--mode",
                "bypassPermissions",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
        )
        outputs[f"stdout ({mode})"] = done.stdout
        outputs[f"stderr ({mode})"] = done.stderr
        assert done.stdout.strip(), done.stderr[-2000:]
    leaks = _leaks(provider.canary, outputs)
    assert not leaks, f"{provider.name}: the key leaked into {leaks}: " + "; ".join(
        outputs[p][-3000:] for p in leaks
    )


def test_redact_masks_whole_and_cut_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from codev_ls.engine.secrets import redact

    key = "sk-ant-api03-CANARYabcdefghijklmnop"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789")
    monkeypatch.setenv("SHORT_API_KEY", "abc")  # too short to mask safely
    assert redact(f"key={key}&x=1") == "key=***&x=1"
    assert redact(f"Bearer {key[:20]}… (cut)") == "Bearer ***… (cut)"
    assert redact(f"{key}{key} tok-0123456789") == "****** ***"
    assert redact("sk-ant-api03-CA is the public prefix") == "sk-ant-api03-CA is the public prefix"
    assert redact("abc stays") == "abc stays"


async def test_outcomes_keep_their_shape(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that prints a key (here: Bash echoing the environment) returns it masked."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-CANARYshape1234567")
    engine = build_engine(
        workspace, ScriptedBridge(default_answer="allow_once"), mode="bypassPermissions",
        start_mcp=False,
    )  # fmt: skip
    try:
        outcome = await engine.run_tool("Bash", {"command": "echo key=tvly-CANARYshape1234567"})
    finally:
        await engine.aclose()
    assert outcome.status == "success"
    assert "key=***" in outcome.text() and "CANARY" not in outcome.text()


# --------------------------------------------------------------------------- model providers

MODEL_PROVIDERS = [
    Provider(
        "anthropic",
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-CANARYanthropic0123456789abcdef",
        ("ANTHROPIC_BASE_URL",),
        "chat",
        {},
    ),
    Provider(
        "openai",
        "OPENAI_API_KEY",
        "sk-proj-CANARYopenai0123456789abcdef",
        ("OPENAI_BASE_URL",),
        "chat",
        {},
        {"CODEV_PROVIDER": "openai"},
    ),
]


def _model_env(monkeypatch: pytest.MonkeyPatch, provider: Provider, base: str) -> None:
    _env(monkeypatch, provider, base)
    for key, value in provider.extra_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CODEV_MODEL_MAX_RETRIES", "0")
    monkeypatch.setenv("CODEV_MODEL", "canary-model")
    monkeypatch.setenv("CODEV_MODEL_TIMEOUT", "1")


@pytest.mark.parametrize("provider", MODEL_PROVIDERS, ids=[p.name for p in MODEL_PROVIDERS])
async def test_model_providers_never_leak_their_key(
    provider: Provider,
    hostile: HostileServer,
    capture: Capture,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A one-shot completion and WebFetch's prompt (the small model) through every failure."""
    from codev_ls.model.errors import ModelError
    from tests.fakes.web import FakeWeb

    _model_env(monkeypatch, provider, hostile.url)
    places: dict[str, str] = {}
    with FakeWeb() as web:
        web.page("/doc", "<html><body><h1>Doc</h1><p>Some text.</p></body></html>")
        bridge = ScriptedBridge(default_answer="allow_once")
        engine = build_engine(workspace, bridge, mode="bypassPermissions", start_mcp=False)
        try:
            model = engine.services["model"]
            for mode in MODES:
                hostile.mode = mode
                try:
                    answer = await asyncio.wait_for(model.complete("system", "hello"), 60)
                    places[f"answer ({mode})"] = answer
                except ModelError as exc:
                    # What the user and the model read (the SDK's own exception, kept as the
                    # cause, is only ever printed in a traceback, and logs are masked).
                    places[f"error ({mode})"] = f"{type(exc).__name__}: {exc}"
                hostile.release()
                fetched = await engine.run_tool(
                    "WebFetch", {"url": f"{web.url}/doc", "prompt": "what is it?"}
                )
                hostile.release()
                places[f"WebFetch outcome ({mode})"] = json.dumps(
                    fetched.to_protocol(), ensure_ascii=False
                )
        finally:
            await engine.aclose()
    places["logs"] = "\n".join(capture.lines)
    places["editor messages"] = json.dumps(bridge.messages, ensure_ascii=False)
    # The audit log and every other file of the session (WebFetch's decisions are logged).
    written = [p for p in engine.session.data_dir.rglob("*") if p.is_file()]
    assert any(p.name == "permissions.jsonl" for p in written), "no audit log was written"
    places.update({str(p): p.read_text(errors="replace") for p in written})
    sent = "\n".join(f"{r.headers} {r.query}" for r in hostile.requests)
    assert provider.canary in sent, f"{provider.name}: the canary key was never sent"
    assert any(k.startswith("error") for k in places), places.keys()
    leaks = _leaks(provider.canary, places)
    assert not leaks, f"{provider.name}: the API key leaked into {leaks}: " + "; ".join(
        places[p][:3000] for p in leaks
    )


@pytest.mark.parametrize("provider", MODEL_PROVIDERS, ids=[p.name for p in MODEL_PROVIDERS])
def test_chat_on_the_terminal_never_shows_the_key(
    provider: Provider,
    hostile: HostileServer,
    workspace: Path,
    codev_cmd: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _model_env(monkeypatch, provider, hostile.url)
    outputs = {}
    for mode in ("401", "garbage"):
        hostile.mode = mode
        done = subprocess.run(
            [*codev_cmd, "--log-level", "DEBUG", "chat", "say hi", "--json", "--cwd",
             str(workspace)],
            capture_output=True, text=True, timeout=120, env=dict(os.environ),
        )  # fmt: skip
        outputs[f"stdout ({mode})"] = done.stdout
        outputs[f"stderr ({mode})"] = done.stderr
        assert done.stdout.strip() or done.stderr.strip()
    sent = "\n".join(f"{r.headers}" for r in hostile.requests)
    assert provider.canary in sent, "the chat never reached the provider"
    leaks = _leaks(provider.canary, outputs)
    assert not leaks, f"{provider.name}: the key leaked into {leaks}: " + "; ".join(
        outputs[p][-3000:] for p in leaks
    )


# --------------------------------------------------------------------------- over LSP

LSP_MODES = ("401", "403", "500", "html", "garbage", "redirect", "close", "hang")


def _lsp_env(model: Provider, base: str, config: Path) -> dict[str, str]:
    """Every provider's canary key, every service at the hostile server, DEBUG logs."""
    env = dict(os.environ)
    for provider in [*PROVIDERS, model]:
        env[provider.key_var] = provider.canary
        for var in provider.url_vars:
            env[var] = base
    env.update(model.extra_env)
    for var in ("CODEV_SEARXNG_URL", "IP_API_BASE_URL", "IPINFO_BASE_URL", "IPAPI_CO_BASE_URL"):
        env[var] = CLOSED
    env.update(
        CODEV_CONFIG_DIR=str(config),
        CODEV_LOG_LEVEL="DEBUG",
        CODEV_WEB_TIMEOUT="1",
        CODEV_LOCATION_TIMEOUT="1",
        CODEV_LOCATION_WIFI="0",
        GOOGLE_MAPS_PAGETOKEN_DELAY="0.01",
        CODEV_MODEL_MAX_RETRIES="0",
        CODEV_MODEL="canary-model",
        CODEV_MODEL_TIMEOUT="1",
    )
    return env


@pytest.mark.parametrize("model", MODEL_PROVIDERS, ids=[p.name for p in MODEL_PROVIDERS])
async def test_no_key_reaches_the_editor(
    model: Provider, hostile: HostileServer, workspace: Path, tmp_path: Path
) -> None:
    """The real server over stdio, every key a canary, every service hostile: each tool
    provider's error paths and the model's (``codev/chat``), side by side, in every failure
    mode. Then every message the editor received — results, JSON-RPC error answers,
    ``window/logMessage`` (DEBUG), ``window/showMessage``, progress, chat events — the
    server's stderr, and every file it wrote (audit log, sessions) are searched."""
    from tests.reliability.lsp_client import LspProcess

    config = tmp_path / "config"
    stderr_path = tmp_path / "server.stderr"
    with stderr_path.open("wb") as stderr:
        server = await LspProcess.start(
            _lsp_env(model, hostile.url, config), stderr=stderr, record=True
        )
    server.auto_answer.update({"window/workDoneProgress/create": None,
                               "window/showMessageRequest": {"title": "Allow once"}})  # fmt: skip
    errors = 0
    try:
        await server.initialize(
            workspace,
            {"window": {"workDoneProgress": True}},
            {"permissionMode": "bypassPermissions"},
        )
        for mode in LSP_MODES:
            hostile.mode = mode
            calls = [
                server.send("codev/runTool", {"name": p.tool, "input": json.loads(
                    json.dumps(p.input).replace("{url}", hostile.url))}) for p in PROVIDERS
            ] + [server.send("codev/chat", {"prompt": f"hello ({mode})"})]  # fmt: skip
            answers = await asyncio.wait_for(asyncio.gather(*calls), 60)
            hostile.release()
            for answer in answers[:-1]:
                assert answer["result"]["status"] in ("success", "error"), (mode, answer)
            assert answers[-1]["result"]["stopReason"] == "error", (mode, answers[-1])
        # JSON-RPC error answers: requests malformed as requests, on the same paths.
        for method, params in [("codev/chat", {"prompt": 5}), ("codev/runTool", {"name": 7})]:
            answer = await server.send(method, params)
            errors += "error" in answer
    finally:
        await server.close()
    assert errors == 2, "the malformed requests got no error answers"
    sent = "\n".join(
        f"{r.path}?{r.query} {r.headers} {r.body.decode('utf-8', 'replace')}"
        for r in hostile.requests
    )
    for provider in [*PROVIDERS, model]:
        assert provider.canary in sent, f"{provider.name}: the canary key was never sent"
    assert server.received is not None
    methods = [json.loads(body).get("method") for body in server.received]
    assert "window/logMessage" in methods and "$/progress" in methods, set(methods)
    places = {f"message {i} ({m or 'answer'})": body.decode("utf-8", "replace")
              for i, (m, body) in enumerate(zip(methods, server.received, strict=True))}  # fmt: skip
    places["the server's stderr"] = stderr_path.read_text(errors="replace")
    # Not vacuous: the hostile service's echo of the key reached the editor and the log,
    # masked — without the mask these would be leaks.
    assert any("***" in text for where, text in places.items() if where.startswith("message"))
    assert "***" in places["the server's stderr"]
    assert "DEBUG" in places["the server's stderr"], "no DEBUG log: the check would be vacuous"
    written = [p for p in config.rglob("*") if p.is_file()]
    assert any(p.name == "permissions.jsonl" for p in written), "no audit log was written"
    places.update({str(p): p.read_text(errors="replace") for p in written})
    for provider in [*PROVIDERS, model]:
        leaks = _leaks(provider.canary, places)
        assert not leaks, f"{provider.name}: the API key reached {leaks}: " + "; ".join(
            places[p][:2000] for p in leaks
        )
