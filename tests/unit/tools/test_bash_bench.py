"""bench/bash_bench.py runs end to end (a small size): figures from real Bash runs."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_bash_bench_figures(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from bash_bench import TARGET_MB, bash_figures
    finally:
        sys.path.remove(str(REPO / "bench"))
    size = 4 << 20
    figures = bash_figures(size, tmp_path)
    assert all(f.ok for f in figures), figures
    persisted = [f for f in figures if f.name.strip() == "output persisted"]
    assert persisted and all(f.value == f"{size:,} B" for f in persisted)
    growth = [f for f in figures if f.target == f"< {TARGET_MB} MB"]
    assert growth and all(float(f.value.split()[0]) < TARGET_MB for f in growth)
    assert any(f.ratio is not None and f.ratio > 0 for f in figures)
