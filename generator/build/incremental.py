"""Runs the stages into a site folder: load, compute, plan, render and check, then write/ stages the
new tree (see write/staging.py: a few changed files settle the spare tree, many complete the
stage) and swaps it in by one rename.
Pages render in worker processes; only pages whose key changed render again.

A build that fails at any stage, or is interrupted or killed, leaves the published site byte for
byte as it was. build_site() (pipeline.py) is the same pipeline in memory."""

from __future__ import annotations

import dataclasses
import gc
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import generator.parallel as parallel
from generator.build.facts import CacheDamaged, FactsStore, check_scope
from generator.build.pipeline import Interrupts, SitePlan, build_summary, plan_site
from generator.build.render_stage import RenderedEntry, RenderJob, check_rendered, collector_paused, outputs_unchanged, page_key, render_pages, render_site_files
from generator.build.resident import Resident, published_now
from generator.build.results_cache import cached_results
from generator.build.search_stage import EarlyBundle, record_search, stage_search, start_stubs, start_wholes
from generator.build.unit_keys import UnitKeys
from generator.check.affiliates import affiliate_rules
from generator.engine.pairs import Results
from generator.errors import BuildError, Issue
from generator.launch.commands import dataset_surfaces
from generator.plan.memo import PlanMemo
from generator.plan.pages import Page
from generator.render.site_files import pagefind_executable, site_pages
from generator.schema import Dataset
from generator.write.fingerprint import ValueDigest, code_digest, fingerprint_files, input_fingerprint, library_versions, sha
from generator.write.guard import build_owned, check_out, files_on_disk
from generator.write.manifest import Entry, Manifest, Published, TreeStamps, stat_entry, up_to_date, write_manifest
from generator.write.staging import Staging, folders_of, publish
from generator.write.state import build_lock, discard_caches, load_cache, remove_leftovers, save_cache, state_dir
from generator.write.tree_record import stamps

# --------------------------------------------------------------------------- writing: parallel and incremental
#
# `kvtriage build` does not hold the site in memory. Pages render in chunks in forked worker
# processes, which write straight into a staging directory and send back only hashes and the
# facts the HTML check needs. A manifest in the site remembers, for every output, its hash and
# the key of what it was rendered from (the page and its view, the templates, the code), so the
# next build renders only pages whose key changed and writes only files whose bytes changed.
# Engine results are cached next to the site by the hash of the records they were computed from.

_RENDER_CHUNK = 64  # pages per task: small enough to stream, large enough to amortize the round trip
_PARALLEL_FROM = 64  # pages to render below which forking workers costs more than it saves


