"""Model layout: which layers hold K and V, and how wide, from a config.json geometry or GGUF metadata."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    GEMMA4_TYPES,
    NO_CACHE,
    SLIDING,
    Geometry,
    GeometryError,
    MlaRanks,
)
from generator.engine.llamacpp.constants import SWA_HF_PREFIXES, SWA_PATTERN_BY_GGUF_ARCH
from generator.schema import check_int

if TYPE_CHECKING:
    from generator.engine.llamacpp.cache import CacheRows


@dataclass(frozen=True)
class LayerKv:
    """One attention layer's cache row: n_embd_k_gqa(il), n_embd_v_gqa(il) and its head sizes."""

    index: int
    k_width: int
    v_width: int  # 0 for MLA: the cache holds K only (has_v = !is_mla)
    head_k: int
    head_v: int
    swa: bool


class _LayoutMemo:
    """What plan_kv derives from a layout and the cache types alone (see KvLayout._memo)."""

    __slots__ = ("checked_types", "rows")

    def __init__(self) -> None:
        self.checked_types: set[tuple[str, str]] = set()  # (K type, V type) pairs that passed check_cache_types
        self.rows: dict[tuple[str, str, str, bool], CacheRows] = {}


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
    if geometry.has_state:
        # Mamba / DeltaNet layers keep a recurrent state in llama.cpp's separate r/s cache.
        raise GeometryError(f"{model_type} has Mamba or linear-attention layers; their llama.cpp recurrent cache is not modelled")
    if model_type.startswith("gemma3n"):
        # Gemma 3n reuses the KV of earlier layers in its last layers; that sharing is not modelled.
        raise GeometryError("Gemma 3n shares KV between layers; its llama.cpp cache is not modelled")
    if model_type not in GEMMA4_TYPES and (geometry.has_global_shape or NO_CACHE in geometry.layer_kinds):
        raise GeometryError(f"{model_type} has layers of two KV shapes or layers that share KV; its llama.cpp cache from config.json is not modelled")
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

    iswa = model_type.startswith(SWA_HF_PREFIXES) or (model_type.startswith("llama4") and CHUNKED in geometry.layer_kinds)
    window = geometry.sliding_window or geometry.attention_chunk_size
    layers = tuple(_layer_kv(geometry, il, kind, iswa) for il, kind in enumerate(geometry.layer_kinds) if kind != NO_CACHE)
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


def _layer_kv(geometry: Geometry, il: int, kind: str, iswa: bool) -> LayerKv:
    """One layer's cache row. Only Gemma 4 has two shapes and KV-shared (NO_CACHE, skipped) layers; llama.cpp
    reads them from the GGUF its converter writes (GEMMA4_LLAMACPP_SOURCE): `key_length` = global_head_dim for
    the full layers, `key_length_swa` = head_dim for the sliding ones (llama_hparams::n_embd_head_k(il)), and a
    per-layer `head_count_kv` with num_global_key_value_heads on the full layers. A checkpoint without
    attention_k_eq_v has num_key_value_heads heads in its full layers' k_proj (geometry.GEMMA4_SOURCE), so a GGUF
    that loads carries that count there too: Geometry.layer_shape gives it in both cases. With attention_k_eq_v, V is K (gemma4.cpp reuses
    Kcur), but the cache still stores both (has_v = !is_mla)."""
    heads, head = geometry.layer_shape(kind)
    return LayerKv(il, heads * head, heads * head, head, head, iswa and kind in (SLIDING, CHUNKED))


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


def _layers_with_kv(meta: Mapping[str, Any], arch: str, n_layer: int) -> int:
    """hparams.n_layer_kv_from_start: Gemma 4's last `shared_kv_layers` layers reuse earlier layers' cells and
    have no KV tensors (GEMMA4_LLAMACPP_SOURCE). Gemma 3n hardcodes its own start and is refused from config.json."""
    if arch != "gemma4":
        return n_layer
    shared = _meta_int(meta, f"{arch}.attention.shared_kv_layers", default=0)
    if shared >= n_layer:
        raise GeometryError(f"`{arch}.attention.shared_kv_layers` {shared} leaves no layer of the {n_layer} with a KV cache")
    return n_layer - shared


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
    for il in range(_layers_with_kv(meta, arch, n_layer)):
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
