"""WebSearch: search the web through Tavily or a self-hosted SearXNG, results numbered for citing.

The backend is chosen from the environment: Tavily when ``TAVILY_API_KEY`` is
set (``TAVILY_BASE_URL`` overrides its endpoint), else SearXNG's JSON API at
``CODEV_SEARXNG_URL`` (default ``http://127.0.0.1:8080``, the instance
``deploy/searxng`` starts). ``allowed_domains``/``blocked_domains`` are passed
to the backend where it understands them and always applied to the results
here as well (a domain covers its subdomains).

Failures say who failed and what to do: an unreachable SearXNG explains how to
start one or how to use Tavily instead; HTTP errors name the backend and the
status, never the key; every request is bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from codev_ls.engine.context import ToolUseContext
from codev_ls.engine.tool import (
    Progress,
    ProgressCallback,
    Tool,
    ToolError,
    ToolResult,
    ValidationResult,
)
from codev_ls.permissions.types import PermissionSubject
from codev_ls.tools._web import (
    cut,
    describe_transport_error,
    host_in_any,
    normalize_domain,
    redact,
    url_host,
    web_services,
)

if TYPE_CHECKING:
    import httpx

    from codev_ls.tools._web import WebServices

MAX_RESULTS = 10
SNIPPET_CHARS = 400
TAVILY_DEFAULT_URL = "https://api.tavily.com"
SEARXNG_DEFAULT_URL = "http://127.0.0.1:8080"
SEARXNG_HELP = (
    "Start the private SearXNG that ships with Codev LS: "
    '`docker compose -f deploy/searxng/compose.yaml up -d` (see the README, "Web search"), '
    "or point CODEV_SEARXNG_URL at a SearXNG instance with the JSON format enabled, "
    "or set TAVILY_API_KEY to search with Tavily instead."
)

PROMPT = """\
Searches the web and returns results (title, URL, snippet) numbered for citing.
- Use it for information beyond your training data: current events, recent releases, \
documentation of new versions, error messages you do not recognise.
- `allowed_domains` keeps only results from those domains (and their subdomains); \
`blocked_domains` leaves those out.
- Results are snippets: use WebFetch on a result's URL to read the page itself.
- In your answer, cite the sources you relied on as Markdown links, e.g. [title](url)."""

_DOMAIN_RE = re.compile(
    r"^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}$"
)


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=2, description="The search query.")
    allowed_domains: list[str] | None = Field(
        default=None,
        description="Only return results from these domains (subdomains included), "
        'e.g. ["docs.python.org"].',
    )
    blocked_domains: list[str] | None = Field(
        default=None,
        description="Never return results from these domains (subdomains included).",
    )


# --------------------------------------------------------------------------- results


@dataclass(slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


@dataclass(slots=True)
class SearchReply:
    backend: str
    hits: list[SearchHit]
    notes: list[str] = field(default_factory=list)


class SearchBackendError(ToolError):
    """A backend failed; the message names it and says what to do."""


class SearchBackend(Protocol):
    name: str
    base_url: str

    async def search(
        self,
        client: httpx.AsyncClient,
        query: str,
        allowed: list[str],
        blocked: list[str],
        max_results: int,
    ) -> SearchReply: ...


# --------------------------------------------------------------------------- Tavily


class TavilyBackend:
    """Tavily's Search API: ``POST {base}/search`` with a Bearer key and a JSON body."""

    name = "Tavily"

    def __init__(self, api_key: str, base_url: str | None = None) -> None:
        self.api_key = api_key
        self.base_url = (base_url or TAVILY_DEFAULT_URL).rstrip("/")

    async def search(
        self,
        client: httpx.AsyncClient,
        query: str,
        allowed: list[str],
        blocked: list[str],
        max_results: int,
    ) -> SearchReply:
        import httpx

        body: dict[str, Any] = {
            "query": query,
            "max_results": max_results,
            "search_depth": "basic",
            "include_answer": False,
        }
        if allowed:
            body["include_domains"] = allowed
        if blocked:
            body["exclude_domains"] = blocked
        url = f"{self.base_url}/search"
        try:
            resp = await client.post(
                url,
                json=body,
                headers={"Authorization": f"Bearer {self.api_key}"},
            )
        except httpx.TimeoutException as exc:
            raise SearchBackendError(_timeout_message(self, client)) from exc
        except httpx.HTTPError as exc:
            raise SearchBackendError(
                f"Tavily ({self.base_url}) could not be reached: {describe_transport_error(exc)}. "
                "Check the network or TAVILY_BASE_URL; or unset TAVILY_API_KEY to search "
                f"with a private SearXNG instead ({SEARXNG_HELP})"
            ) from exc
        if resp.status_code != 200:
            raise SearchBackendError(self._status_message(resp))
        data = _json_object(resp, "Tavily")
        hits = []
        for item in data.get("results") or []:
            if isinstance(item, dict) and item.get("url"):
                hits.append(
                    SearchHit(
                        str(item.get("title") or item["url"]),
                        str(item["url"]),
                        str(item.get("content") or ""),
                    )
                )
        return SearchReply(self.name, hits)

    def _status_message(self, resp: httpx.Response) -> str:
        status = resp.status_code
        detail = redact(_tavily_detail(resp), [self.api_key])
        said = f": {detail}" if detail else ""
        if status == 401:
            return (
                f"Tavily rejected the API key (HTTP 401){said}. "
                "Check TAVILY_API_KEY (it is not shown here)."
            )
        if status == 429:
            return (
                f"Tavily's rate limit was reached (HTTP 429){said}. "
                "Wait a little and search again, or use fewer searches."
            )
        if status in (403, 432, 433):
            return (
                f"Tavily refused the search (HTTP {status}){said}. "
                "The account's plan or usage limit may be exhausted."
            )
        if status >= 500:
            return f"Tavily had a server error (HTTP {status}){said}. Try again later."
        return f"Tavily answered HTTP {status}{said}."


