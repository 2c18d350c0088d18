"""vLLM's KV-cache capacity at engine start, reproduced block for block (vLLM 0.33.0).

What vLLM does (read in https://github.com/vllm-project/vllm/tree/v0.33.0, checked against the vllm-0.33.0 wheel):

1. Each worker (one per TP rank and PP stage) gets `available` bytes for its KV cache:
   `ceil(total * gpu_memory_utilization)` minus weights, non-torch growth, the activation
   peak of a dummy batch and (0.20+, unless eager) a CUDA-graph estimate; or exactly
   `--kv-cache-memory-bytes`. Only this step is a model (BudgetAssumptions below); the
   rest is vLLM's own arithmetic.
2. Layers are grouped (`vllm/v1/core/kv_cache_planning.py`); a block holds `block_size`
   tokens of every layer of one group, so `bytes_per_block` is the largest group's pages.
3. `num_blocks = available // bytes_per_block`, the smallest over workers.
4. One block is the null block. A request of `max_model_len` tokens must fit in the rest,
   or vLLM raises the "To serve at least one request ..." ValueError.

Arithmetic stays in plain integer functions so it ports line by line to JavaScript.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache
from typing import Any, Mapping

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    NO_CACHE,
    SLIDING,
    STATE,
    Geometry,
    GeometryError,
    geometry_from_hf_config,
    kv_heads_per_rank,
)
from generator.engine.vllm_releases import (
    SAMPLER_BACKENDS,
    batch_defaults_for,
    default_mla_block_size,
    sampler_bytes_per_logit,
    subtracts_cudagraph_estimate_for,
)
from generator.schema import MAX_BYTES, check_int, rope_scaling_problem

GiB = 1 << 30
MiB = 1 << 20

LATEST_VERSION = (0, 33, 0)
DEFAULT_BLOCK_SIZE = 16  # vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE (FlashAttention/Triton keep it)


class VllmInputError(ValueError):
    """A setting vLLM itself would reject, or one this engine cannot model."""


# --------------------------------------------------------------------------- versions


# A catalog plans every pair ~16 times and each plan reads the version three times; the regex was
# a visible share of that. Only strings are remembered (other values go through str() and may be
# unhashable), and only the first few dozen, so the memo stays small whatever callers pass.
_PARSED_VERSIONS: dict[str, tuple[int, int, int]] = {}
_PARSED_VERSIONS_MAX = 64


def parse_version(text: str | None) -> tuple[int, int, int]:
    if text is None:
        return LATEST_VERSION
    if type(text) is str:
        known = _PARSED_VERSIONS.get(text)
        if known is not None:
            return known
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-].*)?", str(text).strip())
    if not match:
        raise VllmInputError(f"vllm_version {text!r} is not a version like 0.33.0")
    version = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    if type(text) is str and len(_PARSED_VERSIONS) < _PARSED_VERSIONS_MAX:
        _PARSED_VERSIONS[text] = version
    return version


def format_version(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


def uses_v0_engine(version: tuple[int, int, int]) -> bool:
    # V1 became the default in 0.8.0 (VLLM_USE_V1=1); V0 was removed in 0.11.0.
    return version < (0, 8, 0)


def default_gpu_memory_utilization(version: tuple[int, int, int]) -> float:
    # vllm/config/cache.py: Field(default=0.92) since 0.20.0; 0.90 before.
    return 0.92 if version >= (0, 20, 0) else 0.90


def subtracts_cudagraph_estimate(version: tuple[int, int, int], enforce_eager: bool, gpu_name: str = "",
                                 estimate_env: bool | None = None) -> bool:
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1" from 0.20.0 (opt-in in 0.18/0.19);
    # ROCm gets no estimate before 0.26 (vllm_releases.CUDAGRAPH_ESTIMATE).
    return subtracts_cudagraph_estimate_for(version, enforce_eager, gpu_name, estimate_env)


def reserves_null_block_in_check(version: tuple[int, int, int]) -> bool:
    # get_kv_cache_configs subtracts one block before the fit check since 0.29.0.
    return version >= (0, 29, 0)


# --------------------------------------------------------------------------- KV dtype

# vllm/config/cache.py CacheDType (0.33.0), in vLLM's order: the invalid-dtype error lists it.
KV_CACHE_DTYPES = (
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla",
    "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
    "turboquant_3bit_nc", "octave_k3v4", "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit",
    "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
)
ONE_BYTE_KV_DTYPES = ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")
# MLAAttentionSpec state_content_bytes: a fixed packed size per token per MLA layer.
MLA_PACKED_BYTES_PER_TOKEN = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def invalid_kv_cache_dtype_text(value: str) -> str:
    # vllm/config/cache.py CacheConfig._validate_cache_dtype
    return f"Invalid kv_cache_dtype: {value!r}. Valid values are: {list(KV_CACHE_DTYPES)}"


def kv_bytes_per_token_per_layer(geometry: Geometry, kv_cache_dtype: str, tensor_parallel_size: int) -> int:
    """Bytes one token adds to one attention layer on one TP rank."""
    if kv_cache_dtype not in KV_CACHE_DTYPES:
        raise VllmInputError(invalid_kv_cache_dtype_text(kv_cache_dtype))
    if kv_cache_dtype in ("float16", "bfloat16") and kv_cache_dtype != geometry.dtype:
        # vllm/config/vllm.py VllmConfig._reject_mismatched_float_kv_cache
        raise VllmInputError(
            f'kv_cache_dtype="{kv_cache_dtype}" is incompatible with dtype="{geometry.dtype}". '
            f"Please set `--kv-cache-dtype` to `auto` or `{geometry.dtype}`."
        )
    if kv_cache_dtype in MLA_PACKED_BYTES_PER_TOKEN:
        if geometry.mla is None:
            raise VllmInputError(f"kv_cache_dtype {kv_cache_dtype} exists only for MLA models (DeepSeek V3.2)")
        return MLA_PACKED_BYTES_PER_TOKEN[kv_cache_dtype]
    if kv_cache_dtype == "auto" or kv_cache_dtype in ("float16", "bfloat16"):
        element = geometry.dtype_bytes
    elif kv_cache_dtype in ONE_BYTE_KV_DTYPES:
        element = 1
    else:
        raise VllmInputError(
            f"kv_cache_dtype {kv_cache_dtype} is a packed format this calculator does not model; "
            f"use one of auto, {', '.join(ONE_BYTE_KV_DTYPES)}"
        )
    if geometry.mla is not None:
        # MLA caches one latent (+ RoPE key) per token; every TP rank holds all of it.
        return (geometry.mla.kv_lora_rank + geometry.mla.qk_rope_head_dim) * element
    return 2 * kv_heads_per_rank(geometry, tensor_parallel_size) * geometry.head_dim * element


# --------------------------------------------------------------------------- hybrid (Mamba / Gated DeltaNet) pages

# Bytes of one element for `--mamba-ssm-cache-dtype` (vllm/config/cache.py MambaDType).
MAMBA_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
# The attention block size of a hybrid is a multiple of this: 16 x cdiv(...) in
# HybridAttentionMambaModelConfig (0.10-0.19); from 0.20 the attention backend's smallest kernel
# block size (FlashAttention MultipleOf(16), FlashInfer [16, 32, 64]), 16 for both.
HYBRID_BLOCK_ALIGNMENT = 16


@dataclass(frozen=True)
class HybridPages:
    block_size: int  # attention tokens per block, raised so one attention page covers the state
    page_bytes: int  # one block of one layer (attention page; the state page is padded to it)
    state_page_bytes: int  # one sequence's state in one layer, before padding


def hybrid_pages(geometry: Geometry, kv_cache_dtype: str, tensor_parallel_size: int, block_size: int | None,
                 mamba_ssm_cache_dtype: str | None = None) -> HybridPages:
    """vLLM's hybrid allocator: the attention block size is raised until one attention page holds a
    state page, then the state page is padded to the attention page, so both kinds share one pool.
    https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/model_executor/models/config.py#L314
    (HybridAttentionMambaModelConfig), page sizes from vllm/v1/kv_cache_interface.py MambaSpec and
    vllm/model_executor/layers/mamba/mamba_utils.py at the same tag."""
    state = geometry.state
    assert state is not None
    conv_bytes = geometry.dtype_bytes  # mamba_cache_dtype "auto" = the model's dtype
    # The temporal (SSM / recurrent) state: --mamba-ssm-cache-dtype, else the checkpoint's own
    # `mamba_ssm_dtype` (Qwen3.5 ships "float32"), else the model's dtype.
    ssm_dtype = mamba_ssm_cache_dtype if mamba_ssm_cache_dtype not in (None, "auto") else state.ssm_dtype
    if ssm_dtype is not None and ssm_dtype not in MAMBA_DTYPE_BYTES:
        raise VllmInputError(f"mamba_ssm_cache_dtype must be auto or one of {', '.join(MAMBA_DTYPE_BYTES)}")
    ssm_bytes = MAMBA_DTYPE_BYTES[ssm_dtype] if ssm_dtype else conv_bytes
    state_page = state.page_bytes(tensor_parallel_size, conv_bytes, ssm_bytes)
    per_token = kv_bytes_per_token_per_layer(geometry, kv_cache_dtype, tensor_parallel_size)
    aligned = HYBRID_BLOCK_ALIGNMENT * cdiv(state_page, HYBRID_BLOCK_ALIGNMENT * per_token)
    size = aligned if block_size is None or block_size < aligned else block_size
    return HybridPages(size, size * per_token, state_page)


# --------------------------------------------------------------------------- max model len

# vllm/transformers_utils/model_arch_config_convertor.py derive_max_model_len_and_key
_MAX_LEN_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
)
# vllm/config/model.py _get_and_verify_max_len: these RoPE types already scaled
# max_position_embeddings, so their `factor` is not applied again.
_ROPE_TYPES_ALREADY_SCALED = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
_ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base")
_DEFAULT_MAX_LEN = 2048  # used by vLLM when config.json names no length key


@dataclass(frozen=True)
class DerivedMaxLen:
    value: int  # int(derived): vLLM's default max_model_len (LongRoPE aside)
    default_max_model_len: int
    key: str | None
    printed: str  # how vLLM's f-string prints the derived length ("32768.0" after RoPE scaling)
    model_max_length: int | None


def _rope_parameter_sets(cfg: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    params = cfg.get("rope_parameters")
    if params is None:
        params = cfg.get("rope_scaling")
    if not isinstance(params, Mapping) or not params:
        # transformers 5 standardises every RoPE config to {"rope_type": "default", ...}.
        return [{"rope_type": "default"}] if any(k in cfg for k in _ROPE_KEYS) else []
    nested = [p for p in params.values() if isinstance(p, Mapping)]
    if nested and len(nested) == len(params):
        return [p for p in nested if p]
    return [params]


def derive_max_model_len(hf_config: Mapping[str, Any]) -> DerivedMaxLen:
    """The longest max_model_len vLLM accepts for this config.json, as vLLM derives it."""
    text = hf_config.get("text_config") if isinstance(hf_config.get("text_config"), Mapping) else hf_config
    derived: float | int | None = None
    key = None
    for key in ("rope_scaling", "rope_parameters"):
        for config in (hf_config, text):
            problem = rope_scaling_problem(config.get(key), key)
            if problem:
                raise VllmInputError(f"hf_config: {problem}")
    for name in _MAX_LEN_KEYS + ("model_max_length", "original_max_position_embeddings"):
        value = text.get(name)
        if isinstance(value, float) and not math.isfinite(value):
            raise VllmInputError(f"hf_config: `{name}` must be a finite number, got {value!r}")
    for name in _MAX_LEN_KEYS:
        value = text.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if derived is None or value < derived:
                key, derived = name, value
    if isinstance(text.get("model_max_length"), (int, float)) and text.get("model_max_length"):
        key, derived = "model_max_length", text["model_max_length"]
    if derived is None:
        derived = _DEFAULT_MAX_LEN
    model_type = str(hf_config.get("model_type") or "")
    rope_sets = _rope_parameter_sets(hf_config)
    if rope_sets and "gemma3" not in model_type:
        factor: float | int = 1.0
        for params in rope_sets:
            rope_type = params.get("rope_type", params.get("type", "default"))
            if rope_type not in _ROPE_TYPES_ALREADY_SCALED:
                factor = params.get("factor", factor)
        derived = derived * (1.0 if factor is None else factor)
    printed = repr(float(derived)) if isinstance(derived, float) else str(derived)
    default = int(derived)
    if any(p.get("rope_type", p.get("type")) == "longrope" for p in rope_sets):
        default = int(text.get("original_max_position_embeddings", derived))
    mml = hf_config.get("model_max_length")
    return DerivedMaxLen(int(derived), default, key, printed, mml if isinstance(mml, int) else None)


def max_model_len_too_long_text(max_model_len: int, derived: DerivedMaxLen) -> str:
    # vllm/config/model.py _get_and_verify_max_len (0.33.0)
    return (
        f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
        f"({derived.key}={derived.printed} or model_max_length={derived.model_max_length} in model's "
        "config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative "
        "position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model "
        "uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
        "array out-of-bounds error."
    )


# --------------------------------------------------------------------------- layers, groups, blocks


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pp_layer_split(num_layers: int, pipeline_parallel_size: int) -> tuple[int, ...]:
    """Layers per PP stage, as vllm/distributed/utils.py get_pp_indices splits them:
    an even share, the remainder one each to the stages before the last, from the back."""
    share, remainder = divmod(num_layers, pipeline_parallel_size)
    parts = [share] * pipeline_parallel_size
    for i in range(2, remainder + 2):
        parts[-i] += 1
    return tuple(parts)


@dataclass(frozen=True)
class KvGroup:
    kind: str  # FULL, SLIDING or CHUNKED
    window: int | None  # sliding window or attention chunk, in tokens
    layers: tuple[int, ...]  # global layer indices


def kv_cache_groups(geometry: Geometry) -> tuple[KvGroup, ...]:
    """vLLM's KV cache groups (get_kv_cache_groups / _get_kv_cache_groups_uniform_page_size)."""
    def window_of(kind: str) -> int | None:
        if kind == SLIDING:
            return geometry.sliding_window
        if kind == CHUNKED:
            return geometry.attention_chunk_size
        return None

    buckets: dict[str, list[int]] = {}
    for index, kind in enumerate(geometry.layer_kinds):
        if kind != NO_CACHE:  # MLP/MoE-only layers register no cache spec
            buckets.setdefault(kind, []).append(index)
    if len(buckets) == 1:
        kind, layers = next(iter(buckets.items()))
        return (KvGroup(kind, window_of(kind), tuple(layers)),)
    sizes = [len(layers) for layers in buckets.values()]
    group_size = min(sizes)
    if max(sizes) < min(sizes) * 1.5:
        group_size = max(sizes)
    groups = []
    for kind, layers in buckets.items():
        count = cdiv(len(layers), group_size)
        for i in range(count):
            # layers[i::count], so every PP stage gets a share of each group.
            groups.append(KvGroup(kind, window_of(kind), tuple(layers[i::count])))
    return tuple(groups)


