"""The record kinds editors write, as frozen pydantic models that forbid unknown keys: site, GPUs,
models, engines, affiliates, errors, pairs, the date ledger, and the Dataset they load into.

Field-level rules live here; rules that need several files (a pair naming a GPU that
does not exist, two records with one slug) live in load/, which knows file and line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Mapping

from pydantic import AfterValidator, Field, field_validator, model_validator

from generator.schema.evidence import Evidence
from generator.schema.fields import MAX_LAYERS, Bandwidth, Bytes, Count, Count0, Engine, Fraction, HttpsUrl, Layers, MiB, NonEmpty, Params, Record, RopeScaling, Slug, Source, Tokens, Width, not_blank
from generator.schema.patterns import portable_regex

# --------------------------------------------------------------------------- site


class SiteConfig(Record):
    base_url: HttpsUrl
    title: NonEmpty
    tagline: NonEmpty
    default_author: NonEmpty
    language: Annotated[str, Field(pattern=r"^[a-z]{2}(?:-[A-Z]{2})?$")] = "en"
    sitemap_max_urls: Annotated[int, Field(ge=1, le=50_000)] = 45_000
    repository_url: HttpsUrl | None = None


# --------------------------------------------------------------------------- GPUs


class Gpu(Record):
    id: Slug
    name: NonEmpty
    vendor: Literal["nvidia", "amd"]
    architecture: NonEmpty
    marketed_gb: Annotated[int, Field(gt=0, le=4096)]
    cuda_total_bytes: Bytes | None = Field(
        None, description="cudaMemGetInfo / totalGlobalMem total, what vLLM and torch see."
    )
    nvidia_smi_total_mib: MiB | None = None
    bandwidth_gb_s: Bandwidth | None = None
    compute_capability: Annotated[str, Field(pattern=r"^\d+\.\d+$")] | None = None
    fp8_compute: bool | None = None
    memory_source: Source
    bandwidth_source: Source | None = None
    compute_capability_source: Source | None = None
    source: Source
    buy_query: NonEmpty | None = None
    rent: tuple[Slug, ...] = ()
    aliases: tuple[Slug, ...] = ()
    notes: tuple[NonEmpty, ...] = ()

    @model_validator(mode="after")
    def _needs_memory(self) -> Gpu:
        if self.cuda_total_bytes is None and self.nvidia_smi_total_mib is None:
            raise ValueError("give cuda_total_bytes or nvidia_smi_total_mib; a GPU without confirmed memory cannot be sized")
        if self.bandwidth_gb_s is not None and self.bandwidth_source is None:
            raise ValueError("bandwidth_gb_s needs bandwidth_source")
        if self.compute_capability is not None and self.compute_capability_source is None:
            raise ValueError("compute_capability needs compute_capability_source")
        return self


class GpuCatalog(Record):
    gpus: tuple[Gpu, ...] = Field(min_length=1)


# --------------------------------------------------------------------------- models


class MlaConfig(Record):
    kv_lora_rank: Count
    qk_rope_head_dim: Count
    q_lora_rank: Count | None = None
    qk_nope_head_dim: Count | None = None
    v_head_dim: Count | None = None


class HfConfig(Record):
    """The config.json keys that decide KV memory, under their Hugging Face names."""

    model_type: NonEmpty
    num_hidden_layers: Layers
    num_attention_heads: Count
    num_key_value_heads: Count
    head_dim: Count | None = None
    hidden_size: Width
    intermediate_size: Width | None = None
    vocab_size: Width
    torch_dtype: Literal["bfloat16", "float16", "float32"] | None = None
    max_position_embeddings: Tokens
    rope_scaling: RopeScaling | None = None
    sliding_window: Tokens | None = None
    use_sliding_window: bool | None = None
    sliding_window_pattern: Annotated[int, Field(gt=1, le=MAX_LAYERS)] | None = None
    layer_types: tuple[Literal["full_attention", "sliding_attention", "chunked_attention",
                               "linear_attention", "attention", "mamba"], ...] | None = None
    attention_chunk_size: Tokens | None = None
    no_rope_layers: tuple[Literal[0, 1], ...] | None = None
    kv_lora_rank: Count | None = None
    qk_rope_head_dim: Count | None = None
    q_lora_rank: Count | None = None
    qk_nope_head_dim: Count | None = None
    v_head_dim: Count | None = None
    tie_word_embeddings: bool | None = None
    num_local_experts: Count | None = None
    num_experts: Count | None = None
    n_routed_experts: Count | None = None
    n_shared_experts: Count0 | None = None
    moe_intermediate_size: Width | None = None
    first_k_dense_replace: Annotated[int, Field(ge=0, le=MAX_LAYERS)] | None = None
    num_experts_per_tok: Count | None = None
    # Hybrid models: layers that keep a fixed-size state per sequence (generator/engine/geometry.py
    # StateShape), under each family's own config.json names. Gated DeltaNet (Qwen3-Next, Qwen3.5):
    full_attention_interval: Count | None = None
    linear_num_key_heads: Count | None = None
    linear_num_value_heads: Count | None = None
    linear_key_head_dim: Count | None = None
    linear_value_head_dim: Count | None = None
    linear_conv_kernel_dim: Count | None = None
    # Mamba-2: Granite-4.0-H / Bamba (mamba_*), Nemotron-H (mamba_num_heads ... hybrid_override_pattern).
    mamba_n_heads: Count | None = None
    mamba_d_head: Count | None = None
    mamba_d_state: Count | None = None
    mamba_n_groups: Count | None = None
    mamba_d_conv: Count | None = None
    mamba_expand: Count | None = None
    mamba_num_heads: Count | None = None
    mamba_head_dim: Count | None = None
    ssm_state_size: Count | None = None
    n_groups: Count | None = None
    conv_kernel: Count | None = None
    expand: Count | None = None
    hybrid_override_pattern: Annotated[str, Field(pattern=r"^[M*E-]+$", max_length=MAX_LAYERS)] | None = None
    # Jamba (Mamba-1): attention where layer % attn_layer_period == attn_layer_offset.
    attn_layer_period: Count | None = None
    attn_layer_offset: Annotated[int, Field(ge=0, le=MAX_LAYERS)] | None = None
    layers_block_type: tuple[Literal["attention", "mamba"], ...] | None = None
    mamba_ssm_dtype: Literal["bfloat16", "float16", "float32"] | None = None
    # Gemma 4 (generator/engine/geometry.py GEMMA4_SOURCE): full-attention layers with their own head size and,
    # with attention_k_eq_v, their own KV head count; the last num_kv_shared_layers layers reuse earlier layers' KV.
    global_head_dim: Count | None = None
    num_global_key_value_heads: Count | None = None
    attention_k_eq_v: bool | None = None
    num_kv_shared_layers: Annotated[int, Field(ge=0, le=MAX_LAYERS)] | None = None
    enable_moe_block: bool | None = None  # Gemma 4 26B-A4B: a dense MLP beside the experts in every layer
    top_k_experts: Count | None = None  # Gemma 4's name for num_experts_per_tok
    # Gemma 4 E2B/E4B: per-layer embeddings (PLE) and a double-wide MLP in the KV-shared layers (weights only).
    hidden_size_per_layer_input: Count0 | None = None
    vocab_size_per_layer_input: Width | None = None
    use_double_wide_mlp: bool | None = None

    @model_validator(mode="after")
    def _consistent(self) -> HfConfig:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.head_dim is None and self.hidden_size < self.num_attention_heads:
            # head_dim defaults to hidden_size // num_attention_heads, which would be 0.
            raise ValueError(f"hidden_size {self.hidden_size} is smaller than num_attention_heads {self.num_attention_heads}, "
                             "so a head would have no dimensions; check both against config.json or give head_dim")
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types lists {len(self.layer_types)} layers but num_hidden_layers is {self.num_hidden_layers}")
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise ValueError("MLA needs both kv_lora_rank and qk_rope_head_dim")
        for key in ("hybrid_override_pattern", "layers_block_type"):
            value = getattr(self, key)
            if value is not None and len(value) != self.num_hidden_layers:
                raise ValueError(f"{key} lists {len(value)} layers but num_hidden_layers is {self.num_hidden_layers}")
        return self

    def as_config_json(self) -> dict[str, Any]:
        # Keys the editor wrote stay, nulls included: `sliding_window: null` is a fact (no window),
        # while a missing key means the engine applies transformers' default for the model type.
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.model_dump(exclude_unset=True).items()}


VariantFormat = Literal["bf16", "fp16", "fp8", "awq", "gptq", "mxfp4", "gguf"]


class ModelVariant(Record):
    id: Slug
    name: NonEmpty
    format: VariantFormat
    hf_repo: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")] | None = None
    gguf_file: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+\.gguf$")] | None = None
    gguf_type: Annotated[str, Field(pattern=r"^[A-Z0-9_]+$")] | None = None
    ollama_tag: Annotated[str, Field(pattern=r"^[a-z0-9._-]+(?::[A-Za-z0-9._-]+)?$")] | None = None
    checkpoint_bytes: Bytes | None = Field(
        None, description="Bytes on disk of the weights, as the host lists them; null when not confirmed (the engine then estimates from parameters x bits and says so)."
    )
    source: Source

    @model_validator(mode="after")
    def _format_fields(self) -> ModelVariant:
        if self.format == "gguf" and (self.gguf_file is None or self.gguf_type is None):
            raise ValueError("a gguf variant needs gguf_file and gguf_type")
        if self.format != "gguf" and self.hf_repo is None:
            raise ValueError(f"a {self.format} variant needs hf_repo, the repository vLLM loads")
        return self

    @property
    def engines(self) -> tuple[str, ...]:
        return ("llamacpp", "ollama") if self.format == "gguf" else ("vllm",)


class LongContext(Record):
    """How a model reaches a longer context than its config.json allows (e.g. YaRN)."""

    rope_scaling: RopeScaling
    max_model_len: Tokens
    source: Source


class Model(Record):
    # Which Ollama names resolve to a model changes what a pasted log finds, not what its pages say.
    UNDATED_FIELDS: ClassVar[frozenset[str]] = frozenset({"ollama_names", "ollama_names_source"})

    id: Slug
    name: NonEmpty
    family: NonEmpty
    hf_repo: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    config: HfConfig
    config_source: Source
    total_params: Params | None = None
    active_params: Params | None = None
    params_source: Source | None = None
    long_context: LongContext | None = None
    variants: tuple[ModelVariant, ...] = Field(min_length=1)
    aliases: tuple[Slug, ...] = ()
    hf_aliases: tuple[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")], ...] = Field(
        (), description="Other Hugging Face ids of the same checkpoint (an earlier name, an official re-upload); logs naming them resolve to this model."
    )
    ollama_names: tuple[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*(?::[a-z0-9._-]+)?$")], ...] = Field(
        (), description="Ollama library names that serve this model at a quantization the record does not state (`gemma3` for "
                        "its default size, `llama3.1:70b`); logs naming them, or a tag past them (`gemma3:4b-it-q8_0`), resolve "
                        "to this model's architecture only.")
    ollama_names_source: Source | None = None
    multimodal: bool = Field(
        False, description="The checkpoint carries a vision (or audio) encoder besides the language model `config` holds. "
                           "The encoder keeps no KV cache, so the KV figures stay exact; but vLLM's profile run also runs it on a "
                           "dummy multimodal batch, and a weight estimate from `config` leaves its parameters out, so pages say so.")
    notes: tuple[NonEmpty, ...] = ()

    @model_validator(mode="after")
    def _params_sourced(self) -> Model:
        if (self.total_params is not None or self.active_params is not None) and self.params_source is None:
            raise ValueError("total_params needs params_source")
        if self.ollama_names and self.ollama_names_source is None:
            raise ValueError("ollama_names needs ollama_names_source")
        seen: set[str] = set()
        for variant in self.variants:
            if variant.id in seen:
                raise ValueError(f"variant id {variant.id!r} appears twice")
            seen.add(variant.id)
        return self


class ModelCatalog(Record):
    models: tuple[Model, ...] = Field(min_length=1)


# --------------------------------------------------------------------------- engines


class VersionNote(Record):
    since: Annotated[str, Field(pattern=r"^[0-9a-z.\-]+$")]
    change: NonEmpty
    source: Source


class EngineInfo(Record):
    id: Engine
    name: NonEmpty
    version: NonEmpty
    summary: NonEmpty
    docs_url: HttpsUrl
    source: Source
    version_notes: tuple[VersionNote, ...] = ()


class EngineCatalog(Record):
    engines: tuple[EngineInfo, ...] = Field(min_length=1)


# --------------------------------------------------------------------------- affiliates


class AffiliateProgram(Record):
    id: Slug
    name: NonEmpty
    kind: Literal["buy", "rent"]
    url_template: NonEmpty = Field(description="https URL; {query} is replaced by the GPU's buy query, URL-encoded.")
    rel: Literal["sponsored noopener", "sponsored nofollow noopener"] = "sponsored noopener"
    disclosure: NonEmpty
    new_tab: bool = True

    @field_validator("url_template")
    @classmethod
    def _https_template(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("url_template must start with https://")
        if re.search(r"[\s\"'<>\\]", value):
            raise ValueError("url_template may not contain spaces, quotes, angle brackets or backslashes")
        unknown = set(re.findall(r"\{([^}]*)\}", value)) - {"query"}
        if unknown:
            raise ValueError(f"url_template names unknown fields {sorted(unknown)}; only {{query}} is filled in")
        return value


class AffiliateCatalog(Record):
    programs: tuple[AffiliateProgram, ...] = Field(min_length=1)


# --------------------------------------------------------------------------- errors and pairs

Scenario = Literal[
    "vllm-kv-too-small",  # max seq len larger than the KV cache (V0 and V1 texts)
    "vllm-no-cache-blocks",  # nothing left for a single block
    "vllm-startup-free-memory",  # free memory at start below util * total
    "vllm-weights-oom",  # CUDA OOM loading weights / profiling / capturing graphs
    "vllm-sampler-warmup-oom",  # the sampler warm-up after the KV cache is allocated runs out of memory
    "vllm-max-len-above-derived",  # --max-model-len above what config.json allows
    "llamacpp-kv-alloc",  # cudaMalloc out of memory for the KV buffer
    "llamacpp-context-fail",  # failed to create the context
    "llamacpp-compute-buffer",  # a running context cannot get its compute buffer (K-shift, defrag, the graph reserved after)
    "ollama-system-memory",  # model requires more system memory
    "ollama-partial-offload",  # fits only partly on the GPU, so it is slow
    "ollama-gpu-oom",  # llama-server exits with cudaMalloc out of memory
    "ollama-runner-crash",  # the runner stops mid-request
    "sglang-kv-pool",  # SGLang's KV pool at start-up and the limits it sets (hub pages only)
    "sglang-no-kv-pool",  # SGLang: the weights load but leave no KV pool inside --mem-fraction-static
    "sglang-pool-short",  # SGLang starts with a pool shorter than the context: long inputs are refused
    "llamacpp-not-memory",  # not a memory error: the build refuses a flag or setting it no longer has
    "ollama-load-timeout",  # the model load stalls past OLLAMA_LOAD_TIMEOUT (slow disk, swapping) or the client gives up
    "vllm-host-memory",  # system RAM, not the GPU, runs out while the checkpoint is read
]

Lever = Literal[
    "clamp-context",
    "fp8-kv",
    "quantized-kv",
    "quantized-kv-same-context",
    "enforce-eager",
    "raise-utilization",
    "lower-utilization",
    "tensor-parallel",
    "smaller-quant",
    "bigger-gpu",
    "fewer-slots",
    "fewer-gpu-layers",
    "free-gpu-memory",
    "kv-on-cpu",
    "allow-long-max-len",
    "enable-flash-attn",
    "matching-kv-types",
    "fewer-seqs",
    "cpu-offload-weights",
    "drop-removed-flag",
    "smaller-ubatch",
    "longer-load-timeout",
    "more-host-ram",
]


class ErrorText(Record):
    versions: NonEmpty = Field(description="Releases that print this text, e.g. '0.29.0 to 0.33.0'.")
    # 4,000 characters: the longest text an engine prints is ~650, and `check` runs every pattern on
    # every text, so a text's length bounds how long even a slow pattern can take.
    text: Annotated[str, Field(min_length=1, max_length=4_000)] = Field(description="The exact text, with {name} where the engine fills a number.")
    source: Source


class Fix(Record):
    lever: Lever
    note: NonEmpty
    memory: Literal["gpu", "host"] = Field(
        "gpu", description="Which memory failed for this fix: the GPU's (default) or system RAM; a page lists host fixes apart."
    )


# What a failure compares (generator/plan/advice.py says which levers move each, and which way).
Quantity = Literal[
    "kv-needed", "kv-budget", "requested", "free-memory", "weights-on-gpu", "warmup-peak", "headroom",
    "host-needed", "host-ram", "derived-limit", "context", "kv-type-mismatch", "kernel-support", "room-after-weights",
    "flags-not-accepted", "build-options", "compute-buffer", "room-for-compute", "load-time", "load-timeout",
]


class ErrorDirection(Record):
    too_big: Quantity
    too_small: Quantity


class Faq(Record):
    question: NonEmpty
    answer: NonEmpty


class ExamplePair(Record):
    gpu: Slug
    model: Slug
    variant: Slug
    gpu_memory_utilization: Fraction | None = None
    free_gib: Annotated[float, Field(gt=0, le=4096)] | None = Field(
        None, description="Free GPU memory the error printed (vLLM's startup check), in GiB."
    )


class ErrorSignature(Record):
    # Read by the paste triage only, never rendered: editing them does not change a page's date.
    UNDATED_FIELDS: ClassVar[frozenset[str]] = frozenset({"triage_patterns", "triage_weight"})

    id: Slug
    engine: Engine
    scenario: Scenario
    # Annotated, not Field(max_length=...) on NonEmpty: NonEmpty's own 20,000 would win.
    title: Annotated[str, Field(min_length=1, max_length=120), AfterValidator(not_blank)]
    short_name: Annotated[str, Field(min_length=3, max_length=40)] | None = Field(
        None, description="What pair-page titles call the error, e.g. 'max seq len error'."
    )
    description: Annotated[str, Field(min_length=50, max_length=160)]
    signature: NonEmpty = Field(description="The line readers paste, as the current release prints it.")
    texts: tuple[ErrorText, ...] = Field(min_length=1)
    pattern: NonEmpty = Field(description="Python/JS-compatible regex that matches every text in texts.")
    triage: NonEmpty
    cause: NonEmpty
    fixes: tuple[Fix, ...] = Field(min_length=1)
    faq: tuple[Faq, ...] = ()
    example: ExamplePair
    pair_pages: bool = Field(
        False,
        description="Generate a page for every GPU and model that hits this scenario. One error per scenario at most, so no two errors repeat the same numbers.",
    )
    related: tuple[Slug, ...] = ()
    aliases: tuple[Slug, ...] = ()
    triage_patterns: tuple[NonEmpty, ...] = Field(
        (),
        description="More regexes the paste triage matches besides `pattern` (older or shortened wordings, lines that only this error prints); the site search keeps using `pattern` alone.",
    )
    triage_weight: Annotated[int, Field(ge=-50, le=50)] = Field(
        0,
        description="Added to this error's triage score: positive for a precise signature that should beat a generic one, negative for a line that only wraps another failure.",
    )
    direction: ErrorDirection | None = Field(
        None, description="What is too big and what too small; by default the scenario's (generator/plan/advice.py DIRECTIONS)."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return portable_regex(value)

    @field_validator("triage_patterns")
    @classmethod
    def _triage_patterns_compile(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(portable_regex(value) for value in values)


class PairSettings(Record):
    gpu_memory_utilization: Fraction | None = None
    max_model_len: Tokens | None = None
    kv_cache_dtype: Literal["auto", "fp8", "fp8_e4m3", "fp8_e5m2"] | None = None
    gpu_count: Annotated[int, Field(ge=1, le=64)] = 1
    vllm_version: Annotated[str, Field(pattern=r"^\d+\.\d+(?:\.\d+)?$")] | None = None


class Pair(Record):
    gpu: Slug
    model: Slug
    variant: Slug
    errors: tuple[Slug, ...] = Field(min_length=1)
    settings: PairSettings = PairSettings()
    intro: NonEmpty | None = None
    aliases: tuple[Slug, ...] = ()


# --------------------------------------------------------------------------- dates


class LedgerEntry(Record):
    sha: Annotated[str, Field(pattern=r"^[0-9a-f]{16,64}$")]
    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class DateLedger(Record):
    """When each record's content last changed; written by `kvtriage stamp`, read for dateModified."""

    records: dict[str, LedgerEntry] = {}


