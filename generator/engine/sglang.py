"""SGLang's KV-cache pool at server start, reproduced token for token (SGLang v0.5.23).

What SGLang does (docs/research/sglang-kv-pool.md has each rule with its file at the tag):

1. Before loading weights each rank measures free GPU memory, the minimum over ranks
   (`pre_model_load_memory`; 0.4.x-0.5.x `profile_max_num_token(total_gpu_memory)`).
2. After loading, the KV budget is
   `rest = avail_after_load - pre_model_load_memory * (1 - mem_fraction_static)` GB
   (GB = 2**30 bytes), minus a multimodal reservation in v0.5.23. `rest <= 0` is an error.
3. `max_total_num_tokens = int(rest * 2**30) // cell_size`, floored to a multiple of
   `page_size`, then capped by `--max-total-tokens`. `cell_size` is the bytes one token
   costs on one rank across its layers: MHA `kv_heads_per_rank * (head_dim + v_head_dim)
   * layers * dtype_bytes`; MLA `(kv_lora_rank + qk_rope_head_dim) * layers * dtype_bytes`.
4. The pool tensors hold `max_total_num_tokens + page_size` rows (one padded page), which
   is what "KV Cache is allocated. ... K size: X GB" prints (X = bytes / 2**30, 2 places).
5. A request is refused when its input reaches
   `max_req_input_len = min(context_len - 1, max_total_num_tokens - 1) - 5`.

Only the budget inputs of step 2 come from the GPU; everything after is SGLang's integer
arithmetic. Nothing here does I/O or logging.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    NO_CACHE,
    SLIDING,
    Geometry,
    GeometryError,
    geometry_from_hf_config,
)

GB = 1 << 30  # SGLang's "GB" in its logs and in rest_memory is 2**30 bytes (memory_pool.py GB = 1024**3)
RELEASE = "0.5.23"

# --kv-cache-dtype choices at v0.5.23 that this engine sizes (arg_groups/fields/model.py).
# "auto" is the model dtype. mxfp8, nvfp4 and fp4_mx_block16 add scale buffers: not modelled.
KV_CACHE_DTYPE_BYTES = {"bf16": 2, "bfloat16": 2, "fp8_e5m2": 1, "fp8_e4m3": 1}
KV_CACHE_DTYPES = ("auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16")

# Architectures v0.5.23 gives a hybrid full/SWA pool (configs/model_config.py
# is_hybrid_swa_model). Other sliding-window models (Gemma 2/3, Mistral v0.1, Phi-3) get the
# plain pool: every layer keeps every token.
HYBRID_SWA_ARCHITECTURES = frozenset(
    {
        "BeamForCausalLM",
        "Llama4ForConditionalGeneration",
        "GptOssForCausalLM",
        "GraniteSWAForCausalLM",
        "GraniteMoeSWAForCausalLM",
        "IQuestQ1ForCausalLM",
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Step3p5ForCausalLM",
        "Step3p7ForConditionalGeneration",
        "Gemma4ForCausalLM",
        "Gemma4ForConditionalGeneration",
        "Gemma4UnifiedForConditionalGeneration",
        "LagunaForCausalLM",
        "MellumForCausalLM",
        "InklingForConditionalGeneration",
    }
)
DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8  # arg_groups/fields/schedule.py swa_full_tokens_ratio fallback

# DeepSeek V3.2-style sparse attention (DSA) with the fp8 "scaled" MLA layout
# (mem_cache/kv_cache_configurator.py calculate_mla_kv_cache_dim, memory_pool.py DSATokenToKVPool).
DSA_QUANT_BLOCK_SIZE = 128
DSA_ROPE_STORAGE_BYTES = 2  # the rope part stays bf16


class SglangInputError(ValueError):
    """A setting SGLang would reject, or one this engine does not model."""


# --------------------------------------------------------------------------- errors, by release

NOT_ENOUGH_MEMORY = "Not enough memory. Please try to increase --mem-fraction-static."


def not_enough_memory_text(release: str, mem_fraction_static: float | None = None) -> str:
    """RuntimeError text when the profiled pool is <= 0 tokens.

    0.4.x: the bare sentence (model_runner.py init_memory_pool). 0.5.5: adds
    " Current value: self.server_args.mem_fraction_static=<x>" (an f-string `=` specifier).
    0.5.15 and 0.5.23: pool_configurator.py MemoryPoolConfig adds
    " Current value: mem_fraction_static=<x>" when the value is known.
    """
    key = _release_key(release)
    if key < (0, 5, 0, 0) or mem_fraction_static is None:
        return NOT_ENOUGH_MEMORY
    if key < (0, 5, 15, 0):
        return f"{NOT_ENOUGH_MEMORY} Current value: self.server_args.mem_fraction_static={mem_fraction_static}"
    return f"{NOT_ENOUGH_MEMORY} Current value: mem_fraction_static={mem_fraction_static}"


def no_kv_memory_text(mem_fraction_static: float, avail_after_load_gb: float, pre_model_load_gb: float) -> str:
    """v0.5.23 ValueError when loaded weights leave rest_memory <= 0 (kv_cache_configurator.py)."""
    minimum = 1 - avail_after_load_gb / pre_model_load_gb
    suggested = math.ceil(minimum * 1000) / 1000
    return (
        "Loaded weights leave no GPU memory for the KV cache under "
        f"--mem-fraction-static={mem_fraction_static}. Raise --mem-fraction-static above {suggested:.3f} "
        f"(minimum viable = 1 - available/pre = {minimum:.4f}). If using speculative decoding, "
        "draft weights are now counted."
    )


def input_too_long_text(input_tokens: int, max_req_input_len: int) -> str:
    """Scheduler rejection (managers/utils.py validate_input_length), 0.4.3 through 0.5.23."""
    return (
        f"Input length ({input_tokens} tokens) exceeds the maximum allowed length ({max_req_input_len} tokens). "
        "Use a shorter input or enable --allow-auto-truncate."
    )


def context_too_long_text(input_tokens: int, context_len: int) -> str:
    """Tokenizer-manager rejection (managers/tokenizer_manager.py), 0.4.3 through 0.5.23."""
    return f"The input ({input_tokens} tokens) is longer than the model's context length ({context_len} tokens)."


def _release_key(release: str) -> tuple[int, int, int, int]:
    """(major, minor, patch, post) from "0.5.23", "v0.4.3.post4"."""
    text = str(release).strip().lstrip("v")
    post = 0
    if ".post" in text:
        text, _, post_text = text.partition(".post")
        if not post_text.isdigit():
            raise SglangInputError(f"release {release!r} is not like 0.5.23 or 0.4.3.post4")
        post = int(post_text)
    parts = text.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise SglangInputError(f"release {release!r} is not like 0.5.23 or 0.4.3.post4")
    nums = [int(p) for p in parts] + [0] * (3 - len(parts))
    return nums[0], nums[1], nums[2], post


# --------------------------------------------------------------------------- per-token bytes


@dataclass(frozen=True, slots=True)
class CellSize:
    """Bytes per token of one rank's pool, split as SGLang allocates it."""

    kind: str  # "mha", "mla", "dsa", "hybrid_swa"
    k_bytes: int  # per token, all pool layers (MHA K side; MLA: the whole latent row)
    v_bytes: int  # per token, all pool layers (0 for MLA)
    indexer_bytes: int = 0  # DSA index-K rows, per token
    swa_k_bytes: int = 0  # hybrid SWA: per token of the SWA pool
    swa_v_bytes: int = 0
    swa_full_tokens_ratio: float = 1.0

    @property
    def full_bytes(self) -> int:
        return self.k_bytes + self.v_bytes + self.indexer_bytes

    @property
    def swa_bytes(self) -> int:
        return self.swa_k_bytes + self.swa_v_bytes

    @property
    def per_token(self) -> float:
        """Bytes the profiler charges per token of max_total_num_tokens."""
        if self.kind == "hybrid_swa":
            return self.full_bytes + self.swa_full_tokens_ratio * self.swa_bytes
        return self.full_bytes