MAMBA_CACHE_MODES = ("none", "align", "all")


def _state_groups(groups: tuple[KvGroup, ...], mode: str | None) -> tuple[KvGroup, ...]:
    """State groups as vLLM 0.20's MambaSpec.max_memory_usage_bytes counts them per request
    (https://github.com/vllm-project/vllm/blob/v0.20.0/vllm/v1/kv_cache_interface.py#L540):
    1 page, 2 in "align" mode, or one per block of tokens in "all" mode (then they grow like full attention)."""
    mode = mode or "none"
    if mode not in MAMBA_CACHE_MODES:
        raise VllmInputError(f"mamba_cache_mode must be one of {', '.join(MAMBA_CACHE_MODES)}, got {mode!r}")
    if mode == "none":
        return groups
    if mode == "all":
        return tuple(replace(g, kind=FULL) if g.kind == STATE else g for g in groups)
    return tuple(replace(g, window=2) if g.kind == STATE else g for g in groups)


def group_blocks_per_request(kind: str, window: int | None, max_model_len: int, block_size: int, in_flight_tokens: int) -> int:
    """Blocks one request of max_model_len tokens holds in a group (max_memory_usage_bytes)."""
    if kind == STATE:
        # MambaSpec.max_memory_usage_bytes: one page ("none"), two ("align": the running state and the
        # last block-aligned checkpoint); `window` carries that count (see _state_groups).
        return window or 1
    if kind == SLIDING:
        # SlidingWindowSpec: the window, plus tokens scheduled but not settled, +1 for alignment.
        return cdiv(min(window - 1 + in_flight_tokens, max_model_len), block_size) + 1
    if kind == CHUNKED:
        return cdiv(min(window + in_flight_tokens, max_model_len), block_size)
    return cdiv(max_model_len, block_size)


