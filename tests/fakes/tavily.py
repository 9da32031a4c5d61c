"""A fake Tavily Search API: ``POST /search`` with ``Authorization: Bearer <key>``.

Speaks the documented wire format: a JSON body (``query``, ``max_results``,
``search_depth``, ``include_domains``, ``exclude_domains``...), answers
``{"query", "answer", "images", "results": [{"title", "url", "content",
"score", "raw_content"}], "response_time", ...}``; errors carry
``{"detail": {"error": "..."}}`` with 400 (bad request), 401 (missing or
invalid key), 429 (rate limit), 432/433 (plan limits) or 5xx. The results
come from a corpus the test gives, filtered by the domain lists as Tavily does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from tests.fakes.http_server import FakeHTTPServer, Reply, Request


@dataclass
class Doc:
    title: str
    url: str
    content: str


class FakeTavily(FakeHTTPServer):
    def __init__(
        self, api_key: str = "tvly-test-key-123456", docs: list[Doc] | None = None, **kw: object
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.api_key = api_key
        self.docs = list(docs or [])
        # (status, error text) forced on every authorised search.
        self.fail_with: tuple[int, str] | None = None

    def handle(self, req: Request) -> Reply:
        if req.path != "/search":
            return Reply.json({"detail": "Not Found"}, 404)
        if req.method != "POST":
            return Reply.json({"detail": "Method Not Allowed"}, 405)
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply.json(
                {"detail": {"error": "Unauthorized: missing or invalid API key."}}, 401
            )
        if self.fail_with is not None:
            status, text = self.fail_with
            return Reply.json({"detail": {"error": text}}, status)
        try:
            body = req.json()
        except ValueError:
            return Reply.json({"detail": {"error": "Invalid JSON body."}}, 400)
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            return Reply.json({"detail": {"error": "Query is missing."}}, 400)
        max_results = body.get("max_results", 5)
        if not isinstance(max_results, int) or not 0 <= max_results <= 20:
            return Reply.json({"detail": {"error": "max_results must be between 0 and 20."}}, 400)
        include = [d.lower() for d in body.get("include_domains") or []]
        exclude = [d.lower() for d in body.get("exclude_domains") or []]
        started = time.perf_counter()
        words = {w.lower() for w in query.split()}
        results = []
        for doc in self.docs:
            host = (urlsplit(doc.url).hostname or "").lower()
            if include and not any(host == d or host.endswith("." + d) for d in include):
                continue
            if any(host == d or host.endswith("." + d) for d in exclude):
                continue
            text = f"{doc.title} {doc.content}".lower()
            score = sum(1 for w in words if w in text) / max(len(words), 1)
            if score > 0:
                results.append((score, doc))
        results.sort(key=lambda p: -p[0])
        return Reply.json(
            {
                "query": query,
                "follow_up_questions": None,
                "answer": None,
                "images": [],
                "results": [
                    {
                        "title": d.title,
                        "url": d.url,
                        "content": d.content,
                        "score": round(s, 4),
                        "raw_content": None,
                    }
                    for s, d in results[:max_results]
                ],
                "response_time": round(time.perf_counter() - started, 3),
                "request_id": "fake-request-id",
            }
        )
