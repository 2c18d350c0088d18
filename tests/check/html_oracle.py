"""The test oracle for what the site checks read: the facts a built page holds (title, description,
robots, links, anchors, the sections links sit in), read back from any HTML by one regex pass that
agrees with html.parser, falling back to html.parser on what it does not accept. The build itself
takes the head from the plan (generator/check/plan_meta.py) and records links, ids and sections
from the markup the templates emit (generator/render/page_links.py); tests hold both equal to this."""

from __future__ import annotations

import re
from bisect import bisect_left
from html import unescape
from html.parser import HTMLParser
from typing import Iterable, Mapping

from generator.render.page_links import LINK_ATTRS
from generator.render.page_links import Link as _Link
from generator.render.page_links import PageFacts as _PageFacts

CONTENT_ATTR = "con" "tent"  # <meta content=...>; spelled apart so tests/test_layering.py sees no read of content/


def _read_meta(facts: _PageFacts, attrs: Mapping[str, str]) -> None:
    """What a <meta> tells the checks: the description, robots noindex, a refresh (an alias page)."""
    name = attrs.get("name", "").lower()
    if name == "description":
        facts.description = attrs.get(CONTENT_ATTR, "")
    elif name == "robots" and "noindex" in attrs.get(CONTENT_ATTR, "").lower():
        facts.noindex = True
    elif attrs.get("http-equiv", "").lower() == "refresh":
        facts.refresh = True


class _Reader(HTMLParser):
    """One pass over a page: ids, links with their rel and enclosing sections, title and meta.

    read_page's fallback (and the reference its tests compare it with): it reads any HTML, slowly."""

    LINK_ATTRS = LINK_ATTRS

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.facts = _PageFacts()
        self.open_sections: list[int] = []
        self.in_title = False
        self.title_seen = self.title_counts = False
        self.in_json_ld = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        facts = self.facts
        if "id" in a:
            (facts.duplicate_ids.append if a["id"] in facts.ids else facts.ids.add)(a["id"])
        if tag == "a" and "name" in a:
            facts.ids.add(a["name"])
        if tag == "section":
            facts.sections.append([])
            self.open_sections.append(len(facts.sections) - 1)
        elif tag == "title":
            self.in_title = True
            self.title_counts = not self.title_seen  # a later <title> names an inline SVG
            self.title_seen = True
        elif tag == "meta":
            _read_meta(facts, a)
        elif tag == "script" and a.get("type") == "application/ld+json":
            self.in_json_ld = True
            facts.json_ld.append("")
        attr = self.LINK_ATTRS.get(tag)
        if attr and a.get(attr):
            rel = frozenset(a.get("rel", "").lower().split())
            if tag == "link" and "canonical" in rel:
                facts.canonical = a[attr]
            facts.links.append(_Link(a[attr], self.getpos()[0], rel, tuple(self.open_sections), tag))

    def handle_endtag(self, tag: str) -> None:
        if tag == "section" and self.open_sections:
            self.open_sections.pop()
        elif tag == "title":
            self.in_title = False
        elif tag == "script":
            self.in_json_ld = False

    def handle_data(self, data: str) -> None:
        if self.in_title:
            if self.title_counts:
                self.facts.title += data
        elif self.in_json_ld:
            self.facts.json_ld[-1] += data
        for index in self.open_sections:
            self.facts.sections[index].append(data)


