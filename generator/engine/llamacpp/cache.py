"""The KV cache itself: bytes per cell of each layer, the plan and its log lines."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property

from generator.engine.llamacpp.constants import LlamaCppInputError, mib_text, row_size
from generator.engine.llamacpp.flash_attn import FlashAttention, check_cache_types, resolve_flash_attn
from generator.engine.llamacpp.layout import KvLayout, LayerKv
from generator.engine.llamacpp.settings import ContextCells, ServerSettings, context_cells, swa_cells_per_stream
from generator.units import MIB


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


class CacheRows:
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


def _cache_rows(layout: KvLayout, kind: str, type_k: str, type_v: str, v_trans: bool) -> CacheRows:
    key = (kind, type_k, type_v, v_trans)
    rows = layout._memo.rows.get(key)
    if rows is None:
        if kind == "kv":
            layers = list(layout.kv_layers)
        elif kind == "SWA":
            layers = [layer for layer in layout.kv_layers if layer.swa]
        else:
            layers = [layer for layer in layout.kv_layers if not layer.swa]
        rows = layout._memo.rows[key] = CacheRows(layout, layers, type_k, type_v, v_trans)
    return rows


def _build_cache(kind: str, rows: CacheRows, cells_per_stream: int, n_stream: int, type_k: str, type_v: str) -> KvCache:
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


def kv_setup(layout: KvLayout, settings: ServerSettings) -> tuple[FlashAttention, int, bool, int]:
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


def kv_parts(layout: KvLayout, settings: ServerSettings, setup: tuple[FlashAttention, int, bool, int], ctx_size: int):
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
    setup = kv_setup(layout, settings)
    fa, _n_seq_max, unified, n_stream = setup
    ctx, parts = kv_parts(layout, settings, setup, settings.ctx_size)
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
