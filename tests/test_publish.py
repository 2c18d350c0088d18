"""publish: sitemap (and its index), robots, redirects and alias pages, llms.txt, _headers, search
data, and the build-time HTML check (links, anchors, sponsored rel, disclosures, unique metadata)."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from generator.build.incremental import build_and_write
from generator.build.pipeline import build_site
from generator.check.affiliates import AffiliateRule
from generator.check.plan_meta import PageMeta, page_url
from generator.check.site_checks import check_html
from generator.cli import main
from generator.errors import RenderError
from generator.plan.pages import Page
from generator.render.site_files import PAIRS_SEARCH_URL, pagefind_executable, robots_file, sitemap_files
from generator.render.templates import RenderedFile
from generator.write.guard import SEARCH_FOLDERS

from .check.html_oracle import read_page
from .conftest import FIXED_TODAY, FIXTURE_SITE, copy_site

BASE = "https://kvtriage.dev"
ERROR_HUB = "/oom/vllm-max-model-len-error/"
PAIR = "/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/"


@pytest.fixture(scope="module")
def fixture_build():
    build = build_site(FIXTURE_SITE, today=FIXED_TODAY)
    return build, {f.path: f.content for f in build.files}


def _text(files: dict[str, bytes], path: str) -> str:
    return files[path].decode("utf-8")


def _page(url: str, lastmod: str = "2026-01-01", indexable: bool = True) -> Page:
    return Page(url=url, template="x", title=url, description="d" * 60, kind="x", lastmod=lastmod, view={}, indexable=indexable)


# --------------------------------------------------------------------------- sitemap and robots


def test_sitemap_lists_indexable_pages_with_lastmod_only() -> None:
    pages = [_page("/", "2026-01-02"), _page("/a/", "2026-03-04"), _page("/hidden/", indexable=False)]
    (sitemap,) = sitemap_files(pages, BASE, 45_000)
    xml = sitemap.content.decode()
    assert sitemap.path == "sitemap.xml"
    assert "<loc>https://kvtriage.dev/</loc><lastmod>2026-01-02</lastmod>" in xml
    assert "<loc>https://kvtriage.dev/a/</loc><lastmod>2026-03-04</lastmod>" in xml
    assert "/hidden/" not in xml
    assert "priority" not in xml and "changefreq" not in xml


def test_sitemap_becomes_an_index_past_max_urls() -> None:
    pages = [_page(f"/p{i}/", f"2026-01-{i + 1:02d}") for i in range(5)]
    files = sitemap_files(pages, BASE, 2)
    assert [f.path for f in files] == ["sitemap.xml", "sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    index = files[0].content.decode()
    assert index.count("<sitemap>") == 3 and "<sitemapindex" in index
    # each child's lastmod is the newest of its own URLs
    assert "<loc>https://kvtriage.dev/sitemap-2.xml</loc><lastmod>2026-01-04</lastmod>" in index
    children = "".join(f.content.decode() for f in files[1:])
    assert sorted(re.findall(r"<loc>([^<]+)</loc>", children)) == sorted(BASE + p.url for p in pages)
    assert all(f.content.decode().count("<url>") <= 2 for f in files[1:])


def test_a_built_site_splits_its_sitemap_at_the_configured_size(tmp_path: Path) -> None:
    root = copy_site(tmp_path / "root")
    site_yaml = root / "data/site.yaml"
    site_yaml.write_text(site_yaml.read_text().replace("sitemap_max_urls: 45000", "sitemap_max_urls: 3"))
    build = build_site(root, today=FIXED_TODAY)
    files = {f.path: f.content.decode() for f in build.files}
    assert "<sitemapindex" in files["sitemap.xml"]
    children = sorted(p for p in files if re.fullmatch(r"sitemap-\d+\.xml", p))
    listed = [loc for child in children for loc in re.findall(r"<loc>([^<]+)</loc>", files[child])]
    indexable = [BASE + p.url for p in build.plan.pages if p.indexable] + [BASE + "/about/", BASE + "/search/"]
    assert sorted(listed) == sorted(indexable)  # every indexable page once, 404 and twins never
    assert len(children) == -(-len(indexable) // 3)


def test_robots_points_at_the_sitemap() -> None:
    text = robots_file(BASE).content.decode()
    assert "User-agent: *" in text and "Sitemap: https://kvtriage.dev/sitemap.xml" in text


# --------------------------------------------------------------------------- every page's head


class _Head(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, str] = {}
        self.links: dict[str, str] = {}
        self.lang = ""
        self.json_ld: list[str] = []
        self._ld = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang", "")
        if tag == "meta":
            key = a.get("name") or a.get("property")
            if key:
                self.meta[key] = a.get("content", "")
        if tag == "link" and a.get("rel"):
            self.links[a["rel"]] = a.get("href", "")
        if tag == "script" and a.get("type") == "application/ld+json":
            self._ld = True
            self.json_ld.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._ld = False

    def handle_data(self, data):
        if self._ld:
            self.json_ld[-1] += data


def _head(html: str) -> _Head:
    head = _Head()
    head.feed(html)
    return head


def test_every_page_has_canonical_social_tags_and_structured_data(fixture_build) -> None:
    build, files = fixture_build
    for page in build.plan.pages:
        head = _head(_text(files, page.output_path("html")))
        assert head.lang == "en"
        assert head.meta["viewport"].startswith("width=device-width")
        assert head.links["canonical"] == BASE + page.url
        assert 50 <= len(head.meta["description"]) <= 160
        for key in ("og:title", "og:description", "og:url", "og:type", "twitter:card", "twitter:title"):
            assert head.meta[key], (page.url, key)
        data = json.loads(head.json_ld[0])
        article = next(item for item in data if item["@type"] == "TechArticle")
        assert article["dateModified"] == page.lastmod
        if page.url != "/":
            crumbs = next(item for item in data if item["@type"] == "BreadcrumbList")
            assert crumbs["itemListElement"][-1]["item"] == BASE + page.url


def test_date_modified_comes_from_the_ledger_not_the_build_day(tmp_path: Path) -> None:
    root = copy_site(tmp_path / "root")
    assert main(["stamp", "--root", str(root)]) == 0
    ledger = (root / "data/lastmod.yaml").read_text()
    stamped = re.search(r"date: '(\d{4}-\d{2}-\d{2})'", ledger).group(1)
    later = build_site(root, today="2031-05-05")
    for page in later.plan.pages:
        assert page.lastmod == stamped
    html = next(f for f in later.files if f.path == "index.html").content.decode()
    assert f'"dateModified":"{stamped}"' in html and "2031-05-05" not in html
    # stamping again changes nothing while the content is the same
    assert main(["stamp", "--root", str(root)]) == 0
    assert (root / "data/lastmod.yaml").read_text() == ledger


def test_site_pages_404_search_about(fixture_build) -> None:
    build, files = fixture_build
    not_found = _head(_text(files, "404.html"))
    assert "canonical" not in not_found.links and "og:url" not in not_found.meta
    search = _text(files, "search/index.html")
    assert 'action="/search/"' in search and 'name="q"' in search
    assert "data-pagefind-body" not in search  # the search page lists errors; it is not a search result
    # the pair pages' search bundle, a folder of its own that the build owns, merged into /pagefind/
    assert f'data-pairs="{PAIRS_SEARCH_URL}"' in search and PAIRS_SEARCH_URL.strip("/") in SEARCH_FOLDERS
    assert f'href="{ERROR_HUB}"' in search  # with JavaScript off the page still links every error
    assert "data-pagefind-body" in _text(files, "about/index.html")
    assert "about/index.md" in files
    home = _text(files, "index.html")
    assert '<form class="paste" action="/search/" method="get"' in home


def test_static_urls_carry_a_content_hash_and_the_stylesheet_is_inline(fixture_build, tmp_path: Path) -> None:
    _, files = fixture_build
    script = re.search(r'src="(/static/site\.js\?v=[0-9a-f]{10})"', _text(files, "index.html")).group(1)
    assert 'rel="stylesheet"' not in _text(files, "index.html")  # nothing blocks the first paint
    root = copy_site(tmp_path / "root")
    (root / "templates/static/site.js").write_text("// changed\n")
    (root / "templates/static/site.css").write_text("body{color:red}\n")
    rebuilt = {f.path: f.content for f in build_site(root, today=FIXED_TODAY).files}
    assert script not in _text(rebuilt, "index.html")
    assert "<style>body{color:red}\n</style>" in _text(rebuilt, "index.html")


# --------------------------------------------------------------------------- search data, llms.txt, _headers


def test_search_index_carries_every_error_pattern(fixture_build) -> None:
    build, files = fixture_build
    rows = {r["url"]: r for r in json.loads(files["search/errors.json"])["errors"]}
    errors = [p for p in build.plan.pages if p.kind == "error"]
    assert sorted(rows) == sorted(p.url for p in errors)
    pattern = re.compile(rows[ERROR_HUB]["pattern"])
    assert pattern.search("The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (3664).")
    for url in rows:
        assert url.strip("/") + "/index.html" in files


def test_llms_txt_links_the_markdown_twins_of_the_hubs(fixture_build) -> None:
    _, files = fixture_build
    text = _text(files, "llms.txt")
    assert text.startswith("# kvtriage\n\n> ")
    links = re.findall(r"\]\((https://kvtriage\.dev/[^)]*)\)", text)
    assert BASE + ERROR_HUB + "index.md" in links
    assert BASE + "/engines/vllm/index.md" in links and BASE + "/gpus/index.md" in links
    for link in links:
        assert link.removeprefix(BASE + "/") in files, link


def test_headers_cache_static_long_and_pages_short_without_overlap(fixture_build) -> None:
    _, files = fixture_build
    blocks = {}
    for block in _text(files, "_headers").split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        if lines:
            blocks[lines[0]] = lines[1:]
    assert blocks["/static/*"] == ["  Cache-Control: public, max-age=31536000, immutable"]
    assert all(blocks[f"/{folder}/*"] == ["  Cache-Control: public, max-age=3600"] for folder in SEARCH_FOLDERS)
    assert "  Cache-Control: public, max-age=0, must-revalidate" in blocks["/oom/*"]
    # hosts join a header two matching rules set: only one rule may set Cache-Control for a path
    cache_rules = [path for path, lines in blocks.items() if any("Cache-Control" in line for line in lines)]
    assert "/*" not in cache_rules
    for path in files:
        if path.startswith("_"):
            continue
        matching = [rule for rule in cache_rules if rule == "/" + path or (rule.endswith("*") and ("/" + path).startswith(rule[:-1]) and rule != "/")]
        assert len(matching) <= 1, (path, matching)


# --------------------------------------------------------------------------- renamed slugs


def add_gpu_alias(root: Path, gpu_id: str, alias: str) -> None:
    path = root / "data/gpus.yaml"
    data = yaml.safe_load(path.read_text())
    next(g for g in data["gpus"] if g["id"] == gpu_id)["aliases"] = [alias]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _with_aliases(root: Path) -> Path:
    add_gpu_alias(root, "rtx-4090", "geforce-rtx-4090")
    path = root / "content/errors/vllm-max-model-len-error.yaml"
    data = yaml.safe_load(path.read_text())
    data["aliases"] = ["vllm-max-seq-len"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def test_aliases_give_redirects_and_noindex_alias_pages(tmp_path: Path) -> None:
    root = _with_aliases(copy_site(tmp_path / "root"))
    files = {f.path: f.content.decode() for f in build_site(root, today=FIXED_TODAY).files if not f.path.startswith("static/")}
    rules = [line.split() for line in files["_redirects"].splitlines() if line and not line.startswith("#")]
    assert ["/gpus/geforce-rtx-4090/", "/gpus/rtx-4090/", "301"] in rules
    assert ["/oom/vllm-max-seq-len/", ERROR_HUB, "301"] in rules
    assert ["/oom/vllm-max-seq-len/index.md", ERROR_HUB + "index.md", "301"] in rules
    # pair pages move with both the error slug and the GPU slug
    assert ["/oom/vllm-max-seq-len/rtx-4090/qwen2.5-coder-32b-instruct-awq/", PAIR, "301"] in rules
    assert ["/oom/vllm-max-model-len-error/geforce-rtx-4090/qwen2.5-coder-32b-instruct-awq/", PAIR, "301"] in rules
    alias = files["gpus/geforce-rtx-4090/index.html"]
    head = _head(alias)
    assert head.meta["robots"] == "noindex"
    assert head.links["canonical"] == BASE + "/gpus/rtx-4090/"
    assert re.search(r'http-equiv="refresh" content="0; url=/gpus/rtx-4090/"', alias)
    # alias pages stay out of the sitemap
    assert "geforce-rtx-4090" not in files["sitemap.xml"]


# --------------------------------------------------------------------------- the HTML check


AFFILIATES = {"shop.example": AffiliateRule("shop.example", ("We earn a commission on these links.",))}


def _html(title: str, body: str, description: str = "A description long enough to pass the fifty character floor.", url: str = "/") -> str:
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title><meta name="description" content="{description}">'
        f'<link rel="canonical" href="{BASE}{url}">'
        '<script type="application/ld+json">[{"@type":"TechArticle","dateModified":"2026-01-01"}]</script>'
        f"</head><body><main>{body}</main></body></html>"
    )


def _stated_meta(html: str) -> PageMeta:
    """The head a hand-written page states, as the plan would hand it to the check."""
    facts = read_page(html)
    return PageMeta(facts.title, facts.description, facts.noindex, facts.canonical, facts.refresh, tuple(facts.json_ld))


def _check(pages: dict[str, str]) -> None:
    meta = {page_url(path): _stated_meta(html) for path, html in pages.items()}
    check_html([RenderedFile(path, html.encode()) for path, html in pages.items()], BASE, AFFILIATES, meta)


def _messages(pages: dict[str, str]) -> str:
    with pytest.raises(RenderError) as raised:
        _check(pages)
    return "\n".join(issue.format() for issue in raised.value.issues)


GOOD_SPONSORED = (
    '<section><h2 id="buy">Buy</h2><p>We earn a commission on these links.</p>'
    '<a href="https://www.shop.example/s?k=gpu" rel="sponsored noopener">GPU</a></section>'
)


def test_a_clean_page_passes() -> None:
    _check({"index.html": _html("Home", GOOD_SPONSORED + '<a href="/a/#x">a</a><a href="#buy">up</a>'),
            "a/index.html": _html("A", '<h2 id="x">x</h2>', "Another description that is long enough for the check.", "/a/")})


def test_affiliate_link_without_sponsored_rel_fails() -> None:
    body = GOOD_SPONSORED.replace('rel="sponsored noopener"', 'rel="noopener"')
    text = _messages({"index.html": _html("Home", body)})
    assert "site/:1" in text and "lacks rel sponsored" in text


def test_affiliate_link_without_noopener_fails() -> None:
    body = GOOD_SPONSORED.replace('rel="sponsored noopener"', 'rel="sponsored"')
    assert "lacks rel noopener" in _messages({"index.html": _html("Home", body)})


def test_affiliate_link_without_disclosure_in_its_section_fails() -> None:
    body = GOOD_SPONSORED.replace("<p>We earn a commission on these links.</p>", "")
    text = _messages({"index.html": _html("Home", body + "<p>We earn a commission on these links.</p>")})
    assert "no disclosure in its <section>" in text
    outside = '<p>We earn a commission on these links.</p><a href="https://shop.example/x" rel="sponsored noopener">x</a>'
    assert "no disclosure" in _messages({"index.html": _html("Home", outside)})


@pytest.mark.parametrize("href", ["https://www.shop.example./s?k=gpu", "https://WWW.Shop.Example/s", "https://smile.shop.example/s",
                                  "https://a.b.shop.example./s", "http://shop.example./x"])
def test_affiliate_hosts_are_normalised_before_the_rules_apply(href: str) -> None:
    # www.amazon.com. (the root's trailing dot) and smile.amazon.com were published without rel or disclosure.
    body = f'<section><h2 id="buy">Buy</h2><a href="{href}" rel="noopener">GPU</a></section>'
    text = _messages({"index.html": _html("Home", body)})
    assert "lacks rel sponsored" in text and "no disclosure" in text


def test_hosts_that_only_resemble_a_program_are_not_affiliate_links() -> None:
    for href in ("https://shop.example.evil.test/s", "https://notshop.example/s"):
        _check({"index.html": _html("Home", f'<a href="{href}">x</a>')})


def test_broken_link_and_broken_anchor_fail_naming_the_page() -> None:
    pages = {
        "index.html": _html("Home", '<a href="/missing/">gone</a><a href="/a/#nope">anchor</a><a href="#self-missing">self</a>'),
        "a/index.html": _html("A", '<h2 id="x">x</h2>', "Another description that is long enough for the check.", "/a/"),
    }
    text = _messages(pages)
    assert "site/:1: link: <a> points at /missing/, which the build does not produce" in text
    assert "/a/#nope: no element with id 'nope' on /a/" in text
    assert "#self-missing: no element with id 'self-missing' on /" in text


def test_absolute_links_to_the_own_host_are_checked_too() -> None:
    text = _messages({"index.html": _html("Home", f'<a href="{BASE}/gone/">x</a>')})
    assert "points at https://kvtriage.dev/gone/" in text


def test_duplicate_titles_and_descriptions_fail_but_noindex_pages_may_repeat() -> None:
    same = "The same description on two pages, long enough to pass."
    pages = {"index.html": _html("Same", "", same), "a/index.html": _html("Same", "", same, "/a/")}
    text = _messages(pages)
    assert "site/a/:1: title: title 'Same' is also the title of /" in text
    assert "the description is also on /" in text
    noindex = _html("Same", "", same, "/a/").replace("<title>", '<meta name="robots" content="noindex"><title>')
    _check({"index.html": _html("Same", "", same), "a/index.html": noindex})


def test_description_length_is_enforced_per_page() -> None:
    assert "meta description is 10 characters" in _messages({"index.html": _html("Home", "", "Too short.")})
    assert "meta description is 161 characters" in _messages({"index.html": _html("Home", "", "x" * 161)})


def test_canonical_must_be_the_absolute_self_url() -> None:
    page = _html("A", "", url="/a/").replace(f"{BASE}/a/", "/a/")
    text = _messages({"a/index.html": page, "index.html": _html("Home", "", "A different description, long enough to pass here.")})
    assert "canonical is '/a/'" in text


def test_duplicate_ids_fail() -> None:
    assert "id 'x' appears twice" in _messages({"index.html": _html("Home", '<p id="x"></p><p id="x"></p>')})


def test_the_check_reads_each_page_in_one_pass() -> None:
    facts = read_page(_html("T", GOOD_SPONSORED))
    assert facts.title == "T" and "buy" in facts.ids
    (link,) = [link for link in facts.links if "shop.example" in link.href]
    assert link.rel == {"sponsored", "noopener"} and link.sections == (0,)


def test_the_fixture_site_passes_and_a_broken_template_fails_the_build(tmp_path: Path) -> None:
    build_site(copy_site(tmp_path / "good"), today=FIXED_TODAY)
    root = copy_site(tmp_path / "broken")  # its own templates dir: environments are cached per folder
    sponsored = root / "templates/partials/sponsored.html"
    sponsored.write_text(sponsored.read_text().replace('rel="{{ link.rel }}"', 'rel="noopener"'))
    with pytest.raises(RenderError) as raised:
        build_site(root, today=FIXED_TODAY)
    assert any("lacks rel sponsored" in issue.message and issue.path.startswith("site/") for issue in raised.value.issues)


# --------------------------------------------------------------------------- full-text search


@pytest.mark.skipif(pagefind_executable() is None, reason="the pagefind package (pip install 'pagefind[bin]') is not installed")
def test_pagefind_indexes_page_bodies_and_pair_pages_as_their_title_up_to_the_verdict(tmp_path: Path) -> None:
    import gzip

    out = tmp_path / "site"
    report = build_and_write(copy_site(tmp_path / "root"), out, search=True)
    assert "search index: Pagefind" in report
    counts = {}
    for folder in SEARCH_FOLDERS:
        entry = json.loads((out / folder / "pagefind-entry.json").read_text())
        counts[folder] = sum(lang["page_count"] for lang in entry["languages"].values())
    bodies = [p for p in out.rglob("*.html") if "data-pagefind-body" in p.read_text()]
    pairs = sum(1 for p in bodies if p.relative_to(out).parts[0] == "oom" and len(p.relative_to(out).parts) == 5)
    # whole pages in the bundle the search page loads, pair pages in the one merged into it
    assert counts == {"pagefind": len(bodies) - pairs, "pagefind-pairs": pairs} and pairs > 0
    assert (out / "pagefind/pagefind-ui.js").is_file()
    whole = [gzip.decompress(p.read_bytes()) for p in (out / "pagefind/fragment").iterdir()]
    assert not any(b"/oom/vllm-max-model-len-error/rtx-4090/" in f for f in whole)
    fragments = [gzip.decompress(p.read_bytes()) for p in (out / "pagefind-pairs/fragment").iterdir()]
    pair = out / "oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/index.html"
    title = html.unescape(re.search(r"<title>([^<]*)</title>", pair.read_text()).group(1))
    description = html.unescape(re.search(r'<meta name="description" content="([^"]*)"', pair.read_text()).group(1))
    found = [f for f in fragments if b"/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/" in f]
    assert len(found) == 1
    heading, _, verdict = title.rpartition(": ")
    assert heading.encode() in found[0] and all(w in heading for w in ("RTX 4090", "Qwen2.5", "32B", "AWQ", "max seq len"))
    # the verdict's and the description's figures are not indexed: nobody types them
    assert verdict == "fits 4,288 tokens" and verdict.encode() not in found[0]
    assert description.split(": ")[1].encode() not in found[0]
    assert b"Frequently asked" not in found[0] and len(found[0]) < 2000  # the stub, not the whole page
    assert not list(tmp_path.glob(".kvtriage-cache/*/stage-*"))


@pytest.mark.skipif(pagefind_executable() is None, reason="the pagefind package (pip install 'pagefind[bin]') is not installed")
def test_a_site_without_pair_pages_has_no_pairs_bundle_and_its_search_page_merges_none(tmp_path: Path) -> None:
    root, out = copy_site(tmp_path / "root"), tmp_path / "site"
    build_and_write(root, out, search=True)
    assert (out / "pagefind-pairs/pagefind-entry.json").is_file()
    for error in (root / "content/errors").glob("*.yaml"):
        error.write_text(error.read_text().replace("pair_pages: true", "pair_pages: false"))
    for pair in (root / "content/pairs").glob("*.yaml"):  # the featured pairs
        pair.unlink()
    build_and_write(root, out, search=True)  # Pagefind refuses to make an empty bundle
    assert not (out / "oom/vllm-max-model-len-error/rtx-4090").exists()
    assert (out / "pagefind/pagefind-entry.json").is_file() and not (out / "pagefind-pairs").exists()
    assert "data-pairs" not in (out / "search/index.html").read_text()
    assert "nothing changed" in build_and_write(root, out, search=True)


def test_build_without_search_writes_no_index(tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = build_and_write(copy_site(tmp_path / "root"), out, search=False)
    assert "skipped (--no-search)" in report and not any((out / folder).exists() for folder in SEARCH_FOLDERS)


def test_plain_root_links_resolve_as_urlsplit_and_urljoin_do() -> None:
    import random
    from urllib.parse import unquote, urljoin, urlsplit

    from generator.check.site_checks import _plain_root_link

    def slow(raw: str) -> tuple[str, str]:
        parts = urlsplit(raw)
        return unquote(urljoin("/p/q/", parts.path) if parts.path else "/p/q/"), parts.fragment

    pieces = ["/", "a", "b/", ".", "..", "%2e", "%20", " ", "é", "?", "#", "=", "&", "\t", "index.html", "//"]
    rng = random.Random(8)
    cases = ["/", "/a/b/#x", "/a/b/?q=1#x", "/a/./b", "/a/../b", "/a\tb", "//host/x", "/a//b/"]
    cases += ["/" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(5000)]
    fast = 0
    for raw in cases:
        found = _plain_root_link(raw)
        if found is not None:
            fast += 1
            assert found == slow(raw), raw
    assert fast > 1000  # the shortcut does take the common case
