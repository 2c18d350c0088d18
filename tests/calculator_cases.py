"""Requests for the calculator parity test: the shipped catalog's pairs plus seeded random ones.

Both engines get the same JSON request; the Python answer comes from the batch API
(requests.answer_request, and ollama.answer_ollama_request for Ollama, which that API does not
dispatch yet) with the catalog entries kv.catalog.CatalogLookup resolves. SGLang requests go through
requests.answer_sglang_request and kvcalc-sglang.js.
"""

from __future__ import annotations

import json
import random
from typing import Any

from generator.engine.ollama import answer_ollama_request
from generator.engine.requests import GpuEntry, ModelEntry, answer_request
from generator.kv.catalog import CatalogLookup
from generator.schema import Dataset

GIB = 1 << 30
SEED = 20261129


def python_catalog(dataset: Dataset) -> tuple[dict[str, ModelEntry], dict[str, GpuEntry]]:
    """Every id the calculator's index knows ("model-variant" and bare model ids), as `kvtriage kv` resolves it."""
    lookup = CatalogLookup(dataset)
    models: dict[str, ModelEntry] = {}
    for model in dataset.models.values():
        for key in [model.id, *(f"{model.id}-{v.id}" for v in model.variants)]:
            entry = lookup.model(key)
            if entry is not None:
                models[key] = entry
    gpus = {gpu_id: lookup.gpu(gpu_id) for gpu_id in dataset.gpus}
    return models, gpus


def python_answer(request: dict[str, Any], models: dict[str, ModelEntry], gpus: dict[str, GpuEntry]) -> dict[str, Any]:
    """The Python engine's answer, as JSON would carry it."""
    if request.get("engine") == "ollama":
        echo = {"id": request["id"]} if "id" in request else {}
        hf_configs = {key: entry.hf_config for key, entry in models.items()}
        gpu_bytes = {key: entry.total_bytes for key, entry in gpus.items()}
        answer = {**echo, "engine": "ollama", **answer_ollama_request(request, hf_configs=hf_configs, gpu_memory_bytes=gpu_bytes)}
    else:
        answer = answer_request(request, models, gpus)
    return json.loads(json.dumps(answer))


# --------------------------------------------------------------------------- the catalog's own pairs


def catalog_requests(dataset: Dataset, calc: dict[str, Any]) -> list[dict[str, Any]]:
    """One request per (GPU, variant) as the pair pages compute them: vLLM for vLLM builds,
    llama.cpp (-c n_ctx_train -np 1) and Ollama defaults for GGUF builds."""
    out: list[dict[str, Any]] = []
    for gpu_id, _name, _total in calc["gpus"]:
        for model in calc["models"]:
            for variant in model["variants"]:
                key = f"{model['id']}-{variant['id']}"
                if "vllm" in variant["engines"]:
                    out.append({"engine": "vllm", "model": key, "gpu": gpu_id, "gpu_count": 2})
                    # The SGLang lines on vLLM pair pages: one card, fp8_e4m3, two cards.
                    out.append({"engine": "sglang", "model": key, "gpu": gpu_id})
                    out.append({"engine": "sglang", "model": key, "gpu": gpu_id, "kv_cache_dtype": "fp8_e4m3"})
                    out.append({"engine": "sglang", "model": key, "gpu": gpu_id, "tensor_parallel_size": 2})
                else:
                    weights = variant["weights"] / GIB
                    ctx = model["config"]["max_position_embeddings"]
                    out.append({"engine": "llamacpp", "model": key, "gpu": gpu_id, "weights_gib": weights, "ctx_size": ctx, "parallel": 1})
                    out.append({"engine": "ollama", "model": key, "gpu": gpu_id, "weights_gib": weights})
    for n, request in enumerate(out):
        request["id"] = f"catalog-{n}"
    return out


# --------------------------------------------------------------------------- random requests


