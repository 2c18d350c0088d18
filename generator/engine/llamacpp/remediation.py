"""Remediation: the flag changes that make a failing start fit."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from generator.engine.llamacpp.cache import plan_kv
from generator.engine.llamacpp.constants import FIT_TARGET_BYTES, FLASH_ATTN_OFF, LlamaCppError
from generator.engine.llamacpp.layout import KvLayout
from generator.engine.llamacpp.settings import ServerSettings
from generator.engine.llamacpp.vram import gpu_layers_that_fit, gpu_use, max_ctx_that_fits, ngl_value


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
    use = gpu_use(layout, plan, settings, weights_bytes, ngl_value(layout, settings))
    fits = None if budget is None else use.total_bytes <= budget
    yields = yields_fn(plan) if yields_fn else None
    return Lever(name, tuple(flags), plan.kv_bytes, use.total_bytes, fits, yields, note)


def _quantized_cache_levers(layout: KvLayout, settings: ServerSettings, weights_bytes: int, budget: int | None, base_kv_bytes: int,
                            max_ctx: Callable[[ServerSettings], int | None]) -> list[Lever]:
    levers = []
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
            if lever and lever.kv_bytes < base_kv_bytes:
                levers.append(lever)
    return levers


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
    levers += _quantized_cache_levers(layout, settings, weights_bytes, budget, base_plan.kv_bytes, max_ctx)

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
