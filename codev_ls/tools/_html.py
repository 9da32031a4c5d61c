"""HTML → Markdown for WebFetch: the page's main content, headings, links and images kept.

Why markdownify (with the clean-up below) and not trafilatura: measured with
``bench/web_html_to_markdown.py`` on saved real pages (the Rust book and
rustdoc from rustup, the Node.js ``path`` API docs and the Valgrind manual from
Debian packages) and a news page with ads, cookie banner and comments. Both
kept the body text of the docs pages, but trafilatura lost every section
heading of the Valgrind manual and kept its navigation bar, dropped the Rust
book's image links, dropped the Node page's version-history tables, resolved
its in-page anchors against the site root (``https://nodejs.org#path``), and
kept a reader comment on the news page: 44/54 content markers, 4/21 chrome
markers. markdownify with this clean-up kept 54/54 and 0/21. It is slower
(2-3x trafilatura; 0.1-0.3 s for a typical page, about 3 s per MB of HTML),
so WebFetch runs it in a worker thread and converts at most 3 MB of HTML.

The clean-up: drop what is never content (scripts, styles, forms, hidden
elements), drop page chrome (``nav``, ``aside``, page-level ``header`` and
``footer``, ARIA landmarks of those kinds, common sidebar/cookie/ad
containers), then convert the main container (``main``, ``[role=main]``, a
lone ``article``, else ``body``). Relative links and image sources become
absolute so the model can fetch them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

# Tags whose content is never page text.
_JUNK_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "link",
    "meta",
    "dialog",
)
# Page chrome: removed wherever it is.
_CHROME_TAGS = ("nav", "aside")
_CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menubar", "toolbar"}
)
# id/class tokens of containers that are chrome on almost every site.
_CHROME_TOKENS = frozenset(
    {
        "sidebar",
        "side-bar",
        "navbar",
        "nav-bar",
        "menu-bar",
        "breadcrumb",
        "breadcrumbs",
        "cookie",
        "cookies",
        "cookie-banner",
        "cookie-consent",
        "consent",
        "advert",
        "advertisement",
        "ads",
        "ad-slot",
        "social-share",
        "share-buttons",
        "newsletter",
        "skip-link",
        "skip-to-content",
        # DocBook's chapter navigation (Valgrind, PostgreSQL, GNU manuals...)
        "navheader",
        "navfooter",
        "nav",
    }
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?([\w+#.-]+)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


@dataclass(slots=True)
class Page:
    """A converted page: its title and its main content as Markdown."""

    title: str
    markdown: str


def html_to_markdown(html: str, base_url: str = "") -> Page:
    """Convert an HTML document to Markdown, keeping the main content only."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    title = ""
    if soup.title is not None and soup.title.string:
        title = " ".join(soup.title.string.split())
    base = base_url
    base_tag = soup.find("base", href=True)
    if base_tag is not None:
        base = urljoin(base_url, str(base_tag.get("href")))
    _drop_junk(soup)
    root = _main_container(soup)
    _drop_chrome(root)
    _absolutize(root, base)
    markdown = _Converter().convert_soup(root)
    markdown = _TRAILING_SPACE.sub("\n", markdown)
    markdown = _BLANK_LINES.sub("\n\n", markdown).strip()
    return Page(title=title, markdown=markdown)


