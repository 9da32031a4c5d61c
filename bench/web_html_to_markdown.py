"""Which HTML → Markdown converter gives WebFetch the better text? (markdownify vs trafilatura)

Runs both on real saved pages — the ones installed on this machine (the Rust
book and rustdoc shipped with rustup, the Node.js API docs and the Valgrind
manual from Debian packages; skipped where absent) and a news-style page with
ads, cookie banner and comments written for this bench (``bench/pages``) — and
prints, per page and converter:

- content: how many of the page's content markers (headings and sentences
  checked by hand to be part of the main text) survive,
- noise: how many chrome markers (menus, cookie banners, footers) survive,
- links / images: Markdown links and image links in the output,
- time: against a same-run baseline (BeautifulSoup ``get_text``), as a ratio.

    python bench/web_html_to_markdown.py

trafilatura is not a dependency of Codev LS: ``pip install trafilatura`` to
run its column (it is skipped otherwise).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codev_ls.tools._html import html_to_markdown

RUST = Path.home() / ".rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html"
HERE = Path(__file__).resolve().parent


@dataclass
class Case:
    name: str
    path: Path
    url: str
    content: list[str]
    noise: list[str]


CASES = [
    Case(
        "rust book ch04-01",
        RUST / "book/ch04-01-what-is-ownership.html",
        "https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html",
        content=[
            "What Is Ownership?",
            "The Stack and the Heap",
            "Ownership Rules",
            "Variable Scope",
            "The String Type",
            "Memory and Allocation",
            "Ownership and Functions",
            "Return Values and Scope",
            'let s = String::from("hello");',
            "Each value in Rust has an owner.",
        ],
        noise=["Keyboard shortcuts", "localStorage", "path_to_root", "Press `?` to show this help"],
    ),
    Case(
        "rustdoc std::option",
        RUST / "std/option/index.html",
        "https://doc.rust-lang.org/std/option/index.html",
        content=[
            "Options and pointers",
            "The question mark operator",
            "Querying the variant",
            "Extracting the contained value",
            "Transforming contained values",
            "Boolean operators",
            "Collecting into Option",
            "Modifying an",
            "is_some",
            "unwrap_or_default",
        ],
        noise=["In crate std", "Copy item path", "Module Items"],
    ),
    Case(
        "node.js path API",
        Path("/usr/share/doc/nodejs/api/path.html"),
        "https://nodejs.org/docs/latest-v20.x/api/path.html",
        content=[
            "Windows vs. POSIX",
            "path.basename(path[, suffix])",
            "path.delimiter",
            "path.dirname(path)",
            "path.extname(path)",
            "path.format(pathObject)",
            "path.matchesGlob(path, pattern)",
            "path.isAbsolute(path)",
            "path.join([...paths])",
            "path.normalize(path)",
            "path.parse(path)",
            "path.relative(from, to)",
            "path.resolve([...paths])",
            "path.toNamespacedPath(path)",
        ],
        noise=["Asynchronous context tracking", "C++ embedder API", "Child processes"],
    ),
    Case(
        "valgrind cachegrind manual",
        Path("/usr/share/doc/valgrind/html/cg-manual.html"),
        "https://valgrind.org/docs/manual/cg-manual.html",
        content=[
            "Overview",
            "Running Cachegrind",
            "Output File",
            "Running cg_annotate",
            "Merging Profiles with cg_merge",
            "Differencing Profiles with cg_diff",
            "Cachegrind Command-line Options",
            "Cache Simulation Specifics",
            "Branch Simulation Specifics",
            "How Cachegrind Works",
        ],
        noise=["Valgrind User Manual", "![Prev]", "![Next]"],
    ),
    Case(
        "news article (written for this bench)",
        HERE / "pages/news_article.html",
        "https://devweekly.example/news/python-313-free-threaded",
        content=[
            "# Python 3.13 ships a free-threaded build",
            "## How to try it",
            "## What changes for library authors",
            "### Performance",
            "[PEP 703](https://peps.python.org/pep-0703/)",
            "![Chart of threads scaling without the GIL](https://devweekly.example/images/py313-gil.png)",
            "print(sys._is_gil_enabled())",
            "mimalloc is required",
            "[porting guide](https://devweekly.example/tutorials/porting-extensions)",
            "40 percent slower",
        ],
        noise=[
            "We use cookies",
            "Jobs board",
            "Advertisement",
            "Related stories",
            "newsletter",
            "All rights reserved",
            "Been waiting for this",
            "dataLayer",
        ],
    ),
]


def _markdownify(html: str, url: str) -> str:
    return html_to_markdown(html, url).markdown


def _trafilatura(html: str, url: str) -> str:
    import trafilatura

    return (
        trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_links=True,
            include_images=True,
            include_formatting=True,
            include_tables=True,
        )
        or ""
    )


def _baseline(html: str, url: str) -> str:
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser").get_text("\n")


def _norm(text: str) -> str:
    """Compare words, not Markdown emphasis or code spans."""
    return " ".join(re.sub(r"[\\`*]", "", text).split())


def _time(fn: Callable[[str, str], str], html: str, url: str, rounds: int = 3) -> tuple[str, float]:
    out = ""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn(html, url)
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def main() -> int:
    converters: list[tuple[str, Callable[[str, str], str]]] = [("markdownify", _markdownify)]
    try:
        import trafilatura  # noqa: F401

        converters.append(("trafilatura", _trafilatura))
    except ImportError:
        print("(trafilatura not installed: its column is skipped)")
    totals: dict[str, list[int]] = {name: [0, 0, 0, 0] for name, _ in converters}
    print(
        f"{'page':40} {'converter':12} {'content':>8} {'noise':>6} {'links':>6} {'images':>6} {'time×':>6}"
    )
    for case in CASES:
        if not case.path.exists():
            print(f"{case.name:40} (not on this machine, skipped)")
            continue
        html = case.path.read_text(encoding="utf-8", errors="replace")
        _, base_t = _time(_baseline, html, case.url)
        for name, fn in converters:
            out, t = _time(fn, html, case.url)
            text = _norm(out)
            kept = sum(1 for c in case.content if _norm(c) in text)
            noise = sum(1 for n in case.noise if _norm(n) in text)
            links = len(re.findall(r"(?<!!)\[[^\]]*\]\([^)]+\)", out))
            images = len(re.findall(r"!\[[^\]]*\]\([^)]+\)", out))
            tot = totals[name]
            tot[0] += kept
            tot[1] += len(case.content)
            tot[2] += noise
            tot[3] += len(case.noise)
            print(
                f"{case.name:40} {name:12} {kept:>3}/{len(case.content):<4} {noise:>2}/{len(case.noise):<3} "
                f"{links:>6} {images:>6} {t / base_t:>6.2f}"
            )
    print()
    for name, (kept, total, noise, ntotal) in totals.items():
        print(f"{name:12} content kept {kept}/{total}, noise kept {noise}/{ntotal}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
