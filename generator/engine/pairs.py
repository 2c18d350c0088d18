"""The catalog through the engines: one PairNumbers per (GPU, model, variant), computed once.

Pages never compute; they read these. Every figure a page prints, and every number inside
a command, is a field here or a field of the engine results these wrap.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from operator import attrgetter
from typing import Any, Callable, Sequence

from generator.engine import llamacpp as llama
from generator.engine import ollama, sglang, vllm
from generator.engine.geometry import FULL, Geometry, GeometryError, geometry_from_hf_config
from generator.engine.pair_numbers import (
    ENGINE_VERSION,  # noqa: F401  (callers import it and Results from here)
    GridCell,
    LeverOutcome,
    LlamaNumbers,
    OllamaNumbers,
    PairNumbers,
    Results,  # noqa: F401
    SglangNumbers,
    SglangOneGpu,
    SglangOption,
    VllmNumbers,
)
from generator.schema import Dataset, Gpu, Model, ModelVariant, reader_urls
from generator.units import GIB, MIB

VLLM_VERSION = "0.33.0"
OLLAMA_VERSION = "0.33.0"
GRID_UTILIZATIONS = (0.85, 0.90, 0.92, 0.95)
GRID_DTYPES = ("auto", "fp8")

# What a quantized checkpoint's config.json declares, so the engine can estimate weights when
# the checkpoint size is not on record (vllm.weight_shape reads quantization_config).
_QUANT_CONFIG = {
    "fp8": {"quant_method": "fp8"},
    "awq": {"quant_method": "awq", "bits": 4, "group_size": 128},
    "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "mxfp4": {"quant_method": "mxfp4"},
}
# GGUF bits per weight where the file size is not on record: bartowski's Llama-3.1-8B-Instruct
# files (4.92 GB Q4_K_M and 8.54 GB Q8_0 for 8.03B parameters) give 4.90 and 8.51.
_GGUF_MILLIBITS = {"Q4_K_M": 4900, "Q8_0": 8510}
_LEVER_IDS = {
    "clamp_max_model_len": "clamp-context",
    "kv_cache_dtype_fp8": "fp8-kv",
    "enforce_eager": "enforce-eager",
    "fp8_and_eager": "fp8-kv",
    "utilization": "raise-utilization",
    "tensor_parallel": "tensor-parallel",
    "quantization": "smaller-quant",
    "gpu": "bigger-gpu",
}


_LEVER_NOTES = {
    "fp8_and_eager": "one byte per KV element and no CUDA-graph reserve, at some cost in decode speed",
    "tensor_parallel": "each GPU holds half the KV heads and half the weights",
}


# data/evidence/vllm_real_logs.yaml: six H100 logs of vLLM 0.11 at the default 1,024 sequences show an
# activation peak 3.6 to 5.7 GiB above the model; no log of 0.33 on such a GPU was found to settle it.
_LARGE_BATCH_NOTE = (
    "On GPUs of 70 GiB and more vLLM warms up with 1,024 sequences; vLLM 0.11 logs on H100 show a sampler "
    "peak 3.6 to 5.7 GiB above this model, so the real KV cache there can be that much smaller. "
    "Pass --max-num-seqs 256 to stay within the calibrated range.",
)


# Vision-language checkpoints (Model.multimodal): the record's config is the language model's, so the KV bytes are exact,
# but vLLM's profile_run also runs the encoder on dummy multimodal inputs (vllm/v1/worker/gpu_model_runner.py
# profile_run, unless --skip-mm-profiling), which the activation term here does not model: a Mistral-Small-3.2-24B start
# on H100 (vLLM 0.11.0, data/evidence/vllm_real_logs.yaml) printed a 2.12 GiB peak where text-only logs print 4.8-5.6 GiB,
# and a Llama-3.2-11B-Vision start (0.6.6) 36.63 GiB. A weight estimate from the language model's config leaves the encoder out.
_MULTIMODAL_NOTE = (
    "Vision-language model: the KV figures are exact (the vision encoder keeps no KV cache), but vLLM's profile run also "
    "runs the encoder on a dummy image batch, which the activation peak here does not model: the real peak, and so the "
    "KV cache, can differ by some GiB either way (--skip-mm-profiling or --language-model-only leave the encoder out of it).",
)
_MULTIMODAL_WEIGHTS_NOTE = (
    "The estimated weights count the language model only; the vision encoder's weights come on top.",
)


# https://docs.vllm.ai/en/latest/features/quantization/quantized_kvcache/: the fp8 KV cache is a storage format
# whose support depends on the attention backend vLLM picks; native FP8 compute arrives with Ada/Hopper
# (compute capability 8.9, https://docs.vllm.ai/en/v0.32.0/features/quantization/llm_compressor/fp8/).
_FP8_KV_NOTE = (
    "The fp8 KV cache figures assume vLLM's attention backend on this GPU accepts --kv-cache-dtype fp8; "
    "before compute capability 8.9 that depends on the backend vLLM picks, so check its startup log.",
)


def _capability(gpu: Gpu) -> tuple[int, int] | None:
    if gpu.compute_capability is None or gpu.vendor != "nvidia":
        return None
    major, minor = (int(part) for part in gpu.compute_capability.split("."))
    return (major, minor)


def gpu_total_bytes(gpu: Gpu) -> int:
    """What CUDA reports; nvidia-smi's total (slightly larger) only when no CUDA figure is on record."""
    if gpu.cuda_total_bytes is not None:
        return gpu.cuda_total_bytes
    return (gpu.nvidia_smi_total_mib or 0) * MIB


def variant_config(model: Model, variant: ModelVariant) -> dict:
    config = model.config.as_config_json()
    if variant.format in _QUANT_CONFIG:
        config["quantization_config"] = dict(_QUANT_CONFIG[variant.format])
    return config