def _dense(rng: random.Random) -> dict[str, Any]:
    kv = rng.choice([1, 2, 4, 8, 16])
    heads = kv * rng.choice([1, 2, 4, 8])
    head_dim = rng.choice([64, 80, 96, 128, 256])
    config = {
        "model_type": rng.choice(["llama", "mistral", "phi3", "custom"]),
        "num_hidden_layers": rng.randint(2, 96),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "hidden_size": heads * head_dim,
        "intermediate_size": heads * head_dim * rng.choice([2, 3, 4]) + rng.choice([0, 256]),
        "vocab_size": rng.choice([32000, 128256, 151936, 262144]),
        "max_position_embeddings": rng.choice([2048, 4096, 8192, 32768, 131072]),
        "torch_dtype": rng.choice(["bfloat16", "float16", "float32"]),
        "tie_word_embeddings": rng.random() < 0.3,
    }
    if rng.random() < 0.5:
        config["head_dim"] = head_dim
    if config["model_type"] == "mistral" and rng.random() < 0.5:
        config["sliding_window"] = rng.choice([None, 4096])
    if rng.random() < 0.35:
        # Float factors only: JSON cannot tell 4 from 4.0, and vLLM prints them differently.
        config["rope_scaling"] = rng.choice([
            {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
            {"rope_type": "linear", "factor": rng.choice([2.0, 2.5, 4.0])},
            {"type": "dynamic", "factor": 1.5},
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": config["max_position_embeddings"]},
            {"rope_type": "longrope", "factor": 32.0},
        ])
        if config["rope_scaling"].get("rope_type") == "longrope":
            config["original_max_position_embeddings"] = 4096
    elif rng.random() < 0.3:
        config["rope_theta"] = 500000.0
    if rng.random() < 0.1:
        config["model_max_length"] = rng.choice([4096, 65536])
    return config


def _hybrid(rng: random.Random) -> dict[str, Any]:
    config = _dense(rng)
    kind = rng.choice(["gemma2", "gemma3", "gpt_oss", "cohere2", "qwen2", "llama4", "layer_types"])
    config["model_type"] = kind if kind != "layer_types" else "custom"
    layers = config["num_hidden_layers"]
    if kind == "qwen2":
        config.update(use_sliding_window=True, sliding_window=rng.choice([4096, 32768]), max_window_layers=rng.choice([0, layers, 3]))
    elif kind == "llama4":
        config["attention_chunk_size"] = 8192
        if rng.random() < 0.5:
            config["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(layers)]
    elif kind == "layer_types":
        config["sliding_window"] = rng.choice([512, 4096])
        config["layer_types"] = [rng.choice(["full_attention", "sliding_attention"]) for _ in range(layers)]
    else:
        if rng.random() < 0.5:
            config["sliding_window"] = rng.choice([128, 1024, 4096])
        if rng.random() < 0.3:
            config["sliding_window_pattern"] = rng.choice([2, 4, 6])
    return config


def _mla(rng: random.Random) -> dict[str, Any]:
    config = {
        "model_type": "deepseek_v3",
        "num_hidden_layers": rng.choice([27, 61]),
        "num_attention_heads": rng.choice([16, 128]),
        "num_key_value_heads": rng.choice([16, 128]),
        "hidden_size": rng.choice([2048, 7168]),
        "intermediate_size": rng.choice([10944, 18432]),
        "moe_intermediate_size": rng.choice([1408, 2048]),
        "n_routed_experts": rng.choice([64, 256]),
        "n_shared_experts": rng.choice([1, 2]),
        "num_experts_per_tok": rng.choice([6, 8]),
        "first_k_dense_replace": rng.choice([1, 3]),
        "vocab_size": 129280,
        "max_position_embeddings": 163840,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "q_lora_rank": rng.choice([None, 1536]),
        "torch_dtype": "bfloat16",
        "rope_scaling": {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096},
    }
    return {k: v for k, v in config.items() if v is not None}


def _moe(rng: random.Random) -> dict[str, Any]:
    config = _dense(rng)
    config["model_type"] = rng.choice(["mixtral", "qwen3_moe"])
    config.update(num_local_experts=rng.choice([8, 64, 128]), num_experts_per_tok=rng.choice([2, 8]))
    if rng.random() < 0.5:
        config["moe_intermediate_size"] = rng.choice([768, 1536])
    return config


def _quantized(config: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    config["quantization_config"] = rng.choice([
        {"quant_method": "awq", "bits": 4, "group_size": 128},
        {"quant_method": "gptq", "bits": 8},
        {"quant_method": "fp8"},
        {"quant_method": "mxfp4"},
        {"quant_method": "bitsandbytes", "load_in_4bit": True},
        {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4}}}},
    ])
    return config


