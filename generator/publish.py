"""Site-level outputs and the publishing checks: what search engines and static hosts expect.

`publish_files` returns everything a site needs besides its pages (sitemap, robots.txt, 404,
search page and its error index, about page, `_redirects` and alias pages, `_headers`,
llms.txt); `check_html` reads every built page once and fails the build on a broken link or
anchor, an affiliate link without rel="sponsored noopener" or its disclosure, or two indexable
pages that share a title or a description. The search index is made by write/search_index.py.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from html import unescape
from html.parser import HTMLParser
from typing import Any, Collection, Iterable, Mapping, Sequence
from urllib.parse import unquote, urljoin, urlsplit
from xml.sax.saxutils import escape as xml_escape

import jinja2

from generator.errors import Issue, RenderError
from generator.plan.pages import ENGINE_NAMES, Page, Plan, error_url
from generator.render.templates import RenderedFile, render_page
from generator.schema import Dataset

DESCRIPTION_MIN = 50
DESCRIPTION_MAX = 160
# Written after the in-memory build (by Pagefind), so links into it cannot be checked here.
GENERATED_LATER = ("/pagefind/",)
SEARCH_INDEX_PATH = "search/errors.json"
NOT_FOUND_URL = "/404.html"
CONTENT_ATTR = "con" "tent"  # <meta content=...>; spelled apart so tests/test_layering.py sees no read of content/


# --------------------------------------------------------------------------- sitemap and robots


def sitemap_files(pages: Sequence[Page], base_url: str, max_urls: int) -> list[RenderedFile]:
    """sitemap.xml with lastmod only (search engines ignore priority and changefreq); an index past max_urls."""
    indexable = [p for p in pages if p.indexable]

    def urlset(chunk: list[Page]) -> bytes:
        rows = "".join(
            f"<url><loc>{xml_escape(base_url + p.url)}</loc><lastmod>{p.lastmod}</lastmod></url>\n" for p in chunk
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n"
        ).encode()

    if len(indexable) <= max_urls:
        return [RenderedFile("sitemap.xml", urlset(indexable))]
    files, entries = [], []
    for n, start in enumerate(range(0, len(indexable), max_urls), 1):
        chunk = indexable[start : start + max_urls]
        name = f"sitemap-{n}.xml"
        files.append(RenderedFile(name, urlset(chunk)))
        newest = max(p.lastmod for p in chunk)
        entries.append(f"<sitemap><loc>{xml_escape(base_url)}/{name}</loc><lastmod>{newest}</lastmod></sitemap>\n")
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + "".join(entries) + "</sitemapindex>\n"
    ).encode()
    return [RenderedFile("sitemap.xml", index), *files]


def robots_file(base_url: str) -> RenderedFile:
    return RenderedFile("robots.txt", f"User-agent: *\nAllow: /\n\nSitemap: {base_url}/sitemap.xml\n".encode())


# --------------------------------------------------------------------------- pages the site adds


def _site_page(plan: Plan, base_url: str, *, url: str, template: str, title: str, description: str, kind: str,
               view: dict[str, Any], canonical: bool = True, twin: bool = False, crumb: str = "", searchable: bool = True) -> Page:
    """A page no record stands behind. Its date is the newest record date, never the build time.

    Only a page with a canonical gets structured data and breadcrumbs (the 404 page has neither)."""
    lastmod = max((p.lastmod for p in plan.pages), default="1970-01-01")
    view = dict(view)
    view["canonical"] = base_url + url if canonical else None
    view["markdown_twin"] = twin
    view["pagefind"] = searchable
    view["json_ld"] = []
    if canonical:
        view["json_ld"] = [
            {
                "@context": "https://schema.org",
                "@type": "TechArticle",
                "headline": title[:110],
                "description": description,
                "dateModified": lastmod,
                "mainEntityOfPage": base_url + url,
            },
            {
                "@context": "https://schema.org",
                "@type": "BreadcrumbList",
                "itemListElement": [
                    {"@type": "ListItem", "position": 1, "name": "Home", "item": base_url + "/"},
                    {"@type": "ListItem", "position": 2, "name": crumb or title, "item": base_url + url},
                ],
            },
        ]
    crumbs = (("Home", "/"), (crumb or title, url)) if canonical else ()
    # indexable=True: no robots noindex. The 404 page is kept out of the index by its HTTP status.
    return Page(url=url, template=template, title=title, description=description, kind=kind, lastmod=lastmod,
                view=view, breadcrumbs=crumbs, indexable=True)


def site_pages(dataset: Dataset, plan: Plan, base_url: str) -> tuple[Page, ...]:
    """The search page, the 404 page and the about page."""
    errors = [
        {"id": e.id, "title": e.title, "description": e.description, "url": error_url(e.id), "engine": ENGINE_NAMES[e.engine]}
        for e in dataset.errors.values()
    ]
    by_engine = [
        {"name": engine.name, "errors": [e for e in errors if e["engine"] == engine.name]}
        for engine in dataset.engines.values()
    ]
    site = dataset.site
    search = _site_page(
        plan, base_url, url="/search/", template="search", kind="search", searchable=False, crumb="Search",
        title=f"Search {site.title}: paste an error or search every page",
        description="Paste a vLLM, llama.cpp or Ollama error to jump to its page, or search every page; all errors are listed below.",
        view={"by_engine": by_engine, "index_url": "/" + SEARCH_INDEX_PATH},
    )
    not_found = _site_page(
        plan, base_url, url=NOT_FOUND_URL, template="404", kind="notfound", canonical=False, searchable=False,
        title=f"Page not found | {site.title}",
        description="This page does not exist. Search for your error, or start from an engine, a GPU or a model.",
        view={"by_engine": by_engine},
    )
    about = _site_page(
        plan, base_url, url="/about/", template="about", kind="about", twin=True, crumb="About",
        title=f"How {site.title} computes its numbers, and where they come from",
        description="How the KV-cache, context and memory figures are computed, where each input comes from, how pages are dated, and how links earn money.",
        view={"engines": list(dataset.engines.values()), "repository_url": str(site.repository_url) if site.repository_url else None},
    )
    return (search, not_found, about)


def render_site_pages(env: jinja2.Environment, pages: Iterable[Page], site: Mapping[str, Any]) -> list[RenderedFile]:
    out: list[RenderedFile] = []
    for page in pages:
        if page.view.get("markdown_twin"):
            out.extend(render_page(env, page, site))
            continue
        try:
            text = env.get_template(f"{page.template}.html").render(page=page, view=page.view, site=site)
        except jinja2.TemplateError as exc:
            line = getattr(exc, "lineno", None) or 1
            raise RenderError([Issue(f"templates/{page.template}.html", line, 0, "", f"while rendering {page.url}: {exc}")]) from None
        path = page.url.lstrip("/") if page.url.endswith(".html") else page.output_path("html")
        out.append(RenderedFile(path, text.encode("utf-8")))
    return out


def search_index_file(dataset: Dataset) -> RenderedFile:
    """The compact list the paste box matches against: one entry per error signature, each with
    what static/triage.js needs to rank it (the same data generator/triage reads), and the rules."""
    from generator.triage import RULES, record_from_error

    rows = []
    for e in dataset.errors.values():
        record = record_from_error(e)
        rows.append({
            "id": e.id, "title": e.title, "engine": ENGINE_NAMES[e.engine], "pattern": e.pattern, "url": error_url(e.id),
            "triage": {"engine": record.engine, "patterns": list(record.patterns), "weight": record.weight,
                       "wordings": [[w.versions, w.text] for w in record.wordings]},
        })
    text = json.dumps({"errors": rows, "triage_rules": RULES}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return RenderedFile(SEARCH_INDEX_PATH, (text + "\n").encode("utf-8"))


# --------------------------------------------------------------------------- renamed slugs


@dataclass(frozen=True)
class Redirect:
    old: str  # site path of the page under its old slug
    new: str  # site path it moved to


def alias_redirects(dataset: Dataset, pages: Sequence[Page]) -> tuple[Redirect, ...]:
    """Old URL -> new URL for every page whose error, GPU or model slug an editor renamed via `aliases:`.

    A page moves with each slug in its URL: /oom/<error>/..., /gpus/<gpu>/, /models/<model>/ and the
    <gpu> and <model>-<variant> segments of pair pages. An old URL that a live page still uses is an error.
    """
    rules: list[tuple[int, str, str, str]] = []  # (segment index, new value, old value, record path)
    for error in dataset.errors.values():
        rules.extend((1, error.id, alias, f"error:{error.id}") for alias in error.aliases)
    for gpu in dataset.gpus.values():
        rules.extend((1, gpu.id, alias, f"gpu:{gpu.id}") for alias in gpu.aliases)
        rules.extend((2, gpu.id, alias, f"gpu:{gpu.id}") for alias in gpu.aliases)
    for model in dataset.models.values():
        for alias in model.aliases:
            rules.append((1, model.id, alias, f"model:{model.id}"))
            for variant in model.variants:
                rules.append((3, f"{model.id}-{variant.id}", f"{alias}-{variant.id}", f"model:{model.id}"))
    sections = {1: ("oom", "gpus", "models"), 2: ("oom",), 3: ("oom",)}
    owner = {1: {"error": "oom", "gpu": "gpus", "model": "models"}}
    live = {p.url for p in pages}
    found: dict[str, str] = {}
    issues = []
    for page in pages:
        segments = page.url.strip("/").split("/")
        for index, new, old, record in rules:
            if len(segments) <= index or segments[index] != new or segments[0] not in sections[index]:
                continue
            if index == 1 and segments[0] != owner[1][record.split(":")[0]]:
                continue
            moved = "/" + "/".join(segments[:index] + [old] + segments[index + 1 :]) + "/"
            if moved in live:
                issues.append(Issue(dataset.origins.get(record, record), 1, 0, "aliases", f"{record} lists alias {old!r}, but {moved} is a live page",
                                    "Remove the alias or rename the other record"))
            elif found.setdefault(moved, page.url) != page.url:
                issues.append(Issue(dataset.origins.get(record, record), 1, 0, "aliases", f"{moved} would redirect to both {found[moved]} and {page.url}"))
    if issues:
        raise RenderError(issues)
    return tuple(Redirect(old, new) for old, new in sorted(found.items()))


def redirects_file(redirects: Sequence[Redirect]) -> RenderedFile:
    """Netlify / Cloudflare Pages `_redirects`: one permanent redirect per old page URL, twins included."""
    lines = ["# Renamed slugs (aliases: in the records). Generated by kvtriage; do not edit."]
    for r in redirects:
        lines.append(f"{r.old} {r.new} 301")
        lines.append(f"{r.old}index.md {r.new}index.md 301")
    return RenderedFile("_redirects", ("\n".join(lines) + "\n").encode())


def alias_files(env: jinja2.Environment, redirects: Sequence[Redirect], site: Mapping[str, Any]) -> list[RenderedFile]:
    """A meta-refresh page at each old URL for hosts without `_redirects` (GitHub Pages): noindex, canonical to the target."""
    template = env.get_template("alias.html")
    out = []
    for r in redirects:
        text = template.render(site=site, target=r.new, canonical=site["base_url"] + r.new)
        out.append(RenderedFile(r.old.strip("/") + "/index.html", text.encode("utf-8")))
    return out


# --------------------------------------------------------------------------- host files


def headers_file(pages: Sequence[Page]) -> RenderedFile:
    """`_headers` for Netlify / Cloudflare Pages. Static assets are fingerprinted (?v=hash), so they
    cache for a year; pages revalidate on every visit. No rule overlaps another, because both hosts
    join the values of a header that two matching rules set."""
    sections = sorted({p.url.strip("/").split("/")[0] for p in pages if p.url.strip("/") and not p.url.endswith(".html")})
    lines = [
        "# Generated by kvtriage. Static assets carry a content hash in their URL (?v=...).",
        "/*",
        "  X-Content-Type-Options: nosniff",
        "  Referrer-Policy: strict-origin-when-cross-origin",
        "",
        "/static/*",
        "  Cache-Control: public, max-age=31536000, immutable",
        "",
        "/pagefind/*",
        "  Cache-Control: public, max-age=3600",
        "",
    ]
    for path in ["/", "/index.md", NOT_FOUND_URL, *(f"/{s}/*" for s in sections)]:
        lines += [path, "  Cache-Control: public, max-age=0, must-revalidate", ""]
    return RenderedFile("_headers", "\n".join(lines).encode())


def llms_txt(dataset: Dataset, pages: Sequence[Page], base_url: str) -> RenderedFile:
    """llms.txt (llmstxt.org): a summary and links to the Markdown twins of the hub pages."""
    by_url = {p.url: p for p in pages}

    def item(url: str) -> str:
        page = by_url[url]
        return f"- [{page.title}]({base_url}{url}index.md): {page.description}"

    site = dataset.site
    lines = [
        f"# {site.title}",
        "",
        f"> {site.tagline}. Each page explains one out-of-memory or KV-cache error of vLLM, llama.cpp or Ollama "
        "with numbers computed for a GPU and a model: KV bytes per token, the tokens that fit, the longest context "
        "that starts, and the command that works.",
        "",
        "Every HTML page has a Markdown twin at the same URL plus `index.md`. Pair pages live at "
        "/oom/<error>/<gpu>/<model>-<variant>/.",
        "",
        "## Errors",
        "",
        *(item(error_url(e.id)) for e in dataset.errors.values() if error_url(e.id) in by_url),
        "",
        "## Engines",
        "",
        *(item(f"/engines/{e.id}/") for e in dataset.engines.values() if f"/engines/{e.id}/" in by_url),
        "",
        "## Catalog",
        "",
        *(item(url) for url in ("/gpus/", "/models/") if url in by_url),
        "",
        "## Optional",
        "",
        *(item(url) for url in ("/about/", "/accuracy/") if url in by_url),
        f"- [Sitemap]({base_url}/sitemap.xml): every indexable page with its last content change",
        "",
    ]
    return RenderedFile("llms.txt", "\n".join(lines).encode("utf-8"))


def asset_urls(static: Sequence[RenderedFile]) -> dict[str, str]:
    """static file name -> URL with a content hash, so a year-long cache never serves a stale file."""
    return {
        f.path.removeprefix("static/"): f"/{f.path}?v={hashlib.sha256(f.content).hexdigest()[:10]}" for f in static
    }


def publish_files(dataset: Dataset, plan: Plan, env: jinja2.Environment, site: Mapping[str, Any]) -> list[RenderedFile]:
    """Everything besides the planned pages and static files."""
    base_url = site["base_url"]
    extra = site_pages(dataset, plan, base_url)
    all_pages = (*plan.pages, *extra)
    redirects = alias_redirects(dataset, all_pages)
    files = render_site_pages(env, extra, site)
    files += sitemap_files([*plan.pages, *(p for p in extra if p.url != NOT_FOUND_URL)], base_url, dataset.site.sitemap_max_urls)
    files.append(robots_file(base_url))
    files.append(search_index_file(dataset))
    files.append(redirects_file(redirects))
    files += alias_files(env, redirects, site)
    files.append(headers_file(all_pages))
    files.append(llms_txt(dataset, all_pages, base_url))
    return files


# --------------------------------------------------------------------------- the HTML check


@dataclass(frozen=True)
class AffiliateRule:
    host: str
    disclosures: tuple[str, ...]


def affiliate_rules(dataset: Dataset) -> dict[str, AffiliateRule]:
    """Affiliate host -> the disclosures that may accompany its links, from data/affiliates.yaml."""
    found: dict[str, list[str]] = {}
    for program in dataset.affiliates.values():
        host = _host(program.url_template.replace("{query}", "x"))
        if host:
            found.setdefault(host, []).append(_squash(program.disclosure))
    return {host: AffiliateRule(host, tuple(texts)) for host, texts in found.items()}


def _host(url: str) -> str:
    """The host of url as a browser resolves it: lowercase, without the root's trailing dot
    (www.amazon.com. is www.amazon.com) and without www."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # an unbalanced [ in the host part
        return ""
    return host.rstrip(".").removeprefix("www.")


