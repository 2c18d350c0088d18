"""Runs the stages into a site folder: load, compute, plan, render and check, then write/ stages the
whole new tree (unchanged files hard-linked from the published one) and swaps it in by one rename.
Pages render in worker processes.

A build that fails at any stage, or is interrupted or killed, leaves the published site byte for
byte as it was. build_site() is the same pipeline in memory.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import signal
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import jinja2
from markupsafe import Markup

import generator.parallel as parallel
import generator.value_pickle as value_pickle
from generator.check.page_lint import advice_problems, record_problems, rendered_problems
from generator.dates import content_sha, record_dates
from generator.engine.pairs import PairNumbers, PairTask, Results, compute_results, pair_tasks, shared
from generator.errors import BuildError, Issue, RenderError
from generator.kv.calculator import CATALOG_PATH, catalog_json
from generator.launch.commands import dataset_surfaces, verify_commands
from generator.load import load_dataset
from generator.plan.pages import Page, Plan, PlanMemo, plan_pages
from generator.publish import (
    affiliate_rules,
    asset_urls,
    check_html,
    check_pages,
    page_problems,
    page_url,
    pagefind_executable,
    publish_files,
    read_page,
    search_stub,
    site_pages,
    slim_facts,
)
from generator.render.minify import published_static
from generator.render.templates import RenderedFile, render_page, template_environment
from generator.schema import Dataset
from generator.write.fingerprint import ValueDigest, code_digest, fingerprint_files, input_fingerprint, library_versions, sha
from generator.write.guard import MARKER_NAME, check_out, files_on_disk
from generator.write.manifest import Entry, Manifest, Published, read_published, stat_entry, up_to_date, write_manifest
from generator.write.search_index import index_search
from generator.write.staging import Staging, publish
from generator.write.state import build_lock, discard_caches, load_cache, remove_leftovers, replace_file, save_cache, state_dir


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


class _Interrupts:
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
        interrupts = _Interrupts()
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


def plan_site(root: Path, today: str | None = None, compute: Callable[[Dataset], Results] = compute_results,
              verify: bool = True, parse_cache: dict[str, bytes] | None = None, memo: PlanMemo | None = None) -> SitePlan:
    """Load, compute (through `compute`, which a writing build caches and runs in parallel), plan and
    check every command block (unless verify is False: a writing build checks them as pages render).
    memo: pair pages an earlier plan in this process made (a resident builder's)."""
    root = Path(root)
    dataset = load_dataset(root, parse_cache)
    results = compute(dataset)
    dates = record_dates(dataset, today or today_for_build())
    plan = plan_pages(dataset, results, dates, memo)
    problems = record_problems(dataset, results, root)
    if verify:
        problems += verify_commands(
            ((page.url, (block for section in page.view.get("commands", ()) for block in section["blocks"])) for page in plan.pages),
            dataset_surfaces(dataset),
        )
        problems += [issue for page in plan.pages if page.kind in ("error", "pair") for issue in advice_problems(page.url, page.view)]
    if problems:
        raise RenderError(problems)
    env = template_environment(str((root / "templates").resolve()))
    static = (*static_files(root), RenderedFile(CATALOG_PATH, catalog_json(dataset)))  # the in-page calculator's data
    css = next((f.content.decode("utf-8") for f in static if f.path == "static/site.css"), "")
    site = site_context(dataset, asset_urls(static), css)
    return SitePlan(dataset=dataset, results=results, plan=plan, env=env, site=site, static=static)


def site_files(sp: SitePlan) -> list[RenderedFile]:
    """Every file besides the planned pages: static assets and what publishing derives from the whole plan."""
    return [*sp.static, *publish_files(sp.dataset, sp.plan, sp.env, sp.site)]


def build_site(root: Path, today: str | None = None, progress: Callable[[int, int], None] | None = None) -> SiteBuild:
    """Everything a build writes, in memory: load, compute, plan, render.

    progress(done, total) is called after each page renders (the CLI's progress line)."""
    with _collector_paused():
        sp = plan_site(root, today)
    files: list[RenderedFile] = []
    for done, page in enumerate(sp.plan.pages, 1):
        files.extend(render_page(sp.env, page, sp.site))
        if progress is not None:
            progress(done, len(sp.plan.pages))
    files.extend(site_files(sp))
    files.sort(key=lambda f: f.path)
    problems = rendered_problems(files)
    if problems:
        raise RenderError(problems)
    check_html(files, sp.site["base_url"], affiliate_rules(sp.dataset))
    return SiteBuild(files=tuple(files), plan=sp.plan)


def _summary(plan: Plan, file_count: int) -> str:
    pages = plan.pages
    indexable = sum(1 for p in pages if p.indexable)
    pairs = sum(1 for p in pages if p.kind == "pair" and p.indexable)
    lines = [f"{len(pages)} pages ({indexable} indexable, {pairs} indexable pair pages), {file_count} files"]
    for rule, count in plan.thin_report.items():
        lines.append(f"  thin-page guard: {count} candidate pages {'not generated' if rule.startswith('pair does not') else 'marked noindex'} ({rule})")
    return "\n".join(lines)


def check_site(root: Path) -> str:
    build = build_site(root)
    return "ok: " + _summary(build.plan, len(build.files))


# --------------------------------------------------------------------------- writing: parallel and incremental
#
# `kvtriage build` does not hold the site in memory. Pages render in chunks in forked worker
# processes, which write straight into a staging directory and send back only hashes and the
# facts the HTML check needs. A manifest in the site remembers, for every output, its hash and
# the key of what it was rendered from (the page and its view, the templates, the code), so the
# next build renders only pages whose key changed and writes only files whose bytes changed.
# Engine results are cached next to the site by the hash of the records they were computed from.

_RENDER_CHUNK = 64  # pages per task: small enough to stream, large enough to amortize the round trip


def _compute_chunk(work: tuple[list[PairTask], list[int]], span: range) -> list[tuple[int, PairNumbers]]:
    tasks, indexes = work
    pool: dict = {}  # equal strings, flags and cells of the chunk's pairs become one object each
    return [(indexes[j], shared(tasks[indexes[j]].run(), pool)) for j in span]


_RESULTS_FORMAT = "results-2"
_RESULTS_CHUNK = 4096  # pairs per pickle: bounds the pickler's memo (a single dump of 150k pairs took 400 MB)


def _save_results(path: Path, items: list[tuple[str, PairNumbers]]) -> None:
    def write(handle) -> None:
        value_pickle.dump((_RESULTS_FORMAT, [key for key, _ in items]), handle)
        for start in range(0, len(items), _RESULTS_CHUNK):
            value_pickle.dump([numbers for _, numbers in items[start : start + _RESULTS_CHUNK]], handle)

    replace_file(path, write)


def _load_results(path: Path) -> dict[str, PairNumbers]:
    try:
        with open(path, "rb") as handle:
            kind, keys = value_pickle.load(handle)  # type: ignore[misc]
            if kind != _RESULTS_FORMAT:
                return {}
            values: list[PairNumbers] = []
            while len(values) < len(keys):
                values.extend(value_pickle.load(handle))  # type: ignore[arg-type]
        if not all(isinstance(value, PairNumbers) for value in values):
            return {}
        return dict(zip(keys, values))
    except value_pickle.CACHE_ERRORS:
        return {}


# GPU fields no engine reads (links, sources, prose): editing one keeps the GPU's cached numbers.
_GPU_WORDS = frozenset({"buy_query", "rent", "aliases", "notes", "source", "memory_source", "bandwidth_source",
                        "compute_capability_source"})


def cached_results(dataset: Dataset, cache: Path | None, jobs: int,
                   memory: dict[str, PairNumbers] | None = None) -> tuple[Results, int, dict[tuple[str, str, str], str]]:
    """compute_results(dataset), reusing cached numbers whose GPU, model, variant, settings and
    engine code are unchanged and computing the rest across processes. Returns (results, how many
    pairs were computed, each pair's key: the hash of everything its numbers were computed from).

    The cache is the file `cache`, or `memory` when given (a resident builder's: it is left holding
    this build's numbers, and unchanged numbers come back as the very same objects)."""
    tasks = pair_tasks(dataset)
    # compute_pair reads the engine package and the schema records, nothing else.
    package = Path(__file__).resolve().parent
    engine = code_digest(package / "engine", package / "schema.py")
    gpu_sha = {key: sha(gpu.model_dump_json(exclude=_GPU_WORDS).encode()) for key, gpu in dataset.gpus.items()}
    model_sha = {key: content_sha(model) for key, model in dataset.models.items()}
    keys = [sha(f"{engine}|{gpu_sha[t.key[0]]}|{model_sha[t.key[1]]}|{t.key[2]}|{t.settings!r}".encode()) for t in tasks]
    known = memory if memory is not None else _load_results(cache) if cache is not None else {}
    missing = [i for i, key in enumerate(keys) if key not in known]
    computed: dict[int, PairNumbers] = {}
    if missing:
        count = parallel.job_count(jobs)
        size = max(8, min(2048, len(missing) // (count * 8) or 1))
        with parallel.workers((tasks, missing), jobs if len(missing) >= 2 * count else 1) as pool:
            for part in pool.map(_compute_chunk, parallel.chunks(len(missing), size)):
                computed.update(part)
    results = {}
    for i, (task, key) in enumerate(zip(tasks, keys)):
        results[task.key] = computed[i] if i in computed else known[key]
    if memory is not None:
        kept = {key: results[task.key] for task, key in zip(tasks, keys)}
        memory.clear()
        memory.update(kept)
    elif cache is not None and (missing or len(known) != len(keys)):
        _save_results(cache, [(key, results[task.key]) for task, key in zip(tasks, keys)])
    return results, len(missing), {task.key: key for task, key in zip(tasks, keys)}


@dataclass(frozen=True)
class _RenderJob:
    """What render workers share (read through fork, never pickled)."""

    pages: tuple[Page, ...]
    env: jinja2.Environment
    site: Mapping[str, object]
    render_key: str
    old: Mapping[str, Entry]
    damaged: frozenset[str]
    facts: Mapping[str, bytes]  # HTML content hash -> packed facts read from it in an earlier build
    staging: Staging
    rules: Mapping[str, object]  # affiliate rules, for slim_facts
    digest: ValueDigest  # one per build; each worker's copy remembers the hashes of the records it saw
    surfaces: object  # the CLI surfaces every command block is checked against
    known_keys: Mapping[int, tuple[Page, str]]  # id(page) -> (page, key): pages a resident builder keyed before
    todo: Sequence[int] = ()  # indexes of the pages the chunks visit


def _unchanged(job: _RenderJob, key: str | None, paths: tuple[str, ...]) -> bool:
    if key is None:
        return False
    for path in paths:
        entry = job.old.get(path)
        if entry is None or entry.key != key or path in job.damaged:
            return False
        if path.endswith(".html") and entry.sha not in job.facts:
            return False
    return True


def _page_key(job: _RenderJob, page: Page) -> str | None:
    """Hash of everything the templates see of a page: its fields and its view, plus templates, code,
    CLI surfaces and site context. A view built on demand is hashed by the inputs it would be built
    from, so an unchanged page is known without building its view."""
    fields = [(f.name, getattr(page, f.name)) for f in _PAGE_FIELDS]
    inputs = getattr(page.view, "inputs", None)
    return job.digest(job.render_key, fields, inputs if inputs is not None else dict(page.view))


_PAGE_FIELDS = tuple(f for f in dataclasses.fields(Page) if f.name != "view")


def _render_chunk(job: _RenderJob, span: range) -> tuple[list[tuple[int, str | None, list[tuple[str, str, int, bool]] | None, dict]], list[Issue]]:
    """Render the pages in span whose key changed, checking their commands, and write the files whose
    bytes changed to staging. Returns, per page, (index, key, [(path, sha, size, written)] or None
    when unchanged, {sha: packed facts} of new HTML), and the command problems found. An unchanged
    page's commands were checked by the build that rendered it, against the same surfaces (they are
    part of every key)."""
    out, problems = [], []
    for j in span:
        i = job.todo[j]
        page = job.pages[i]
        known = job.known_keys.get(id(page))
        key = known[1] if known is not None and known[0] is page else _page_key(job, page)
        if _unchanged(job, key, (page.output_path("html"), page.output_path("md"))):
            out.append((i, key, None, {}))
        else:
            blocks = [block for section in page.view.get("commands", ()) for block in section["blocks"]]
            problems.extend(verify_commands([(page.url, blocks)], job.surfaces))
            if page.kind in ("error", "pair"):
                problems.extend(advice_problems(page.url, page.view))
            entries, facts = [], {}
            for rendered in render_page(job.env, page, job.site):
                problems.extend(rendered_problems((rendered,)))
                path = safe_relative(rendered.path)
                digest = sha(rendered.content)
                old = job.old.get(path)
                written = old is None or old.sha != digest or path in job.damaged
                if written:
                    job.staging.write(path, rendered.content)
                if path.endswith(".html") and digest not in job.facts:
                    facts[digest] = _pack_facts(rendered.content, job.rules)
                entries.append((path, digest, len(rendered.content), written))
            out.append((i, key, entries, facts))
        release = getattr(page.view, "release", None)  # a view built on demand is dropped once used
        if release is not None:
            release()
    return out, problems


_SUMMARY = ("title", "description", "noindex", "refresh")  # what the site-wide title/description check reads


def _pack_facts(html: bytes, rules: Mapping[str, object]) -> tuple[tuple, bytes]:
    """What the HTML check needs from a page: the few fields every check of the whole site reads,
    and the rest slimmed and compressed (about a kilobyte a page), so a build can keep every
    page's facts (and the cache can hold them between builds) at 100k pages."""
    facts = slim_facts(read_page(html.decode("utf-8")), rules)
    summary = tuple(getattr(facts, name) for name in _SUMMARY)
    return summary, zlib.compress(value_pickle.dumps(facts), 1)


# check_pages reads a page's facts while it checks that page, then the few pages its fragment links
# point at: a handful kept unpacked serve all of it (a 100k-page check unpacks no more pages with 16
# than with 4096). More only hold memory: an error page's facts unpack to tens of MB, and 4096
# pages' took the check from 780 to 1,150 MiB of RSS at 100k pages.
_UNPACKED_FACTS = 16


class CacheDamaged(Exception):
    """A cache beside the site could not be read back midway through a build: build again without it."""


class _FactsStore:
    """Every page's facts for the HTML check: the summary in memory, the rest (about a kilobyte a
    page) in a file beside the site, read back when the check asks; a few kept unpacked. At 100k
    pages the facts would otherwise be the largest thing a build holds.

    The data file only grows during a build; the index saved at the end says which blobs are
    live. When most of the file is dead it is rewritten under a new generation number, and the
    index names its generation, so a build stopped at any point leaves a consistent pair."""

    def __init__(self, folder: Path, version: str, reuse: bool):
        self.folder, self.version = folder, version
        folder.mkdir(parents=True, exist_ok=True)
        stored = load_cache(folder / "facts.pickle") if reuse else {}
        self.generation = int(stored.get("generation", 0)) if stored.get("version") == version else 0
        path = self._data(self.generation)
        self.index: dict[str, tuple[tuple, int, int]] = stored.get("index", {}) if stored.get("version") == version and path.is_file() else {}
        self.saved = set(self.index)
        if not self.index:  # starting over: no other generation is live
            for stale in folder.glob("facts-*.bin"):
                stale.unlink(missing_ok=True)
        self.handle = open(path, "r+b" if self.index else "w+b")
        self.size = self.handle.seek(0, os.SEEK_END)
        self.unpacked: dict[str, object] = {}

    def _data(self, generation: int) -> Path:
        return self.folder / f"facts-{generation}.bin"

    def __contains__(self, digest: str) -> bool:
        return digest in self.index

    def add(self, digest: str, summary: tuple, blob: bytes) -> None:
        if digest not in self.index:
            self.handle.write(blob)
            self.index[digest] = (summary, self.size, len(blob))
            self.size += len(blob)

    def summary(self, digest: str) -> tuple:
        return self.index[digest][0]

    def get(self, digest: str) -> object:
        found = self.unpacked.get(digest)
        if found is None:
            _, offset, length = self.index[digest]
            self.handle.flush()
            try:
                found = value_pickle.loads(zlib.decompress(os.pread(self.handle.fileno(), length, offset)))
            except (*value_pickle.CACHE_ERRORS, zlib.error) as error:
                raise CacheDamaged(self.folder) from error
            if len(self.unpacked) >= _UNPACKED_FACTS:
                self.unpacked.clear()
            self.unpacked[digest] = found
        return found

    def save(self, live: set[str]) -> None:
        """Keep the facts of these pages for the next build."""
        index = {digest: self.index[digest] for digest in live if digest in self.index}
        self.handle.flush()
        generation = self.generation
        if sum(length for _, _, length in index.values()) * 2 < self.size:
            generation += 1
            with open(self._data(generation), "wb") as fresh:
                moved, at = {}, 0
                for digest, (summary, offset, length) in index.items():
                    fresh.write(os.pread(self.handle.fileno(), length, offset))
                    moved[digest] = (summary, at, length)
                    at += length
            index = moved
        if generation != self.generation or index.keys() != self.saved or len(index) != len(self.index):
            save_cache(self.folder / "facts.pickle", {"version": self.version, "generation": generation, "index": index})
        if generation != self.generation:
            self.close()
            self._data(self.generation).unlink(missing_ok=True)
            self.generation = generation

    def close(self) -> None:
        if not self.handle.closed:
            self.handle.close()


class _Facts:
    """One page's facts for check_pages: the summary fields every check reads held as attributes, the
    rest unpacked when first read, so the check walks the whole site without every page's facts
    unpacked at once."""

    __slots__ = ("digest", "blobs", *_SUMMARY)

    def __init__(self, digest: str, blobs: _FactsStore):
        self.digest, self.blobs = digest, blobs
        for name, value in zip(_SUMMARY, blobs.summary(digest)):
            setattr(self, name, value)

    def __getattr__(self, name: str) -> object:  # only for what is not a slot
        return getattr(self.blobs.get(self.digest), name)


_PARALLEL_CHECK_PAGES = 4096  # below this, forking workers costs more than the check


def _check_built(paths: set[str], facts: Mapping[str, _Facts], base_url: str, rules: Mapping[str, object],
                 scope: set[str] | None, jobs: int, store: _FactsStore) -> None:
    """check_pages over the built site. A whole-site check of a big site checks links in chunks of
    pages across processes (serial, it was the longest step of a cold build after the parallel
    render), then titles and descriptions once; the problems come out in check_pages' order."""
    count = parallel.job_count(jobs)
    if scope is not None or count < 2 or len(facts) < _PARALLEL_CHECK_PAGES:
        check_pages(paths, facts, base_url, rules, scope=scope)
        return
    store.handle.flush()  # workers read the facts file: bytes still buffered would be written twice
    urls = sorted(facts)
    problems: list[Issue] = []
    with parallel.workers((paths, facts, base_url, rules, urls), jobs) as pool:
        for found in pool.map(_link_problems, parallel.chunks(len(urls), -(-len(urls) // (count * 4)))):
            problems.extend(found)
    problems.extend(page_problems(paths, facts, base_url, rules, links=False))
    if problems:
        raise RenderError(problems)


def _link_problems(work: tuple, span: range) -> list[Issue]:
    paths, facts, base_url, rules, urls = work
    return page_problems(paths, facts, base_url, rules, scope=urls[span.start : span.stop], meta=False)


def _check_scope(old: Mapping[str, Entry], entries: Mapping[str, Entry], changed: list[str], deleted: list[str],
                 blobs: _FactsStore) -> set[str] | None:
    """The pages an incremental build must check, or None for the whole site.

    The last build checked every page. An unchanged page can only break if something it links to
    went away: a file (any deletion), or an id on a page that changed. Without either, checking
    the pages whose HTML changed (their own facts and links, their titles against every page's)
    checks the site."""
    if deleted:
        return None
    scope = set()
    for path in changed:
        if not path.endswith(".html"):
            continue
        previous = old.get(path)
        if previous is not None:
            try:
                before = blobs.get(previous.sha).ids  # type: ignore[attr-defined]
            except KeyError:  # the old page's facts are no longer kept
                return None
            if not before <= blobs.get(entries[path].sha).ids:  # type: ignore[attr-defined]
                return None
        scope.add(page_url(path))
    return scope


def _render_key(sp: SitePlan, root: Path) -> str:
    """What every page's key includes besides the page itself: templates, code, libraries, the CLI
    surfaces commands are checked against, the site record and context."""
    return sha(
        "|".join(
            (
                fingerprint_files(Path(root), ["templates"]),
                code_digest(Path(__file__).resolve().parent),
                library_versions(),
                json.dumps(sorted(sp.dataset.surfaces.items()), default=str),
                sp.dataset.site.model_dump_json(),
                json.dumps(sp.site, sort_keys=True, default=str),
            )
        ).encode()
    )


@dataclass
class WriteReport:
    pages: int = 0
    rendered: int = 0
    written: int = 0
    deleted: int = 0
    files: int = 0
    computed: int = 0
    fresh: bool = False

    def line(self, out: Path) -> str:
        how = "fresh tree" if self.fresh else "incremental"
        return (f"wrote {self.written} files to {out} ({how}: rendered {self.rendered} of {self.pages} pages, "
                f"{self.deleted} deleted, {self.computed} pairs computed)")


@dataclass(eq=False)
class Resident:
    """What a long-running builder (`kvtriage serve`) keeps in memory between builds of one site into
    a folder only it writes: parses, engine numbers, planned pair pages, page keys and the manifest it
    last wrote. A build then redoes only what an edit reaches, without reading caches back from disk.

    Everything here is a pure function of the inputs it was made from, except `published`, which is
    replaced only once a build's output is in place: a failed build leaves the folder, and so this
    record of it, as they were."""

    parsed: dict[str, bytes] = field(default_factory=dict)
    numbers: dict[str, PairNumbers] = field(default_factory=dict)  # by the hash of what they were computed from
    plans: PlanMemo = field(default_factory=PlanMemo)
    render_key: str = ""
    page_keys: dict[int, tuple[Page, str]] = field(default_factory=dict)  # id(page) -> (page, key) under render_key
    published: Published | None = None


def _published_now(out: Path, resident: Resident | None) -> Published:
    """out as it is now: as the resident builder last wrote it (only it writes there), else as read from disk."""
    if resident is not None and resident.published is not None and Path(out).is_dir():
        return resident.published
    return read_published(out)


def write_incremental(root: Path, out: Path, jobs: int = 0, progress: Callable[[int, int], None] | None = None,
                      pagefind: str | None = None, inputs: str = "", today: str | None = None,
                      published: Published | None = None, resident: Resident | None = None) -> tuple[SitePlan, WriteReport]:
    """Build root into out, rendering and writing only what changed since the manifest in out
    (published: out as the caller already read it; resident: what this process kept from its last
    build into out, used instead of the caches on disk).

    A first build (no manifest we can trust) writes a fresh tree and swaps it in whole; later builds
    apply their changes as one transaction. Either way a failure leaves out as it was."""
    root, out = Path(root), Path(out).resolve()
    if published is None:
        published = _published_now(out, resident)
    manifest, damaged = published.manifest, published.damaged
    old = dict(manifest.files) if manifest is not None else {}
    state = state_dir(out)
    report = WriteReport(fresh=manifest is None)

    numbers_keys: dict[tuple[str, str, str], str] = {}

    def compute(dataset: Dataset) -> Results:
        results, report.computed, keys = cached_results(
            dataset, None if resident is not None else state / "results.pickle", jobs, resident.numbers if resident is not None else None)
        numbers_keys.update(keys)
        return results

    # Parses are kept by file bytes, under this code's version (the parser is part of it).
    parse_version = code_digest(Path(__file__).resolve().parent)
    if resident is not None:
        parse_cache = _UsedEntries(resident.parsed)
    else:
        stored = load_cache(state / "parsed.pickle")
        parse_cache = _UsedEntries(stored.get("files", {}) if stored.get("version") == parse_version else {})
    with _collector_paused():
        sp = plan_site(root, today, compute=compute, verify=False, parse_cache=parse_cache,
                       memo=resident.plans if resident is not None else None)
        # The dataset, results and plan live until the end: the collector need not scan them again
        # (it was half of a 10k-page rebuild), and forked workers then share their pages untouched.
        gc.freeze()
    if resident is not None:
        resident.parsed = {k: parse_cache[k] for k in parse_cache.used}
    elif parse_cache.added or parse_cache.used != parse_cache.keys():  # new parses, or parses of files that changed or went
        save_cache(state / "parsed.pickle", {"version": parse_version, "files": {k: parse_cache[k] for k in parse_cache.used}})
    try:
        return _write_planned(root, out, sp, jobs, progress, pagefind, inputs, manifest, old, damaged, state, report,
                              numbers_keys, resident)
    finally:
        gc.unfreeze()


class _UsedEntries(dict):
    """A cache that notes which entries a build read or wrote, so the saved copy keeps only those."""

    def __init__(self, entries: Mapping[str, bytes]):
        super().__init__(entries)
        self.used: set[str] = set()
        self.added = False

    def get(self, key, default=None):
        if key in self:
            self.used.add(key)
        return super().get(key, default)

    def __setitem__(self, key, value) -> None:
        self.used.add(key)
        self.added = True
        super().__setitem__(key, value)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Planning allocates millions of objects that all live on; collecting while it grows only re-scans them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_planned(root: Path, out: Path, sp: SitePlan, jobs: int, progress: Callable[[int, int], None] | None,
                   pagefind: str | None, inputs: str, manifest: Manifest | None, old: dict[str, Entry],
                   damaged: frozenset[str], state: Path, report: WriteReport,
                   numbers_keys: Mapping[tuple[str, str, str], str], resident: Resident | None = None) -> tuple[SitePlan, WriteReport]:
    pages = sp.plan.pages
    report.pages = len(pages)
    rules = affiliate_rules(sp.dataset)
    # Facts are read by this code under these affiliate rules; another version of either starts over.
    facts_version = sha(f"{code_digest(Path(__file__).resolve().parent)}|{sorted(rules.items())!r}".encode())
    store = _FactsStore(state, facts_version, reuse=manifest is not None)
    staging = Staging(state)
    interrupts = _Interrupts()
    try:
        with interrupts.installed():
            digest = ValueDigest()
            for pair, key in numbers_keys.items():  # numbers stand in by what they were computed from: no need to hash them
                digest.remember(sp.results[pair], f"numbers:{key}")
            render_key = _render_key(sp, root)
            known_keys = resident.page_keys if resident is not None and resident.render_key == render_key else {}
            job = _RenderJob(pages, sp.env, sp.site, render_key, old, damaged, store.index, staging, rules, digest,
                             dataset_surfaces(sp.dataset), known_keys)
            page_keys: list[str | None] = [None] * len(pages)
            entries: dict[str, Entry] = {}
            changed: list[str] = []
            facts: dict[str, _Facts] = {}  # page URL -> facts, for the whole-site HTML check
            todo: Sequence[int] = range(len(pages))
            if known_keys:  # a resident builder: pages it keyed before and that are unchanged need no worker
                todo = []
                for i, page in enumerate(pages):
                    known = known_keys.get(id(page))
                    if known is not None and known[0] is page and _unchanged(job, known[1], (page.output_path("html"), page.output_path("md"))):
                        page_keys[i] = known[1]
                        for suffix in ("html", "md"):
                            entries[page.output_path(suffix)] = old[page.output_path(suffix)]
                    else:
                        todo.append(i)
            job = dataclasses.replace(job, todo=todo)
            done = len(pages) - len(todo)
            size = max(1, min(_RENDER_CHUNK, len(todo) // (parallel.job_count(jobs) * 4)))
            problems: list[Issue] = []
            # A few pages render faster here than workers start (a resident builder's usual edit).
            parallel_from = _RENDER_CHUNK if known_keys else 2
            with parallel.workers(job, jobs if len(todo) >= parallel_from else 1) as pool:
                for part, found in pool.map(_render_chunk, parallel.chunks(len(todo), size)):
                    problems.extend(found)
                    for i, key, rendered, page_facts in part:
                        page_keys[i] = key
                        for fact_digest, (summary, blob) in page_facts.items():
                            store.add(fact_digest, summary, blob)
                        page = pages[i]
                        if rendered is None:
                            for suffix in ("html", "md"):
                                entries[page.output_path(suffix)] = old[page.output_path(suffix)]
                            continue
                        report.rendered += 1
                        for path, digest, length, written in rendered:
                            if written:
                                entries[path] = Entry(digest, length, 0, key)
                                changed.append(path)
                            else:  # same bytes under a new key: the file stays as it is
                                previous = old[path]
                                entries[path] = Entry(previous.sha, previous.size, previous.mtime_ns, key)
                    done += len(part)
                    if progress is not None:
                        progress(done, len(pages))
            if problems:
                raise RenderError(problems)
            for rendered in site_files(sp):
                path = safe_relative(rendered.path)
                digest = sha(rendered.content)
                if path.endswith(".html") and digest not in store:
                    store.add(digest, *_pack_facts(rendered.content, rules))
                previous = old.get(path)
                if previous is not None and previous.sha == digest and path not in damaged:
                    entries[path] = previous
                else:
                    staging.write(path, rendered.content)
                    entries[path] = Entry(digest, len(rendered.content), 0, None)
                    changed.append(path)
            for path, entry in entries.items():
                if path.endswith(".html"):
                    facts[page_url(path)] = _Facts(entry.sha, store)
            deleted = sorted(set(old) - set(entries))
            scope = _check_scope(old, entries, changed, deleted, store) if manifest is not None else None
            with _collector_paused():  # unpacking facts allocates much and frees little
                try:
                    _check_built(set(entries), facts, str(sp.site["base_url"]), rules, scope, jobs, store)
                except RenderError:
                    if scope is None:
                        raise
                    _check_built(set(entries), facts, str(sp.site["base_url"]), rules, None, jobs, store)  # report as a cold build would
                    raise
            report.written, report.deleted, report.files = len(changed), len(deleted), len(entries)
            html_changed = any(p.endswith(".html") for p in (*changed, *deleted))
            with interrupts.deferred():
                indexed = [*pages, *site_pages(sp.dataset, sp.plan, str(sp.site["base_url"]))]
                written = _finish(staging, out, entries, changed, inputs, job.render_key, pagefind, html_changed, indexed)
    except BaseException:
        staging.discard()
        store.close()
        raise
    staging.discard()
    store.save({e.sha for p, e in entries.items() if p.endswith(".html")})
    store.close()
    if resident is not None:
        resident.published = Published(written, frozenset())
        resident.render_key = render_key
        resident.page_keys = {id(page): (page, key) for page, key in zip(pages, page_keys) if key is not None}
    return sp, report


def _finish(staging: Staging, out: Path, entries: dict[str, Entry], changed: list[str], inputs: str, render_key: str,
            pagefind: str | None, html_changed: bool, pages: Sequence[Page]) -> Manifest:
    """Complete the staged tree (unchanged files linked from out, the search index, the marker),
    publish it and record what it holds."""
    placed = set(changed)
    for path in entries:
        if path not in placed:
            staging.link(path, out / path)
    index = out / "pagefind"
    if pagefind is not None:
        if html_changed or not index.is_dir() or index.is_symlink():
            index_search(staging.dir, pagefind, _search_sources(pages))
        else:
            staging.link_tree("pagefind", index)
    staging.mark(out)
    final = {path: stat_entry(Path(staging.path_of(path)), e.sha, e.key) if path in placed else e for path, e in entries.items()}
    manifest = Manifest(inputs, final, render_key)
    publish(staging, out)
    write_manifest(out, manifest)
    return manifest


def _search_sources(pages: Sequence[Page]) -> Iterator[tuple[str, bytes | None]]:
    """What the search index reads: indexable pages whole, pair pages as their stubs."""
    for page in pages:
        if not page.indexable:
            continue
        if page.kind == "pair":
            yield page.output_path("html"), search_stub(page)
        elif page.view.get("pagefind", True):
            yield page.output_path("html"), None


def build_and_write(root: Path, out: Path, jobs: int = 0, progress: Callable[[int, int], None] | None = None, search: bool | None = None,
                    today: str | None = None, published: Published | None = None, resident: Resident | None = None,
                    force: bool = False, wait_note: Callable[[str], None] | None = None) -> str:
    """Build into out, indexing for search (by default whenever Pagefind is installed): nothing when the
    inputs are as the manifest recorded them, else only the pages and files that changed. today dates
    records the ledger has not seen (default: SOURCE_DATE_EPOCH, else the current date); published
    is out as the caller already read it; resident is what a long-running builder kept from its last
    build into out (see Resident).

    out must be a folder the build may replace (write.guard; force: one kvtriage did not write). Builds
    of one folder take turns (wait_note hears when this one waits)."""
    root = Path(root)
    out = check_out(root, out, force=force)
    pagefind = pagefind_executable() if search is not False else None
    if search and pagefind is None:
        raise BuildError([Issue("site", 1, 0, "search", "Pagefind is not installed", "pip install 'pagefind[bin]'")])
    inputs = input_fingerprint(root, search=pagefind is not None, today=today)
    note = "search index: Pagefind" if pagefind else f"search index: skipped ({'--no-search' if search is False else 'Pagefind not installed'})"
    with build_lock(out, wait_note) as state:
        remove_leftovers(out, state)
        if published is None or not _owned_state(published, resident):
            published = _published_now(out, resident)
        if up_to_date(out, inputs, search=pagefind is not None, published=published):
            return f"nothing changed: {out} is up to date\n{note}"
        if resident is None:
            published = _with_disk_check(out, published, force)
        try:
            sp, report = write_incremental(root, out, jobs=jobs, progress=progress, pagefind=pagefind, inputs=inputs, today=today,
                                           published=published, resident=resident)
        except CacheDamaged:
            discard_caches(state)
            sp, report = write_incremental(root, out, jobs=jobs, progress=progress, pagefind=pagefind, inputs=inputs, today=today,
                                           published=Published(None, frozenset()), resident=resident)
    return report.line(out) + "\n" + _summary(sp.plan, report.files) + "\n" + note


def _owned_state(published: Published, resident: Resident | None) -> bool:
    """A caller's reading of out is only trusted when it was made under the lock, which a resident builder's is."""
    return resident is not None and resident.published is published


def _with_disk_check(out: Path, published: Published, force: bool) -> Published:
    """published, with every recorded output that is not a plain file under out any more (a link, or
    under a linked folder) counted as damaged. Files under out that no build recorded are not the
    build's to replace: refused unless force."""
    manifest = published.manifest
    if manifest is None or not out.is_dir():
        return published
    files, links = files_on_disk(out)
    foreign = sorted(path for path in (files | links) - manifest.files.keys() if not _build_owned(path))
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise BuildError([Issue(str(out), 0, 0, "--out", f"holds files no kvtriage build wrote ({shown}); a build replaces the folder whole",
                                "move them out of the site folder, or pass --force to drop them")])
    missing = {path for path in manifest.files if path not in files}
    return Published(manifest, published.damaged | missing) if missing - published.damaged else published


def _build_owned(path: str) -> bool:
    return path == MARKER_NAME or path.startswith("pagefind/")
