"""tests/check/html_oracle.read_page, the oracle the build's own facts are tested against: its regex reader gives the facts HTMLParser (html_oracle._Reader) gives, on every
page the fixture site builds, on hand-picked tricky snippets and on generated ones; and it reads our
own pages itself instead of handing them to _Reader, its fallback.

The reference is the running interpreter's html.parser; read_page was written against Python 3.11.7's.
Later CPython security releases change how html.parser reads some malformed markup (script end tags,
comments, <title> text): if one of the snippets below starts to differ there, read_page must follow
(or hand that construct to _Reader)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.build.pipeline import build_site
from generator.check.affiliates import AffiliateRule, _squash
from generator.check.site_checks import slim_facts

from ..conftest import FIXED_TODAY, FIXTURE_SITE
from . import html_oracle
from .html_oracle import _PageFacts, _read_with_htmlparser, read_page

DISCLOSURE = "We earn a commission on these links."
RULES = {"shop.example": AffiliateRule("shop.example", (DISCLOSURE,))}


def comparable(facts: _PageFacts) -> _PageFacts:
    """The facts with each section's chunks as its readers see them: joined by spaces, squashed.
    (_Reader hands a section's text over in HTMLParser's chunks, read_page as one string.)"""
    return replace(facts, sections=[_squash(" ".join(chunks)) for chunks in facts.sections])


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages read_page hands to _Reader during a test."""
    handed: list[str] = []

    def counting(html: str) -> _PageFacts:
        handed.append(html)
        return _read_with_htmlparser(html)

    monkeypatch.setattr(html_oracle, "_read_with_htmlparser", counting)
    return handed


def assert_same_facts(html: str) -> None:
    new, old = read_page(html), _read_with_htmlparser(html)
    assert comparable(new) == comparable(old), html
    assert slim_facts(new, RULES) == slim_facts(old, RULES), html


# --------------------------------------------------------------------------- the fixture site


@pytest.fixture(scope="module")
def built_pages() -> dict[str, str]:
    build = build_site(FIXTURE_SITE, today=FIXED_TODAY)
    return {f.path: f.content.decode("utf-8") for f in build.files if f.path.endswith(".html")}


def test_every_page_of_the_fixture_site_reads_the_same(built_pages: dict[str, str], fallbacks: list[str]) -> None:
    assert len(built_pages) >= 10
    sections = 0
    for path, html in built_pages.items():
        new, old = read_page(html), _read_with_htmlparser(html)
        assert comparable(new) == comparable(old), path
        assert new.links and new.title, path  # the comparison is not of empty facts
        sections += len(new.sections)
    assert sections
    assert fallbacks == []  # our templates' HTML is read by the fast path, not handed to _Reader


def test_affiliate_sections_keep_their_disclosure_through_slim_facts(built_pages: dict[str, str], fallbacks: list[str]) -> None:
    rules = {
        "shop.example": AffiliateRule("shop.example", ("As an Amazon Associate I earn from qualifying purchases.",)),
        "runpod.example": AffiliateRule("runpod.example", ("We earn a commission when you rent GPUs through our RunPod and Vast.ai links.",)),
    }
    kept = 0
    for path, html in built_pages.items():
        new, old = slim_facts(read_page(html), rules), slim_facts(_read_with_htmlparser(html), rules)
        assert new == old, path
        kept += sum(1 for texts in new.sections if texts)
    assert kept  # some fixture page carries a disclosure, so the comparison covers kept text
    assert fallbacks == []


# --------------------------------------------------------------------------- tricky snippets

HEAD = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>T</title>'
    '<meta name="description" content="A description long enough to pass the fifty character floor.">'
    '<link rel="canonical" href="https://kvtriage.dev/">'
    '<script type="application/ld+json">[{"@type":"TechArticle","dateModified":"2026-01-01"}]</script></head><body>'
)

