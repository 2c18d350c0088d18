"""vLLM's KV-budget rules by release, each row with the upstream file at a tag that states it.

The budget model in generator/engine/vllm/ asks this table which rule a release applies;
the arithmetic stays there. Pure data and small integer functions (no I/O), so it ports to
the calculator's JavaScript line by line. Versions are (major, minor, patch) tuples; a row
holds from `first` to `last` inclusive. Rows were read in the release wheels (the wheel's
`vllm/` tree is the tag's tree); the research note docs/research/vllm-budget-by-release.md
lists the releases read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from generator.units import GIB

_END = (9, 99, 99)

# --------------------------------------------------------------------------- the sampler warm-up

# Which top-k/top-p implementation the dummy sampler run (`_dummy_sampler_run`: max_num_seqs rows
# x vocab logits, top_k = vocab - 1, top_p = 0.9) takes by default.
NATIVE, FLASHINFER, TRITON, V0_SAMPLER = "native", "flashinfer", "triton", "v0"
SAMPLER_BACKENDS = (NATIVE, FLASHINFER, TRITON)

# Bytes the warm-up holds per logit (row x vocab entry) at its peak on each path. On every path the dummy run's
# own `logits` (the model dtype, 2 B) stays referenced while Sampler.forward works on
# `logits.to(torch.float32)` (4 B) (gpu_model_runner.py _dummy_sampler_run and sampler.py, 0.9.2-0.33 read).
# native: apply_top_k_top_p_pytorch sorts (fp32 values 4 + int64 indices 8), two bool masks (1 + 1), the fp32
# softmax/cumsum (4) while the CUDA segmented radix sort needs a second key/value buffer (4 + 8) = 40 B.
# H100 logs at 1024 sequences print 37-40 B (0.10.1.1, 0.11.0).
# flashinfer: flashinfer_sample -> flashinfer.sampling.top_k_top_p_sampling_from_logits, whose default
# filter_apply_order "top_k_first" allocates the masked logits (top_k_mask_logits: torch.empty_like, 4 B) and
# their softmax (4) = 2 + 4 + 4 + 4 = 14 B (flashinfer-python 0.2.8, 0.3.1 and 0.6.8.post1 read, the versions
# vLLM 0.10-0.11 and 0.20-0.21 pin). Up to 0.8.x vLLM passes its own fp32 softmax to
# top_k_top_p_sampling_from_probs instead: 2 + 4 + 4 = 10 B (read at 0.8.5).
# triton: apply_top_k_top_p_triton masks the fp32 logits in place (its per-SM row buffer is kept in
# _TRITON_BUFFER_CACHE, min(SMs, rows) x vocab x 4 B, not modelled), then forward_native takes their softmax
# (4) and random_sample the exponential noise q = torch.empty_like(probs) (4) = 2 + 4 + 4 + 4 = 14 B.
SAMPLER_BYTES_PER_LOGIT = {NATIVE: 40, FLASHINFER: 14, TRITON: 14, V0_SAMPLER: 40}
FLASHINFER_FROM_PROBS_BYTES, FLASHINFER_FROM_LOGITS_FROM = 10, (0, 9, 0)
SAMPLER_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/v1/sample/ops/topk_topp_sampler.py "
    "(forward_native: apply_top_k_top_p, softmax, random_sample's q; flashinfer_sample), "
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/v1/sample/sampler.py (logits.to(torch.float32)), "
    "https://github.com/flashinfer-ai/flashinfer/blob/v0.6.8.post1/flashinfer/sampling.py (top_k_top_p_sampling_from_logits)"
)
SAMPLER_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.8.5/vllm/v1/sample/ops/topk_topp_sampler.py",
    "https://github.com/vllm-project/vllm/blob/v0.9.2/vllm/v1/sample/ops/topk_topp_sampler.py",
    "https://github.com/vllm-project/vllm/blob/v0.17.1/vllm/v1/sample/ops/topk_topp_sampler.py",
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/v1/sample/ops/topk_topp_triton.py",
    "https://github.com/flashinfer-ai/flashinfer/blob/v0.3.1/flashinfer/sampling.py",
)

# The V2 GPU model runner (vllm/v1/worker/gpu/) warms its own sampler up with InputBatch.make_dummy: the dummy
# requests keep the sampling states' defaults (temperature 0, top_k = vocab, top_p = 1), so no top-k/top-p runs.
# 0.22-0.25: apply_sampling_params always copies the logits to fp32: 2 + 4 = 6 B (read at 0.22.1, 0.24.0, 0.25.0).
# 0.26 mutates the model-dtype logits in place; from 0.27 it returns them untouched when no request needs
# processing: the logits alone, 2 B (read at 0.26.0, 0.27.1, 0.28.0, 0.31.0).
V2_SAMPLER_BYTES_PER_LOGIT = (((0, 22, 0), 6), ((0, 26, 0), 2))
# From 0.33 _dummy_sampler_run makes a second pass with SamplingParams.for_sampler_warmup (temperature, top-k 50,
# top-p 0.9, min_p, penalties, logit bias, bad words, logprobs): apply_sampling_params copies the logits to fp32 (4 B
# beside the caller's 2 B), the logits processors, temperature and min_p work in place, then FlashInfer's
# top_k_top_p_sampling_from_logits holds its masked logits and their softmax (4 + 4 B: 14 B, as V1's FlashInfer path),
# or, without FlashInfer, the Triton top-k/top-p kernel masks in place and the Gumbel kernel keeps per-block maxima
# only (6 B). Read at v0.33.0 (model_runner.py _dummy_sampler_run, sample/sampler.py, sample/gumbel.py).
V2_WARMUP_PASS_FROM = (0, 33, 0)
V2_WARMUP_PASS_BYTES = {FLASHINFER: SAMPLER_BYTES_PER_LOGIT[FLASHINFER], TRITON: 6}
V2_WARMUP_PASS_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/model_runner.py#L1008",
    "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/sample/sampler.py",
    "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/sample/ops/topk_topp_sampler.py#L631",
)
V2_SAMPLER_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.22.1/vllm/v1/worker/gpu/sample/sampler.py#L133",
    "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/v1/worker/gpu/sample/sampler.py",
    "https://github.com/vllm-project/vllm/blob/v0.27.1/vllm/v1/worker/gpu/sample/sampler.py#L155",
    "https://github.com/vllm-project/vllm/blob/v0.27.1/vllm/v1/worker/gpu/model_runner.py#L683",
)


@dataclass(frozen=True)
class SamplerRow:
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    backend: str
    source: str


SAMPLER_DEFAULTS: tuple[SamplerRow, ...] = (
    # V0's profile run samples max_num_seqs dummy prompts with top_p=0.99 and top_k=vocab-1, and its
    # _apply_top_k_top_p sorts them as V1's native path does (about 40 B per logit: the V0 TP=4 0.8.5
    # start prints 1.45 GiB for 256 x 151,936 logits). Multimodal models profile fewer sequences
    # (max_num_batched_tokens // the largest multimodal item), which this table does not model.
    SamplerRow((0, 0, 0), (0, 7, 99), V0_SAMPLER,
               "https://github.com/vllm-project/vllm/blob/v0.7.3/vllm/worker/model_runner.py#L1237"),
    # FlashInfer when installed, but it is an optional extra of the wheel
    # (`Provides-Extra: flashinfer` in the 0.11.0 METADATA): a plain `pip install vllm` sorts.
    SamplerRow((0, 8, 0), (0, 11, 99), NATIVE,
               "https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/v1/sample/ops/topk_topp_sampler.py#L39"),
    # FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1.
    SamplerRow((0, 12, 0), (0, 16, 99), NATIVE,
               "https://github.com/vllm-project/vllm/blob/v0.12.0/vllm/v1/sample/ops/topk_topp_sampler.py#L46"),
    # A Triton top-k/top-p kernel replaces the sort for batches of 8 rows or more.
    SamplerRow((0, 17, 0), (0, 20, 99), TRITON,
               "https://github.com/vllm-project/vllm/blob/v0.17.1/vllm/v1/sample/ops/topk_topp_sampler.py#L251"),
    # VLLM_USE_FLASHINFER_SAMPLER defaults to True again.
    SamplerRow((0, 21, 0), _END, FLASHINFER,
               "https://github.com/vllm-project/vllm/blob/v0.21.0/vllm/envs.py#L726"),
)


def default_sampler_backend(version: tuple[int, int, int]) -> str:
    for row in SAMPLER_DEFAULTS:
        if row.first <= version <= row.last:
            return row.backend
    return FLASHINFER


# From 0.17 the PyTorch-native forward (TopKTopPSampler.forward_native, the path taken when FlashInfer is off,
# e.g. VLLM_USE_FLASHINFER_SAMPLER=0) calls apply_top_k_top_p, which runs the Triton top-k/top-p kernel whenever
# Triton is installed: "native" no longer sorts the vocabulary.
NATIVE_RUNS_TRITON_FROM = (0, 17, 0)
NATIVE_RUNS_TRITON_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.17.1/vllm/v1/sample/ops/topk_topp_sampler.py#L251",
    "https://github.com/vllm-project/vllm/blob/01fa3fe74b058bb604f236341ab2361c7cf3d25b/vllm/v1/sample/ops/topk_topp_sampler.py",
)


# The release rules below are read by every plan (a catalog plans ~100k times over a few GPU names and
# releases); each answer depends only on its arguments (the tables are constants), so a bounded memo
# keyed by value and type answers the repeats.
@lru_cache(maxsize=1024, typed=True)
def sampler_bytes_per_logit(version: tuple[int, int, int], backend: str | None, v0: bool = False,
                            v2_runner: bool = False) -> int:
    if v0 or version < (0, 8, 0):
        return SAMPLER_BYTES_PER_LOGIT[V0_SAMPLER]
    backend = backend or default_sampler_backend(version)
    if backend == NATIVE and version >= NATIVE_RUNS_TRITON_FROM:
        backend = TRITON
    if v2_runner and version >= V2_WARMUP_PASS_FROM:
        return V2_WARMUP_PASS_BYTES[backend]
    if v2_runner and version >= V2_SAMPLER_BYTES_PER_LOGIT[0][0]:
        return [size for first, size in V2_SAMPLER_BYTES_PER_LOGIT if first <= version][-1]
    if backend == FLASHINFER and version < FLASHINFER_FROM_LOGITS_FROM:
        return FLASHINFER_FROM_PROBS_BYTES
    return SAMPLER_BYTES_PER_LOGIT[backend]


# --------------------------------------------------------------------------- which engine starts

# V1 is the default from 0.8.0, but up to 0.10.1 EngineArgs._is_v1_supported_oracle falls back to V0
# on CUDA GPUs below compute capability 8.0 ("Compute Capability < 8.0"); 0.10.2 drops the check.
V0_FALLBACK_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.8.0/vllm/engine/arg_utils.py#L1475",
    "https://github.com/vllm-project/vllm/blob/v0.10.1.1/vllm/engine/arg_utils.py#L1403",
)
# Volta, Turing and Pascal parts by the names CUDA reports (Tesla T4/V100/P100/P40, GeForce RTX 20xx
# and GTX, TITAN RTX, Quadro RTX).
_PRE_AMPERE = re.compile(r"\b(t4|v100s?|p100|p40|p4|titan rtx|quadro rtx \d{4}|rtx 20[5-8]0( ti| super)?|gtx \d{3,4}( ti)?)\b")


@lru_cache(maxsize=1024, typed=True)
def is_pre_ampere_gpu(gpu_name: str) -> bool:
    return bool(_PRE_AMPERE.search(gpu_name.lower()))


def v0_on_pre_ampere(version: tuple[int, int, int]) -> bool:
    """0.8.0-0.10.1: V1 by default, V0 on a GPU below compute capability 8.0."""
    return (0, 8, 0) <= version < (0, 10, 2)


@lru_cache(maxsize=1024, typed=True)
def runs_v0_engine(version: tuple[int, int, int], gpu_name: str = "") -> bool:
    """Whether `vllm serve` starts the V0 engine: every release before 0.8, and 0.8.0-0.10.1 on a GPU
    below compute capability 8.0."""
    if version < (0, 8, 0):
        return True
    return v0_on_pre_ampere(version) and is_pre_ampere_gpu(gpu_name)


# --------------------------------------------------------------------------- scheduler defaults


# A tier: (least total GPU bytes, name keys one of which the GPU's name must hold (none: any GPU), name
# keys it must not hold, max_num_seqs, max_num_batched_tokens); a release's first tier the GPU meets applies.
Tier = tuple[int, tuple[str, ...], tuple[str, ...], int, int]
_BY_NAME = ("h100", "h200")
_NOT_LARGE = ("a100", "gb10")


@dataclass(frozen=True)
class BatchRow:
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    rule: str
    source: str
    tiers: tuple[Tier, ...] = ()  # V1's; V0 (the first row, and pre-Ampere GPUs to 0.10.1) goes by the length


BATCH_DEFAULTS: tuple[BatchRow, ...] = (
    BatchRow((0, 0, 0), (0, 7, 99), "v0: 256 sequences; max(max_model_len, 2048) tokens, or the chunked-prefill "
             "budget when max_model_len > 32768 (512 tokens to 0.6.4, 2048 from 0.6.5)",
             "https://github.com/vllm-project/vllm/blob/v0.6.4/vllm/config.py#L1110"),
    BatchRow((0, 8, 0), (0, 8, 3), "1024 sequences on every GPU; 8192 tokens on H100/H200 by name, else 2048",
             "https://github.com/vllm-project/vllm/blob/v0.8.0/vllm/engine/arg_utils.py#L1693",
             ((0, _BY_NAME, (), 1024, 8192), (0, (), (), 1024, 2048))),
    BatchRow((0, 8, 4), (0, 8, 4), "1024 sequences and 8192 tokens on H100/H200 by name, else 256 and 2048",
             "https://github.com/vllm-project/vllm/blob/v0.8.4/vllm/engine/arg_utils.py#L1669",
             ((0, _BY_NAME, (), 1024, 8192), (0, (), (), 256, 2048))),
    BatchRow((0, 8, 5), (0, 8, 99), ">= 70 GiB: 1024 and 8192, else 256 and 2048",
             "https://github.com/vllm-project/vllm/blob/v0.8.5/vllm/engine/arg_utils.py#L1596",
             ((70 * GIB, (), (), 1024, 8192), (0, (), (), 256, 2048))),
    BatchRow((0, 9, 0), (0, 27, 99), ">= 70 GiB and not A100: 1024 and 8192, else 256 and 2048",
             "https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/engine/arg_utils.py#L1605",
             ((70 * GIB, (), _NOT_LARGE, 1024, 8192), (0, (), (), 256, 2048))),
    BatchRow((0, 28, 0), _END, ">= 160 GiB: 1024 and 16384; >= 70 GiB and not A100: 1024 and 8192; else 256 and 2048",
             "https://github.com/vllm-project/vllm/blob/v0.28.0/vllm/engine/arg_utils.py#L2582",
             ((160 * GIB, (), (), 1024, 16384), (70 * GIB, (), _NOT_LARGE, 1024, 8192), (0, (), (), 256, 2048))),
)
V0_MAX_NUM_SEQS = 256
V0_CHUNKED_PREFILL_ABOVE = 32768  # V0 turns chunked prefill on by itself above this length (create_engine_config)
V0_MIN_BATCHED_TOKENS = 2048


def v0_chunked_prefill_tokens(version: tuple[int, int, int]) -> int:
    return 2048 if version >= (0, 6, 5) else 512


def _v0_batched_tokens(version: tuple[int, int, int], max_model_len: int) -> int:
    if max_model_len > V0_CHUNKED_PREFILL_ABOVE:
        return v0_chunked_prefill_tokens(version)
    return max(max_model_len, V0_MIN_BATCHED_TOKENS)


def batch_tiers(version: tuple[int, int, int]) -> tuple[Tier, ...]:
    """The release's V1 tiers (empty before 0.8, where only V0 runs)."""
    for row in BATCH_DEFAULTS:
        if row.first <= version <= row.last:
            return row.tiers
    return ()


