"""The record kinds editors write, as frozen pydantic models that forbid unknown keys.

Field-level rules live here; rules that need several files (a pair naming a GPU that
does not exist, two records with one slug) live in load.py, which knows file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Mapping

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, HttpUrl, field_validator, model_validator
from pydantic.json_schema import WithJsonSchema

# Slugs become directory names under site/: lowercase words joined by '-' or '.', never
# '..', '/', '\\', '%' or NUL, so no slug can climb out of the output directory.
SLUG_PATTERN = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"
_SLUG = re.compile(SLUG_PATTERN)
# Prose names quantities the engine fills in: {{ vllm.max_model_len_that_fits }}.
# A group whose body repeats (+, *, {n,}) and which is itself repeated: the shape of ReDoS.
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?<!\\)[*+}](?:[^()\\]|\\.)*\)(?:[*+]|\{\d*,)")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")

# The quantities prose may name; pages fill each from the engine for the pair at hand.
QUANTITY_NAMES = frozenset(
    {
        "gpu.name",
        "gpu.memory_gib",
        "model.name",
        "variant.name",
        "weights.gib",
        "config.max_len",
        "vllm.version",
        "vllm.utilization",
        "vllm.requested_gib",
        "vllm.available_gib",
        "vllm.bytes_per_token",
        "vllm.bytes_per_token_fp8",
        "vllm.block_bytes",
        "vllm.num_blocks",
        "vllm.kv_tokens",
        "vllm.max_len",
        "vllm.needed_gib",
        "vllm.max_num_seqs",
        "vllm.sampler_peak_gib",
        "vllm.warmup_headroom_gib",
        "llamacpp.gpu_layers",
        "ollama.gpu_layers",
        "llamacpp.bytes_per_token",
        "llamacpp.kv_mib",
        "llamacpp.n_ctx",
        "llamacpp.max_ctx",
        "ollama.num_ctx",
        "ollama.kv_mib",
    }
)

Engine = Literal["vllm", "llamacpp", "ollama"]
ENGINES: tuple[str, ...] = ("vllm", "llamacpp", "ollama")
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "ollama": "Ollama"}  # as readers and the projects write them


def _check_slug(value: str) -> str:
    if not _SLUG.match(value) or len(value) > 80:
        raise ValueError(
            f"{value!r} is not a valid slug; use lowercase letters, digits, '-' or '.' between words (at most 80 characters)"
        )
    return value


# The pattern is repeated for JSON Schema so editors see bad slugs before `kvtriage check`.
Slug = Annotated[str, AfterValidator(_check_slug), WithJsonSchema({"type": "string", "pattern": SLUG_PATTERN, "maxLength": 80})]
NonEmpty = Annotated[str, Field(min_length=1, max_length=20_000)]
Source = Annotated[str, Field(min_length=8, max_length=2_000, description="Where the fact comes from: a URL or repo path@commit.")]


def _check_https(value: HttpUrl) -> HttpUrl:
    if value.scheme != "https":
        raise ValueError(f"{value} must use https")
    return value


HttpsUrl = Annotated[HttpUrl, AfterValidator(_check_https)]


# `kvtriage new` writes "FILL IN: what goes here" where only an editor knows the value; no
# field accepts it, so a skeleton passes `check` except for exactly those fields.
FILL_IN = "FILL IN"


def _fill_in_hint(value: Any) -> str | None:
    items = value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        if isinstance(item, str) and item.startswith(FILL_IN):
            return item[len(FILL_IN) :].lstrip(" :").strip().rstrip(".")
    return None


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    @field_validator("*", mode="before")
    @classmethod
    def _filled_in(cls, value: Any) -> Any:
        hint = _fill_in_hint(value)
        if hint is not None:
            raise ValueError(f"fill this in ({hint})" if hint else "fill this in")
        return value


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
    cuda_total_bytes: Annotated[int, Field(gt=0)] | None = Field(
        None, description="cudaMemGetInfo / totalGlobalMem total, what vLLM and torch see."
    )
    nvidia_smi_total_mib: Annotated[int, Field(gt=0)] | None = None
    bandwidth_gb_s: Annotated[float, Field(gt=0)] | None = None
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
    def _needs_memory(self) -> "Gpu":
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
    kv_lora_rank: Annotated[int, Field(gt=0)]
    qk_rope_head_dim: Annotated[int, Field(gt=0)]
    q_lora_rank: Annotated[int, Field(gt=0)] | None = None
    qk_nope_head_dim: Annotated[int, Field(gt=0)] | None = None
    v_head_dim: Annotated[int, Field(gt=0)] | None = None


class HfConfig(Record):
    """The config.json keys that decide KV memory, under their Hugging Face names."""

    model_type: NonEmpty
    num_hidden_layers: Annotated[int, Field(gt=0, le=1024)]
    num_attention_heads: Annotated[int, Field(gt=0)]
    num_key_value_heads: Annotated[int, Field(gt=0)]
    head_dim: Annotated[int, Field(gt=0)] | None = None
    hidden_size: Annotated[int, Field(gt=0)]
    intermediate_size: Annotated[int, Field(gt=0)] | None = None
    vocab_size: Annotated[int, Field(gt=0)]
    torch_dtype: Literal["bfloat16", "float16", "float32"] | None = None
    max_position_embeddings: Annotated[int, Field(gt=0)]
    rope_scaling: dict[str, Any] | None = None
    sliding_window: Annotated[int, Field(gt=0)] | None = None
    use_sliding_window: bool | None = None
    sliding_window_pattern: Annotated[int, Field(gt=1)] | None = None
    layer_types: tuple[Literal["full_attention", "sliding_attention", "chunked_attention"], ...] | None = None
    attention_chunk_size: Annotated[int, Field(gt=0)] | None = None
    no_rope_layers: tuple[Literal[0, 1], ...] | None = None
    kv_lora_rank: Annotated[int, Field(gt=0)] | None = None
    qk_rope_head_dim: Annotated[int, Field(gt=0)] | None = None
    q_lora_rank: Annotated[int, Field(gt=0)] | None = None
    qk_nope_head_dim: Annotated[int, Field(gt=0)] | None = None
    v_head_dim: Annotated[int, Field(gt=0)] | None = None
    tie_word_embeddings: bool | None = None
    num_local_experts: Annotated[int, Field(gt=0)] | None = None
    num_experts: Annotated[int, Field(gt=0)] | None = None
    n_routed_experts: Annotated[int, Field(gt=0)] | None = None
    n_shared_experts: Annotated[int, Field(ge=0)] | None = None
    moe_intermediate_size: Annotated[int, Field(gt=0)] | None = None
    first_k_dense_replace: Annotated[int, Field(ge=0)] | None = None
    num_experts_per_tok: Annotated[int, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "HfConfig":
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types lists {len(self.layer_types)} layers but num_hidden_layers is {self.num_hidden_layers}")
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise ValueError("MLA needs both kv_lora_rank and qk_rope_head_dim")
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
    checkpoint_bytes: Annotated[int, Field(gt=0)] | None = Field(
        None, description="Bytes on disk of the weights, as the host lists them; null when not confirmed (the engine then estimates from parameters x bits and says so)."
    )
    source: Source

    @model_validator(mode="after")
    def _format_fields(self) -> "ModelVariant":
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

    rope_scaling: dict[str, Any]
    max_model_len: Annotated[int, Field(gt=0)]
    source: Source


class Model(Record):
    id: Slug
    name: NonEmpty
    family: NonEmpty
    hf_repo: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    config: HfConfig
    config_source: Source
    total_params: Annotated[int, Field(gt=0)] | None = None
    active_params: Annotated[int, Field(gt=0)] | None = None
    params_source: Source | None = None
    long_context: LongContext | None = None
    variants: tuple[ModelVariant, ...] = Field(min_length=1)
    aliases: tuple[Slug, ...] = ()
    notes: tuple[NonEmpty, ...] = ()

    @model_validator(mode="after")
    def _params_sourced(self) -> "Model":
        if (self.total_params is not None or self.active_params is not None) and self.params_source is None:
            raise ValueError("total_params needs params_source")
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
    "ollama-system-memory",  # model requires more system memory
    "ollama-partial-offload",  # fits only partly on the GPU, so it is slow
    "ollama-gpu-oom",  # llama-server exits with cudaMalloc out of memory
    "ollama-runner-crash",  # the runner stops mid-request
]

Lever = Literal[
    "clamp-context",
    "fp8-kv",
    "quantized-kv",
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
]


class ErrorText(Record):
    versions: NonEmpty = Field(description="Releases that print this text, e.g. '0.29.0 to 0.33.0'.")
    text: NonEmpty = Field(description="The exact text, with {name} where the engine fills a number.")
    source: Source


class Fix(Record):
    lever: Lever
    note: NonEmpty
    memory: Literal["gpu", "host"] = Field(
        "gpu", description="Which memory failed for this fix: the GPU's (default) or system RAM; a page lists host fixes apart."
    )


# What a failure compares (generator/advice.py says which levers move each, and which way).
Quantity = Literal[
    "kv-needed", "kv-budget", "requested", "free-memory", "weights-on-gpu", "warmup-peak", "headroom",
    "host-needed", "host-ram", "derived-limit", "context", "kv-type-mismatch", "kernel-support", "room-after-weights",
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
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    free_gib: Annotated[float, Field(gt=0, le=4096)] | None = Field(
        None, description="Free GPU memory the error printed (vLLM's startup check), in GiB."
    )


class ErrorSignature(Record):
    id: Slug
    engine: Engine
    scenario: Scenario
    title: NonEmpty = Field(max_length=120)
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
    direction: ErrorDirection | None = Field(
        None, description="What is too big and what too small; by default the scenario's (generator/advice.py DIRECTIONS)."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        if re.search(r"\(\?[<P]", value):
            raise ValueError("named groups differ between Python and JavaScript; use plain groups")
        if _NESTED_QUANTIFIER.search(value):
            # (a+)+ and the like backtrack exponentially on a near miss, in check and in readers' browsers.
            raise ValueError("a quantified group contains a quantifier, which can backtrack for minutes; quantify one level only")
        return value


class PairSettings(Record):
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    max_model_len: Annotated[int, Field(gt=0)] | None = None
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

    def record_keys(self) -> dict[str, Record]:
        """Every dated record under its key (gpu:ID, model:ID, error:ID, pair:GPU--MODEL-VARIANT)."""
        keys: dict[str, Record] = {}
        keys.update({f"gpu:{k}": v for k, v in self.gpus.items()})
        keys.update({f"model:{k}": v for k, v in self.models.items()})
        keys.update({f"error:{k}": v for k, v in self.errors.items()})
        keys.update({f"pair:{p.gpu}--{p.model}-{p.variant}": p for p in self.pairs})
        keys.update({f"engine:{k}": v for k, v in self.engines.items()})
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
