"""llama.cpp (llama-server) KV-cache arithmetic, exact to the byte of its `llama_kv_cache: size =` line,
and the rest of the VRAM picture as a stated estimate.

Facts are from the llama.cpp source at master 3f545be (2026-08-22; nearest release
https://github.com/ggml-org/llama.cpp/tree/b10573), old formats from commit c392e50 (2025-02-20,
https://github.com/ggml-org/llama.cpp/tree/c392e5094deaf2d1a7c18683214f007fad3fe42b). Function and file
names in comments are upstream paths.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Any, Callable, Mapping

from generator import units
from generator.engine.geometry import (
    CHUNKED,
    FULL,
    SLIDING,
    Geometry,
    GeometryError,
    MlaRanks,
    geometry_from_hf_config,
)
from generator.schema import BOUNDS, MAX_COUNT, MAX_GIB, check_int
from generator.units import GIB, MIB

# ggml/src/ggml.c type_traits + ggml-common.h static_asserts: (block size, bytes per block).
GGML_BLOCK = {
    "f32": (1, 4),
    "f16": (1, 2),
    "bf16": (1, 2),
    "q8_0": (32, 34),
    "q4_0": (32, 18),
    "q4_1": (32, 20),
    "q5_0": (32, 22),
    "q5_1": (32, 24),
    "iq4_nl": (32, 18),
}
# The values -ctk/-ctv accept, in the order `llama-server --help` lists them (common/arg.cpp).
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
QUANTIZED_CACHE_TYPES = frozenset(t for t, (blck, _) in GGML_BLOCK.items() if blck > 1)

# llama_context: GGML_PAD(n_ctx, 256) since 2025-11-07 (PR #17046); before that
# llama_kv_cache_get_padding() returned flash_attn ? 256 : 32.
CTX_PAD = 256
CTX_PAD_BEFORE_2025_11_FA_OFF = 32
DEFAULT_UBATCH = 512
AUTO_PARALLEL = 4  # tools/server/server.cpp: n_parallel auto -> 4 slots, kv_unified = true
FIT_TARGET_BYTES = 1024 * MIB  # common/fit.cpp: --fit-target default, free memory left per device
FIT_MIN_CTX = 4096  # --fit-ctx default

FLASH_ATTN_ON = frozenset({"on", "enabled", "true", "1"})
FLASH_ATTN_OFF = frozenset({"off", "disabled", "false", "0"})
FLASH_ATTN_AUTO = frozenset({"auto", "-1"})

# llama.cpp architectures whose model builds an interleaved-SWA cache (llama_kv_cache_iswa),
# with the SWA layer pattern set_swa_pattern(n) uses: is_swa(il) = il % n < n - 1.
# src/models/gemma2.cpp (2), gemma3.cpp (6), openai-moe.cpp (2), read at master 3f545be.
SWA_PATTERN_BY_GGUF_ARCH = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2}
# From config.json the pattern comes with the layer kinds; cohere2 (Command R7B) builds an iSWA cache too
# (ggml-org/llama.cpp PR #13194 discussion runs c4ai-command-r7b with and without --swa-full).
_SWA_HF_PREFIXES = ("gemma2", "gemma3", "gpt_oss", "cohere2")

# Grok forces flash attention off ("flash_attn is not compatible with Grok - forcing off").
_FA_FORCED_OFF_ARCHS = frozenset({"grok"})


class LlamaCppError(ValueError):
    """llama-server refuses these settings; the message is llama.cpp's own log text."""


class LlamaCppInputError(ValueError):
    """The request cannot describe a llama-server launch (missing or malformed values)."""


def row_size(cache_type: str, n_elements: int) -> int:
    """ggml_row_size: bytes of one row of `n_elements` in `cache_type`."""
    blck, size = GGML_BLOCK[cache_type]
    if n_elements % blck:
        raise LlamaCppError(f"row of {n_elements} elements is not a whole number of {cache_type} blocks of {blck}")
    return n_elements // blck * size


def _float32(value: int | float) -> float:
    # llama.cpp prints (float)bytes / (1024.0f * 1024.0f); float32 rounding can move the last digit.
    return struct.unpack("f", struct.pack("f", float(value)))[0]


def mib_text(n_bytes: int, *, float32: bool = True) -> str:
    value = (_float32(n_bytes) if float32 else float(n_bytes)) / MIB
    return f"{value:.2f}"


# ---------------------------------------------------------------------------------------------
# Model layout: which layers hold K and V, how wide


@dataclass(frozen=True)
class LayerKv:
    """One attention layer's cache row: n_embd_k_gqa(il), n_embd_v_gqa(il) and its head sizes."""

    index: int
    k_width: int
    v_width: int  # 0 for MLA: the cache holds K only (has_v = !is_mla)
    head_k: int
    head_v: int
    swa: bool


@dataclass(frozen=True)
class KvLayout:
    """What llama.cpp knows about a model's KV cache. The shared Geometry cannot express per-layer
    KV heads, V width != K width, or MLA's K-only cache, so llama.cpp keeps this alongside it."""

    arch: str
    n_layer: int  # block_count: the repeating layers -ngl counts
    kv_layers: tuple[LayerKv, ...]  # layers with KV (hparams.has_kv); recurrent layers excluded
    n_swa: int | None
    is_mla: bool
    n_ctx_train: int
    n_embd: int
    n_head: int  # max query heads, sizes the KQ matrix of the compute graph
    n_vocab: int  # 0 when unknown
    n_ff: int | None
    mla_lengths: tuple[int, int] | None = None  # key_length_mla, value_length_mla

    # The layout is frozen, so what is derived from it alone is derived once per layout (cached_property
    # writes to the instance dict, past the frozen __setattr__; fields, eq and repr are unaffected).
    # A catalog pair sizes one layout's cache ~50 times (five binary searches over -c).

    @cached_property
    def is_swa_model(self) -> bool:
        return self.n_swa is not None and any(layer.swa for layer in self.kv_layers)

    @cached_property
    def v_width_max(self) -> int:
        # hparams.n_embd_v_gqa_max(): the width every V row is padded to when FA is off.
        return max((layer.v_width for layer in self.kv_layers), default=0)

    @cached_property
    def _memo(self) -> _LayoutMemo:
        return _LayoutMemo()

    @cached_property
    def _sizes_nonnegative(self) -> bool:
        # With no negative width or dimension, every cache row and compute-buffer term grows with the context.
        dims = (self.n_head, self.n_vocab, self.n_ff or 0, self.n_embd)
        return all(d >= 0 for d in dims) and all(layer.k_width >= 0 and layer.v_width >= 0 for layer in self.kv_layers)


