"""What each built page says in its <head> (title, description, robots, canonical, refresh, JSON-LD),
taken from the plan: the values templates/base.html and templates/alias.html print, so the site
checks read them from the Page rather than parse them back out of the HTML."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from generator.plan.pages import Page, Plan
from generator.render.page_links import PageFacts
from generator.render.site_files import Redirect, alias_redirects, site_pages
from generator.render.templates import json_script
from generator.schema import Dataset


@dataclass(frozen=True, slots=True)
class PageMeta:
    title: str
    description: str | None  # None: the page has no meta description (an alias page)
    noindex: bool
    canonical: str | None
    refresh: bool  # an alias page: a meta refresh to where the page moved
    json_ld: tuple[str, ...]  # each <script type="application/ld+json"> block's text


def page_meta(page: Page) -> PageMeta:
    """The head base.html prints for a page: its title and description, robots noindex when the
    page is not indexable, the view's canonical and JSON-LD (plan/views.page_meta_view)."""
    view: Mapping[str, Any] = page.view
    json_ld = view.get("json_ld")
    return PageMeta(
        title=page.title,
        description=page.description,
        noindex=not page.indexable,
        canonical=view.get("canonical") or None,
        refresh=False,
        json_ld=(str(json_script(json_ld)),) if json_ld else (),
    )


def alias_meta(redirect: Redirect, site: Mapping[str, Any]) -> PageMeta:
    """The head alias.html prints for an old URL: noindex, canonical to the new page, a refresh."""
    return PageMeta(
        title=f"Moved: {redirect.new} | {site['title']}",
        description=None,
        noindex=True,
        canonical=site["base_url"] + redirect.new,
        refresh=True,
        json_ld=(),
    )


def page_url(path: str) -> str:
    """The URL an output path is served at: what the site checks key their pages by."""
    if path == "index.html":
        return "/"
    if path.endswith("/index.html"):
        return "/" + path.removesuffix("index.html")
    return "/" + path


def site_file_meta(dataset: Dataset, plan: Plan, site: Mapping[str, Any]) -> dict[str, PageMeta]:
    """The head of every HTML page publish_files renders besides the planned pages (search, 404,
    about, and an alias page per old URL), keyed by page_url."""
    extra = site_pages(dataset, plan, str(site["base_url"]))
    found = {page.url: page_meta(page) for page in extra}
    for redirect in alias_redirects(dataset, (*plan.pages, *extra)):
        found[page_url(redirect.old.strip("/") + "/index.html")] = alias_meta(redirect, site)
    return found


def site_meta(dataset: Dataset, plan: Plan, site: Mapping[str, Any]) -> dict[str, PageMeta]:
    """Every HTML page's head, keyed by page_url: the planned pages and site_file_meta's."""
    found = {page.url: page_meta(page) for page in plan.pages}
    found.update(site_file_meta(dataset, plan, site))
    return found


# A page the plan does not describe states nothing: the checks find it without a title or description.
NO_META = PageMeta(title="", description=None, noindex=False, canonical=None, refresh=False, json_ld=())


def with_meta(facts: PageFacts, meta: PageMeta | None) -> PageFacts:
    """A page's facts with its head taken from the plan."""
    meta = meta or NO_META
    return replace(facts, title=meta.title, description=meta.description, noindex=meta.noindex,
                   canonical=meta.canonical, refresh=meta.refresh, json_ld=list(meta.json_ld))
