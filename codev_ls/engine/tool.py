"""The Tool abstraction: what every tool the model can call looks like.

A Python rendering of the design's ``Tool<Input, Output, Progress>``. A tool is a
class deriving from :class:`Tool` (the usual way: one module per tool) or an
object made by :func:`build_tool` from plain functions (MCP tools, tests). In
both cases the defaults are the *safe* ones of the design: enabled, not
concurrency-safe, not read-only, not destructive, permission check "allow with
the input unchanged" (the real decision is made by ``permissions.decide``),
classifier input ``''``, user-facing name = name. When in doubt a tool is
assumed to change things.

Errors, by who reads them::

    ToolError            the model should see it and can act on it
    ├── InputError       input that fails the schema or validate_input
    └── StaleReadError   the file changed since the model read it
    ToolRejected         a permission refusal (rejected outcome, with a reason)
    ToolInterrupted      the run was cancelled (interrupted outcome)

Anything else raised by ``call`` is a programming error; ``run_tool_use`` turns
it into an ``error`` outcome so that the server never goes down with a tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.permissions.types import PermissionResult, PermissionSubject


# --------------------------------------------------------------------------- errors


class ToolError(Exception):
    """An error the model reads and can act on (becomes an ``error`` outcome)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InputError(ToolError):
    """The input failed the schema or the tool's own ``validate_input``."""


class StaleReadError(ToolError):
    """The file changed on disk or in its buffer since the model read it."""