def blocks_per_request(groups: tuple[KvGroup, ...], max_model_len: int, block_size: int, in_flight_tokens: int) -> int:
    return sum(group_blocks_per_request(g.kind, g.window, max_model_len, block_size, in_flight_tokens) for g in groups)


def in_flight_tokens(pipeline_parallel_size: int, max_num_batched_tokens: int) -> int:
    # VllmConfig.max_in_flight_tokens: async scheduling (default) with the V2 runner
    # (default) keeps pp + 1 batches in flight.
    return (pipeline_parallel_size + 1) * max_num_batched_tokens


def largest_fitting_len(check_bytes: int, bytes_per_block: int, groups: tuple[KvGroup, ...], upper: int, block_size: int, in_flight: int) -> int:
    """_estimate_max_model_len_from_groups: binary search over [1, upper]; 0 if 1 token does not fit."""
    return _fitting_len(check_bytes, bytes_per_block, _group_shapes(groups), upper, block_size, in_flight)


def _group_shapes(groups: tuple[KvGroup, ...]) -> dict[tuple[str, int | None], int]:
    """Groups of one kind and window hold the same blocks: how many groups have each (kind, window)."""
    shapes: dict[tuple[str, int | None], int] = {}
    for g in groups:
        shape = (g.kind, g.window)
        shapes[shape] = shapes.get(shape, 0) + 1
    return shapes


def _fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    # A catalog runs this ~20 times per pair. For plain integer inputs the length vLLM's search finds
    # is solved instead (_solve_fitting_len); anything else goes through the search itself.
    if (type(check_bytes) is int and type(bytes_per_block) is int and type(upper) is int and type(block_size) is int
            and type(in_flight) is int and bytes_per_block > 0 and block_size > 0
            and all(type(window) is int for kind, window in shapes if kind in (SLIDING, CHUNKED))):
        return _solve_fitting_len(check_bytes, bytes_per_block, shapes, upper, block_size, in_flight)
    return _search_fitting_len(check_bytes, bytes_per_block, shapes, upper, block_size, in_flight)