def variant_weights(model: Model, variant: ModelVariant) -> tuple[int, bool, str]:
    """(bytes, estimated?, basis) of a variant's weights."""
    if variant.checkpoint_bytes is not None:
        # Readers get the URLs of the source; how it was found stays in the record.
        urls = reader_urls(variant.source) or (f"https://huggingface.co/{variant.hf_repo or model.hf_repo}",)
        return variant.checkpoint_bytes, False, f"{variant.checkpoint_bytes / 1e9:.2f} GB checkpoint ({', '.join(urls)})"
    config = variant_config(model, variant)
    geometry = geometry_from_hf_config(config)
    if variant.format == "gguf":
        params = vllm.weight_shape(model.config.as_config_json(), geometry).total_bytes(geometry.num_layers) // geometry.dtype_bytes
        millibits = _GGUF_MILLIBITS.get(variant.gguf_type or "", 8510)
        estimate = params * millibits // 8000
        return estimate, True, (
            f"estimated: {params / 1e9:.2f}B parameters from config.json x {millibits / 1000:.2f} bits "
            f"({variant.gguf_type} average, from bartowski's Llama-3.1-8B-Instruct file sizes)"
        )
    estimate = vllm.weight_shape(config, geometry).total_bytes(geometry.num_layers)
    return estimate, True, f"estimated from config.json parameters x {variant.format} bits; {vllm.ASSUMPTIONS.weights_source}"


class _VariantWork:
    """What compute_pair works out for a (model, variant) before a GPU comes in: the weights, the
    config.json the engines read, and what they derive from it (vllm.ConfigFacts, the llama.cpp
    KvLayout with its per-layer memo). A catalog computes each variant once per GPU, 48 times on a
    10k-page site; this is the part that does not change between those runs. The engines only read
    the config, so one dict serves every run."""

    def __init__(self, model: Model, variant: ModelVariant) -> None:
        self.model, self.variant = model, variant  # held, so the ids keying _WORK stay theirs
        self.weights = variant_weights(model, variant)

    @cached_property
    def config(self) -> dict:
        return variant_config(self.model, self.variant)

    @cached_property
    def facts(self) -> vllm.ConfigFacts:
        return vllm.ConfigFacts(self.config)

    @cached_property
    def layout(self) -> llama.KvLayout:
        return llama.kv_layout_from_geometry(geometry_from_hf_config(self.model.config.as_config_json()))


# Records are frozen, so a (model, variant) pair of objects always means the same work. Bounded:
# past _WORK_MAX entries (about 12 kB each) the memo starts over, so a long-lived process that loads
# one catalog after another keeps at most that many.
_WORK: dict[tuple[int, int], _VariantWork] = {}
_WORK_MAX = 1024


def _work(model: Model, variant: ModelVariant) -> _VariantWork:
    key = (id(model), id(variant))
    work = _WORK.get(key)
    if work is None:
        if len(_WORK) >= _WORK_MAX:
            _WORK.clear()
        work = _WORK[key] = _VariantWork(model, variant)
    return work


# Sizings by their inputs, across the pairs one process computes (vllm.plan's SizeMemo; bounded there).
_SIZES: vllm.SizeMemo = {}