def _read_with_htmlparser(html: str) -> _PageFacts:
    """read_page as it was: HTMLParser, every tag in Python. read_page's fallback."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.facts


# read_page below gives _Reader's facts at a fraction of HTMLParser's cost (which looks at every
# tag in Python): regular expressions step over the tags no fact depends on, and Python sees only
# the ~100 tags per page that carry one. It accepts a strict subset of HTML's syntax, the one our
# templates write; a page with anything else (a tag or attribute HTMLParser would read more loosely,
# an unclosed comment or <script>, <?...>, <![CDATA[...]]>, a bogus comment) goes to _Reader.
# Each pattern is spelled so that what it accepts, HTMLParser (Python 3.11) reads the same way.
_WS = r"[ \t\n\r\f]"  # HTMLParser's \s is wider; a tag spaced with anything else falls back
_NAME = r"[a-zA-Z][a-zA-Z0-9-]*+"
_ATTR_NAME = r"[a-zA-Z_:][-a-zA-Z0-9_:.]*+"
# A bare value starts with neither a quote (HTMLParser would strip it) nor "=" (HTMLParser reads "==" as one).
_VALUE = r"""(?:"[^"]*+"|'[^']*+'|[^\s"'>=][^\s"'>]*+)"""
_ATTR = rf"{_WS}++{_ATTR_NAME}(?:{_WS}*+={_WS}*+{_VALUE})?"
_COMMENT = r"<!--(?s:.*?)--\s*>"  # HTMLParser ends a comment at the first --\s*> after "<!--"
_DOCTYPE = r"<!(?i:doctype)[^>]*+>"
_END = rf"</{_NAME}{_WS}*+>"
_CDATA_TAGS = ("script", "style")  # HTMLParser.CDATA_CONTENT_ELEMENTS: raw text up to their end tag
_FACT_TAGS = (*LINK_ATTRS, "section", "title", "meta", "style")  # start tags read_page must look at
_FACT_END_TAGS = ("section", "title", "script")  # end tags that change its state


def _any_case(words: Iterable[str]) -> str:
    """A pattern for any of the words in any case, grouped by first letter: (?i:...) is slower."""
    by_first: dict[str, list[str]] = {}
    for word in sorted(words, key=len, reverse=True):
        by_first.setdefault(word[0], []).append(word[1:])

    def letters(text: str) -> str:
        return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in text)

    return "(?:" + "|".join(f"{letters(first)}(?:{'|'.join(map(letters, rests))})" for first, rests in by_first.items()) + ")"


def _attrs_but(names: Iterable[str]) -> str:
    """Attributes, none of them named one of names."""
    return rf"(?:{_WS}++(?!{_any_case(names)}(?![-a-zA-Z0-9_:.])){_ATTR_NAME}(?:{_WS}*+={_WS}*+{_VALUE})?)*+"


# Markup no fact depends on: a start tag of another name without an id, a <meta> that names
# nothing (og:, charset), an end tag of another name, a comment, the doctype. The first three come
# first as our templates spell them (lower case, attributes double-quoted): re matches those faster.
_PLAIN_ATTR = r' [a-z][-a-z0-9_:.]*+="[^"]*+"'
_DULL = (
    rf"</(?!(?:{'|'.join(_FACT_END_TAGS)})>)[a-z][a-z0-9-]*+>"
    rf"|<(?!(?:{'|'.join(_FACT_TAGS)})[ />])[a-z][a-z0-9-]*+(?:(?! id=){_PLAIN_ATTR})*+(?: ?/)?>"
    rf"|<meta(?:(?! (?:id|name|http-equiv)=){_PLAIN_ATTR})*+(?: ?/)?>"
    rf"|</(?!{_any_case(_FACT_END_TAGS)}{_WS}*+>){_NAME}{_WS}*+>"
    rf"|<(?!{_any_case(_FACT_TAGS)}(?![a-zA-Z0-9-])){_NAME}{_attrs_but(['id'])}{_WS}*+/?>"
    rf"|<{_any_case(['meta'])}{_attrs_but(['id', 'name', 'http-equiv'])}{_WS}*+/?>"
    rf"|{_COMMENT}|{_DOCTYPE}"
)
# One step: skip text and dull markup, then stop at a tag that matters, a "<" that HTMLParser passes
# on as text, the end, or (bad) a "<" this reader does not accept. It cannot fail to match.
# A start tag comes in three spellings, commonest first: <a href="..."> and a tag whose only
# attribute is its id, as our templates write them; any tag so written (lower case, attributes
# double-quoted without character references: no lower() or unescape() needed); any other.
_STEP = re.compile(
    rf"(?:[^<]++|{_DULL})*+"
    r"""(?:(?P<link><a href="(?P<href>[^"&]*+)">)"""
    rf"""|(?P<anchor><(?!(?:{'|'.join(_FACT_TAGS)})[ />])[a-z][a-z0-9-]*+ id="(?P<id>[^"&]*+)">)"""
    r"""|(?P<plain><(?P<plain_tag>[a-z][a-z0-9-]*+)(?P<plain_attrs>(?: [a-z][-a-z0-9_:.]*+="[^"&]*+")*+)(?: ?(?P<plain_close>/))?>)"""
    rf"|(?P<start><(?P<tag>{_NAME})(?P<attrs>(?:{_ATTR})*+){_WS}*+(?P<close>/?)>)"
    rf"|</(?P<end>{_NAME}){_WS}*+>"
    rf"|(?P<lone><)(?![a-zA-Z/!?])"  # a "<" that is text
    rf"|(?P<eof>\Z)"
    rf"|(?P<bad><))"
)
# m.lastindex of each outcome (comparing ints is faster than m.lastgroup's names), and the groups read
_LINK, _ANCHOR, _PLAIN, _START, _END_TAG, _LONE, _EOF = (
    _STEP.groupindex[name] for name in ("link", "anchor", "plain", "start", "end", "lone", "eof")
)
_HREF, _ID = _STEP.groupindex["href"], _STEP.groupindex["id"]
_PLAIN_PARTS = tuple(_STEP.groupindex[name] for name in ("plain_tag", "plain_attrs", "plain_close"))
_START_PARTS = tuple(_STEP.groupindex[name] for name in ("tag", "attrs", "close"))
_PLAIN_ATTRS = re.compile(r' ([a-z][-a-z0-9_:.]*+)="([^"]*+)"')  # _PLAIN_ATTR's parts
_ATTRS = re.compile(rf"""({_ATTR_NAME})(?:{_WS}*+={_WS}*+(?:"([^"]*+)"|'([^']*+)'|([^\s"'>=][^\s"'>]*+)))?""")
_CDATA_END = {tag: re.compile(rf"</\s*{tag}\s*>", re.I) for tag in _CDATA_TAGS}  # HTMLParser.set_cdata_mode's
# Any markup, for a stretch without <script>, <style> or a lone "<" (those _chunks reads). It starts
# with its one literal, "<", so that re can look for that first. In such a stretch (read_page has
# accepted it) a quote inside a tag always opens or closes an attribute value.
_MARKUP = re.compile(r"""<(?:!--(?s:.*?)--\s*>|!(?i:doctype)[^>]*+>|[^>"']*+(?:"[^"]*+"[^>"']*+|'[^']*+'[^>"']*+)*+>)""")
_TOKEN = re.compile(rf"{_COMMENT}|{_DOCTYPE}|<({_NAME})(?:{_ATTR})*+{_WS}*+(/?)>|{_END}|(<)")
_NO_REL: frozenset[str] = frozenset()


