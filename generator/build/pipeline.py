"""The stages in order, in memory: load, compute, plan (plan_site), then render and check through
render_stage.py, the path build_and_write (incremental.py) runs into a published site. build_site()
returns the files; write_site() writes them to a folder (tests and the calculator's parity check)."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator

import jinja2
from markupsafe import Markup

from generator.build.facts import HeldFacts
from generator.build.render_stage import RenderedEntry, RenderJob, check_rendered, collector_paused, render_pages, render_site_files, safe_relative
from generator.check.affiliates import affiliate_rules
from generator.check.page_lint import record_problems, sizing_problems
from generator.dates import record_dates
from generator.engine.pairs import Results, compute_results
from generator.errors import RenderError
from generator.kv.calculator import CATALOG_PATH, catalog_json
from generator.launch.commands import dataset_surfaces
from generator.load import load_dataset
from generator.plan.memo import PlanMemo
from generator.plan.pages import Plan
from generator.plan.planner import plan_pages
from generator.render.minify import published_static
from generator.render.site_files import asset_urls
from generator.render.templates import RenderedFile, template_environment
from generator.schema import Dataset
from generator.write.guard import check_out
from generator.write.manifest import Entry
from generator.write.staging import Staging, publish
from generator.write.state import build_lock, remove_leftovers


class Interrupts:
    """While a build writes, SIGINT and SIGTERM both become KeyboardInterrupt, so one cleanup path
    serves both. Inside the swap they wait: site/ is never caught between the old tree and the new."""

    def __init__(self) -> None:
        self.deferring = False
        self.pending: int | None = None

    def _handle(self, signum, frame):  # noqa: ARG002
        if self.deferring:
            self.pending = signum
            return
        raise KeyboardInterrupt(f"signal {signum}")

    @contextmanager
    def installed(self) -> Iterator[None]:
        previous = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread: signals go to the main thread anyway
                pass
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.pending is not None:
            raise KeyboardInterrupt(f"signal {self.pending} (after the new site was in place)")


def write_site(files: Iterable[RenderedFile], out: Path, before_swap: Callable[[Path], None] | None = None) -> int:
    """Write files as the whole site in out (absent, empty, or a site kvtriage wrote): staged, then
    swapped in. Returns the file count. before_swap runs on the complete staged tree (the search
    indexer), so a site is never published half-indexed."""
    out = check_out(None, out)
    count = 0
    with build_lock(out) as state:
        remove_leftovers(out, state)
        staging = Staging(state)
        interrupts = Interrupts()
        try:
            with interrupts.installed():
                for rendered in files:
                    staging.write(safe_relative(rendered.path), rendered.content)
                    count += 1
                staging.mark()
                if before_swap is not None:
                    before_swap(staging.dir)
                with interrupts.deferred():
                    publish(staging, out)
        finally:
            staging.discard()
    return count


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class SiteBuild:
    files: tuple[RenderedFile, ...]
    plan: Plan


def today_for_build() -> str:
    """Date for records the ledger has not seen; SOURCE_DATE_EPOCH pins it for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC).date().isoformat()
    return datetime.now(tz=UTC).date().isoformat()


def site_context(dataset: Dataset, assets: dict[str, str] | None = None, css: str = "") -> dict[str, object]:
    return {
        "title": dataset.site.title,
        "tagline": dataset.site.tagline,
        "language": dataset.site.language,
        "base_url": str(dataset.site.base_url).rstrip("/"),
        # The site's navigation names every engine with a page, in the records' order.
        "engines": [{"url": f"/engines/{engine.id}/", "name": engine.name} for engine in dataset.engines.values()],
        # static file name -> /static/name?v=<content hash>, so /static/* can be cached for a year
        "assets": assets or {},
        # The stylesheet, small enough to sit in every page's <head>: no request blocks the first paint.
        "css": Markup(css),
    }


def static_files(root: Path) -> list[RenderedFile]:
    """templates/static/ as published files (load.links_outside has refused links that leave the root)."""
    static = root / "templates" / "static"
    if not static.is_dir():
        return []
    return [
        RenderedFile(f"static/{path.relative_to(static).as_posix()}", published_static(path.name, path.read_bytes()))
        for path in sorted(static.rglob("*"))
        if path.is_file()
    ]


