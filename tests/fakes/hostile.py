"""A hostile HTTP service for secret tests: every request fails, and some failures
quote the request back — its URL, its headers, its body — the way careless APIs
and proxies do. A client that copies a service's error text into its own message
would leak its API key through this server.

Modes (``server.mode``):

- ``"401"``, ``"403"``, ``"429"``, ``"500"``, ``"502"``: that status with a JSON
  error that echoes the request line, the headers and the body;
- ``"html"``: 500 with an HTML page echoing the same;
- ``"garbage"``: 200 with a body that is not what any API sends, echoing the request;
- ``"redirect"``: 302 to a URL that carries the request's query string;
- ``"hang"``: holds the request (the client's timeout must fire);
- ``"close"``: closes the connection without an answer.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.http_server import STREAMED, FakeHTTPServer, Reply, Request

MODES = ("401", "403", "429", "500", "502", "html", "garbage", "redirect", "hang", "close")


class HostileServer(FakeHTTPServer):
    hold_limit = 10.0

    def __init__(self) -> None:
        super().__init__()
        self.mode = "401"

    def _echo(self, req: Request) -> dict[str, Any]:
        query = "&".join(f"{k}={v[0]}" for k, v in req.query.items())
        return {
            "request": f"{req.method} {req.path}?{query}",
            "headers": req.headers,
            "body": req.body.decode("utf-8", "replace")[:2000],
        }

    def handle(self, req: Request) -> Any:
        echo = self._echo(req)
        mode = self.mode
        if mode == "hang":
            self.hold()
            self._held.wait(timeout=self.hold_limit)
            return Reply(504, "gave up")
        if mode == "close":
            req.handler.close_connection = True
            try:
                req.handler.connection.shutdown(2)
            except OSError:
                pass
            return STREAMED
        if mode == "html":
            return Reply(
                500,
                f"<html><body><h1>Error</h1><pre>{json.dumps(echo)}</pre></body></html>",
                content_type="text/html",
            )
        if mode == "garbage":
            return Reply(200, "not json at all " + json.dumps(echo))
        if mode == "redirect":
            query = echo["request"].split("?", 1)[1]
            return Reply(302, "", headers={"Location": f"{self.url}/moved?{query}"})
        status = int(mode)
        error = {
            "error": {"message": f"request rejected: {json.dumps(echo)}", "code": status},
            "status": "REQUEST_DENIED",
            "info": f"bad key in {echo['request']}",
            "echo": echo,
        }
        return Reply.json(error, status)
