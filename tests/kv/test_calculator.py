"""generator/kv/calculator.py: the catalog JSON the in-page calculator reads, and the constants in it."""

from __future__ import annotations

import json

import pytest

from generator.build.pipeline import build_site
from generator.engine import ollama, vllm
from generator.engine.pairs import gpu_total_bytes, variant_config, variant_weights
from generator.kv.calculator import CATALOG_PATH, OLLAMA_VRAM_TIERS, calculator_catalog, catalog_json
from generator.load import load_dataset

from ..conftest import FIXED_TODAY, FIXTURE_SITE, REPO
from .test_calculator_parity import RANDOM_REQUESTS


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(REPO)


@pytest.fixture(scope="module")
def catalog(dataset):
    return calculator_catalog(dataset)


def test_gpus_carry_the_memory_cuda_reports(dataset, catalog) -> None:
    assert catalog["gpus"] == [[g.id, g.name, gpu_total_bytes(g)] for g in dataset.gpus.values()]


def test_models_carry_config_and_variant_weights(dataset, catalog) -> None:
    by_id = {m["id"]: m for m in catalog["models"]}
    assert list(by_id) == list(dataset.models)
    for model in dataset.models.values():
        entry = by_id[model.id]
        assert entry["config"] == model.config.as_config_json()
        assert entry["repo"] == model.hf_repo
        for variant, shipped in zip(model.variants, entry["variants"], strict=True):
            assert shipped["id"] == variant.id
            assert shipped["engines"] == list(variant.engines)
            assert shipped["ckpt"] == variant.checkpoint_bytes
            weights, estimated, _ = variant_weights(model, variant)
            assert shipped["weights"] == weights
            assert shipped.get("estimated", False) == estimated
            # The config vLLM pages use is the model's plus the variant's quantization_config.
            merged = dict(entry["config"], **({"quantization_config": shipped["quant"]} if "quant" in shipped else {}))
            assert merged == variant_config(model, variant)


def test_error_templates_reproduce_the_engine_texts(catalog) -> None:
    v = catalog["vllm"]
    version = vllm.LATEST_VERSION
    for estimate in (0, 4144):
        expected = vllm.vllm_error_text(version, "too_long", max_model_len=32768, needed_bytes=8 * 2**30,
                                        available_bytes=1084227584, estimated_max_model_len=estimate)
        msg = f"Based on the available memory, the estimated maximum model length is {estimate}. " if estimate else ""
        filled = v["too_long"].format(max_model_len=32768, needed=vllm.format_gib(8 * 2**30), available=vllm.format_gib(1084227584), estimated_msg=msg)
        assert filled == expected
    assert v["no_memory"] == vllm.vllm_error_text(version, "no_memory")
    derived = vllm.DerivedMaxLen(32768, 32768, "max_position_embeddings", "32768", None)
    text = vllm.max_model_len_too_long_text(40000, derived)
    assert text.endswith(v["too_long_tail"]) and text.startswith("User-specified max_model_len (40000)")
    line = vllm.cudagraph_info_line(0.92, 1467953349, 25386352640)
    assert line == v["cudagraph_note"].format(current="0.9200", without="0.8622", increase="0.9778")


def test_budget_constants_are_the_engine_s(catalog) -> None:
    assert catalog["vllm"]["assumptions"]["non_torch_bytes"] == vllm.ASSUMPTIONS.non_torch_bytes
    assert catalog["vllm"]["assumptions"]["cudagraph_bytes_per_size_per_layer"] == vllm.ASSUMPTIONS.cudagraph_bytes_per_size_per_layer
    assert catalog["vllm"]["default_utilization"] == 0.92
    assert catalog["vllm"]["kv_cache_dtypes"] == list(vllm.KV_CACHE_DTYPES)


@pytest.mark.parametrize("gib_times_100", [0, 100, 2299, 2300, 2301, 4699, 4700, 4701, 8000])
def test_ollama_vram_tiers_match_the_engine(gib_times_100: int) -> None:
    vram = gib_times_100 * (1 << 30) // 100
    expected = ollama.vram_tier_num_ctx(vram)
    assert next(ctx for floor, ctx in OLLAMA_VRAM_TIERS if vram >= floor) == expected
    for delta in (-1, 0, 1):
        at = max(OLLAMA_VRAM_TIERS[0][0] + delta, 0)
        assert next(ctx for floor, ctx in OLLAMA_VRAM_TIERS if at >= floor) == ollama.vram_tier_num_ctx(at)


def test_json_is_compact_and_deterministic(dataset) -> None:
    first, second = catalog_json(dataset), catalog_json(dataset)
    assert first == second
    data = json.loads(first)
    assert first == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert data["v"] == 1


def test_build_ships_the_catalog_and_pages_point_at_fingerprinted_assets() -> None:
    files = {f.path: f.content for f in build_site(FIXTURE_SITE, today=FIXED_TODAY).files}
    assert CATALOG_PATH in files and {"static/kvcalc.js", "static/kvcalc-llama.js", "static/kvcalc-ui.js"} <= set(files)
    pair = files["oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/index.html"].decode()
    hub = files["oom/vllm-max-model-len-error/index.html"].decode()
    for page in (pair, hub):
        assert 'data-catalog="/static/kvcalc-catalog.json?v=' in page
        assert 'data-engine-src="/static/kvcalc.js?v=' in page and 'data-llama-src="/static/kvcalc-llama.js?v=' in page
        assert '<script type="module" src="/static/kvcalc-ui.js?v=' in page
        assert 'data-gpu="rtx-4090" data-model="qwen2.5-coder-32b-instruct-awq" data-engine="vllm"' in page
        # Progressive enhancement: hidden until the script fills it; the static numbers stand alone.
        assert 'id="calculator" aria-labelledby="calc-title" hidden' in page


def test_parity_cases_cover_sglang(dataset) -> None:
    """Without a browser too: the parity cases reach SGLang's pool kinds, its start failure and its input
    errors, the catalog pairs ask SGLang what the pair pages show, and the SGLang module ships."""
    from generator.kv.calculator import calculator_catalog

    from ..calculator_cases import catalog_requests, python_answer, python_catalog, random_requests

    calc = calculator_catalog(dataset)
    models, gpus = python_catalog(dataset)
    assert calc["sglang"]["release"] == "0.5.23"
    catalog = [r for r in catalog_requests(dataset, calc) if r["engine"] == "sglang"]
    assert {r.get("kv_cache_dtype", "auto") for r in catalog} == {"auto", "fp8_e4m3"} and {r.get("tensor_parallel_size", 1) for r in catalog} == {1, 2}
    requests = [r for r in random_requests(calc, RANDOM_REQUESTS) if r["engine"] == "sglang"]  # what the browser parity test runs
    answers = [python_answer(r, models, gpus) for r in requests]
    kinds = {("error_input" if "error_input" in a else a["starts"], a.get("pool_kind")) for a in answers}
    assert {(True, "mha"), (True, "mla"), (True, "dsa"), (True, "hybrid_swa"), (False, None), ("error_input", None)} <= kinds
    files = {f.path for f in build_site(FIXTURE_SITE, today=FIXED_TODAY).files}
    assert "static/kvcalc-sglang.js" in files
