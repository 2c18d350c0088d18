"""Every URL the plan gives out, one function per page kind, and the check that no two pages claim
one URL."""

from __future__ import annotations

from typing import Iterable, Mapping

from generator.errors import Issue, RenderError
from generator.plan.pages import Page


def error_url(error_id: str) -> str:
    return f"/oom/{error_id}/"


def pair_url(error_id: str, gpu_id: str, model_id: str, variant_id: str) -> str:
    return f"/oom/{error_id}/{gpu_id}/{model_id}-{variant_id}/"


def check_unique_urls(pages: Iterable[Page], origins: Mapping[str, str] | None = None) -> None:
    """Two pages with one URL would overwrite each other; name the files whose records made them."""
    origins = origins or {}

    def files(page: Page, other: Page) -> list[str]:
        # The records that differ between the two pages are the ones that collided.
        keys = [k for k in page.inputs if k not in other.inputs] or list(page.inputs)
        found = [f"{k} in {origins[k]}" for k in keys if k in origins]
        return found or [f"the {page.kind} page"]

    seen: dict[str, Page] = {}
    issues = []
    for page in pages:
        if page.url in seen:
            first = seen[page.url]
            mine, theirs = files(page, first), files(first, page)
            path = next((origins[k] for k in page.inputs if k in origins and k not in first.inputs), "content")
            issues.append(
                Issue(path, 1, 0, "url", f"{page.url} is claimed by both a {first.kind} page ({', '.join(theirs)}) and a {page.kind} page ({', '.join(mine)})", "Rename one of the slugs")
            )
        else:
            seen[page.url] = page
    if issues:
        raise RenderError(issues)
