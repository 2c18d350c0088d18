"""The search index of a staged tree: two Pagefind bundles, each made again only when what it reads
changed. The whole pages (hubs, GPU, model, error and engine pages) go into /pagefind/, the bundle the
search page loads; the pair pages' stubs into /pagefind-pairs/, which the search page merges into it
(render/site_files.py PAIRS_SEARCH_URL, templates/static/search.js). An edit of an error or a GPU
changes whole pages and no stub, so only /pagefind/ is made again (about 140 pages of a 10k-page
site, against some 6,000 stubs)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from generator.plan.pages import Page
from generator.render.site_files import search_sources
from generator.write.guard import SEARCH_FOLDERS
from generator.write.manifest import Entry
from generator.write.search_index import Bundle, index_search, kept_names, sources_digest
from generator.write.staging import Staging, clear_path
from generator.write.state import state_dir


def stage_search(staging: Staging, out: Path, entries: Mapping[str, Entry], pagefind: str | None, html_changed: bool,
                 pages: Sequence[Page]) -> dict[str, str | None]:
    """Put the search bundles into the staged tree: each published one, linked, when what it is made
    from has not changed, else a new one (the new ones made side by side). Returns, per bundle whose
    record changes, the digest of its sources to record once published (None: the bundle is gone)."""
    if pagefind is None:
        for folder in SEARCH_FOLDERS:
            staging.clear(folder)
        return {}
    state = state_dir(out)
    digests: dict[str, str | None] = {}
    todo: list[Bundle] = []
    by_folder = None
    for folder in SEARCH_FOLDERS:
        index = out / folder
        published = index.is_dir() and not index.is_symlink()
        if published and not html_changed:  # the sources are read from pages: none changed
            staging.keep_tree(folder, index)
            continue
        if by_folder is None:
            by_folder = dict(zip(SEARCH_FOLDERS, search_sources(pages)))  # (whole pages, pair stubs)
        sources = tuple(by_folder[folder])
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
    if todo:
        index_search(staging.tree, pagefind, todo)
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