def html_to_text(html: str) -> str:
    """The text of an HTML document without any structure: the fallback when conversion fails."""
    text = re.sub(r"(?is)<(script|style|noscript|template)\b.*?</\1\s*>", " ", html)
    text = re.sub(r"(?s)<!--.*?-->", " ", text)
    text = re.sub(r"(?i)<br\s*/?>|</(p|div|h[1-6]|li|tr|pre|section|article)\s*>", "\n", text)
    text = re.sub(r"<[^>]+>", " ", text)
    import html as html_lib

    text = html_lib.unescape(text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _drop_junk(soup: Any) -> None:
    from bs4 import Comment

    for tag in soup.find_all(_JUNK_TAGS):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        attrs = tag.attrs or {}
        if (
            "hidden" in attrs
            or str(attrs.get("aria-hidden", "")).lower() == "true"
            or _HIDDEN_STYLE.search(str(attrs.get("style", "")))
        ):
            tag.decompose()


def _main_container(soup: Any) -> Any:
    """The element holding the page's content: main, [role=main], a lone article, or body."""
    candidates = soup.find_all("main") or soup.find_all(attrs={"role": "main"})
    if candidates:
        return max(candidates, key=lambda t: len(t.get_text(" ", strip=True)))
    body = soup.body or soup
    articles = soup.find_all("article")
    if len(articles) == 1:
        # A lone article is the content only if it holds most of the text (not a teaser box).
        article_len = len(articles[0].get_text(" ", strip=True))
        if article_len >= 0.3 * len(body.get_text(" ", strip=True)):
            return articles[0]
    return body


def _drop_chrome(root: Any) -> None:
    doomed = []
    for tag in root.find_all(True):
        attrs = tag.attrs or {}
        role = str(attrs.get("role", "")).lower()
        if tag.name in _CHROME_TAGS or role in _CHROME_ROLES:
            doomed.append(tag)
        elif tag.name in ("header", "footer") and tag.find_parent("article") is None:
            # Page-level header/footer is chrome; one inside an article holds its title/byline.
            if tag.name == "footer" or tag.find(["h1", "h2"]) is None:
                doomed.append(tag)
        elif _has_chrome_token(attrs) or str(attrs.get("summary", "")).lower().startswith(
            "navigation"
        ):
            doomed.append(tag)
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()


def _has_chrome_token(attrs: dict[str, Any]) -> bool:
    classes = attrs.get("class") or []
    if isinstance(classes, str):
        classes = classes.split()
    tokens = {str(c).lower() for c in classes}
    ident = attrs.get("id")
    if ident:
        tokens.add(str(ident).lower())
    return not tokens.isdisjoint(_CHROME_TOKENS)


def _absolutize(root: Any, base: str) -> None:
    for tag in root.find_all("a", href=True):
        href = str(tag["href"]).strip()
        if href.lower().startswith(("javascript:", "data:")):
            del tag["href"]
        elif base and not href.startswith("#"):
            tag["href"] = urljoin(base, href)
    for tag in root.find_all("img"):
        src = str(tag.get("src") or tag.get("data-src") or "").strip()
        if not src or src.lower().startswith("data:"):
            # Inline data images are bytes, not links: keep the alt text only.
            tag.replace_with(str(tag.get("alt") or ""))
            continue
        tag["src"] = urljoin(base, src) if base else src


def _code_language(el: Any) -> str:
    for node in (el, el.find("code")):
        if node is None:
            continue
        classes = node.get("class") or []
        m = _LANG_CLASS.search(" ".join(classes) if isinstance(classes, list) else str(classes))
        if m:
            return m.group(1)
    return ""


def _make_converter_class() -> type:
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        """markdownify with image links kept everywhere (headings, links, table cells)."""

        def convert_img(self, el: Any, text: str, parent_tags: set[str]) -> str:
            alt = (el.attrs.get("alt") or "").replace("\n", " ").strip()
            src = el.attrs.get("src") or ""
            if not src:
                return alt
            title = el.attrs.get("title") or ""
            title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
            return f"![{alt}]({src}{title_part})"

    return Converter


_CONVERTER_CLASS: type | None = None


def _Converter() -> Any:
    global _CONVERTER_CLASS
    if _CONVERTER_CLASS is None:
        _CONVERTER_CLASS = _make_converter_class()
    return _CONVERTER_CLASS(
        heading_style="ATX",
        bullets="-",
        escape_underscores=False,
        escape_asterisks=False,
        code_language_callback=_code_language,
        strip_document="strip",
    )
