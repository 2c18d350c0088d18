"""What the planner hands to rendering: a Page carries everything its template needs, already
computed and formatted, so rendering is string assembly and nothing else; a Plan is every page
of the site."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True, slots=True)  # 100k of them at 100k pages
class Page:
    url: str  # site path, '/' or '/a/b/'
    template: str  # templates/<template>.html and .md
    title: str
    description: str
    kind: str
    lastmod: str  # YYYY-MM-DD of the newest record the page depends on
    view: Mapping[str, Any] = field(hash=False, compare=False)
    breadcrumbs: tuple[tuple[str, str], ...] = ()
    indexable: bool = True
    inputs: tuple[str, ...] = ()  # record keys the page depends on, for incremental builds

    def output_path(self, suffix: str) -> str:
        base = self.url.strip("/")
        return f"{base}/index.{suffix}" if base else f"index.{suffix}"


class LazyView(Mapping[str, Any]):
    """A page's view, built from `inputs` by `build` when first read and dropped by release(): at
    100k pages the plan holds the routes, not every page's view at once.

    `build` must read nothing but `inputs` (and constants), so the inputs are the whole of what
    the view depends on: an incremental build hashes them to decide whether the page changed,
    without building the view."""

    __slots__ = ("_build", "inputs", "_data")

    def __init__(self, build, inputs: tuple):
        self._build, self.inputs, self._data = build, inputs, None

    def built(self) -> dict[str, Any]:
        """The view itself, built now if it was not yet."""
        if self._data is None:
            self._data = self._build(self.inputs)
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self.built()[key]

    def __iter__(self):
        return iter(self.built())

    def __len__(self) -> int:
        return len(self.built())

    def release(self) -> None:
        self._data = None


@dataclass(frozen=True)
class Plan:
    pages: tuple[Page, ...]
    # How many candidate pages each thin-page rule kept out of the index, by rule.
    thin_report: Mapping[str, int]