def _search_fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    """vLLM's binary search, as vLLM runs it."""
    def fits(length: int) -> bool:
        blocks = sum(count * group_blocks_per_request(kind, window, length, block_size, in_flight)
                     for (kind, window), count in shapes.items())
        return bytes_per_block * blocks <= check_bytes

    if upper < 1 or not fits(1):
        return 0
    low, high, best = 1, upper, 1
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _solve_fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    """The length _search_fitting_len finds, solved (integers, bytes_per_block and block_size > 0).

    Blocks per request never fall as the length grows, so the search finds the largest length in
    [1, upper] that fits. With t = cdiv(L, block_size), and cdiv(min(cap, L), bs) = min(cdiv(cap, bs), t),
    a request holds G(t) = sum of count * min(C, t) over the groups (C = cdiv(window cap, block_size);
    no cap for full attention) plus one block per sliding group. G is linear between the caps, so
    the largest t with G(t) <= check // bytes_per_block is solved segment by segment, and the
    largest length is t * block_size (or upper, if smaller)."""
    if upper < 1:
        return 0
    budget = check_bytes // bytes_per_block  # blocks one request may hold
    fixed = 0  # blocks that no longer grow with t: capped groups already passed, sliding groups' +1
    slope = 0  # groups that still grow by one block per block of tokens
    ahead: dict[int, int] = {}  # cap -> groups with that cap, not yet reached
    for (kind, window), count in shapes.items():
        if kind == STATE:
            fixed += count * (window or 1)
            continue
        if kind == SLIDING:
            fixed += count
            cap = cdiv(window - 1 + in_flight, block_size)
        elif kind == CHUNKED:
            cap = cdiv(window + in_flight, block_size)
        else:
            slope += count
            continue
        if cap <= 1:
            fixed += count * cap  # min(cap, t) is cap for every t >= 1
        else:
            slope += count
            ahead[cap] = ahead.get(cap, 0) + count
    if fixed + slope > budget:  # G(1): one token does not fit
        return 0
    for cap in sorted(ahead):
        # Between the previous cap (where G fit) and this one, G(t) = fixed + slope * t.
        if fixed + slope * cap > budget:
            return min(upper, (budget - fixed) // slope * block_size)
        fixed += ahead[cap] * cap
        slope -= ahead[cap]
    if slope == 0:
        return upper  # every group is capped and the capped total fits: any length does
    return min(upper, (budget - fixed) // slope * block_size)


# --------------------------------------------------------------------------- the budget model

@dataclass(frozen=True)
class BudgetAssumptions:
    """Every constant of the empirical budget model, with where it comes from.

    vLLM measures these terms on the GPU; a calculator has to estimate them. The values are
    fitted to real startup logs (data/evidence/vllm_real_logs.yaml) and pages must say so (without that path).
    """

    non_torch_bytes: int = round(0.28 * GiB)
    non_torch_source: str = (
        "Non-torch growth after vLLM's start snapshot, fitted to V1 logs: requested - weights - "
        "available KV - activation term - TP term leaves a median 0.28 GiB (0.24-0.43) in the RTX 3090 "
        "vLLM 0.17.1 logs (TheBuccaneer/vllm-offload-profiles), the A100 0.10.1.1 logs "
        "(dennislee22/vLLM-benchmarking) and the A100 40GB 0.15.1 eager log. vLLM's own "
        "non-torch line reads 0.13-0.14 GiB at TP=1 (H100, 0.11.0, llm-d/llm-d-benchmark), so "
        "about 0.15 GiB of it stands for sampler memory that the 8 B-per-logit sampler term "
        "misses."
    )
    non_torch_bytes_v0: int = round(0.10 * GiB)
    non_torch_v0_source: str = "V0 'non_torch_memory takes' lines: 0.01-0.35 GiB (vllm issue #10517 and others)."
    non_torch_extra_bytes_tp: int = round(0.15 * GiB)
    non_torch_tp_source: str = (
        "Custom all-reduce / NCCL buffers with TP>1 on one node: +0.12 GiB for TP=2 on A100 "
        "(0.10.1.1: 0.68 against 0.55 GiB of non-KV memory), +0.41 GiB on H100 (0.11.0 non-torch "
        "0.54 against 0.13 GiB), 0.20 GiB total in a TP=4 0.8.5 log. Across nodes (Ray, no custom "
        "all-reduce) a TP=2 A100 log needs about 0.9 GiB more, which this term does not cover."
    )
    activation_intermediate_factor: int = 3
    activation_hidden_factor: int = 3
    activation_source: str = (
        "Activation peak of the dummy batch = max_num_batched_tokens x (3 x intermediate/TP + "
        "3 x hidden) x 2 bytes: V0 logs of Llama-3.1-8B at 20,000 and 29,000 tokens (2.07 and "
        "2.99 GiB, vllm issue #10517) and Qwen2.5-1.5B at 32,768 tokens (2.02 GiB) fit it within 5%."
    )
    sampler_bytes_per_logit: int = 8
    sampler_source: str = (
        "The sampler warm-up sorts max_num_seqs x vocab logits; its bytes per logit depend on the "
        "release's top-k/top-p path (vllm/v1/sample/ops/topk_topp_sampler.py at each tag): about 40 B on the PyTorch sort "
        "path (default 0.8-0.16; H100 logs at 1,024 sequences print 37-40 B), 8 B on the FlashInfer "
        "(0.21+) and Triton (0.17-0.20) paths. This constant is the fallback for callers that pass no release."
    )
    cudagraph_bytes_per_size_per_layer: int = round(0.45 * MiB)
    cudagraph_source: str = (
        "CUDA-graph estimate = capture sizes x layers x 0.45 MiB: 'Estimated CUDA graph memory' "
        "lines 0.37 GiB (Qwen2.5-7B, 35 sizes, 28 layers) and 0.84 GiB (Llama-3.1-8B, 51 sizes, 32 layers)."
    )
    quantized_scale_bits_per_weight_x1000: int = 160
    weights_source: str = (
        "Weights = checkpoint bytes of the variant when known; otherwise parameters from config.json "
        "x bits (16-bit embeddings and lm_head; 4-bit group-128 formats add 0.16 bit of scales)."
    )


ASSUMPTIONS = BudgetAssumptions()


@dataclass(frozen=True)
class Breakdown:
    requested_bytes: int
    weights_bytes: int
    non_torch_bytes: int
    activation_peak_bytes: int
    cudagraph_bytes: int

    @property
    def available_bytes(self) -> int:
        return (
            self.requested_bytes - self.weights_bytes - self.non_torch_bytes
            - self.activation_peak_bytes - self.cudagraph_bytes
        )


def requested_bytes(total_bytes: int, gpu_memory_utilization: float) -> int:
    # vllm/v1/worker/utils.py request_memory
    return math.ceil(total_bytes * gpu_memory_utilization)


def batch_defaults(gpu_total_bytes: int, gpu_name: str = "", version: tuple[int, int, int] = LATEST_VERSION,
                   max_model_len: int = 2048) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) for `vllm serve` (EngineArgs.get_batch_defaults), by release."""
    return batch_defaults_for(version, gpu_total_bytes, gpu_name, max_model_len)


# Every budget-model plan needs this list's length and a catalog has a handful of (seqs, tokens)
# pairs; a bounded memo (the result is an immutable tuple) spares rebuilding it per plan.
@lru_cache(maxsize=256, typed=True)
def cudagraph_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> tuple[int, ...]:
    """VllmConfig._set_cudagraph_sizes defaults (non-Blackwell, no spec decode)."""
    largest = min(max_num_seqs * 2, 512)
    sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, largest + 1, 16))
    sizes = [s for s in sizes if s <= largest]
    if max_num_batched_tokens <= largest and max_num_batched_tokens not in sizes:
        sizes.append(max_num_batched_tokens)
    return tuple(sorted(sizes))


def _as_int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _text_config(hf_config: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = hf_config.get("text_config")
    return inner if isinstance(inner, Mapping) else hf_config


def _moe_shape(cfg: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """(experts, experts per token, expert intermediate, shared-expert intermediate); zeros if dense."""
    experts = _as_int(cfg, "num_local_experts", "num_experts", "n_routed_experts") or 0
    if experts <= 1:
        return 0, 0, 0, 0
    top_k = _as_int(cfg, "num_experts_per_tok", "moe_topk", "top_k") or 2
    expert_inter = _as_int(cfg, "moe_intermediate_size", "intermediate_size") or 0
    shared = _as_int(cfg, "shared_expert_intermediate_size") or 0
    if not shared and _as_int(cfg, "n_shared_experts"):
        shared = cfg["n_shared_experts"] * expert_inter
    return experts, top_k, expert_inter, shared


def _quant_millibits(hf_config: Mapping[str, Any], geometry: Geometry) -> tuple[int, int]:
    """(millibits per dense linear weight, millibits per MoE expert weight) of the checkpoint."""
    dense = geometry.dtype_bytes * 8000
    qc = hf_config.get("quantization_config")
    if not isinstance(qc, Mapping):
        return dense, dense
    method = str(qc.get("quant_method") or "").lower()
    if method in ("mxfp4", "gpt_oss_mxfp4"):
        return dense, 4250  # experts only; 4-bit values + one 8-bit scale per 32
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return 8000, 8000
    bits = _as_int(qc, "bits", "w_bit", "num_bits")
    if bits is None and method == "compressed-tensors":
        for group in (qc.get("config_groups") or {}).values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            if isinstance(weights, Mapping) and isinstance(weights.get("num_bits"), int):
                bits = weights["num_bits"]
                break
    if method == "bitsandbytes":
        bits = 4 if qc.get("load_in_4bit") else 8
    if bits is None:
        return dense, dense
    scaled = bits * 1000 + (ASSUMPTIONS.quantized_scale_bits_per_weight_x1000 if bits < 8 else 0)
    return scaled, scaled


@dataclass(frozen=True)
class WeightShape:
    """Parameters by where they live: the embedding (first stage), lm_head (last stage), layers."""

    embedding_params: int
    lm_head_params: int
    layer_params: int  # one decoder layer, dense linears
    layer_expert_params: int  # one decoder layer, routed + shared experts
    dense_millibits: int
    expert_millibits: int

    def stage_bytes(self, layers: int, first: bool, last: bool) -> int:
        millibits = layers * (self.layer_params * self.dense_millibits + self.layer_expert_params * self.expert_millibits)
        millibits += (self.embedding_params if first else 0) * 16000 + (self.lm_head_params if last else 0) * 16000
        return millibits // 8000

    def total_bytes(self, num_layers: int) -> int:
        return self.stage_bytes(num_layers, True, True)


def weight_shape(hf_config: Mapping[str, Any], geometry: Geometry) -> WeightShape:
    cfg = _text_config(hf_config)
    hidden, heads, kv_heads, head_dim = geometry.hidden_size, geometry.num_attention_heads, geometry.num_kv_heads, geometry.head_dim
    if geometry.mla is not None:
        q_rank = _as_int(cfg, "q_lora_rank") or 0
        nope = _as_int(cfg, "qk_nope_head_dim") or head_dim
        v_dim = _as_int(cfg, "v_head_dim") or head_dim
        rope = geometry.mla.qk_rope_head_dim
        q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        attention = q + hidden * (geometry.mla.kv_lora_rank + rope) + geometry.mla.kv_lora_rank * heads * (nope + v_dim) + heads * v_dim * hidden
    else:
        attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    experts, _top_k, expert_inter, shared = _moe_shape(cfg)
    inter = geometry.intermediate_size or 4 * hidden
    if experts:
        dense_layers = _as_int(cfg, "first_k_dense_replace") or 0
        moe_layers = geometry.num_layers - dense_layers
        expert_params = (experts * expert_inter + shared) * 3 * hidden
        # Spread the dense-MLP layers of DeepSeek-style models evenly; it only moves stage totals.
        expert_avg = expert_params * moe_layers // geometry.num_layers
        mlp = 3 * hidden * inter * dense_layers // geometry.num_layers + hidden * experts
    else:
        expert_avg = 0
        mlp = 3 * hidden * inter
    dense_mb, expert_mb = _quant_millibits(hf_config, geometry)
    embedding = geometry.vocab_size * hidden
    return WeightShape(
        embedding_params=embedding,
        lm_head_params=embedding,  # tied embeddings still load an lm_head on the last stage under PP
        layer_params=attention + mlp,
        layer_expert_params=expert_avg,
        dense_millibits=dense_mb,
        expert_millibits=expert_mb,
    ) if not geometry.tie_word_embeddings else WeightShape(embedding, 0, attention + mlp, expert_avg, dense_mb, expert_mb)


def activation_peak_bytes(geometry: Geometry, hf_config: Mapping[str, Any], tensor_parallel_size: int, max_num_batched_tokens: int, max_num_seqs: int, assumptions: BudgetAssumptions = ASSUMPTIONS, sampler_bytes: int | None = None) -> int:  # noqa: E501
    moe = _moe_shape(_text_config(hf_config))
    return _activation_peak(geometry, moe, tensor_parallel_size, max_num_batched_tokens, max_num_seqs, assumptions, sampler_bytes)


def _activation_peak(geometry: Geometry, moe: tuple[int, int, int, int], tensor_parallel_size: int, max_num_batched_tokens: int, max_num_seqs: int, assumptions: BudgetAssumptions, sampler_bytes: int | None = None) -> int:  # noqa: E501
    experts, top_k, expert_inter, shared = moe
    inter = top_k * expert_inter + shared if experts else (geometry.intermediate_size or 4 * geometry.hidden_size)
    per_token = (assumptions.activation_intermediate_factor * inter // tensor_parallel_size
                 + assumptions.activation_hidden_factor * geometry.hidden_size) * geometry.dtype_bytes
    forward = max_num_batched_tokens * per_token
    # The sampler rows are the dummy requests: min(max_num_seqs, max_num_batched_tokens).
    rows = min(max_num_seqs, max_num_batched_tokens)
    sampler = rows * geometry.vocab_size * (assumptions.sampler_bytes_per_logit if sampler_bytes is None else sampler_bytes)
    return max(forward, sampler)


# --------------------------------------------------------------------------- error texts by version

_DOCS = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


@dataclass(frozen=True)
class ErrorTemplate:
    """One wording of a KV-cache startup error, for releases first..last (inclusive)."""

    kind: str  # "too_long" | "no_memory"
    engine: str  # "v0" | "v1"
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    template: str  # str.format fields: max_model_len, max_seq_len, needed, available, estimated_msg


# Dated by the release wheels (the check in vllm/worker/worker.py, then vllm/v1/core/kv_cache_utils.py, then
# kv_cache_planning.py at each release tag); the needed/available fields are preformatted per row.
VLLM_ERROR_TEMPLATES: tuple[ErrorTemplate, ...] = (
    ErrorTemplate("no_memory", "v0", (0, 2, 0), (0, 10, 2),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
    ErrorTemplate("too_long", "v0", (0, 2, 0), (0, 10, 2),
                  "The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("no_memory", "v1", (0, 7, 0), (0, 12, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
    ErrorTemplate("no_memory", "v1", (0, 13, 0), (0, 21, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine." + _DOCS),
    ErrorTemplate("no_memory", "v1", (0, 22, 0), (9, 99, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name)." + _DOCS),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 7, 0), (0, 8, 2),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GB KV cache is needed, which is larger than the available KV cache memory ({available} GB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 8, 3), (0, 8, 3),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 8, 4), (0, 9, 0),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB).{estimated_msg} Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 9, 1), (0, 12, 99),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 13, 0), (0, 21, 99),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine." + _DOCS),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 22, 0), (9, 99, 99),
                  "To serve at least one request with the model's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine." + _DOCS),  # noqa: E501
)

CANNOT_AUTO_FIT_TEXT = (
    "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
    "Try increasing `gpu_memory_utilization`."
)


def format_gib(num_bytes: int) -> str:
    """vllm/utils/mem_utils.py format_gib: Python's round to 2 places, printed by str()."""
    return f"{round(num_bytes / GiB, 2)}"


def _gib_for(version: tuple[int, int, int], num_bytes: int) -> str:
    # format_gib since 0.14.0; "%.2f" before.
    return format_gib(num_bytes) if version >= (0, 14, 0) else f"{num_bytes / GiB:.2f}"


def error_template(version: tuple[int, int, int], kind: str, engine: str | None = None) -> ErrorTemplate:
    engine = engine or ("v0" if uses_v0_engine(version) else "v1")
    for row in VLLM_ERROR_TEMPLATES:
        if row.kind == kind and row.engine == engine and row.first <= version <= row.last:
            return row
    raise VllmInputError(f"vLLM {format_version(version)} has no {engine} engine")


def vllm_error_text(
    version: tuple[int, int, int],
    kind: str,
    *,
    max_model_len: int = 0,
    needed_bytes: int = 0,
    available_bytes: int = 0,
    estimated_max_model_len: int = 0,
    max_seq_len: int = 0,
    engine: str | None = None,
) -> str:
    """The exact ValueError text of that vLLM release. `available_bytes` is what the check
    compares against (the null block already subtracted from 0.29 on)."""
    row = error_template(version, kind, engine)
    if (0, 8, 4) <= version <= (0, 9, 0):
        estimated_msg = " Based on the available memory, " if estimated_max_model_len > 0 else ""
    elif estimated_max_model_len > 0:
        estimated_msg = f"Based on the available memory, the estimated maximum model length is {estimated_max_model_len}. "
    else:
        estimated_msg = ""
    return row.template.format(
        max_model_len=max_model_len,
        max_seq_len=max_seq_len,
        needed=_gib_for(version, needed_bytes),
        available=_gib_for(version, available_bytes),
        estimated_msg=estimated_msg,
    )


# --------------------------------------------------------------------------- what one config.json gives


class ConfigFacts:
    """What a plan derives from the config.json alone, each part derived on first use and then kept.

    The catalog plans a pair about 16 times over one config (the reader's settings, every lever,
    the utilization x KV-dtype grid). Re-deriving the geometry, the max length, the weight shape
    and the KV groups from the dict each time was most of a plan's cost. Parts are derived in the
    order a plan first needs them, so a bad config raises the same error at the same step as
    before; a part that raised is derived (and raises) again next time.

    The facts describe the config as it was when read, and plans find them by the dict's identity:
    keep them only as long as nobody changes that dict (the catalog keeps one per variant, for a
    config dict it built and never changes).
    """

    def __init__(self, hf_config: Mapping[str, Any]) -> None:
        self.hf_config = hf_config

    @cached_property
    def geometry(self) -> Geometry:
        return geometry_from_hf_config(self.hf_config)

    @cached_property
    def derived(self) -> DerivedMaxLen:
        return derive_max_model_len(self.hf_config)

    @cached_property
    def weight_shape(self) -> WeightShape:
        return weight_shape(self.hf_config, self.geometry)

    @cached_property
    def groups(self) -> tuple[KvGroup, ...]:
        return kv_cache_groups(self.geometry)

    @cached_property
    def moe(self) -> tuple[int, int, int, int]:
        return _moe_shape(_text_config(self.hf_config))


def _facts_for(inputs: VllmInputs, facts: ConfigFacts | None) -> ConfigFacts:
    # Facts for another dict (a lever that swaps the checkpoint's config) are never reused.
    if facts is not None and facts.hf_config is inputs.hf_config:
        return facts
    return ConfigFacts(inputs.hf_config)


# --------------------------------------------------------------------------- inputs and result


@dataclass(frozen=True)
class VllmInputs:
    """Everything `vllm serve` would be given. None means vLLM's default."""

    hf_config: Mapping[str, Any]
    gpu_total_bytes: int | None = None  # what cudaMemGetInfo reports as total
    gpu_name: str = ""
    gpu_count: int = 1
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    max_model_len: int | None = None  # -1 = auto-fit
    kv_cache_dtype: str = "auto"
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: int | None = None
    available_kv_cache_bytes: int | None = None  # test/override hook: skip the budget entirely
    weights_bytes: int | None = None  # whole checkpoint; split over TP and PP by parameters
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    vllm_version: str | None = None
    # Optional measured terms (bytes per worker) replacing the model's estimates.
    non_torch_bytes: int | None = None
    activation_peak_bytes: int | None = None
    cudagraph_bytes: int | None = None
    # Release-table overrides: the top-k/top-p path of the sampler warm-up (native, flashinfer,
    # triton; None = the release's default) and VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (None = default).
    sampler_backend: str | None = None
    estimate_cudagraphs: bool | None = None
    mamba_ssm_cache_dtype: str | None = None  # --mamba-ssm-cache-dtype (hybrid models); None = auto
    # --mamba-cache-mode: "none" (default), "align" (prefix caching; 0.20+ picks it for models
    # without full Mamba prefix caching when prefix caching is on), "all" (a state block per block of tokens).
    mamba_cache_mode: str | None = None


@dataclass(frozen=True)
class StagePlan:
    stage: int
    num_layers: int
    bytes_per_block: int
    available_kv_cache_bytes: int
    num_blocks: int
    breakdown: Breakdown | None


@dataclass(frozen=True)
class VllmResult:
    fits: bool
    num_blocks: int
    bytes_per_block: int
    kv_cache_tokens: int
    max_concurrency: float
    estimated_max_model_len: int
    error: str | None
    available_kv_cache_bytes: int
    breakdown: Breakdown | None
    # What pages and commands need besides the headline numbers.
    vllm_version: str
    max_model_len: int  # the length checked (after auto-fit)
    requested_max_model_len: int | None
    derived_max_model_len: int
    kv_cache_dtype: str
    block_size: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    gpu_memory_utilization: float
    max_num_batched_tokens: int
    max_num_seqs: int
    enforce_eager: bool
    kv_bytes_per_token_per_layer: int
    kv_bytes_per_token: int  # across the binding stage's attention layers, as if each kept every token
    num_kv_cache_groups: int
    blocks_per_request: int
    needed_bytes: int  # one request at max_model_len on the binding stage
    check_bytes: int  # available minus the null block (0.29+)
    in_flight_tokens: int
    binding_stage: int
    stages: tuple[StagePlan, ...]
    log_lines: tuple[str, ...]
    assumptions: BudgetAssumptions | None
    uses_budget_model: bool

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["breakdown"] = asdict(self.breakdown) if self.breakdown else None
        return data


def replace_inputs(inputs: VllmInputs, **changes: Any) -> VllmInputs:
    """dataclasses.replace(inputs, **changes), at about half the cost: replace() walks the dataclass
    fields in Python, while VllmInputs has only init fields, so its instance dict already is the
    constructor's arguments. A catalog pair builds ~15 variants of its inputs (levers, grid)."""
    return type(inputs)(**{**vars(inputs), **changes})


# Each integer setting's range in generator.schema.BOUNDS, shared with the records and requests.
_SETTING_KIND = {
    "tensor_parallel_size": "gpus", "pipeline_parallel_size": "gpus", "gpu_count": "gpus", "block_size": "count",
    "max_num_batched_tokens": "tokens", "max_num_seqs": "count", "max_model_len": "tokens",
}


def _check_positive(name: str, value: int | None) -> None:
    if value is not None:
        check_int(value, name, _SETTING_KIND[name], VllmInputError, wrong=f"{name} must be a positive integer, got {value!r}")


class _Resolved:
    """What resolve_settings fills in, without building the completed VllmInputs: a catalog pair
    resolves ~16 sets of inputs, and copying the 20-field dataclass each time cost more than the
    arithmetic it fed."""

    __slots__ = ("geometry", "derived", "version", "utilization", "block_size", "max_num_seqs", "max_num_batched_tokens")

    def __init__(self, geometry: Geometry, derived: DerivedMaxLen, version: tuple[int, int, int], utilization: float,
                 block_size: int, max_num_seqs: int, max_num_batched_tokens: int) -> None:
        self.geometry = geometry
        self.derived = derived
        self.version = version
        self.utilization = utilization
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens


def _resolve(inputs: VllmInputs, facts: ConfigFacts) -> _Resolved:
    try:
        geometry = facts.geometry
    except GeometryError as exc:
        raise VllmInputError(f"hf_config: {exc}") from exc
    version = parse_version(inputs.vllm_version)
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "gpu_count", "block_size",
                 "max_num_batched_tokens", "max_num_seqs"):
        _check_positive(name, getattr(inputs, name))
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    if tp * pp > inputs.gpu_count:
        raise VllmInputError(f"tensor_parallel_size x pipeline_parallel_size = {tp * pp} needs {tp * pp} GPUs; gpu_count is {inputs.gpu_count}")
    if geometry.num_attention_heads % tp:
        raise VllmInputError(f"Total number of attention heads ({geometry.num_attention_heads}) must be divisible by tensor parallel size ({tp}).")
    if geometry.mla is None and tp > geometry.num_kv_heads and tp % geometry.num_kv_heads:
        raise VllmInputError(f"tensor_parallel_size {tp} must be a multiple of the {geometry.num_kv_heads} KV heads to replicate them")
    if pp > geometry.num_layers:
        raise VllmInputError(f"pipeline_parallel_size {pp} exceeds the {geometry.num_layers} layers")
    util = inputs.gpu_memory_utilization
    if util is None:
        util = default_gpu_memory_utilization(version)
    if isinstance(util, bool) or not isinstance(util, (int, float)) or not 0 < util <= 1:
        raise VllmInputError(f"gpu_memory_utilization must be in (0, 1], got {util!r}")
    for name in ("kv_cache_memory_bytes", "available_kv_cache_bytes", "weights_bytes", "gpu_total_bytes",
                 "non_torch_bytes", "activation_peak_bytes", "cudagraph_bytes"):
        value = getattr(inputs, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise VllmInputError(f"{name} must be an integer number of bytes, got {value!r}")
        if value is not None and abs(value) > MAX_BYTES:
            raise VllmInputError(f"{name} must be at most 1 PiB ({MAX_BYTES:,} bytes), got {value:,}")
    if inputs.kv_cache_memory_bytes is None and inputs.available_kv_cache_bytes is None and not inputs.gpu_total_bytes:
        raise VllmInputError("give the GPU (gpu or gpu_memory_gib), kv_cache_memory_bytes or available_kv_cache_bytes")
    kv_bytes_per_token_per_layer(geometry, inputs.kv_cache_dtype, tp)  # validates the dtype
    block_size = inputs.block_size or DEFAULT_BLOCK_SIZE
    if geometry.mla is not None and inputs.block_size is None:
        block_size = default_mla_block_size(version, inputs.gpu_name) or DEFAULT_BLOCK_SIZE
    if geometry.has_state:
        if version < (0, 10, 0):
            raise VllmInputError(
                f"vLLM {format_version(version)} keeps Mamba / linear-attention state outside the KV cache "
                "(V0 MambaCacheManager); this calculator models the hybrid allocator of 0.10 and later")
        block_size = hybrid_pages(geometry, inputs.kv_cache_dtype, tp, inputs.block_size, inputs.mamba_ssm_cache_dtype).block_size
    derived = facts.derived
    max_len = inputs.max_model_len
    if max_len is not None and max_len != -1:
        _check_positive("max_model_len", max_len)
        if max_len > derived.value and (derived.model_max_length is None or max_len > derived.model_max_length):
            raise VllmInputError(max_model_len_too_long_text(max_len, derived))
    if inputs.sampler_backend is not None and inputs.sampler_backend not in SAMPLER_BACKENDS:
        raise VllmInputError(f"sampler_backend must be one of {', '.join(SAMPLER_BACKENDS)}, got {inputs.sampler_backend!r}")
    length_for_batch = derived.default_max_model_len if max_len in (None, -1) else max_len
    seqs, tokens = batch_defaults(inputs.gpu_total_bytes or 0, inputs.gpu_name, version, length_for_batch)
    max_num_seqs = inputs.max_num_seqs or seqs
    if inputs.max_num_batched_tokens is None:
        length = derived.default_max_model_len if max_len in (None, -1) else max_len
        max_num_batched_tokens = min(max_num_seqs * length, tokens)
    else:
        max_num_batched_tokens = inputs.max_num_batched_tokens
    return _Resolved(geometry, derived, version, float(util), block_size, max_num_seqs, max_num_batched_tokens)


def resolve_settings(inputs: VllmInputs, *, facts: ConfigFacts | None = None) -> tuple[Geometry, DerivedMaxLen, VllmInputs]:
    """Validate like vLLM and fill vLLM's defaults; returns the completed inputs.
    `facts` may carry what earlier plans already derived from inputs.hf_config."""
    resolved = _resolve(inputs, _facts_for(inputs, facts))
    completed = replace(
        inputs,
        gpu_memory_utilization=resolved.utilization,
        block_size=resolved.block_size,
        max_num_seqs=resolved.max_num_seqs,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        vllm_version=format_version(resolved.version),
    )
    return resolved.geometry, resolved.derived, completed


def _stage_budget(inputs: VllmInputs, resolved: _Resolved, facts: ConfigFacts, stage: int, layers: int, assumptions: BudgetAssumptions) -> Breakdown:
    geometry, shape, version = resolved.geometry, facts.weight_shape, resolved.version
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    first, last = stage == 0, stage == pp - 1
    if inputs.weights_bytes is not None:
        whole = shape.total_bytes(geometry.num_layers)
        weights = inputs.weights_bytes * shape.stage_bytes(layers, first, last) // whole // tp
    else:
        weights = shape.stage_bytes(layers, first, last) // tp
    if inputs.non_torch_bytes is not None:
        non_torch = inputs.non_torch_bytes
    else:
        non_torch = assumptions.non_torch_bytes_v0 if uses_v0_engine(version) else assumptions.non_torch_bytes
        if tp * pp > 1:
            non_torch += assumptions.non_torch_extra_bytes_tp
    activation = inputs.activation_peak_bytes
    if activation is None:
        activation = _activation_peak(geometry, facts.moe, tp, resolved.max_num_batched_tokens, resolved.max_num_seqs, assumptions,
                                      sampler_bytes_per_logit(version, inputs.sampler_backend))
    cudagraph = 0
    if subtracts_cudagraph_estimate(version, inputs.enforce_eager, inputs.gpu_name, inputs.estimate_cudagraphs):
        cudagraph = inputs.cudagraph_bytes
        if cudagraph is None:
            sizes = cudagraph_capture_sizes(resolved.max_num_seqs, resolved.max_num_batched_tokens)
            cudagraph = len(sizes) * layers * assumptions.cudagraph_bytes_per_size_per_layer
    return Breakdown(
        requested_bytes=requested_bytes(inputs.gpu_total_bytes, resolved.utilization),
        weights_bytes=weights,
        non_torch_bytes=non_torch,
        activation_peak_bytes=activation,
        cudagraph_bytes=cudagraph,
    )


def cudagraph_info_line(gpu_memory_utilization: float, cudagraph_bytes: int, gpu_total_bytes: int) -> str:
    """gpu_worker.py's note when the CUDA-graph estimate is subtracted (0.20+, env on)."""
    delta = cudagraph_bytes / gpu_total_bytes
    return (
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        f"--gpu-memory-utilization={gpu_memory_utilization:.4f} is equivalent to "
        f"--gpu-memory-utilization={round(gpu_memory_utilization - delta, 4):.4f} without CUDA graph memory profiling. "
        "To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to "
        f"{min(round(gpu_memory_utilization + delta, 4), 1.0):.4f}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0."
    )


def kv_cache_tokens_logged(version: tuple[int, int, int], num_blocks: int, per_request_blocks: int, max_model_len: int, block_size: int, num_groups: int) -> int:
    """The 'GPU KV cache size: N tokens' number of that release."""
    if version >= (0, 21, 0):
        return int(num_blocks / per_request_blocks * max_model_len)  # get_kv_cache_capacity
    if version >= (0, 10, 0):
        return num_blocks // num_groups * block_size
    return num_blocks * block_size


class _Sizing:
    """Every number of a plan, before its log lines and result record. Levers and the auto-fit grid
    read only a few of these; plan_vllm adds the rest, so both run the same arithmetic."""

    __slots__ = ("resolved", "per_layer", "groups", "in_flight", "stages", "checks", "estimates", "largest_fit",
                 "full_len", "max_len", "per_request", "binding", "needed", "error", "num_blocks", "concurrency", "tokens")


def _size(inputs: VllmInputs, assumptions: BudgetAssumptions, facts: ConfigFacts) -> _Sizing:
    resolved = _resolve(inputs, facts)
    geometry, derived, version = resolved.geometry, resolved.derived, resolved.version
    tp, pp, bs = inputs.tensor_parallel_size, inputs.pipeline_parallel_size, resolved.block_size
    per_layer = kv_bytes_per_token_per_layer(geometry, inputs.kv_cache_dtype, tp)
    page = bs * per_layer  # for a hybrid, bs is already the aligned block: the state page is padded to this
    groups = facts.groups
    if geometry.has_state:
        groups = _state_groups(groups, inputs.mamba_cache_mode)
    if uses_v0_engine(version):
        # V0 had no hybrid allocator: every layer keeps every token in one block table.
        groups = (KvGroup(FULL, None, tuple(range(geometry.num_layers))),)
    in_flight = in_flight_tokens(pp, resolved.max_num_batched_tokens)
    _ = facts.weight_shape  # derived here whether or not a budget needs it, as a plan always has

    stages: list[StagePlan] = []
    start = 0
    for stage, layers in enumerate(pp_layer_split(geometry.num_layers, pp)):
        # A group's layers are ascending (kv_cache_groups and the V0 group list them in order), so
        # bisect counts those on this stage without walking every layer of every group.
        end = start + layers
        bytes_per_block = max(bisect_left(g.layers, end) - bisect_left(g.layers, start) for g in groups) * page
        start += layers
        breakdown = None
        if inputs.available_kv_cache_bytes is not None:
            available = inputs.available_kv_cache_bytes
        elif inputs.kv_cache_memory_bytes is not None:
            available = inputs.kv_cache_memory_bytes
        else:
            breakdown = _stage_budget(inputs, resolved, facts, stage, layers, assumptions)
            available = breakdown.available_bytes
        num_blocks = max(available, 0) // bytes_per_block
        stages.append(StagePlan(stage, layers, bytes_per_block, available, num_blocks, breakdown))

    null_block = reserves_null_block_in_check(version) and not uses_v0_engine(version)
    checks = [s.available_kv_cache_bytes - (s.bytes_per_block if null_block else 0) for s in stages]
    upper = derived.default_max_model_len if inputs.max_model_len in (None, -1) else max(inputs.max_model_len, derived.default_max_model_len)
    shapes = _group_shapes(groups)
    estimates = [_fitting_len(c, s.bytes_per_block, shapes, upper, bs, in_flight) if c > 0 else 0 for s, c in zip(stages, checks)]
    largest_fit = min(estimates)

    error = None
    max_len = full_len = derived.default_max_model_len if inputs.max_model_len in (None, -1) else inputs.max_model_len
    if inputs.max_model_len == -1:  # auto-fit
        if largest_fit <= 0:
            error = CANNOT_AUTO_FIT_TEXT
        elif largest_fit < max_len:
            max_len = largest_fit

    per_request = blocks_per_request(groups, max_len, bs, in_flight)
    binding = min(range(len(stages)), key=lambda i: (stages[i].num_blocks, -stages[i].bytes_per_block, i))
    needed = stages[binding].bytes_per_block * per_request
    if error is None:
        for s, check in zip(stages, checks):
            if uses_v0_engine(version):
                max_seq_len = s.num_blocks * bs
                if s.num_blocks <= 0:
                    error = vllm_error_text(version, "no_memory")
                elif max_len > max_seq_len:
                    error = vllm_error_text(version, "too_long", max_model_len=max_len, max_seq_len=max_seq_len)
            elif check <= 0:
                error = vllm_error_text(version, "no_memory")
            elif s.bytes_per_block * per_request > check:
                estimate = _fitting_len(check, s.bytes_per_block, shapes, max_len, bs, in_flight)
                error = vllm_error_text(
                    version, "too_long", max_model_len=max_len,
                    needed_bytes=s.bytes_per_block * per_request, available_bytes=check,
                    estimated_max_model_len=estimate,
                )
            if error:
                binding = s.stage
                needed = s.bytes_per_block * per_request
                break

    num_blocks = stages[binding].num_blocks if error else min(s.num_blocks for s in stages)
    sizing = _Sizing()
    sizing.resolved, sizing.per_layer, sizing.groups, sizing.in_flight = resolved, per_layer, groups, in_flight
    sizing.stages, sizing.checks, sizing.estimates, sizing.largest_fit = stages, checks, estimates, largest_fit
    sizing.full_len, sizing.max_len, sizing.per_request = full_len, max_len, per_request
    sizing.binding, sizing.needed, sizing.error, sizing.num_blocks = binding, needed, error, num_blocks
    sizing.concurrency = num_blocks / per_request
    sizing.tokens = kv_cache_tokens_logged(version, num_blocks, per_request, max_len, bs, len(groups))
    return sizing


def _kv_layers_on_stage(geometry: Geometry, stages: list[StagePlan], stage: int) -> int:
    """Layers of that PP stage that keep per-token KV (state and cache-free layers do not)."""
    start = sum(s.num_layers for s in stages[:stage])
    kinds = geometry.layer_kinds[start:start + stages[stage].num_layers]
    return sum(1 for kind in kinds if kind not in (STATE, NO_CACHE))


def plan_vllm(inputs: VllmInputs, assumptions: BudgetAssumptions = ASSUMPTIONS, *, facts: ConfigFacts | None = None) -> VllmResult:
    """What vLLM computes at startup for these settings. Raises VllmInputError for settings
    vLLM rejects before it sizes the cache. `facts` may carry what earlier plans already derived
    from inputs.hf_config (see ConfigFacts); they are ignored for any other config."""
    sizing = _size(inputs, assumptions, _facts_for(inputs, facts))
    resolved, version, stages = sizing.resolved, sizing.resolved.version, sizing.stages
    error, max_len, largest_fit = sizing.error, sizing.max_len, sizing.largest_fit
    log_lines: list[str] = []
    if inputs.max_model_len == -1 and largest_fit > 0:
        memory = f"{format_gib(sizing.checks[sizing.estimates.index(largest_fit)])} GiB GPU"
        if largest_fit >= sizing.full_len:
            log_lines.append(f"Auto-fit max_model_len: full model context length {max_len} fits in available KV cache memory ({memory})")
        else:
            log_lines.append(f"Auto-fit max_model_len: reduced from {sizing.full_len} to {largest_fit} to fit in available KV cache memory ({memory})")
    chosen = stages[sizing.binding]
    if version >= (0, 10, 0):
        log_lines.insert(0, f"Available KV cache memory: {_gib_for(version, chosen.available_kv_cache_bytes)} GiB")
    if chosen.breakdown and chosen.breakdown.cudagraph_bytes > 0 and inputs.gpu_total_bytes:
        log_lines.insert(1, cudagraph_info_line(resolved.utilization, chosen.breakdown.cudagraph_bytes, inputs.gpu_total_bytes))
    tokens, concurrency = sizing.tokens, sizing.concurrency
    if error is None:
        if version >= (0, 30, 0):
            log_lines.append(f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {max_len:,} tokens per request: {concurrency:.2f}x")
        else:
            log_lines.append(f"GPU KV cache size: {tokens:,} tokens")
            log_lines.append(f"Maximum concurrency for {max_len:,} tokens per request: {concurrency:.2f}x")

    uses_budget = inputs.kv_cache_memory_bytes is None and inputs.available_kv_cache_bytes is None
    return VllmResult(
        fits=error is None,
        num_blocks=sizing.num_blocks,
        bytes_per_block=chosen.bytes_per_block,
        kv_cache_tokens=tokens,
        max_concurrency=round(concurrency, 2),
        estimated_max_model_len=largest_fit,
        error=error,
        available_kv_cache_bytes=chosen.available_kv_cache_bytes,
        breakdown=chosen.breakdown,
        vllm_version=format_version(version),
        max_model_len=max_len,
        requested_max_model_len=inputs.max_model_len,
        derived_max_model_len=resolved.derived.value,
        kv_cache_dtype=inputs.kv_cache_dtype,
        block_size=resolved.block_size,
        tensor_parallel_size=inputs.tensor_parallel_size,
        pipeline_parallel_size=inputs.pipeline_parallel_size,
        gpu_memory_utilization=resolved.utilization,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        max_num_seqs=resolved.max_num_seqs,
        enforce_eager=inputs.enforce_eager,
        kv_bytes_per_token_per_layer=sizing.per_layer,
        kv_bytes_per_token=sizing.per_layer * _kv_layers_on_stage(resolved.geometry, stages, chosen.stage),
        num_kv_cache_groups=len(sizing.groups),
        blocks_per_request=sizing.per_request,
        needed_bytes=sizing.needed,
        check_bytes=sizing.checks[chosen.stage],
        in_flight_tokens=sizing.in_flight,
        binding_stage=chosen.stage,
        stages=tuple(stages),
        log_lines=tuple(log_lines),
        assumptions=assumptions if uses_budget else None,
        uses_budget_model=uses_budget,
    )


def fitting_max_model_len(inputs: VllmInputs, assumptions: BudgetAssumptions = ASSUMPTIONS, *, facts: ConfigFacts | None = None) -> int:
    """plan_vllm(inputs).estimated_max_model_len when that plan starts, else 0; with max_model_len -1,
    the context auto-fit starts with. The same arithmetic without the log lines and result record,
    which the catalog's utilization x KV-dtype grid (eight plans a pair) never reads."""
    sizing = _size(inputs, assumptions, _facts_for(inputs, facts))
    return sizing.largest_fit if sizing.error is None else 0


# --------------------------------------------------------------------------- remediation


@dataclass(frozen=True)
class Lever:
    """One change to the `vllm serve` line and what it buys, computed by rerunning the plan."""

    kind: str  # clamp_max_model_len, kv_cache_dtype_fp8, enforce_eager, fp8_and_eager, utilization, tensor_parallel, quantization, gpu
    label: str
    flags: tuple[tuple[str, str], ...]  # vllm serve flags to set, e.g. (("--kv-cache-dtype", "fp8"),)
    fits_requested: bool  # the requested max_model_len starts with this lever
    max_model_len_that_fits: int  # the largest length that starts (<= the model's limit)
    num_blocks: int
    available_kv_cache_bytes: int
    note: str = ""

    def serve_flags(self, base: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """Flags for a `vllm serve` line that starts: the reader's own flags, this lever's, and
        --max-model-len when the lever alone does not reach the requested length."""
        own = {flag for flag, _ in self.flags}
        flags = tuple(f for f in base if f[0] not in own) + self.flags
        if self.kind not in ("clamp_max_model_len", "quantization", "gpu") and not self.fits_requested and self.max_model_len_that_fits > 0:
            flags += (("--max-model-len", str(self.max_model_len_that_fits)),)
        return flags


_LEVER_ORDER = ("clamp_max_model_len", "kv_cache_dtype_fp8", "enforce_eager", "fp8_and_eager", "utilization",
                "tensor_parallel", "quantization", "gpu")


def _lever(kind: str, label: str, flags: tuple[tuple[str, str], ...], inputs: VllmInputs, changes: Mapping[str, Any],
           requested_len: int, note: str = "", facts: ConfigFacts | None = None) -> Lever | None:
    """The lever that applies `changes` to inputs, priced by auto-fit (max_model_len -1)."""
    changed = replace_inputs(inputs, max_model_len=-1, **changes)
    try:
        # What plan_vllm(changed) would report, without its log lines and result record.
        auto = _size(changed, ASSUMPTIONS, _facts_for(changed, facts))
    except VllmInputError:
        return None
    fits = auto.error is None and auto.max_len >= requested_len
    return Lever(kind, label, flags, fits, auto.largest_fit if auto.error is None else 0,
                 auto.num_blocks, auto.stages[auto.binding].available_kv_cache_bytes, note)


def _next_power_of_two(value: int) -> int:
    return 1 << (value - 1).bit_length()


def vllm_remediation(
    inputs: VllmInputs,
    alternative_weights: Mapping[str, tuple[int, Mapping[str, Any] | None]] | None = None,
    candidate_gpus: Mapping[str, int] | None = None,
    *,
    facts: ConfigFacts | None = None,
    alternative_facts: Mapping[str, ConfigFacts] | None = None,
) -> tuple[Lever, ...]:
    """Rank the levers for a pair that does not start.

    alternative_weights: variant name -> (checkpoint bytes, its config.json or None to keep
    the current one), e.g. a 4-bit variant. candidate_gpus: GPU name -> total bytes.
    Sorted: levers that start the requested length first, then by the length they allow,
    then by a fixed kind order, then by label. `facts` may carry what earlier plans derived from
    inputs.hf_config; every lever on that config shares them. `alternative_facts` does the same for
    alternative_weights' configs, by the same names.
    """
    facts = _facts_for(inputs, facts)
    resolved = _resolve(inputs, facts)
    geometry, derived, version = resolved.geometry, resolved.derived, resolved.version
    requested_len = derived.default_max_model_len if inputs.max_model_len in (None, -1) else inputs.max_model_len
    levers: list[Lever | None] = []
    base = _lever("clamp_max_model_len", "", (), inputs, {}, requested_len, facts=facts)
    if base and base.max_model_len_that_fits > 0:
        levers.append(replace(base, label=f"--max-model-len {base.max_model_len_that_fits}",
                              flags=(("--max-model-len", str(base.max_model_len_that_fits)),), fits_requested=False,
                              note="the largest length that starts with everything else unchanged"))
    if inputs.kv_cache_dtype == "auto" and geometry.dtype_bytes > 1:
        levers.append(_lever("kv_cache_dtype_fp8", "--kv-cache-dtype fp8", (("--kv-cache-dtype", "fp8"),),
                             inputs, {"kv_cache_dtype": "fp8"}, requested_len, "halves bytes per token", facts))
    eager_helps = subtracts_cudagraph_estimate(version, inputs.enforce_eager, inputs.gpu_name, inputs.estimate_cudagraphs) and inputs.kv_cache_memory_bytes is None
    if eager_helps:
        levers.append(_lever("enforce_eager", "--enforce-eager", (("--enforce-eager", ""),),
                             inputs, {"enforce_eager": True}, requested_len, "no CUDA graphs: slower decoding", facts))
        if inputs.kv_cache_dtype == "auto" and geometry.dtype_bytes > 1:
            levers.append(_lever("fp8_and_eager", "--kv-cache-dtype fp8 --enforce-eager",
                                 (("--kv-cache-dtype", "fp8"), ("--enforce-eager", "")),
                                 inputs, {"kv_cache_dtype": "fp8", "enforce_eager": True}, requested_len, facts=facts))
    if inputs.kv_cache_memory_bytes is None and resolved.utilization < 0.95:
        levers.append(_lever("utilization", "--gpu-memory-utilization 0.95", (("--gpu-memory-utilization", "0.95"),),
                             inputs, {"gpu_memory_utilization": 0.95}, requested_len,
                             "needs that much memory free at startup", facts))
    tp = _next_power_of_two(inputs.tensor_parallel_size + 1)
    if tp * inputs.pipeline_parallel_size <= inputs.gpu_count:
        levers.append(_lever("tensor_parallel", f"--tensor-parallel-size {tp}", (("--tensor-parallel-size", str(tp)),),
                             inputs, {"tensor_parallel_size": tp}, requested_len, facts=facts))
    for name, (weights, config) in sorted((alternative_weights or {}).items()):
        changes = {"weights_bytes": weights, "hf_config": config if config is not None else inputs.hf_config}
        levers.append(_lever("quantization", name, (), inputs, changes, requested_len, "a smaller checkpoint",
                             (alternative_facts or {}).get(name, facts)))
    for name, total in sorted((candidate_gpus or {}).items()):
        levers.append(_lever("gpu", name, (), inputs, {"gpu_total_bytes": total, "gpu_name": name}, requested_len, facts=facts))
    found = [lever for lever in levers if lever is not None]
    return tuple(sorted(found, key=lambda l: (not l.fits_requested, -l.max_model_len_that_fits, _LEVER_ORDER.index(l.kind), l.label)))


def serve_command(model: str, flags: tuple[tuple[str, str], ...]) -> str:
    """A plain `vllm serve` line."""
    parts = ["vllm", "serve", model]
    for flag, value in flags:
        parts.append(flag if value == "" else f"{flag} {value}")
    return " ".join(parts)
