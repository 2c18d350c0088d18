"""What the catalog's engines give one (GPU, model, variant) pair: the records pages read.

Slotted, frozen and pickled as plain calls, since a large catalog holds and caches ~150k of each.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

# Bump when any engine's arithmetic changes: it invalidates incremental builds and moves
# the pages' dateModified, since their numbers may have changed.
ENGINE_VERSION = "3"  # 2: SGLang numbers on vLLM pairs; 3: llama.cpp partial offload at a short context, q8_0 cache bytes

# The result classes are slotted: a catalog of 100k pages holds ~150k of each, and a __dict__ per
# instance would double their memory.

def _pickled_as_calls(cls):
    """Pickle instances as a call of the class with their fields. A slotted frozen dataclass
    otherwise unpickles through dataclasses' __setstate__, which looks the fields up again for
    every object: most of loading 150k cached pairs."""
    names = tuple(f.name for f in fields(cls))

    def __reduce__(self):  # noqa: N807  (installed on cls below)
        return cls, tuple(getattr(self, name) for name in names)

    cls.__reduce__ = __reduce__
    return cls


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class LeverOutcome:
    lever: str  # schema Lever id
    label: str
    flags: tuple[str, ...]  # what to add to the engine's command line / environment
    max_len: int  # longest context that starts with this lever
    fits_full: bool  # whether the model's full context starts
    gpus: int = 1
    note: str = ""


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class GridCell:
    utilization: float
    kv_cache_dtype: str
    max_len: int


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class VllmNumbers:
    version: str
    utilization: float
    total_memory_bytes: int
    config_max_len: int
    max_model_len: int  # the length the reader's command asks for (config max by default)
    bytes_per_token: int
    bytes_per_token_fp8: int
    block_size: int
    bytes_per_block: int
    num_blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    max_len: int  # longest --max-model-len that starts; 0 when none does
    fits: bool
    needed_bytes: int
    available_bytes: int
    requested_bytes: int
    weights_bytes: int
    non_torch_bytes: int
    activation_bytes: int
    cudagraph_bytes: int
    error: str | None
    levers: tuple[LeverOutcome, ...]
    grid: tuple[GridCell, ...]
    max_num_seqs: int
    max_num_batched_tokens: int
    assumptions: tuple[str, ...]
    # The sampler warm-up after the KV cache is allocated: its observed peak at max_num_seqs, and
    # the memory it has then (outside the budget, plus the activation reserve the profile freed).
    sampler_peak_bytes: int = 0
    warmup_headroom_bytes: int = 0
    free_bytes: int | None = None  # free memory at start, when the reader's error printed it


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class LlamaNumbers:
    ctx_size: int  # what the reader asked for; the model's training context by default
    parallel: int
    n_ctx: int
    kv_cells: int
    bytes_per_token_f16: int
    bytes_per_token_q8_0: int
    bytes_per_token_q4_0: int
    kv_bytes: int
    weights_bytes: int
    compute_buffer_bytes: int
    total_bytes: int
    fits: bool
    max_ctx_f16: int
    max_ctx_q8_0: int
    max_ctx_q4_0: int
    num_layers: int
    gpu_layers_that_fit: int
    kv_log_lines: tuple[str, ...]
    error: str | None
    assumptions: tuple[str, ...]
    kv_bytes_q8_0: int = 0  # the cache of ctx_size cells with -ctk q8_0 -ctv q8_0
    offload_ctx: int = 0  # a short context for partial offload when no layer fits at ctx_size (FIT_MIN_CTX)
    offload_gpu_layers: int = 0  # the largest -ngl that fits at -c offload_ctx -np 1 (0: none, all in system RAM)
    ubatch_size: int = 512  # -ub of the reader's launch (llama-server's default)
    small_ubatch: int = 0  # the -ub a compute-buffer fix offers (0: none, the buffer would not shrink)
    compute_buffer_bytes_small_ubatch: int = 0  # the compute buffer at -ub small_ubatch, same -c
    total_bytes_small_ubatch: int = 0  # GPU use at -ub small_ubatch, same -c and -ngl


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class OllamaNumbers:
    version: str
    default_num_ctx: int
    num_ctx: int
    num_parallel: int
    kv_bytes: int
    kv_bytes_q8_0: int
    total_bytes: int
    fits: bool
    max_num_ctx_f16: int
    max_num_ctx_q8_0: int
    gpu_layers_that_fit: int
    num_layers: int
    error: str | None
    assumptions: tuple[str, ...]


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class SglangOption:
    """One `python -m sglang.launch_server` configuration and the pool SGLang would size for it."""

    lever: str  # schema Lever id: clamp-context, fp8-kv, tensor-parallel
    tp: int
    kv_cache_dtype: str  # auto | fp8_e4m3
    mem_fraction_static: float  # SGLang 0.5.23's own default for this GPU and TP, passed explicitly
    kv_bytes_per_token: float  # one rank
    tokens: int  # max_total_num_tokens, estimated
    context_length: int  # the --context-length the command passes: min(model's, pool)
    fits_full: bool  # the pool holds the model's whole context
    log_line: str  # the "KV Cache is allocated" line SGLang would print


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class SglangNumbers:
    release: str
    config_context_len: int
    weights_bytes: int  # the whole checkpoint; each rank loads weights_bytes / tp
    pre_model_load_gb: float  # estimated: GPU total less startup_overhead_gb
    startup_overhead_gb: float
    options: tuple[SglangOption, ...]  # the ones that start, best first
    error: str | None  # what SGLang raises on one GPU at its default fraction, when it does not start
    assumptions: tuple[str, ...]
    one_gpu: SglangOneGpu | None = None  # the pool on one GPU at the default fraction, started or not
    most_gpus: int = 8  # the most of this GPU the options try: 1 on a unified-memory module, the one GPU of its host


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class SglangOneGpu:
    """SGLang's budget on one GPU at its default --mem-fraction-static and the model's dtype (estimated:
    the free memory before loading is the card's total less the startup overhead)."""

    mem_fraction_static: float
    weights_gb: float  # what loading takes (GB = 2**30 bytes, as SGLang prints)
    reserve_gb: float  # pre_model_load_gb x (1 - mem_fraction_static): activations, CUDA graphs
    kv_budget_gb: float  # rest_memory: pre - weights - reserve; <= 0 means no pool
    min_mem_fraction_static: float  # the fraction at which the budget is zero (v0.5.23's "minimum viable")
    kv_bytes_per_token: float
    tokens: int  # max_total_num_tokens (0 when SGLang does not start)
    max_req_input_len: int | None  # longest input the scheduler admits, None when it does not start
    log_line: str  # "KV Cache is allocated. ..." ("" when it does not start)


@_pickled_as_calls
@dataclass(frozen=True, slots=True)
class PairNumbers:
    gpu: str
    model: str
    variant: str
    weights_bytes: int
    weights_estimated: bool
    weights_basis: str
    vllm: VllmNumbers | None
    llamacpp: LlamaNumbers | None
    ollama: OllamaNumbers | None
    scenarios: tuple[str, ...]  # the error scenarios this pair hits under default settings
    sglang: SglangNumbers | None = None  # beside vLLM: the same checkpoint under SGLang

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.gpu, self.model, self.variant)


Results = Mapping[tuple[str, str, str], PairNumbers]