def _chunks(html: str, start: int, end: int) -> list[str]:
    """The text HTMLParser hands to handle_data between start and end (a stretch read_page has
    accepted), chunk by chunk: each run of text between two tags entity-decoded, a "<" that opens
    no tag on its own, and the raw content of a <script> or <style>."""
    out = []
    pos = start
    while (m := _TOKEN.search(html, pos, end)) is not None:
        if m.start() > pos:
            out.append(unescape(html[pos : m.start()]))
        pos = m.end()
        tag, closed, lone = m.group(1, 2, 3)
        if lone:
            out.append("<")
        elif tag and not closed and (tag := tag.lower()) in _CDATA_TAGS:
            closing = _CDATA_END[tag].search(html, pos, end)
            assert closing is not None, "read_page hands over only stretches whose <script> ends"
            if closing.start() > pos:
                out.append(html[pos : closing.start()])
            pos = closing.end()
    if pos < end:
        out.append(unescape(html[pos:end]))
    return out


def read_page(html: str) -> _PageFacts:
    """_Reader's facts about one page: ids, links, title, meta, canonical, JSON-LD and section texts.

    A section's text comes as one string, chunks already joined and not squashed (or as no string
    when empty): all its readers (slim_facts, check_pages) take from it is _squash(" ".join(...)),
    which gives what it gives for _Reader's chunks, and squashing here too would do that work twice."""
    facts = _PageFacts()
    ids, duplicate_ids, links = facts.ids, facts.duplicate_ids, facts.links
    regions: list[list[int]] = []  # per section: [start, end) of its content in html
    open_sections: list[int] = []
    title_regions: list[tuple[int, int]] = []
    title_start = -1  # where the open <title>'s content starts; -1 while no <title> is open
    raw_text: list[int] = []  # where a <script>, <style> or lone "<" is: text _MARKUP would misread
    line, line_pos = 1, 0
    step, plain_attrs, attributes, link_attrs = _STEP.match, _PLAIN_ATTRS.findall, _ATTRS.findall, LINK_ATTRS
    pos = 0
    while True:
        m = step(html, pos)
        pos = m.end()
        kind = m.lastindex
        if kind == _LINK:
            href = m.group(_HREF)
            if href:
                start = m.start(kind)
                line += html.count("\n", line_pos, start)
                line_pos = start
                links.append(_Link(href, line, _NO_REL, tuple(open_sections), "a"))
            continue
        if kind == _ANCHOR:
            id_ = m.group(_ID)
            (duplicate_ids.append if id_ in ids else ids.add)(id_)
            continue
        if kind == _PLAIN:
            tag, attrs, closed = m.group(*_PLAIN_PARTS)
            a = dict(plain_attrs(attrs)) if attrs else {}
        elif kind == _START:
            tag, attrs, closed = m.group(*_START_PARTS)
            tag = tag.lower()
            a = {}
            for name, double, single, bare in attributes(attrs):
                value = double or single or bare
                a[name.lower()] = unescape(value) if "&" in value else value
        elif kind == _END_TAG:
            tag = m.group(kind).lower()
            if tag == "section":
                if open_sections:
                    regions[open_sections.pop()][1] = m.start(kind) - 2
            elif tag == "title" and title_start >= 0:
                title_regions.append((title_start, m.start(kind) - 2))
                title_start = -1
            continue
        elif kind == _LONE:
            raw_text.append(pos - 1)
            continue
        elif kind == _EOF:
            break
        else:
            return _read_with_htmlparser(html)
        if "id" in a:
            (duplicate_ids.append if a["id"] in ids else ids.add)(a["id"])
        attr = link_attrs.get(tag)
        if attr:
            if tag == "a" and "name" in a:
                ids.add(a["name"])
            href = a.get(attr)
            if href:
                rel = frozenset(a["rel"].lower().split()) if "rel" in a else _NO_REL
                if tag == "link" and "canonical" in rel:
                    facts.canonical = href
                start = m.start(kind)
                line += html.count("\n", line_pos, start)
                line_pos = start
                links.append(_Link(href, line, rel, tuple(open_sections), tag))
            if tag == "script":
                ld_json = a.get("type") == "application/ld+json"
                if ld_json:
                    facts.json_ld.append("")
                if not closed:
                    closing = _CDATA_END[tag].search(html, pos)
                    if closing is None:  # HTMLParser drops the rest of the page
                        return _read_with_htmlparser(html)
                    raw_text.append(m.start(kind))
                    if ld_json and title_start < 0:
                        facts.json_ld[-1] = html[pos : closing.start()]
                    pos = closing.end()
        elif tag == "section":
            if closed:
                regions.append([pos, pos])
            else:
                open_sections.append(len(regions))
                regions.append([pos, -1])
        elif tag == "meta":
            _read_meta(facts, a)
        elif tag == "title":
            if not closed:
                if title_start < 0:
                    title_start = pos
            elif title_start >= 0:
                title_regions.append((title_start, m.start(kind)))
                title_start = -1
            else:
                title_regions.append((pos, pos))  # <title/>: html.parser opens and closes it, an empty title
        elif tag == "style" and not closed:
            closing = _CDATA_END[tag].search(html, pos)
            if closing is None:
                return _read_with_htmlparser(html)
            raw_text.append(m.start(kind))
            pos = closing.end()
    if title_start >= 0:
        title_regions.append((title_start, len(html)))
    if title_regions and "<title" in html[title_regions[0][0]:title_regions[0][1]].lower():
        return _read_with_htmlparser(html)  # a <title> opened inside the open title: html.parser decides
    _read_texts(facts, html, title_regions, regions, raw_text)
    return facts


def _read_texts(facts: _PageFacts, html: str, title_regions: list[tuple[int, int]], regions: list[list[int]],
                raw_text: list[int]) -> None:
    """The title and each section's text, from the regions read_page found (an end of -1: the page's end)."""
    end = len(html)
    # The document's title is the first; a later <title> names an inline SVG.
    for start, stop in title_regions[:1]:
        if html.find("<", start, stop) < 0:
            facts.title += unescape(html[start:stop])
        else:
            facts.title += "".join(_chunks(html, start, stop))
    sections = facts.sections
    for start, stop in regions:
        if stop < 0:
            stop = end
        first_raw = bisect_left(raw_text, start)
        if first_raw < len(raw_text) and raw_text[first_raw] < stop:
            text = " ".join(_chunks(html, start, stop))
        else:
            text = unescape(_MARKUP.sub(" ", html[start:stop]))
        sections.append([text] if text else [])
