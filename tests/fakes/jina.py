"""A fake Jina Reader: ``GET /<url>`` with ``Authorization: Bearer <key>``.

Speaks the Reader's wire format: with ``Accept: application/json`` the answer
is ``{"code": 200, "status": 20000, "data": {"title", "description", "url",
"content", "usage": {"tokens"}}}``; otherwise plain text (``Title:``,
``URL Source:``, ``Markdown Content:``). Errors use Jina's envelope
``{"data": null, "code", "name", "status", "message", "readableMessage"}``:
401 for a missing/invalid key, 422 when the target cannot be loaded, or a
status forced by the test. Pages are given by the test (URL → content).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.fakes.http_server import FakeHTTPServer, Reply, Request


@dataclass
class JinaPage:
    title: str
    content: str
    # The URL Jina ended up at (after redirects), when different.
    final_url: str | None = None


def _error(code: int, name: str, status: int, message: str) -> Reply:
    return Reply.json(
        {
            "data": None,
            "code": code,
            "name": name,
            "status": status,
            "message": message,
            "readableMessage": f"{name}: {message}",
        },
        code,
    )


class FakeJina(FakeHTTPServer):
    def __init__(self, api_key: str = "jina_test_key_abcdef", **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.api_key = api_key
        self.pages: dict[str, JinaPage] = {}
        self.fail_status: int | None = None

    def target(self, req: Request) -> str:
        raw = req.handler.path[1:]
        return raw

    def handle(self, req: Request) -> Reply:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "AuthenticationRequiredError", 40103, "Invalid API key")
        if self.fail_status is not None:
            return _error(
                self.fail_status,
                "ServiceBadAttemptError",
                self.fail_status * 100 + 3,
                "Reader is busy",
            )
        url = self.target(req)
        page = self.pages.get(url)
        if page is None:
            return _error(
                422,
                "AssertionFailureError",
                42206,
                f"Failed to goto {url}: net::ERR_NAME_NOT_RESOLVED",
            )
        final = page.final_url or url
        if "application/json" in req.headers.get("accept", ""):
            return Reply.json(
                {
                    "code": 200,
                    "status": 20000,
                    "data": {
                        "title": page.title,
                        "description": "",
                        "url": final,
                        "content": page.content,
                        "usage": {"tokens": max(1, len(page.content) // 4)},
                    },
                }
            )
        text = f"Title: {page.title}\n\nURL Source: {final}\n\nMarkdown Content:\n{page.content}\n"
        return Reply(200, text)