def kv_dtype_bytes(kv_cache_dtype: str, geometry: Geometry) -> int:
    if kv_cache_dtype == "auto":
        return geometry.dtype_bytes
    if kv_cache_dtype in KV_CACHE_DTYPE_BYTES:
        return KV_CACHE_DTYPE_BYTES[kv_cache_dtype]
    if kv_cache_dtype in KV_CACHE_DTYPES:
        raise SglangInputError(f"--kv-cache-dtype {kv_cache_dtype} adds scale buffers this engine does not size")
    raise SglangInputError(f"--kv-cache-dtype {kv_cache_dtype!r} is not one of {', '.join(KV_CACHE_DTYPES)}")


# What "KV Cache is allocated. dtype: X" prints at 0.5.15+: the pool's torch dtype (self.dtype), e.g.
# "dtype: torch.float8_e4m3fn" in a real log with --kv-cache-dtype fp8_e4m3.
_TORCH_KV_DTYPES = {"bf16": "torch.bfloat16", "bfloat16": "torch.bfloat16", "fp8_e4m3": "torch.float8_e4m3fn", "fp8_e5m2": "torch.float8_e5m2"}
_TORCH_MODEL_DTYPES = {"bfloat16": "torch.bfloat16", "float16": "torch.float16", "float32": "torch.float32"}