@lru_cache(maxsize=1024, typed=True)
def batch_defaults_for(version: tuple[int, int, int], gpu_total_bytes: int, gpu_name: str = "",
                       max_model_len: int = 2048) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) `vllm serve` picks on this GPU in that release."""
    if runs_v0_engine(version, gpu_name):
        return V0_MAX_NUM_SEQS, _v0_batched_tokens(version, max_model_len)
    name = gpu_name.lower()
    for least, names, excluded, seqs, tokens in batch_tiers(version):
        if gpu_total_bytes >= least and (not names or any(k in name for k in names)) and not any(k in name for k in excluded):
            return seqs, tokens
    raise AssertionError(f"no batch tier for {version}")  # every row ends with a tier every GPU meets


# --------------------------------------------------------------------------- multimodal towers


# Gemma 4 (a model rule, not a release rule): what Gemma4ForConditionalGeneration loads beside the language model.
GEMMA4_MM_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/01bae2190e1c298115941f50bd6ed508216f24e7/vllm/model_executor/models/gemma4_mm.py "
    "(Gemma4ForConditionalGeneration.__init__: vision tower and embed_vision, the audio tower and embed_audio when the "
    "config has audio_config, and a per_layer_embeddings buffer of max_num_batched_tokens x layers x "
    "hidden_size_per_layer_input in the model dtype); towers of modalities whose --limit-mm-per-prompt is 0 are not "
    "built (SupportsMultiModal._mark_tower_model, "
    "https://github.com/ROCm/vllm/blob/726f324dc518ebfabb4efce7e285d1dfefde9f05/vllm/model_executor/models/interfaces.py); "
    "tower shapes from transformers' modeling_gemma4.py "
    "(https://github.com/huggingface/transformers/blob/0246b4f3335464614ef1de66531f9131a44ec801/src/transformers/models/gemma4/modeling_gemma4.py). "
    "Read at these commits, not at each release tag: that every release with Gemma 4 builds the same modules is not checked. "
    "The encoder's profiling run (dummy images through the vision tower) is not modelled."
)


# --------------------------------------------------------------------------- the CUDA-graph estimate


@dataclass(frozen=True)
class CudagraphRow:
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    subtracted_by_default: bool
    rocm_profiled: bool
    source: str


CUDAGRAPH_ESTIMATE: tuple[CudagraphRow, ...] = (
    # Graphs are captured after the KV cache is allocated, from the 1 - utilization headroom.
    CudagraphRow((0, 0, 0), (0, 17, 99), False, False,
                 "https://github.com/vllm-project/vllm/blob/v0.17.1/vllm/v1/worker/gpu_worker.py#L352"),
    # Profiled and logged, subtracted only with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (default "0").
    CudagraphRow((0, 18, 0), (0, 19, 99), False, False,
                 "https://github.com/vllm-project/vllm/blob/v0.18.0/vllm/envs.py#L1635"),
    # Default "1"; ROCm and XPU get no estimate (is_cuda() in 0.21-0.25, `not ROCm` in 0.20).
    CudagraphRow((0, 20, 0), (0, 25, 99), True, False,
                 "https://github.com/vllm-project/vllm/blob/v0.21.0/vllm/v1/worker/gpu_worker.py#L403"),
    # is_cuda_alike() or is_xpu(): ROCm is estimated too.
    CudagraphRow((0, 26, 0), _END, True, True,
                 "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/v1/worker/gpu_worker.py#L502"),
)

_ROCM_NAMES = ("mi2", "mi3", "mi4", "radeon", "instinct", "amd")


@lru_cache(maxsize=1024, typed=True)
def is_rocm_gpu(gpu_name: str) -> bool:
    name = gpu_name.lower()
    return any(key in name for key in _ROCM_NAMES)


@lru_cache(maxsize=1024, typed=True)
def subtracts_cudagraph_estimate_for(version: tuple[int, int, int], enforce_eager: bool, gpu_name: str = "",
                                     estimate_env: bool | None = None) -> bool:
    """Whether the profiled CUDA-graph estimate leaves the KV budget. `estimate_env` is
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS when set (None: the release default)."""
    if enforce_eager or version < (0, 18, 0):
        return False
    for row in CUDAGRAPH_ESTIMATE:
        if row.first <= version <= row.last:
            if is_rocm_gpu(gpu_name) and not row.rocm_profiled:
                return False
            return row.subtracted_by_default if estimate_env is None else estimate_env
    return False


# From 0.22 the V2 GPU model runner is the default for some models, and up to 0.28 its
# profile_cudagraph_memory returns 0, so nothing is subtracted for graphs whatever the env switch
# says; 0.29 gives it a real estimate. Which models get the V2 runner by default
# (VllmConfig.use_v2_model_runner / _is_default_v2_model_runner_model):
#   0.22-0.23: Qwen3ForCausalLM only, not MoE, not quantized;
#   0.24: the architectures listed in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES (Qwen3, Llama, Mistral,
#         DeepSeek-V2, Qwen2-MoE, Granite-MoE);
#   0.25-0.28: every generating model that is neither hybrid nor MoE, plus the listed MoE ones;
#   0.29-0.32: every model (dense, MoE, hybrid, multimodal, quantized) unless Triton is missing or a feature V2 lacks
#         is on (ngram speculative decoding, custom logits processors, sequence parallelism, dual batch overlap, ...:
#         _get_v2_model_runner_unsupported_features); on ROCm the architectures in ROCM_DEFAULT_MRV1_ARCHITECTURES
#         (DeepSeek-V3.2 and V4; GLM-MoE-DSA too in 0.31) keep the V1 runner, a list 0.32 drops. The T4 0.30.0 start
#         in the log table prints "Using V2 Model Runner" for Qwen2.5.
#   0.33: every model; its sampler warm-up adds a second pass with every sampling parameter on
#         (SamplingParams.for_sampler_warmup), so the warm-up peak is that pass's (V2_WARMUP_PASS_FROM below).
V2_RUNNER_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.22.0/vllm/config/vllm.py#L518",
    "https://github.com/vllm-project/vllm/blob/v0.24.0/vllm/config/vllm.py#L68",
    "https://github.com/vllm-project/vllm/blob/v0.26.0/vllm/config/vllm.py#L605",
    "https://github.com/vllm-project/vllm/blob/v0.28.0/vllm/v1/worker/gpu/model_runner.py#L843",
    "https://github.com/vllm-project/vllm/blob/v0.29.0/vllm/v1/worker/gpu/model_runner.py#L896",
    "https://github.com/vllm-project/vllm/blob/v0.29.0/vllm/config/vllm.py#L645",  # use_v2_model_runner: every model
    "https://github.com/vllm-project/vllm/blob/v0.29.0/vllm/config/vllm.py#L71",  # ROCM_DEFAULT_MRV1_ARCHITECTURES
    "https://github.com/vllm-project/vllm/blob/v0.31.0/vllm/config/vllm.py#L75",
    "https://github.com/vllm-project/vllm/blob/v0.32.0/vllm/config/vllm.py#L703",  # no ROCm list
    "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/model_runner.py#L1008",  # the warm-up pass
)
# config.json model_type of the architectures those lists name.
_V2_ARCHS_024 = ("qwen3", "llama", "mistral", "deepseek_v2", "qwen2_moe", "granitemoe")
_V2_MOE_ARCHS = ("deepseek_v2", "qwen2_moe", "granitemoe")
_ROCM_V1_ARCHS_029 = ("DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM")


@dataclass(frozen=True)
class V2RunnerRow:
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    model_types: tuple[str, ...] | None  # None: every model type
    moe_types: tuple[str, ...] | None  # the MoE model types it takes (None: every MoE model; others stay on V1)
    quantized: bool  # whether quantized checkpoints get it
    hybrid: bool = False  # whether hybrid (Mamba / linear-attention) models get it
    estimate_zero: bool = True  # profile_cudagraph_memory returns 0 (0.22-0.28)
    rocm_v1_archs: tuple[str, ...] = ()  # config.json architectures that keep the V1 runner on ROCm


V2_RUNNER_DEFAULTS: tuple[V2RunnerRow, ...] = (
    V2RunnerRow((0, 22, 0), (0, 23, 99), ("qwen3",), (), False),
    V2RunnerRow((0, 24, 0), (0, 24, 99), _V2_ARCHS_024, _V2_ARCHS_024, True),
    V2RunnerRow((0, 25, 0), (0, 28, 99), None, _V2_MOE_ARCHS, True),
    V2RunnerRow((0, 29, 0), (0, 30, 99), None, None, True, True, False, _ROCM_V1_ARCHS_029),
    V2RunnerRow((0, 31, 0), (0, 31, 99), None, None, True, True, False, _ROCM_V1_ARCHS_029 + ("GlmMoeDsaForCausalLM",)),
    V2RunnerRow((0, 32, 0), (0, 32, 99), None, None, True, True, False),
    V2RunnerRow((0, 33, 0), _END, None, None, True, True, False),
)


def v2_runner_row(version: tuple[int, int, int]) -> V2RunnerRow | None:
    """The release's default V2-runner rule (0.22 on), else None."""
    for row in V2_RUNNER_DEFAULTS:
        if row.first <= version <= row.last:
            return row
    return None