class ToolRejected(Exception):
    """A permission refusal raised from inside ``call`` (e.g. an edit preview rejected)."""

    def __init__(self, reason: str, source: str = "user_reject", rule: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.source = source
        self.rule = rule


class ToolInterrupted(Exception):
    """The run was interrupted (user cancel, abort signal)."""


# --------------------------------------------------------------------------- values


ProgressType = Literal[
    "BashProgress",
    "AgentProgress",
    "MCPProgress",
    "SkillToolProgress",
    "TaskOutputProgress",
    "WebSearchProgress",
    "WebFetchProgress",
    "LocationToolProgress",
    "REPLToolProgress",
    "HookProgress",
    "ToolProgress",
]


@dataclass(slots=True)
class Progress:
    """One progress report from a running tool (or a hook running for it)."""

    type: ProgressType
    message: str
    percentage: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


ProgressCallback = Callable[[Progress], None]


@dataclass(slots=True)
class ValidationResult:
    """The answer of ``validate_input``: ok, or a message the model can act on."""

    ok: bool
    message: str = ""

    @classmethod
    def success(cls) -> ValidationResult:
        return cls(True)

    @classmethod
    def fail(cls, message: str) -> ValidationResult:
        return cls(False, message)


@dataclass(slots=True)
class ToolResult:
    """What ``call`` returns.

    ``data`` is the tool's output (a string, a pydantic model, content blocks...);
    ``map_tool_result_to_block`` turns it into the model API's tool_result
    content. ``is_error`` marks a result that is an error for the model but not
    an exception (e.g. a command that exited non-zero stays a success).
    """

    data: Any
    is_error: bool = False
    # Extra text appended for the model (e.g. hook context) by later stages.
    extra: list[str] = field(default_factory=list)
    # Structured facts for editors, carried in the outcome's ``meta`` (e.g. hunks landed).
    meta: dict[str, Any] | None = None


ContentBlock = dict[str, Any]
ToolResultContent = str | list[ContentBlock]


# --------------------------------------------------------------------------- the Tool


class Tool:
    """The base of every tool; class attributes and methods hold the safe defaults."""

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    search_hint: ClassVar[str] = ""
    input_model: ClassVar[type[BaseModel] | None] = None
    input_json_schema: ClassVar[dict[str, Any] | None] = None
    output_model: ClassVar[type[BaseModel] | None] = None
    should_defer: ClassVar[bool] = False
    always_load: ClassVar[bool] = False
    max_result_size_chars: ClassVar[int] = 100_000
    strict: ClassVar[bool] = False
    # Where the tool comes from, for ToolInfo.source.
    source: ClassVar[Literal["builtin", "mcp"]] = "builtin"
    # Hidden when REPL mode is on (the REPL wraps these primitives).
    repl_only_primitive: ClassVar[bool] = False
    # Progress type this tool reports (for renderers).
    progress_type: ClassVar[ProgressType] = "ToolProgress"

    # ---- what the tool does

    async def call(
        self, input: Any, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        raise ToolError(f"The tool {self.name} cannot be called.")

    def description(self) -> str:
        """The description sent with the tool definition (model API, ToolInfo)."""
        return self.search_hint or self.name

    def prompt(self) -> str:
        """Text for the system prompt: how and when the model should use the tool."""
        return self.description()

    # ---- traits (per input: `ls` is read-only, `rm` is not)

    def is_enabled(self) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return False

    def is_read_only(self, input: Any) -> bool:
        return False

    def is_destructive(self, input: Any) -> bool:
        return False

    # ---- checks

    async def validate_input(self, input: Any, ctx: ToolUseContext) -> ValidationResult:
        return ValidationResult.success()

    async def check_permissions(self, input: Any, ctx: ToolUseContext) -> PermissionResult:
        """The tool's own view: allow with the input unchanged unless it says more.

        Tools describe what they touch (``permission_subject``); the one
        decision function in ``permissions`` turns that and the rules into a
        decision. This hook exists for tools that must veto or rewrite.
        """
        from codev_ls.permissions.types import PermissionResult

        return PermissionResult.allow(updated_input=input)

    def permission_subject(self, input: Any, ctx: ToolUseContext) -> PermissionSubject:
        """What this use touches (command, paths, URL), for rules and prompts."""
        from codev_ls.permissions.types import PermissionSubject

        return PermissionSubject(summary=self.render_tool_use_message(input))

    # ---- rendering for editors and the terminal

    def user_facing_name(self, input: Any = None) -> str:
        return self.name

    def get_activity_description(self, input: Any) -> str:
        return "running"

    def render_tool_use_message(self, input: Any) -> str:
        data = _dump_input(input)
        return f"{self.user_facing_name(input)}({json.dumps(data, ensure_ascii=False)[:200]})"

    def render_tool_result_message(self, result: ToolResult) -> str:
        content = self.map_tool_result_to_block(result, "")["content"]
        return content if isinstance(content, str) else _blocks_to_text(content)

    def render_tool_use_progress_message(self, progress: Progress) -> str:
        return progress.message

    def to_auto_classifier_input(self, input: Any) -> str:
        return ""

    # ---- result mapping

    def map_tool_result_to_block(self, result: ToolResult, tool_use_id: str) -> ContentBlock:
        """The model API's ``tool_result`` block for a result."""
        block: ContentBlock = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content_from_data(result.data),
        }
        if result.is_error:
            block["is_error"] = True
        return block

    # ---- schema

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema sent to the model: from the pydantic model or the raw schema."""
        if self.input_json_schema is not None:
            return self.input_json_schema
        if self.input_model is not None:
            return _model_schema(self.input_model)
        return {"type": "object", "properties": {}}

    def parse_input(self, raw: Any) -> Any:
        """Validate raw input; raises :class:`InputError` naming the offending fields."""
        if not isinstance(raw, dict):
            raise InputError(f"{self.name} takes a JSON object as input, got {type(raw).__name__}.")
        where = _lone_surrogate(raw)
        if where is not None:
            raise InputError(
                f"{self.name}: {where} holds a lone UTF-16 surrogate (an escape like \\ud800 "
                "without its pair), which is not text. Send the characters themselves."
            )
        if self.input_model is not None:
            try:
                return self.input_model.model_validate(raw)
            except ValidationError as exc:
                raise InputError(format_validation_error(self.name, exc)) from exc
        if self.input_json_schema is not None:
            _validate_json_schema(self.name, self.input_json_schema, raw)
        return raw

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"


# Lone surrogates (JSON may carry "\ud800"); \udc80-\udcff stand for undecodable bytes
# in file names (Python's surrogateescape) and stay allowed.
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _lone_surrogate(value: Any, path: str = "", depth: int = 0) -> str | None:
    """The field holding a lone surrogate, if any (``file_path``, ``edits[0].old``)."""
    if isinstance(value, str):
        return (path or "the input") if _LONE_SURROGATE.search(value) else None
    if depth > 64:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _LONE_SURROGATE.search(key):
                return f"the key {name!r}"
            found = _lone_surrogate(item, name, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{i}]", depth + 1)
            if found:
                return found
    return None


def _dump_input(input: Any) -> Any:
    if isinstance(input, BaseModel):
        return input.model_dump(by_alias=True, exclude_none=True)
    return input


def dump_input(input: Any) -> dict[str, Any]:
    """The input as the JSON object the model sent (aliases kept, unset fields left out)."""
    data = _dump_input(input)
    return data if isinstance(data, dict) else {"value": data}


def content_from_data(data: Any) -> ToolResultContent:
    """Turn a tool's output into tool_result content (a string or content blocks)."""
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        return data.model_dump_json(by_alias=True, exclude_none=True)
    if isinstance(data, list) and all(isinstance(b, dict) and "type" in b for b in data):
        return data
    return json.dumps(data, ensure_ascii=False, default=str)


def _blocks_to_text(blocks: list[ContentBlock]) -> str:
    parts = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append(str(b.get("text", "")))
        else:
            parts.append(f"[{b.get('type')}]")
    return "\n".join(parts)


_SCHEMA_CACHE: dict[type[BaseModel], dict[str, Any]] = {}


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = _SCHEMA_CACHE.get(model)
    if schema is None:
        schema = model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        _SCHEMA_CACHE[model] = schema
    return schema


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """A schema error written for the model: one line per offending field."""
    lines = [f"{tool_name} was called with invalid input:"]
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(input)"
        kind = err.get("type", "")
        msg = err.get("msg", "invalid")
        if kind == "missing":
            msg = "is required but missing"
        elif kind == "extra_forbidden":
            msg = "is not a known parameter"
        lines.append(f"- `{loc}` {msg}")
    return "\n".join(lines)


def _validate_json_schema(tool_name: str, schema: dict[str, Any], raw: dict[str, Any]) -> None:
    import jsonschema

    validator_cls = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        validator = validator_cls(schema)
        errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.path))
    except jsonschema.SchemaError as exc:
        raise InputError(f"{tool_name} has an invalid input schema: {exc.message}") from exc
    if errors:
        lines = [f"{tool_name} was called with invalid input:"]
        for err in errors[:10]:
            loc = ".".join(str(p) for p in err.absolute_path) or "(input)"
            lines.append(f"- `{loc}` {err.message}")
        raise InputError("\n".join(lines))


