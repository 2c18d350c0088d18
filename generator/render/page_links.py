"""What only the templates decide about a rendered page, recorded from the HTML the render step has
just produced and still holds: its links (with their rel and the <section>s around them), its ids,
and the text of each section (where an affiliate disclosure has to sit). The head (title,
description, canonical, JSON-LD) is not read here: the checks take it from the plan
(check/plan_meta.py).

This is one regular-expression pass over the markup the templates and the Markdown renderer emit,
not an HTML parser: tags and the attributes read in lower case, attribute values in double quotes (or no value), text with
"<" escaped, comments, the doctype, and <script>/<style> whose raw content holds no end tag of its
own. A page with any other "<" is refused naming the page and line, rather than misread; the HTML
reader in tests/check/html_oracle.py reads any HTML and a test holds the two equal on the fixture site."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from typing import NamedTuple

from generator.errors import Issue, RenderError


class Link(NamedTuple):  # a tuple: a page's links are packed (build/facts.py) as plain tuples
    href: str
    line: int
    rel: frozenset[str] = frozenset()
    sections: tuple[int, ...] = ()  # indexes into the page's section texts, innermost last
    tag: str = "a"


@dataclass
class PageFacts:
    """What the site checks read of one page: links, ids and section texts recorded from its HTML,
    the head (title to json_ld) filled in from the plan."""

    ids: set[str] = field(default_factory=set)
    duplicate_ids: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    title: str = ""
    description: str | None = None
    noindex: bool = False
    canonical: str | None = None
    refresh: bool = False
    json_ld: list[str] = field(default_factory=list)
    sections: list[list[str]] = field(default_factory=list)  # per section its text as one string, or none when empty


LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "form": "action", "source": "src", "iframe": "src"}
_RAW_TAGS = ("script", "style")  # their content is raw text up to their end tag
_FACT_TAGS = (*LINK_ATTRS, "section", "style")

_ATTR = r' [a-zA-Z_:][-a-zA-Z0-9_:.]*+(?:="[^"]*+")?'  # SVG's are camel case (viewBox)
# Markup no fact depends on: an end tag other than </section>, a start tag of another name without
# an id, a comment, the doctype. (Their "<" is shared: the pattern tries the rest only after one.)
_DULL = (
    r"<(?:/(?!section>)[a-z][a-z0-9-]*+>"
    rf"|(?!(?:{'|'.join(_FACT_TAGS)})[ />])[a-z][a-z0-9-]*+(?:(?! id=){_ATTR})*+ ?/?>"
    r"|!--(?s:.*?)-->|!doctype html>)"
)
_STEP = re.compile(
    rf"(?:[^<]++|{_DULL})*+"
    rf"(?:(?P<start><(?P<tag>[a-z][a-z0-9-]*+)(?P<attrs>(?:{_ATTR})*+) ?(?P<close>/)?>)"
    r"|(?P<end></section>)|(?P<eof>\Z)|(?P<bad><))"
)
_ATTRS = re.compile(r' ([a-zA-Z_:][-a-zA-Z0-9_:.]*+)(?:="([^"]*+)")?')
_RAW_END = {tag: re.compile(f"</{tag}>") for tag in _RAW_TAGS}
_MARKUP = re.compile(r'<!--(?s:.*?)-->|<(?:[^>"]|"[^"]*+")*+>')


def _refused(url: str, html: str, at: int) -> RenderError:
    line = html.count("\n", 0, at) + 1
    return RenderError([Issue(f"site{url}", line, 0, "html", f"markup the link recorder does not read: {html[at:at + 40]!r}",
                              "Write it as the templates do: lower-case tags, double-quoted attributes, '<' in text escaped")])


def page_links(html: str, url: str = "", texts_with: frozenset[str] | None = None) -> PageFacts:
    """The links, ids and section texts of one rendered page (url names it in a refusal).

    texts_with: words without whitespace, or None. When given, a section whose text holds none of
    them gets no text (as if it were empty), and its markup is not taken apart: a word in the text
    is in the section's markup with its character references replaced, since neither a reference
    nor a word runs across a tag."""
    facts = PageFacts()
    ids, duplicate_ids, links = facts.ids, facts.duplicate_ids, facts.links
    regions: list[list[int]] = []  # per section: [start, end) of its content; end -1 while open
    open_sections: list[int] = []
    line, line_pos, pos = 1, 0, 0
    step = _STEP.match
    while True:
        m = step(html, pos)
        pos = m.end()
        _, tag, attr_text, close, end, eof, bad = m.groups()
        if eof is not None:
            break
        if bad is not None:
            raise _refused(url, html, pos - 1)
        if end is not None:
            if open_sections:
                regions[open_sections.pop()][1] = m.start("end")
            continue
        attrs = {name: unescape(value) if "&" in value else value for name, value in _ATTRS.findall(attr_text)} if attr_text else {}
        if "id" in attrs:
            (duplicate_ids.append if attrs["id"] in ids else ids.add)(attrs["id"])
        if tag == "a" and "name" in attrs:
            ids.add(attrs["name"])
        target = attrs.get(LINK_ATTRS.get(tag, ""))
        if target:
            line += html.count("\n", line_pos, m.start("start"))
            line_pos = m.start("start")
            rel = frozenset(attrs["rel"].lower().split()) if "rel" in attrs else frozenset()
            links.append(Link(target, line, rel, tuple(open_sections), tag))
        if tag == "section":
            if close:
                regions.append([pos, pos])
            else:
                open_sections.append(len(regions))
                regions.append([pos, -1])
        elif tag in _RAW_TAGS and not close:
            closing = _RAW_END[tag].search(html, pos)
            if closing is None:
                raise _refused(url, html, m.start("start"))
            pos = closing.end()
    for start, stop in regions:
        region = html[start : stop if stop >= 0 else len(html)]
        if texts_with is not None and not _may_hold(region, texts_with):
            facts.sections.append([])
            continue
        text = unescape(_MARKUP.sub(" ", region))
        facts.sections.append([text] if text else [])
    return facts


def _may_hold(region: str, words: frozenset[str]) -> bool:
    """False only when the text of region holds none of words."""
    if "" in words:
        return True
    if "&" in region:
        region = unescape(region)
    return any(word in region for word in words)
