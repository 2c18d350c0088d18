"""The publishing checks over every built page: a broken link or anchor, an affiliate link without
rel="sponsored noopener" or its disclosure, two indexable pages that share a title or a
description, and descriptions of the wrong length fail the build."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Collection, Iterable, Mapping, Sequence
from urllib.parse import unquote, urljoin, urlsplit

from generator.check.affiliates import AffiliateRule, _host, _squash, affiliate_rule
from generator.check.plan_meta import PageMeta, page_url, with_meta
from generator.errors import Issue, RenderError
from generator.render.page_links import PageFacts, page_links
from generator.render.site_files import NOT_FOUND_URL
from generator.render.templates import RenderedFile

DESCRIPTION_MIN = 50
DESCRIPTION_MAX = 160
# Written after the in-memory build (by Pagefind), so links into it cannot be checked here.
GENERATED_LATER = ("/pagefind/", "/pagefind-pairs/")


def check_html(files: Iterable[RenderedFile], base_url: str, affiliates: Mapping[str, AffiliateRule],
               meta: Mapping[str, PageMeta]) -> None:
    """Fail the build (RenderError naming the page) on what a search engine or a reader would trip on.

    meta: each page's head by page_url, from the plan (plan_meta.site_meta); links, ids and
    sections are recorded from the rendered files (render/page_links.py)."""
    files = list(files)
    pages = {}
    for f in files:
        if f.path.endswith(".html"):
            url = page_url(f.path)
            pages[url] = with_meta(page_links(f.content.decode("utf-8"), url), meta.get(url))
    check_pages({f.path for f in files}, pages, base_url, affiliates)


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


def check_pages(paths: set[str] | frozenset[str], pages: Mapping[str, PageFacts], base_url: str, affiliates: Mapping[str, AffiliateRule],
                scope: Collection[str] | None = None) -> None:
    """check_html over facts already gathered (page_links per HTML file with its head from the plan,
    keyed by page_url), so a build can gather them where it renders pages (in parallel, or only the
    changed ones) and check the whole site once.

    scope: check only these pages' own facts and links, and their titles and descriptions against
    every page's; for an incremental build whose other pages passed before and link to nothing
    that went away (build/facts.py, check_scope)."""
    issues = page_problems(paths, pages, base_url, affiliates, scope)
    if issues:
        raise RenderError(issues)


def _target_file(path: str, paths: Collection[str]) -> tuple[str, str]:
    """(file, page URL) a link's path reaches: a folder's index.html, or the file itself."""
    if path.endswith("/"):
        return path.lstrip("/") + "index.html", path
    if path.lstrip("/") in paths:
        return path.lstrip("/"), path
    if path.lstrip("/") + "/index.html" in paths:
        return path.lstrip("/") + "/index.html", path + "/"
    return path.lstrip("/"), path


class _LinkTargets:
    """Where the links of one site's pages point: (internal page or file path, fragment), or
    (None, '') for an external link."""

    def __init__(self, own_host: str) -> None:
        self.own_host = own_host
        self.resolved: dict[str, tuple[str | None, str]] = {}

    def target_of(self, url: str, raw: str) -> tuple[str | None, str]:
        if raw.startswith("#"):  # this page: most links of a big site, and nothing to look up
            return unquote(url), raw[1:]
        # A link from the root ("/gpus/x/", "//host/") or with a scheme resolves alike on every page:
        # work it out once per href, not once per page. Links relative to their page are not kept:
        # at 100k pages the memo would hold one entry per link of the site.
        if raw.startswith("/") or ":" in raw.split("/", 1)[0]:
            found = self.resolved.get(raw)
            if found is None:
                if len(self.resolved) >= _MEMO_SIZE:
                    self.resolved.clear()
                found = self.resolved[raw] = self.resolve(url, raw)
            return found
        return self.resolve(url, raw)

    def resolve(self, url: str, raw: str) -> tuple[str | None, str]:
        found = _plain_root_link(raw)
        if found is not None:
            return found
        parts = urlsplit(raw)
        if parts.scheme in ("mailto", "tel", "javascript", "data"):
            return None, ""
        if parts.scheme or parts.netloc:
            if _host(raw) != self.own_host:
                return None, ""
            return unquote(parts.path or "/"), parts.fragment
        resolved = urljoin(url, parts.path) if parts.path else url
        return unquote(resolved), parts.fragment


def page_problems(paths: set[str] | frozenset[str], pages: Mapping[str, PageFacts], base_url: str,
                  affiliates: Mapping[str, AffiliateRule], scope: Collection[str] | None = None, links: bool = True,
                  meta: bool = True) -> list[Issue]:
    """What check_pages raises, as a list: the link problems of the pages in scope (sorted by URL),
    then the meta problems. links/meta False leaves that part out, so the link checks of a big site
    can be split across processes by scope and the rest run once."""
    own_host = _host(base_url)
    issues: list[Issue] = []

    def problem(url: str, line: int, what: str, message: str, fix: str = "") -> None:
        issues.append(Issue(f"site{url}", line, 0, what, message, fix))

    target_of = _LinkTargets(own_host).target_of
    hosts: dict[str, tuple[str, str]] = {}  # href -> (host, scheme)
    verified: set[str] = set()  # page-independent hrefs that point at something the build makes
    for url in sorted(pages if scope is None else scope) if links else ():
        facts = pages[url]
        for dup in facts.duplicate_ids:
            problem(url, 1, "id", f"id {dup!r} appears twice on the page")
        for href, line, rel, sections, tag in facts.links:  # a Link, or the plain tuple a build packs
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
                missing = {"sponsored", "noopener"} - rel
                if missing:
                    problem(url, line, "rel", f"affiliate link to {host} lacks rel {' and '.join(sorted(missing))}",
                            'Make it with the sponsored_links macro (rel="sponsored noopener")')
                texts = [_squash(" ".join(facts.sections[i])) for i in sections]
                if not any(d in text for d in rule.disclosures for text in texts):
                    problem(url, line, "disclosure", f"affiliate link to {host} has no disclosure in its <section>",
                            "Put the program's disclosure sentence in the same <section> as the link")
                continue
            # A link from the root or with a scheme means the same on every page: once it checked
            # out, its next occurrences (the navigation on every page) need no second look.
            if href in verified:
                continue
            path, fragment = target_of(url, href)
            if path is None or path.startswith(GENERATED_LATER):
                continue
            target_file, target_url = _target_file(path, paths)
            if target_file not in paths:
                problem(url, line, "link", f"<{tag}> points at {href}, which the build does not produce")
                continue
            if fragment and target_file.endswith(".html") and fragment not in pages[target_url].ids:
                problem(url, line, "link", f"{href}: no element with id {fragment!r} on {target_url}")
            elif href.startswith("/") or ":" in href.split("/", 1)[0]:
                if len(verified) >= _MEMO_SIZE:
                    verified.clear()
                verified.add(href)
    if meta:
        _check_meta(pages, base_url, problem, scope)
    return issues


def _check_meta(pages: Mapping[str, PageFacts], base_url: str, problem, scope: Collection[str] | None = None) -> None:
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


def disclosure_sentences(affiliates: Mapping[str, AffiliateRule]) -> tuple[str, ...]:
    """Every program's disclosure sentences, as the affiliate check looks for them."""
    return tuple(d for rule in affiliates.values() for d in rule.disclosures)