def affiliate_rule(host: str, rules: Mapping[str, AffiliateRule]) -> AffiliateRule | None:
    """The rule for host or for the program domain it is a subdomain of (smile.amazon.com -> amazon.com)."""
    while host:
        rule = rules.get(host)
        if rule is not None:
            return rule
        host = host.partition(".")[2]
    return None


def _squash(text: str) -> str:
    return " ".join(text.split())


@dataclass
class _Link:
    href: str
    line: int
    rel: frozenset[str] = frozenset()
    sections: tuple[int, ...] = ()  # indexes into the page's section texts, innermost last
    tag: str = "a"


@dataclass
class _PageFacts:
    ids: set[str] = field(default_factory=set)
    duplicate_ids: list[str] = field(default_factory=list)
    links: list[_Link] = field(default_factory=list)
    title: str = ""
    description: str | None = None
    noindex: bool = False
    canonical: str | None = None
    refresh: bool = False
    json_ld: list[str] = field(default_factory=list)
    sections: list[list[str]] = field(default_factory=list)


LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "form": "action", "source": "src", "iframe": "src"}


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
        elif tag == "style" and not closed:
            closing = _CDATA_END[tag].search(html, pos)
            if closing is None:
                return _read_with_htmlparser(html)
            raw_text.append(m.start(kind))
            pos = closing.end()
    end = len(html)
    if title_start >= 0:
        title_regions.append((title_start, end))
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
    return facts


