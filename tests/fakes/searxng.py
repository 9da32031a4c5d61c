"""A fake SearXNG instance: ``GET /search?q=...&format=json`` (and ``POST`` with form data).

Speaks SearXNG's search API: the JSON answer holds ``query``,
``number_of_results``, ``results`` (``url``, ``title``, ``content``, ``engine``,
``engines``, ``parsed_url``, ``template``, ``positions``, ``score``,
``category``), ``answers``, ``corrections``, ``infoboxes``, ``suggestions`` and
``unresponsive_engines``. A format not listed in ``formats`` is refused with
403, as SearXNG does; ``limited=True`` answers 429 as its bot limiter does;
without ``format`` it serves an HTML page. ``site:domain`` in the query keeps
that domain's results, as the engines behind it do.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http_server import FakeHTTPServer, Reply, Request


@dataclass
class Doc:
    title: str
    url: str
    content: str


class FakeSearxng(FakeHTTPServer):
    def __init__(self, docs: list[Doc] | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.docs = list(docs or [])
        self.formats = ["html", "json"]
        self.limited = False
        self.unresponsive: list[list[str]] = []
        self.fail_status: int | None = None

    def handle(self, req: Request) -> Reply:
        if req.path not in ("/", "/search"):
            return Reply(404, "<h1>Not Found</h1>", content_type="text/html")
        params = dict(req.query)
        if req.method == "POST":
            params.update(parse_qs(req.body.decode("utf-8"), keep_blank_values=True))
        q = (params.get("q") or [""])[0]
        fmt = (params.get("format") or ["html"])[0]
        if self.limited:
            return Reply(429, "Too Many Requests")
        if self.fail_status is not None:
            return Reply(
                self.fail_status, "<h1>Internal Server Error</h1>", content_type="text/html"
            )
        if fmt not in self.formats:
            return Reply(403, "<h1>Forbidden</h1>", content_type="text/html")
        results = self._search(q)
        if fmt == "html":
            items = "".join(
                f'<article class="result"><h3><a href="{html.escape(d.url)}">{html.escape(d.title)}</a></h3>'
                f"<p>{html.escape(d.content)}</p></article>"
                for d in results
            )
            return Reply(200, f"<html><body>{items}</body></html>", content_type="text/html")
        return Reply.json(
            {
                "query": q,
                "number_of_results": 0,
                "results": [
                    {
                        "url": d.url,
                        "title": d.title,
                        "content": d.content,
                        "publishedDate": None,
                        "thumbnail": "",
                        "engine": "duckduckgo",
                        "template": "default.html",
                        "parsed_url": [*list(urlsplit(d.url)), ""],
                        "img_src": "",
                        "priority": "",
                        "engines": ["duckduckgo", "brave"],
                        "positions": [i + 1],
                        "score": round(2.0 / (i + 1), 4),
                        "category": "general",
                    }
                    for i, d in enumerate(results)
                ],
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": self.unresponsive,
            }
        )

    def _search(self, q: str) -> list[Doc]:
        words = []
        sites = []
        for word in q.split():
            if word.lower().startswith("site:"):
                sites.append(word[5:].lower())
            else:
                words.append(word.lower())
        out = []
        for doc in self.docs:
            host = (urlsplit(doc.url).hostname or "").lower()
            if sites and not any(host == s or host.endswith("." + s) for s in sites):
                continue
            text = f"{doc.title} {doc.content}".lower()
            if any(w in text for w in words):
                out.append(doc)
        return out