def disclosure_words(affiliates: Mapping[str, AffiliateRule]) -> frozenset[str]:
    """Each disclosure's longest word. It holds no whitespace, so a disclosure is in a squashed text
    only if its word is in the text as it is: a section without any is left empty unsquashed."""
    return frozenset(max(d.split(), key=len, default="") for d in disclosure_sentences(affiliates))


def slim_facts(facts: PageFacts, affiliates: Mapping[str, AffiliateRule]) -> PageFacts:
    """The same facts for check_pages, without the section text no check reads: a section keeps its
    (squashed) text only when it holds a disclosure, which is all the affiliate check looks for.
    A build keeps these per page between runs, and at 100k pages the text would not fit in memory."""
    return replace(facts, sections=slim_sections(facts.sections, disclosure_sentences(affiliates), disclosure_words(affiliates)))


def slim_sections(sections: Iterable[list[str]], disclosures: Sequence[str], words: Collection[str]) -> list[list[str]]:
    """slim_facts' sections: each section's text squashed when it holds one of disclosures, else none.
    words (disclosure_words of the same rules) leave out at once a section whose texts hold none."""
    slim = []
    for texts in sections:
        if "" not in words and not any(word in part for part in texts for word in words):
            slim.append([])
            continue
        text = _squash(" ".join(texts))
        slim.append([text] if any(d in text for d in disclosures) else [])
    return slim
