"""The memory bar: segments from the engine's numbers, in the calculator's order and labels."""

from __future__ import annotations

import re

import pytest

from generator.engine.pairs import compute_results
from generator.load import load_dataset
from generator.plan.budget_bar import BAR_WIDTH, LLAMA_SEGMENTS, VLLM_SEGMENTS, llama_bar, vllm_bar, vllm_release_span
from generator.plan.views import gpu_memory_bytes

from ..conftest import FIXTURE_SITE, REPO


@pytest.fixture(scope="module")
def fixture_numbers():
    dataset = load_dataset(FIXTURE_SITE)
    return dataset, compute_results(dataset)


def test_vllm_bar_adds_up_to_the_gpu(fixture_numbers) -> None:
    dataset, results = fixture_numbers
    checked = 0
    for numbers in results.values():
        v = numbers.vllm
        if v is None or v.available_bytes < 0:
            continue
        memory = gpu_memory_bytes(dataset.gpus[numbers.gpu])
        bar = vllm_bar(v, memory)
        assert [s["key"] for s in bar["segments"]] == [key for key, _ in VLLM_SEGMENTS]
        sizes = {s["key"]: s["bytes"] for s in bar["segments"]}
        assert sizes["kv"] == v.available_bytes and sizes["weights"] == v.weights_bytes
        assert sum(sizes.values()) == memory and not bar["over"]
        assert abs(bar["segments"][-1]["x"] + bar["segments"][-1]["width"] - BAR_WIDTH) <= 0.2
        checked += 1
    assert checked


def test_bars_that_do_not_fit_run_past_the_gpu_and_say_by_how_much(fixture_numbers) -> None:
    dataset, results = fixture_numbers
    over = [(n, gpu_memory_bytes(dataset.gpus[n.gpu])) for n in results.values() if n.llamacpp is not None and not n.llamacpp.fits]
    assert over
    numbers, memory = over[0]
    bar = llama_bar(numbers.llamacpp, memory)
    used = numbers.llamacpp.weights_bytes + numbers.llamacpp.kv_bytes + numbers.llamacpp.compute_buffer_bytes
    if used > memory:
        assert bar["over"] == used - memory and bar["limit_x"] < BAR_WIDTH


def test_the_calculator_draws_the_same_segments_in_the_same_order() -> None:
    from generator.kv.calculator import vllm_constants

    static = REPO / "templates" / "static"
    found = re.search(r"const LLAMA_BAR = (\[.*?\]\]);", (static / "kvcalc-ui-engines.js").read_text()).group(1)
    assert re.findall(r'\["([a-z_]+)", "([^"]+)"\]', found) == list(LLAMA_SEGMENTS)
    # kvcalc-ui.js draws vLLM's from the catalog.
    assert [tuple(segment) for segment in vllm_constants()["bar"]] == list(VLLM_SEGMENTS)
    assert "cat.vllm.bar" in (static / "kvcalc-ui.js").read_text()


def test_release_span_follows_the_engines_rules() -> None:
    span = vllm_release_span("0.33.0")
    assert span["last"] == "0.33.0" and span["first"] == "0.29"  # the null block in the check arrived in 0.29
    assert span["v0_last"] == "0.7"
    assert vllm_release_span("0.19.1")["first"] == "0.8"
