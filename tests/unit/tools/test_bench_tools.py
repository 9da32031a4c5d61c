"""bench/tools.py runs end to end (tiny sizes): its figures come from real tool runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_tools", REPO / "bench" / "tools.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_tools"] = module
    spec.loader.exec_module(module)
    return module


def test_grep_and_read_benchmarks_run(tmp_path: Path):
    bench = _bench()
    opts = bench.Options(quick=True, workdir=tmp_path, repeat=1, grep_files=60, read_bytes=2**20)
    grep_rows = bench.bench_grep(opts)
    assert [r.name for r in grep_rows if r.ratio is not None] == [
        "Grep files_with_matches (all, newest first)",
        "Grep count",
        "Grep content (all lines, -n)",
        "Grep content, rare pattern -i",
    ]
    read_rows = bench.bench_read(opts)
    names = [r.name for r in read_rows]
    assert "Read 2000 lines at any offset, index built" in names
    assert all(r.line() for r in [*grep_rows, *read_rows])
    assert set(bench.BENCHMARKS) >= {"grep", "read"}
    bench._LOOP.close()


def test_rows_over_their_target_are_marked_missed():
    bench = _bench()
    over = bench.Row("Grep count", "120.0 ms", "80.0 ms", 1.5, bench.GREP_TARGET)
    under = bench.Row("Grep count", "90.0 ms", "80.0 ms", 1.125, bench.GREP_TARGET)
    assert over.ok is False and "MISSED" in over.line()
    assert under.ok is True and "MISSED" not in under.line()
    slow = bench.Row("Read 2000 lines at any offset", "1,200.0 ms", target="< 50 ms")
    fast = bench.Row("Read 2000 lines at any offset", "6.7 ms", target="< 50 ms")
    assert slow.ok is False and "MISSED" in slow.line()
    assert fast.ok is True
    assert bench.Row("RSS", "25.0 MB", target="< 20 MB").ok is False
    assert bench.Row("RSS", "0.0 MB", target="< 20 MB").ok is True
    # A target that cannot be checked is neither met nor missed.
    assert bench.Row("persisted", "1 B", target="all of it").ok is None
    bench._LOOP.close()
