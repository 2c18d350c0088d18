"""The render and check stages, one path for every build: pages render in chunks (in worker
processes when the build asks for them), each page's commands, advice and text are checked as it
renders, its HTML's facts are packed for the site-wide check, then the site-level files, then the
HTML check over every page's facts. The in-memory build (pipeline.build_site) keeps the bytes; the
writing build (incremental.py) stages them and skips pages whose key is unchanged."""

from __future__ import annotations

import dataclasses
import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import jinja2

import generator.parallel as parallel
from generator.build.facts import FactsStore, HeldFacts, PageFacts, check_built, pack_facts
from generator.check.page_lint import advice_problems, rendered_problems
from generator.check.plan_meta import page_meta, page_url, site_file_meta
from generator.errors import BuildError, Issue, RenderError
from generator.launch.commands import verify_commands
from generator.plan.pages import Page
from generator.render.site_files import publish_files
from generator.render.templates import RenderedFile, render_page
from generator.write.fingerprint import ValueDigest, sha
from generator.write.manifest import Entry
from generator.write.staging import Staging

if TYPE_CHECKING:
    from generator.build.pipeline import SitePlan


def safe_relative(path: str) -> str:
    """Refuse any output path that could land outside the site directory."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or "\x00" in path
        or "%" in path
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise BuildError([Issue("site", 1, 0, "path", f"refusing to write {path!r} outside the site directory")])
    return path


@contextmanager
def collector_paused() -> Iterator[None]:
    """Planning allocates millions of objects that all live on; collecting while it grows only re-scans them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class RenderJob:
    """What render workers share (read through fork, never pickled). Without staging, a page's bytes
    come back to the caller; without a digest, pages are not keyed and every page renders."""

    pages: tuple[Page, ...]
    env: jinja2.Environment
    site: Mapping[str, object]
    surfaces: object  # the CLI surfaces every command block is checked against
    rules: Mapping[str, object]  # affiliate rules, for slim_facts
    facts: Mapping[str, object]  # HTML content hash -> facts already packed (this build's or an earlier one's)
    staging: Staging | None = None
    render_key: str = ""
    old: Mapping[str, Entry] = field(default_factory=dict)
    damaged: frozenset[str] = frozenset()
    digest: ValueDigest | None = None  # one per build; each worker's copy remembers the hashes of the records it saw
    known_keys: Mapping[int, tuple[Page, str]] = field(default_factory=dict)  # id(page) -> (page, key): keyed before
    todo: Sequence[int] = ()  # indexes of the pages the chunks visit
    keys: Sequence[str | None] = ()  # each page's key, when the caller keyed them (else each chunk keys its pages)


def outputs_unchanged(job: RenderJob, key: str | None, paths: tuple[str, ...]) -> bool:
    if key is None:
        return False
    for path in paths:
        entry = job.old.get(path)
        if entry is None or entry.key != key or path in job.damaged:
            return False
        if path.endswith(".html") and entry.sha not in job.facts:
            return False
    return True


def page_key(job: RenderJob, page: Page) -> str | None:
    """Hash of everything the templates see of a page: its fields and its view, plus templates, code,
    CLI surfaces and site context. A view built on demand is hashed by the inputs it would be built
    from, so an unchanged page is known without building its view."""
    if job.digest is None:
        return None
    known = job.known_keys.get(id(page))
    if known is not None and known[0] is page:
        return known[1]
    fields = [(f.name, getattr(page, f.name)) for f in _PAGE_FIELDS]
    inputs = getattr(page.view, "inputs", None)
    return job.digest(job.render_key, fields, _shared_lists_hashed(job.digest, inputs) if inputs is not None else dict(page.view))


def _shared_lists_hashed(digest: ValueDigest, inputs: tuple) -> tuple:
    """A view's inputs with each list its first part holds (the planner shares them among many pages:
    a GPU's links, the GPUs a build fits on) standing in by its hash, taken once per list and build
    instead of once per page: they were most of what keying every page of a site cost."""
    first = inputs[0] if inputs else None
    names = getattr(first, "_fields", None)
    if names is None:
        return inputs
    hashed = {}
    for name, value in zip(names, first):
        if type(value) is list:
            known = digest.fixed.get(id(value))
            if known is None or known[0] is not value:
                stand_in = digest(value)
                if stand_in is None:
                    return inputs
                known = digest.fixed[id(value)] = (value, f"list:{stand_in}")
            hashed[name] = known[1]
    return (first._replace(**hashed), *inputs[1:]) if hashed else inputs


_PAGE_FIELDS = tuple(f for f in dataclasses.fields(Page) if f.name != "view")

# Per rendered file: (path, sha, size, written, the bytes when the job has no staging, else None).
RenderedEntry = tuple[str, str, int, bool, bytes | None]


