"""The catalog through the engines: which scenario a pair hits, its weights, and which GPUs can run a build."""

from __future__ import annotations

import pytest

from generator.engine import vllm
from generator.engine.pairs import compute_pair, gpu_total_bytes, runs_on, variant_weights
from generator.load import load_dataset

from ..conftest import FIXTURE_SITE, REPO

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog():
    return load_dataset(REPO)


def _variant(model, variant_id):
    return next(v for v in model.variants if v.id == variant_id)


def test_seed_pair_matches_the_engine_directly() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    gpu, model = dataset.gpus["rtx-4090"], dataset.models["qwen2.5-coder-32b-instruct"]
    numbers = compute_pair(gpu, model, _variant(model, "awq"))
    direct = vllm.plan_vllm(vllm.VllmInputs(hf_config={**model.config.as_config_json(), "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}},
                                            gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu.name, weights_bytes=19_330_000_000, vllm_version="0.33.0"))
    assert numbers.vllm.num_blocks == direct.num_blocks
    assert numbers.vllm.bytes_per_token == 262_144 and numbers.vllm.bytes_per_token_fp8 == 131_072
    assert numbers.scenarios == ("vllm-kv-too-small", "sglang-no-kv-pool")
    # The longest length that starts is one block short of the cache: the null block.
    assert numbers.vllm.max_len == (numbers.vllm.num_blocks - 1) * 16


def test_gguf_pair_has_llamacpp_and_ollama_numbers() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    gpu, model = dataset.gpus["rtx-4090"], dataset.models["qwen2.5-coder-32b-instruct"]
    numbers = compute_pair(gpu, model, _variant(model, "q4-k-m"))
    assert numbers.vllm is None and numbers.llamacpp is not None and numbers.ollama is not None
    # 64 layers x 8 KV heads x 128 x 2 bytes x (K + V) per token in f16; q8_0 is 34 bytes per 32 values.
    assert numbers.llamacpp.bytes_per_token_f16 == 262_144
    assert numbers.llamacpp.bytes_per_token_q8_0 == 64 * 2 * (1024 // 32 * 34)
    assert numbers.llamacpp.max_ctx_q8_0 > numbers.llamacpp.max_ctx_f16
    assert "llamacpp-kv-alloc" in numbers.scenarios


def test_weights_oom_only_past_the_card(catalog) -> None:
    model = catalog.models["llama-3.1-8b-instruct"]
    t4 = compute_pair(catalog.gpus["t4"], model, _variant(model, "bf16"))
    assert t4.scenarios == ("vllm-weights-oom",) and t4.vllm.error is None
    a4000 = compute_pair(catalog.gpus["rtx-a4000"], model, _variant(model, "bf16"))
    # Weights above the 0.92 budget but inside the card load, then leave no room for blocks.
    assert a4000.weights_bytes < gpu_total_bytes(catalog.gpus["rtx-a4000"])
    # SGLang at its default 0.8-ish fraction has no pool either: its scenario follows vLLM's.
    assert a4000.scenarios in (("vllm-no-cache-blocks", "sglang-no-kv-pool"), ("vllm-kv-too-small", "sglang-no-kv-pool"))


def test_estimated_weights_say_so(catalog) -> None:
    model = catalog.models["mixtral-8x7b-instruct-v0.1"]
    weights, estimated, basis = variant_weights(model, _variant(model, "bf16"))
    assert estimated and "estimated" in basis
    # Mixtral 8x7B has 46.7B parameters; bf16 weights are about 93 GB.
    assert 90e9 < weights < 96e9


def test_formats_below_their_minimum_capability_do_not_run(catalog) -> None:
    model = catalog.models["llama-3.1-8b-instruct"]
    awq = _variant(model, "awq")
    assert not runs_on(catalog.gpus["v100-16gb"], awq)
    assert runs_on(catalog.gpus["t4"], awq)
    assert runs_on(catalog.gpus["v100-16gb"], _variant(model, "bf16"))


def test_numbers_survive_the_build_cache_pickle_whole() -> None:
    import pickle

    from generator.engine.pairs import compute_results

    results = compute_results(load_dataset(FIXTURE_SITE))
    back = pickle.loads(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == results
    numbers = next(iter(back.values()))
    assert type(numbers).__reduce__ is not object.__reduce__  # the fast path, not dataclasses' __setstate__
