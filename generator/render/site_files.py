"""Site-level files: what search engines and static hosts expect besides the pages.

`publish_files` returns everything a site needs besides its pages (sitemap, robots.txt, 404,
search page and its error index, about page, `_redirects` and alias pages, `_headers`,
llms.txt). The search index itself is made by write/search_index.py from `search_stub`s."""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import jinja2

from generator.errors import Issue, RenderError
from generator.plan.pages import Page, Plan
from generator.plan.routes import error_url
from generator.plan.views import engine_names
from generator.render.templates import RenderedFile, render_page
from generator.schema import ENGINE_NAMES, Dataset

SEARCH_INDEX_PATH = "search/errors.json"
NOT_FOUND_URL = "/404.html"


def xml_escape(text: str) -> str:
    """&, < and > as XML entities (what xml.sax.saxutils.escape does, without importing the XML,
    HTTP and e-mail modules it brings: a twentieth of a second at every build's start)."""
    return html.escape(text, quote=False)


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
        description=f"Paste a {engine_names(dataset)} error to jump to its page, or search every page; "
                    "all errors are listed below.",
        view={"by_engine": by_engine, "index_url": "/" + SEARCH_INDEX_PATH,
              "pairs_bundle": PAIRS_SEARCH_URL if any(_stubbed(p) for p in plan.pages) else None},
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
        PAIRS_SEARCH_URL + "*",
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
        f"> {site.tagline}. Each page explains one out-of-memory or KV-cache error of {engine_names(dataset)} "
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


# Where the pair pages' stubs are indexed: a Pagefind bundle of their own beside /pagefind/ (the
# folders write/guard.py SEARCH_FOLDERS lists), merged into it by the search page (search.js).
PAIRS_SEARCH_URL = "/pagefind-pairs/"


# What each search bundle reads, by site path: the indexable pages whole for /pagefind/, and the pair
# pages as their stubs for PAIRS_SEARCH_URL. An edit of a whole page leaves the stubs as they were, and
# a pair's new title leaves the whole pages.
def search_wholes(pages: Iterable[Page]) -> list[tuple[str, None]]:
    """What /pagefind/ reads: the indexable pages but the pairs, whole (None: the page itself)."""
    return [(page.output_path("html"), None) for page in pages
            if not _stubbed(page) and page.indexable and page.view.get("pagefind", True)]


def search_stubs(pages: Iterable[Page]) -> list[tuple[str, bytes]]:
    """What the pair pages' bundle reads: each indexable pair page's stub, from the plan alone."""
    return [(page.output_path("html"), search_stub(page)) for page in pages if _stubbed(page)]


def _stubbed(page: Page) -> bool:
    return page.indexable and page.kind == "pair"


def search_stub(page: Page) -> bytes:
    """What the full-text index reads of a pair page: its title up to the verdict ("<engine> <error>
    on <GPU> with <model> <build>", the words a reader types; the verdict after the last ": " carries no
    colon). Pagefind's memory follows the words it indexes, and figures nobody types cost the most:
    at 30k synthetic pairs its peak is 802 MiB with the title and description, 667 MiB with the title
    (the same with the description as data-pagefind-meta) and 557 MiB without the verdict."""
    heading = page.title.rpartition(": ")[0] or page.title
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"></head><body><main data-pagefind-body>'
            f'<h1>{html.escape(heading)}</h1></main></body></html>\n').encode()