# --------------------------------------------------------------------------- the whole dataset


@dataclass(frozen=True)
class Dataset:
    """Every record, validated and cross-checked, keyed by id in sorted order."""

    site: SiteConfig
    gpus: Mapping[str, Gpu]
    models: Mapping[str, Model]
    engines: Mapping[str, EngineInfo]
    affiliates: Mapping[str, AffiliateProgram]
    errors: Mapping[str, ErrorSignature]
    pairs: tuple[Pair, ...]
    # Relative path of the file each record came from, for messages and incremental builds.
    origins: Mapping[str, str] = field(default_factory=dict)
    # record key -> (content sha, date it last changed), from data/lastmod.yaml.
    ledger: Mapping[str, LedgerEntry] = field(default_factory=dict)
    # engine -> text of the real CLI surface it is checked against (data/surfaces/).
    surfaces: Mapping[str, str] = field(default_factory=dict)
    # The real-log tables (data/evidence/), for the /accuracy/ page; None when there are none.
    evidence: Evidence | None = None

    def record_keys(self) -> dict[str, Record]:
        """Every dated record under its key (gpu:ID, model:ID, error:ID, pair:GPU--MODEL-VARIANT)."""
        keys: dict[str, Record] = {}
        keys.update({f"gpu:{k}": v for k, v in self.gpus.items()})
        keys.update({f"model:{k}": v for k, v in self.models.items()})
        keys.update({f"error:{k}": v for k, v in self.errors.items()})
        keys.update({f"pair:{p.gpu}--{p.model}-{p.variant}": p for p in self.pairs})
        keys.update({f"engine:{k}": v for k, v in self.engines.items()})
        if self.evidence is not None:
            keys.update({f"evidence:{k}": v for k in ("vllm", "sglang", "llamacpp") if (v := getattr(self.evidence, k)) is not None})
        return keys


# --------------------------------------------------------------------------- sources, as readers see them

_URL = re.compile(r"https://[^\s()<>\"'\]\[,;]+[^\s()<>\"'\]\[,;.:]")


def reader_urls(source: str | None) -> tuple[str, ...]:
    """The https URLs in a record's source, in order, without repeats: what a reader can open. The
    rest of a source (repository paths, how it was found) is for editors and stays off the pages."""
    found: list[str] = []
    for url in _URL.findall(source or ""):
        if url not in found:
            found.append(url)
    return tuple(found)
