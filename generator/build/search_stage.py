"""The search index of a staged tree: two Pagefind bundles, each made again only when what it reads
changed. The whole pages (hubs, GPU, model, error and engine pages) go into /pagefind/, the bundle the
search page loads; the pair pages' stubs into /pagefind-pairs/, which the search page merges into it
(render/site_files.py PAIRS_SEARCH_URL, templates/static/search.js). An edit of an error or a GPU
changes whole pages and no stub, so only /pagefind/ is made again (about 140 pages of a 10k-page
site, against some 6,000 stubs). The stubs come from the plan alone (pair titles), so a build that
needs the pairs' bundle anew starts it before the pages render (start_stubs), and it is made while
they do."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from generator.plan.pages import Page
from generator.render.site_files import search_stubs, search_wholes
from generator.write.guard import SEARCH_FOLDERS
from generator.write.manifest import Entry
from generator.write.search_index import Bundle, Indexing, kept_names, sources_digest, start_search
from generator.write.staging import Staging, clear_path
from generator.write.state import state_dir


@dataclass
class StubsBundle:
    """The pairs' bundle, started while the pages render: made into output/<folder>, from sources whose
    digest is digest. indexing and output are None when the published bundle was made from these sources."""

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


def start_stubs(staging: Staging, out: Path, pagefind: str | None, pages: Sequence[Page]) -> StubsBundle | None:
    """Start making the pairs' bundle when the build will need it anew (it has stubs, and the published
    one is missing or was made from other sources), into a folder of the state beside the site
    (stage-*: a killed build's is removed as its stage is); a bundle with nothing running when the
    published one is current, so the stubs are not read twice; None when there are none to index. The
    caller close()s it."""
    if pagefind is None:
        return None
    folder = SEARCH_FOLDERS[1]
    stubs = tuple(search_stubs(pages))
    if not stubs:
        return None
    state = state_dir(out)
    digest = sources_digest(pagefind, stubs, lambda path: "")  # stubs are read by their bytes
    digest_file, kept = kept_names(folder)
    index, recorded = out / folder, state / digest_file
    if index.is_dir() and not index.is_symlink() and recorded.is_file() and recorded.read_text(encoding="ascii") == digest:
        return StubsBundle(folder, digest)
    output = Path(tempfile.mkdtemp(prefix="stage-index-out-", dir=state))
    try:
        return StubsBundle(folder, digest, start_search(staging.tree, pagefind, [Bundle(folder, stubs, state / kept)], output), output)
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise


def stage_search(staging: Staging, out: Path, entries: Mapping[str, Entry], pagefind: str | None, html_changed: bool,
                 pages: Sequence[Page], early: StubsBundle | None = None) -> dict[str, str | None]:
    """Put the search bundles into the staged tree: each published one, linked, when what it is made
    from has not changed, else a new one (the new ones made side by side; early: the pairs' bundle,
    started while the pages rendered). Returns, per bundle whose record changes, the digest of its
    sources to record once published (None: the bundle is gone)."""
    if pagefind is None:
        for folder in SEARCH_FOLDERS:
            staging.clear(folder)
        return {}
    state = state_dir(out)
    digests: dict[str, str | None] = {}
    todo: list[Bundle] = []
    made_early = None
    for folder in SEARCH_FOLDERS:
        index = out / folder
        published = index.is_dir() and not index.is_symlink()
        if published and not html_changed:  # the sources are read from pages: none changed
            staging.keep_tree(folder, index)
            continue
        if early is not None and early.folder == folder:
            if early.indexing is None:  # the published bundle was made from these stubs
                staging.keep_tree(folder, index)
            else:
                staging.clear(folder)
                made_early = early
                digests[folder] = early.digest
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
        if made_early is not None and made_early.indexing is not None and made_early.output is not None:
            made_early.indexing.wait()
            os.rename(made_early.output / made_early.folder, staging.path_of(made_early.folder))
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