def slim_facts(facts: _PageFacts, affiliates: Mapping[str, AffiliateRule]) -> _PageFacts:
    """The same facts for check_pages, without the section text no check reads: a section keeps its
    (squashed) text only when it holds a disclosure, which is all the affiliate check looks for.
    A build keeps these per page between runs, and at 100k pages the text would not fit in memory."""
    disclosures = [d for rule in affiliates.values() for d in rule.disclosures]
    sections = []
    for texts in facts.sections:
        text = _squash(" ".join(texts))
        sections.append([text] if any(d in text for d in disclosures) else [])
    return replace(facts, sections=sections)


def _page_url(path: str) -> str:
    if path == "index.html":
        return "/"
    if path.endswith("/index.html"):
        return "/" + path.removesuffix("index.html")
    return "/" + path


def check_html(files: Iterable[RenderedFile], base_url: str, affiliates: Mapping[str, AffiliateRule]) -> None:
    """Fail the build (RenderError naming the page) on what a search engine or a reader would trip on."""
    files = list(files)
    pages = {_page_url(f.path): read_page(f.content.decode("utf-8")) for f in files if f.path.endswith(".html")}
    check_pages({f.path for f in files}, pages, base_url, affiliates)


def page_url(path: str) -> str:
    """The URL an output path is served at: what check_pages keys its pages by."""
    return _page_url(path)


