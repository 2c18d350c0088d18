"""What only the templates decide about a rendered page, recorded from the HTML the render step has
just produced and still holds: its links (with their rel and the <section>s around them), its ids,
and the text of each section (where an affiliate disclosure has to sit). The head (title,
description, canonical, JSON-LD) is not read here: the checks take it from the plan
(check/plan_meta.py).

This is one regular-expression pass over the markup the templates and the Markdown renderer emit,
not an HTML parser: tags and the attributes read in lower case, attribute values in double quotes
(or no value, except on the attributes a fact is read from: id, name, href, src, action, rel),
text with "<" escaped, comments, the doctype, and <script>/<style> whose raw content holds no end
tag of its own. A page with any other "<" is refused naming the page and line, rather than
misread; the HTML reader in tests/check/html_oracle.py reads any HTML and a test holds the two
equal on the fixture site. The pass keeps only what a fact needs (record); the section texts are
taken apart afterwards, and for a build only where a disclosure can be (section_texts)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
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
# The attributes a fact is read from, each in a group of its own (a repeated one: the last wins, as
# in a dict of the attributes); written without a value they are refused rather than read as "".
_READ_ATTRS = ("id", "name", "href", "src", "action", "rel")
_FACT_ATTR = (
    " (?:" + "|".join(f'{name}="(?P<{name}>[^"]*+)"' for name in _READ_ATTRS)
    + f"|(?!(?:{'|'.join(_READ_ATTRS)})[ =/>]){_ATTR[1:]})"
)
_STEP = re.compile(
    rf"(?:[^<]++|{_DULL})*+"
    rf"(?:<(?P<tag>[a-z][a-z0-9-]*+)(?:{_FACT_ATTR})*+ ?(?P<close>/)?>"
    r"|(?P<end></section>)|(?P<eof>\Z)|(?P<bad><))"
)
_RAW_END = {tag: re.compile(f"</{tag}>") for tag in _RAW_TAGS}
_MARKUP = re.compile(r'<!--(?s:.*?)-->|<(?:[^>"]|"[^"]*+")*+>')
_NO_REL: frozenset[str] = frozenset()
# Which attribute holds a link tag's target: its index in _STEP's groups().
_TARGET_GROUP = {tag: _STEP.groupindex[attr] - 1 for tag, attr in LINK_ATTRS.items()}
# Group numbers for Match.start, which record() calls by number on every tag: the tag name's (its "<" is one
# before) and the section end's.
_TAG_NAME, _SECTION_END = _STEP.groupindex["tag"], _STEP.groupindex["end"]


def _refused(url: str, html: str, at: int) -> RenderError:
    line = html.count("\n", 0, at) + 1
    return RenderError([Issue(f"site{url}", line, 0, "html", f"markup the link recorder does not read: {html[at:at + 40]!r}",
                              "Write it as the templates do: lower-case tags, double-quoted attributes, '<' in text escaped")])


def _value(text: str) -> str:
    return unescape(text) if "&" in text else text


# One page's recording: (ids, duplicate ids, links as plain tuples in Link's field order, the
# [start, end) of each section's content in the HTML).
Recorded = tuple[set[str], list[str], list[tuple], list[tuple[int, int]]]


def record(html: str, url: str = "") -> Recorded:
    """The links, ids and section spans of one rendered page; url names it in a refusal."""
    ids: set[str] = set()
    duplicate_ids: list[str] = []
    links: list[tuple] = []
    regions: list[list[int]] = []  # per section: [start, end) of its content; end -1 while open
    open_sections: list[int] = []
    line, line_pos, pos = 1, 0, 0
    step, target_group, raw_end = _STEP.match, _TARGET_GROUP, _RAW_END
    while True:
        m = step(html, pos)
        pos = m.end()
        groups = m.groups()
        tag, id_, name, _, _, _, rel, close, end, eof, bad = groups
        if eof is not None:
            break
        if bad is not None:
            raise _refused(url, html, pos - 1)
        if end is not None:
            if open_sections:
                regions[open_sections.pop()][1] = m.start(_SECTION_END)
            continue
        if id_ is not None:
            id_ = _value(id_)
            (duplicate_ids.append if id_ in ids else ids.add)(id_)
        if name is not None and tag == "a":
            ids.add(_value(name))
        group = target_group.get(tag)
        target = groups[group] if group is not None else None
        if target:
            at = m.start(_TAG_NAME) - 1  # the tag's "<"
            line += html.count("\n", line_pos, at)
            line_pos = at
            links.append((_value(target), line, frozenset(_value(rel).lower().split()) if rel is not None else _NO_REL,
                          tuple(open_sections), tag))
        if tag == "section":
            if close:
                regions.append([pos, pos])
            else:
                open_sections.append(len(regions))
                regions.append([pos, -1])
        elif tag in raw_end and not close:
            closing = raw_end[tag].search(html, pos)
            if closing is None:
                raise _refused(url, html, m.start(_TAG_NAME) - 1)
            pos = closing.end()
    size = len(html)
    return ids, duplicate_ids, links, [(start, stop if stop >= 0 else size) for start, stop in regions]


def section_texts(html: str, regions: list[tuple[int, int]], texts_with: frozenset[str] | None = None) -> list[list[str]]:
    """Per section its text as one string, or none when empty.

    texts_with: words without whitespace, or None. When given, a section whose text holds none of
    them gets no text (as if it were empty), and its markup is not taken apart: a word in the text
    is in the section's markup with its character references replaced, since neither a reference
    nor a word runs across a tag."""
    if texts_with is not None and "" not in texts_with:
        held = _holding(html, regions, texts_with)
    else:
        held = [True] * len(regions)
    sections: list[list[str]] = []
    for (start, stop), may_hold in zip(regions, held):
        if not may_hold:
            sections.append([])
            continue
        text = unescape(_MARKUP.sub(" ", html[start:stop]))
        sections.append([text] if text else [])
    return sections


# The references markupsafe and the Markdown renderer write, with the character each stands for.
_PLAIN_REFS = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#34;": '"', "&#39;": "'", "&#x27;": "'"}


@lru_cache(maxsize=8)
def _other_reference(words: frozenset[str]) -> re.Pattern[str]:
    """An "&" that does not begin a reference to a character none of words has."""
    letters = set("".join(words))
    plain = [re.escape(ref[1:]) for ref, char in _PLAIN_REFS.items() if char not in letters]
    return re.compile(f"&(?!{'|'.join(plain)})" if plain else "&")


def _holding(html: str, regions: list[tuple[int, int]], words: frozenset[str]) -> list[bool]:
    """Per region, False only when its text holds none of words. When every reference in the page
    stands for a character no word has, a word is in a text only where it is in the markup itself:
    the words are looked for once in the whole page and each region asks where they were found."""
    if _other_reference(words).search(html):
        return [_may_hold(html[start:stop], words) for start, stop in regions]
    found = []
    for word in words:
        at = html.find(word)
        while at >= 0:
            found.append((at, at + len(word)))
            at = html.find(word, at + 1)
    held = [False] * len(regions)
    for begin, finish in found:
        for i, (start, stop) in enumerate(regions):
            if start <= begin and finish <= stop:
                held[i] = True
    return held


def page_links(html: str, url: str = "", texts_with: frozenset[str] | None = None) -> PageFacts:
    """The links, ids and section texts of one rendered page (url names it in a refusal); texts_with
    as section_texts takes it."""
    ids, duplicate_ids, links, regions = record(html, url)
    return PageFacts(ids=ids, duplicate_ids=duplicate_ids, links=list(map(Link._make, links)),
                     sections=section_texts(html, regions, texts_with))


def _may_hold(region: str, words: frozenset[str]) -> bool:
    """False only when the text of region holds none of words."""
    if "&" in region:
        region = unescape(region)
    return any(word in region for word in words)
