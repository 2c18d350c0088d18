"""KV-cache dtypes: which `--kv-cache-dtype` values a version accepts and their bytes per element."""

from __future__ import annotations

from generator.engine.geometry import (
    Geometry,
    kv_heads_per_rank,
)
from generator.engine.vllm.versions import VllmInputError

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
