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