# Snippets the fast path must read itself (constructs our templates write or could write).
FAST = {
    "inline SVG with its own title": '<svg role="img" aria-labelledby="t"><title id="t">A bar</title><rect x="0" width="1"/></svg>',
    "entities in attributes": '<a href="/a/?x=1&amp;y=2" title="&quot;q&quot; &#39;s&#39; &lt;b&gt;">x</a><p id="a&amp;b"></p>',
    "unquoted and single-quoted values": "<a href=/unquoted/ rel=sponsored>u</a><a href='/single/' rel='nofollow Noopener'>s</a>",
    "bare value with = and <": "<a href=/x?a=b<c>t</a>",
    "attribute without value": '<a download href="/file.txt">f</a><p id>empty id</p><input disabled id=" ">',
    "uppercase tags and attributes": '<SECTION ID="Up"><A HREF="https://shop.example/x" REL="Sponsored NOOPENER">buy</A><P>We earn a commission on these links.</P></SECTION>',
    "uppercase meta and robots": '<META NAME="Description" CONTENT="Upper &amp; case"><META NAME=robots CONTENT="NOINDEX, follow"><meta http-equiv="Refresh" content="0; url=/">',
    "two descriptions, last wins": '<meta name="description" content="first"><meta name="description" content="second &#x41;">',
    "duplicate attribute, last wins": '<p id="one" id="two"></p><p id="two"></p>',
    "duplicate ids and <a name>": '<h2 id="x">x</h2><a name="y">y</a><p id="y"></p><p id="x"></p><a name="x" id="z">z</a>',
    "comment hides tags": '<!-- <a href="/hidden/"> <section> <p id="hidden"> --><a href="/seen/">s</a><!--x-- ><!---->',
    "comment inside a section": '<section><p>a<!-- b -->c</p><!-- </section> --><a href="/in/">in</a></section>',
    "script with </section> in strings": (
        '<section><script>var s = "</section>"; if (a < b && c > d) { x = "<a href=\'/no/\'>"; }</script>'
        '<a href="/after-script/">a</a></section>'
    ),
    "json-ld with markup and entities": (
        '<script type="application/ld+json">{"a": "</section><p id=\\"no\\">", "b": "&amp; &lt;"}</script>'
        '<SCRIPT TYPE="application/ld+json">[1]</SCRIPT >'
    ),
    "script end tag spelled loosely": '<script>x()</ script ><a href="/after/">a</a>',
    "style with tags inside": '<section><style>a > b { content: "<a href=/no/>"; }</style><p>After &amp; style</p></section>',
    "CRLF line numbers": '<p>\r\none</p>\r\n\r\n<a href="/crlf/">c</a>\r<a\r\nhref="/split/"\r\n>s</a>\n<img src="/i.png">',
    "newlines inside attributes before a link": '<div title="a\nb\nc"></div>\n<a href="/line/">l</a>',
    "nested sections": (
        '<section id="outer"><p>outer text</p><section><p>We earn a commission on these links.</p>'
        '<a href="https://shop.example/a" rel="sponsored noopener">a</a></section>'
        '<a href="https://shop.example/b" rel="sponsored noopener">b</a></section>'
    ),
    "missing closing tags": '<section><p>one<section><li>two<a href="/deep/">d</a>',
    "extra closing tags": '</section></section><section></section></p></title></script><a href="/x/">x</a>',
    "self-closing syntax": '<section/><a href="/sc/"/><br/><br /><img src="/a.png" /><title/><script type="application/ld+json"/><p id="after">x</p>',
    "text squashed across tags": "<section>a<b>b</b>c &nbsp; d&#10;e\t<br>f</section>",
    "entities without semicolons": "<section><p>AT&T &amp &copy 5 &lt 6 &#65 &#x42</p></section>&amp",
    "lone < in text": "<section>a < b, x<5, <<a href=/lt/>lt</a> 1 <= 2 <</section>",
    "lone < at the end": "<section>tail <",
    "title with entity": "<title>A &amp; B &#8212; C</title>",
    "title with tags and a script": '<title>a<b>b</b> &amp;<script type="application/ld+json">{"t": 1}</script></title>',
    "two titles and an unclosed one": "<title>one</title><p>x</p><title>two<title>three",
    "quoted > and quotes in a dull tag": '<section><div title="a > b" data-x=\'say "hi"\'>inside</div><span class="c">d</span></section>',
    "links of every kind": (
        '<link rel="Canonical" href="https://kvtriage.dev/c/"><link rel="stylesheet" href="/s.css">'
        '<script src="/s.js"></script><img src="/i.png"><form action="/search/"><source src="/v.mp4">'
        '<iframe src="https://example.com/e"></iframe><a href="">empty</a><a>none</a><a href="#frag">f</a>'
    ),
    "tabs and form feeds between attributes": '<a\thref="/tab/"\frel="sponsored"\n>t</a>',
    "custom elements and odd names": '<my-widget id="w"><x-1 data-a="1">t</x-1></my-widget><h2 id="h">h</h2>',
    "doctype in any case": "<!DOCTYPE html><!DocType html>text",
    "empty page": "",
    "text only": "just text &amp; more",
}