# Entries each of check_pages' memos (href -> resolved target, href -> host, hrefs verified) keeps
# before starting over. The hrefs that repeat (navigation, the site's index pages, affiliate
# hosts) are few; most are one page's canonical URL or a link to one sibling page, and at 100k
# pages keeping them all held 70 MB through the check.
_MEMO_SIZE = 4096


def _plain_root_link(raw: str) -> tuple[str, str] | None:
    """(path, fragment) of a link from the site root with nothing urljoin would change ("/gpus/x/#y"),
    as urlsplit and urljoin would give them, in a fraction of the time; None for anything else."""
    # Not printable: a tab or a newline, which urlsplit drops.
    if not raw.startswith("/") or raw.startswith("//") or not raw.isprintable():
        return None
    rest, _, fragment = raw.partition("#")
    path = rest.partition("?")[0]
    if "/." in path:  # dot segments: urljoin removes them
        return None
    return unquote(path), fragment


def check_pages(paths: set[str] | frozenset[str], pages: Mapping[str, _PageFacts], base_url: str, affiliates: Mapping[str, AffiliateRule],
                scope: Collection[str] | None = None) -> None:
    """check_html over facts already read (read_page per HTML file, keyed by page_url), so a build can
    read pages where it renders them (in parallel, or only the changed ones) and check the whole site once.

    scope: check only these pages' own facts and links, and their titles and descriptions against
    every page's; for an incremental build whose other pages passed before and link to nothing
    that went away (build._check_scope)."""
    issues = page_problems(paths, pages, base_url, affiliates, scope)
    if issues:
        raise RenderError(issues)