def _argv(flags: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    out: list[str] = []
    for flag, value in flags:
        out.append(flag)
        if value != "":
            out.append(value)
    return tuple(out)


def _growing_layers(kinds: tuple[str, ...]) -> int:
    """Layers whose cache grows with the context: the full-attention ones, or every layer when all slide."""
    return sum(1 for kind in kinds if kind == "full") or len(kinds)


def _window_note(kinds: tuple[str, ...], window: int | None) -> tuple[str, ...]:
    full = sum(1 for kind in kinds if kind == "full")
    if full == len(kinds) or not window:
        return ()
    if full == 0:
        return (f"Every layer keeps a window of {window:,} tokens, so bytes per token are the cost within that window.",)
    return (
        f"Bytes per token count the {full} full-attention layers; the other {len(kinds) - full} layers keep only "
        f"a window of {window:,} tokens, a fixed cost included in the totals.",
    )


# Observed sampler warm-up peak per logit (vllm.BudgetAssumptions.sampler_source): vLLM 0.11 logs on
# H100 at 1,024 sequences print 4.8-7.4 GiB, about 38.5 B per logit; V1 logs at 256 sequences fit
# about 12 B. The budget model counts the profile's peak by release (vllm_releases.sampler_bytes_per_logit); the warm-up after allocation also
# sorts copies for top-k/top-p.
def sampler_peak_bytes(max_num_seqs: int, vocab_size: int) -> int:
    per_logit = 38.5 if max_num_seqs >= 1024 else 12
    return round(max_num_seqs * vocab_size * per_logit)


# What the --max-num-seqs lever sets: vLLM's default on cards below 70 GiB, or a quarter of it there.
def _fewer_seqs(default_seqs: int) -> int:
    return 256 if default_seqs > 256 else max(1, default_seqs // 4)


def startup_free_memory_text(free_bytes: int, total_bytes: int, utilization: float, requested: int) -> str:
    """vLLM 0.14+ request_memory's ValueError (vllm/v1/worker/utils.py), device cuda:0."""
    return (f"Free memory on device cuda:0 ({vllm.format_gib(free_bytes)}/{vllm.format_gib(total_bytes)} GiB) on startup "
            f"is less than desired GPU memory utilization ({utilization}, {vllm.format_gib(requested)} GiB). "
            "Decrease GPU memory utilization or reduce GPU memory used by other processes.")


def utilization_that_fits(free_bytes: int, total_bytes: int) -> float:
    """free/total rounded down to two places, the largest utilization the startup check passes."""
    util = math.floor(free_bytes * 100 / total_bytes) / 100
    while util > 0 and vllm.requested_bytes(total_bytes, util) > free_bytes:
        util = round(util - 0.01, 2)
    return util


def _remediation_outcomes(levers: Sequence[vllm.Lever], result: vllm.VllmResult, facts: vllm.ConfigFacts, gpu: Gpu,
                          base_flags: tuple[tuple[str, str], ...]) -> list[LeverOutcome]:
    """vLLM's remediation levers as the page offers them."""
    outcomes = []
    for lever in levers:
        flags = lever.serve_flags(base_flags)
        note = lever.note or _LEVER_NOTES.get(lever.kind, "")
        label = lever.label
        if lever.kind == "tensor_parallel":
            label = f"{lever.label} (two {gpu.name} cards)"
        if lever.kind == "clamp_max_model_len" and len(facts.groups) == 1:
            note = (
                f"{result.num_blocks:,} blocks of {result.block_size} tokens, less the null block: "
                f"({result.num_blocks:,} - 1) x {result.block_size} = {lever.max_model_len_that_fits:,}"
            )
        outcomes.append(
            LeverOutcome(
                lever=_LEVER_IDS[lever.kind],
                label=label,
                flags=_argv(flags),
                max_len=lever.max_model_len_that_fits,
                fits_full=lever.fits_requested,
                gpus=2 if lever.kind == "tensor_parallel" else 1,
                note=note,
            )
        )
    return outcomes


def _memory_outcomes(inputs: vllm.VllmInputs, result: vllm.VllmResult, facts: vllm.ConfigFacts, total: int, free_bytes: int | None,
                     base_flags: tuple[tuple[str, str], ...]) -> list[LeverOutcome]:
    """The levers for memory outside vLLM's budget: fewer sequences, room for the sampler warm-up,
    and the utilization that fits the memory that is free."""
    geometry = facts.geometry
    breakdown = result.breakdown
    outcomes: list[LeverOutcome] = []
    requested_len = result.max_model_len
    if result.max_num_seqs > 1:
        seqs = _fewer_seqs(result.max_num_seqs)
        lever = vllm.make_lever("utilization", "", (("--max-num-seqs", str(seqs)),), inputs, {"max_num_seqs": seqs},
                            requested_len, facts=facts, memo=_SIZES)
        if lever is not None:
            outcomes.append(LeverOutcome(
                lever="fewer-seqs", label=f"--max-num-seqs {seqs}", flags=_argv(lever.serve_flags(base_flags)),
                max_len=lever.max_model_len_that_fits, fits_full=lever.fits_requested,
                note=(f"{seqs} sequences instead of {result.max_num_seqs}: the sampler warm-up needs about "
                      f"{sampler_peak_bytes(seqs, geometry.vocab_size) / GIB:.2f} GiB instead of "
                      f"{sampler_peak_bytes(result.max_num_seqs, geometry.vocab_size) / GIB:.2f} GiB"),
            ))
    peak = sampler_peak_bytes(result.max_num_seqs, geometry.vocab_size)
    if result.error is None and peak > total - breakdown.requested_bytes + breakdown.activation_peak_bytes:
        # The sampler warm-up after allocation runs short: the largest utilization that leaves it room.
        util = round(result.gpu_memory_utilization - 0.01, 2)
        while util > 0.5 and peak > total - vllm.requested_bytes(total, util) + breakdown.activation_peak_bytes:
            util = round(util - 0.01, 2)
        lever = vllm.make_lever("utilization", "", (("--gpu-memory-utilization", f"{util:.2f}"),), inputs,
                            {"gpu_memory_utilization": util}, requested_len, facts=facts, memo=_SIZES)
        if lever is not None and util > 0.5:
            outcomes.append(LeverOutcome(
                lever="lower-utilization", label=f"--gpu-memory-utilization {util:.2f}",
                flags=_argv(lever.serve_flags(base_flags)), max_len=lever.max_model_len_that_fits, fits_full=lever.fits_requested,
                note=(f"leaves {(total - vllm.requested_bytes(total, util) + breakdown.activation_peak_bytes) / GIB:.2f} GiB "
                      f"outside the budget for a warm-up of about {peak / GIB:.2f} GiB"),
            ))
    if free_bytes is not None:
        util = utilization_that_fits(free_bytes, total)
        lever = vllm.make_lever("utilization", "", (("--gpu-memory-utilization", f"{util:.2f}"),), inputs,
                            {"gpu_memory_utilization": util}, requested_len, facts=facts, memo=_SIZES) if util > 0 else None
        if lever is not None:
            outcomes.append(LeverOutcome(
                lever="lower-utilization", label=f"--gpu-memory-utilization {util:.2f}",
                flags=_argv(lever.serve_flags(base_flags)), max_len=lever.max_model_len_that_fits, fits_full=lever.fits_requested,
                note=(f"{free_bytes / GIB:.2f} of {total / GIB:.2f} GiB free, so at most {util:.2f}: it requests "
                      f"{vllm.requested_bytes(total, util) / GIB:.2f} GiB and leaves "
                      f"{max(lever.available_kv_cache_bytes, 0) / GIB:.2f} GiB of KV cache, {lever.num_blocks:,} blocks"),
            ))
    return outcomes


def _utilization_grid(inputs: vllm.VllmInputs, facts: vllm.ConfigFacts) -> list[GridCell]:
    """The longest context that fits at each utilization and KV dtype of the page's grid."""
    grid = []
    for util in GRID_UTILIZATIONS:
        for dtype in GRID_DTYPES:
            auto = vllm.replace_inputs(inputs, gpu_memory_utilization=util, kv_cache_dtype=dtype, max_model_len=-1)
            grid.append(GridCell(util, dtype, vllm.fitting_max_model_len(auto, facts=facts, memo=_SIZES)))
    return grid


def _growing_bytes_per_token(geometry: Geometry, result) -> tuple[int, int]:
    """KV bytes per token of the layers whose cache grows with the context, as configured and in fp8.

    Gemma 4's full layers have their own shape, which differs from the page-unified figure the plan reports."""
    per_layer = result.kv_bytes_per_token_per_layer
    if geometry.has_global_shape:
        per_layer = vllm.kv_bytes_per_token_per_layer(geometry, result.kv_cache_dtype, result.tensor_parallel_size, FULL)
    per_layer_fp8 = vllm.kv_bytes_per_token_per_layer(geometry, "fp8", 1, FULL)
    growing_layers = _growing_layers(geometry.layer_kinds)
    return per_layer * growing_layers, per_layer_fp8 * growing_layers


# How much of a vLLM pair's remediation compute_pair works out (PairTask.detail). The levers and
# the utilization grid are most of a vLLM pair's cost, and only pages show them: a pair's own pages
# (it hits a scenario, is featured or is an error's worked example) and, for the levers, the vLLM
# command section of another build's page.
DETAIL_FULL = "full"  # levers and grid whatever the pair hits
DETAIL_LEVERS = "levers"  # levers always (another build's pages run this one under vLLM); the grid as DETAIL_OWN
DETAIL_OWN = "own"  # levers when the pair hits any scenario; the grid when it hits a vLLM one


@dataclass(frozen=True)
class _VllmRemedies:
    """What a vLLM pair's levers and grid are worked out from, once compute_pair knows it needs them."""

    gpu: Gpu
    model: Model
    inputs: vllm.VllmInputs
    result: vllm.VllmResult
    facts: vllm.ConfigFacts
    siblings: list[tuple[ModelVariant, int]]
    free_bytes: int | None
    base_flags: tuple[tuple[str, str], ...]

    def levers(self) -> tuple[LeverOutcome, ...]:
        alternatives = {}
        alternative_facts = {}
        for other, weights in self.siblings:
            name = f"{other.name} ({other.hf_repo})"
            other_work = _work(self.model, other)
            alternatives[name] = (weights, other_work.config)
            alternative_facts[name] = other_work.facts
        levers = vllm.vllm_remediation(self.inputs, alternative_weights=alternatives, facts=self.facts,
                                       alternative_facts=alternative_facts, memo=_SIZES)
        outcomes = _remediation_outcomes(levers, self.result, self.facts, self.gpu, self.base_flags)
        outcomes += _memory_outcomes(self.inputs, self.result, self.facts, self.inputs.gpu_total_bytes, self.free_bytes,
                                     self.base_flags)
        return tuple(outcomes)

    def grid(self) -> tuple[GridCell, ...]:
        return tuple(_utilization_grid(self.inputs, self.facts))


def _cards_per_host(gpu: Gpu) -> int:
    """How many of this GPU one machine can give tensor parallelism: one for a unified-memory module
    (Jetson, DGX Spark's GB10, Thor), whose host has that single GPU; else two of the same card."""
    return 1 if vllm.unified_memory_gpu(gpu.name) else 2


def _vllm_numbers(gpu: Gpu, model: Model, variant: ModelVariant, settings,
                  siblings: list[tuple[ModelVariant, int]]) -> tuple[VllmNumbers, _VllmRemedies]:
    """The pair's vLLM numbers with no levers and an empty grid, and what fills them in."""
    total = gpu_total_bytes(gpu)
    work = _work(model, variant)
    config = work.config
    utilization = settings.gpu_memory_utilization if settings else None
    free_gib = getattr(settings, "free_gib", None) if settings else None
    free_bytes = round(free_gib * GIB) if free_gib is not None else None
    inputs = vllm.VllmInputs(
        hf_config=config,
        gpu_total_bytes=total,
        gpu_name=gpu.name,
        gpu_count=_cards_per_host(gpu),  # two lets the remediation price `-tp 2` on two of the same card
        weights_bytes=variant.checkpoint_bytes,
        vllm_version=VLLM_VERSION,
        gpu_memory_utilization=utilization,
    )
    # Every plan below reads this one config: its geometry, groups and weight shape are derived once.
    facts = work.facts
    result = vllm.plan_vllm(inputs, facts=facts, memo=_SIZES)
    geometry = facts.geometry
    base_flags: tuple[tuple[str, str], ...] = ()
    if utilization is not None:
        base_flags = (("--gpu-memory-utilization", f"{utilization:.2f}"),)
    remedies = _VllmRemedies(gpu, model, inputs, result, facts, siblings, free_bytes, base_flags)
    breakdown = result.breakdown
    assert breakdown is not None  # the budget model always runs for catalog pairs
    bytes_per_token, bytes_per_token_fp8 = _growing_bytes_per_token(geometry, result)
    assumptions = result.assumptions or vllm.ASSUMPTIONS
    return VllmNumbers(
        version=result.vllm_version,
        utilization=result.gpu_memory_utilization,
        total_memory_bytes=total,
        config_max_len=result.derived_max_model_len,
        max_model_len=result.max_model_len,
        bytes_per_token=bytes_per_token,
        bytes_per_token_fp8=bytes_per_token_fp8,
        block_size=result.block_size,
        bytes_per_block=result.bytes_per_block,
        num_blocks=result.num_blocks,
        kv_cache_tokens=result.kv_cache_tokens,
        max_concurrency=result.max_concurrency,
        max_len=min(result.estimated_max_model_len, result.derived_max_model_len) if result.check_bytes > 0 else 0,
        fits=result.fits,
        needed_bytes=result.needed_bytes,
        available_bytes=result.available_kv_cache_bytes,
        requested_bytes=breakdown.requested_bytes,
        weights_bytes=breakdown.weights_bytes,
        non_torch_bytes=breakdown.non_torch_bytes,
        activation_bytes=breakdown.activation_peak_bytes,
        cudagraph_bytes=breakdown.cudagraph_bytes,
        error=result.error,
        levers=(),
        grid=(),
        max_num_seqs=result.max_num_seqs,
        max_num_batched_tokens=result.max_num_batched_tokens,
        assumptions=_window_note(geometry.layer_kinds, geometry.sliding_window or geometry.attention_chunk_size)
        + (assumptions.non_torch_source, assumptions.activation_source, assumptions.cudagraph_source)
        + ((assumptions.unified_memory_source,) if vllm.unified_memory_gpu(gpu.name, assumptions) else ())
        + (_LARGE_BATCH_NOTE if result.max_num_seqs >= 1024 else ())
        + (_FP8_KV_NOTE if _capability(gpu) is not None and _capability(gpu) < (8, 9) else ())
        + (_MULTIMODAL_NOTE if model.multimodal else ())
        + (_MULTIMODAL_WEIGHTS_NOTE if model.multimodal and work.weights[1] else ()),
        sampler_peak_bytes=sampler_peak_bytes(result.max_num_seqs, geometry.vocab_size),
        warmup_headroom_bytes=total - breakdown.requested_bytes + breakdown.activation_peak_bytes,
        free_bytes=free_bytes,
    ), remedies


# The budget estimate itself is stated next to the SGLang commands (pages.sglang_note).
_SGLANG_NOTES = (
    "SGLang does not refuse to start when its pool is shorter than --context-length; it warns, then rejects each request "
    "whose input reaches the pool. The SGLang commands pass a --context-length the estimated pool holds.",
)


def _sglang_numbers(gpu: Gpu, work: _VariantWork, weights: int) -> SglangNumbers | None:
    """SGLang (generator/engine/sglang.py) for a checkpoint vLLM also serves: the pool at SGLang's
    default --mem-fraction-static on one card, with fp8_e4m3, and on two cards. The config's geometry
    and length are the variant's (work.facts), derived once for every GPU."""
    config = work.config
    total = gpu_total_bytes(gpu)
    smi_mib = gpu.nvidia_smi_total_mib or total / MIB  # SGLang reads nvidia-smi memory.total for its default
    splits = (2, 4, 8) if _cards_per_host(gpu) > 1 else ()  # the --tp-size values tried when one card does not start
    try:
        geometry = work.facts.geometry
        sglang.cell_size(config, geometry=geometry)  # refuses what SGLang's engine does not size (hybrid state layers) before any figure
        context = work.facts.derived.value
        mla = geometry.mla is not None

        def option(lever: str, tp: int, dtype: str) -> SglangOption | None:
            fraction = sglang.default_mem_fraction_static(smi_mib, tp=tp, mla=mla).mem_fraction_static
            try:
                result = sglang.plan(config, tp=tp, kv_cache_dtype=dtype, gpu_total_bytes=total, weights_gb=weights / tp / sglang.GB,
                                     mem_fraction_static=fraction, context_len=context, geometry=geometry)
            except sglang.SglangInputError as exc:
                errors[(tp, dtype)] = str(exc)
                return None
            line = next((line for line in result.log_lines if "KV Cache is allocated" in line), "")
            return SglangOption(lever, tp, dtype, fraction, result.kv_bytes_per_token, result.max_total_num_tokens,
                                min(context, result.max_total_num_tokens), bool(result.context_fits), line)

        errors: dict[tuple[int, str], str] = {}
        chosen: list[SglangOption] = []
        auto = option("clamp-context", 1, "auto")
        if auto is not None:
            chosen.append(auto)
        if auto is None or not auto.fits_full:
            fp8 = option("fp8-kv", 1, "fp8_e4m3")
            if fp8 is not None and (auto is None or fp8.context_length > auto.context_length):
                chosen.append(fp8)
        if not any(o.fits_full for o in chosen):
            # The fewest GPUs that start: 2, else 4, else 8 (weights beyond two cards still get a launch line).
            split = None
            for tp in splits:
                split = option("tensor-parallel", tp, "auto")
                if split is not None:
                    break
            if split is not None and not split.fits_full:
                split = option("tensor-parallel", split.tp, "fp8_e4m3") or split
            if split is not None and split.context_length > max((o.context_length for o in chosen), default=0):
                chosen.append(split)
    except (sglang.SglangInputError, GeometryError):
        return None  # a geometry the SGLang engine does not size: no SGLang section
    notes = _SGLANG_NOTES
    if any(o.kv_cache_dtype != "auto" for o in chosen) and _capability(gpu) is not None and _capability(gpu) < (8, 9):
        notes += ("The fp8_e4m3 KV cache figures assume SGLang's attention backend on this GPU accepts it; before compute "
                  "capability 8.9 there is no native FP8, so check its startup log.",)
    one_gpu = _sglang_one_gpu(config, geometry, total, weights, smi_mib, context, mla, auto)
    return SglangNumbers(
        release=sglang.RELEASE,
        config_context_len=context,
        weights_bytes=weights,
        pre_model_load_gb=round(total / sglang.GB - sglang.STARTUP_OVERHEAD_GB, 2),
        startup_overhead_gb=sglang.STARTUP_OVERHEAD_GB,
        options=tuple(chosen),
        error=errors.get((1, "auto")),
        assumptions=notes,
        one_gpu=one_gpu,
        most_gpus=max(splits, default=1),
    )


def _sglang_one_gpu(config: dict, geometry: Geometry, total: int, weights: int, smi_mib: float, context: int, mla: bool,
                    auto: SglangOption | None) -> SglangOneGpu:
    fraction = sglang.default_mem_fraction_static(smi_mib, tp=1, mla=mla).mem_fraction_static
    pre = total / sglang.GB - sglang.STARTUP_OVERHEAD_GB
    weights_gb = weights / sglang.GB
    budget = sglang.rest_memory_gb(pre - weights_gb, pre, fraction)
    per_token = sglang.cell_size(config, geometry=geometry).per_token
    tokens = auto.tokens if auto is not None else 0
    return SglangOneGpu(
        mem_fraction_static=fraction,
        weights_gb=weights_gb,
        reserve_gb=pre * (1 - fraction),
        kv_budget_gb=budget,
        min_mem_fraction_static=sglang.min_mem_fraction_static(pre - weights_gb, pre),
        kv_bytes_per_token=per_token,
        tokens=tokens,
        max_req_input_len=sglang.max_req_input_len(context, tokens) if auto is not None else None,
        log_line=auto.log_line if auto is not None else "",
    )


# A prompt as long as the pool, checked against --context-length first: the pool must be this far below the
# context so that SGLang's reserved tokens (0.5.15+) do not make the context check the one that fires.
SGLANG_SHORT_POOL_MARGIN = 128


def sglang_scenario(numbers: SglangNumbers | None) -> str | None:
    """The SGLang error a pair reaches on one GPU at SGLang's defaults, from the numbers beside vLLM's:
    no KV pool when the weights load but leave nothing inside the fraction (weights beyond the memory
    itself fail in torch while loading instead), and a pool shorter than the context when it starts."""
    one = numbers.one_gpu if numbers is not None else None
    if one is None:
        return None
    pre = numbers.pre_model_load_gb
    if one.tokens == 0:
        return "sglang-no-kv-pool" if one.kv_budget_gb <= 0 and one.weights_gb < pre else None
    if one.tokens + SGLANG_SHORT_POOL_MARGIN <= numbers.config_context_len:
        return "sglang-pool-short"
    return None


def _llama_numbers(gpu: Gpu, model: Model, variant: ModelVariant, weights: int, layout: llama.KvLayout) -> LlamaNumbers:
    total = gpu_total_bytes(gpu)
    # The reader asked for the model's whole context with one slot: `-c N -np 1`.
    settings = llama.ServerSettings(ctx_size=layout.n_ctx_train, parallel=1)
    result = llama.estimate_llamacpp(layout, settings, weights_bytes=weights, gpu_memory_bytes=total,
                                     model_path=variant.gguf_file or "model.gguf")
    budget = total - llama.FIT_TARGET_BYTES

    growing = [layer for layer in layout.kv_layers if not layer.swa] or list(layout.kv_layers)
    # Layers of one shape cost the same: count each (K width, V width) once, in first-seen order.
    widths = Counter((layer.k_width, layer.v_width) for layer in growing)

    def per_token(cache_type: str) -> int:
        return sum(count * (llama.row_size(cache_type, k_width) + (llama.row_size(cache_type, v_width) if v_width else 0))
                   for (k_width, v_width), count in widths.items())

    def max_ctx(cache_type: str) -> int:
        return llama.max_ctx_that_fits(layout, replace(settings, cache_type_k=cache_type, cache_type_v=cache_type), weights, budget)

    q8_settings = replace(settings, cache_type_k="q8_0", cache_type_v="q8_0")
    small = llama.use_at_ubatch(layout, settings, weights, llama.SMALL_UBATCH)
    shrinks = small.compute_bytes < result.compute_buffer_bytes
    offload_ctx, offload_layers = _short_context_offload(layout, settings, weights, budget, result.gpu_layers_that_fit or 0)

    return LlamaNumbers(
        ctx_size=layout.n_ctx_train,
        parallel=1,
        n_ctx=result.n_ctx,
        kv_cells=result.kv_cells,
        bytes_per_token_f16=per_token("f16"),
        bytes_per_token_q8_0=per_token("q8_0"),
        bytes_per_token_q4_0=per_token("q4_0"),
        kv_bytes=result.kv_bytes,
        weights_bytes=weights,
        compute_buffer_bytes=result.compute_buffer_bytes,
        total_bytes=result.gpu_bytes,
        fits=bool(result.fits),
        max_ctx_f16=result.max_ctx_that_fits or 0,
        max_ctx_q8_0=max_ctx("q8_0"),
        max_ctx_q4_0=max_ctx("q4_0"),
        num_layers=layout.n_layer,
        gpu_layers_that_fit=result.gpu_layers_that_fit or 0,
        kv_log_lines=result.log_lines,
        error="\n".join(result.oom_lines) if result.oom_lines else None,
        assumptions=_window_note(tuple("sliding" if layer.swa else "full" for layer in layout.kv_layers), layout.n_swa)
        + tuple(b for b in result.basis if not b.startswith("KV bytes: exact")),
        kv_bytes_q8_0=llama.plan_kv(layout, q8_settings).kv_bytes,
        offload_ctx=offload_ctx,
        offload_gpu_layers=offload_layers,
        ubatch_size=settings.ubatch_size,
        small_ubatch=llama.SMALL_UBATCH if shrinks else 0,
        compute_buffer_bytes_small_ubatch=small.compute_bytes if shrinks else 0,
        total_bytes_small_ubatch=small.total_bytes if shrinks else 0,
    )


def _short_context_offload(layout: llama.KvLayout, settings, weights: int, budget: int, layers_at_full: int) -> tuple[int, int]:
    """(-c, -ngl) for partial offload when not one layer fits beside the whole context's cache: at
    llama.cpp's smallest --fit context (FIT_MIN_CTX) the cache is small, so layers fit again, or,
    when one layer's weights alone pass the GPU, none do (-ngl 0). (0, 0) when layers fit at the full context."""
    if layers_at_full > 0:
        return 0, 0
    short = replace(settings, ctx_size=min(layout.n_ctx_train, llama.FIT_MIN_CTX))
    return short.ctx_size, llama.gpu_layers_that_fit(layout, llama.plan_kv(layout, short), short, weights, budget)


def _ollama_numbers(gpu: Gpu, model: Model, variant: ModelVariant, weights: int, llama_numbers: LlamaNumbers,
                    layout: llama.KvLayout) -> OllamaNumbers:
    total = gpu_total_bytes(gpu)
    common = dict(version=OLLAMA_VERSION, weights_bytes=weights, gpu_total_bytes=total,
                  compute_capability=gpu.compute_capability, gpu_library="rocm" if gpu.vendor == "amd" else "cuda",
                  model_name=variant.ollama_tag or model.id)
    result = ollama.estimate_ollama(layout, **common)
    q8 = ollama.estimate_ollama(layout, env=ollama.OllamaEnv(kv_cache_type="q8_0"), **common)
    error = result.error
    if error is None and result.fits is False and result.processor:
        error = f"ollama ps: PROCESSOR {result.processor}"
    return OllamaNumbers(
        version=OLLAMA_VERSION,
        default_num_ctx=ollama.default_num_ctx(ollama.parse_version(OLLAMA_VERSION), total),
        num_ctx=result.num_ctx,
        num_parallel=result.num_parallel,
        kv_bytes=result.kv_bytes,
        kv_bytes_q8_0=q8.kv_bytes,
        total_bytes=result.weights_bytes + result.kv_bytes + result.compute_buffer_bytes,
        fits=bool(result.fits),
        # Ollama with OLLAMA_NUM_PARALLEL=1 launches `llama-server -c num_ctx -np 1`: the same cache as llama.cpp's one slot.
        max_num_ctx_f16=min(llama_numbers.max_ctx_f16, layout.n_ctx_train),
        max_num_ctx_q8_0=min(llama_numbers.max_ctx_q8_0, layout.n_ctx_train),
        gpu_layers_that_fit=result.gpu_layers or 0,
        num_layers=layout.n_layer,
        error=error,
        assumptions=result.notes,
    )


def _ollama_scenario(numbers: OllamaNumbers) -> str | None:
    if numbers.fits:
        return None
    return "ollama-partial-offload" if numbers.gpu_layers_that_fit > 0 else "ollama-system-memory"


def _vllm_scenario(numbers: VllmNumbers) -> str | None:
    # The startup check runs before anything loads, when the reader's error printed its free memory.
    if numbers.free_bytes is not None and numbers.free_bytes < numbers.requested_bytes:
        return "vllm-startup-free-memory"
    # vLLM does not cap loading at the utilization: weights above the budget still load and
    # the profiler then finds no room for blocks. Only weights past the card itself OOM on load.
    if numbers.weights_bytes + numbers.non_torch_bytes > numbers.total_memory_bytes:
        return "vllm-weights-oom"
    if numbers.error is None:
        # The cache is allocated; the sampler warm-up then has only what is outside the budget.
        if numbers.sampler_peak_bytes > numbers.warmup_headroom_bytes:
            return "vllm-sampler-warmup-oom"
        return None
    if numbers.available_bytes - numbers.bytes_per_block <= 0:
        return "vllm-no-cache-blocks"
    return "vllm-kv-too-small"


def _llama_scenario(numbers: LlamaNumbers, total: int) -> str | None:
    if numbers.fits:
        return None
    if numbers.weights_bytes + llama.FIT_TARGET_BYTES > total:
        return "llamacpp-context-fail"
    return "llamacpp-kv-alloc"


def compute_pair(gpu: Gpu, model: Model, variant: ModelVariant, settings=None, detail: str = DETAIL_FULL) -> PairNumbers:
    """The pair's numbers; detail: how much of vLLM's remediation to work out (DETAIL_FULL, _LEVERS, _OWN)."""
    work = _work(model, variant)
    weights, estimated, basis = work.weights
    vllm_numbers = llama_numbers = ollama_numbers = sglang_numbers = None
    scenarios: list[str] = []
    if "vllm" in variant.engines:
        smaller = []
        for other in model.variants:
            if other.id != variant.id and "vllm" in other.engines:
                other_weights = _work(model, other).weights[0]
                if other_weights < weights:
                    smaller.append((other, other_weights))
        vllm_numbers, remedies = _vllm_numbers(gpu, model, variant, settings, smaller)
        scenario = _vllm_scenario(vllm_numbers)
        vllm_scenario = scenario
        if scenario == "vllm-weights-oom":
            # torch raises its own CUDA OOM while loading; vLLM never reaches its KV check.
            vllm_numbers = replace(vllm_numbers, error=None)
        elif scenario == "vllm-startup-free-memory":
            assert vllm_numbers.free_bytes is not None
            vllm_numbers = replace(vllm_numbers, error=startup_free_memory_text(
                vllm_numbers.free_bytes, vllm_numbers.total_memory_bytes, vllm_numbers.utilization, vllm_numbers.requested_bytes))
        elif scenario == "vllm-sampler-warmup-oom":
            vllm_numbers = replace(vllm_numbers, error=(
                f"RuntimeError: CUDA out of memory occurred when warming up sampler with {vllm_numbers.max_num_seqs} dummy "
                "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."))
        if scenario:
            scenarios.append(scenario)
        sglang_numbers = _sglang_numbers(gpu, work, weights)
        scenario = sglang_scenario(sglang_numbers)
        if scenario:
            scenarios.append(scenario)
        levers = detail in (DETAIL_FULL, DETAIL_LEVERS) or bool(scenarios)
        grid = detail == DETAIL_FULL or bool(vllm_scenario)
        if levers or grid:
            vllm_numbers = replace(vllm_numbers, levers=remedies.levers() if levers else (),
                                   grid=remedies.grid() if grid else ())
    else:
        # One layout for both engines and every GPU: it keeps what sizing its cache derives (KvLayout._memo).
        layout = work.layout
        llama_numbers = _llama_numbers(gpu, model, variant, weights, layout)
        scenario = _llama_scenario(llama_numbers, gpu_total_bytes(gpu))
        if scenario:
            scenarios.append(scenario)
        if variant.ollama_tag:
            ollama_numbers = _ollama_numbers(gpu, model, variant, weights, llama_numbers, layout)
            scenario = _ollama_scenario(ollama_numbers)
            if scenario:
                scenarios.append(scenario)
    return PairNumbers(
        gpu=gpu.id,
        model=model.id,
        variant=variant.id,
        weights_bytes=weights,
        weights_estimated=estimated,
        weights_basis=basis,
        vllm=vllm_numbers,
        llamacpp=llama_numbers,
        ollama=ollama_numbers,
        scenarios=tuple(scenarios),
        sglang=sglang_numbers,
    )


@dataclass(frozen=True)
class PairTask:
    """One compute_pair call of the catalog: what compute_results runs, and what a build may cache or farm out."""

    key: tuple[str, str, str]
    gpu: Gpu
    model: Model
    variant: ModelVariant
    settings: object  # PairSettings, _ExampleSettings or None
    detail: str = DETAIL_FULL  # how much of vLLM's remediation its pages show (compute_pair)

    def run(self) -> PairNumbers:
        return compute_pair(self.gpu, self.model, self.variant, self.settings, self.detail)


def shared(value: object, pool: dict) -> object:
    """An equal value whose equal parts are single objects from pool (strings, numbers, tuples and
    frozen result dataclasses, compared by type and value). A catalog's numbers repeat the same
    flags, labels, notes and grid cells across thousands of pairs; at 150k pairs those copies were
    most of a build's memory."""
    kind = type(value)
    if kind is str or kind is int or kind is float:
        return pool.setdefault((kind, value), value)
    if kind is tuple:
        parts = _shared_parts(value, pool)  # type: ignore[arg-type]
        if all(part is original for part, original in zip(parts, value)):  # type: ignore[call-overload]
            parts = value  # type: ignore[assignment]  # already made of pool objects: the tuple itself can be the pool's
        return pool.setdefault((tuple, tuple(map(id, parts))), parts)
    fields = _frozen_fields(kind)
    if fields is None:
        return value
    names, getter = fields
    values = getter(value)
    parts = _shared_parts(values, pool)
    key = (kind, tuple(map(id, parts)))
    found = pool.get(key)
    if found is None:
        same = all(part is original for part, original in zip(parts, values))
        found = pool[key] = value if same else kind(**dict(zip(names, parts)))
    return found


def _shared_parts(values: tuple, pool: dict) -> tuple:
    """shared() of each value; strings and numbers are looked up here rather than in a call of their own."""
    parts = []
    for part in values:
        kind = type(part)
        if kind is str or kind is int or kind is float:
            parts.append(pool.setdefault((kind, part), part))
        elif kind is tuple or _frozen_fields(kind) is not None:
            parts.append(shared(part, pool))
        else:
            parts.append(part)  # what shared() returns unchanged: None, bools, mutable values
    return tuple(parts)


# For each type that is a frozen dataclass, its field names and a getter of their values as a tuple;
# None for other types: what shared() asks of every part.
_FROZEN_FIELDS: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple]] | None] = {}


