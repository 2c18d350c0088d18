"""The in-page calculator's data: the catalog and the engine constants as one compact JSON file.

templates/static/kvcalc.js mirrors the engine's arithmetic; every constant it needs (budget
model, error templates, dtype tables, defaults) comes from here, read off the Python engine at
build time, so the two cannot drift apart silently. tests/test_calculator_parity.py checks the
arithmetic itself in a real browser.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from generator.engine import geometry as geo
from generator.engine import llamacpp, ollama, sglang, vllm
from generator.engine import vllm_releases as releases
from generator.engine.pairs import OLLAMA_VERSION, VLLM_VERSION, gpu_total_bytes, variant_config, variant_weights
from generator.engine.requests import _REQUEST_KIND
from generator.schema import BOUNDS, MAX_GIB, Dataset
from generator.units import GIB

CATALOG_PATH = "static/kvcalc-catalog.json"

# server/routes.go Serve (ollama v0.33.0): default num_ctx by total VRAM, as ollama.vram_tier_num_ctx
# encodes it. tests/test_calculator.py checks these rows against that function at every boundary.
OLLAMA_VRAM_TIERS = ((47 * GIB, 262144), (23 * GIB, 32768), (0, 4096))


def _fill_in(text: str, values: dict[str, str]) -> str:
    """Turn a rendered engine message back into a template: each sample value must occur once."""
    for name, sample in values.items():
        if text.count(sample) != 1:
            raise ValueError(f"sample {sample!r} for {{{name}}} occurs {text.count(sample)} times")
        text = text.replace(sample, "{" + name + "}")
    return text


def vllm_constants() -> dict[str, Any]:
    version = vllm.parse_version(VLLM_VERSION)
    sample = vllm.DerivedMaxLen(1, 1, "max_position_embeddings", "1", None)
    too_long_tail = vllm.max_model_len_too_long_text(2, sample).split("in model's config.json). ", 1)[1]
    note = _fill_in(
        vllm.cudagraph_info_line(0.1234, 1, 10**4),
        {"current": "0.1234", "without": "0.1233", "increase": "0.1235"},
    )
    return {
        "version": VLLM_VERSION,
        "block_size": vllm.DEFAULT_BLOCK_SIZE,
        "default_utilization": vllm.default_gpu_memory_utilization(version),
        "kv_cache_dtypes": list(vllm.KV_CACHE_DTYPES),
        "one_byte_kv_dtypes": list(vllm.ONE_BYTE_KV_DTYPES),
        "mla_packed": dict(vllm.MLA_PACKED_BYTES_PER_TOKEN),
        "too_long": vllm.error_template(version, "too_long").template,
        "no_memory": vllm.error_template(version, "no_memory").template,
        "cannot_auto_fit": vllm.CANNOT_AUTO_FIT_TEXT,
        "too_long_tail": too_long_tail,
        "cudagraph_note": note,
        "assumptions": asdict(vllm.ASSUMPTIONS),
        "max_len_keys": list(vllm._MAX_LEN_KEYS),
        "rope_scaled": list(vllm._ROPE_TYPES_ALREADY_SCALED),
        "rope_keys": list(vllm._ROPE_KEYS),
        "default_max_len": vllm._DEFAULT_MAX_LEN,
        # default_mla_block_size at this release: FlashMLA 64 on Hopper, CUTLASS MLA 128 on Blackwell.
        "mla_block": {"rocm": list(releases._ROCM_NAMES), "blackwell": list(releases._BLACKWELL_NAMES),
                      "hopper": list(releases._HOPPER_NAMES)},
        "geometry": {
            "dtype_bytes": dict(geo.DTYPE_BYTES),
            # Attention kinds only: state (Mamba / DeltaNet) layers are kvcalc-hybrid.js's, from "hybrid".
            "hf_layer_type": {k: v for k, v in geo._HF_LAYER_TYPE.items() if v != geo.STATE},
            # Lists, not objects: the JSON's keys are sorted, and the error texts name them in Python's order.
            "hybrid": {
                "layer_types": [list(item) for item in geo._HF_LAYER_TYPE.items()],
                "refused": list(geo.STATE_REFUSED),
                "dtypes": list(geo.DTYPE_BYTES),
                "mamba_dtype_bytes": dict(vllm.MAMBA_DTYPE_BYTES),
                "align": vllm.HYBRID_BLOCK_ALIGNMENT,
            },
            "qwen_style": sorted(geo._QWEN_STYLE),
            "default_window": dict(geo._DEFAULT_WINDOW),
            "default_pattern": dict(geo._DEFAULT_PATTERN),
        },
    }


def llamacpp_constants() -> dict[str, Any]:
    return {
        "ggml_block": {name: list(block) for name, block in llamacpp.GGML_BLOCK.items()},
        "cache_types": list(llamacpp.CACHE_TYPES),
        "ctx_pad": llamacpp.CTX_PAD,
        "auto_parallel": llamacpp.AUTO_PARALLEL,
        "fit_target": llamacpp.FIT_TARGET_BYTES,
        "fit_min_ctx": llamacpp.FIT_MIN_CTX,
        "swa_hf_prefixes": list(llamacpp._SWA_HF_PREFIXES),
        "fa_off_archs": sorted(llamacpp._FA_FORCED_OFF_ARCHS),
        "fa_on": sorted(llamacpp.FLASH_ATTN_ON),
        "fa_off": sorted(llamacpp.FLASH_ATTN_OFF),
        "fa_auto": sorted(llamacpp.FLASH_ATTN_AUTO),
        "basis": [
            "KV bytes: exact, llama.cpp 3f545be (b10573) arithmetic: row_size(type, n_embd_k_gqa/v_gqa) per layer * cells per stream * streams",
            llamacpp.COMPUTE_BUFFER_BASIS,
            llamacpp.WEIGHTS_BASIS,
        ],
    }


def ollama_constants() -> dict[str, Any]:
    version = ollama.parse_version(OLLAMA_VERSION)
    return {
        "version": OLLAMA_VERSION,
        "vram_tiers": [list(row) for row in OLLAMA_VRAM_TIERS],
        "single_slot_archs": sorted(ollama.SINGLE_SLOT_ARCHS),
        "single_slot_prefixes": list(ollama.SINGLE_SLOT_ARCH_PREFIXES),
        "auto_ctx_steps": {str(k): v for k, v in ollama._AUTO_CTX_STEPS.items()},
        "load_oom": ollama.error_texts(version)["load_oom"],
    }


SGLANG_INT_KEYS = ("tensor_parallel_size", "page_size", "context_length", "max_total_tokens", "kv_cache_memory_bytes", "max_running_requests")


def sglang_constants() -> dict[str, Any]:
    """generator/engine/sglang.py's tables for kvcalc-sglang.js."""
    return {
        "release": sglang.RELEASE,
        "startup_overhead_gb": sglang.STARTUP_OVERHEAD_GB,
        "kv_dtype_bytes": dict(sglang.KV_CACHE_DTYPE_BYTES),
        "kv_dtypes": list(sglang.KV_CACHE_DTYPES),
        "hybrid_swa_archs": sorted(sglang.HYBRID_SWA_ARCHITECTURES),
        "default_swa_ratio": sglang.DEFAULT_SWA_FULL_TOKENS_RATIO,
        "dsa_quant_block": sglang.DSA_QUANT_BLOCK_SIZE,
        "dsa_rope_bytes": sglang.DSA_ROPE_STORAGE_BYTES,
        "torch_kv_dtypes": dict(sglang._TORCH_KV_DTYPES),
        "torch_model_dtypes": dict(sglang._TORCH_MODEL_DTYPES),
        "not_enough_memory": sglang.NOT_ENOUGH_MEMORY,
        # The batch API's bounds on SGLang's request keys (requests.py _REQUEST_KIND, _positive_float).
        "request_kinds": {key: _REQUEST_KIND[key] for key in SGLANG_INT_KEYS},
        "bounds": {_REQUEST_KIND[key]: list(BOUNDS[_REQUEST_KIND[key]]) for key in SGLANG_INT_KEYS},
        "max_gib": MAX_GIB,
    }


