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
from generator.engine.requests import REQUEST_KIND
from generator.plan.budget_bar import VLLM_SEGMENTS
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


def _every_model_on_v2(version: tuple[int, int, int]) -> bool:
    """Whether the release runs every model on the V2 runner and counts its penalty buffers (plan.py _stage_costs)."""
    row = releases.v2_runner_row(version)
    universal = row is not None and row.model_types is None and row.moe_types is None and row.quantized and row.hybrid
    return universal and not row.rocm_v1_archs and releases.v2_penalties_bytes(version, 1, 1) > 0


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
        "null_block": vllm.reserves_null_block_in_check(version),
        # The memory bar's segments, in the pair pages' order and with their labels.
        "bar": [list(segment) for segment in VLLM_SEGMENTS],
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
        # Every model of the newest release runs on the V2 runner, whose penalty buffers leave the budget (older
        # releases: kvcalc-release.js sets assumptions.v2_penalties per model).
        "v2_penalties": _every_model_on_v2(version),
        # kvcalc-release.js's tables: the releases in runs of equal rules, and the constants its rules read.
        "releases": vllm_release_ranges(),
        "release_facts": {
            "pre_ampere": releases._PRE_AMPERE.pattern, "v0_seqs": releases.V0_MAX_NUM_SEQS,
            "v0_chunk_above": releases.V0_CHUNKED_PREFILL_ABOVE, "v0_min_tokens": releases.V0_MIN_BATCHED_TOKENS,
            "v0_sampler": releases.SAMPLER_BYTES_PER_LOGIT[releases.V0_SAMPLER],
            "hybrid_too_old": _fill_in(vllm.hybrid_too_old_text((7, 7, 7)), {"version": "7.7.7"}),
        },
        "max_len_keys": list(vllm.MAX_LEN_KEYS),
        "rope_scaled": list(vllm.ROPE_TYPES_ALREADY_SCALED),
        "rope_keys": list(vllm.ROPE_KEYS),
        "default_max_len": vllm.DEFAULT_MAX_LEN,
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
            "gemma4": list(geo.GEMMA4_TYPES),  # model types whose full layers have their own shape (geometry._gemma4_shape)
        },
    }


# The oldest release the table covers (docs/research/vllm-budget-by-release.md reads 0.6.0 on).
OLDEST_VLLM = (0, 6, 0)


def vllm_release_rules(version: tuple[int, int, int]) -> dict[str, Any]:
    """Every rule of the release table and of the engine that changes with the release, as
    kvcalc-release.js applies it; releases with the same rules give the same answers."""
    v2 = releases.v2_runner_row(version)
    sample = 987654321
    return {
        "util": vllm.default_gpu_memory_utilization(version),
        # 2: V0 on every GPU, 1: V0 below compute capability 8.0, 0: V1 only.
        "v0": 2 if releases.runs_v0_engine(version) else 1 if releases.v0_on_pre_ampere(version) else 0,
        "v0_chunk": releases.v0_chunked_prefill_tokens(version),
        "batch": [[least, list(names), list(excluded), seqs, tokens] for least, names, excluded, seqs, tokens in releases.batch_tiers(version)],
        "sampler": releases.sampler_bytes_per_logit(version, None),
        # The V2 model runner's own sampler warm-up, for the models "v2" names (0.22-0.32).
        "v2_sampler": None if v2 is None else releases.sampler_bytes_per_logit(version, None, v2_runner=True),
        # The NCCL / custom all-reduce buffers of TP > 1 in the non-torch term on V1 (0.8-0.10.x; Hopper only); V0 always.
        "nccl_init": releases.counts_distributed_init(version),
        # The graph-memory profile's capture kept as non-torch memory by the custom all-reduce (0.18-0.19; TP > 1, Hopper).
        "retained": releases.retains_profiling_capture(version, 2, False, releases._HOPPER_NAMES[0]),
        # The graph estimate subtracted by default: [on CUDA, on ROCm].
        "graphs": [releases.subtracts_cudagraph_estimate_for(version, False),
                   releases.subtracts_cudagraph_estimate_for(version, False, releases._ROCM_NAMES[0])],
        # [model types or None, MoE types or None (every MoE model), quantized, hybrid, estimate 0, ROCm V1 architectures].
        "v2": None if v2 is None else [None if v2.model_types is None else list(v2.model_types),
                                       None if v2.moe_types is None else list(v2.moe_types), v2.quantized, v2.hybrid,
                                       v2.estimate_zero, list(v2.rocm_v1_archs)],
        # The V2 sampler's penalty buffers leave the budget (vllm_releases.v2_penalties_bytes).
        "v2_penalties": releases.v2_penalties_bytes(version, 1, 1) > 0,
        # Which forced MLA block sizes apply: [FlashMLA's 64 on Hopper, CUTLASS MLA's 128 on Blackwell].
        "mla": [releases.default_mla_block_size(version, releases._HOPPER_NAMES[0]) is not None,
                releases.default_mla_block_size(version, releases._BLACKWELL_NAMES[0]) == 128],
        "hybrid": vllm.has_hybrid_allocator(version),
        "null_block": vllm.reserves_null_block_in_check(version),
        "too_long": vllm.error_template(version, "too_long").template,
        "no_memory": vllm.error_template(version, "no_memory").template,
        "estimated": vllm.estimated_text(version, sample).replace(str(sample), "{estimate}"),
        "gib_round": vllm.rounds_gib_like_python(version),
        "tokens": vllm.kv_tokens_rule(version),
        "available_line": vllm.prints_available_kv_line(version),
        "one_line": vllm.prints_kv_size_on_one_line(version),
    }