def _tavily_detail(resp: httpx.Response) -> str:
    """Tavily's error text: ``{"detail": {"error": "..."}}`` (or a plain string)."""
    try:
        data = resp.json()
    except ValueError:
        return cut(resp.text, 200) if resp.text.strip() else ""
    if isinstance(data, dict):
        detail = data.get("detail", data.get("error", ""))
        if isinstance(detail, dict):
            detail = detail.get("error") or detail.get("message") or ""
        if isinstance(detail, list):  # FastAPI validation errors
            detail = "; ".join(
                str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail
            )
        return cut(str(detail), 300)
    return ""


# --------------------------------------------------------------------------- SearXNG


class SearxngBackend:
    """SearXNG's search API: ``GET {base}/search?q=...&format=json``."""

    name = "SearXNG"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = (base_url or SEARXNG_DEFAULT_URL).rstrip("/")

    async def search(
        self,
        client: httpx.AsyncClient,
        query: str,
        allowed: list[str],
        blocked: list[str],
        max_results: int,
    ) -> SearchReply:
        import httpx

        q = query
        if len(allowed) == 1 and "site:" not in query:
            # Most engines behind SearXNG understand `site:`; results are filtered here anyway.
            q = f"{query} site:{allowed[0]}"
        try:
            resp = await client.get(
                f"{self.base_url}/search",
                params={"q": q, "format": "json", "pageno": 1},
                headers={"Accept": "application/json"},
            )
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise SearchBackendError(
                f"No web search backend is reachable: SearXNG at {self.base_url} did not answer "
                f"({describe_transport_error(exc)}). {SEARXNG_HELP}"
            ) from exc
        except httpx.TimeoutException as exc:
            raise SearchBackendError(_timeout_message(self, client)) from exc
        except httpx.HTTPError as exc:
            raise SearchBackendError(
                f"SearXNG at {self.base_url} failed: {describe_transport_error(exc)}."
            ) from exc
        status = resp.status_code
        if status == 403:
            raise SearchBackendError(
                f"SearXNG at {self.base_url} refused the JSON format (HTTP 403). Enable it in its "
                "settings.yml (`search: formats: [html, json]`, as deploy/searxng/settings.yml does) "
                "and restart it."
            )
        if status == 429:
            raise SearchBackendError(
                f"SearXNG at {self.base_url} rate-limited the search (HTTP 429). Its bot limiter "
                "blocks API use: set `server: limiter: false` in its settings.yml, or wait and retry."
            )
        if status >= 500:
            raise SearchBackendError(
                f"SearXNG at {self.base_url} had a server error (HTTP {status}). Try again later."
            )
        if status != 200:
            raise SearchBackendError(f"SearXNG at {self.base_url} answered HTTP {status}.")
        data = _json_object(resp, f"SearXNG at {self.base_url}")
        hits = []
        for item in data.get("results") or []:
            if isinstance(item, dict) and item.get("url"):
                hits.append(
                    SearchHit(
                        str(item.get("title") or item["url"]),
                        str(item["url"]),
                        str(item.get("content") or ""),
                    )
                )
        notes = []
        dead = data.get("unresponsive_engines") or []
        if dead and not hits:
            names = ", ".join(
                f"{e[0]} ({e[1]})" if isinstance(e, list) and len(e) >= 2 else str(e) for e in dead
            )
            notes.append(f"These SearXNG engines did not answer: {cut(names, 300)}.")
        return SearchReply(self.name, hits, notes)