# Snippets the fast path does not accept: read_page hands them to _Reader, with the same result.
FALLBACK = {
    "processing instruction": '<?xml version="1.0"?><a href="/x/">x</a>',
    "CDATA section": '<![CDATA[ <a href="/no/"> ]]><a href="/x/">x</a>',
    "bogus comment": '<!foo bar><a href="/x/">x</a>',
    "unclosed comment": '<a href="/x/">x</a><!-- never closed <a href="/y/">',
    "unclosed script": '<a href="/x/">x</a><script>never closed <a href="/y/">',
    "unclosed style": "<style>a{}",
    "attribute glued to a quoted value": '<a href="/x/"id="y">x</a>',
    "slash between attributes": '<a / href="/x/">x</a>',
    "space before the name of an end tag": '<section><a href="/x/">x</a></ section>',
    "vertical tab in a tag": '<a\x0bhref="/x/">x</a>',
    "no-break space in a tag": '<a\xa0href="/x/">x</a>',
    "unterminated tag": '<a href="/x/"',
    "quote inside a bare value": '<a href=x"y>x</a>',
    "doubled equals sign": '<a href=="/x/">x</a>',
    "junk after the tag name": '<a:b href="/x/">x</a:b>',
    "end tag with attributes": '<section><a href="/x/">x</a></section class="c">',
}


@pytest.mark.parametrize("body", FAST.values(), ids=FAST.keys())
def test_tricky_snippets_read_the_same_without_the_fallback(body: str, fallbacks: list[str]) -> None:
    assert_same_facts(body)
    assert_same_facts(HEAD + body + "</body></html>")
    assert fallbacks == []


@pytest.mark.parametrize("body", FALLBACK.values(), ids=FALLBACK.keys())
def test_markup_outside_the_fast_subset_goes_to_htmlparser(body: str, fallbacks: list[str]) -> None:
    assert_same_facts(HEAD + body)
    assert fallbacks  # read_page did not guess


def test_the_facts_themselves_on_a_small_page(fallbacks: list[str]) -> None:
    html = (
        '<title>A &amp; B</title><meta name="description" content="d &quot;q&quot;">\n'
        '<section id="s"><p>We earn\n a commission on these links.</p>\r\n'
        '<a HREF="https://shop.example/x" rel="Sponsored  noopener">x</a></section>\n'
        '<script type="application/ld+json">{"a": "&amp;"}</script>'
    )
    facts = read_page(html)
    assert facts.title == "A & B" and facts.description == 'd "q"'
    assert facts.ids == {"s"} and facts.json_ld == ['{"a": "&amp;"}']
    (link,) = facts.links
    assert (link.href, link.line, link.rel, link.sections, link.tag) == ("https://shop.example/x", 4, {"sponsored", "noopener"}, (0,), "a")
    assert _squash(" ".join(facts.sections[0])) == "We earn a commission on these links. x"
    assert fallbacks == []


# --------------------------------------------------------------------------- generated pages

FRAGMENTS = [
    *FAST.values(),
    "<section>", "</section>", "<section >", "</section\n>", "<SECTION>", "<section/>",
    "<title>", "</title>", "<script>", "</script>", '<script type="application/ld+json">', "<style>", "</style>",
    '<a href="https://shop.example/x" rel="sponsored noopener">', "</a>", '<a href="#x">', "<a name=n>",
    '<p id="x">', '<p id="y" class="c">', "<p>", "</p>", "<br>", "<br/>", '<meta name="description" content="d">',
    "<!-- c -->", "<!--", "-->", "<!doctype html>", '<div title="a>b">', "<div title='\"'>",
    DISCLOSURE, "text", " ", "\n", "\r\n", "\t", "&amp;", "&nbsp;", "&#10;", "&", "<", ">", '"', "'", "=", "/",
    "a < b", "x<5", "</", "<!", "<?", "</ p>",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(alphabet="<>/=\"' \n\r\tabcdipst-!&#;", max_size=12), max_size=30))
def test_generated_pages_read_the_same(parts: list[str]) -> None:
    assert_same_facts("".join(parts))


def test_an_inline_svg_title_is_not_the_page_title() -> None:
    html = HEAD + '<svg role="img" aria-labelledby="t"><title id="t">A bar</title></svg></body></html>'
    assert read_page(html).title == _read_with_htmlparser(html).title
    assert "A bar" not in read_page(html).title and read_page(html).title
