"""The real-log tables under data/evidence/: startup logs readers posted, with the lines each printed.

The engine tests check the engine against them, and the /accuracy/ page shows the engine's
prediction beside every printed figure. Field names are the tables' own; unknown keys are refused,
so a typo in a new row fails the load instead of dropping a figure from the page."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EVIDENCE_FILES = {"vllm": "data/evidence/vllm_real_logs.yaml", "sglang": "data/evidence/sglang_real_logs.yaml",
                  "llamacpp": "data/evidence/llamacpp_real_logs.yaml"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- vLLM


class VllmLogModel(_Strict):
    kind: Literal["dense", "moe", "mla", "hybrid", "multimodal"]
    source: str
    config: dict[str, Any] | None  # None: no copy of config.json was found; the log is kept for coverage


class VllmLogSettings(_Strict):
    """The settings in force; every field but enable_prefix_caching is a VllmInputs field of the same name."""

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    block_size: int | None = None
    kv_cache_dtype: str | None = None
    enable_prefix_caching: bool | None = None
    sampler_backend: Literal["native", "flashinfer"] | None = None
    mamba_cache_mode: Literal["none", "align", "all"] | None = None
    mm_modalities_off: tuple[Literal["image", "video", "audio"], ...] | None = None  # --limit-mm-per-prompt of 0

    def engine_inputs(self) -> dict[str, Any]:
        """The settings as VllmInputs keywords (prefix caching does not change the budget)."""
        return {k: v for k, v in self.model_dump(exclude_none=True).items() if k != "enable_prefix_caching"}


class VllmLogFigures(_Strict):
    """The numbers the log printed, in GiB unless named otherwise; printed lines verbatim."""

    model_loading_gib: float | None = None
    weights_gib: float | None = None
    memory_profiling: str | None = None
    profiling: str | None = None
    activation_peak_gib: float | None = None
    non_torch_gib: float | None = None
    cudagraph_gib: float | None = None
    estimated_cudagraph_gib: float | None = None
    actual_cudagraph_gib: float | None = None
    available_kv_cache_gib: float | None = None
    available_kv_cache_derived: bool | None = None
    num_gpu_blocks: int | None = None
    gpu_kv_cache_size: str | None = None
    max_concurrency: str | None = None
    cudagraph_info: str | None = None
    error: str | None = None
    block_size: int | None = None
    encoder_cache_tokens: int | None = None  # "Encoder cache will be initialized with a budget of N tokens"


class VllmLog(_Strict):
    id: str
    url: str
    vllm_version: str
    gpu: str | None = None
    gpu_total_gib: float | None = None
    model: str
    settings: VllmLogSettings = Field(default_factory=VllmLogSettings)
    flags: str | None = None
    note: str | None = None
    known_gap: str | None = None
    inferred: str | None = None  # a setting read from other records, not printed; /accuracy/ marks the row with it
    sampler_peak: str | None = None  # why the printed activation peak is the sampler warm-up's, not the forward's
    weights_quantization: dict[str, Any] | None = None
    split: Literal["holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7", "holdout8", "holdout9",
                   "holdout10", "holdout11", "holdout12", "holdout13", "holdout14"] | None = None  # holdout2-14: later collections
    version_evidence: str | None = None
    status: Literal["unmodelled", "incomplete"] | None = None
    reason: str | None = None
    missing: list[str] | None = None
    lines: list[str] | None = None
    log: VllmLogFigures


class VllmErrorText(_Strict):
    url: str
    vllm_version: str
    text: str


class VllmEvidence(_Strict):
    models: dict[str, VllmLogModel]
    budget: list[VllmLog]
    cudagraph: list[VllmLog] = []
    error_texts: list[VllmErrorText] = []


# --------------------------------------------------------------------------- SGLang


class SglangLogModel(_Strict):
    source: str
    config: dict[str, Any]


class SglangBudget(_Strict):
    avail_after_load_gb: float
    weights_gb: float
    mem_fraction_static: float
    mem_fraction_static_source: str


class SglangLog(_Strict):
    id: str
    url: str
    read_via: str | None = None
    sglang_version: str
    gpu: str
    tp: int
    model: str | None = None
    flags: str
    kv_cache_dtype: str | None = None
    page_size: int
    printed: dict[Literal["kv_line", "load_line", "begin_line", "pool_end", "scheduler_line", "swa_line"], str]
    tokens: int | None = None
    k_size_gb: float | None = None
    v_size_gb: float | None = None
    kv_size_gb: float | None = None
    printed_excludes_indexer: bool | None = None
    full_tokens: int | None = None
    swa_tokens: int | None = None
    swa_full_tokens_ratio: float | None = None
    budget: SglangBudget | None = None


class SglangErrorLog(_Strict):
    id: str
    url: str
    text: str
    sglang_version: str | None = None
    note: str | None = None
    max_total_num_tokens: int | None = None
    context_len: int | None = None
    expect_max_req_input_len: int | None = None
    input_tokens: int | None = None
    load_line: str | None = None
    mem_fraction_static: float | None = None
    reported_minimum: float | None = None


class SglangEvidence(_Strict):
    models: dict[str, SglangLogModel]
    logs: list[SglangLog]
    errors: list[SglangErrorLog] = []


# --------------------------------------------------------------------------- llama.cpp


class LlamaLogWidths(_Strict):
    n_layer: int
    k_width: int
    v_width: int
    head: int
    n_ctx_train: int


class LlamaGeometry(_Strict):
    """Exactly one of: config.json keys, GGUF keys, or the per-layer widths the log prints."""

    hf_config: dict[str, Any] | None = None
    gguf_metadata: dict[str, Any] | None = None
    log_widths: LlamaLogWidths | None = None


class LlamaExpect(_Strict):
    cells: int | None = None
    n_ctx: int | None = None
    kv_mib: str | None = None
    k_mib: str | None = None
    v_mib: str | None = None
    # an iSWA model's non-SWA cache alone, when the quoted log shows only its size line
    non_swa_mib: str | None = None
    compute_mib: float | None = None
    device_layers: dict[str, int] | None = None


class LlamaRun(_Strict):
    settings: dict[str, Any]  # ServerSettings keywords
    printed: list[str]
    expect: LlamaExpect


class LlamaLog(_Strict):
    id: str
    url: str
    thread: str
    build: str
    model: str
    fork: bool | None = None
    geometry_source: str
    geometry: LlamaGeometry
    settings: dict[str, Any] | None = None
    printed: list[str] | None = None
    expect: LlamaExpect | None = None
    runs: list[LlamaRun] | None = None

    def all_runs(self) -> list[LlamaRun]:
        if self.runs:
            return list(self.runs)
        return [LlamaRun(settings=self.settings or {}, printed=self.printed or [], expect=self.expect or LlamaExpect())]


class LlamaEvidence(_Strict):
    logs: list[LlamaLog]


class Evidence(_Strict):
    """The three tables, each None when its file is absent (a site without evidence has no /accuracy/ page)."""

    vllm: VllmEvidence | None = None
    sglang: SglangEvidence | None = None
    llamacpp: LlamaEvidence | None = None


EVIDENCE_MODELS: dict[str, type[BaseModel]] = {"vllm": VllmEvidence, "sglang": SglangEvidence, "llamacpp": LlamaEvidence}