def kv_torch_dtype(kv_cache_dtype: str, geometry: Geometry) -> str:
    if kv_cache_dtype == "auto":
        return _TORCH_MODEL_DTYPES.get(geometry.dtype, "torch.bfloat16")
    return _TORCH_KV_DTYPES.get(kv_cache_dtype, "torch.bfloat16")


def num_kv_heads(total_kv_heads: int, tp: int) -> int:
    """ModelConfig.get_num_kv_heads: heads split over TP, at least one per rank."""
    return max(1, total_kv_heads // tp)


def _cfg_int(cfg: Mapping[str, Any], key: str) -> int | None:
    value = cfg.get(key)
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, int) or value <= 0:
        raise GeometryError(f"`{key}` must be a positive integer, got {value!r}")
    return value


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = cfg.get("text_config")
    return inner if isinstance(inner, Mapping) else cfg


def is_hybrid_swa(hf_config: Mapping[str, Any], geometry: Geometry) -> bool:
    archs = hf_config.get("architectures") or []
    if not any(a in HYBRID_SWA_ARCHITECTURES for a in archs):
        return False
    if "LagunaForCausalLM" in archs and not _text(hf_config).get("sliding_window"):
        return False
    return geometry.is_hybrid or all(k != FULL for k in geometry.layer_kinds)


def cell_size(
    hf_config: Mapping[str, Any],
    *,
    kv_cache_dtype: str = "auto",
    tp: int = 1,
    swa_full_tokens_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO,
    geometry: Geometry | None = None,
) -> CellSize:
    """Per-token pool bytes of one rank (pool_configurator.py at v0.5.23)."""
    if tp < 1:
        raise SglangInputError("--tp-size must be at least 1")
    geometry = geometry or geometry_from_hf_config(hf_config)
    if geometry.has_state:
        raise SglangInputError(f"{geometry.model_type} has Mamba or linear-attention layers; SGLang's hybrid pools are not modelled")
    if geometry.has_global_shape or NO_CACHE in geometry.layer_kinds:
        # Gemma 4: full layers of another head size or KV head count, or layers sharing an earlier layer's KV.
        raise SglangInputError(f"{geometry.model_type} has layers of two KV shapes or layers that share KV; SGLang's pools for it are not modelled")
    text = _text(hf_config)
    nbytes = kv_dtype_bytes(kv_cache_dtype, geometry)
    layers = geometry.num_layers

    if geometry.mla is not None:
        rank, rope = geometry.mla.kv_lora_rank, geometry.mla.qk_rope_head_dim
        index_head_dim = _cfg_int(text, "index_head_dim")
        if index_head_dim is None:
            # MLA keeps one latent row per token, whole on every rank (no TP split).
            return CellSize("mla", k_bytes=(rank + rope) * layers * nbytes, v_bytes=0)
        if kv_cache_dtype != "fp8_e4m3":
            # DSA with a bf16 pool or a raw-layout backend: latent row as plain MLA.
            latent = (rank + rope) * nbytes
        else:
            if rank % DSA_QUANT_BLOCK_SIZE:
                raise SglangInputError(f"kv_lora_rank {rank} must be a multiple of {DSA_QUANT_BLOCK_SIZE}")
            latent = rank + rank // DSA_QUANT_BLOCK_SIZE * 4 + rope * DSA_ROPE_STORAGE_BYTES
        # Index-K: fp8 values plus a 4-byte scale per 128, stored as uint8 (index_kpool 1).
        indexer = index_head_dim + index_head_dim // DSA_QUANT_BLOCK_SIZE * 4
        return CellSize("dsa", k_bytes=latent * layers, v_bytes=0, indexer_bytes=indexer * layers)

    heads = num_kv_heads(geometry.num_kv_heads, tp)
    head_dim = geometry.head_dim
    v_head_dim = _cfg_int(text, "v_head_dim") or head_dim
    if not is_hybrid_swa(hf_config, geometry):
        return CellSize("mha", k_bytes=heads * head_dim * layers * nbytes, v_bytes=heads * v_head_dim * layers * nbytes)

    if not 0 < swa_full_tokens_ratio <= 1:
        raise SglangInputError("--swa-full-tokens-ratio must be in (0, 1]")
    full_layers = geometry.count(FULL)
    swa_layers = geometry.count(SLIDING) + geometry.count(CHUNKED)
    swa_heads = num_kv_heads(_cfg_int(text, "swa_num_key_value_heads") or geometry.num_kv_heads, tp)
    swa_head_dim = _cfg_int(text, "swa_head_dim") or head_dim
    swa_v_head_dim = _cfg_int(text, "swa_v_head_dim") or swa_head_dim
    return CellSize(
        "hybrid_swa",
        k_bytes=heads * head_dim * full_layers * nbytes,
        v_bytes=heads * v_head_dim * full_layers * nbytes,
        swa_k_bytes=swa_heads * swa_head_dim * swa_layers * nbytes,
        swa_v_bytes=swa_heads * swa_v_head_dim * swa_layers * nbytes,
        swa_full_tokens_ratio=swa_full_tokens_ratio if full_layers else 1.0,
    )