@lru_cache(maxsize=1024, typed=True)
def runs_v2_runner(version: tuple[int, int, int], model_type: str, is_moe: bool, is_hybrid: bool, quantized: bool,
                   architectures: tuple[str, ...] = (), rocm: bool = False) -> bool:
    """True when the release runs this model on the V2 model runner by default."""
    row = v2_runner_row(version)
    if row is None or (is_hybrid and not row.hybrid) or (rocm and any(a in row.rocm_v1_archs for a in architectures)):
        return False
    return ((row.model_types is None or model_type in row.model_types)
            and (not is_moe or row.moe_types is None or model_type in row.moe_types)
            and (row.quantized or not quantized))


@lru_cache(maxsize=1024, typed=True)
def v2_runner_skips_estimate(version: tuple[int, int, int], model_type: str, is_moe: bool, is_hybrid: bool,
                             quantized: bool) -> bool:
    """True when the release runs this model on the V2 model runner, whose estimate is 0 up to 0.28."""
    row = v2_runner_row(version)
    return row is not None and row.estimate_zero and runs_v2_runner(version, model_type, is_moe, is_hybrid, quantized)


# The V2 runner's sampler keeps per-request penalty statistics on the GPU from load_model on:
# PenaltiesState.prompt_bin_mask (max_num_reqs x cdiv(vocab, 32) int32) and output_bin_counts (max_num_reqs x vocab
# int32; "This tensor is rarely used but can be very large, taking up GBs of GPU memory"), made after the weights are
# measured and before the profile run. Up to 0.26 the budget (weights + non-torch growth + torch peak growth during
# profiling) does not see them; from 0.27 it subtracts everything resident after profiling (total_consumed, the drop in
# free memory since the worker's start snapshot), so they leave the KV budget. The T4 0.30.0 start prints it: 3.24 GiB
# consumed against 2.98 GiB of weights, 0.13 of non-torch base and 0.15 of these buffers at 256 x 151,936.
V2_PENALTIES_COUNTED_FROM = (0, 27, 0)
V2_PENALTIES_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.29.0/vllm/v1/worker/gpu/sample/penalties.py#L32",
    "https://github.com/vllm-project/vllm/blob/v0.29.0/vllm/v1/worker/gpu/model_runner.py#L437",  # Sampler(...) in load_model
    "https://github.com/vllm-project/vllm/blob/v0.27.1/vllm/v1/worker/gpu/sample/penalties.py#L40",
    "https://github.com/vllm-project/vllm/blob/v0.27.0/vllm/utils/mem_utils.py#L234",
)