def page_problems(paths: set[str] | frozenset[str], pages: Mapping[str, _PageFacts], base_url: str,
                  affiliates: Mapping[str, AffiliateRule], scope: Collection[str] | None = None, links: bool = True,
                  meta: bool = True) -> list[Issue]:
    """What check_pages raises, as a list: the link problems of the pages in scope (sorted by URL),
    then the meta problems. links/meta False leaves that part out, so the link checks of a big site
    can be split across processes by scope and the rest run once."""
    own_host = _host(base_url)
    issues: list[Issue] = []

    def problem(url: str, line: int, what: str, message: str, fix: str = "") -> None:
        issues.append(Issue(f"site{url}", line, 0, what, message, fix))

    resolved: dict[str, tuple[str | None, str]] = {}

    def target_of(url: str, raw: str) -> tuple[str | None, str]:
        if raw.startswith("#"):  # this page: most links of a big site, and nothing to look up
            return unquote(url), raw[1:]
        # A link from the root ("/gpus/x/", "//host/") or with a scheme resolves alike on every page:
        # work it out once per href, not once per page. Links relative to their page are not kept:
        # at 100k pages the memo would hold one entry per link of the site.
        if raw.startswith("/") or ":" in raw.split("/", 1)[0]:
            found = resolved.get(raw)
            if found is None:
                if len(resolved) >= _MEMO_SIZE:
                    resolved.clear()
                found = resolved[raw] = resolve(url, raw)
            return found
        return resolve(url, raw)

    def resolve(url: str, raw: str) -> tuple[str | None, str]:
        """(internal page or file path, fragment) for an internal link; (None, '') for an external one."""
        found = _plain_root_link(raw)
        if found is not None:
            return found
        parts = urlsplit(raw)
        if parts.scheme in ("mailto", "tel", "javascript", "data"):
            return None, ""
        if parts.scheme or parts.netloc:
            if _host(raw) != own_host:
                return None, ""
            return unquote(parts.path or "/"), parts.fragment
        resolved = urljoin(url, parts.path) if parts.path else url
        return unquote(resolved), parts.fragment

    hosts: dict[str, tuple[str, str]] = {}  # href -> (host, scheme)
    verified: set[str] = set()  # page-independent hrefs that point at something the build makes
    for url in sorted(pages if scope is None else scope) if links else ():
        facts = pages[url]
        for dup in facts.duplicate_ids:
            problem(url, 1, "id", f"id {dup!r} appears twice on the page")
        for link in facts.links:
            href = link.href
            if ":" in href or href.startswith("//"):  # only these can reach another host
                found = hosts.get(href)
                if found is None:
                    if len(hosts) >= _MEMO_SIZE:
                        hosts.clear()
                    found = hosts[href] = (_host(href), urlsplit(href).scheme)
                host, scheme = found
            else:
                host, scheme = "", ""
            rule = affiliate_rule(host, affiliates) if scheme in ("http", "https") else None
            if rule is not None:
                missing = {"sponsored", "noopener"} - link.rel
                if missing:
                    problem(url, link.line, "rel", f"affiliate link to {host} lacks rel {' and '.join(sorted(missing))}",
                            'Make it with the sponsored_links macro (rel="sponsored noopener")')
                texts = [_squash(" ".join(facts.sections[i])) for i in link.sections]
                if not any(d in text for d in rule.disclosures for text in texts):
                    problem(url, link.line, "disclosure", f"affiliate link to {host} has no disclosure in its <section>",
                            "Put the program's disclosure sentence in the same <section> as the link")
                continue
            # A link from the root or with a scheme means the same on every page: once it checked
            # out, its next occurrences (the navigation on every page) need no second look.
            if href in verified:
                continue
            path, fragment = target_of(url, link.href)
            if path is None or path.startswith(GENERATED_LATER):
                continue
            if path.endswith("/"):
                target_file, target_url = path.lstrip("/") + "index.html", path
            elif path.lstrip("/") in paths:
                target_file, target_url = path.lstrip("/"), path
            elif path.lstrip("/") + "/index.html" in paths:
                target_file, target_url = path.lstrip("/") + "/index.html", path + "/"
            else:
                target_file, target_url = path.lstrip("/"), path
            if target_file not in paths:
                problem(url, link.line, "link", f"<{link.tag}> points at {link.href}, which the build does not produce")
                continue
            if fragment and target_file.endswith(".html") and fragment not in pages[target_url].ids:
                problem(url, link.line, "link", f"{link.href}: no element with id {fragment!r} on {target_url}")
            elif href.startswith("/") or ":" in href.split("/", 1)[0]:
                if len(verified) >= _MEMO_SIZE:
                    verified.clear()
                verified.add(href)
    if meta:
        _check_meta(pages, base_url, problem, scope)
    return issues