# --------------------------------------------------------------------------- build_tool

_BUILDABLE_METHODS = frozenset(
    {
        "call",
        "description",
        "prompt",
        "is_enabled",
        "is_concurrency_safe",
        "is_read_only",
        "is_destructive",
        "validate_input",
        "check_permissions",
        "permission_subject",
        "user_facing_name",
        "get_activity_description",
        "render_tool_use_message",
        "render_tool_result_message",
        "render_tool_use_progress_message",
        "to_auto_classifier_input",
        "map_tool_result_to_block",
    }
)
_BUILDABLE_ATTRS = frozenset(
    {
        "name",
        "aliases",
        "search_hint",
        "input_model",
        "input_json_schema",
        "output_model",
        "should_defer",
        "always_load",
        "max_result_size_chars",
        "strict",
        "source",
        "repl_only_primitive",
        "progress_type",
    }
)


def build_tool(**spec: Any) -> Tool:
    """Make a Tool from a name and plain functions, filling the safe defaults.

    Functions take the same arguments as the methods they replace, without
    ``self``; ``description`` and ``prompt`` may also be plain strings. An
    unknown key is a programming error, raised at once.
    """
    name = spec.get("name")
    if not name or not isinstance(name, str):
        raise TypeError("build_tool() needs a non-empty string `name`")
    unknown = set(spec) - _BUILDABLE_METHODS - _BUILDABLE_ATTRS
    if unknown:
        raise TypeError(f"build_tool() got unknown fields: {', '.join(sorted(unknown))}")
    namespace: dict[str, Any] = {}
    for key, value in spec.items():
        if key in _BUILDABLE_ATTRS:
            namespace[key] = tuple(value) if key == "aliases" else value
        elif key in ("description", "prompt") and isinstance(value, str):
            text = value
            namespace[key] = lambda self, _t=text: _t
        else:
            namespace[key] = _as_method(value)
    cls = type(f"{name}Tool", (Tool,), namespace)
    return cls()


def _as_method(fn: Callable[..., Any]) -> Any:
    if not callable(fn):
        raise TypeError(f"build_tool() expected a function, got {fn!r}")
    return staticmethod(fn)


AsyncCall = Callable[[Any, "ToolUseContext", ProgressCallback], Awaitable[ToolResult]]