def calculator_catalog(dataset: Dataset) -> dict[str, Any]:
    """GPUs, models with their config.json subset and variants, and the engine constants."""
    gpus = [[gpu.id, gpu.name, gpu_total_bytes(gpu)] for gpu in dataset.gpus.values()]
    models = []
    for model in dataset.models.values():
        variants = []
        for variant in model.variants:
            weights, estimated, _basis = variant_weights(model, variant)
            entry: dict[str, Any] = {
                "id": variant.id,
                "name": variant.name,
                "engines": list(variant.engines),
                "ckpt": variant.checkpoint_bytes,  # what vLLM pages pass (None: the engine estimates)
                "weights": weights,  # what llama.cpp / Ollama pages use, estimated when ckpt is None
            }
            if estimated:
                entry["estimated"] = True
            quant = variant_config(model, variant).get("quantization_config")
            if quant is not None:
                entry["quant"] = quant
            for key, value in (("repo", variant.hf_repo), ("gguf", variant.gguf_file), ("ollama", variant.ollama_tag)):
                if value:
                    entry[key] = value
            variants.append(entry)
        record = {"id": model.id, "name": model.name, "repo": model.hf_repo, "config": model.config.as_config_json(), "variants": variants}
        if geo.geometry_from_hf_config(record["config"]).has_state:
            record["state"] = True  # the page loads kvcalc-hybrid.js for it
        if model.hf_aliases:
            record["aliases"] = list(model.hf_aliases)  # earlier repository names, which recompute.js resolves too
        if model.ollama_names:
            record["ollama_names"] = list(model.ollama_names)
        models.append(record)
    return {
        "v": 1,
        "gpus": gpus,
        "models": models,
        "vllm": vllm_constants(),
        "llamacpp": llamacpp_constants(),
        "ollama": ollama_constants(),
        "sglang": sglang_constants(),
    }


def catalog_json(dataset: Dataset) -> bytes:
    """Compact and deterministic: the same dataset gives the same bytes."""
    return json.dumps(calculator_catalog(dataset), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
