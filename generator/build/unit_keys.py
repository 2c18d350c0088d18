"""Pair pages' keys carried from one command-line build to the next, per error, by the digest of what
that error's pair pages were planned from.

Keying every page (render_stage.page_key: its fields and view inputs pickled and hashed) was a sixth of
a one-record edit rebuild at 10k pages, nearly all of it for pair pages whose error nothing touched.
An error's pair pages (plan/memo.py `_PairUnit`) are a function of the records every error shares (the
site, every GPU, model, engine and affiliate program), the engine numbers of every pair (each standing
in by the key it was computed under: equal keys, equal numbers), the error record, the featured pairs
its planning read, the dates its pages show, and the render key (templates, code, libraries, CLI
surfaces, site context). When all of these hash as they did in an earlier build, its pages are the
same pages, so their keys are the keys that build took: a stored key stands in for page_key(). Any
difference, or a page the record does not name, and the page is keyed as before.

The record is a cache (write/state.py): plain values, saved after a build published, read by the next
one; a damaged or foreign one costs keying, never a wrong key (each entry is looked up by its digest)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from generator.plan.memo import PlanMemo
from generator.plan.pages import Page
from generator.schema import Dataset
from generator.write.fingerprint import sha
from generator.write.state import load_cache, save_cache

_FILE = "unit-keys.pickle"
_FORMAT = "unit-keys-1"


def _shared_digest(dataset: Dataset, numbers_keys: Mapping[tuple[str, str, str], str], render_key: str) -> str:
    parts = [render_key, dataset.site.model_dump_json()]
    for records in (dataset.gpus, dataset.models, dataset.engines, dataset.affiliates):
        parts.extend(f"{key}={record.model_dump_json()}" for key, record in sorted(records.items()))
    parts.extend(f"{'/'.join(pair)}={key}" for pair, key in sorted(numbers_keys.items()))
    return sha("\0".join(parts).encode())


class UnitKeys:
    """The stored keys of the pair pages whose error's planning inputs are unchanged (known), and what
    to store for the next build (save)."""

    def __init__(self, state: Path, dataset: Dataset, memo: PlanMemo, numbers_keys: Mapping[tuple[str, str, str], str],
                 render_key: str) -> None:
        self.path = state / _FILE
        shared = _shared_digest(dataset, numbers_keys, render_key)
        self.units = memo.units
        self.digests = {
            error_id: sha("\0".join((shared, unit.error.model_dump_json(), *(pair.model_dump_json() for pair in unit.featured),
                                     repr(unit.dates), repr(sorted(unit.keys)))).encode())
            for error_id, unit in self.units.items()
        }
        stored = load_cache(self.path)
        self.stored = stored.get("units", {}) if stored.get("format") == _FORMAT else {}

    def known(self) -> dict[int, tuple[Page, str]]:
        """id(page) -> (page, key) for the pages of every error whose digest is as stored."""
        known: dict[int, tuple[Page, str]] = {}
        for error_id, unit in self.units.items():
            entry = self.stored.get(error_id)
            if not isinstance(entry, tuple) or len(entry) != 2 or entry[0] != self.digests[error_id] or not isinstance(entry[1], dict):
                continue
            for page in unit.pages:
                key = entry[1].get(page.url)
                if isinstance(key, str):
                    known[id(page)] = (page, key)
        return known

    def save(self, pages: Sequence[Page], keys: Sequence[str | None]) -> None:
        """Store, per error, its digest and its pages' keys as this build took them (an error with a
        page that has none is left out); written only when something differs from what was stored."""
        by_url = {page.url: key for page, key in zip(pages, keys)}
        units = {}
        for error_id, unit in self.units.items():
            found = {page.url: by_url.get(page.url) for page in unit.pages}
            if all(key is not None for key in found.values()):
                units[error_id] = (self.digests[error_id], found)
        if units != self.stored:
            save_cache(self.path, {"format": _FORMAT, "units": units})
