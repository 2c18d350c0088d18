"""Parallel builds: the same bytes as the serial build and as build_site, whatever the number of workers."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from generator import parallel
from generator.build.incremental import build_and_write
from generator.build.pipeline import build_site
from generator.build.results_cache import cached_results
from generator.engine.pairs import compute_results
from generator.errors import RenderError
from generator.load import load_dataset
from generator.write.guard import MARKER_NAME
from generator.write.state import state_dir

from .conftest import copy_site

# Extra cards cloned from the fixture's RTX 4090, from 8 to 80 GB, so the pair pages number in
# the dozens and every worker gets several chunks.
_MEMORY_GB = (8, 10, 12, 16, 20, 24, 32, 40, 48, 80)


def grown_site(destination: Path) -> Path:
    root = copy_site(destination)
    path = root / "data/gpus.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    seed = data["gpus"][0]
    for i, gb in enumerate(_MEMORY_GB):
        gpu = copy.deepcopy(seed)
        gpu.update(
            id=f"test-card-{gb}gb",
            name=f"Test Card {gb}GB",
            marketed_gb=gb,
            cuda_total_bytes=gb * 10**9 - (500 + 7 * i) * 2**20,
            nvidia_smi_total_mib=gb * 1024,
            buy_query=f"Test Card {gb}GB",
        )
        data["gpus"].append(gpu)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


def tree(root: Path) -> dict[str, bytes]:
    """A written site's files, but the marker the writer adds (an in-memory build has none)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name != MARKER_NAME}


@pytest.fixture
def big_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795910400")  # 2026-11-29: both builds date records alike
    return grown_site(tmp_path / "root")


def test_parallel_serial_and_in_memory_builds_are_byte_identical(big_root: Path, tmp_path: Path) -> None:
    build_and_write(big_root, tmp_path / "serial", jobs=1, search=False)
    build_and_write(big_root, tmp_path / "parallel", jobs=3, search=False)
    in_memory = {f.path: f.content for f in build_site(big_root).files}
    serial, parallel_tree = tree(tmp_path / "serial"), tree(tmp_path / "parallel")
    assert sum(1 for path in serial if path.startswith("oom/") and path.count("/") == 4) > 20, "too few pair pages to split"
    assert serial == in_memory
    assert parallel_tree == serial


def test_parallel_engine_results_equal_compute_results(big_root: Path, tmp_path: Path) -> None:
    dataset = load_dataset(big_root)
    expected = compute_results(dataset)
    results, computed, _ = cached_results(dataset, tmp_path / "cache.pickle", jobs=2)
    assert computed == len(expected)
    assert list(results) == list(expected)  # catalog order, as compute_results gives it
    assert results == expected
    again, computed, _ = cached_results(dataset, tmp_path / "cache.pickle", jobs=2)
    assert computed == 0 and again == expected


def _square(shared, span):
    return [shared[i] ** 2 for i in span]


def test_workers_return_chunks_in_order_with_the_shared_data() -> None:
    data = list(range(103))
    spans = parallel.chunks(len(data), 10)
    assert [len(s) for s in spans] == [10] * 10 + [3]
    for jobs in (1, 2, 4):
        with parallel.workers(data, jobs) as pool:
            assert [x for part in pool.map(_square, spans) for x in part] == [x * x for x in data]
    assert parallel.shared is None


@pytest.mark.parametrize("broken", ["{{ page.no_such_field }}", "{{ page.title"], ids=["undefined", "syntax"])
def test_a_template_error_in_a_worker_fails_the_build_and_keeps_the_site(big_root: Path, tmp_path: Path, broken: str) -> None:
    out = tmp_path / "site"
    build_and_write(big_root, out, jobs=2, search=False)
    before = tree(out)
    pair = big_root / "templates/pair.html"
    pair.write_text(pair.read_text(encoding="utf-8").replace("{{ page.title }}", broken, 1), encoding="utf-8")
    with pytest.raises(RenderError) as caught:
        build_and_write(big_root, out, jobs=2, search=False)
    assert "templates/pair.html" in str(caught.value)
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".site")) == []
    assert state_dir(out).is_dir()


def test_command_blocks_are_checked_in_the_workers(big_root: Path, tmp_path: Path) -> None:
    surface = big_root / "data/surfaces/vllm-serve-flags.txt"
    surface.write_text(surface.read_text(encoding="utf-8").replace("--max-model-len\n", ""), encoding="utf-8")
    with pytest.raises(RenderError) as in_memory:
        build_site(big_root)
    with pytest.raises(RenderError) as written:
        build_and_write(big_root, tmp_path / "site", jobs=2, search=False)
    assert "--max-model-len" in str(written.value)
    assert written.value.issues == in_memory.value.issues  # every page's problems, not the first chunk's
    assert not (tmp_path / "site").exists()


def test_shared_numbers_are_equal_and_share_equal_parts(big_root: Path) -> None:
    from generator.engine.pairs import shared

    results = list(compute_results(load_dataset(big_root)).values())
    pool: dict = {}
    sharing = [shared(numbers, pool) for numbers in results]
    assert sharing == results
    assert [type(n) for n in sharing] == [type(n) for n in results]
    vllm = [n.vllm for n in sharing if n.vllm is not None]
    labels = {id(lever.label) for numbers in vllm for lever in numbers.levers if lever.lever == "fp8-kv"}
    assert len(vllm) > 1 and len(labels) == len({lever.label for n in vllm for lever in n.levers if lever.lever == "fp8-kv"})
    assert shared(1.0, pool) is not shared(1, pool) and type(shared(1.0, pool)) is float  # 1 == 1.0, yet kept apart
