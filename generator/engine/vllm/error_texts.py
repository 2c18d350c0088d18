"""vLLM's KV-cache error texts, by release."""

from __future__ import annotations

from dataclasses import dataclass

from generator.engine.vllm.versions import VllmInputError, format_version, uses_v0_engine
from generator.units import GIB

_DOCS = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


@dataclass(frozen=True)
class ErrorTemplate:
    """One wording of a KV-cache startup error, for releases first..last (inclusive)."""

    kind: str  # "too_long" | "no_memory"
    engine: str  # "v0" | "v1"
    first: tuple[int, int, int]
    last: tuple[int, int, int]
    template: str  # str.format fields: max_model_len, max_seq_len, needed, available, estimated_msg


# Dated by the release wheels (the check in vllm/worker/worker.py, then vllm/v1/core/kv_cache_utils.py, then
# kv_cache_planning.py at each release tag); the needed/available fields are preformatted per row.
VLLM_ERROR_TEMPLATES: tuple[ErrorTemplate, ...] = (
    ErrorTemplate("no_memory", "v0", (0, 2, 0), (0, 10, 2),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
    ErrorTemplate("too_long", "v0", (0, 2, 0), (0, 10, 2),
                  "The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("no_memory", "v1", (0, 7, 0), (0, 12, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
    ErrorTemplate("no_memory", "v1", (0, 13, 0), (0, 21, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine." + _DOCS),
    ErrorTemplate("no_memory", "v1", (0, 22, 0), (9, 99, 99),
                  "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name)." + _DOCS),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 7, 0), (0, 8, 2),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GB KV cache is needed, which is larger than the available KV cache memory ({available} GB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 8, 3), (0, 8, 3),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 8, 4), (0, 9, 0),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB).{estimated_msg} Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 9, 1), (0, 12, 99),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 13, 0), (0, 21, 99),
                  "To serve at least one request with the models's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine." + _DOCS),  # noqa: E501
    ErrorTemplate("too_long", "v1", (0, 22, 0), (9, 99, 99),
                  "To serve at least one request with the model's max seq len ({max_model_len}), ({needed} GiB KV cache is needed, which is larger than the available KV cache memory ({available} GiB). {estimated_msg}Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine." + _DOCS),  # noqa: E501
)

CANNOT_AUTO_FIT_TEXT = (
    "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
    "Try increasing `gpu_memory_utilization`."
)


def format_gib(num_bytes: int) -> str:
    """vllm/utils/mem_utils.py format_gib: Python's round to 2 places, printed by str()."""
    return f"{round(num_bytes / GIB, 2)}"


def estimated_text(version: tuple[int, int, int], estimate: int) -> str:
    """The too-long error's {estimated_msg} for a positive estimate (0.8.4-0.9.0 print a truncated sentence)."""
    if (0, 8, 4) <= version <= (0, 9, 0):
        return " Based on the available memory, "
    return f"Based on the available memory, the estimated maximum model length is {estimate}. "


def rounds_gib_like_python(version: tuple[int, int, int]) -> bool:
    # format_gib (Python's round, printed by str()) since 0.14.0; "%.2f" before.
    return version >= (0, 14, 0)


def gib_for(version: tuple[int, int, int], num_bytes: int) -> str:
    return format_gib(num_bytes) if rounds_gib_like_python(version) else f"{num_bytes / GIB:.2f}"


def error_template(version: tuple[int, int, int], kind: str, engine: str | None = None) -> ErrorTemplate:
    engine = engine or ("v0" if uses_v0_engine(version) else "v1")
    for row in VLLM_ERROR_TEMPLATES:
        if row.kind == kind and row.engine == engine and row.first <= version <= row.last:
            return row
    raise VllmInputError(f"vLLM {format_version(version)} has no {engine} engine")


def vllm_error_text(
    version: tuple[int, int, int],
    kind: str,
    *,
    max_model_len: int = 0,
    needed_bytes: int = 0,
    available_bytes: int = 0,
    estimated_max_model_len: int = 0,
    max_seq_len: int = 0,
    engine: str | None = None,
) -> str:
    """The exact ValueError text of that vLLM release. `available_bytes` is what the check
    compares against (the null block already subtracted from 0.29 on)."""
    row = error_template(version, kind, engine)
    estimated_msg = estimated_text(version, estimated_max_model_len) if estimated_max_model_len > 0 else ""
    return row.template.format(
        max_model_len=max_model_len,
        max_seq_len=max_seq_len,
        needed=gib_for(version, needed_bytes),
        available=gib_for(version, available_bytes),
        estimated_msg=estimated_msg,
    )