def kv_layout_from_geometry(geometry: Geometry) -> KvLayout:
    """Layout of the GGUF llama.cpp's converter writes for this config.json."""
    model_type = geometry.model_type
    if model_type.startswith("gemma3n"):
        # Gemma 3n reuses the KV of earlier layers in its last layers; that sharing is not modelled.
        raise GeometryError("Gemma 3n shares KV between layers; its llama.cpp cache is not modelled")
    if geometry.mla is not None:
        # conversion/deepseek.py: key_length = kv_lora_rank + qk_rope_head_dim (576), value_length =
        # kv_lora_rank (512), num_key_value_heads = 1; is_mla() -> K-only cache 576 wide.
        width = geometry.mla.kv_lora_rank + geometry.mla.qk_rope_head_dim
        layers = tuple(
            LayerKv(il, width, 0, width, geometry.mla.kv_lora_rank, False) for il in range(geometry.num_layers)
        )
        return KvLayout(
            arch=model_type,
            n_layer=geometry.num_layers,
            kv_layers=layers,
            n_swa=None,
            is_mla=True,
            n_ctx_train=geometry.max_position_embeddings,
            n_embd=geometry.hidden_size,
            n_head=geometry.num_attention_heads,
            n_vocab=geometry.vocab_size,
            n_ff=geometry.intermediate_size,
        )

    iswa = model_type.startswith(_SWA_HF_PREFIXES) or (model_type.startswith("llama4") and CHUNKED in geometry.layer_kinds)
    window = geometry.sliding_window or geometry.attention_chunk_size
    width = geometry.num_kv_heads * geometry.head_dim
    layers = tuple(
        LayerKv(
            il,
            width,
            width,
            geometry.head_dim,
            geometry.head_dim,
            iswa and kind in (SLIDING, CHUNKED),
        )
        for il, kind in enumerate(geometry.layer_kinds)
    )
    # Other archs with a config.json sliding_window (Mistral v0.1, Qwen2 with use_sliding_window)
    # get a full-size cache in llama.cpp: only iSWA models build the second, smaller cache.
    return KvLayout(
        arch=model_type,
        n_layer=geometry.num_layers,
        kv_layers=layers,
        n_swa=window if iswa and any(layer.swa for layer in layers) else None,
        is_mla=False,
        n_ctx_train=geometry.max_position_embeddings,
        n_embd=geometry.hidden_size,
        n_head=geometry.num_attention_heads,
        n_vocab=geometry.vocab_size,
        n_ff=geometry.intermediate_size,
    )


def _meta_int(meta: Mapping[str, Any], key: str, *, required: bool = False, default: int | None = None) -> int | None:
    value = meta.get(key)
    if value is None:
        if required:
            raise GeometryError(f"GGUF metadata lacks `{key}`")
        return default
    kind = "layers" if key.endswith(".block_count") else "tokens" if key.endswith((".context_length", ".sliding_window")) else "width"
    return check_int(value, f"`{key}`", kind, GeometryError, low=0, wrong=f"`{key}` must be a non-negative integer, got {value!r}")


