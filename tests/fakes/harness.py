"""One interface over both fake model APIs, so a test runs against each of them.

``FakeModel("anthropic")`` / ``FakeModel("openai")`` starts the fake server;
``reply``/``rate_limited``/``overloaded``... build scripted answers in that
API's wire format; ``env`` is what a Codev process needs to talk to it;
``results(body)`` reads the tool results a request carried back.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.fakes import anthropic_api, openai_api
from tests.fakes._http import SSE, Drop, Hold, HttpReply, Recorded

FAST_RETRIES = {
    "CODEV_MODEL_RETRY_BASE_DELAY": "0.01",
    "CODEV_MODEL_RETRY_MAX_DELAY": "0.05",
    "CODEV_MODEL_MAX_RETRIES": "3",
}


class FakeModel:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.server = (
            anthropic_api.FakeAnthropic() if kind == "anthropic" else openai_api.FakeOpenAI()
        )

    def __enter__(self) -> FakeModel:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    # ---------------------------------------------------------------- config

    @property
    def env(self) -> dict[str, str]:
        if self.kind == "anthropic":
            env = {
                "ANTHROPIC_API_KEY": anthropic_api.API_KEY,
                "ANTHROPIC_BASE_URL": self.server.url,
            }
        else:
            env = {
                "CODEV_PROVIDER": "openai",
                "OPENAI_API_KEY": openai_api.API_KEY,
                "OPENAI_BASE_URL": f"{self.server.url}/v1",
            }
        return {**env, **FAST_RETRIES, "CODEV_MODEL": "test-model"}

    def config(self, **overrides: str) -> Any:
        from codev_ls.model.config import load_config

        return load_config({**self.env, **overrides})

    # ---------------------------------------------------------------- scripting

    def push(self, *replies: HttpReply | SSE) -> None:
        self.server.push(*replies)

    def route_subagents(self, *replies: HttpReply | SSE) -> None:
        """Answer sub-agents' requests (their system prompt says so) from ``replies``, in order;
        the main conversation keeps using the ordinary queue."""
        queue = list(replies)
        lock = threading.Lock()

        def responder(rec: Recorded) -> HttpReply | SSE | None:
            if "# You are a sub-agent" not in self.system(rec.body):
                return None
            with lock:
                if queue:
                    return queue.pop(0)
            return HttpReply(500, {"error": {"type": "api_error", "message": "no sub-agent reply"}})

        self.server.responder = responder

    def is_subagent(self, body: dict[str, Any]) -> bool:
        return "# You are a sub-agent" in self.system(body)

    def reply(self, *parts: str | tuple[str, dict[str, Any]] | Hold | Drop, **kw: Any) -> SSE:
        mod = anthropic_api if self.kind == "anthropic" else openai_api
        return mod.reply(*parts, **kw)

    def stream_error(
        self, *parts: str | tuple[str, dict[str, Any]], overloaded: bool = True
    ) -> SSE:
        """A stream that ends with an error event (overloaded, or a plain API error)."""
        if self.kind == "anthropic":
            kind = ("overloaded_error", "Overloaded") if overloaded else ("api_error", "boom")
            return anthropic_api.reply(*parts, error=kind)
        return openai_api.reply(*parts, error="Overloaded" if overloaded else "boom")

    def rate_limited(self, retry_after: str | None = "0") -> HttpReply:
        mod = anthropic_api if self.kind == "anthropic" else openai_api
        return mod.rate_limited(retry_after)

    def overloaded(self, retry_after: str | None = None) -> HttpReply:
        if self.kind == "anthropic":
            return anthropic_api.overloaded(retry_after)
        reply = openai_api.server_error(503)
        if retry_after is not None:
            reply.headers["retry-after"] = retry_after
        return reply

    def unauthorized(self) -> HttpReply:
        mod = anthropic_api if self.kind == "anthropic" else openai_api
        return mod.unauthorized()

    # ---------------------------------------------------------------- reading

    @property
    def bodies(self) -> list[Any]:
        return self.server.bodies

    @property
    def problems(self) -> list[Any]:
        return self.server.problems

    def results(self, body: dict[str, Any]) -> dict[str, str]:
        """Tool results the request carried back, by tool use id (text)."""
        if self.kind == "anthropic":
            return {
                k: anthropic_api.result_text(v) for k, v in anthropic_api.tool_results(body).items()
            }
        return openai_api.tool_messages(body)

    def result_errors(self, body: dict[str, Any]) -> dict[str, bool]:
        if self.kind == "anthropic":
            return {k: bool(v.get("is_error")) for k, v in anthropic_api.tool_results(body).items()}
        return {k: v.startswith("Error:") for k, v in openai_api.tool_messages(body).items()}

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        mod = anthropic_api if self.kind == "anthropic" else openai_api
        return mod.tool_names(body)

    def system(self, body: dict[str, Any]) -> str:
        if self.kind == "anthropic":
            return anthropic_api.system_text(body)
        first = body["messages"][0]
        return first["content"] if first["role"] == "system" else ""

    def last_user_text(self, body: dict[str, Any]) -> str:
        msg = body["messages"][-1]
        content = msg["content"]
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