def _label(first: tuple[int, int, int], last: tuple[int, int, int], latest: tuple[int, int, int]) -> str:
    if first[:2] == last[:2]:
        open_end = last[2] == 9 or last == latest
        if first[2] == 0 and open_end:
            return f"{first[0]}.{first[1]}"
        end = f"{last[0]}.{last[1]}.x" if open_end else vllm.format_version(last)
        return vllm.format_version(first) + ("" if first == last else f"-{end}")
    start = f"{first[0]}.{first[1]}" if first[2] == 0 else vllm.format_version(first)
    end = f"{last[0]}.{last[1]}" if last[2] == 9 or last == latest else vllm.format_version(last)
    return f"{start}-{end}"


def vllm_release_ranges() -> list[dict[str, Any]]:
    """The releases from OLDEST_VLLM to the engine's, in runs of equal rules, newest first: the release
    the calculator sends for each run, its first release, its label and its rules (those that changed). Patch releases are taken as .0
    to .9; every boundary in the tables falls there."""
    latest = vllm.parse_version(VLLM_VERSION)
    candidates = [(0, minor, patch) for minor in range(OLDEST_VLLM[1], latest[1] + 1) for patch in range(10)]
    candidates = [v for v in candidates if OLDEST_VLLM <= v <= latest]
    runs: list[list[Any]] = []
    for version in candidates:
        rules = vllm_release_rules(version)
        if runs and runs[-1][2] == rules:
            runs[-1][1] = version
        else:
            runs.append([version, version, rules])
    # The newest run sends the engine's own release, so the calculator's default needs no other rules.
    # Each run after the newest lists only the rules that differ from the run before it in the list.
    out, before = [], {}
    for first, last, rules in reversed(runs):
        out.append({"version": VLLM_VERSION if last == latest else vllm.format_version(first), "first": vllm.format_version(first),
                    "label": _label(first, last, latest), "rules": {k: v for k, v in rules.items() if not before or before[k] != v}})
        before = rules
    return out


def llamacpp_constants() -> dict[str, Any]:
    return {
        "ggml_block": {name: list(block) for name, block in llamacpp.GGML_BLOCK.items()},
        "cache_types": list(llamacpp.CACHE_TYPES),
        "ctx_pad": llamacpp.CTX_PAD,
        "auto_parallel": llamacpp.AUTO_PARALLEL,
        "fit_target": llamacpp.FIT_TARGET_BYTES,
        "fit_min_ctx": llamacpp.FIT_MIN_CTX,
        "swa_hf_prefixes": list(llamacpp.SWA_HF_PREFIXES),
        "fa_off_archs": sorted(llamacpp.FA_FORCED_OFF_ARCHS),
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
        # The batch API's bounds on SGLang's request keys (requests.py REQUEST_KIND, _positive_float).
        "request_kinds": {key: REQUEST_KIND[key] for key in SGLANG_INT_KEYS},
        "bounds": {REQUEST_KIND[key]: list(BOUNDS[REQUEST_KIND[key]]) for key in SGLANG_INT_KEYS},
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
        geometry = geo.geometry_from_hf_config(record["config"])
        if geometry.has_state or geometry.model_type in geo.GEMMA4_TYPES:
            # The page loads kvcalc-hybrid.js for it: state layers, or Gemma 4's two layer shapes and KV-shared layers.
            record["state"] = True
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