def v2_penalties_bytes(version: tuple[int, int, int], max_num_seqs: int, vocab_size: int) -> int:
    """The V2 sampler's penalty buffers the release's budget subtracts (0 before 0.27)."""
    if version < V2_PENALTIES_COUNTED_FROM:
        return 0
    return max_num_seqs * (vocab_size + -(-vocab_size // 32)) * 4


# --------------------------------------------------------------------------- MLA block sizes

# CUDA picks an MLA backend that fixes the block size when the user gives none: FlashMLA (64, Hopper
# only: is_flashmla_supported needs compute capability 9.x) from 0.8.0, CUTLASS MLA (128) on
# Blackwell from 0.10.0; 0.20.0 and later keep those sizes as the backends' declared kernel block
# sizes. Other GPUs fall back to Triton MLA at the default 16 (an L4 PP=2 DeepSeek-V2-Lite log on
# 0.9.2 prints 807,792 tokens, not a multiple of 64).
MLA_BLOCK_SIZE_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.8.0/vllm/platforms/cuda.py#L158",
    "https://github.com/vllm-project/vllm/blob/v0.10.1.1/vllm/platforms/cuda.py#L176",
    "https://github.com/vllm-project/vllm/blob/v0.20.0/vllm/v1/attention/backends/mla/flashmla.py#L59",
    "https://github.com/vllm-project/vllm/blob/v0.20.0/vllm/v1/attention/backends/mla/cutlass_mla.py#L50",
)
_BLACKWELL_NAMES = ("b100", "b200", "b300", "gb200", "gb300")
_HOPPER_NAMES = ("h100", "h200", "h800", "h20", "gh200")


@lru_cache(maxsize=1024, typed=True)
def default_mla_block_size(version: tuple[int, int, int], gpu_name: str = "") -> int | None:
    """The block size vLLM forces for an MLA model on CUDA when --block-size is not given; None = the default."""
    name = gpu_name.lower()
    if version < (0, 8, 0) or is_rocm_gpu(gpu_name):
        return None
    if version >= (0, 10, 0) and any(key in name for key in _BLACKWELL_NAMES):
        return 128
    if is_hopper_gpu(gpu_name):
        return 64
    return None


# --------------------------------------------------------------------------- NCCL buffers in the non-torch term

# V1 up to 0.10.x takes the worker's start snapshot before init_worker_distributed_environment, so what the NCCL
# communicators and the custom all-reduce allocate at TP > 1 is part of the non-torch growth the budget subtracts
# (0.8.x subtracts all non-torch memory in use after profiling, which holds them too). From 0.11.0 the distributed
# environment is initialised first ("Initialize the distributed environment BEFORE taking memory snapshot",
# vllm pull request #25359): those buffers sit outside the budget and the non-torch line no longer holds them.
# The V0 worker takes its baseline in init_device before init_worker_distributed_environment in every release it
# ships in, so it counts them too: 0.6.0-0.6.3 subtract init_free - free after profiling, 0.6.4 every non-torch byte
# in use after it, and 0.6.5-0.10.x (memory_profiling) the growth since that baseline.
DISTRIBUTED_INIT_COUNTED = ((0, 8, 0), (0, 10, 99))
DISTRIBUTED_INIT_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.9.2/vllm/v1/worker/gpu_worker.py#L140",  # snapshot; distributed init at #L158
    "https://github.com/vllm-project/vllm/blob/v0.10.2/vllm/v1/worker/gpu_worker.py#L175",  # snapshot; distributed init at #L193
    "https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/v1/worker/gpu_worker.py#L165",  # distributed init; snapshot at #L182
    "https://github.com/vllm-project/vllm/pull/25359",
)
V0_DISTRIBUTED_INIT_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.6.0/vllm/worker/worker.py#L170",  # init_gpu_memory; distributed init at #L175
    "https://github.com/vllm-project/vllm/blob/v0.6.4/vllm/worker/worker.py#L140",  # init_gpu_memory; distributed init at #L145
    "https://github.com/vllm-project/vllm/blob/v0.6.5/vllm/worker/worker.py#L143",  # baseline for memory_profiling; #L148
    "https://github.com/vllm-project/vllm/blob/v0.10.1.1/vllm/worker/worker.py#L189",  # baseline_snapshot; #L194
)