def forget_templates() -> None:
    """Drop cached Jinja environments, so a long-running `serve` sees edited templates."""
    template_environment.cache_clear()


@dataclass(frozen=True)
class SitePlan:
    """Everything a build knows before a page renders: records, numbers, pages, templates, site-wide files."""

    dataset: Dataset
    results: Results
    plan: Plan
    env: jinja2.Environment
    site: dict[str, object]
    static: tuple[RenderedFile, ...]
    templates_digest: str = ""  # of the template files, when the caller hashed them


def plan_site(root: Path, today: str | None = None, compute: Callable[[Dataset], Results] = compute_results,
              parse_cache: dict[str, bytes] | None = None, memo: PlanMemo | None = None, templates_digest: str = "") -> SitePlan:
    """Load, compute (through `compute`, which a writing build caches and runs in parallel) and plan;
    the records' problems fail here, the pages' as they render (render_stage.py).
    memo: pair pages an earlier plan in this process made (a resident builder's); templates_digest:
    the template files' digest, so templates compiled before they were edited are not used."""
    root = Path(root)
    dataset = load_dataset(root, parse_cache)
    unsizable = sizing_problems(dataset)
    if unsizable:
        raise RenderError(unsizable)
    results = compute(dataset)
    dates = record_dates(dataset, today or today_for_build())
    plan = plan_pages(dataset, results, dates, memo)
    problems = record_problems(dataset, results, root)
    if problems:
        raise RenderError(problems)
    env = template_environment(str((root / "templates").resolve()), templates_digest)
    static = (*static_files(root), RenderedFile(CATALOG_PATH, catalog_json(dataset)))  # the in-page calculator's data
    css = next((f.content.decode("utf-8") for f in static if f.path == "static/site.css"), "")
    site = site_context(dataset, asset_urls(static), css)
    return SitePlan(dataset=dataset, results=results, plan=plan, env=env, site=site, static=static, templates_digest=templates_digest)


def build_site(root: Path, today: str | None = None, progress: Callable[[int, int], None] | None = None) -> SiteBuild:
    """Everything a build writes, in memory: load, compute, plan, then the render and check stages the
    writing build runs (render_stage.py), here serial, every page rendered, the bytes kept.

    progress(done, total) is called after each page renders (the CLI's progress line)."""
    with collector_paused():
        sp = plan_site(root, today)
    rules = affiliate_rules(sp.dataset)
    store = HeldFacts()
    job = RenderJob(sp.plan.pages, sp.env, sp.site, dataset_surfaces(sp.dataset), rules, store.index,
                    todo=range(len(sp.plan.pages)))
    files: list[RenderedFile] = []
    entries: dict[str, Entry] = {}

    def take(i: int, key: str | None, rendered: list[RenderedEntry] | None) -> None:  # noqa: ARG001
        for path, digest, size, _, content in rendered or ():
            files.append(RenderedFile(path, content))
            entries[path] = Entry(digest, size, 0, None)

    render_pages(job, store, 1, 1, take, progress)  # serial, one page a chunk: a step is a loop turn here
    for path, rendered, digest in render_site_files(sp, rules, store):
        files.append(rendered)
        entries[path] = Entry(digest, len(rendered.content), 0, None)
    check_rendered(sp, rules, entries, store, None, 1)
    files.sort(key=lambda f: f.path)
    return SiteBuild(files=tuple(files), plan=sp.plan)


def build_summary(plan: Plan, file_count: int) -> str:
    pages = plan.pages
    indexable = sum(1 for p in pages if p.indexable)
    pairs = sum(1 for p in pages if p.kind == "pair" and p.indexable)
    lines = [f"{len(pages)} pages ({indexable} indexable, {pairs} indexable pair pages), {file_count} files"]
    for rule, count in plan.thin_report.items():
        lines.append(f"  thin-page guard: {count} candidate pages {'not generated' if rule.startswith('pair does not') else 'marked noindex'} ({rule})")
    return "\n".join(lines)


def check_site(root: Path) -> str:
    build = build_site(root)
    return "ok: " + build_summary(build.plan, len(build.files))