def _gdn(rng: random.Random) -> dict[str, Any]:
    keys = {"linear_num_key_heads": rng.choice([8, 16]), "linear_num_value_heads": rng.choice([16, 32, 48, 64]),
            "linear_key_head_dim": rng.choice([64, 128]), "linear_value_head_dim": 128}
    if rng.random() < 0.7:
        keys["linear_conv_kernel_dim"] = 4
    return keys


def _state(rng: random.Random) -> dict[str, Any]:
    """Hybrids whose other layers keep a state per sequence (Gated DeltaNet, Mamba-2, Mamba-1), under
    each family's own config.json names, and the configs geometry.py refuses."""
    config = _dense(rng)
    layers = config["num_hidden_layers"]
    kind = rng.choice(["qwen3_5", "qwen3_5", "qwen3_next", "granite", "granite", "nemotron_h", "jamba", "refused", "broken"])
    every_4th = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)]
    if kind == "qwen3_5":
        config.update(model_type="qwen3_5_text", layer_types=every_4th, full_attention_interval=4, **_gdn(rng))
        if rng.random() < 0.7:
            config["mamba_ssm_dtype"] = rng.choice(["float32", "bfloat16"])
    elif kind == "qwen3_next":
        config.update(model_type="qwen3_next", full_attention_interval=rng.choice([2, 4]), **_gdn(rng))
    elif kind == "granite":
        config.update(model_type="granitemoehybrid", layer_types=[rng.choice(["mamba"] * 5 + ["attention"]) for _ in range(layers)],
                      mamba_n_heads=rng.choice([48, 64, 128]), mamba_d_head=64, mamba_d_state=128, mamba_d_conv=4,
                      mamba_n_groups=rng.choice([1, 8]))
        if rng.random() < 0.5:
            config["mamba_expand"] = 2
    elif kind == "nemotron_h":
        config.update(model_type="nemotron_h", hybrid_override_pattern="".join(rng.choice("MM-*E") for _ in range(layers)),
                      mamba_num_heads=rng.choice([64, 128]), mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4, expand=2)
    elif kind == "jamba":
        config.update(model_type="jamba", attn_layer_period=8, attn_layer_offset=rng.choice([0, 4]), mamba_d_state=16, mamba_d_conv=4, mamba_expand=2)
    elif kind == "refused":
        config.update(model_type=rng.choice(["falcon_h1", "lfm2"]), **_gdn(rng))
    else:
        config.update(rng.choice([
            {"model_type": "qwen3_5_text", "layer_types": ["linear_attention"] * layers, **_gdn(rng)},  # every layer keeps state
            {"model_type": "qwen3_5_text", "layer_types": every_4th, "linear_num_value_heads": 32},  # sizes missing
            {"model_type": "nemotron_h", "hybrid_override_pattern": "M*" * layers},  # one character per layer, twice over
            {"model_type": "nemotron_h", "hybrid_override_pattern": "-" * layers},  # no layer keeps anything
            {"model_type": "qwen3_5_text", "layer_types": every_4th, "mamba_ssm_dtype": "float8", **_gdn(rng)},
            {"model_type": "custom", "layer_types": ["mamba"] * (layers - 1) + ["attention"]},  # Mamba layers, no Mamba sizes
        ]))
    return config


def random_config(rng: random.Random) -> dict[str, Any]:
    config = rng.choice([_dense, _dense, _hybrid, _mla, _moe, _state])(rng)
    if rng.random() < 0.25:
        config = _quantized(config, rng)
    if rng.random() < 0.1:
        config = {"model_type": "multimodal", "torch_dtype": config.pop("torch_dtype", "bfloat16"), "text_config": config}
    return config


def _model_or_config(rng: random.Random, calc: dict[str, Any], engine: str) -> dict[str, Any]:
    if rng.random() < 0.4:
        model = rng.choice(calc["models"])
        variants = [v for v in model["variants"] if (engine == "vllm") == ("vllm" in v["engines"])] or model["variants"]
        return {"model": f"{model['id']}-{rng.choice(variants)['id']}"}
    return {"hf_config": random_config(rng)}


def _gpu(rng: random.Random, calc: dict[str, Any], request: dict[str, Any]) -> None:
    if rng.random() < 0.6:
        request["gpu"] = rng.choice(calc["gpus"])[0]
    else:
        request["gpu_memory_gib"] = rng.choice([8, 12, 16, 22.5, 24, 40, 47.5, 48, 80, 94.6, 141, 192])


