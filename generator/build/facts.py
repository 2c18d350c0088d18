"""What the site-wide checks reuse between incremental builds: per page its facts (the head from the
plan; links, anchors and sections recorded from its HTML), stored beside the site by the HTML's
hash, and which pages a change reaches."""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Mapping

import generator.parallel as parallel
import generator.value_pickle as value_pickle
from generator.check.plan_meta import NO_META, PageMeta
from generator.check.site_checks import check_pages, disclosure_sentences, disclosure_words, page_problems, page_url, slim_sections
from generator.errors import Issue, RenderError
from generator.render.page_links import PageFacts as LinkFacts
from generator.render.page_links import record, section_texts
from generator.write.manifest import Entry
from generator.write.state import load_cache, save_cache

_SUMMARY = ("title", "description", "noindex", "refresh")  # what the site-wide title/description check reads


def pack_facts(html: bytes, rules: Mapping[str, object], meta: PageMeta | None, url: str = "") -> tuple[tuple, bytes]:
    """What the HTML check needs from a page (its head from the plan, meta; its links, ids and
    sections from the HTML): the few fields every check of the whole site reads, and the rest
    slimmed (slim_facts) and compressed (about a kilobyte a page), so a build can keep every page's
    facts (and the cache can hold them between builds) at 100k pages. The facts are stored by the
    HTML's hash, which covers the head: the templates print it.

    The blob holds plain tuples (_unpack makes the facts of them again): pickling a class per link
    took longer than recording the links."""
    text = html.decode("utf-8")
    ids, duplicate_ids, links, regions = record(text, url)
    words, disclosures = _disclosures(rules)
    sections = slim_sections(section_texts(text, regions, words), disclosures, words)
    meta = meta or NO_META
    summary = tuple(getattr(meta, name) for name in _SUMMARY)
    fields = (ids, duplicate_ids, links, *summary, meta.canonical, list(meta.json_ld), sections)
    return summary, zlib.compress(value_pickle.dumps(fields), 1)


_DISCLOSURES: dict[int, tuple[Mapping[str, object], frozenset[str], tuple[str, ...]]] = {}


def _disclosures(rules: Mapping[str, object]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The affiliate rules' disclosure words and sentences, worked out once per rules."""
    known = _DISCLOSURES.get(id(rules))
    if known is None or known[0] is not rules:
        if len(_DISCLOSURES) >= 8:
            _DISCLOSURES.clear()
        known = _DISCLOSURES[id(rules)] = (rules, disclosure_words(rules), disclosure_sentences(rules))  # type: ignore[arg-type]
    return known[1], known[2]


# check_pages reads a page's facts while it checks that page, then the few pages its fragment links
# point at: a handful kept unpacked serve all of it (a 100k-page check unpacks no more pages with 16
# than with 4096). More only hold memory: an error page's facts unpack to tens of MB, and 4096
# pages' took the check from 780 to 1,150 MiB of RSS at 100k pages.
_UNPACKED_FACTS = 16


class CacheDamaged(Exception):
    """A cache beside the site could not be read back midway through a build: build again without it."""


class FactsStore:
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
                found = _unpack(os.pread(self.handle.fileno(), length, offset))
            except (*value_pickle.CACHE_ERRORS, zlib.error) as error:
                raise CacheDamaged(self.folder) from error
            _keep_unpacked(self.unpacked, digest, found)
        return found

    def flush(self) -> None:
        """Workers read the facts file: bytes still buffered would be written twice."""
        self.handle.flush()

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


def _unpack(blob: bytes) -> LinkFacts:
    """The facts pack_facts packed; the links stay plain tuples in Link's field order (check_pages
    reads them by position), which is what making them Links again cost most of."""
    ids, duplicate_ids, links, title, description, noindex, refresh, canonical, json_ld, sections = value_pickle.loads(zlib.decompress(blob))
    return LinkFacts(ids=ids, duplicate_ids=duplicate_ids, links=links, title=title, description=description,
                     noindex=noindex, canonical=canonical, refresh=refresh, json_ld=json_ld, sections=sections)


def _keep_unpacked(unpacked: dict[str, object], digest: str, facts: object) -> None:
    if len(unpacked) >= _UNPACKED_FACTS:
        unpacked.clear()
    unpacked[digest] = facts


class HeldFacts:
    """The facts of a build that keeps none for the next (the in-memory build): packed as
    FactsStore packs them, held in this process instead of a file."""

    def __init__(self) -> None:
        self.index: dict[str, tuple[tuple, bytes]] = {}
        self.unpacked: dict[str, object] = {}

    def __contains__(self, digest: str) -> bool:
        return digest in self.index

    def add(self, digest: str, summary: tuple, blob: bytes) -> None:
        self.index.setdefault(digest, (summary, blob))

    def summary(self, digest: str) -> tuple:
        return self.index[digest][0]

    def get(self, digest: str) -> object:
        found = self.unpacked.get(digest)
        if found is None:
            found = _unpack(self.index[digest][1])
            _keep_unpacked(self.unpacked, digest, found)
        return found

    def flush(self) -> None:
        pass


class PageFacts:
    """One page's facts for check_pages: the summary fields every check reads held as attributes, the
    rest unpacked when first read, so the check walks the whole site without every page's facts
    unpacked at once."""

    __slots__ = ("digest", "blobs", *_SUMMARY)

    def __init__(self, digest: str, blobs: FactsStore | HeldFacts):
        self.digest, self.blobs = digest, blobs
        for name, value in zip(_SUMMARY, blobs.summary(digest)):
            setattr(self, name, value)

    def __getattr__(self, name: str) -> object:  # only for what is not a slot
        return getattr(self.blobs.get(self.digest), name)


_PARALLEL_CHECK_PAGES = 4096  # below this, forking workers costs more than the check


def check_built(paths: set[str], facts: Mapping[str, PageFacts], base_url: str, rules: Mapping[str, object],
                 scope: set[str] | None, jobs: int, store: FactsStore | HeldFacts) -> None:
    """check_pages over the built site. A whole-site check of a big site checks links in chunks of
    pages across processes (serial, it was the longest step of a cold build after the parallel
    render) while this process checks titles and descriptions once; the problems come out in
    check_pages' order."""
    count = parallel.job_count(jobs)
    if scope is not None or count < 2 or len(facts) < _PARALLEL_CHECK_PAGES:
        check_pages(paths, facts, base_url, rules, scope=scope)
        return
    store.flush()
    urls = sorted(facts)
    problems: list[Issue] = []
    with parallel.workers((paths, facts, base_url, rules, urls), jobs) as pool:
        parts = pool.map(_link_problems, parallel.chunks(len(urls), -(-len(urls) // (count * 4))))  # forked here
        meta = page_problems(paths, facts, base_url, rules, links=False)
        for found in parts:
            problems.extend(found)
    problems.extend(meta)
    if problems:
        raise RenderError(problems)


def _link_problems(work: tuple, span: range) -> list[Issue]:
    paths, facts, base_url, rules, urls = work
    return page_problems(paths, facts, base_url, rules, scope=urls[span.start : span.stop], meta=False)


def check_scope(old: Mapping[str, Entry], entries: Mapping[str, Entry], changed: list[str], deleted: list[str],
                 blobs: FactsStore) -> set[str] | None:
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
