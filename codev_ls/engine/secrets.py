"""API keys never leave: masked in every outcome and every log record.

The keys Codev LS holds for its services (the model providers, Tavily, Jina,
Amap, Google Maps...) come from the environment. Tools are careful not to quote
them, but a service may echo a key back — in an error body, a redirect's
``Location``, a header that httpcore logs at DEBUG — and a tool that copies the
service's text into its message would pass it on. So, as a last line:

- :func:`redact` replaces every known key in a text with ``***`` — also a key
  cut short (``tvly-abc123…``): any run of 16 or more of its leading characters;
- :func:`redact_outcome` applies it to a tool outcome's text (the engine calls it
  on every outcome, so keys never reach the model, the editor or a transcript);
- :func:`install_log_redaction` makes every log record (from any library, at any
  level, tracebacks included) pass through it before any handler sees it.

A key is the value of an environment variable named like a secret
(``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``) or listed in
:data:`SECRET_VARS`, at least 8 characters long.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codev_ls.engine.outcome import ToolOutcome

MASK = "***"
MIN_SECRET = 8
MIN_CUT = 16
SECRET_VARS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "TAVILY_API_KEY",
        "JINA_API_KEY",
        "AMAP_API_KEY",
        "GOOGLE_MAPS_API_KEY",
        "IPINFO_TOKEN",
    }
)
_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD|_APIKEY)$", re.IGNORECASE)


_cache: tuple[object, list[str]] | None = None


def _environ_key() -> object:
    """A cheap fingerprint of the environment (its raw bytes values hash once each)."""
    data = getattr(os.environ, "_data", None)
    if isinstance(data, dict):
        return (len(data), hash(tuple(data.items())))
    return tuple(os.environ.items())


def known_secrets() -> list[str]:
    """The secret values in the environment now, longest first.

    Scanning the environment decodes every variable; it runs on every tool use,
    so the answer is kept until the environment changes.
    """
    global _cache
    key = _environ_key()
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    values = {
        value
        for name, value in os.environ.items()
        if (name in SECRET_VARS or _SECRET_NAME.search(name)) and len(value) >= MIN_SECRET
    }
    found = sorted(values, key=len, reverse=True)
    _cache = (key, found)
    return found


def redact(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every secret — or a leading piece of one, 16+ characters — masked."""
    if not text:
        return text
    for secret in known_secrets() if secrets is None else secrets:
        # A cut key is masked from 16 leading characters on: shorter runs are the public
        # prefixes every key of a provider shares ("sk-ant-api03-").
        head = secret[: min(len(secret), MIN_CUT)]
        start = text.find(head)
        while start != -1:
            end = start + len(head)
            while (
                end - start < len(secret) and end < len(text) and text[end] == secret[end - start]
            ):
                end += 1
            text = text[:start] + MASK + text[end:]
            start = text.find(head, start + len(MASK))
    return text


def redact_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """The outcome with secrets masked in its text (the same object when there are none)."""
    secrets = known_secrets()
    if not secrets:
        return outcome
    content = outcome.content
    if isinstance(content, str):
        new: Any = redact(content, secrets)
        changed = new != content
    else:
        new, changed = [], False
        for block in content:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                text = redact(block["text"], secrets)
                if text != block["text"]:
                    block = {**block, "text": text}
                    changed = True
            new.append(block)
    reason = outcome.decision_reason
    new_reason = redact(reason, secrets) if reason else reason
    if not changed and new_reason == reason:
        return outcome
    return outcome.model_copy(update={"content": new, "decision_reason": new_reason})


# --------------------------------------------------------------------------- logs

_installed = False


def install_log_redaction() -> None:
    """Mask secrets in every log record from now on (idempotent).

    Done at record creation (the record factory), so it covers every logger and
    every handler — stderr, the editor's ``window/logMessage``, files — whoever
    adds them later.
    """
    global _installed
    if _installed:
        return
    _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        secrets = known_secrets()
        if not secrets:
            return record
        try:
            message = record.getMessage()
        except Exception:
            return record
        record.msg, record.args = redact(message, secrets), None
        if record.exc_info and record.exc_info[0] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(text, secrets)
        return record

    logging.setLogRecordFactory(factory)
