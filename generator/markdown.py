"""One configured Markdown renderer for editor prose: raw HTML off, links limited to http(s) and site paths."""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt

# Links may point at the web over https/http, at a site path, or at an anchor; nothing
# that a browser would execute or inline (javascript:, data:, vbscript:, file:).
SAFE_LINK = re.compile(r"^(?:https?://|/(?!/)|#)[^\s\x00-\x1f]*$", re.IGNORECASE)


def is_safe_link(url: str) -> bool:
    return bool(SAFE_LINK.match(url.strip()))


@lru_cache(maxsize=1)
def markdown_renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = is_safe_link  # type: ignore[method-assign]
    return md


def markdown_to_html(text: str) -> str:
    return markdown_renderer().render(text)


def markdown_inline_html(text: str) -> str:
    return markdown_renderer().renderInline(text)


@lru_cache(maxsize=1)
def _permissive_parser() -> MarkdownIt:
    # Same grammar, but keeps every link so check can name the ones the renderer would drop.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


def unsafe_links(text: str) -> list[str]:
    """Link and image targets in text that the renderer would drop (inline, reference and
    autolinks alike), so check can name them."""
    bad: list[str] = []
    for token in _permissive_parser().parse(text):
        for child in token.children or ():
            if child.type in ("link_open", "image"):
                target = str(child.attrGet("href") or child.attrGet("src") or "")
                if not is_safe_link(target) and target not in bad:
                    bad.append(target)
    return bad
