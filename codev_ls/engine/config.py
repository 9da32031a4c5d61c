"""Where Codev keeps its files, and the feature flags read from the environment."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """The user's Codev folder: ``$CODEV_CONFIG_DIR`` or ``~/.codev``."""
    env = os.environ.get("CODEV_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".codev"


def env_flag(name: str) -> bool:
    """A boolean environment flag: 1/true/yes/on (any case) means on."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def simple_mode() -> bool:
    """``CODEV_SIMPLE=1``: only Bash, Read and Edit are offered."""
    return env_flag("CODEV_SIMPLE")


def repl_mode() -> bool:
    """``CODEV_REPL=1``: the REPL wraps the primitives, which are hidden from the model."""
    return env_flag("CODEV_REPL")


def feature_enabled(flag: str) -> bool:
    """A built-in tool's feature flag: on unless ``CODEV_DISABLE_<FLAG>=1``.

    Flags that are off by default are turned on with ``CODEV_ENABLE_<FLAG>=1``.
    """
    key = flag.upper().replace("-", "_")
    return not env_flag(f"CODEV_DISABLE_{key}")


def feature_opt_in(flag: str) -> bool:
    key = flag.upper().replace("-", "_")
    return env_flag(f"CODEV_ENABLE_{key}")
