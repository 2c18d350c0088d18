"""Flash attention as llama-server resolves it, and the cache-type checks that depend on it."""

from __future__ import annotations

from dataclasses import dataclass

from generator.engine.llamacpp.constants import FA_FORCED_OFF_ARCHS, FLASH_ATTN_AUTO, FLASH_ATTN_OFF, FLASH_ATTN_ON, GGML_BLOCK, QUANTIZED_CACHE_TYPES, LlamaCppError
from generator.engine.llamacpp.layout import KvLayout


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
    if arch in FA_FORCED_OFF_ARCHS:
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
