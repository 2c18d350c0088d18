"""The field types records are made of: slugs, bounded numbers and the checks the engine shares,
source and URL fields, the `Record` base (frozen, unknown keys forbidden, no control characters,
no FILL IN left over)."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, Mapping

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, HttpUrl, field_validator
from pydantic.json_schema import WithJsonSchema

from generator.units import GIB

# Slugs become directory names under site/: lowercase words joined by '-' or '.', never
# '..', '/', '\\', '%' or NUL, so no slug can climb out of the output directory.
SLUG_PATTERN = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"
_SLUG = re.compile(SLUG_PATTERN)
# Prose names quantities the engine fills in: {{ vllm.max_model_len_that_fits }}.
# A group whose body repeats (+, *, {n,}) and which is itself repeated: the shape of ReDoS.
NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?<!\\)[*+}](?:[^()\\]|\\.)*\)(?:[*+]|\{\d*,)")
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
        # SGLang beside vLLM, one GPU at its default fraction (generator/plan/sglang_pages.py quantities)
        "sglang.release",
        "sglang.mem_fraction_static",
        "sglang.pre_model_load_gb",
        "sglang.kv_budget_gb",
        "sglang.pool_tokens",
        "sglang.min_mem_fraction_static",
        "sglang.context_len",
    }
)

Engine = Literal["vllm", "llamacpp", "ollama", "sglang"]
ENGINES: tuple[str, ...] = ("vllm", "llamacpp", "ollama", "sglang")
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "ollama": "Ollama", "sglang": "SGLang"}  # as readers and the projects write them


# Names the build writes itself, at the top of site/ or inside every folder (index.html and its
# Markdown twin index.md): a slug may not take one, or a page and a file would claim one path.
# See generator/render/site_files.py (publish_files), build/pipeline.py (static/) and write/guard.py
# (SEARCH_FOLDERS: pagefind/, pagefind-pairs/).
RESERVED_SLUGS = frozenset({
    "index.html", "index.htm", "index.md", "404.html", "sitemap.xml", "robots.txt", "llms.txt", "favicon.ico",
    "static", "search", "pagefind", "pagefind-pairs", "about", "gpus", "models", "oom", "engines",
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
MAX_GIB = MAX_BYTES / GIB  # GiB figures in requests (1 PiB)

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
def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is blank (only spaces); write the text")
    problem = _control_character(value)
    if problem:
        raise ValueError(problem)
    return value


# Text an editor writes: at least one visible character (a blank disclosure or title says nothing).
NonEmpty = Annotated[str, Field(min_length=1, max_length=20_000), AfterValidator(not_blank)]
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