def _meta_per_layer(meta: Mapping[str, Any], key: str, n_layer: int, default: int | None) -> list[int]:
    value = meta.get(key)
    if value is None:
        if default is None:
            raise GeometryError(f"GGUF metadata lacks `{key}`")
        return [default] * n_layer
    if isinstance(value, (list, tuple)):
        if len(value) != n_layer or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value):
            raise GeometryError(f"`{key}` must list {n_layer} non-negative integers, one per layer")
        for v in value:
            check_int(v, f"`{key}` entry", "count0", GeometryError)
        return list(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GeometryError(f"`{key}` must be an integer or a per-layer array, got {value!r}")
    return [check_int(value, f"`{key}`", "count0", GeometryError)] * n_layer


def _gguf_vocab(meta: Mapping[str, Any], arch: str) -> int:
    count = _meta_int(meta, f"{arch}.vocab_size")
    if count:
        return count
    tokens = meta.get("tokenizer.ggml.tokens")
    if isinstance(tokens, (list, tuple)):
        return len(tokens)
    if isinstance(tokens, int) and not isinstance(tokens, bool):
        return tokens  # callers that pass the array length (llama_model_loader prints arr[str,N])
    return 0


def kv_layout_from_gguf_metadata(meta: Mapping[str, Any]) -> KvLayout:
    """Layout from GGUF keys, as llama_model::load_hparams reads them (src/llama-model.cpp)."""
    if not isinstance(meta, Mapping):
        raise GeometryError("GGUF metadata must be an object of key/value pairs")
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise GeometryError("GGUF metadata lacks `general.architecture`")
    n_layer = _meta_int(meta, f"{arch}.block_count", required=True)
    if n_layer < 1:
        raise GeometryError(f"`{arch}.block_count` must be at least 1")
    n_embd = _meta_int(meta, f"{arch}.embedding_length", required=True)
    heads = _meta_per_layer(meta, f"{arch}.attention.head_count", n_layer, None)
    n_head = max(heads)
    if n_head < 1:
        raise GeometryError(f"`{arch}.attention.head_count` must have a non-zero entry")
    if f"{arch}.attention.head_count_kv" in meta:
        heads_kv = _meta_per_layer(meta, f"{arch}.attention.head_count_kv", n_layer, None)
    else:
        heads_kv = list(heads)  # no GQA key: one KV head per query head
    # n_embd_head_k defaults to n_embd / n_head (llama_model::load_hparams).
    head_k = _meta_int(meta, f"{arch}.attention.key_length", default=n_embd // n_head)
    head_v = _meta_int(meta, f"{arch}.attention.value_length", default=n_embd // n_head)
    key_mla = _meta_int(meta, f"{arch}.attention.key_length_mla", default=0)
    value_mla = _meta_int(meta, f"{arch}.attention.value_length_mla", default=0)
    is_mla = bool(key_mla and value_mla)
    head_k_swa = _meta_int(meta, f"{arch}.attention.key_length_swa", default=head_k)
    head_v_swa = _meta_int(meta, f"{arch}.attention.value_length_swa", default=head_v)

    n_swa = _meta_int(meta, f"{arch}.attention.sliding_window", default=0) or None
    if arch == "gemma2" and n_swa is None:
        n_swa = 4096  # src/models/gemma2.cpp default, overridden by the GGUF key
    pattern_value = meta.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern_value, (list, tuple)):
        if len(pattern_value) != n_layer:
            raise GeometryError(f"`{arch}.attention.sliding_window_pattern` must list {n_layer} entries")
        swa_flags = [bool(v) for v in pattern_value]
    else:
        pattern = pattern_value if isinstance(pattern_value, int) and not isinstance(pattern_value, bool) else SWA_PATTERN_BY_GGUF_ARCH.get(arch)
        swa_flags = [bool(pattern and n_swa and il % pattern < pattern - 1) for il in range(n_layer)]
    if not n_swa:
        swa_flags = [False] * n_layer

    layers = []
    for il in range(n_layer):
        if heads_kv[il] == 0:
            continue  # no attention in this layer (hybrid / recurrent): no KV tensors
        hk = head_k_swa if swa_flags[il] else head_k
        hv = head_v_swa if swa_flags[il] else head_v
        layers.append(
            LayerKv(il, hk * heads_kv[il], 0 if is_mla else hv * heads_kv[il], hk, hv, swa_flags[il])
        )
    n_ff_value = meta.get(f"{arch}.feed_forward_length")
    if isinstance(n_ff_value, (list, tuple)):
        n_ff = max(int(v) for v in n_ff_value) if n_ff_value else None
    else:
        n_ff = _meta_int(meta, f"{arch}.feed_forward_length")
    return KvLayout(
        arch=arch,
        n_layer=n_layer,
        kv_layers=tuple(layers),
        n_swa=n_swa if any(swa_flags) else None,
        is_mla=is_mla,
        n_ctx_train=_meta_int(meta, f"{arch}.context_length", required=True),
        n_embd=n_embd,
        n_head=n_head,
        n_vocab=_gguf_vocab(meta, arch),
        n_ff=n_ff,
        mla_lengths=(key_mla, value_mla) if is_mla else None,
    )


def geometry_from_gguf_metadata(meta: Mapping[str, Any]) -> Geometry:
    """The shared Geometry for a GGUF. Per-layer KV heads collapse to the widest layer and V width to
    K width; kv_layout_from_gguf_metadata keeps the exact llama.cpp view."""
    layout = kv_layout_from_gguf_metadata(meta)
    arch = layout.arch
    n_layer = layout.n_layer
    kv_by_index = {layer.index: layer for layer in layout.kv_layers}
    head_dim = _meta_int(meta, f"{arch}.attention.key_length", default=layout.n_embd // layout.n_head)
    if layout.is_mla:
        rope_dim = _meta_int(meta, f"{arch}.rope.dimension_count", default=0)
        kv_lora = _meta_int(meta, f"{arch}.attention.kv_lora_rank", default=(head_dim - rope_dim) if rope_dim else None)
        if not kv_lora or not rope_dim:
            raise GeometryError(f"MLA GGUF needs `{arch}.attention.kv_lora_rank` and `{arch}.rope.dimension_count`")
        mla = MlaRanks(kv_lora_rank=kv_lora, qk_rope_head_dim=rope_dim)
    else:
        mla = None
    kinds = tuple(SLIDING if (il in kv_by_index and kv_by_index[il].swa) else FULL for il in range(n_layer))
    widest = max(layout.kv_layers, key=lambda layer: layer.k_width, default=None)
    num_kv_heads = (widest.k_width // widest.head_k) if widest is not None and widest.head_k else layout.n_head
    return Geometry(
        model_type=arch,
        num_layers=n_layer,
        num_attention_heads=layout.n_head,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        hidden_size=layout.n_embd,
        intermediate_size=layout.n_ff,
        vocab_size=layout.n_vocab,
        # A GGUF's tensors are quantized; the shared Geometry's dtype describes a half-precision
        # checkpoint, which is what llama.cpp's f16 default KV cache matches.
        dtype="float16",
        max_position_embeddings=layout.n_ctx_train,
        rope_scaling=None,
        layer_kinds=kinds,
        sliding_window=layout.n_swa if SLIDING in kinds else None,
        attention_chunk_size=None,
        mla=mla,
        tie_word_embeddings=False,
    )


# ---------------------------------------------------------------------------------------------
# Settings and cell counts


@dataclass(frozen=True)
class ServerSettings:
    """llama-server flags that size memory, with llama-server's defaults (common/common.h, arg.cpp)."""

    ctx_size: int = 0  # -c; 0 = n_ctx_train
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    parallel: int | None = None  # -np; None or -1 = auto (4 slots, unified)
    kv_unified: bool | None = None  # -kvu / -no-kvu; None = default (on only with auto -np)
    swa_full: bool = False
    ubatch_size: int = DEFAULT_UBATCH
    n_gpu_layers: int | None = None  # -ngl; None = auto (fit decides); 'all' -> n_layer + 1
    flash_attn: str = "auto"
    kv_offload: bool = True  # -nkvo sets False
    fit: bool = True
    ctx_pad: int = CTX_PAD  # 256 today; CTX_PAD_BEFORE_2025_11_FA_OFF for old builds without FA
    fa_supported: bool = True  # whether the backend runs flash attention (auto resolves to it)

    def seqs(self) -> tuple[int, bool]:
        """(n_seq_max, kv_unified) as the server resolves them."""
        if self.parallel is None or self.parallel < 0:
            return AUTO_PARALLEL, True
        return self.parallel, bool(self.kv_unified)


@dataclass(frozen=True)
class ContextCells:
    n_ctx: int  # as `llama_context: n_ctx` prints it
    n_ctx_seq: int  # cells per stream (kv_size)
    n_seq_max: int
    n_stream: int
    rounded: bool  # "n_ctx is not divisible by n_seq_max - rounding down to %u" was printed

    @property
    def cells(self) -> int:
        return self.n_ctx_seq * self.n_stream


def context_cells(ctx_size: int, n_ctx_train: int, n_seq_max: int, kv_unified: bool, ctx_pad: int = CTX_PAD) -> ContextCells:
    """llama_context::llama_context (src/llama-context.cpp) n_ctx / n_ctx_seq arithmetic."""
    if n_seq_max < 1:
        raise LlamaCppError("n_seq_max must be at least 1")
    n_ctx = n_ctx_train if ctx_size == 0 else ctx_size
    n_ctx = units.pad(n_ctx, ctx_pad)
    if kv_unified:
        return ContextCells(n_ctx, n_ctx, n_seq_max, 1, False)
    n_ctx_seq = units.pad(n_ctx // n_seq_max, ctx_pad)
    rounded = n_ctx != n_ctx_seq * n_seq_max
    # The warning says "rounding down" but pads each stream up first, so the total can grow.
    return ContextCells(n_ctx_seq * n_seq_max, n_ctx_seq, n_seq_max, n_seq_max, rounded)


def swa_cells_per_stream(n_ctx_seq: int, n_swa: int, n_seq_max: int, unified: bool, ubatch: int, swa_full: bool, pad: int = CTX_PAD) -> int:
    """llama_kv_cache_iswa: PAD256(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch)).

    History: n_swa*n_seq_max + n_batch (PR #13194, 2025-05); + n_ubatch since PR #13833 (2025-05-27);
    always padded to 256 since issue #17037 (2025-11), before that to the context padding."""
    if swa_full:
        return n_ctx_seq
    return units.pad(min(n_ctx_seq, n_swa * (n_seq_max if unified else 1) + ubatch), pad)


# ---------------------------------------------------------------------------------------------
# Flash attention and type checks


@dataclass(frozen=True)
class FlashAttention:
    enabled: bool
    log: str | None  # the info line llama.cpp prints when it changes the setting


def resolve_flash_attn(flash_attn: str, cache_type_v: str, arch: str = "", fa_supported: bool = True) -> FlashAttention:
    """llama_init_from_model (src/llama-context.cpp): quantized V needs flash attention.

    -fa auto with a quantized V turns it on (since 2026-07-31, PR #25871); -fa off fails. A quantized K
    alone works without it. Older builds (c392e50) said `V cache quantization requires flash_attn`."""
    value = flash_attn.lower()
    if value in FLASH_ATTN_ON:
        mode = "on"
    elif value in FLASH_ATTN_OFF:
        mode = "off"
    elif value in FLASH_ATTN_AUTO:
        mode = "auto"
    else:
        raise LlamaCppError(f"error: unknown value for --flash-attn: '{flash_attn}'")
    log = None
    if arch in _FA_FORCED_OFF_ARCHS:
        mode, log = "off", "flash_attn is not compatible with Grok - forcing off"
    if cache_type_v in QUANTIZED_CACHE_TYPES and mode != "on":
        if mode == "auto":
            return FlashAttention(True, "llama_init_from_model: enabling flash_attn since it is required for quantized V cache")
        raise LlamaCppError("llama_init_from_model: quantized V cache requires flash_attn to be enabled")
    if mode == "auto":
        return FlashAttention(fa_supported, log)
    return FlashAttention(mode == "on", log)


def check_cache_types(layout: KvLayout, cache_type_k: str, cache_type_v: str) -> None:
    """Type checks llama_init_from_model makes before building the cache."""
    for _name, value in (("K", cache_type_k), ("V", cache_type_v)):
        if value not in GGML_BLOCK:
            raise LlamaCppError(f"Unsupported cache type: {value}")
    if layout.is_mla and cache_type_k != cache_type_v:
        raise LlamaCppError(
            f"llama_init_from_model: model does not support different K ({cache_type_k}) and V ({cache_type_v}) cache types"
        )
    blck_k = GGML_BLOCK[cache_type_k][0]
    blck_v = GGML_BLOCK[cache_type_v][0]
    for layer in layout.kv_layers:
        if layer.head_k % blck_k:
            raise LlamaCppError(
                f"llama_init_from_model: K cache type {cache_type_k} with block size {blck_k} does not divide n_embd_head_k={layer.head_k}"
            )
        if not layout.is_mla and layer.head_v % blck_v:
            raise LlamaCppError(
                f"llama_init_from_model: V cache type {cache_type_v} with block size {blck_v} does not divide n_embd_head_v={layer.head_v}"
            )


# ---------------------------------------------------------------------------------------------
# The cache itself


@dataclass(frozen=True)
class KvCache:
    """One llama_kv_cache object: the only one, or the non-SWA / SWA half of an iSWA pair."""

    kind: str  # "kv", "non-SWA" or "SWA"
    cells_per_stream: int
    n_stream: int
    layer_indices: tuple[int, ...]
    k_bytes: int
    v_bytes: int
    type_k: str
    type_v: str
    layer_bytes: tuple[int, ...] = ()  # K + V bytes of each layer in layer_indices, same order

    @property
    def total_bytes(self) -> int:
        return self.k_bytes + self.v_bytes

    @property
    def cells(self) -> int:
        return self.cells_per_stream * self.n_stream

    def size_line(self, n_seq_max: int) -> str:
        # src/llama-kv-cache.cpp: "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB"
        return (
            f"llama_kv_cache: size = {mib_text(self.total_bytes):>7} MiB ({self.cells_per_stream:6d} cells, "
            f"{len(self.layer_indices):3d} layers, {n_seq_max:2d}/{self.n_stream} seqs), "
            f"K ({self.type_k}): {mib_text(self.k_bytes):>7} MiB, V ({self.type_v}): {mib_text(self.v_bytes):>7} MiB"
        )


def _layer_bytes_per_cell(layout: KvLayout, layer: LayerKv, type_k: str, type_v: str, v_trans: bool) -> tuple[int, int]:
    k = row_size(type_k, layer.k_width)
    if layout.is_mla:
        return k, 0
    # With FA off (v_trans), every layer's V is padded to the widest V in the model.
    v_width = layout.v_width_max if v_trans else layer.v_width
    return k, row_size(type_v, v_width)


class _CacheRows:
    """One cache's layers for one (K type, V type, V transposed): bytes one cell takes in each layer.
    A plan multiplies these by its cell count; they do not depend on the context size."""

    __slots__ = ("indices", "k_bytes", "v_bytes", "layer_bytes", "_sorted_indices", "_suffix")

    def __init__(self, layout: KvLayout, layers: list[LayerKv], type_k: str, type_v: str, v_trans: bool) -> None:
        ks, vs = [], []
        by_width: dict[tuple[int, int], tuple[int, int]] = {}  # most models repeat one layer shape
        for layer in layers:  # in cache order, K before V, so a bad row raises as the cache build did
            widths = (layer.k_width, layer.v_width)
            k, v = by_width.get(widths) or by_width.setdefault(widths, _layer_bytes_per_cell(layout, layer, type_k, type_v, v_trans))
            ks.append(k)
            vs.append(v)
        self.indices = tuple(layer.index for layer in layers)
        self.k_bytes = sum(ks)
        self.v_bytes = sum(vs)
        self.layer_bytes = tuple(k + v for k, v in zip(ks, vs))
        self._sorted_indices, self._suffix = _suffix_sums(self.indices, self.layer_bytes)

    def bytes_from_layer(self, first_layer: int) -> int:
        """Bytes per cell of the layers numbered first_layer and up."""
        return self._suffix[bisect_left(self._sorted_indices, first_layer)]


def _suffix_sums(indices: tuple[int, ...], values: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """(indices ascending, suffix) where suffix[i] sums the values of the i-th index and every later one."""
    order = sorted(zip(indices, values))
    suffix = [0] * (len(order) + 1)
    for i in range(len(order) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + order[i][1]
    return [index for index, _ in order], suffix


class _LayoutMemo:
    """What plan_kv derives from a layout and the cache types alone (see KvLayout._memo)."""

    __slots__ = ("checked_types", "rows")

    def __init__(self) -> None:
        self.checked_types: set[tuple[str, str]] = set()  # (K type, V type) pairs that passed check_cache_types
        self.rows: dict[tuple[str, str, str, bool], _CacheRows] = {}


def _cache_rows(layout: KvLayout, kind: str, type_k: str, type_v: str, v_trans: bool) -> _CacheRows:
    key = (kind, type_k, type_v, v_trans)
    rows = layout._memo.rows.get(key)
    if rows is None:
        if kind == "kv":
            layers = list(layout.kv_layers)
        elif kind == "SWA":
            layers = [layer for layer in layout.kv_layers if layer.swa]
        else:
            layers = [layer for layer in layout.kv_layers if not layer.swa]
        rows = layout._memo.rows[key] = _CacheRows(layout, layers, type_k, type_v, v_trans)
    return rows


def _build_cache(kind: str, rows: _CacheRows, cells_per_stream: int, n_stream: int, type_k: str, type_v: str) -> KvCache:
    cells = cells_per_stream * n_stream
    return KvCache(
        kind, cells_per_stream, n_stream, rows.indices, rows.k_bytes * cells, rows.v_bytes * cells, type_k, type_v,
        tuple([n_bytes * cells for n_bytes in rows.layer_bytes]),
    )


@dataclass(frozen=True)
class KvPlan:
    """Everything llama.cpp allocates for the KV cache, and the lines it prints while doing so."""

    context: ContextCells
    kv_unified: bool
    flash_attn: FlashAttention
    caches: tuple[KvCache, ...]

    @property
    def k_bytes(self) -> int:
        return sum(c.k_bytes for c in self.caches)

    @property
    def v_bytes(self) -> int:
        return sum(c.v_bytes for c in self.caches)

    @property
    def kv_bytes(self) -> int:
        return self.k_bytes + self.v_bytes

    def bytes_by_layer(self) -> dict[int, int]:
        """KV bytes each layer owns, across every cache it sits in (for -ngl placement)."""
        out: dict[int, int] = {}
        for cache in self.caches:
            for il, n_bytes in zip(cache.layer_indices, cache.layer_bytes):
                out[il] = out.get(il, 0) + n_bytes
        return out

    def kv_bytes_from_layer(self, first_layer: int) -> int:
        """KV bytes of the layers numbered first_layer and up: what -ngl puts on the GPU."""
        if all(min(cache.layer_indices, default=first_layer) >= first_layer for cache in self.caches):
            # Every layer is on the GPU (full offload, the usual case): no suffix sums needed. The slice
            # pairs bytes with indices as bytes_by_layer's zip does.
            return sum(sum(cache.layer_bytes[: len(cache.layer_indices)]) for cache in self.caches)
        indices, suffix = self._layer_suffix
        return suffix[bisect_left(indices, first_layer)]

    @cached_property
    def _layer_suffix(self) -> tuple[list[int], list[int]]:
        # Once per plan, so placing -ngl layers is a lookup rather than a walk over every layer.
        indices = tuple(il for cache in self.caches for il in cache.layer_indices)
        values = tuple(n for cache in self.caches for n in cache.layer_bytes)
        return _suffix_sums(indices, values)


def _kv_setup(layout: KvLayout, settings: ServerSettings) -> tuple[FlashAttention, int, bool, int]:
    """The part of plan_kv that does not depend on -c, in plan_kv's order: type checks, flash
    attention, slots. Returns (flash attention, n_seq_max, unified, streams)."""
    if (settings.cache_type_k, settings.cache_type_v) not in layout._memo.checked_types:
        check_cache_types(layout, settings.cache_type_k, settings.cache_type_v)
        layout._memo.checked_types.add((settings.cache_type_k, settings.cache_type_v))
    fa = resolve_flash_attn(settings.flash_attn, settings.cache_type_v, layout.arch, settings.fa_supported)
    n_seq_max, unified = settings.seqs()
    if n_seq_max < 1:
        raise LlamaCppInputError("--parallel must be at least 1 (or -1 for auto)")
    return fa, n_seq_max, unified, 1 if unified else n_seq_max


def _kv_parts(layout: KvLayout, settings: ServerSettings, setup: tuple[FlashAttention, int, bool, int], ctx_size: int):
    """The rest of plan_kv at -c ctx_size, before any KvCache is built: (context, ((kind, rows, cells
    per stream), ...)). max_ctx_that_fits probes a dozen sizes and needs only the totals, not the
    per-layer tuples a KvPlan carries."""
    fa, n_seq_max, unified, _n_stream = setup
    ctx = context_cells(ctx_size, layout.n_ctx_train, n_seq_max, unified, settings.ctx_pad)
    v_trans = not fa.enabled
    type_k, type_v = settings.cache_type_k, settings.cache_type_v
    if layout.is_swa_model:
        size_swa = swa_cells_per_stream(
            ctx.n_ctx_seq, layout.n_swa, n_seq_max, unified, settings.ubatch_size, settings.swa_full, settings.ctx_pad
        )
        parts = (
            ("non-SWA", _cache_rows(layout, "non-SWA", type_k, type_v, v_trans), ctx.n_ctx_seq),
            ("SWA", _cache_rows(layout, "SWA", type_k, type_v, v_trans), size_swa),
        )
    else:
        parts = (("kv", _cache_rows(layout, "kv", type_k, type_v, v_trans), ctx.n_ctx_seq),)
    return ctx, parts


def plan_kv(layout: KvLayout, settings: ServerSettings) -> KvPlan:
    """The KV cache llama-server builds for `settings` (llama_model::create_memory)."""
    setup = _kv_setup(layout, settings)
    fa, _n_seq_max, unified, n_stream = setup
    ctx, parts = _kv_parts(layout, settings, setup, settings.ctx_size)
    caches = tuple(
        _build_cache(kind, rows, cells_per_stream, n_stream, settings.cache_type_k, settings.cache_type_v)
        for kind, rows, cells_per_stream in parts
    )
    return KvPlan(ctx, unified, fa, caches)


def kv_log_lines(plan: KvPlan, layout: KvLayout, settings: ServerSettings, buffer_name: str = "CUDA0") -> tuple[str, ...]:
    """The lines llama-server prints about the context and the KV cache (current format)."""
    ctx = plan.context
    lines = []
    if plan.flash_attn.log:
        lines.append(plan.flash_attn.log)
    if ctx.rounded:
        lines.append(f"llama_context: n_ctx is not divisible by n_seq_max - rounding down to {ctx.n_ctx}")
    # Field width as in recent builds, aligned to `n_outputs_max_per_seq` (ggml-org/llama.cpp#27680 log).
    lines.append(f"llama_context: {'n_seq_max':<21} = {ctx.n_seq_max}")
    lines.append(f"llama_context: {'n_ctx':<21} = {ctx.n_ctx}")
    lines.append(f"llama_context: {'n_ctx_seq':<21} = {ctx.n_ctx_seq}")
    lines.append(f"llama_context: {'kv_unified':<21} = {'true' if plan.kv_unified else 'false'}")
    if ctx.n_ctx_seq < layout.n_ctx_train:
        lines.append(
            f"llama_context: n_ctx_seq ({ctx.n_ctx_seq}) < n_ctx_train ({layout.n_ctx_train}) -- the full capacity of the model will not be utilized"
        )
    elif ctx.n_ctx_seq > layout.n_ctx_train:
        lines.append(
            f"llama_context: n_ctx_seq ({ctx.n_ctx_seq}) > n_ctx_train ({layout.n_ctx_train}) -- possible training context overflow"
        )
    name = buffer_name if settings.kv_offload else "CPU"
    for cache in plan.caches:
        if cache.kind == "non-SWA":
            if settings.swa_full:
                lines.append(
                    "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)"
                )
            lines.append(f"llama_kv_cache_iswa: creating non-SWA KV cache, size = {cache.cells_per_stream} cells")
        elif cache.kind == "SWA":
            lines.append(f"llama_kv_cache_iswa: creating     SWA KV cache, size = {cache.cells_per_stream} cells")
        # Buffer line: ggml_backend_buffer_get_size(buf)/1024.0/1024.0; the real buffer may be a few
        # bytes larger from tensor alignment, so this prints the unaligned sum.
        lines.append(f"llama_kv_cache: {name:>10} KV buffer size = {cache.total_bytes / MIB:8.2f} MiB")
        lines.append(cache.size_line(ctx.n_seq_max))
    return tuple(lines)


# ---------------------------------------------------------------------------------------------
# The rest of the VRAM picture: estimates, with their basis stated


COMPUTE_BUFFER_BASIS = (
    "compute buffer estimated as the peak of the prompt-processing graph llama.cpp reserves "
    "(graph_reserve(n_tokens = min(n_ctx, n_ubatch), n_outputs = n_tokens)): "
    "max(attention = [FA off: n_head*n_kv*n_tokens*4 B KQ] + mask n_kv*n_tokens*(FA ? 2 : 4) B, "
    "logits = n_vocab*n_tokens*4 B, FFN = 2*n_ff*n_tokens*4 B) + residual 2*n_embd*n_tokens*4 B; "
    "calibrated on public startup logs, within about 10%"
)
WEIGHTS_BASIS = (
    "weights = the GGUF file size; the share on the GPU is file size * offloaded/(n_layer + 1) "
    "(output layer counted as one more layer; the token-embedding table llama.cpp keeps in host memory is not subtracted)"
)


def compute_buffer_bytes(layout: KvLayout, plan: KvPlan, ubatch_size: int, *, attention_on_gpu: bool = True) -> int:
    """Estimated GPU compute buffer (see COMPUTE_BUFFER_BASIS)."""
    n_kv = max((c.cells_per_stream for c in plan.caches), default=plan.context.n_ctx_seq)
    return _compute_buffer(layout, plan.context.n_ctx, n_kv, plan.flash_attn.enabled, ubatch_size, attention_on_gpu)


def _compute_buffer(layout: KvLayout, n_ctx: int, n_kv: int, flash_attn: bool, ubatch_size: int, attention_on_gpu: bool) -> int:
    n_tokens = min(n_ctx, ubatch_size)
    attention = 0
    if attention_on_gpu:
        mask = n_kv * n_tokens * (2 if flash_attn else 4)
        kq = 0 if flash_attn else layout.n_head * n_kv * n_tokens * 4
        attention = kq + mask
    logits = layout.n_vocab * n_tokens * 4
    ffn = 2 * (layout.n_ff or 0) * n_tokens * 4
    residual = 2 * layout.n_embd * n_tokens * 4
    return max(attention, logits, ffn) + residual


def _offloaded_units(layout: KvLayout, n_gpu_layers: int) -> tuple[int, bool]:
    """(repeating layers on the GPU, output layer on the GPU) for -ngl N (llama_model::load_tensors:
    i_gpu_start = n_layer - ngl; the output layer goes to the GPU only when ngl > n_layer)."""
    ngl = max(0, n_gpu_layers)
    return min(ngl, layout.n_layer), ngl > layout.n_layer


@dataclass(frozen=True)
class GpuUse:
    weights_bytes: int
    kv_bytes: int
    compute_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.compute_bytes


def gpu_use(layout: KvLayout, plan: KvPlan, settings: ServerSettings, weights_bytes: int, n_gpu_layers: int) -> GpuUse:
    compute = compute_buffer_bytes(layout, plan, settings.ubatch_size, attention_on_gpu=settings.kv_offload)
    return GpuUse(*_gpu_parts(layout, settings, weights_bytes, n_gpu_layers, plan.kv_bytes_from_layer, compute))


def _gpu_parts(layout: KvLayout, settings: ServerSettings, weights_bytes: int, n_gpu_layers: int,
               kv_bytes_from_layer: Callable[[int], int], compute_bytes: int) -> tuple[int, int, int]:
    """gpu_use's (weights, KV, compute) on the GPU, given the KV of the layers from a given one up and
    the compute buffer with any layer on the GPU; the searches below reuse both across probes."""
    repeating, output = _offloaded_units(layout, n_gpu_layers)
    units = repeating + (1 if output else 0)
    weights_gpu = weights_bytes * units // (layout.n_layer + 1)
    kv_gpu = 0
    if settings.kv_offload and repeating:
        kv_gpu = kv_bytes_from_layer(layout.n_layer - repeating)
    return weights_gpu, kv_gpu, compute_bytes if units else 0


def _ngl_value(layout: KvLayout, settings: ServerSettings) -> int:
    if settings.n_gpu_layers is None or settings.n_gpu_layers < 0:
        return layout.n_layer + 1  # auto / all: everything, unless fit trims it
    return settings.n_gpu_layers


def gpu_layers_that_fit(layout: KvLayout, plan: KvPlan, settings: ServerSettings, weights_bytes: int, budget_bytes: int) -> int:
    """Largest -ngl (0..n_layer+1) whose estimated GPU use stays within budget."""
    compute = compute_buffer_bytes(layout, plan, settings.ubatch_size, attention_on_gpu=settings.kv_offload)

    def fits(ngl: int) -> bool:
        return sum(_gpu_parts(layout, settings, weights_bytes, ngl, plan.kv_bytes_from_layer, compute)) <= budget_bytes

    top = layout.n_layer + 1
    if top >= 1 and weights_bytes >= 0 and compute >= 0 and all(min(cache.layer_bytes, default=0) >= 0 for cache in plan.caches):
        # With no negative term, GPU use never falls as -ngl grows (more weights, more layers' KV,
        # the compute buffer once any unit is on the GPU), so the largest -ngl that fits is found by
        # bisection: what the scan from the top below finds, in a handful of probes instead of n_layer.
        if fits(top):
            return top
        lo = _largest_fitting(fits, 0, top - 1)
        return lo if fits(lo) else 0
    best = 0
    for ngl in range(top, -1, -1):
        if fits(ngl):
            best = ngl
            break
    return best


def max_ctx_that_fits(layout: KvLayout, settings: ServerSettings, weights_bytes: int, budget_bytes: int, *, limit: int | None = None) -> int:
    """Largest -c (a multiple of 256 * streams, so no rounding) whose full-offload estimate fits; 0 if none."""
    n_seq_max, unified = settings.seqs()
    step = settings.ctx_pad * (1 if unified else n_seq_max)
    top = limit if limit is not None else max(layout.n_ctx_train, settings.ctx_size)
    hi = top // step
    ngl = _ngl_value(layout, settings)
    setup: tuple[FlashAttention, int, bool, int] | None = None

    def fits(k: int) -> bool:
        # gpu_use(layout, plan_kv(layout, replace(settings, ctx_size=k * step)), settings, ...) from the
        # same parts plan_kv builds its caches from, without building them. What does not depend on
        # -c is worked out at the first probe, where plan_kv would first do it.
        nonlocal setup
        if setup is None:
            setup = _kv_setup(layout, settings)
        fa, n_stream = setup[0], setup[3]
        ctx, parts = _kv_parts(layout, settings, setup, k * step)

        def kv_bytes_from_layer(first_layer: int) -> int:
            return sum(rows.bytes_from_layer(first_layer) * (cells_per_stream * n_stream) for _kind, rows, cells_per_stream in parts)

        n_kv = max(cells_per_stream for _kind, _rows, cells_per_stream in parts)
        compute = _compute_buffer(layout, ctx.n_ctx, n_kv, fa.enabled, settings.ubatch_size, settings.kv_offload)
        return sum(_gpu_parts(layout, settings, weights_bytes, ngl, kv_bytes_from_layer, compute)) <= budget_bytes

    if hi < 1 or not fits(1):
        return 0
    # GPU use never falls as -c grows when no size is negative (cells, padding and the compute buffer
    # all grow with it), so the search ends at the top whenever the top fits: most catalog pairs
    # either fit their whole context or not even one step, and this spares the dozen probes between.
    if layout._sizes_nonnegative and settings.ubatch_size >= 0 and fits(hi):
        return hi * step
    return _largest_fitting(fits, 1, hi) * step


def _largest_fitting(fits: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest value in [lo, hi] that fits, by bisection: fits must hold up to some value and
    fail above it, and is taken to hold at lo (the callers check lo themselves, or not at all)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def oom_log_lines(use: GpuUse, budget_bytes: int, model_path: str) -> tuple[str, ...]:
    """CUDA load failure sequence, assembled from llama.cpp's format strings (ggml-cuda.cu, ggml-alloc.c,
    src/llama-context.cpp, src/llama-model.cpp, common/common.cpp, tools/server at master 3f545be) for the first
    allocation that would not fit: weights (load_tensors), then KV (context), then compute."""
    model = model_path
    tail_ctx = (
        f"cmn  common_init_: failed to create context with model '{model}'",
        f"srv    load_model: failed to create_context with model '{model}'",
        "srv  llama_server: exiting due to model loading error",
    )

    def cuda_alloc(size: int) -> str:
        return f"ggml_backend_cuda_buffer_type_alloc_buffer: allocating {size / MIB:.2f} MiB on device 0: cudaMalloc failed: out of memory"

    if use.weights_bytes > budget_bytes:
        return (
            cuda_alloc(use.weights_bytes),
            f"alloc_tensor_range: failed to allocate CUDA0 buffer of size {use.weights_bytes}",
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
            "llama_model_load_from_file_impl: failed to load model",
            f"srv    load_model: failed to load model, '{model}'",
            "srv  llama_server: exiting due to model loading error",
        )
    if use.weights_bytes + use.kv_bytes > budget_bytes:
        return (
            cuda_alloc(use.kv_bytes),
            f"alloc_tensor_range: failed to allocate CUDA0 buffer of size {use.kv_bytes}",
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        ) + tail_ctx
    return (
        cuda_alloc(use.compute_bytes),
        f"ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size {use.compute_bytes}",
        "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers",
    ) + tail_ctx


@dataclass(frozen=True)
class LlamaCppResult:
    k_bytes: int
    v_bytes: int
    kv_bytes: int  # every KV cache together (both for SWA models)
    kv_cells: int  # cells of the main (non-SWA) cache, all streams
    swa_cells: int | None  # cells of the SWA cache, all streams
    n_ctx: int  # as `llama_context: n_ctx` prints
    n_ctx_seq: int
    n_seq_max: int
    n_stream: int
    kv_unified: bool
    flash_attn: bool
    weights_bytes: int
    compute_buffer_bytes: int
    gpu_bytes: int  # estimated GPU use at the requested -ngl (all layers when auto)
    gpu_budget_bytes: int | None  # GPU memory minus the --fit-target margin
    fits: bool | None
    max_ctx_that_fits: int | None
    gpu_layers_that_fit: int | None
    fit_outcome: str | None
    log_lines: tuple[str, ...]
    oom_lines: tuple[str, ...]
    basis: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["log_lines"] = list(self.log_lines)
        out["oom_lines"] = list(self.oom_lines)
        out["basis"] = list(self.basis)
        return out


def estimate_llamacpp(
    layout: KvLayout,
    settings: ServerSettings,
    *,
    weights_bytes: int = 0,
    gpu_memory_bytes: int | None = None,
    headroom_bytes: int = FIT_TARGET_BYTES,
    model_path: str = "model.gguf",
    buffer_name: str = "CUDA0",
) -> LlamaCppResult:
    plan = plan_kv(layout, settings)
    ngl = _ngl_value(layout, settings)
    use = gpu_use(layout, plan, settings, weights_bytes, ngl)
    basis = [
        "KV bytes: exact, llama.cpp 3f545be (b10573) arithmetic: row_size(type, n_embd_k_gqa/v_gqa) per layer * cells per stream * streams",
        COMPUTE_BUFFER_BASIS,
        WEIGHTS_BASIS,
    ]
    if settings.flash_attn.lower() in FLASH_ATTN_AUTO and settings.cache_type_v not in QUANTIZED_CACHE_TYPES:
        basis.append("-fa auto assumed to resolve to " + ("on (backend supports flash attention)" if settings.fa_supported else "off"))
    fits = max_ctx = layers_fit = fit_outcome = None
    budget = None
    oom: tuple[str, ...] = ()
    if gpu_memory_bytes is not None:
        budget = gpu_memory_bytes - headroom_bytes
        basis.append(f"GPU budget = GPU memory - {headroom_bytes // MIB} MiB (llama-server --fit-target default margin)")
        fits = use.total_bytes <= budget
        max_ctx = max_ctx_that_fits(layout, settings, weights_bytes, budget)
        layers_fit = gpu_layers_that_fit(layout, plan, settings, weights_bytes, budget)
        if not fits:
            pinned_ngl = settings.n_gpu_layers is not None and settings.n_gpu_layers >= 0
            if not settings.fit or pinned_ngl:
                fit_outcome = "no fit adjustment (-ngl set or --fit off): loading fails with a CUDA out-of-memory error"
            elif settings.ctx_size == 0 and max_ctx >= FIT_MIN_CTX:
                fit_outcome = (
                    f"--fit reduces the context (was n_ctx_train {layout.n_ctx_train}); the largest that fits is about {max_ctx}"
                )
            else:
                fit_outcome = f"--fit keeps -c and offloads fewer layers: about {layers_fit}/{layout.n_layer + 1} layers on the GPU"
            oom = oom_log_lines(use, budget, model_path)
    return LlamaCppResult(
        k_bytes=plan.k_bytes,
        v_bytes=plan.v_bytes,
        kv_bytes=plan.kv_bytes,
        kv_cells=plan.caches[0].cells,
        swa_cells=plan.caches[1].cells if len(plan.caches) > 1 else None,
        n_ctx=plan.context.n_ctx,
        n_ctx_seq=plan.context.n_ctx_seq,
        n_seq_max=plan.context.n_seq_max,
        n_stream=plan.context.n_stream,
        kv_unified=plan.kv_unified,
        flash_attn=plan.flash_attn.enabled,
        weights_bytes=weights_bytes,
        compute_buffer_bytes=use.compute_bytes,
        gpu_bytes=use.total_bytes,
        gpu_budget_bytes=budget,
        fits=fits,
        max_ctx_that_fits=max_ctx,
        gpu_layers_that_fit=layers_fit,
        fit_outcome=fit_outcome,
        log_lines=kv_log_lines(plan, layout, settings, buffer_name),
        oom_lines=oom,
        basis=tuple(basis),
    )


# ---------------------------------------------------------------------------------------------
# Remediation


@dataclass(frozen=True)
class Lever:
    """One change to the launch, and what it yields. `flags` are llama-server long flags."""

    name: str
    flags: tuple[tuple[str, str | None], ...]
    kv_bytes: int
    gpu_bytes: int
    fits: bool | None
    yields: int | None  # the number this lever is about: -c that fits, or -ngl that fits
    note: str

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["flags"] = [list(f) for f in self.flags]
        return out


@dataclass(frozen=True)
class RemediationPlan:
    engine: str
    levers: tuple[Lever, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "levers": [lever.to_dict() for lever in self.levers]}


def _lever_for(layout, settings, weights_bytes, budget, name, flags, note, yields_fn=None) -> Lever | None:
    try:
        plan = plan_kv(layout, settings)
    except LlamaCppError:
        return None
    use = gpu_use(layout, plan, settings, weights_bytes, _ngl_value(layout, settings))
    fits = None if budget is None else use.total_bytes <= budget
    yields = yields_fn(plan) if yields_fn else None
    return Lever(name, tuple(flags), plan.kv_bytes, use.total_bytes, fits, yields, note)


def plan_llamacpp_remediation(
    layout: KvLayout,
    settings: ServerSettings,
    *,
    weights_bytes: int,
    gpu_memory_bytes: int | None,
    headroom_bytes: int = FIT_TARGET_BYTES,
) -> RemediationPlan:
    """Levers in a fixed order, each computed on its own from the current launch."""
    budget = None if gpu_memory_bytes is None else gpu_memory_bytes - headroom_bytes
    base_plan = plan_kv(layout, settings)
    levers: list[Lever] = []
    requested_ctx = base_plan.context.n_ctx

    def max_ctx(s: ServerSettings) -> int | None:
        return None if budget is None else max_ctx_that_fits(layout, s, weights_bytes, budget)

    # 1. -c: the largest context that fits as launched.
    best = max_ctx(settings)
    if best is not None and 0 < best < requested_ctx:
        lever = _lever_for(
            layout, replace(settings, ctx_size=best), weights_bytes, budget, "ctx_size",
            [("--ctx-size", str(best))],
            f"largest -c that fits: a multiple of {settings.ctx_pad * (1 if base_plan.kv_unified else base_plan.context.n_seq_max)} so llama.cpp does not pad it up",
            lambda _plan: best,
        )
        if lever:
            levers.append(lever)

    # 2-3. Quantized cache types, K and V together (MLA requires equal types).
    wide = {"f32", "f16", "bf16"}
    for qtype in ("q8_0", "q4_0"):
        if settings.cache_type_k in wide or settings.cache_type_v in wide:
            s = replace(settings, cache_type_k=qtype, cache_type_v=qtype)
            flags = [("--cache-type-k", qtype), ("--cache-type-v", qtype)]
            note = f"{qtype} K and V; a quantized V needs flash attention (-fa auto turns it on)"
            if settings.flash_attn.lower() in FLASH_ATTN_OFF:
                s = replace(s, flash_attn="on")
                flags.append(("--flash-attn", "on"))
                note = f"{qtype} K and V with -fa on (a quantized V cache requires flash attention)"
            lever = _lever_for(layout, s, weights_bytes, budget, f"cache_type_{qtype}", flags, note, lambda _p, s=s: max_ctx(s))
            if lever and lever.kv_bytes < base_plan.kv_bytes:
                levers.append(lever)

    # 4. One slot: only matters where -np multiplies something (SWA streams, padding per stream).
    n_seq_max, _unified = settings.seqs()
    if n_seq_max > 1:
        s = replace(settings, parallel=1, kv_unified=None)
        lever = _lever_for(layout, s, weights_bytes, budget, "parallel_1", [("--parallel", "1")],
                           "one slot: the whole -c for one request", lambda _p, s=s: max_ctx(s))
        if lever and lever.kv_bytes < base_plan.kv_bytes:
            levers.append(lever)

    # 5. Fewer GPU layers (partial offload): what fits at the requested -c.
    if budget is not None:
        ngl = gpu_layers_that_fit(layout, base_plan, settings, weights_bytes, budget)
        if ngl < layout.n_layer + 1:
            s = replace(settings, n_gpu_layers=ngl)
            lever = _lever_for(layout, s, weights_bytes, budget, "n_gpu_layers", [("--n-gpu-layers", str(ngl))],
                               "partial offload: the remaining layers and their KV run from system RAM (slower)",
                               lambda _p: ngl)
            if lever:
                levers.append(lever)

    # 6. KV cache in system RAM.
    if settings.kv_offload:
        s = replace(settings, kv_offload=False)
        lever = _lever_for(layout, s, weights_bytes, budget, "no_kv_offload", [("--no-kv-offload", None)],
                           "KV cache in system RAM (attention runs on the CPU; slower)")
        if lever:
            levers.append(lever)

    # 7. Drop --swa-full on SWA models.
    if settings.swa_full and layout.is_swa_model:
        s = replace(settings, swa_full=False)
        lever = _lever_for(layout, s, weights_bytes, budget, "swa_full_off", [],
                           "remove --swa-full: the SWA layers keep only n_swa + n_ubatch cells per stream",
                           lambda _p, s=s: max_ctx(s))
        if lever:
            levers.append(lever)
    return RemediationPlan("llamacpp", tuple(levers))


# ---------------------------------------------------------------------------------------------
# Batch API


# Each integer key's range in generator.schema.BOUNDS, shared with the records and the other engines.
_REQ_KIND = {"ctx_size": "tokens0", "parallel": "count", "ubatch_size": "tokens", "n_gpu_layers": "count0"}


def _req_int(request: Mapping[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    return check_int(value, f"`{key}`", _REQ_KIND[key], LlamaCppInputError, low=-BOUNDS[_REQ_KIND[key]][1] if minimum is None else minimum)


def _req_bool(request: Mapping[str, Any], key: str) -> bool | None:
    value = request.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise LlamaCppInputError(f"`{key}` must be true or false, got {value!r}")


def _req_gib(request: Mapping[str, Any], key: str) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_GIB:
        raise LlamaCppInputError(f"`{key}` must be a positive number of GiB (at most {MAX_GIB:,.0f}), got {value!r}")
    return int(round(value * GIB))


def settings_from_request(request: Mapping[str, Any]) -> ServerSettings:
    kwargs: dict[str, Any] = {}
    ctx = _req_int(request, "ctx_size", minimum=0)
    if ctx is not None:
        kwargs["ctx_size"] = ctx
    for key in ("cache_type_k", "cache_type_v"):
        value = request.get(key)
        if value is not None:
            if not isinstance(value, str) or value not in GGML_BLOCK:
                raise LlamaCppInputError(f"`{key}` {value!r} is not one of {', '.join(CACHE_TYPES)} (llama-server: Unsupported cache type)")
            kwargs[key] = value
    parallel = _req_int(request, "parallel")
    if parallel is not None:
        if parallel == 0 or parallel < -1:
            raise LlamaCppInputError("`parallel` must be at least 1, or -1 for auto (llama-server rejects 0)")
        kwargs["parallel"] = None if parallel == -1 else parallel
    for key in ("kv_unified", "swa_full", "fit"):
        value = _req_bool(request, key)
        if value is not None:
            kwargs[key] = value
    no_kv_offload = _req_bool(request, "no_kv_offload")
    if no_kv_offload is not None:
        kwargs["kv_offload"] = not no_kv_offload
    ubatch = _req_int(request, "ubatch_size", minimum=1)
    if ubatch is not None:
        kwargs["ubatch_size"] = ubatch
    ngl = request.get("n_gpu_layers")
    if ngl is not None:
        if ngl in ("auto", -1):
            kwargs["n_gpu_layers"] = None
        elif ngl == "all":
            kwargs["n_gpu_layers"] = 10**6
        elif isinstance(ngl, int) and not isinstance(ngl, bool) and 0 <= ngl <= MAX_COUNT:
            kwargs["n_gpu_layers"] = ngl
        else:
            raise LlamaCppInputError(f"`n_gpu_layers` must be an integer, 'auto' or 'all', got {ngl!r}")
    fa = request.get("flash_attn")
    if fa is not None:
        if isinstance(fa, bool):
            fa = "on" if fa else "off"
        if not isinstance(fa, str) or fa.lower() not in FLASH_ATTN_ON | FLASH_ATTN_OFF | FLASH_ATTN_AUTO:
            raise LlamaCppInputError(f"`flash_attn` must be on, off or auto, got {fa!r}")
        kwargs["flash_attn"] = fa.lower()
    return ServerSettings(**kwargs)


def layout_from_request(request: Mapping[str, Any], hf_configs: Mapping[str, Mapping[str, Any]] | None = None) -> KvLayout:
    sources = [k for k in ("hf_config", "gguf_metadata") if request.get(k) is not None]
    if len(sources) > 1:
        raise LlamaCppInputError("give either `hf_config` or `gguf_metadata`, not both")
    if sources == ["gguf_metadata"]:
        return kv_layout_from_gguf_metadata(request["gguf_metadata"])
    if sources == ["hf_config"]:
        return kv_layout_from_geometry(geometry_from_hf_config(request["hf_config"]))
    model = request.get("model")
    if isinstance(model, str) and hf_configs and hf_configs.get(model):
        return kv_layout_from_geometry(geometry_from_hf_config(hf_configs[model]))
    if model is not None:
        raise LlamaCppInputError(f"unknown model {model!r}; pass `hf_config` or `gguf_metadata`")
    raise LlamaCppInputError("a llamacpp request needs `hf_config`, `gguf_metadata` or a known `model`")


def answer_llamacpp_request(
    request: Mapping[str, Any],
    *,
    hf_configs: Mapping[str, Mapping[str, Any]] | None = None,
    gpu_memory_bytes: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One `"engine": "llamacpp"` request of the batch API. Never raises.

    `hf_configs` maps model ids to config.json objects, `gpu_memory_bytes` maps GPU ids to the memory
    CUDA reports; both come from the dataset the caller loaded."""
    try:
        if not isinstance(request, Mapping):
            raise LlamaCppInputError("a request must be an object")
        known = {
            "engine", "model", "hf_config", "gguf_metadata", "gpu", "gpu_memory_gib", "weights_gib",
            "ctx_size", "cache_type_k", "cache_type_v", "parallel", "kv_unified", "swa_full", "ubatch_size",
            "n_gpu_layers", "flash_attn", "no_kv_offload", "fit", "id",
        }
        unknown = sorted(set(request) - known)
        if unknown:
            raise LlamaCppInputError(f"unknown key(s) {', '.join(map(repr, unknown))}; llama-server long flags in snake_case")
        layout = layout_from_request(request, hf_configs)
        settings = settings_from_request(request)
        gpu_bytes = _req_gib(request, "gpu_memory_gib")
        gpu = request.get("gpu")
        if gpu is not None:
            if gpu_bytes is not None:
                raise LlamaCppInputError("give either `gpu` or `gpu_memory_gib`, not both")
            if not gpu_memory_bytes or gpu not in gpu_memory_bytes:
                raise LlamaCppInputError(f"unknown gpu {gpu!r}; pass `gpu_memory_gib`")
            gpu_bytes = gpu_memory_bytes[gpu]
        weights = _req_gib(request, "weights_gib") or 0
        model_path = f"{request.get('model') or 'model'}.gguf"
        result = estimate_llamacpp(layout, settings, weights_bytes=weights, gpu_memory_bytes=gpu_bytes, model_path=model_path)
        out = result.to_dict()
        out["engine"] = "llamacpp"
        out["remediation"] = plan_llamacpp_remediation(
            layout, settings, weights_bytes=weights, gpu_memory_bytes=gpu_bytes
        ).to_dict()
        if "id" in request:
            out["id"] = request["id"]
        return out
    except LlamaCppError as exc:
        return {"engine": "llamacpp", "startup_error": str(exc)}
    except (LlamaCppInputError, GeometryError) as exc:
        return {"error_input": str(exc)}
    except Exception as exc:  # the batch API promises an answer per request
        return {"error_input": f"{type(exc).__name__}: {exc}"}
