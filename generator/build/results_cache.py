"""Engine numbers reused by what they were computed from: a pair's numbers are kept under the hash
of its GPU, model, variant, settings and the engine's code, on disk or in a resident builder."""

from __future__ import annotations

from pathlib import Path

import generator.parallel as parallel
import generator.value_pickle as value_pickle
from generator.dates import content_sha
from generator.engine.pairs import PairNumbers, PairTask, Results, pair_tasks, shared
from generator.schema import Dataset
from generator.write.fingerprint import code_digest, sha
from generator.write.state import replace_file


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
    # compute_pair reads the engine package and the schema records, nothing else; a task's detail says
    # whether its levers and grid are worked out, so it is part of the key.
    package = Path(__file__).resolve().parents[1]
    engine = code_digest(package / "engine", package / "schema", package / "units.py")
    gpu_sha = {key: sha(gpu.model_dump_json(exclude=_GPU_WORDS).encode()) for key, gpu in dataset.gpus.items()}
    model_sha = {key: content_sha(model) for key, model in dataset.models.items()}
    keys = [sha(f"{engine}|{gpu_sha[t.key[0]]}|{model_sha[t.key[1]]}|{t.key[2]}|{t.settings!r}|{t.detail}".encode()) for t in tasks]
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
