"""Model providers: one module per wire API, behind :class:`base.Provider`."""

from __future__ import annotations

from codev_ls.model.config import ModelConfig
from codev_ls.model.providers.base import Provider


def make_provider(config: ModelConfig) -> Provider:
    """The provider for ``config`` (its SDK is imported on first use, not here)."""
    if config.provider == "openai":
        from codev_ls.model.providers.openai_compat import OpenAIProvider

        return OpenAIProvider(config)
    from codev_ls.model.providers.anthropic import AnthropicProvider

    return AnthropicProvider(config)