def random_vllm(rng: random.Random, calc: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = {"engine": "vllm", **_model_or_config(rng, calc, "vllm")}
    roll = rng.random()
    if roll < 0.85:
        _gpu(rng, calc, r)
    elif roll < 0.93:
        r["kv_cache_memory_bytes"] = rng.choice([2 * GIB, 10**9, "8G", "12g", "1.5g"])
    else:
        r["available_kv_cache_bytes"] = rng.randint(-GIB, 40 * GIB)
    if rng.random() < 0.5:
        r["weights_gib"] = rng.choice([0.5, 4.0, 7.5, 15.2, 19.33, 65.0, 140.0])
    if rng.random() < 0.6:
        r["gpu_memory_utilization"] = rng.choice([0.5, 0.8, 0.85, 0.9, 0.92, 0.95, 0.97, 0.99, 1.0, round(rng.uniform(0.3, 1.0), 3), 1.5])
    if rng.random() < 0.5:
        r["kv_cache_dtype"] = rng.choice(["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "float16", "bfloat16", "fp8_ds_mla", "nvfp4", "fp9"])
    if rng.random() < 0.6:
        r["max_model_len"] = rng.choice([None, -1, "auto", 0, 512, 2048, 4096, 8192, 16384, 32768, 40960, 131072, 1048576, rng.randint(1, 200000), "32k", "16K"])
    if rng.random() < 0.35:
        r["tensor_parallel_size"] = rng.choice([1, 2, 4, 8, 3])
    if rng.random() < 0.2:
        r["pipeline_parallel_size"] = rng.choice([1, 2, 3, 4])
    if rng.random() < 0.3:
        tp, pp = r.get("tensor_parallel_size", 1), r.get("pipeline_parallel_size", 1)
        r["gpu_count"] = tp * pp * rng.choice([1, 2, 4]) if rng.random() < 0.9 else 1
    if rng.random() < 0.3:
        r["enforce_eager"] = rng.random() < 0.6
    if rng.random() < 0.15:
        r["block_size"] = rng.choice([16, 32, 64, 1])
    if rng.random() < 0.15:
        r["max_num_seqs"] = rng.choice([1, 8, 64, 256, 1024])
    if rng.random() < 0.15:
        r["max_num_batched_tokens"] = rng.choice([512, 2048, 8192, "16k"])
    return {k: v for k, v in r.items() if v is not None}


def random_llamacpp(rng: random.Random, calc: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = {"engine": "llamacpp", **_model_or_config(rng, calc, "llamacpp")}
    if rng.random() < 0.9:
        _gpu(rng, calc, r)
    r["weights_gib"] = rng.choice([0.8, 4.9, 8.5, 17.0, 40.0, 75.0])
    if rng.random() < 0.7:
        r["ctx_size"] = rng.choice([0, 512, 2048, 4000, 8192, 32768, 131072, rng.randint(1, 140000)])
    for key in ("cache_type_k", "cache_type_v"):
        if rng.random() < 0.4:
            r[key] = rng.choice(["f16", "f32", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "iq4_nl"])
    if rng.random() < 0.5:
        r["parallel"] = rng.choice([-1, 1, 2, 3, 4, 8])
    if rng.random() < 0.2:
        r["kv_unified"] = rng.random() < 0.5
    if rng.random() < 0.2:
        r["swa_full"] = rng.random() < 0.5
    if rng.random() < 0.2:
        r["ubatch_size"] = rng.choice([128, 512, 2048])
    if rng.random() < 0.2:
        r["n_gpu_layers"] = rng.choice(["auto", "all", 0, 10, 33, 999])
    if rng.random() < 0.3:
        r["flash_attn"] = rng.choice(["on", "off", "auto", True, False])
    if rng.random() < 0.15:
        r["no_kv_offload"] = True
    if rng.random() < 0.15:
        r["fit"] = False
    return r


def random_ollama(rng: random.Random, calc: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = {"engine": "ollama", **_model_or_config(rng, calc, "ollama")}
    if rng.random() < 0.95:
        _gpu(rng, calc, r)
    r["weights_gib"] = rng.choice([0.8, 4.9, 8.5, 17.0, 40.0])
    env: dict[str, str] = {}
    if rng.random() < 0.4:
        env["OLLAMA_CONTEXT_LENGTH"] = str(rng.choice([2048, 8192, 32768, 131072]))
    if rng.random() < 0.4:
        env["OLLAMA_NUM_PARALLEL"] = str(rng.choice([1, 2, 4]))
    if rng.random() < 0.4:
        env["OLLAMA_KV_CACHE_TYPE"] = rng.choice(["q8_0", "q4_0", "f16", "q5_1", "Q8_0"])
    if rng.random() < 0.2:
        env["OLLAMA_FLASH_ATTENTION"] = rng.choice(["1", "0", "true", "false"])
    if rng.random() < 0.1:
        env["OLLAMA_GPU_OVERHEAD"] = str(rng.choice([0, 512 * 1024 * 1024]))
    if env:
        r["env"] = env
    if rng.random() < 0.3:
        r["num_ctx"] = rng.choice([2, 2048, 8192, 40000, 262144])
    if rng.random() < 0.15:
        r["num_gpu"] = rng.choice([0, 10, 99])
    if rng.random() < 0.2:
        r["compute_capability"] = rng.choice(["5.2", "7.2", "8.6", "9.0"])
    return r


SGLANG_HYBRID_ARCHS = ["GptOssForCausalLM", "Llama4ForConditionalGeneration", "Gemma4ForCausalLM", "LagunaForCausalLM", "LlamaForCausalLM"]


def random_sglang(rng: random.Random, calc: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = {"engine": "sglang", **_model_or_config(rng, calc, "vllm")}
    if "hf_config" in r:
        config = r["hf_config"]
        if rng.random() < 0.4:
            config["architectures"] = [rng.choice(SGLANG_HYBRID_ARCHS)]
        if config.get("kv_lora_rank") and rng.random() < 0.6:
            config["index_head_dim"] = rng.choice([64, 128])
        if rng.random() < 0.1:
            config["v_head_dim"] = rng.choice([64, 128, 256])
        if rng.random() < 0.1:
            config.update(swa_num_key_value_heads=rng.choice([1, 4]), swa_head_dim=rng.choice([64, 128]))
    roll = rng.random()
    if roll < 0.75:
        _gpu(rng, calc, r)
    elif roll < 0.95:
        r["kv_cache_memory_bytes"] = rng.choice([2 * GIB, 10**9, "8G", "12g", "1.5g", 0, 46611 * 65536, rng.randint(0, 60 * GIB)])
    if rng.random() < 0.4:
        r["weights_gib"] = rng.choice([0.5, 4.0, 7.5, 15.2, 19.33, 65.0, 140.0])
    if rng.random() < 0.5:
        r["mem_fraction_static"] = rng.choice([0.5, 0.7, 0.85, 0.88, 0.9, 0.95, 1.0, round(rng.uniform(0.3, 1.0), 3), 1.2])
    if rng.random() < 0.5:
        r["kv_cache_dtype"] = rng.choice(["auto", "fp8_e4m3", "fp8_e5m2", "bf16", "bfloat16", "mxfp8", "nvfp4", "fp8"])
    if rng.random() < 0.5:
        r["context_length"] = rng.choice([0, 2048, 8192, 32768, 131072, rng.randint(1, 200000), "32k", "16K"])
    if rng.random() < 0.4:
        r["tensor_parallel_size"] = rng.choice([1, 2, 4, 8, 3, 0, -1])
    if rng.random() < 0.25:
        r["page_size"] = rng.choice([1, 16, 64, 128, -1])
    if rng.random() < 0.15:
        r["max_total_tokens"] = rng.choice([1000, 50000, 10**7, -5])
    if rng.random() < 0.15:
        r["swa_full_tokens_ratio"] = rng.choice([0.1, 0.5, 0.8, 1.0, 1.5])
    if rng.random() < 0.15:
        r["sglang_version"] = rng.choice(["0.5.23", "0.5.15", "0.5.5", "0.4.9", "0.4.3", "v0.4.3.post4", "latest"])
    if rng.random() < 0.2:
        r["max_running_requests"] = rng.choice([1, 8, 16, 48, 100, 4096, 0])
    return r


def random_requests(calc: dict[str, Any], count: int, seed: int = SEED) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    makers = [random_vllm] * 6 + [random_llamacpp] * 2 + [random_ollama] * 2 + [random_sglang] * 3
    out = []
    for n in range(count):
        request = rng.choice(makers)(rng, calc)
        request["id"] = f"random-{n}"
        out.append(request)
    return out


# --------------------------------------------------------------------------- hybrids with state layers

# Shaped like the families' published config.json files (test inputs, not catalog records): Gated DeltaNet
# with a float32 temporal state (Qwen3.5 / 3.6), Gated DeltaNet by interval (Qwen3-Next, MoE), Mamba-2 by
# layer_types (Granite-4.0-H) and by pattern (Nemotron-H), Mamba-1 by period (Jamba).
STATE_CONFIGS: dict[str, dict[str, Any]] = {
    "qwen3.5-style": {
        "model_type": "qwen3_5_text", "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
        "hidden_size": 5120, "intermediate_size": 17408, "vocab_size": 248320, "torch_dtype": "bfloat16", "max_position_embeddings": 262144,
        "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(64)], "full_attention_interval": 4,
        "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32"},
    "qwen3-next-style": {
        "model_type": "qwen3_next", "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
        "hidden_size": 2048, "intermediate_size": 5120, "vocab_size": 151936, "torch_dtype": "bfloat16", "max_position_embeddings": 262144,
        "full_attention_interval": 4, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512},
    "granite-4.0-h-style": {
        "model_type": "granitemoehybrid", "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
        "hidden_size": 4096, "intermediate_size": 1024, "vocab_size": 100352, "torch_dtype": "bfloat16", "max_position_embeddings": 131072,
        "layer_types": ["attention" if i % 10 == 5 else "mamba" for i in range(40)], "mamba_n_heads": 128, "mamba_d_head": 64,
        "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "num_local_experts": 72, "num_experts_per_tok": 10},
    "nemotron-h-style": {
        "model_type": "nemotron_h", "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "hidden_size": 4480, "intermediate_size": 15680, "vocab_size": 131072, "torch_dtype": "bfloat16", "max_position_embeddings": 131072,
        "hybrid_override_pattern": "".join("*" if i % 13 == 7 else "-" if i % 2 else "M" for i in range(52)),
        "mamba_num_heads": 128, "mamba_head_dim": 80, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "expand": 2},
    "jamba-style": {
        "model_type": "jamba", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096,
        "intermediate_size": 14336, "vocab_size": 65536, "torch_dtype": "bfloat16", "max_position_embeddings": 262144,
        "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2},
}


# Gemma 4 shapes the catalog does not hold (test inputs shaped like transformers' convert_gemma4_weights.py
# _VARIANTS): E2B's KV-shared layers (no k_eq_v, one KV head), E4B's (two KV heads), and a 31B nested in text_config.
_GEMMA4_TEXT = {"model_type": "gemma4_text", "head_dim": 256, "global_head_dim": 512, "vocab_size": 262144, "torch_dtype": "bfloat16",
                "max_position_embeddings": 131072, "sliding_window": 512, "tie_word_embeddings": True}
GEMMA4_CONFIGS: dict[str, dict[str, Any]] = {
    "gemma4-e2b-style": {**_GEMMA4_TEXT, "hidden_size": 1536, "intermediate_size": 6144, "num_hidden_layers": 35, "num_attention_heads": 8,
                         "num_key_value_heads": 1, "attention_k_eq_v": False, "num_kv_shared_layers": 20,
                         "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7},
    "gemma4-e4b-style": {**_GEMMA4_TEXT, "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 42, "num_attention_heads": 8,
                         "num_key_value_heads": 2, "attention_k_eq_v": False, "num_kv_shared_layers": 18,
                         "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 7},
    "gemma4-31b-nested": {"model_type": "gemma4", "dtype": "bfloat16", "text_config": {
        **_GEMMA4_TEXT, "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 60, "num_attention_heads": 32,
        "num_key_value_heads": 16, "num_global_key_value_heads": 4, "attention_k_eq_v": True, "num_kv_shared_layers": 0,
        "sliding_window": 1024, "max_position_embeddings": 262144, "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10}},
}


def gemma4_llama_requests(builds: list[str], calc: dict[str, Any], per_source: int = 30) -> list[dict[str, Any]]:
    """llama.cpp and Ollama requests as random_llamacpp / random_ollama draw them, on each GEMMA4_CONFIGS shape and
    on the catalog's Gemma 4 builds `builds` (two KV shapes, KV-shared layers, the iSWA split)."""
    rng = random.Random(SEED + 4)
    out: list[dict[str, Any]] = []
    for source in [{"hf_config": config} for config in GEMMA4_CONFIGS.values()] + [{"model": key} for key in builds]:
        for _ in range(per_source):
            r = rng.choice([random_llamacpp, random_ollama])(rng, calc)
            for key in ("model", "hf_config"):
                r.pop(key, None)
            out.append({**r, **source})
    for n, request in enumerate(out):
        request["id"] = f"gemma4-llama-{n}"
    return out


def state_requests(models: list[str], configs: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every engine on each STATE_CONFIGS shape (or `configs`) and on the catalog's builds `models`, over GPUs,
    parallelism, KV dtypes, block sizes and lengths: vLLM sizes them, llama.cpp and SGLang refuse them."""
    rng = random.Random(SEED + 1)
    out: list[dict[str, Any]] = []
    sources = [{"hf_config": config} for config in (configs or STATE_CONFIGS).values()] + [{"model": key} for key in models]
    for source in sources:
        for gpu in ("rtx-4090", "h100-sxm", "b200", None):
            for tp, dtype, block, length in [(1, "auto", None, None), (2, "fp8", None, -1), (4, "auto", 16, 32768),
                                             (8, "fp8_e5m2", 2048, None), (1, "auto", None, rng.choice([8192, 131072, 262144]))]:
                r: dict[str, Any] = {"engine": "vllm", **source, "tensor_parallel_size": tp, "gpu_count": tp, "kv_cache_dtype": dtype}
                if gpu:
                    r["gpu"] = gpu
                else:
                    r["kv_cache_memory_bytes"] = rng.choice(["8G", "40G", 2 * GIB])
                if block:
                    r["block_size"] = block
                if length:
                    r["max_model_len"] = length
                out.append(r)
        out.append({"engine": "vllm", **source, "gpu": "rtx-4090", "pipeline_parallel_size": 2, "gpu_count": 2})
        out.append({"engine": "sglang", **source, "gpu": "h100-sxm"})
        out.append({"engine": "llamacpp", **source, "gpu": "rtx-4090", "weights_gib": 17.0})
    for n, request in enumerate(out):
        request["id"] = f"state-{n}"
    return out


# --------------------------------------------------------------------------- SGLang at the request bounds

SGLANG_BOUND_SETTINGS: list[dict[str, Any]] = [
    # generator.schema.BOUNDS through requests._optional_int (upper bound, and its negative as the lower)
    {"page_size": 10**6}, {"page_size": 10**6 + 1}, {"page_size": 0}, {"page_size": "16"},
    {"tensor_parallel_size": 1024}, {"tensor_parallel_size": 1025}, {"tensor_parallel_size": -1024}, {"tensor_parallel_size": -1025},
    {"tensor_parallel_size": True}, {"max_total_tokens": 2**27}, {"max_total_tokens": 2**27 + 1}, {"max_total_tokens": -(2**27) - 1},
    {"max_total_tokens": 1.5}, {"context_length": 2**27}, {"context_length": 2**27 + 1}, {"context_length": "128M"},
    {"context_length": "131072k"}, {"context_length": "9999T"}, {"context_length": "1" * 30}, {"context_length": "1" * 31},
    {"context_length": "12345678901234567890"}, {"context_length": "99999999999999999999k"}, {"context_length": True},
    {"context_length": "1.5K"}, {"context_length": 1.5}, {"context_length": "-5"},
    {"kv_cache_memory_bytes": 2**50}, {"kv_cache_memory_bytes": 2**50 + 1}, {"kv_cache_memory_bytes": "1024T"},
    {"kv_cache_memory_bytes": "1025T"}, {"kv_cache_memory_bytes": "2000T"}, {"kv_cache_memory_bytes": -1},
    {"kv_cache_memory_bytes": "1.5t"}, {"kv_cache_memory_bytes": "1" * 40},
    # requests._positive_float: above 0, at most MAX_GIB (non-integral values: JSON does not keep 1e9 a float)
    {"gpu_memory_gib": 1048576}, {"gpu_memory_gib": 1048576.5}, {"gpu_memory_gib": 123456789012.25}, {"gpu_memory_gib": "24"},
    {"weights_gib": 2000000.5}, {"mem_fraction_static": 1048577}, {"mem_fraction_static": 0}, {"mem_fraction_static": -0.5},
    {"swa_full_tokens_ratio": 1e20 + 0.5}, {"swa_full_tokens_ratio": "0.5"},
    {"max_running_requests": 10**6}, {"max_running_requests": 10**6 + 1}, {"max_running_requests": 0}, {"max_running_requests": 2},
]


def sglang_bound_requests(models: list[str]) -> list[dict[str, Any]]:
    """Each bound setting on a GPU (estimated budget) and on a given budget, per model."""
    out: list[dict[str, Any]] = []
    for model in models:
        for setting in SGLANG_BOUND_SETTINGS:
            for base in ({"gpu_memory_gib": 80}, {"kv_cache_memory_bytes": "20G"}):
                request = {"engine": "sglang", "model": model, **base, **setting}
                if "gpu_memory_gib" in request and "kv_cache_memory_bytes" in request:
                    del request["kv_cache_memory_bytes" if "gpu_memory_gib" in setting else "gpu_memory_gib"]
                out.append(request)
    for n, request in enumerate(out):
        request["id"] = f"bound-{n}"
    return out


# --------------------------------------------------------------------------- vLLM releases (kvcalc-release.js)

# Exact releases as logs print them, beside every range's first: V0 (0.6.x, 0.7), V1 with the V0 fallback
# below Ampere (0.8-0.10.1), 0.10.1.1, 0.11, the V2 runner without a graph estimate (0.22-0.28), the newest.
RELEASE_VERSIONS = ["0.6.3", "0.6.6", "0.7.3", "0.8.5.post1", "0.9.2", "0.10.1.1", "v0.11.0", "0.15.1", "0.19.0",
                    "0.22.0", "0.24.0", "0.27.1", "0.28.0", "0.33.0"]
RELEASE_GPUS = ["t4", "v100-32gb", "rtx-2080-ti", "rtx-4090", "a100-80gb", "h100-sxm", "h200", "b200", "mi300x", "dgx-spark-gb10"]
RELEASE_MODELS = ["qwen3-8b-bf16", "qwen2.5-7b-instruct-awq", "llama-3.1-8b-instruct-bf16", "mixtral-8x7b-instruct-v0.1-bf16",
                  "deepseek-v2-lite-bf16", "gemma-2-9b-it-bf16", "qwen2.5-coder-32b-instruct-awq", "gpt-oss-20b-mxfp4"]
RELEASE_SETTINGS: list[dict[str, Any]] = [
    {}, {"enforce_eager": True}, {"max_model_len": -1}, {"max_model_len": 40960}, {"max_model_len": 8192, "kv_cache_dtype": "fp8"},
    {"tensor_parallel_size": 2, "gpu_count": 2}, {"pipeline_parallel_size": 2, "gpu_count": 2}, {"gpu_memory_utilization": 0.5},
]


def release_requests(calc: dict[str, Any], models: list[str]) -> list[dict[str, Any]]:
    """Each release range (and the exact releases above) over GPUs, models and settings, plus the
    catalog's hybrid builds (`models`), which releases before 0.10 refuse."""
    rng = random.Random(SEED + 2)
    versions = [r["first"] for r in calc["vllm"]["releases"]] + RELEASE_VERSIONS
    known = {f"{m['id']}-{v['id']}" for m in calc["models"] for v in m["variants"]}
    catalog_models = [m for m in RELEASE_MODELS if m in known] + models
    out: list[dict[str, Any]] = []
    for version in versions:
        for model in catalog_models:
            for gpu in rng.sample(RELEASE_GPUS, 3):
                out.append({"engine": "vllm", "vllm_version": version, "model": model, "gpu": gpu, **rng.choice(RELEASE_SETTINGS)})
        for _ in range(12):
            request = random_vllm(rng, calc)
            request["vllm_version"] = version
            out.append(request)
    # TP > 1 on Hopper with graphs on: the NCCL term of V0 and of V1 0.8-0.10.x, and the kept graph-profile capture of 0.18-0.19.
    for version, gpu, tp in (("0.6.5", "h100-sxm", 2), ("0.7.3", "h200", 4), ("0.9.2", "h100-sxm", 4), ("0.10.2", "h200", 8),
                             ("0.18.0", "h100-sxm", 2), ("0.19.0", "h200", 4)):
        out.append({"engine": "vllm", "vllm_version": version, "model": catalog_models[0], "gpu": gpu, "tensor_parallel_size": tp, "gpu_count": tp})
    for n, request in enumerate(out):
        request["id"] = f"release-{n}"
    return out