def _frozen_fields(kind: type) -> tuple[tuple[str, ...], Callable[[Any], tuple]] | None:
    try:
        return _FROZEN_FIELDS[kind]
    except KeyError:
        pass
    fields = getattr(kind, "__dataclass_fields__", None)
    found = None
    if fields is not None and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        names = tuple(fields)
        getter = attrgetter(*names) if len(names) > 1 else (lambda value: tuple(getattr(value, name) for name in names))
        found = names, getter
    if len(_FROZEN_FIELDS) < 1024:  # types are few; a stream of made-up classes does not grow it
        _FROZEN_FIELDS[kind] = found
    return found


# Minimum CUDA compute capability vLLM's kernels need for a checkpoint format
# (QuantizationConfig.get_min_capability): AWQ 75 ("The AWQ kernel only supports Turing or newer
# GPUs", vllm/model_executor/layers/quantization/awq.py); FP8 75, as weight-only W8A16 through
# Marlin below 8.9 (https://docs.vllm.ai/en/v0.32.0/features/quantization/llm_compressor/fp8/); GPTQ 60.
# A pair below the minimum gets no vLLM numbers or page.
_MIN_CAPABILITY = {"awq": (7, 5), "fp8": (7, 5), "gptq": (6, 0)}


def runs_on(gpu: Gpu, variant: ModelVariant) -> bool:
    needed = _MIN_CAPABILITY.get(variant.format)
    capability = _capability(gpu)
    return needed is None or capability is None or capability >= needed