def counts_distributed_init(version: tuple[int, int, int], v0: bool = False) -> bool:
    """Whether the release's budget holds the NCCL / custom all-reduce buffers of TP > 1 in its non-torch term:
    every V0 start, and V1 0.8-0.10.x."""
    return v0 or DISTRIBUTED_INIT_COUNTED[0] <= version <= DISTRIBUTED_INIT_COUNTED[1]


def is_hopper_gpu(gpu_name: str) -> bool:
    name = gpu_name.lower()
    return any(key in name for key in _HOPPER_NAMES)


# --------------------------------------------------------------------------- the graph-memory profile's custom all-reduce buffers

# 0.18-0.19 run profile_cudagraph_memory inside memory_profiling whenever graphs are on (the estimate itself leaves the
# budget only with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1). It captures its throwaway graphs under graph_capture(),
# which at TP > 1 enters the custom all-reduce's capture(): on exit register_graph_buffers opens every peer's captured
# all-reduce inputs with cudaIpcOpenMemHandle, and those handles are closed only when the CustomAllreduce is destroyed.
# So when clear_all_graphs and empty_cache free the profiling pool, its pages stay mapped by the peers and what the
# capture took stays in use: non-torch growth inside the profiling window (vllm pull request #46515 names the leak).
# The custom all-reduce runs where the TP group is fully NVLink-connected; the engine takes Hopper's SXM parts for that,
# as for the NCCL term. The size is the capture's, which vLLM measures and does not print here; the engine takes its
# own graph estimate. From 0.20 the estimate is subtracted as well, and whether the leak then counts twice is not
# checked against a log, so it is not modelled there.
PROFILING_CAPTURE_RETAINED = ((0, 18, 0), (0, 19, 99))
PROFILING_CAPTURE_RETAINED_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/v1/worker/gpu_worker.py#L366",  # memory_profiling holds the profile
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/v1/worker/gpu_model_runner.py#L5893",  # graph_capture() in the profile
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/distributed/parallel_state.py#L481",  # ca_comm.capture()
    "https://github.com/vllm-project/vllm/blob/v0.19.0/vllm/distributed/device_communicators/custom_all_reduce.py#L200",
    "https://github.com/vllm-project/vllm/pull/46515",
)


def retains_profiling_capture(version: tuple[int, int, int], tensor_parallel_size: int, enforce_eager: bool, gpu_name: str) -> bool:
    """Whether the graph-memory profile's capture stays in use as non-torch memory (custom all-reduce at TP > 1)."""
    first, last = PROFILING_CAPTURE_RETAINED
    return tensor_parallel_size > 1 and not enforce_eager and first <= version <= last and is_hopper_gpu(gpu_name)
