"""Budgets for the fuzz tests: bounded in CI, longer on demand.

    pytest tests/reliability                      # the CI budget (seconds per test)
    CODEV_FUZZ=long pytest tests/reliability      # ~30× more examples, no deadline
    CODEV_FUZZ_EXAMPLES=20000 pytest tests/reliability/test_fuzz_shell.py

Each fuzz test states its CI budget with :func:`fuzz_settings`; the long run
multiplies it (or takes ``CODEV_FUZZ_EXAMPLES`` as is).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("CODEV_FUZZ", "").lower() == "long"


def examples(ci: int) -> int:
    """The number of examples for a test whose CI budget is ``ci``."""
    explicit = os.environ.get("CODEV_FUZZ_EXAMPLES")
    if explicit and explicit.isdigit():
        return int(explicit)
    return ci * 30 if LONG else ci


def fuzz_settings(ci: int, **extra: object) -> settings:
    """Hypothesis settings: ``ci`` examples in CI, no per-example deadline (a shared
    machine's load would make any deadline flaky), no example database in CI."""
    return settings(
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