def pair_tasks(dataset: Dataset) -> list[PairTask]:
    """Every (GPU, model, variant) of the catalog with the settings it is computed under, in catalog order."""
    settings_for: dict[tuple[str, str, str], object] = {(p.gpu, p.model, p.variant): p.settings for p in dataset.pairs}
    # An error's worked example may fix the utilization it was reported with.
    for error in dataset.errors.values():
        ex = error.example
        if ex.gpu_memory_utilization is not None or ex.free_gib is not None:
            key = (ex.gpu, ex.model, ex.variant)
            settings_for.setdefault(key, _ExampleSettings(ex.gpu_memory_utilization, ex.free_gib))
    shown = {(p.gpu, p.model, p.variant) for p in dataset.pairs}  # featured: pages whatever the pair hits
    shown.update((e.example.gpu, e.example.model, e.example.variant) for e in dataset.errors.values())
    tasks = []
    for gpu in dataset.gpus.values():
        for model in dataset.models.values():
            sibling = vllm_sibling(model)
            for variant in model.variants:
                if not runs_on(gpu, variant):
                    continue
                key = (gpu.id, model.id, variant.id)
                detail = DETAIL_FULL if key in shown else DETAIL_LEVERS if variant.id == sibling else DETAIL_OWN
                tasks.append(PairTask(key, gpu, model, variant, settings_for.get(key), detail))
    return tasks