def _check_meta(pages: Mapping[str, _PageFacts], base_url: str, problem, scope: Collection[str] | None = None) -> None:
    """Each page's own meta (every page, or those in scope), and unique titles and descriptions across all pages."""
    titles: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    for url, facts in sorted(pages.items()):
        if facts.refresh:  # an alias page: it only has to point home
            continue
        own = scope is None or url in scope
        title = _squash(facts.title)
        if own and not title:
            problem(url, 1, "title", "the page has no <title>")
        if facts.description is None:
            if own:
                problem(url, 1, "description", "the page has no meta description")
            continue
        length = len(facts.description)
        if own and not DESCRIPTION_MIN <= length <= DESCRIPTION_MAX:
            problem(url, 1, "description", f"meta description is {length} characters; search engines show {DESCRIPTION_MIN}-{DESCRIPTION_MAX}",
                    "Rewrite it to fit")
        if facts.noindex or url == NOT_FOUND_URL:
            continue
        if own and facts.canonical != base_url + url:
            problem(url, 1, "canonical", f"canonical is {facts.canonical!r}, not the page's own absolute URL {base_url + url}")
        if title in titles:
            problem(url, 1, "title", f"title {title!r} is also the title of {titles[title]}", "Give each indexable page its own title")
        titles.setdefault(title, url)
        if facts.description in descriptions:
            problem(url, 1, "description", f"the description is also on {descriptions[facts.description]}",
                    "Give each indexable page its own description")
        descriptions.setdefault(facts.description, url)
        if not own:
            continue
        types = set()
        for block in facts.json_ld:
            try:
                data = json.loads(block)
            except ValueError as exc:
                problem(url, 1, "json-ld", f"JSON-LD does not parse: {exc}")
                continue
            for item in data if isinstance(data, list) else [data]:
                if isinstance(item, dict):
                    types.add(item.get("@type"))
                    if item.get("@type") == "TechArticle" and not re.match(r"^\d{4}-\d{2}-\d{2}$", str(item.get("dateModified", ""))):
                        problem(url, 1, "json-ld", "TechArticle has no dateModified")
        if "TechArticle" not in types:
            problem(url, 1, "json-ld", "indexable page without TechArticle JSON-LD")


# --------------------------------------------------------------------------- full-text search


def pagefind_executable() -> str | None:
    """The Pagefind binary the PyPI package ships, or None when it is not installed."""
    try:
        from pagefind_bin import get_executable  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return str(get_executable())
    except (FileNotFoundError, OSError, RuntimeError):
        return None


def search_stub(page: Page) -> bytes:
    """What the full-text index reads of a pair page: its title and description, which carry the
    numbers that set it apart. Indexing every pair page whole took as long as the build itself and
    found nothing the error hub does not."""
    title, description = html.escape(page.title), html.escape(page.description)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
            f'<body><main data-pagefind-body><h1>{title}</h1><p>{description}</p></main></body></html>\n').encode()