def _render_key(sp: SitePlan, root: Path) -> str:
    """What every page's key includes besides the page itself: templates, code, libraries, the CLI
    surfaces commands are checked against, the site record and context."""
    return sha(
        "|".join(
            (
                sp.templates_digest or fingerprint_files(Path(root), ["templates"]),
                code_digest(Path(__file__).resolve().parents[1]),
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
        published = published_now(out, resident)
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
    parse_version = code_digest(Path(__file__).resolve().parents[1])
    if resident is not None:
        parse_cache = _UsedEntries(resident.parsed)
        memo = resident.plans
    else:
        stored = load_cache(state / "parsed.pickle")
        parse_cache = _UsedEntries(stored.get("files", {}) if stored.get("version") == parse_version else {})
        stored = load_cache(state / "fingerprints.pickle")
        fingerprints = _UsedEntries(stored.get("pairs", {}) if stored.get("version") == parse_version else {})
        memo = PlanMemo(fingerprints, numbers_keys)
    with collector_paused():
        sp = plan_site(root, today, compute=compute, parse_cache=parse_cache, memo=memo,
                       templates_digest=fingerprint_files(root, ["templates"]))
        # The dataset, results and plan live until the end: the collector need not scan them again
        # (it was half of a 10k-page rebuild), and forked workers then share their pages untouched.
        gc.freeze()
    if resident is not None:
        resident.parsed = {k: parse_cache[k] for k in parse_cache.used}
    elif parse_cache.added or parse_cache.used != parse_cache.keys():  # new parses, or parses of files that changed or went
        save_cache(state / "parsed.pickle", {"version": parse_version, "files": {k: parse_cache[k] for k in parse_cache.used}})
    if resident is None and (fingerprints.added or fingerprints.used != fingerprints.keys()):
        save_cache(state / "fingerprints.pickle", {"version": parse_version, "pairs": {k: fingerprints[k] for k in fingerprints.used}})
    try:
        return _write_planned(root, out, sp, jobs, progress, pagefind, inputs, manifest, old, damaged, state, report,
                              numbers_keys, resident, memo if resident is None else None)
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


def _known_keys(render_key: str, resident: Resident | None, unit_keys: UnitKeys | None) -> Mapping[int, tuple[Page, str]]:
    """The pages whose key is known without keying them: a resident builder's unchanged pages, or in
    a command-line build the pair pages of errors planned from what an earlier build planned them from."""
    if resident is not None:
        return resident.page_keys if resident.render_key == render_key else {}
    return unit_keys.known() if unit_keys is not None else {}


def _pages_to_render(job: RenderJob, page_keys: list[str | None], entries: dict[str, Entry]) -> Sequence[int]:
    """The indexes of the pages to render. Over a published site every page is keyed here, in this
    process (a resident builder's unchanged pages by the key it kept): forking workers to key pages
    that then render nothing cost more than the keying. Unchanged pages get their keys and entries
    here; the workers render the rest under these keys. A first build leaves the keying to them."""
    pages = job.pages
    if not job.old:
        return range(len(pages))
    todo = []
    for i, page in enumerate(pages):
        key = page_keys[i] = page_key(job, page)
        paths = (page.output_path("html"), page.output_path("md"))
        if outputs_unchanged(job, key, paths):
            for path in paths:
                entries[path] = job.old[path]
        else:
            todo.append(i)
    return todo


def _stage_site_files(sp: SitePlan, job: RenderJob, staging: Staging, store: FactsStore, entries: dict[str, Entry], changed: list[str]) -> None:
    """The site-level files (sitemap, robots, search page...): staged when they changed."""
    for path, rendered, digest in render_site_files(sp, job.rules, store):
        previous = job.old.get(path)
        if previous is not None and previous.sha == digest and path not in job.damaged:
            entries[path] = previous
        else:
            staging.write(path, rendered.content)
            entries[path] = Entry(digest, len(rendered.content), 0, None)
            changed.append(path)


def _write_planned(root: Path, out: Path, sp: SitePlan, jobs: int, progress: Callable[[int, int], None] | None,
                   pagefind: str | None, inputs: str, manifest: Manifest | None, old: dict[str, Entry],
                   damaged: frozenset[str], state: Path, report: WriteReport,
                   numbers_keys: Mapping[tuple[str, str, str], str], resident: Resident | None = None,
                   memo: PlanMemo | None = None) -> tuple[SitePlan, WriteReport]:
    pages = sp.plan.pages
    report.pages = len(pages)
    rules = affiliate_rules(sp.dataset)
    # Facts are read by this code under these affiliate rules; another version of either starts over.
    facts_version = sha(f"{code_digest(Path(__file__).resolve().parents[1])}|{sorted(rules.items())!r}".encode())
    store = FactsStore(state, facts_version, reuse=manifest is not None)
    staging = Staging(state)
    interrupts = Interrupts()
    early: list[EarlyBundle] = []  # search bundles started before the tree is complete
    try:
        with interrupts.installed():
            digest = ValueDigest()
            for pair, key in numbers_keys.items():  # numbers stand in by what they were computed from: no need to hash them
                digest.remember(sp.results[pair], f"numbers:{key}")
            render_key = _render_key(sp, root)
            unit_keys = UnitKeys(state, sp.dataset, memo, numbers_keys, render_key) if memo is not None else None
            job = RenderJob(pages, sp.env, sp.site, dataset_surfaces(sp.dataset), rules, store.index, staging, render_key,
                            old, damaged, digest, _known_keys(render_key, resident, unit_keys if manifest is not None else None))
            page_keys: list[str | None] = [None] * len(pages)
            entries: dict[str, Entry] = {}
            changed: list[str] = []
            todo = _pages_to_render(job, page_keys, entries)
            job = dataclasses.replace(job, todo=todo, keys=page_keys if job.old else ())

            def take(i: int, key: str | None, rendered: list[RenderedEntry] | None) -> None:
                page_keys[i] = key
                if rendered is None:
                    for suffix in ("html", "md"):
                        entries[pages[i].output_path(suffix)] = old[pages[i].output_path(suffix)]
                    return
                report.rendered += 1
                for path, file_sha, length, written, _ in rendered:
                    if written:
                        entries[path] = Entry(file_sha, length, 0, key)
                        changed.append(path)
                    else:  # same bytes under a new key: the file stays as it is
                        previous = old[path]
                        entries[path] = Entry(previous.sha, previous.size, previous.mtime_ns, key)

            size = max(1, min(_RENDER_CHUNK, len(todo) // (parallel.job_count(jobs) * 4)))

            def start_search() -> None:  # the pairs' bundle, made while the pages render
                stubs = start_stubs(staging, out, pagefind, pages)
                if stubs is not None:
                    early.append(stubs)

            # A few pages render faster here than workers start (an edit's usual count).
            render_pages(job, store, jobs if len(todo) >= _PARALLEL_FROM else 1, size, take, progress, start_search)
            _stage_site_files(sp, job, staging, store, entries, changed)
            deleted = sorted(set(old) - set(entries))
            html_changed = any(p.endswith(".html") for p in (*changed, *deleted))
            indexed = [*pages, *site_pages(sp.dataset, sp.plan, str(sp.site["base_url"]))]
            if html_changed:  # the whole pages' bundle, made while the site is checked and the tree completed
                wholes = start_wholes(staging, out, pagefind, indexed, entries, set(changed))
                if wholes is not None:
                    early.append(wholes)
            check_rendered(sp, rules, entries, store, check_scope(old, entries, changed, deleted, store) if manifest is not None else None, jobs)
            report.written, report.deleted, report.files = len(changed), len(deleted), len(entries)
            with interrupts.deferred():
                written = _finish(staging, out, entries, changed, inputs, job.render_key, pagefind, html_changed, indexed, manifest, early)
    except BaseException:
        for bundle in early:
            bundle.close()
        staging.discard()
        store.close()
        raise
    for bundle in early:
        bundle.close()
    staging.discard()
    store.save({e.sha for p, e in entries.items() if p.endswith(".html")})
    store.close()
    _keep_keys(pages, page_keys, render_key, written, resident, unit_keys)
    return sp, report


def _keep_keys(pages: Sequence[Page], page_keys: Sequence[str | None], render_key: str, written: Manifest,
               resident: Resident | None, unit_keys: UnitKeys | None) -> None:
    """Once the site is published, what the next build takes of this one's page keys."""
    if unit_keys is not None:
        unit_keys.save(pages, page_keys)
    if resident is not None:
        resident.published = Published(written, frozenset())
        resident.render_key = render_key
        resident.page_keys = {id(page): (page, key) for page, key in zip(pages, page_keys) if key is not None}


def _finish(staging: Staging, out: Path, entries: dict[str, Entry], changed: list[str], inputs: str, render_key: str,
            pagefind: str | None, html_changed: bool, pages: Sequence[Page], before: Manifest | None,
            early: Sequence[EarlyBundle] = ()) -> Manifest:
    """Complete the staged tree (unchanged files linked from out, the search index, the marker),
    publish it and record what it holds. before: the manifest of out as this build found it."""
    placed = set(changed)
    replacing = out.is_dir()
    folders = folders_of(entries)  # the new tree's, the same whichever tree is published
    # The spare pays when few files changed; a tree mostly rendered anew is published as staged.
    if len(placed) * 2 < len(entries) and staging.take_spare():
        spare = before.spare if before is not None else None
        staging.settle(entries, placed, out, (spare.folders, spare.files(before.files), spare.differing) if spare is not None else None,
                       folders)
    else:
        for path in entries:
            if path not in placed:
                staging.link(path, out / path)
    digests = stage_search(staging, out, entries, pagefind, html_changed, pages, early)
    staging.mark(out)
    final = {path: stat_entry(Path(staging.path_of(path)), e.sha, e.key) if path in placed else e for path, e in entries.items()}
    publish(staging, out)
    # What the next builds need not list again: this tree's folders, and the replaced tree's (now the spare).
    tree = TreeStamps(stamps(out, folders))
    spare = None
    if replacing and before is not None and before.tree is not None:
        spare = TreeStamps(before.tree.folders, frozenset(final.keys() - before.files.keys()), frozenset(before.files.keys() - final.keys()),
                           frozenset(path for path in placed if path in before.files))
    manifest = Manifest(inputs, final, render_key, tree, spare)
    write_manifest(out, manifest)
    record_search(out, digests)
    return manifest


def build_and_write(root: Path, out: Path, jobs: int = 0, progress: Callable[[int, int], None] | None = None, search: bool | None = None,
                    today: str | None = None, resident: Resident | None = None, force: bool = False,
                    wait_note: Callable[[str], None] | None = None) -> str:
    """Build into out, indexing for search (by default whenever Pagefind is installed): nothing when the
    inputs are as the manifest recorded them, else only the pages and files that changed. today dates
    records the ledger has not seen (default: SOURCE_DATE_EPOCH, else the current date); resident is
    what a long-running builder kept from its last build into out (see Resident).

    out must be a folder the build may replace (write.guard; force: one kvtriage did not write). Builds
    of one folder take turns (wait_note hears when this one waits)."""
    root = Path(root)
    out = check_out(root, out, force=force)
    with build_lock(out, wait_note):
        return build_locked(root, out, jobs, progress, search, today, resident=resident, force=force)


def build_locked(root: Path, out: Path, jobs: int = 0, progress: Callable[[int, int], None] | None = None, search: bool | None = None,
                 today: str | None = None, published: Published | None = None, resident: Resident | None = None,
                 force: bool = False) -> str:
    """build_and_write for a caller that checked out (write.guard.check_out) and holds its lock
    (write.state.build_lock). published is out as the caller read it under that lock: no other build
    can have written out since, so it is not read again."""
    root, out = Path(root), Path(out)
    pagefind = pagefind_executable() if search is not False else None
    if search and pagefind is None:
        raise BuildError([Issue("site", 1, 0, "search", "Pagefind is not installed", "pip install 'pagefind[bin]'")])
    inputs = input_fingerprint(root, search=pagefind is not None, today=today)
    note = "search index: Pagefind" if pagefind else f"search index: skipped ({'--no-search' if search is False else 'Pagefind not installed'})"
    state = state_dir(out)
    remove_leftovers(out, state)  # nothing under out: published stays as read
    if published is None:
        published = published_now(out, resident)
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
    return report.line(out) + "\n" + build_summary(sp.plan, report.files) + "\n" + note


def _with_disk_check(out: Path, published: Published, force: bool) -> Published:
    """published, with every recorded output that is not a plain file under out any more (a link, or
    under a linked folder) counted as damaged. Files under out that no build recorded are not the
    build's to replace: refused unless force."""
    manifest = published.manifest
    if manifest is None or not out.is_dir():
        return published
    files, links = files_on_disk(out, *((manifest.tree.folders, manifest.files) if manifest.tree is not None else ()))
    foreign = sorted(path for path in (files | links) - manifest.files.keys() if not build_owned(path))
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise BuildError([Issue(str(out), 0, 0, "--out", f"holds files no kvtriage build wrote ({shown}); a build replaces the folder whole",
                                "move them out of the site folder, or pass --force to drop them")])
    missing = {path for path in manifest.files if path not in files}
    return Published(manifest, published.damaged | missing) if missing - published.damaged else published
