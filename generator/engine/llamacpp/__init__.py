"""llama.cpp (llama-server) KV-cache arithmetic, exact to the byte of its `llama_kv_cache: size =` line,
and the rest of the VRAM picture as a stated estimate.

Facts are from the llama.cpp source at master 3f545be (2026-08-22; nearest release
https://github.com/ggml-org/llama.cpp/tree/b10573), old formats from commit c392e50 (2025-02-20,
https://github.com/ggml-org/llama.cpp/tree/c392e5094deaf2d1a7c18683214f007fad3fe42b). Function and file
names in comments are upstream paths.
"""

from generator.engine.llamacpp.batch import answer_llamacpp_request, layout_from_request, settings_from_request
from generator.engine.llamacpp.cache import KvCache, KvPlan, kv_log_lines, plan_kv
from generator.engine.llamacpp.constants import (
    AUTO_PARALLEL,
    CACHE_TYPES,
    CTX_PAD,
    CTX_PAD_BEFORE_2025_11_FA_OFF,
    DEFAULT_UBATCH,
    FA_FORCED_OFF_ARCHS,
    FIT_MIN_CTX,
    FIT_TARGET_BYTES,
    FLASH_ATTN_AUTO,
    FLASH_ATTN_OFF,
    FLASH_ATTN_ON,
    GGML_BLOCK,
    QUANTIZED_CACHE_TYPES,
    SMALL_UBATCH,
    SWA_HF_PREFIXES,
    SWA_PATTERN_BY_GGUF_ARCH,
    LlamaCppError,
    LlamaCppInputError,
    mib_text,
    row_size,
)
from generator.engine.llamacpp.flash_attn import FlashAttention, check_cache_types, resolve_flash_attn
from generator.engine.llamacpp.layout import KvLayout, LayerKv, geometry_from_gguf_metadata, kv_layout_from_geometry, kv_layout_from_gguf_metadata
from generator.engine.llamacpp.remediation import Lever, RemediationPlan, plan_llamacpp_remediation
from generator.engine.llamacpp.settings import ContextCells, ServerSettings, context_cells, swa_cells_per_stream
from generator.engine.llamacpp.vram import (
    COMPUTE_BUFFER_BASIS,
    WEIGHTS_BASIS,
    GpuUse,
    LlamaCppResult,
    compute_buffer_bytes,
    estimate_llamacpp,
    gpu_layers_that_fit,
    gpu_use,
    max_ctx_that_fits,
    oom_log_lines,
    use_at_ubatch,
)
from generator.units import GIB, MIB

__all__ = [
    "AUTO_PARALLEL",
    "CACHE_TYPES",
    "COMPUTE_BUFFER_BASIS",
    "CTX_PAD",
    "CTX_PAD_BEFORE_2025_11_FA_OFF",
    "ContextCells",
    "DEFAULT_UBATCH",
    "FIT_MIN_CTX",
    "FIT_TARGET_BYTES",
    "FLASH_ATTN_AUTO",
    "FLASH_ATTN_OFF",
    "FLASH_ATTN_ON",
    "FlashAttention",
    "GGML_BLOCK",
    "GIB",
    "GpuUse",
    "KvCache",
    "KvLayout",
    "KvPlan",
    "LayerKv",
    "Lever",
    "LlamaCppError",
    "LlamaCppInputError",
    "LlamaCppResult",
    "MIB",
    "QUANTIZED_CACHE_TYPES",
    "RemediationPlan",
    "SMALL_UBATCH",
    "SWA_PATTERN_BY_GGUF_ARCH",
    "ServerSettings",
    "WEIGHTS_BASIS",
    "FA_FORCED_OFF_ARCHS",
    "SWA_HF_PREFIXES",
    "answer_llamacpp_request",
    "check_cache_types",
    "compute_buffer_bytes",
    "context_cells",
    "estimate_llamacpp",
    "geometry_from_gguf_metadata",
    "gpu_layers_that_fit",
    "gpu_use",
    "kv_layout_from_geometry",
    "kv_layout_from_gguf_metadata",
    "kv_log_lines",
    "layout_from_request",
    "max_ctx_that_fits",
    "mib_text",
    "oom_log_lines",
    "plan_kv",
    "plan_llamacpp_remediation",
    "resolve_flash_attn",
    "row_size",
    "settings_from_request",
    "swa_cells_per_stream",
    "use_at_ubatch",
]
