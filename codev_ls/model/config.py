"""Which model to talk to, read from the environment (PROTOCOL.md "Model providers").

``ANTHROPIC_API_KEY`` (+ ``ANTHROPIC_BASE_URL``) selects the Anthropic Messages
API; ``CODEV_PROVIDER=openai`` with ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``
selects any OpenAI-compatible endpoint. ``CODEV_MODEL`` picks the model,
``CODEV_SMALL_MODEL`` the one used for small jobs (WebFetch's prompt,
summaries). Retries and limits can be tuned (tests make the backoff short).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from codev_ls.model.errors import NOT_CONFIGURED_MESSAGE, ModelNotConfigured

ProviderName = Literal["anthropic", "openai"]

DEFAULT_MODELS: dict[str, tuple[str, str]] = {
    # provider: (main model, small model)
    "anthropic": ("claude-sonnet-4-5", "claude-haiku-4-5"),
    "openai": ("gpt-4o", "gpt-4o-mini"),
}

# Short names a sub-agent definition may use for its model.
ANTHROPIC_ALIASES = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-5",
    "haiku": "claude-haiku-4-5",
}


@dataclass(slots=True)
class RetryPolicy:
    """Retries of transient failures: exponential backoff with jitter, honouring retry-after."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    # A server's retry-after longer than this is not waited for: the error is shown instead.
    max_retry_after: float = 120.0

    def backoff(self, attempt: int, jitter: float = 0.0) -> float:
        """The delay before retry number ``attempt`` (0-based) when the server gave none."""
        delay = min(self.base_delay * (2**attempt), self.max_delay)
        return max(0.0, delay * (1.0 - 0.25 * jitter))


@dataclass(slots=True)
class ModelConfig:
    provider: ProviderName
    model: str
    small_model: str
    api_key: str = field(repr=False)
    base_url: str | None = None
    max_tokens: int = 8192
    # The context window in tokens: history is bounded to fit it.
    context_window: int = 200_000
    # Model turns per chat request before the loop stops ("max_turns").
    max_turns: int = 50
    timeout: float = 600.0
    connect_timeout: float = 10.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # OpenAI-compatible: ask for usage in the stream (some servers refuse the option).
    stream_usage: bool = True
    # OpenAI-compatible: send images (tool results' pictures) as image_url parts; off for
    # text-only servers, which refuse them (the model then gets a note instead).
    openai_images: bool = True

    def resolve_model(self, name: str | None, *, small: bool = False) -> str:
        """A model name as an Agent definition or caller gave it ('inherit', aliases)."""
        if not name or name == "inherit":
            return self.small_model if small else self.model
        if name in ANTHROPIC_ALIASES:
            if self.provider == "anthropic":
                return ANTHROPIC_ALIASES[name]
            return self.small_model if name == "haiku" else self.model
        return name


def _float_env(env: dict[str, str], name: str, default: float) -> float:
    try:
        return float(env[name])
    except (KeyError, ValueError):
        return default


def _int_env(env: dict[str, str], name: str, default: int) -> int:
    try:
        return int(env[name])
    except (KeyError, ValueError):
        return default


def _bool_env(env: dict[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return default


def load_config(env: dict[str, str] | None = None) -> ModelConfig:
    """The model configuration from the environment, or :class:`ModelNotConfigured`."""
    env = dict(os.environ if env is None else env)
    provider = env.get("CODEV_PROVIDER", "").strip().lower()
    if provider in ("", "anthropic", "claude"):
        key = env.get("ANTHROPIC_API_KEY", "").strip()
        if not key:
            if provider == "" and env.get("OPENAI_API_KEY") and env.get("OPENAI_BASE_URL"):
                provider = "openai"
            else:
                raise ModelNotConfigured(NOT_CONFIGURED_MESSAGE)
        else:
            provider = "anthropic"
    if provider in ("openai", "openai-compatible", "ollama", "vllm"):
        provider = "openai"
        key = env.get("OPENAI_API_KEY", "").strip()
        base_url = env.get("OPENAI_BASE_URL") or None
        if not key:
            if not base_url:
                raise ModelNotConfigured(NOT_CONFIGURED_MESSAGE)
            # Local servers (Ollama, vLLM) take any key.
            key = "not-needed"
    elif provider != "anthropic":
        raise ModelNotConfigured(
            f"CODEV_PROVIDER={provider!r} is not known: use 'anthropic' or 'openai'. "
            + NOT_CONFIGURED_MESSAGE
        )
    else:
        base_url = env.get("ANTHROPIC_BASE_URL") or None
    main, small = DEFAULT_MODELS[provider]
    model = env.get("CODEV_MODEL", "").strip() or main
    small_model = env.get("CODEV_SMALL_MODEL", "").strip() or (
        small if not env.get("CODEV_MODEL") else model
    )
    retry = RetryPolicy(
        max_retries=_int_env(env, "CODEV_MODEL_MAX_RETRIES", 4),
        base_delay=_float_env(env, "CODEV_MODEL_RETRY_BASE_DELAY", 1.0),
        max_delay=_float_env(env, "CODEV_MODEL_RETRY_MAX_DELAY", 30.0),
        max_retry_after=_float_env(env, "CODEV_MODEL_MAX_RETRY_AFTER", 120.0),
    )
    return ModelConfig(
        provider=provider,  # type: ignore[arg-type]
        model=model,
        small_model=small_model,
        api_key=key,
        base_url=base_url,
        max_tokens=_int_env(env, "CODEV_MAX_TOKENS", 8192),
        context_window=_int_env(
            env, "CODEV_CONTEXT_WINDOW", 200_000 if provider == "anthropic" else 128_000
        ),
        max_turns=_int_env(env, "CODEV_MAX_TURNS", 50),
        timeout=_float_env(env, "CODEV_MODEL_TIMEOUT", 600.0),
        retry=retry,
        stream_usage=_bool_env(env, "CODEV_OPENAI_STREAM_USAGE", True),
        openai_images=_bool_env(env, "CODEV_OPENAI_IMAGES", True),
    )