def smallest_vllm_build(variants: Sequence[ModelVariant]) -> ModelVariant | None:
    """The smallest checkpoint vLLM runs: the build a page of another engine's build shows vLLM's commands for."""
    return min((v for v in variants if "vllm" in v.engines), key=lambda v: (v.checkpoint_bytes or 0, v.id), default=None)


def vllm_sibling(model: Model) -> str | None:
    """The build whose vLLM commands the pages of the model's other builds show (the planner's
    sibling for vLLM), when a build vLLM does not run asks for one."""
    if all("vllm" in v.engines for v in model.variants):
        return None  # compute_pair gives every vLLM build its own vLLM numbers: none asks for a sibling's
    build = smallest_vllm_build(model.variants)
    return build.id if build is not None else None


def unsizable_variants(dataset: Dataset) -> list[tuple[str, int, str]]:
    """(model id, variant index, why) for each build the engines that run it cannot size: compute
    would stop on it, so the build reports it at the record first."""
    found = []
    for model in dataset.models.values():
        for i, variant in enumerate(model.variants):
            try:  # the variant's work, which compute_pair then takes from _WORK (forked workers inherit it)
                work = _work(model, variant)
                if "llamacpp" in variant.engines:
                    # the pages compare llama.cpp's q8_0 cache, which a head size off its block refuses
                    llama.check_cache_types(work.layout, "q8_0", "q8_0")
                else:
                    _ = work.facts.geometry
            except (GeometryError, llama.LlamaCppError) as error:
                found.append((model.id, i, str(error)))
    return found


def compute_results(dataset: Dataset) -> dict[tuple[str, str, str], PairNumbers]:
    return {task.key: task.run() for task in pair_tasks(dataset)}


@dataclass(frozen=True, slots=True)
class _ExampleSettings:
    gpu_memory_utilization: float | None
    free_gib: float | None = None
