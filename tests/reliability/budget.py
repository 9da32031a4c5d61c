"""Budgets for the fuzz tests: bounded in CI, longer on demand.

    pytest tests/reliability                      # the CI budget (seconds per test)
    CODEV_FUZZ=long pytest tests/reliability      # ~30× more examples, no deadline
    CODEV_FUZZ_EXAMPLES=20000 pytest tests/reliability/test_fuzz_shell.py

Each fuzz test states its CI budget with :func:`fuzz_settings`; the long run
multiplies it (or takes ``CODEV_FUZZ_EXAMPLES`` as is).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings

F = TypeVar("F", bound=Callable[..., Any])

LONG = os.environ.get("CODEV_FUZZ", "").lower() == "long"


def examples(ci: int) -> int:
    """The number of examples for a test whose CI budget is ``ci``."""
    explicit = os.environ.get("CODEV_FUZZ_EXAMPLES")
    if explicit and explicit.isdigit():
        return int(explicit)
    return ci * 30 if LONG else ci


def fuzz_settings(ci: int, **extra: object) -> Callable[[F], F]:
    """Hypothesis settings — ``ci`` examples in CI, no per-example deadline (a shared
    machine's load would make any deadline flaky), no example database in CI — and,
    for a longer run, no pytest-timeout limit on the test as a whole."""
    chosen = settings(
        max_examples=examples(ci),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        database=None if os.environ.get("CI") else settings.default.database,
        **extra,  # type: ignore[arg-type]
    )
    longer = examples(ci) > ci

    def apply(test: F) -> F:
        test = chosen(test)
        return pytest.mark.timeout(0)(test) if longer else test

    return apply
