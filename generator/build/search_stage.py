"""The search index of a staged tree: two Pagefind bundles, each made again only when what it reads
changed. The whole pages (hubs, GPU, model, error and engine pages) go into /pagefind/, the bundle the
search page loads; the pair pages' stubs into /pagefind-pairs/, which the search page merges into it
(render/site_files.py PAIRS_SEARCH_URL, templates/static/search.js). An edit of an error or a GPU
changes whole pages and no stub, so only /pagefind/ is made again (about 140 pages of a 10k-page
site, against some 6,000 stubs). The stubs come from the plan alone (pair titles), so a build that
needs the pairs' bundle anew starts it before the pages render (start_stubs), and it is made while
they do; the whole pages' bundle starts once every page is staged (start_wholes), and is made while
the build checks the site and completes the tree."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from generator.plan.pages import Page
from generator.render.site_files import search_stubs, search_wholes
from generator.write.guard import SEARCH_FOLDERS
from generator.write.manifest import Entry
from generator.write.search_index import Bundle, Indexing, kept_names, sources_digest, start_search
from generator.write.staging import Staging, clear_path
from generator.write.state import state_dir


@dataclass
class EarlyBundle:
    """A bundle started before the tree is complete (start_stubs, start_wholes): made into
    output/<folder>, from sources whose digest is digest. indexing and output are None when the
    published bundle was made from these sources."""

    folder: str
    digest: str
    indexing: Indexing | None = None
    output: Path | None = None

    def close(self) -> None:
        """Stop Pagefind if it still runs and remove what it made (once moved into the stage, nothing)."""
        if self.indexing is not None:
            self.indexing.stop()
        if self.output is not None:
            shutil.rmtree(self.output, ignore_errors=True)


def start_stubs(staging: Staging, out: Path, pagefind: str | None, pages: Sequence[Page]) -> EarlyBundle | None:
    """Start making the pairs' bundle when the build will need it anew (it has stubs, and the published
    one is missing or was made from other sources), into a folder of the state beside the site
    (stage-*: a killed build's is removed as its stage is); a bundle with nothing running when the
    published one is current, so the stubs are not read twice; None when there are none to index. The
    caller close()s it."""
    if pagefind is None:
        return None
    stubs = tuple(search_stubs(pages))
    if not stubs:
        return None
    return _start_early(staging, out, pagefind, SEARCH_FOLDERS[1], stubs, lambda path: "")  # stubs are read by their bytes


def start_wholes(staging: Staging, out: Path, pagefind: str | None, pages: Sequence[Page], entries: Mapping[str, Entry],
                 written: set[str]) -> EarlyBundle | None:
    """Start making the whole pages' bundle once every page is staged (entries: every file of the new
    tree; written: those this build wrote into the stage, the rest read from out), as start_stubs
    does the pairs'; the caller calls it only when some HTML changed. None when there are no whole
    pages to index (stage_search then clears the folder)."""
    if pagefind is None:
        return None
    wholes = tuple(search_wholes(pages))
    if not wholes:
        return None

    def where(relative: str) -> Path:
        return (staging.dir if relative in written else out) / relative

    return _start_early(staging, out, pagefind, SEARCH_FOLDERS[0], wholes, lambda path: entries[path].sha, where)


def _start_early(staging: Staging, out: Path, pagefind: str, folder: str, sources: tuple[tuple[str, bytes | None], ...],
                 sha_of: Callable[[str], str], where: Callable[[str], Path] | None = None) -> EarlyBundle:
    state = state_dir(out)
    digest = sources_digest(pagefind, sources, sha_of)
    digest_file, kept = kept_names(folder)
    index, recorded = out / folder, state / digest_file
    if index.is_dir() and not index.is_symlink() and recorded.is_file() and recorded.read_text(encoding="ascii") == digest:
        return EarlyBundle(folder, digest)
    output = Path(tempfile.mkdtemp(prefix="stage-index-out-", dir=state))
    try:
        indexing = start_search(staging.tree, pagefind, [Bundle(folder, sources, state / kept)], output, where)
        return EarlyBundle(folder, digest, indexing, output)
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise


def stage_search(staging: Staging, out: Path, entries: Mapping[str, Entry], pagefind: str | None, html_changed: bool,
                 pages: Sequence[Page], early: Sequence[EarlyBundle] = ()) -> dict[str, str | None]:
    """Put the search bundles into the staged tree: each published one, linked, when what it is made
    from has not changed, else a new one (the new ones made side by side; early: those started before
    the tree was complete). Returns, per bundle whose record changes, the digest of its sources to
    record once published (None: the bundle is gone)."""
    if pagefind is None:
        for folder in SEARCH_FOLDERS:
            staging.clear(folder)
        return {}
    state = state_dir(out)
    digests: dict[str, str | None] = {}
    todo: list[Bundle] = []
    started = {bundle.folder: bundle for bundle in early}
    made_early: list[EarlyBundle] = []
    for folder in SEARCH_FOLDERS:
        index = out / folder
        published = index.is_dir() and not index.is_symlink()
        if published and not html_changed:  # the sources are read from pages: none changed
            staging.keep_tree(folder, index)
            continue
        bundle = started.get(folder)
        if bundle is not None:
            if bundle.indexing is None:  # the published bundle was made from these sources
                staging.keep_tree(folder, index)
            else:
                staging.clear(folder)
                made_early.append(bundle)
                digests[folder] = bundle.digest
            continue
        sources = tuple(search_wholes(pages) if folder == SEARCH_FOLDERS[0] else search_stubs(pages))
        if not sources:  # Pagefind refuses to make an empty bundle; the search page then merges none
            staging.clear(folder)
            digests[folder] = None
            continue
        digest = sources_digest(pagefind, sources, lambda path: entries[path].sha)
        digest_file, kept = kept_names(folder)
        recorded = state / digest_file
        if published and recorded.is_file() and recorded.read_text(encoding="ascii") == digest:
            staging.keep_tree(folder, index)
        else:
            staging.clear(folder)
            todo.append(Bundle(folder, sources, state / kept))
            digests[folder] = digest
    indexing = start_search(staging.tree, pagefind, todo) if todo else None
    try:
        for bundle in made_early:
            assert bundle.indexing is not None and bundle.output is not None
            bundle.indexing.wait()
            os.rename(bundle.output / bundle.folder, staging.path_of(bundle.folder))
        if indexing is not None:
            indexing.wait()
    finally:
        if indexing is not None:
            indexing.stop()
    return digests


def record_search(out: Path, digests: Mapping[str, str | None]) -> None:
    """After the publish: note what each new bundle was made from, and forget the bundles that went."""
    state = state_dir(out)
    for folder, digest in digests.items():
        digest_file, kept = kept_names(folder)
        if digest is not None:
            (state / digest_file).write_text(digest, encoding="ascii")
        else:
            (state / digest_file).unlink(missing_ok=True)
            clear_path(state / kept)