# --------------------------------------------------------------------------- the pool


@dataclass(frozen=True, slots=True)
class SglangPool:
    cell: CellSize
    page_size: int
    kv_cache_bytes: int  # the budget the profiler divided (after --max-total-tokens: still the budget)
    max_total_num_tokens: int  # full-attention pool tokens (SGLang's max_total_num_tokens)
    swa_max_total_num_tokens: int | None
    capped_by_max_total_tokens: bool

    @property
    def rows(self) -> int:
        return self.max_total_num_tokens + self.page_size

    @property
    def k_size_gb(self) -> float:
        return self.rows * self.cell.k_bytes / GB

    @property
    def v_size_gb(self) -> float:
        return self.rows * self.cell.v_bytes / GB

    @property
    def kv_size_gb(self) -> float:
        """The single "KV size" MLA/DSA pools print (latent rows plus DSA index rows)."""
        return self.rows * (self.cell.k_bytes + self.cell.indexer_bytes) / GB

    def log_lines(self, release: str = RELEASE, dtype_text: str = "torch.bfloat16") -> tuple[str, ...]:
        """What SGLang prints for this pool (memory_pool.py), by release:

        0.4.3: "KV Cache is allocated. K size: X GB, V size: Y GB." (no token count; MLA silent);
        0.4.3.post4 (a real log), 0.4.9 and 0.5.5: "KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB";
        0.5.15-0.5.23: "... allocated. dtype: torch.bfloat16, #tokens: N, ...".
        MLA/DSA pools print one "KV size" instead of K and V. Hybrid SWA pools print the split,
        one line per sub-pool (labelled "Full "/"SWA " at 0.5.23) and the SWAKVPool total.
        """
        key = _release_key(release)
        n = self.max_total_num_tokens
        if key < (0, 4, 3, 4):
            if self.cell.kind in ("mla", "dsa"):
                return ()  # 0.4.3's MLATokenToKVPool logs nothing
            return (f"KV Cache is allocated. K size: {self.k_size_gb:.2f} GB, V size: {self.v_size_gb:.2f} GB.",)
        dtype = f"dtype: {dtype_text}, " if key >= (0, 5, 15, 0) else ""
        if self.cell.kind in ("mla", "dsa"):
            return (f"KV Cache is allocated. {dtype}#tokens: {n}, KV size: {self.kv_size_gb:.2f} GB",)
        label_full, label_swa = ("Full ", "SWA ") if key >= (0, 5, 23, 0) else ("", "")
        full = f"KV Cache is allocated. {dtype}#tokens: {n}, K size: {self.k_size_gb:.2f} GB, V size: {self.v_size_gb:.2f} GB"
        if self.cell.kind == "hybrid_swa":
            # swa_memory_pool.py SWAKVPool: the full sub-pool, then the SWA one, then the total.
            swa = self.swa_max_total_num_tokens or 0
            rows = swa + self.page_size
            swa_k, swa_v = rows * self.cell.swa_k_bytes / GB, rows * self.cell.swa_v_bytes / GB
            total = self.k_size_gb + self.v_size_gb + swa_k + swa_v
            return (
                f"Use sliding window memory pool. full_layer_tokens={n}, swa_layer_tokens={swa}",
                label_full + full,
                f"{label_swa}KV Cache is allocated. {dtype}#tokens: {swa}, K size: {swa_k:.2f} GB, V size: {swa_v:.2f} GB",
                f"SWAKVPool mem usage: {total:.2f} GB, swa size: {swa}, full size: {n}",
            )
        return (full,)

    def max_req_input_len(self, context_len: int) -> int:
        return max_req_input_len(context_len, self.max_total_num_tokens)