def _timeout_message(backend: SearchBackend, client: httpx.AsyncClient) -> str:
    seconds = client.timeout.read or 0
    return (
        f"{backend.name} ({backend.base_url}) did not answer within {seconds:g} s. "
        "Try again; if it keeps happening, check that the service is healthy."
    )


def _json_object(resp: httpx.Response, who: str) -> dict[str, Any]:
    try:
        data = resp.json()
    except ValueError as exc:
        kind = resp.headers.get("content-type", "unknown").split(";")[0]
        raise SearchBackendError(
            f"{who} answered with {kind}, not its JSON search format. "
            "Is the URL right, and is the JSON format enabled?"
        ) from exc
    if not isinstance(data, dict):
        raise SearchBackendError(f"{who} answered JSON that is not a search result object.")
    return data


def choose_backend(env: dict[str, str] | None = None) -> TavilyBackend | SearxngBackend:
    """Tavily when its key is set, else SearXNG."""
    env = dict(os.environ) if env is None else env
    key = env.get("TAVILY_API_KEY", "").strip()
    if key:
        return TavilyBackend(key, env.get("TAVILY_BASE_URL", "").strip() or None)
    return SearxngBackend(env.get("CODEV_SEARXNG_URL", "").strip() or None)


# --------------------------------------------------------------------------- the tool


class WebSearchTool(Tool):
    name = "WebSearch"
    search_hint = "search the web internet current information tavily searxng"
    input_model = WebSearchInput
    progress_type = "WebSearchProgress"

    def description(self) -> str:
        return "Search the web (Tavily or SearXNG); results numbered with title, URL and snippet."

    def prompt(self) -> str:
        return PROMPT

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    def get_activity_description(self, input: WebSearchInput) -> str:
        return f'searching "{cut(input.query, 80)}"'

    def render_tool_use_message(self, input: WebSearchInput) -> str:
        extra = ""
        if input.allowed_domains:
            extra += f" (only {', '.join(input.allowed_domains)})"
        if input.blocked_domains:
            extra += f" (not {', '.join(input.blocked_domains)})"
        return f'WebSearch "{input.query}"{extra}'

    def to_auto_classifier_input(self, input: WebSearchInput) -> str:
        return input.query

    def permission_subject(self, input: WebSearchInput, ctx: ToolUseContext) -> PermissionSubject:
        return PermissionSubject(summary=f'search the web for "{cut(input.query, 200)}"')

    async def validate_input(self, input: WebSearchInput, ctx: ToolUseContext) -> ValidationResult:
        if not input.query.strip():
            return ValidationResult.fail("query must not be blank.")
        for field_name in ("allowed_domains", "blocked_domains"):
            for raw in getattr(input, field_name) or []:
                domain = normalize_domain(raw)
                if not domain or not _DOMAIN_RE.match(domain):
                    return ValidationResult.fail(
                        f"{field_name} holds {raw!r}, which is not a domain name. "
                        'Give bare domains such as "python.org".'
                    )
        return ValidationResult.success()

    async def call(
        self, input: WebSearchInput, ctx: ToolUseContext, on_progress: ProgressCallback
    ) -> ToolResult:
        query = input.query.strip()
        allowed = _domains(input.allowed_domains)
        blocked = _domains(input.blocked_domains)
        backend = choose_backend()
        services = web_services(ctx.engine)
        on_progress(
            Progress(
                "WebSearchProgress",
                f'Searching the web for "{cut(query, 120)}" ({backend.name})',
                data={"query": query, "backend": backend.name},
            )
        )
        reply = await _search_bounded(backend, services, query, allowed, blocked)
        hits, left_out = filter_hits(reply.hits, allowed, blocked)
        hits = hits[:MAX_RESULTS]
        on_progress(
            Progress(
                "WebSearchProgress",
                f'{len(hits)} result{"s" if len(hits) != 1 else ""} for "{cut(query, 120)}"',
                data={"query": query, "backend": backend.name, "result_count": len(hits)},
            )
        )
        text = format_results(query, reply.backend, hits, left_out, reply.notes)
        return ToolResult(
            text,
            meta={
                "backend": reply.backend,
                "query": query,
                "results": [{"title": h.title, "url": h.url} for h in hits],
            },
        )


