"""What a resident builder (`kvtriage serve`) keeps of earlier plans: each error's pair pages and
what they were planned from, the GPU and model tables, and the pages' fingerprints."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, MutableMapping

from generator.engine.pairs import PairNumbers, Results
from generator.plan.pages import Page
from generator.plan.thin_guard import fingerprint
from generator.schema import Dataset, ErrorSignature


@dataclass(eq=False)
class _PairUnit:
    """One error's pair pages, what planning them added to the site-wide tallies, and what they were
    planned from besides the inputs every error shares (see PlanMemo)."""

    error: ErrorSignature
    pages: list[Page] = field(default_factory=list)
    index: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))  # gpu -> [(model, variant)]
    indexable: list[str] = field(default_factory=list)
    thin: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    keys: frozenset[tuple[str, str, str]] = frozenset()  # every candidate pair, page or not
    featured: tuple[Any, ...] = ()  # the featured pair records read
    dates: tuple[tuple[str, str], ...] = ()  # (record key, date) of every date the pages show


@dataclass(frozen=True, eq=False)
class _Tables:
    """The GPU and model pages and their index pages, and what they read besides the shared inputs:
    which pair pages exist, under which error labels, and the dates they show."""

    pages: list[Page]
    pair_index: Mapping[str, Mapping[str, list[tuple[str, str]]]]
    labels: tuple[tuple[str, str], ...]
    dates: tuple[tuple[str, str], ...]


class PlanMemo:
    """Pair pages planned earlier in this process, kept per error so a resident builder (`kvtriage
    serve`) re-plans only the errors an edit reaches.

    An error's pair pages read its record, some featured pairs, some dates, and inputs every error
    shares: the site record, every GPU, model and affiliate program (through the GPUs that fit and
    the buy links), and the engine numbers of every pair. An error's pages are reused whole when the
    shared records are equal, the numbers are the very same objects (the resident builder keeps
    unchanged numbers), and the error's own inputs are equal. When only the shared inputs differ (a GPU,
    or model edit), a page is reused when what it reads is equal (unchanged_pairs): those of other
    GPUs and models, mostly. Anything else is planned afresh."""

    def __init__(self, stored: MutableMapping[str, bytes] | None = None,
                 numbers_keys: Mapping[tuple[str, str, str], str] | None = None) -> None:
        self.units: dict[str, _PairUnit] = {}
        self.tables: _Tables | None = None
        self._fingerprints: dict[tuple[str, int], tuple[PairNumbers, bytes]] = {}  # (engine, id(numbers)) -> (numbers, digest)
        self._shared: tuple[Any, ...] | None = None
        self._results: Results | None = None
        # Fingerprints an earlier process took, by engine and the key the numbers were computed under
        # (build/results_cache.py): equal keys give equal numbers, so equal fingerprints.
        self._stored = stored
        self._numbers_keys = numbers_keys if numbers_keys is not None else {}

    @staticmethod
    def _shared_of(dataset: Dataset) -> tuple[Any, ...]:
        return (dataset.site, dataset.gpus, dataset.models, dataset.affiliates)

    def fingerprint(self, engine: str, numbers: PairNumbers) -> bytes:
        """_Planner.fingerprint, kept for as long as the numbers are (an edit no engine reads keeps them)."""
        kept = self._fingerprints.get((engine, id(numbers)))
        if kept is None or kept[0] is not numbers:
            key = self._numbers_keys.get(numbers.key) if self._stored is not None else None
            digest = self._stored.get(f"{engine}:{key}") if self._stored is not None and key is not None else None
            if digest is None:
                digest = fingerprint(engine, numbers)
                if self._stored is not None and key is not None:
                    self._stored[f"{engine}:{key}"] = digest
            kept = self._fingerprints[(engine, id(numbers))] = (numbers, digest)
        return kept[1]

    def same_shared(self, dataset: Dataset, results: Results) -> bool:
        old = self._results
        if old is None or self._shared != self._shared_of(dataset) or len(old) != len(results):
            return False
        return all(old.get(key) is numbers for key, numbers in results.items())

    def unchanged_pairs(self, dataset: Dataset, results: Results) -> Callable[[str, str], bool] | None:
        """When the shared inputs changed (see same_shared), which pairs' pages may still come out as
        planned before: stable(gpu, model) is true when the GPU and model records are equal to the
        last plan's and every numbers of that GPU and model are the very same objects. A pair page
        reads nothing else of them (its sibling builds are the model's, on the same GPU), so with its
        error's own inputs equal and the GPUs that fit its build equal, it is as before. None when
        the site or affiliate records changed: every page reads them."""
        if self._shared is None or self._results is None:
            return None
        site, gpus, models, affiliates = self._shared
        if site != dataset.site or affiliates != dataset.affiliates:
            return None
        old = self._results
        same_gpus = {key for key, gpu in dataset.gpus.items() if gpus.get(key) == gpu}
        same_models = {key for key, model in dataset.models.items() if models.get(key) == model}
        found: dict[tuple[str, str], bool] = {}

        def stable(gpu: str, model: str) -> bool:
            known = found.get((gpu, model))
            if known is None:
                known = found[(gpu, model)] = gpu in same_gpus and model in same_models and all(
                    old.get((gpu, model, v.id)) is results.get((gpu, model, v.id)) for v in dataset.models[model].variants)
            return known

        return stable

    def remember(self, dataset: Dataset, results: Results) -> None:
        self._shared, self._results = self._shared_of(dataset), results
        live = {id(numbers) for numbers in results.values()}
        self._fingerprints = {key: kept for key, kept in self._fingerprints.items() if key[1] in live}

