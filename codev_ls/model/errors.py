"""Errors of model access, by who reads them.

::

    ModelError               something went wrong talking to the model (shown to the user)
    ├── ModelNotConfigured   no provider configured: the message says how to set one up
    ├── ModelAuthError       the key was refused (401/403): never names the key
    ├── ModelRequestError    the request was refused (400, 404, 413...): a bug or a bad model name
    ├── ModelRetryableError  429, 5xx, 529 overloaded, a dropped connection: retried with backoff
    └── ModelStreamError     the stream broke after output had been shown (not retried)

Messages name the provider and the status, never the key.
"""

from __future__ import annotations


class ModelError(Exception):
    """An error of the model provider, written for the user."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


class ModelNotConfigured(ModelError):
    """No provider is configured."""


class ModelAuthError(ModelError):
    """The provider refused the key."""


class ModelRequestError(ModelError):
    """The provider refused the request as malformed (not worth retrying)."""


class ModelRetryableError(ModelError):
    """A transient failure: rate limit, overload, server error, lost connection."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        kind: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, kind=kind)
        self.retry_after = retry_after


class ModelStreamError(ModelError):
    """The stream failed after part of the answer had been shown."""


NOT_CONFIGURED_MESSAGE = (
    "No model is configured. Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) for the "
    "Anthropic API, or CODEV_PROVIDER=openai with OPENAI_API_KEY and OPENAI_BASE_URL for any "
    "OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, DeepSeek, Qwen...); CODEV_MODEL picks the "
    "model. Then restart the language server. The tools keep working without a model."
)
