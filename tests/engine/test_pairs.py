"""The catalog through the engines: which scenario a pair hits, its weights, and which GPUs can run a build."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.engine import vllm
from generator.engine.pairs import DETAIL_FULL, DETAIL_LEVERS, DETAIL_OWN, compute_pair, gpu_total_bytes, pair_tasks, runs_on, variant_weights
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


def test_detail_leaves_out_only_what_no_page_shows(catalog) -> None:
    """A pair that hits nothing gets no levers or grid unless pages show them; the rest is the same."""
    checked = {"fits": 0, "fails": 0}
    for task in pair_tasks(catalog):
        if "vllm" not in task.variant.engines or min(checked.values()) >= 4:
            continue
        full = compute_pair(task.gpu, task.model, task.variant, task.settings, DETAIL_FULL)
        own = compute_pair(task.gpu, task.model, task.variant, task.settings, DETAIL_OWN)
        levers = compute_pair(task.gpu, task.model, task.variant, task.settings, DETAIL_LEVERS)
        vllm_hit = any(s.startswith("vllm-") for s in full.scenarios)
        assert own.vllm.levers == (full.vllm.levers if full.scenarios else ())
        assert own.vllm.grid == levers.vllm.grid == (full.vllm.grid if vllm_hit else ())
        assert levers.vllm.levers == full.vllm.levers and full.vllm.grid
        assert replace(own, vllm=replace(own.vllm, levers=full.vllm.levers, grid=full.vllm.grid)) == full
        checked["fails" if full.scenarios else "fits"] += 1
    assert checked["fits"] and checked["fails"]


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


def test_sglang_scenarios_beside_vllm(catalog) -> None:
    """SGLang's pool on one GPU at its default fraction decides its pair pages: weights that load but
    leave no pool, a pool shorter than the context, and nothing when the weights exceed the card."""
    import math

    from generator.engine.pairs import SGLANG_SHORT_POOL_MARGIN

    gpu = catalog.gpus["rtx-4090"]
    gemma = catalog.models["gemma-3-12b-it"]
    none = compute_pair(gpu, gemma, _variant(gemma, "bf16"))
    one = none.sglang.one_gpu
    assert "sglang-no-kv-pool" in none.scenarios
    assert one.tokens == 0 and one.kv_budget_gb <= 0 < none.sglang.pre_model_load_gb - one.weights_gb
    assert none.sglang.error.startswith(f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={one.mem_fraction_static}. "
                                        f"Raise --mem-fraction-static above {math.ceil(one.min_mem_fraction_static * 1000) / 1000:.3f} ")
    assert one.min_mem_fraction_static > one.mem_fraction_static

    qwen = catalog.models["qwen3-8b"]
    short = compute_pair(gpu, qwen, _variant(qwen, "bf16"))
    one = short.sglang.one_gpu
    assert "sglang-pool-short" in short.scenarios and "sglang-no-kv-pool" not in short.scenarios
    assert 0 < one.tokens <= short.sglang.config_context_len - SGLANG_SHORT_POOL_MARGIN
    assert one.max_req_input_len == one.tokens - 6
    assert one.log_line.startswith(f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {one.tokens}, ")

    llama = catalog.models["llama-3.1-8b-instruct"]
    too_big = compute_pair(catalog.gpus["t4"], llama, _variant(llama, "bf16"))
    assert not any(s.startswith("sglang-") for s in too_big.scenarios)  # torch fails while loading instead



# The text config of Qwen3.5-9B (layers of Gated DeltaNet state, every fourth one attention), as
# https://huggingface.co/Qwen/Qwen3.5-9B ships it inside config.json's text_config.
QWEN3_5_TEXT = {
    "model_type": "qwen3_5_text", "head_dim": 256, "hidden_size": 4096, "intermediate_size": 12288,
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 8, "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_attention_heads": 16,
    "num_key_value_heads": 4, "num_hidden_layers": 32, "vocab_size": 248320, "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}


def _hybrid_pair(catalog):
    from generator.schema import HfConfig

    base = catalog.models["qwen3-8b"]
    model = base.model_copy(update={"config": HfConfig.model_validate(QWEN3_5_TEXT)})
    variant = next(v for v in model.variants if "vllm" in v.engines)
    return model, variant, compute_pair(catalog.gpus["h100-sxm"], model, variant)


def test_hybrid_models_get_vllm_numbers_and_no_sglang_section(catalog) -> None:
    """SGLang's engine does not size hybrid state layers: a hybrid checkpoint vLLM serves keeps its
    vLLM figures, and its pair has no SGLang numbers rather than failing the build."""
    _model, _variant, numbers = _hybrid_pair(catalog)
    assert numbers.vllm is not None and numbers.sglang is None


def test_vllm_pages_of_a_model_sglang_does_not_size_say_so(catalog) -> None:
    from generator.plan.views import SGLANG_NOT_MODELLED, command_sections

    model, variant, numbers = _hybrid_pair(catalog)
    sections = command_sections(model, variant, (("vllm", variant, numbers), ("sglang", variant, numbers)))
    sglang = next(s for s in sections if s["engine"] == "sglang")
    assert sglang["blocks"] == [] and sglang["note"] == SGLANG_NOT_MODELLED


def test_vision_language_pages_say_the_profile_run_and_the_weight_estimate_leave_the_encoder_out(catalog) -> None:
    # Model.multimodal: the KV bytes are the language model's (exact); the encoder's profile run and weights are not modelled.
    gpu = catalog.gpus["h100-sxm"]
    mistral = catalog.models["mistral-small-3.2-24b-instruct-2506"]
    bf16 = compute_pair(gpu, mistral, _variant(mistral, "bf16")).vllm
    assert bf16.bytes_per_token == 163_840  # the llm-d H100 log of this checkpoint: 28.20 GiB for 184,832 tokens
    assert any("profile run also runs the encoder" in a for a in bf16.assumptions)
    assert any("vision encoder's weights come on top" in a for a in bf16.assumptions)  # BF16 weights are estimated
    qwen = catalog.models["qwen2.5-vl-3b-instruct"]
    measured = compute_pair(gpu, qwen, _variant(qwen, "bf16")).vllm  # checkpoint size on record: encoder included
    assert measured.bytes_per_token == 36 * 2 * 2 * 128 * 2  # every layer full: use_sliding_window false drops the window
    assert any("profile run also runs the encoder" in a for a in measured.assumptions)
    assert not any("come on top" in a for a in measured.assumptions)
    text = catalog.models["qwen2.5-7b-instruct"]
    assert not any("encoder" in a for a in compute_pair(gpu, text, text.variants[0]).vllm.assumptions)


def test_a_unified_memory_module_is_never_told_to_split_over_two_of_itself(catalog) -> None:
    """A Jetson or a DGX Spark is one GPU in its host: `--tensor-parallel-size 2` (or SGLang's `--tp-size 2`)
    on "two Jetson cards" cannot start. A discrete card that fails the same way keeps the lever."""
    checked = {"module": 0, "card": 0}
    for task in pair_tasks(catalog):
        if task.gpu.id not in ("jetson-orin-nano-8gb", "dgx-spark", "rtx-4060-ti-16gb") or "vllm" not in task.variant.engines:
            continue
        numbers = compute_pair(task.gpu, task.model, task.variant, task.settings, DETAIL_FULL)
        if not numbers.vllm.levers:
            continue
        module = vllm.unified_memory_gpu(task.gpu.name)
        tp = [o for o in numbers.vllm.levers if o.lever == "tensor-parallel"]
        split = [o for o in (numbers.sglang.options if numbers.sglang else ()) if o.tp > 1]
        if module:
            assert not tp and not split, (task.gpu.id, task.model.id, task.variant.id)
        if numbers.sglang is not None:
            assert numbers.sglang.most_gpus == (1 if module else 8)
            if module and not numbers.sglang.options:
                from generator.plan.views import command_sections

                note = command_sections(task.model, task.variant, [("sglang", task.variant, numbers)])[0]["note"]
                assert "the one GPU of its host" in note and "--tp-size" not in note, note
                checked["module note"] = checked.get("module note", 0) + 1
        checked["module" if module else "card"] += bool(tp) or module
    assert checked["module"] and checked["card"] and checked.get("module note")
