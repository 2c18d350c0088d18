"""What the site checks read, against the HTML reader (the test oracle, html_oracle.py) over every
page of the fixture site with aliases: the head taken from the plan (check/plan_meta.py) is the head
the built pages state, and the links, ids and sections recorded from the rendered markup
(render/page_links.py) are what the reader reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.build.pipeline import build_site, plan_site
from generator.check.affiliates import affiliate_rules
from generator.check.plan_meta import NO_META, PageMeta, page_url, site_meta
from generator.check.site_checks import check_html, disclosure_words, slim_facts
from generator.errors import RenderError
from generator.render.page_links import page_links
from generator.render.templates import RenderedFile

from ..conftest import FIXED_TODAY, copy_site
from ..test_publish import _with_aliases
from .html_oracle import read_page


def _stated(html: str) -> PageMeta:
    facts = read_page(html)
    return PageMeta(facts.title, facts.description, facts.noindex, facts.canonical, facts.refresh, tuple(facts.json_ld))


@pytest.fixture(scope="module")
def site_with_aliases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _with_aliases(copy_site(tmp_path_factory.mktemp("aliases") / "root"))


def test_the_plan_states_every_built_page_head_as_its_html_does(site_with_aliases: Path) -> None:
    built = build_site(site_with_aliases, today=FIXED_TODAY)
    sp = plan_site(site_with_aliases, FIXED_TODAY)
    meta = site_meta(sp.dataset, sp.plan, sp.site)
    html_pages = {page_url(f.path): f.content.decode("utf-8") for f in built.files if f.path.endswith(".html")}
    assert set(html_pages) == set(meta)
    assert any(m.refresh for m in meta.values()) and any(m.json_ld for m in meta.values())
    for url, html in html_pages.items():
        assert meta[url] == _stated(html), url


def test_an_html_page_the_plan_does_not_describe_fails_the_check() -> None:
    page = '<!doctype html><html><head><title>Stray</title></head><body></body></html>'
    with pytest.raises(RenderError) as raised:
        check_html([RenderedFile("stray/index.html", page.encode())], "https://kvtriage.dev", {}, {})
    messages = [issue.message for issue in raised.value.issues]
    assert "the page has no <title>" in messages and "the page has no meta description" in messages
    assert NO_META.description is None


def test_the_recorded_links_ids_and_sections_are_what_the_html_reader_reads(site_with_aliases: Path) -> None:
    built = build_site(site_with_aliases, today=FIXED_TODAY)
    sp = plan_site(site_with_aliases, FIXED_TODAY)
    rules = affiliate_rules(sp.dataset)
    assert rules  # the fixture site has affiliate links: their sections' disclosures are compared too
    for f in built.files:
        if f.path.endswith(".html"):
            html = f.content.decode("utf-8")
            recorded = slim_facts(page_links(html, page_url(f.path)), rules)
            read = slim_facts(read_page(html), rules)
            assert (recorded.ids, recorded.duplicate_ids, recorded.links, recorded.sections) == (
                read.ids, read.duplicate_ids, read.links, read.sections), f.path
            # What a build packs: sections without a disclosure's word are left untaken apart.
            assert slim_facts(page_links(html, page_url(f.path), disclosure_words(rules)), rules) == recorded, f.path


def test_sections_without_the_words_get_no_text_and_a_word_behind_a_reference_is_found() -> None:
    html = ('<!doctype html>\n<section><p>We earn a <b>comm</b>ission.</p></section>'
            '<section><p>A co&#109;mission &amp; more</p></section><section><p>Com<i>mission</i></p></section>')
    words = frozenset({"commission"})
    assert page_links(html, "/x/", words).sections == [[], [" A commission & more "], []]
    assert page_links(html, "/x/").sections[0] == [" We earn a  comm ission. "]


@pytest.mark.parametrize("markup", ["<P>upper case</P>", "<p class='single'>quoted</p>", "a < b is text", "<script>never ends",
                                    '<a href>no target</a>', '<section id>no id</section>'])
def test_markup_outside_what_the_templates_emit_is_refused_not_misread(markup: str) -> None:
    with pytest.raises(RenderError) as raised:
        page_links(f"<!doctype html>\n<main>{markup}</main>", "/x/")
    (issue,) = raised.value.issues
    assert issue.path == "site/x/" and issue.line == 2 and "does not read" in issue.message


def test_a_section_gets_its_text_when_a_word_is_in_its_markup_and_the_references_hide_none() -> None:
    html = ('<!doctype html>\n<section><p>commission &amp; &quot;more&quot;</p><section>inner commission</section></section>'
            '<section>none &lt; here</section><section>commiss</section>ion<p>commission outside</p>')
    words = frozenset({"commission"})
    full = page_links(html, "/x/").sections
    assert page_links(html, "/x/", words).sections == [full[0], full[1], [], []]
