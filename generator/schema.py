"""The record kinds editors write, as frozen pydantic models that forbid unknown keys.

Field-level rules live here; rules that need several files (a pair naming a GPU that
does not exist, two records with one slug) live in load.py, which knows file and line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Mapping

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

Engine = Literal["vllm", "llamacpp", "ollama", "sglang"]
ENGINES: tuple[str, ...] = ("vllm", "llamacpp", "ollama", "sglang")
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "ollama": "Ollama", "sglang": "SGLang"}  # as readers and the projects write them


# Names the build writes itself, at the top of site/ or inside every folder (index.html and its
# Markdown twin index.md): a slug may not take one, or a page and a file would claim one path.
# See generator/publish.py (publish_files) and build.py (static/, pagefind/).
RESERVED_SLUGS = frozenset({
    "index.html", "index.htm", "index.md", "404.html", "sitemap.xml", "robots.txt", "llms.txt", "favicon.ico",
    "static", "search", "pagefind", "about", "gpus", "models", "oom", "engines",
})
# A slug that ends like a file name would be served as one by static hosts (gpus/x.html/ beside gpus/x.html).
_FILE_SUFFIX = re.compile(r"\.(?:html?|md|xml|txt|json|js|css|svg|ico|png|gz)$")


def _check_slug(value: str) -> str:
    if not _SLUG.match(value) or len(value) > 80:
        raise ValueError(
            f"{value!r} is not a valid slug; use lowercase letters, digits, '-' or '.' between words (at most 80 characters)"
        )
    if value in RESERVED_SLUGS or value.startswith("sitemap-") or _FILE_SUFFIX.search(value):
        raise ValueError(f"{value!r} is a name the build writes itself (or looks like a file name); pick another slug, e.g. {value.replace('.', '-')}-1")
    return value


# --------------------------------------------------------------------------- numeric bounds

# One set of ranges every number shares, whether an editor writes it in data/, a config.json
# brings it to `kvtriage kv` or `import-model`, or a request names it: finite, positive where
# nothing else is physical, and no larger than hardware or models get by orders of magnitude,
# so no later step overflows a float, divides by zero or loops for hours.
PIB = 2**50
MAX_BYTES = PIB  # memory, checkpoints, KV budgets: at most 1 PiB
MAX_MIB = PIB >> 20
MAX_LAYERS = 1024  # the deepest released models have ~128 layers
MAX_COUNT = 10**6  # heads, experts, ranks, per-layer dimensions
MAX_WIDTH = 2**24  # hidden size, intermediate size, vocabulary (~16.7 million)
MAX_TOKENS = 2**27  # context lengths, windows, batch tokens (~134 million)
MAX_GPUS = 1024  # GPUs one server spreads a model over
MAX_PARAMS = 10**15  # parameters in one model
MAX_GB_S = 10**6  # memory bandwidth in GB/s
MAX_GIB = MAX_BYTES / 2**30  # GiB figures in requests (1 PiB)

# kind -> (smallest, largest, what to write): the table both validators below read.
BOUNDS: dict[str, tuple[int | float, int | float, str]] = {
    "layers": (1, MAX_LAYERS, "a layer count"),
    "count": (1, MAX_COUNT, "a count"),
    "count0": (0, MAX_COUNT, "a count"),
    "width": (1, MAX_WIDTH, "a size"),
    "tokens": (1, MAX_TOKENS, "a number of tokens"),
    "tokens0": (0, MAX_TOKENS, "a number of tokens"),
    "bytes": (1, MAX_BYTES, "a number of bytes (at most 1 PiB)"),
    "mib": (1, MAX_MIB, "a number of MiB (at most 1 PiB)"),
    "gpus": (1, MAX_GPUS, "a number of GPUs"),
    "params": (1, MAX_PARAMS, "a number of parameters"),
}


class BoundsError(ValueError):
    """A number outside the range physics allows; engines re-raise it as their input error."""


def check_int(value: Any, name: str, kind: str, error: type[ValueError] = BoundsError, *, low: int | None = None, wrong: str | None = None) -> int:
    """The one integer check: an int (not bool, not float) from low (default BOUNDS[kind]) to BOUNDS[kind];
    raises error(message). `wrong` words a non-integer or too small a value the way the engine (and its
    JavaScript port) always has; too large a value always gets the bound."""
    lo, hi, what = BOUNDS[kind]
    lo = lo if low is None else low
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(wrong or f"{name} must be an integer, got {_short(value)}")
    if value < lo:
        raise error(wrong or f"{name} must be at least {lo}, got {value}")
    if value > hi:
        raise error(f"{name} must be at most {hi:,} ({what}), got {_short(value)}")
    return value


def check_number(value: Any, name: str, low: float, high: float, error: type[ValueError] = BoundsError, *, low_open: bool = True, wrong: str | None = None) -> float:
    """The one real-number check: finite, above low (or at least, when not low_open) and at most high."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(wrong or f"{name} must be a number, got {_short(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise error(wrong or f"{name} must be a finite number, got {_short(value)}")
    if value < low or (low_open and value == low):
        raise error(wrong or f"{name} must be {'above' if low_open else 'at least'} {low:g}, got {_short(value)}")
    if value > high:
        raise error(f"{name} must be at most {high:,.0f}, got {_short(value)}" if float(high).is_integer() else f"{name} must be at most {high:g}, got {_short(value)}")
    return float(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:20] + f"... ({len(text)} characters)"


def _bounded(kind: str) -> Any:
    lo, hi, what = BOUNDS[kind]
    # The bounds are in the JSON Schema too, so editors see out-of-range numbers before `check`.
    low = {"gt": 0} if lo == 1 else {"ge": lo}
    return Annotated[int, Field(**low, le=hi, description=f"{what}, {lo:,} to {hi:,}")]


# Whole numbers in records: JSON/YAML integers only ("24" or 24.0 are refused), within BOUNDS.
Layers = _bounded("layers")
Count = _bounded("count")
Count0 = _bounded("count0")
Width = _bounded("width")
Tokens = _bounded("tokens")
Bytes = _bounded("bytes")
MiB = _bounded("mib")
Params = _bounded("params")
# Real numbers in records: finite (YAML's .inf and .nan are refused) and in range.
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Bandwidth = Annotated[float, Field(gt=0, le=MAX_GB_S, allow_inf_nan=False)]

# rope_scaling keys whose value is a number, with the range each may take.
_ROPE_NUMBERS: dict[str, tuple[float, float]] = {
    "factor": (0.0, 1024.0),
    "original_max_position_embeddings": (0.0, float(MAX_TOKENS)),
    "low_freq_factor": (0.0, 1e6),
    "high_freq_factor": (0.0, 1e6),
    "beta_fast": (0.0, 1e6),
    "beta_slow": (0.0, 1e6),
    "mscale": (0.0, 1e6),
    "mscale_all_dim": (-1e6, 1e6),
    "attention_factor": (0.0, 1e6),
    "rope_theta": (0.0, 1e12),
}


def rope_scaling_problem(rope: Any, where: str = "rope_scaling") -> str | None:
    """Why a rope_scaling object cannot be used, or None: its numeric keys must be finite and in range,
    its lists (LongRoPE's short_factor, long_factor) finite numbers, at most MAX_COUNT of them."""
    if rope is None:
        return None
    if not isinstance(rope, Mapping):
        return f"{where} must be an object or null"
    for key, value in rope.items():
        if key in _ROPE_NUMBERS:
            low, high = _ROPE_NUMBERS[key]
            try:
                check_number(value, f"{where}.{key}", low, high, low_open=low == 0.0)
            except BoundsError as exc:
                return str(exc)
        elif isinstance(value, Mapping):
            problem = rope_scaling_problem(value, f"{where}.{key}")  # per-layer-type sets (Gemma 3)
            if problem:
                return problem
        elif isinstance(value, (list, tuple)):
            if len(value) > MAX_COUNT:
                return f"{where}.{key} lists {len(value):,} numbers, more than {MAX_COUNT:,}"
            for item in value:
                try:
                    check_number(item, f"{where}.{key}[]", -1e6, 1e6, low_open=False)
                except BoundsError as exc:
                    return str(exc)
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{where}.{key} must be a finite number, got {value!r}"
    return None


def _check_rope(value: Any) -> Any:
    problem = rope_scaling_problem(value)
    if problem:
        raise ValueError(problem)
    return value


RopeScaling = Annotated[dict[str, Any], AfterValidator(_check_rope)]


# The pattern is repeated for JSON Schema so editors see bad slugs before `kvtriage check`.
Slug = Annotated[str, AfterValidator(_check_slug), WithJsonSchema({"type": "string", "pattern": SLUG_PATTERN, "maxLength": 80, "not": {"enum": sorted(RESERVED_SLUGS)}})]
def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is blank (only spaces); write the text")
    problem = _control_character(value)
    if problem:
        raise ValueError(problem)
    return value


# Text an editor writes: at least one visible character (a blank disclosure or title says nothing).
NonEmpty = Annotated[str, Field(min_length=1, max_length=20_000), AfterValidator(_not_blank)]
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
        problem = _control_character(value)
        if problem:
            raise ValueError(problem)
        return value


# C0 control characters other than tab and newline, and DEL: YAML escapes ("\0", "\e", "\x1b")
# write them, and on a page they corrupt the text or the terminal a reader pastes into.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CONTROL_NAMES = {0: "NUL", 7: "BEL", 8: "BS", 11: "VT", 12: "FF", 13: "CR", 27: "ESC", 127: "DEL"}


def _control_character(value: Any) -> str | None:
    """Why a string cannot be published, or None. Lists are left to their item types (NonEmpty checks
    too), so the error points at the item."""
    if isinstance(value, str):
        found = _CONTROL.search(value)
        if found:
            code = ord(found.group())
            name = _CONTROL_NAMES.get(code, "a control character")
            return (f"contains the control character U+{code:04X} ({name}) at character {found.start() + 1}; "
                    "remove it (a YAML escape such as \\0, \\e or \\x1b writes one)")
    return None


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
    layer_types: tuple[Literal["full_attention", "sliding_attention", "chunked_attention"], ...] | None = None
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
    notes: tuple[NonEmpty, ...] = ()

    @model_validator(mode="after")
    def _params_sourced(self) -> Model:
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
    "sglang-kv-pool",  # SGLang's KV pool at start-up and the limits it sets (hub pages only; no pair numbers yet)
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
    title: Annotated[str, Field(min_length=1, max_length=120), AfterValidator(_not_blank)]
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
        return _portable_regex(value)

    @field_validator("triage_patterns")
    @classmethod
    def _triage_patterns_compile(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_portable_regex(value) for value in values)


def _portable_regex(value: str) -> str:
    """A regex that compiles, means the same in Python and in readers' browsers, and cannot backtrack
    for minutes on a near miss."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"pattern does not compile: {exc}") from None
    if re.search(r"\(\?[<P]", value):
        raise ValueError("named groups differ between Python and JavaScript; use plain groups")
    problem = pattern_backtracking_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# --------------------------------------------------------------------------- pattern backtracking

# Patterns run in `check` (against every text) and in readers' browsers (against whatever they paste),
# so a pattern that backtracks catastrophically is refused before it runs, by its parse tree.
MAX_PATTERN_LENGTH = 1_000
_ALPHABET = [chr(c) for c in range(128)] + ["\u00e9", "\u2014", "\u4e2d"]  # what the overlap test samples


def _parse_tree(pattern: str) -> Any:
    try:
        from re import _parser as sre_parse  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_parse  # type: ignore[no-redef]
    return sre_parse.parse(pattern)


def _constants() -> Any:
    try:
        from re import _constants as c  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_constants as c  # type: ignore[no-redef]
    return c


_CATEGORY_RE = {
    "CATEGORY_DIGIT": re.compile(r"\d"), "CATEGORY_NOT_DIGIT": re.compile(r"\D"),
    "CATEGORY_SPACE": re.compile(r"\s"), "CATEGORY_NOT_SPACE": re.compile(r"\S"),
    "CATEGORY_WORD": re.compile(r"\w"), "CATEGORY_NOT_WORD": re.compile(r"\W"),
}


def _first_chars(items: Any, c: Any) -> frozenset[str] | None:
    """Characters the sequence `items` can start with (sampled from _ALPHABET); None when unknown."""
    for op, av in items:
        if op == c.LITERAL:
            return frozenset({chr(av)})
        if op == c.NOT_LITERAL:
            return frozenset(ch for ch in _ALPHABET if ch != chr(av))
        if op == c.ANY:
            return frozenset(ch for ch in _ALPHABET if ch != "\n")
        if op == c.IN:
            negate = any(o == c.NEGATE for o, _ in av)
            found = set()
            for o, v in av:
                if o == c.LITERAL:
                    found.add(chr(v))
                elif o == c.RANGE:
                    found.update(ch for ch in _ALPHABET if v[0] <= ord(ch) <= v[1])
                elif o == c.CATEGORY:
                    pattern = _CATEGORY_RE.get(str(v))
                    found.update(ch for ch in _ALPHABET if pattern is None or pattern.match(ch))
            return frozenset(ch for ch in _ALPHABET if ch not in found) if negate else frozenset(found)
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT if hasattr(c, "POSSESSIVE_REPEAT") else c.MAX_REPEAT):
            return _first_chars(av[2], c)
        if op == c.SUBPATTERN:
            return _first_chars(av[-1], c)
        if op == c.BRANCH:
            sets = [_first_chars(branch, c) for branch in av[1]]
            return None if any(s is None for s in sets) else frozenset().union(*sets)
        if op == c.AT:
            continue  # ^, $, \b: zero width
        return None
    return frozenset()


def _can_be_empty(op: Any, av: Any, c: Any) -> bool:
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return av[0] == 0
    return op in (c.AT, c.ASSERT, c.ASSERT_NOT)


def _unbounded(op: Any, av: Any, c: Any) -> bool:
    return op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[1] == c.MAXREPEAT


def _has_repeat(items: Any, c: Any) -> bool:
    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[1] > 1:
            return True
        for sub in _children(op, av, c):
            if _has_repeat(sub, c):
                return True
    return False


def _children(op: Any, av: Any, c: Any) -> list[Any]:
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return [av[2]]
    if op == c.SUBPATTERN:
        return [av[-1]]
    if op == c.BRANCH:
        return list(av[1])
    if op in (c.ASSERT, c.ASSERT_NOT):
        return [av[1]]
    if op == getattr(c, "ATOMIC_GROUP", None):
        return [av]
    return []


def _backtracking_problem(items: Any, c: Any) -> str | None:
    """Why this parsed sequence can backtrack catastrophically, or None."""
    seq = list(items)
    for i, (op, av) in enumerate(seq):
        if op in (c.GROUPREF, getattr(c, "GROUPREF_EXISTS", None)):
            return "a backreference (\\1) can backtrack for minutes and differs between Python and JavaScript; match the text itself"
        if op in (c.ASSERT, c.ASSERT_NOT) and _has_repeat(av[1], c):
            return "a lookaround with a quantifier inside it re-scans the text at every position; use a lookaround of plain text"
        if _unbounded(op, av, c):
            # The next item that must consume something; two unbounded repeats that can match the
            # same characters side by side (.*.*, \d+\d*) split a run every possible way.
            mine = _first_chars([(op, av)], c)
            for op2, av2 in seq[i + 1 :]:
                if _unbounded(op2, av2, c):
                    theirs = _first_chars([(op2, av2)], c)
                    if mine is None or theirs is None or mine & theirs:
                        return "two unbounded repeats that can match the same characters side by side (like .*.* or \\d+\\d*) can backtrack for minutes; put literal text between them or merge them"
                if not _can_be_empty(op2, av2, c):
                    break
        for sub in _children(op, av, c):
            problem = _backtracking_problem(sub, c)
            if problem:
                return problem
    return None


def _quantified_groups(pattern: str) -> list[str]:
    """The bodies of groups followed by *, + or {n,} in the pattern's source. Read from the source,
    not Python's parse tree: Python folds (?:\\w|\\d) into one class, JavaScript keeps the alternation."""
    bodies, stack, i, n = [], [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            start = stack.pop()
            if re.match(r"[*+]|\{\d*,", pattern[i + 1 : i + 4]):
                body = pattern[start + 1 : i]
                if body.startswith("?"):
                    body = re.sub(r"^\?(?:[:=!>]|<[=!]|[aiLmsux-]+:)", "", body)
                bodies.append(body)
        i += 1
    return bodies


def _top_level_branches(body: str) -> list[str]:
    branches, depth, last, i, in_class = [], 0, 0, 0, False
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            branches.append(body[last:i])
            last = i + 1
        i += 1
    return branches + [body[last:]]


def _alternation_problem(pattern: str, c: Any) -> str | None:
    """(a|ab)+, (\\w|\\d)+, (x|)*: a repeated group whose alternatives can match the same start (or
    nothing) tries every split of a run on a near miss: exponential in a browser's regex engine."""
    for body in _quantified_groups(pattern):
        branches = _top_level_branches(body)
        if len(branches) < 2:
            continue
        firsts = []
        for branch in branches:
            try:
                if re.compile(branch).fullmatch("") is not None:
                    return "a repeated group with an alternative that matches nothing, like (a|)+, can backtrack for minutes; make every alternative match text"
                firsts.append(_first_chars(list(_parse_tree(branch)), c))
            except (re.error, RecursionError):
                firsts.append(None)
        for x in range(len(firsts)):
            for y in range(x + 1, len(firsts)):
                if firsts[x] is None or firsts[y] is None or firsts[x] & firsts[y]:
                    return ("a repeated group whose alternatives can start with the same character, like (a|ab)+ or (\\w|\\d)+, "
                            "can backtrack for minutes; make the alternatives start differently or drop the repeat")
    return None


def pattern_backtracking_problem(pattern: str) -> str | None:
    """Why `pattern` could take exponential or high-polynomial time on a near miss, or None."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"pattern is {len(pattern):,} characters, more than {MAX_PATTERN_LENGTH:,}; match one distinctive line"
    if _NESTED_QUANTIFIER.search(pattern):
        # (a+)+ and the like backtrack exponentially on a near miss, in check and in readers' browsers.
        return "a quantified group contains a quantifier, which can backtrack for minutes; quantify one level only"
    c = _constants()
    try:
        tree = _parse_tree(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"pattern does not compile: {exc}"
    return _alternation_problem(pattern, c) or _backtracking_problem(list(tree), c)


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
