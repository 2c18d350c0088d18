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

from generator.engine.vllm.blocks import MAMBA_CACHE_MODES, KvGroup, blocks_per_request, cdiv, group_blocks_per_request, in_flight_tokens, kv_cache_groups, largest_fitting_len, pp_layer_split
from generator.engine.vllm.budget import (
    ASSUMPTIONS,
    FITTED_ON,
    Breakdown,
    BudgetAssumptions,
    WeightShape,
    activation_peak_bytes,
    batch_defaults,
    cudagraph_capture_sizes,
    requested_bytes,
    text_config_of,
    unified_memory_gpu,
    weight_shape,
)
from generator.engine.vllm.config_facts import ConfigFacts
from generator.engine.vllm.error_texts import CANNOT_AUTO_FIT_TEXT, VLLM_ERROR_TEMPLATES, ErrorTemplate, error_template, estimated_text, format_gib, rounds_gib_like_python, vllm_error_text
from generator.engine.vllm.kv_dtype import (
    HYBRID_BLOCK_ALIGNMENT,
    KV_CACHE_DTYPES,
    MAMBA_DTYPE_BYTES,
    MLA_PACKED_BYTES_PER_TOKEN,
    ONE_BYTE_KV_DTYPES,
    HybridPages,
    hybrid_pages,
    invalid_kv_cache_dtype_text,
    kv_bytes_per_token_per_layer,
)
from generator.engine.vllm.model_len import DEFAULT_MAX_LEN, MAX_LEN_KEYS, ROPE_KEYS, ROPE_TYPES_ALREADY_SCALED, DerivedMaxLen, derive_max_model_len, max_model_len_too_long_text
from generator.engine.vllm.plan import (
    SizeMemo,
    StagePlan,
    VllmInputs,
    VllmResult,
    auto_fit,
    cudagraph_info_line,
    fitting_max_model_len,
    kv_cache_tokens_logged,
    plan_vllm,
    replace_inputs,
    resolve_settings,
)
from generator.engine.vllm.remediation import Lever, make_lever, serve_command, vllm_remediation
from generator.engine.vllm.versions import (
    DEFAULT_BLOCK_SIZE,
    LATEST_VERSION,
    VllmInputError,
    default_gpu_memory_utilization,
    format_version,
    has_hybrid_allocator,
    hybrid_too_old_text,
    kv_tokens_rule,
    parse_version,
    prints_available_kv_line,
    prints_kv_size_on_one_line,
    reserves_null_block_in_check,
    subtracts_cudagraph_estimate,
    uses_v0_engine,
)
from generator.units import GIB, MIB

GiB = GIB  # the spellings callers import
MiB = MIB

__all__ = [
    "ASSUMPTIONS",
    "FITTED_ON",
    "Breakdown",
    "BudgetAssumptions",
    "CANNOT_AUTO_FIT_TEXT",
    "ConfigFacts",
    "DEFAULT_BLOCK_SIZE",
    "DerivedMaxLen",
    "ErrorTemplate",
    "GiB",
    "HYBRID_BLOCK_ALIGNMENT",
    "HybridPages",
    "KV_CACHE_DTYPES",
    "KvGroup",
    "LATEST_VERSION",
    "Lever",
    "MAMBA_CACHE_MODES",
    "MAMBA_DTYPE_BYTES",
    "MLA_PACKED_BYTES_PER_TOKEN",
    "MiB",
    "ONE_BYTE_KV_DTYPES",
    "SizeMemo",
    "StagePlan",
    "VLLM_ERROR_TEMPLATES",
    "VllmInputError",
    "VllmInputs",
    "VllmResult",
    "WeightShape",
    "DEFAULT_MAX_LEN",
    "MAX_LEN_KEYS",
    "ROPE_KEYS",
    "ROPE_TYPES_ALREADY_SCALED",
    "make_lever",
    "text_config_of",
    "activation_peak_bytes",
    "auto_fit",
    "batch_defaults",
    "blocks_per_request",
    "cdiv",
    "cudagraph_capture_sizes",
    "cudagraph_info_line",
    "default_gpu_memory_utilization",
    "derive_max_model_len",
    "error_template",
    "fitting_max_model_len",
    "format_gib",
    "format_version",
    "group_blocks_per_request",
    "hybrid_pages",
    "in_flight_tokens",
    "invalid_kv_cache_dtype_text",
    "kv_bytes_per_token_per_layer",
    "kv_cache_groups",
    "kv_cache_tokens_logged",
    "largest_fitting_len",
    "max_model_len_too_long_text",
    "parse_version",
    "plan_vllm",
    "pp_layer_split",
    "replace_inputs",
    "requested_bytes",
    "reserves_null_block_in_check",
    "resolve_settings",
    "serve_command",
    "subtracts_cudagraph_estimate",
    "uses_v0_engine",
    "vllm_error_text",
    "vllm_remediation",
    "weight_shape",
    "estimated_text", "rounds_gib_like_python", "has_hybrid_allocator", "hybrid_too_old_text", "kv_tokens_rule",
    "prints_available_kv_line", "prints_kv_size_on_one_line",
    "unified_memory_gpu",
]