def _render_one(job: RenderJob, page: Page, facts: dict[str, tuple[tuple, bytes]], problems: list[Issue]) -> list[RenderedEntry]:
    """Check a page's commands and advice, render it, lint its text and pack its HTML's facts; write
    the files whose bytes changed to staging, or keep the bytes when there is none."""
    blocks = [block for section in page.view.get("commands", ()) for block in section["blocks"]]
    problems.extend(verify_commands([(page.url, blocks)], job.surfaces))
    if page.kind in ("error", "pair"):
        problems.extend(advice_problems(page.url, page.view))
    entries: list[RenderedEntry] = []
    for rendered in render_page(job.env, page, job.site):
        problems.extend(rendered_problems((rendered,)))
        path = safe_relative(rendered.path)
        digest = sha(rendered.content)
        old = job.old.get(path)
        written = old is None or old.sha != digest or path in job.damaged
        if written and job.staging is not None:
            job.staging.write(path, rendered.content)
        if path.endswith(".html") and digest not in job.facts:
            facts[digest] = pack_facts(rendered.content, job.rules, page_meta(page), page.url)
        entries.append((path, digest, len(rendered.content), written, rendered.content if job.staging is None else None))
    return entries


def render_chunk(job: RenderJob, span: range) -> tuple[list[tuple[int, str | None, list[RenderedEntry] | None, dict]], list[Issue]]:
    """Render the pages job.todo[span] names whose key changed. Returns, per page, (index, key,
    its files or None when unchanged, {sha: packed facts} of new HTML), and the problems found. An
    unchanged page's commands were checked by the build that rendered it, against the same surfaces
    (they are part of every key)."""
    out, problems = [], []
    for j in span:
        i = job.todo[j]
        page = job.pages[i]
        key = job.keys[i] if job.keys else page_key(job, page)
        if outputs_unchanged(job, key, (page.output_path("html"), page.output_path("md"))):
            out.append((i, key, None, {}))
        else:
            facts: dict[str, tuple[tuple, bytes]] = {}
            out.append((i, key, _render_one(job, page, facts, problems), facts))
        release = getattr(page.view, "release", None)  # a view built on demand is dropped once used
        if release is not None:
            release()
    return out, problems


def render_pages(job: RenderJob, store: FactsStore | HeldFacts, jobs: int, size: int,
                 take: Callable[[int, str | None, list[RenderedEntry] | None], None],
                 progress: Callable[[int, int], None] | None = None, started: Callable[[], None] | None = None) -> None:
    """Render job.todo's pages in chunks of size, in `jobs` workers, storing their facts and handing
    each page to take(index, key, files or None) in page order. Every page's problems are raised
    together once all have rendered, so a failing build reports the site, not its first chunk.
    started() runs once the workers have their tasks: what it does overlaps the rendering."""
    problems: list[Issue] = []
    done = len(job.pages) - len(job.todo)
    if parallel.job_count(jobs) > 1 and job.todo:
        _compile_templates(job)
    with parallel.workers(job, jobs) as pool:
        parts = pool.map(render_chunk, parallel.chunks(len(job.todo), size))
        if started is not None:
            started()
        for part, found in parts:
            problems.extend(found)
            for i, key, rendered, page_facts in part:
                for fact_digest, (summary, blob) in page_facts.items():
                    store.add(fact_digest, summary, blob)
                take(i, key, rendered)
            done += len(part)
            if progress is not None:
                progress(done, len(job.pages))
    if problems:
        raise RenderError(problems)


def _compile_templates(job: RenderJob) -> None:
    """Compile the templates the pages to render use here, before the workers fork: they then share
    them, and a resident builder (`kvtriage serve`) keeps them for its next builds, where each worker
    of each build compiled its own."""
    wanted = {job.pages[i].template for i in job.todo} | {"base"}
    for name in job.env.list_templates(extensions=("html", "md")):
        if name.startswith("partials/") or name.rpartition(".")[0] in wanted:
            try:
                job.env.get_template(name)
            except jinja2.TemplateError:  # reported where the page renders, with the page named
                continue


def site_files(sp: SitePlan) -> list[RenderedFile]:
    """Every file besides the planned pages: static assets and what publishing derives from the whole plan."""
    return [*sp.static, *publish_files(sp.dataset, sp.plan, sp.env, sp.site)]


def render_site_files(sp: SitePlan, rules: Mapping[str, object], store: FactsStore | HeldFacts) -> list[tuple[str, RenderedFile, str]]:
    """The site-level files (sitemap, robots, search page...) as (path, file, sha), their text linted
    and their HTML's facts stored."""
    files = site_files(sp)
    problems = rendered_problems(files)
    if problems:
        raise RenderError(problems)
    meta = site_file_meta(sp.dataset, sp.plan, sp.site)
    out = []
    for rendered in files:
        path = safe_relative(rendered.path)
        digest = sha(rendered.content)
        if path.endswith(".html") and digest not in store:
            store.add(digest, *pack_facts(rendered.content, rules, meta.get(page_url(path)), page_url(path)))
        out.append((path, rendered, digest))
    return out


def check_rendered(sp: SitePlan, rules: Mapping[str, object], entries: Mapping[str, Entry], store: FactsStore | HeldFacts,
                   scope: set[str] | None, jobs: int) -> None:
    """The whole-site HTML check over the pages in scope (None: every page), from their stored facts."""
    facts = {page_url(path): PageFacts(entry.sha, store) for path, entry in entries.items() if path.endswith(".html")}
    with collector_paused():  # unpacking facts allocates much and frees little
        try:
            check_built(set(entries), facts, str(sp.site["base_url"]), rules, scope, jobs, store)
        except RenderError:
            if scope is None:
                raise
            check_built(set(entries), facts, str(sp.site["base_url"]), rules, None, jobs, store)  # report as a cold build would
            raise
