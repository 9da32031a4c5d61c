"""What every provider offers, and what they share: retries and error mapping.

A provider's :meth:`Provider.stream` makes *one* attempt and raises
:class:`ModelRetryableError` for transient failures; :func:`stream_with_retry`
retries those with exponential backoff, honouring ``retry-after`` (and
``retry-after-ms``), as long as nothing of the answer has been shown yet —
after that a failure ends the turn with what was said (no duplicated text).
The SDKs' own retries are turned off so that this is the one policy.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from codev_ls.model.config import ModelConfig, RetryPolicy
from codev_ls.model.errors import (
    ModelAuthError,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
    ModelStreamError,
)
from codev_ls.model.types import ModelRequest, Retrying, StreamEvent, TextDelta, ToolUseStart


class Provider(Protocol):
    config: ModelConfig
    label: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One attempt: stream the answer, ending with a MessageComplete."""
        ...

    async def aclose(self) -> None: ...


Sleep = Callable[[float], Awaitable[None]]


async def stream_with_retry(
    provider: Provider,
    request: ModelRequest,
    policy: RetryPolicy | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """``provider.stream`` with retries of transient failures before any output."""
    policy = policy or provider.config.retry
    attempt = 0
    while True:
        shown = False
        try:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta | ToolUseStart):
                    shown = True
                yield event
            return
        except ModelRetryableError as exc:
            if shown:
                raise ModelStreamError(
                    f"{exc.message} The answer was cut off.", status=exc.status, kind=exc.kind
                ) from exc
            if attempt >= policy.max_retries:
                raise ModelRetryableError(
                    f"{exc.message} (gave up after {attempt + 1} attempts)",
                    status=exc.status,
                    kind=exc.kind,
                ) from exc
            if exc.retry_after is not None:
                if exc.retry_after > policy.max_retry_after:
                    raise ModelRetryableError(
                        f"{exc.message} The server asks to wait {exc.retry_after:.0f} s; "
                        "try again later.",
                        status=exc.status,
                        kind=exc.kind,
                    ) from exc
                delay = max(0.0, exc.retry_after)
            else:
                delay = policy.backoff(attempt, random.random())
            attempt += 1
            yield Retrying(attempt, delay, exc.message)
            await sleep(delay)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000.0
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_KEYLIKE = re.compile(r"\b(sk|key|pk)[-_][A-Za-z0-9_\-\*\.]{6,}")


def redact(text: str, secret: str | None) -> str:
    """Remove the API key (and anything that looks like one) from a message."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


def _error_fields(body: Any) -> tuple[str, str]:
    """(type, message) from an Anthropic or OpenAI error body."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("type") or err.get("code") or ""), str(err.get("message") or "")
        if isinstance(err, str):
            return "", err
    if isinstance(body, str):
        return "", body
    return "", ""


_RETRYABLE_TYPES = {"overloaded_error", "rate_limit_error", "api_error", "server_error"}


def map_sdk_error(exc: BaseException, label: str, env_key: str, secret: str | None) -> ModelError:
    """An SDK exception (anthropic or openai: same shapes) as a :class:`ModelError`."""
    cls_names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    if status is None:
        if "APITimeoutError" in cls_names:
            return ModelRetryableError(f"{label} did not answer in time.", kind="timeout")
        if "APIConnectionError" in cls_names:
            return ModelRetryableError(
                f"Could not connect to {label}: {redact(str(exc), secret)}", kind="connection"
            )
        if isinstance(exc, ModelError):
            return exc
        body = getattr(exc, "body", None)
        if body is not None or "APIError" in cls_names:
            # An error reported inside the stream (HTTP 200 already sent): transient.
            kind, message = _error_fields(body if isinstance(body, dict) else {"error": body})
            message = redact(message or str(exc), secret)
            return ModelRetryableError(
                f"{label} reported an error in the stream"
                + (f" ({kind})" if kind else "")
                + f": {message}",
                kind=kind or "stream_error",
            )
        return ModelError(f"{label} failed: {type(exc).__name__}: {redact(str(exc), secret)}")
    body = getattr(exc, "body", None)
    kind, message = _error_fields(body)
    message = redact(message or str(exc), secret)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    retry_after = parse_retry_after(headers)
    what = f"{label} answered {status}" + (f" {kind}" if kind else "")
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return ModelAuthError(
            f"{what}: the API key was refused. Check {env_key} (and the base URL).",
            status=status,
            kind=kind,
        )
    if status in (408, 409, 429) or status >= 500 or kind in _RETRYABLE_TYPES:
        return ModelRetryableError(
            f"{what}: {message}", status=status, kind=kind, retry_after=retry_after
        )
    return ModelRequestError(f"{what}: {message}", status=status, kind=kind)
