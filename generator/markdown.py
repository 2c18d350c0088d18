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


def unsafe_links(text: str) -> list[str]:
    """Link targets in text that the renderer would drop, so check can name them."""
    tokens = markdown_renderer().parse(text)
    bad: list[str] = []
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                if not is_safe_link(href):
                    bad.append(href)
    # markdown-it already refused unsafe links while parsing, so look for their text too.
    for match in re.finditer(r"\]\(\s*<?([^)\s>]+)", text):
        if not is_safe_link(match.group(1)) and match.group(1) not in bad:
            bad.append(match.group(1))
    return bad
