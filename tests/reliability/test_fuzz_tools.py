"""Random tool inputs for every tool's schema, through the whole engine lifecycle:
never a crash, always an outcome.

Inputs are drawn from each tool's own JSON schema (the one the model gets),
with strings biased towards what matters — files of every kind in the
workspace (text, binary, empty, CRLF, invalid UTF-8, PDF, image, notebook,
folder, symlink loop, missing), odd regexes and globs, unicode — and then
mutated: a field of the wrong type, an unknown key, a missing required key, a
raw value that is not an object at all.

The outside services run as the fakes of ``tests/fakes`` (SearXNG, Amap, Google
Maps, IP geolocation); the rest of the network is pointed at a closed port.
Read-only tools run in ``default`` mode; the others in ``acceptEdits`` with
every prompt rejected, so Write/Edit/NotebookEdit run only inside the workspace
and Bash never runs a random command.

For every use: the outcome has one of the four statuses, its content is text
or content blocks that serialise to JSON, and no stage crashed (an exception
inside the engine or a tool is logged at ERROR with a traceback; there must be
none).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import Phase, event, find, given, settings
from hypothesis import strategies as st

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine import registry
from codev_ls.engine.outcome import ToolOutcome
from codev_ls.engine.runtime import Engine
from codev_ls.engine.tool import InputError
from tests.fakes.amap import FakeAmap
from tests.fakes.google_maps import FakeGoogleMaps
from tests.fakes.ipgeo import FakeIpService
from tests.fakes.pdfgen import make_pdf
from tests.fakes.searxng import Doc, FakeSearxng
from tests.reliability.budget import fuzz_settings

CLOSED = "http://127.0.0.1:9"
STATUSES = {"success", "error", "rejected", "interrupted"}


# --------------------------------------------------------------------------- the workspace


def make_files(ws: Path) -> list[str]:
    """Files of every kind a tool may meet; returns their paths (and some that do not exist)."""
    from PIL import Image

    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("def main():\n    return 42\n" * 50)
    (ws / "empty.txt").write_text("")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (ws / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (ws / "binary.bin").write_bytes(bytes(range(256)) * 8)
    (ws / "long_line.txt").write_text("x" * 200_000)
    (ws / "unicode 名字 ✓.md").write_text("# 标题\n\nemoji 🎉 and RTL עברית\n")
    (ws / "doc.pdf").write_bytes(make_pdf(["page one\nhello", "page two"]))
    Image.new("RGB", (8, 8), (200, 10, 10)).save(ws / "pic.png")
    (ws / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "id": "c1",
                        "metadata": {},
                        "source": "x = 1",
                        "outputs": [],
                        "execution_count": None,
                    },
                    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# hi"},
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    (ws / "broken.ipynb").write_text("{not json")
    (ws / "loop").symlink_to(ws / "loop")
    (ws / "dir").mkdir()
    names = [
        "src/main.py", "empty.txt", "crlf.txt", "latin1.txt", "binary.bin", "long_line.txt",
        "unicode 名字 ✓.md", "doc.pdf", "pic.png", "nb.ipynb", "broken.ipynb", "loop", "dir",
        "missing.txt", "dir/new.txt", "src",
    ]  # fmt: skip
    return [str(ws / n) for n in names] + [str(ws), "relative.txt", "", "~/x", "/"]


# --------------------------------------------------------------------------- strategies

# Every code point, lone surrogates included: JSON can carry "\ud800".
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=20)
SAFE_NAME = st.text(alphabet=string.ascii_letters + string.digits + "_- ", min_size=1, max_size=12)
ODD_TEXT = st.sampled_from(
    ["", " ", "\n", "\t", "*", "**", "**/*", "[", "(", "\\", "$", "{a,b}", "\x00", "\ufeff",
     "../", "..", "\u202e", "a" * 5000, "%s%n", "'\"", "é", "🎉"]
)  # fmt: skip


def string_for(field: str, paths: list[str], ws: Path) -> st.SearchStrategy[str]:
    text = st.one_of(st.text(max_size=40), ODD_TEXT, ANY_TEXT)
    if "path" in field:
        inside = SAFE_NAME.map(lambda n: str(ws / n))
        return st.one_of(st.sampled_from(paths), inside, text)
    if field in ("pattern", "glob"):
        return st.one_of(
            st.sampled_from(["main", "def", "^x+$", "(?i)HELLO", "a|b", "**/*.py", "*.{py,md}"]),
            text,
        )
    if field in ("old_string", "new_string"):
        return st.one_of(
            st.sampled_from(["one", "two\r\n", "# 标题", "emoji", "x = 1", "return 42"]), text
        )
    if field == "cell_id":
        return st.one_of(st.sampled_from(["c1", "m1", "cell-0", "cell-1"]), text)
    if field in ("url",):
        return st.one_of(st.sampled_from(["http://127.0.0.1:9/x", "https://example.invalid"]), text)
    return text


def from_schema(
    schema: dict[str, Any],
    field: str,
    paths: list[str],
    ws: Path,
    root: dict[str, Any] | None = None,
) -> st.SearchStrategy[Any]:
    """Valid instances of the JSON Schema that pydantic writes for tool inputs, strings
    biased by their field's name (:func:`string_for`).

    Covers what those schemas use — ``$ref`` into ``$defs``, ``const``, ``enum``,
    ``anyOf``/``oneOf``/``allOf``, ``minItems``/``maxItems``, ``minLength``/``maxLength``,
    ``minimum``/``maximum`` (and the exclusive ones) — and is checked against
    ``jsonschema`` by :func:`test_generated_inputs_are_valid`. (hypothesis-jsonschema
    would do this too, but 0.23.1, the latest, fails with today's hypothesis.)
    """
    root = schema if root is None else root

    def sub(part: dict[str, Any], name: str = field) -> st.SearchStrategy[Any]:
        return from_schema(part, name, paths, ws, root)

    if "$ref" in schema:
        return st.deferred(lambda: sub(_resolve(root, schema["$ref"])))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of(*(sub(s) for s in schema[key]))
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(root, part["$ref"]) if "$ref" in part else part)
        return sub(merged | {k: v for k, v in schema.items() if k != "allOf"})
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*(sub(schema | {"type": k}) for k in kind))
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: sub(v, k) for k, v in props.items() if k in required},
            optional={k: sub(v, k) for k, v in props.items() if k not in required},
        )
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        strategy = string_for(field, paths, ws)
        if low or high is not None:
            fits = strategy.filter(lambda v: low <= len(v) <= (len(v) if high is None else high))
            strategy = st.one_of(fits, st.text(min_size=low, max_size=high or max(low, 30)))
        return strategy
    if kind == "integer":
        low = schema.get("minimum", -(2**40))
        high = schema.get("maximum", 2**40)
        if "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + 1
        if "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - 1
        return st.integers(low, high)
    if kind == "number":
        return st.floats(
            schema.get("minimum", schema.get("exclusiveMinimum")),
            schema.get("maximum", schema.get("exclusiveMaximum")),
            allow_nan=False,
            allow_infinity=False,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", max(low, 5)), max(low, 5))
        items = sub(schema.get("items", {}))
        return st.lists(items, min_size=low, max_size=high)
    return json_values


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    """A local ``$ref`` (``#/$defs/Name``) of ``root``."""
    if not ref.startswith("#/"):
        raise ValueError(f"only local $refs are generated, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


@st.composite
def mutate(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A schema-valid input, broken in one of the ways a model breaks them."""
    value = draw(valid)
    how = draw(st.sampled_from(["wrong_type", "extra_key", "drop_key", "not_an_object", "none"]))
    if how == "not_an_object":
        return draw(json_values.filter(lambda v: not isinstance(v, dict)))
    if not isinstance(value, dict) or how == "none":
        return value
    value = dict(value)
    if how == "wrong_type" and value:
        key = draw(st.sampled_from(sorted(value)))
        value[key] = draw(json_values)
    elif how == "extra_key":
        value[draw(st.text(min_size=1, max_size=10))] = draw(json_values)
    elif how == "drop_key" and value:
        value.pop(draw(st.sampled_from(sorted(value))))
    return value


# --------------------------------------------------------------------------- the lab


class ErrorLog(logging.Handler):
    """Collects ERROR records with tracebacks: a crash inside the lifecycle."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


class Lab:
    def __init__(self, root: Path, mp: pytest.MonkeyPatch) -> None:
        self.ws = (root / "ws").resolve()
        self.ws.mkdir()
        self.paths = make_files(self.ws)
        self.fakes: list[Any] = []
        searx = FakeSearxng(
            [Doc(f"Result {i}", f"https://docs{i}.example.org/p", f"text {i}") for i in range(8)]
        ).start()
        self.fakes.append(searx)
        mp.setenv("CODEV_SEARXNG_URL", searx.url)
        amap = FakeAmap("amap-fuzz-key")
        google = FakeGoogleMaps("google-fuzz-key")
        mp.setenv("AMAP_BASE_URL", amap.start())
        mp.setenv("AMAP_LOCATE_BASE_URL", CLOSED)
        mp.setenv("AMAP_API_KEY", "amap-fuzz-key")
        mp.setenv("GOOGLE_MAPS_BASE_URL", google.start())
        mp.setenv("GOOGLE_GEOLOCATION_BASE_URL", CLOSED)
        mp.setenv("GOOGLE_MAPS_API_KEY", "google-fuzz-key")
        mp.setenv("GOOGLE_MAPS_PAGETOKEN_DELAY", "0.01")
        ip = FakeIpService("ip-api")
        mp.setenv("IP_API_BASE_URL", ip.start())
        self.fakes += [amap, google, ip]
        for var in ("IPINFO_BASE_URL", "IPAPI_CO_BASE_URL", "TAVILY_BASE_URL", "JINA_BASE_URL"):
            mp.setenv(var, CLOSED)
        mp.setenv("CODEV_LOCATION_WIFI", "0")
        mp.setenv("CODEV_WEB_TIMEOUT", "5")
        # Anything else that tries the network meets a closed proxy, not the internet.
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            mp.setenv(var, CLOSED)
        mp.setenv("NO_PROXY", "127.0.0.1,localhost")
        self.loop = asyncio.new_event_loop()
        self.engines = {
            mode: Engine(
                self.ws,
                ScriptedBridge(default_answer="reject"),
                mode=mode,  # type: ignore[arg-type]
                data_root=root / "data",
            )
            for mode in ("default", "acceptEdits")
        }
        self.tools = {t.name: t for t in self.engines["default"].tool_pool()}
        # Edit and NotebookEdit need a Read of the file first (the stale-read rule).
        for path in self.paths:
            self.loop.run_until_complete(
                self.engines["acceptEdits"].run_tool("Read", {"file_path": path})
            )
        self.errors = ErrorLog()
        logging.getLogger("codev_ls").addHandler(self.errors)

    def run(self, name: str, raw: Any) -> ToolOutcome:
        tool = self.tools[name]
        mode = "default" if _read_only(tool) else "acceptEdits"
        engine = self.engines[mode]
        before = len(self.errors.records)
        outcome = self.loop.run_until_complete(
            asyncio.wait_for(engine.run_tool(name, raw), timeout=90)
        )
        crashes = self.errors.records[before:]
        assert not crashes, f"{name} {raw!r}: {crashes[0].getMessage()}"
        return outcome

    def close(self) -> None:
        logging.getLogger("codev_ls").removeHandler(self.errors)
        for engine in self.engines.values():
            self.loop.run_until_complete(engine.aclose())
        self.loop.close()
        for fake in self.fakes:
            fake.stop()


def _read_only(tool: Any) -> bool:
    return tool.name in {
        "Read", "Glob", "Grep", "WebSearch", "WebFetch", "Location", "TaskOutput",
    }  # fmt: skip


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CODEV_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    lab = Lab(tmp_path_factory.mktemp("tool-fuzz"), mp)
    yield lab
    lab.close()
    mp.undo()


def check_outcome(outcome: ToolOutcome, name: str, raw: Any) -> None:
    event(f"status: {outcome.status}")  # --hypothesis-show-statistics shows the spread
    assert outcome.status in STATUSES
    assert isinstance(outcome.content, str | list)
    json.dumps(outcome.to_protocol())  # what the LSP sends must serialise
    outcome.to_tool_result_block()
    text = outcome.text()
    assert "Traceback (most recent call last)" not in text, (name, raw, text[:500])
    if outcome.status == "error" and not isinstance(raw, dict):
        assert text, (name, raw)


# --------------------------------------------------------------------------- tests


def tool_names() -> list[str]:
    engine = Engine("/", ScriptedBridge())
    return sorted(t.name for t in engine.tool_pool())


TOOLS = tool_names()


def builtin_tools() -> dict[str, Any]:
    """Every tool of the registry's list, whatever its feature flag: name → tool."""
    tools = {}
    for entry in registry.BUILTIN_TOOLS:
        tool = getattr(importlib.import_module(entry.module), entry.cls)()
        tools[tool.name] = tool
    return tools


def test_every_builtin_tool_is_fuzzed() -> None:
    assert set(TOOLS) == set(builtin_tools()), "a built-in tool is left out of the fuzzing"


# Workspace paths for the strategies of the tests below, which run no tool.
NO_WS = Path("/nonexistent/ws")
NO_PATHS = [str(NO_WS / "a.txt"), ""]


@pytest.mark.parametrize("name", TOOLS)
@fuzz_settings(ci=40)
@given(data=st.data())
def test_generated_inputs_are_valid(name: str, data: st.DataObject) -> None:
    """What :func:`from_schema` draws fits the tool's schema (and so reaches the stages
    after the schema check), and the engine's own parsing accepts what its schema allows."""
    tool = builtin_tools()[name]
    schema = tool.input_schema()
    raw = data.draw(from_schema(schema, "", NO_PATHS, NO_WS), label="input")
    jsonschema.validate(raw, schema)
    if _holds_lone_surrogate(raw):
        # A JSON string may carry "\ud800", which no schema keyword can rule out but is
        # not text: every tool refuses it with an error naming the field.
        with pytest.raises(InputError, match="lone UTF-16 surrogate"):
            tool.parse_input(raw)
        return
    tool.parse_input(raw)  # InputError: the schema the model gets allows what is refused


def _holds_lone_surrogate(raw: Any) -> bool:
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _enum_leaves(schema: dict[str, Any], root: dict[str, Any], field: str = "") -> list[tuple]:
    """(field, value) for every ``enum`` and ``const`` value in the schema."""
    if "$ref" in schema:
        return _enum_leaves(_resolve(root, schema["$ref"]), root, field)
    found: list[tuple] = [(field, v) for v in schema.get("enum", [])]
    if "const" in schema:
        found.append((field, schema["const"]))
    for key in ("anyOf", "oneOf", "allOf"):
        for part in schema.get(key, []):
            found += _enum_leaves(part, root, field)
    for name, part in schema.get("properties", {}).items():
        found += _enum_leaves(part, root, name)
    if isinstance(schema.get("items"), dict):
        found += _enum_leaves(schema["items"], root, field)
    return found


def _holds(value: Any, field: str, wanted: Any) -> bool:
    if isinstance(value, dict):
        return value.get(field, object()) == wanted or any(
            _holds(v, field, wanted) for v in value.values()
        )
    if isinstance(value, list):
        return any(_holds(v, field, wanted) for v in value)
    return False


@pytest.mark.parametrize("name", TOOLS)
def test_every_enum_and_const_value_is_drawn(name: str) -> None:
    """Agent's ``isolation: "worktree"``, Grep's output modes, Location's actions...: each
    value the schema names is reachable by the fuzzer."""
    schema = builtin_tools()[name].input_schema()
    strategy = from_schema(schema, "", NO_PATHS, NO_WS)
    for field, wanted in _enum_leaves(schema, schema):
        find(
            strategy,
            lambda v, f=field, w=wanted: _holds(v, f, w),
            settings=settings(max_examples=5000, database=None, phases=[Phase.generate]),
        )


@pytest.mark.parametrize("name", TOOLS)
@fuzz_settings(ci=25)
@given(data=st.data())
def test_schema_inputs(lab: Lab, name: str, data: st.DataObject) -> None:
    schema = lab.tools[name].input_schema()
    raw = data.draw(from_schema(schema, "", lab.paths, lab.ws), label="input")
    outcome = lab.run(name, raw)
    check_outcome(outcome, name, raw)


@pytest.mark.parametrize("name", TOOLS)
@fuzz_settings(ci=15)
@given(data=st.data())
def test_broken_inputs(lab: Lab, name: str, data: st.DataObject) -> None:
    schema = lab.tools[name].input_schema()
    raw = data.draw(mutate(from_schema(schema, "", lab.paths, lab.ws)), label="input")
    outcome = lab.run(name, raw)
    check_outcome(outcome, name, raw)
    if not isinstance(raw, dict):
        assert outcome.status == "error"
