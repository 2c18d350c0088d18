"""KV-cache dtypes: the bytes a token takes per layer, and the pages of hybrid (Mamba / Gated DeltaNet) layers."""

from __future__ import annotations

from dataclasses import dataclass

from generator.engine.geometry import (
    SLIDING,
    Geometry,
)
from generator.engine.vllm.versions import VllmInputError
from generator.units import cdiv

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


def kv_bytes_per_token_per_layer(geometry: Geometry, kv_cache_dtype: str, tensor_parallel_size: int, kind: str = SLIDING) -> int:
    """Bytes one token adds to one attention layer of that kind on one TP rank (kinds differ only
    for Gemma 4, whose full-attention layers have their own head size and KV heads)."""
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
    heads, head_dim = geometry.layer_shape(kind)
    return 2 * max(1, heads // tensor_parallel_size) * head_dim * element


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