def pool_from_bytes(
    cell: CellSize,
    kv_cache_bytes: int,
    *,
    page_size: int = 1,
    max_total_tokens: int | None = None,
) -> SglangPool:
    """max_total_num_tokens from one rank's KV budget (DefaultPoolConfigurator /
    HybridSWAPoolConfigurator.calculate_pool_sizes, then KVCacheConfigurator.config_from_budget)."""
    if page_size < 1:
        raise SglangInputError("--page-size must be at least 1")
    budget = max(int(kv_cache_bytes), 0)
    if cell.kind == "hybrid_swa":
        tokens = int(budget // cell.per_token)
    else:
        tokens = budget // cell.full_bytes
    tokens = tokens // page_size * page_size
    capped = False
    if max_total_tokens is not None and max_total_tokens < tokens:
        tokens, capped = max_total_tokens // page_size * page_size, True
    swa = swa_tokens(tokens, cell.swa_full_tokens_ratio, page_size) if cell.kind == "hybrid_swa" else None
    return SglangPool(cell, page_size, budget, tokens, swa, capped)


def swa_tokens(full_tokens: int, swa_full_tokens_ratio: float, page_size: int = 1) -> int:
    """SWA-layer pool tokens of a hybrid pool (HybridSWAPoolConfigurator._solve_pool_sizes)."""
    return int(full_tokens * swa_full_tokens_ratio) // page_size * page_size


def rest_memory_gb(
    avail_after_load_gb: float,
    pre_model_load_gb: float,
    mem_fraction_static: float,
    mm_reservation_gb: float = 0.0,
) -> float:
    """KV budget in GB (kv_cache_configurator.py _profile_available_bytes; the same
    difference in 0.4.x-0.5.x profile_max_num_token, without the multimodal term)."""
    if not 0 < mem_fraction_static <= 1:
        raise SglangInputError("--mem-fraction-static must be in (0, 1]")
    return avail_after_load_gb - pre_model_load_gb * (1 - mem_fraction_static) - mm_reservation_gb


def pool_from_gpu(
    cell: CellSize,
    *,
    pre_model_load_gb: float,
    weights_gb: float,
    mem_fraction_static: float,
    page_size: int = 1,
    max_total_tokens: int | None = None,
    mm_reservation_gb: float = 0.0,
) -> SglangPool:
    """Pool from the free memory before loading and what loading took ("Load weight end.
    ... mem usage=X GB"). Raises SglangInputError with SGLang's text when nothing is left."""
    after = pre_model_load_gb - weights_gb
    rest = rest_memory_gb(after, pre_model_load_gb, mem_fraction_static, mm_reservation_gb)
    if rest <= 0:
        raise SglangInputError(no_kv_memory_text(mem_fraction_static, after, pre_model_load_gb))
    pool = pool_from_bytes(cell, int(rest * GB), page_size=page_size, max_total_tokens=max_total_tokens)
    if pool.max_total_num_tokens <= 0:
        raise SglangInputError(not_enough_memory_text(RELEASE, mem_fraction_static))
    return pool


def max_req_input_len(context_len: int, max_total_num_tokens: int) -> int:
    """Longest input the scheduler admits (tp_worker.py: max_req_len - 5)."""
    return min(context_len - 1, max_total_num_tokens - 1) - 5


def min_mem_fraction_static(avail_after_load_gb: float, pre_model_load_gb: float) -> float:
    """The v0.5.23 "minimum viable" fraction: 1 - available/pre (rest_memory == 0)."""
    return 1 - avail_after_load_gb / pre_model_load_gb


def tokens_needed_gb(cell: CellSize, tokens: int, page_size: int = 1) -> float:
    """KV budget (GB) that yields at least `tokens` pool tokens."""
    pages = -(-tokens // page_size)
    return pages * page_size * cell.per_token / GB


# --------------------------------------------------------------------------- default --mem-fraction-static


@dataclass(frozen=True, slots=True)
class MemDefaults:
    chunked_prefill_size: int
    cuda_graph_max_bs_decode: int
    prefill_graph_sizes: int  # number of prefill CUDA-graph token buckets (0 when prefill graphs are off)
    reserved_mib: float
    mem_fraction_static: float


def _tier(gpu_mem_mib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, decode max_bs) by GPU memory at v0.5.23 (arg_groups/memory_hook.py)."""
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        return 4096, 48 if tp < 4 else 160
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


# A catalog asks both of these for a few memory sizes, once per pair and option; the answers depend on the arguments alone.
@lru_cache(maxsize=256, typed=True)
def prefill_graph_sizes(max_bs: int) -> tuple[int, ...]:
    """arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes."""
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(576, 1025, 64))
        + list(range(1280, 4097, 256))
        + list(range(4608, max_bs + 1, 512))
    )
    return tuple(s for s in sizes if s <= max_bs)


@lru_cache(maxsize=1024, typed=True)
def default_mem_fraction_static(
    gpu_mem_mib: float,
    *,
    tp: int = 1,
    pp: int = 1,
    mla: bool = False,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs_decode: int | None = None,
    max_running_requests: int | None = None,
    decode_graphs: bool = True,
    prefill_graphs: bool = True,
) -> MemDefaults:
    """v0.5.23 default on CUDA for a text model without speculative decoding, DP attention,
    DeepEP or post-capture sizing (arg_groups/memory_hook.py handle_gpu_memory_settings).

    `gpu_mem_mib` is nvidia-smi's memory.total (utils/common.py get_nvgpu_memory_capacity).
    """
    tier_chunk, tier_bs = _tier(gpu_mem_mib, tp)
    chunk = tier_chunk if chunked_prefill_size is None else chunked_prefill_size
    max_bs = tier_bs if cuda_graph_max_bs_decode is None else cuda_graph_max_bs_decode
    if cuda_graph_max_bs_decode is None and max_running_requests is not None:
        max_bs = min(max_bs, max_running_requests)
    reserved = 512.0 + max(chunk, 2048) * 1.5 + tp * pp / 8 * 1024
    if decode_graphs:
        reserved += max_bs * 2
    buckets = 0
    if prefill_graphs:
        if mla:
            reserved += 1.5 * 1024
            buckets = len(prefill_graph_sizes(min(8192, chunk)))
        else:
            buckets = len(prefill_graph_sizes(chunk))
            reserved += buckets * 8
    if gpu_mem_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    fraction = round((gpu_mem_mib - reserved) / gpu_mem_mib, 3)
    return MemDefaults(chunk, max_bs, buckets, reserved, fraction)


def default_mem_fraction_static_0_4_3(tp: int) -> float:
    """v0.4.3 (server_args.py ServerArgs.__post_init__): by TP size only."""
    if tp >= 16:
        return 0.79
    if tp >= 8:
        return 0.81
    if tp >= 4:
        return 0.85
    if tp >= 2:
        return 0.87
    return 0.88


# --------------------------------------------------------------------------- one call for pages and the JSON API

# Empirical, from one log: QwQ-32B TP4 on 4x L4 (data/evidence/sglang_real_logs.yaml
# llms-in-clouds-qwq-32b-tp4-l4) printed "Load weight begin. avail mem=21.63 GB" on a card whose
# CUDA total is 23570219008 bytes = 21.95 GB (data/gpus.yaml l4): 0.32 GB of CUDA context and
# NCCL buffers before the weights. Not an SGLang rule; pages must call it an estimate.
STARTUP_OVERHEAD_GB = 0.32


@dataclass(frozen=True, slots=True)
class SglangResult:
    release: str
    kind: str
    kv_bytes_per_token: float  # one rank, what the profiler divides by
    kv_cache_bytes: int  # one rank's KV budget
    max_total_num_tokens: int
    swa_max_total_num_tokens: int | None
    page_size: int
    k_size_gb: float | None
    v_size_gb: float | None
    kv_size_gb: float | None
    log_lines: tuple[str, ...]
    max_req_input_len: int | None  # None without a context length
    context_fits: bool | None  # the pool holds context_len tokens, so only the context length limits a request
    budget_estimated: bool  # the budget came from a GPU total and STARTUP_OVERHEAD_GB


def plan(
    hf_config: Mapping[str, Any],
    *,
    tp: int = 1,
    kv_cache_dtype: str = "auto",
    page_size: int = 1,
    kv_cache_bytes: int | None = None,
    pre_model_load_gb: float | None = None,
    gpu_total_bytes: int | None = None,
    weights_gb: float | None = None,
    mem_fraction_static: float | None = None,
    max_total_tokens: int | None = None,
    context_len: int | None = None,
    swa_full_tokens_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO,
    startup_overhead_gb: float = STARTUP_OVERHEAD_GB,
    release: str = RELEASE,
    geometry: Geometry | None = None,
) -> SglangResult:
    """SGLang's pool for one rank from either its KV budget (`kv_cache_bytes`) or the free
    memory before loading (`pre_model_load_gb`, or `gpu_total_bytes` less the empirical
    startup overhead) plus `weights_gb` and `mem_fraction_static`. `geometry` may carry
    geometry_from_hf_config(hf_config), derived once for many plans of one config."""
    geometry = geometry or geometry_from_hf_config(hf_config)
    cell = cell_size(hf_config, kv_cache_dtype=kv_cache_dtype, tp=tp, swa_full_tokens_ratio=swa_full_tokens_ratio, geometry=geometry)
    estimated = False
    if kv_cache_bytes is not None:
        pool = pool_from_bytes(cell, kv_cache_bytes, page_size=page_size, max_total_tokens=max_total_tokens)
        if pool.max_total_num_tokens <= 0:
            raise SglangInputError(not_enough_memory_text(release, mem_fraction_static))
    else:
        if pre_model_load_gb is None:
            if gpu_total_bytes is None:
                raise SglangInputError("give kv_cache_bytes, pre_model_load_gb or gpu_total_bytes")
            pre_model_load_gb = gpu_total_bytes / GB - startup_overhead_gb
            estimated = True
        if weights_gb is None or mem_fraction_static is None:
            raise SglangInputError("weights_gb and mem_fraction_static are needed with a GPU budget")
        pool = pool_from_gpu(
            cell,
            pre_model_load_gb=pre_model_load_gb,
            weights_gb=weights_gb,
            mem_fraction_static=mem_fraction_static,
            page_size=page_size,
            max_total_tokens=max_total_tokens,
        )
    mla = cell.kind in ("mla", "dsa")
    limit = pool.max_req_input_len(context_len) if context_len else None
    return SglangResult(
        release=release,
        kind=cell.kind,
        kv_bytes_per_token=cell.per_token,
        kv_cache_bytes=pool.kv_cache_bytes,
        max_total_num_tokens=pool.max_total_num_tokens,
        swa_max_total_num_tokens=pool.swa_max_total_num_tokens,
        page_size=page_size,
        k_size_gb=None if mla else round(pool.k_size_gb, 2),
        v_size_gb=None if mla else round(pool.v_size_gb, 2),
        kv_size_gb=round(pool.kv_size_gb, 2) if mla else None,
        log_lines=pool.log_lines(release, kv_torch_dtype(kv_cache_dtype, geometry)),
        max_req_input_len=limit,
        # min(context_len - 1, pool - 1) - 5: the pool is not the binding term when pool >= context_len
        # (v0.5.23 warns "KV pool holds N tokens, fewer than --context-length M" otherwise).
        context_fits=None if limit is None else pool.max_total_num_tokens >= context_len,
        budget_estimated=estimated,
    )