async def _search_bounded(
    backend: TavilyBackend | SearxngBackend,
    services: WebServices,
    query: str,
    allowed: list[str],
    blocked: list[str],
) -> SearchReply:
    client = services.client(backend.name.lower(), follow_redirects=True)
    try:
        async with asyncio.timeout(services.timeout + 1):
            # Ask for more than we show: local domain filtering may drop some.
            want = MAX_RESULTS * 2 if (allowed or blocked) else MAX_RESULTS
            return await backend.search(client, query, allowed, blocked, min(want, 20))
    except TimeoutError as exc:
        raise SearchBackendError(_timeout_message(backend, client)) from exc


def _domains(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for raw in values or []:
        domain = normalize_domain(raw)
        if domain and domain not in out:
            out.append(domain)
    return out


def filter_hits(
    hits: list[SearchHit], allowed: list[str], blocked: list[str]
) -> tuple[list[SearchHit], int]:
    """Apply the domain filters (subdomains included) and drop duplicate URLs."""
    kept: list[SearchHit] = []
    seen: set[str] = set()
    left_out = 0
    for hit in hits:
        host = url_host(hit.url)
        if not host or (allowed and not host_in_any(host, allowed)) or host_in_any(host, blocked):
            left_out += 1
            continue
        key = hit.url.rstrip("/")
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit)
    return kept, left_out


def format_results(
    query: str, backend: str, hits: list[SearchHit], left_out: int, notes: list[str]
) -> str:
    """The numbered list the model reads and cites."""
    lines: list[str] = []
    if not hits:
        lines.append(f'No web results for "{query}" ({backend}).')
        if left_out:
            lines.append(
                f"{left_out} result{'s' if left_out != 1 else ''} from other domains were left out "
                "by allowed_domains/blocked_domains: widen them or rephrase the query."
            )
        lines.extend(notes)
        return "\n".join(lines)
    count = f"{len(hits)} result{'s' if len(hits) != 1 else ''}"
    lines.append(f'Web search results for "{query}" ({backend}, {count}):')
    for n, hit in enumerate(hits, 1):
        lines.append("")
        lines.append(f"[{n}] {cut(hit.title, 200)}")
        lines.append(f"    {hit.url}")
        snippet = cut(_strip_tags(hit.snippet), SNIPPET_CHARS)
        if snippet:
            lines.append(f"    {snippet}")
    lines.append("")
    if left_out:
        lines.append(
            f"({left_out} result{'s' if left_out != 1 else ''} outside allowed_domains/"
            "blocked_domains were left out.)"
        )
    lines.extend(notes)
    lines.append(
        "Cite the results you rely on by number and link, e.g. "
        f"[1] [{cut(hits[0].title, 60)}]({hits[0].url}). Use WebFetch to read a page in full."
    )
    return "\n".join(lines)


_TAG_RE = re.compile(r"<[^>]{1,200}>")


def _strip_tags(text: str) -> str:
    import html

    return html.unescape(_TAG_RE.sub("", text))
