"""The GPU's memory as one stacked bar, made from the engine's numbers for a pair page.

The template draws it as inline SVG; the calculator (templates/static/kvcalc-ui.js) redraws it
from its own results with the same segments in the same order (VLLM_SEGMENTS, LLAMA_SEGMENTS),
which tests/plan/test_budget_bar.py holds it to. The figures are also given as text beside it."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from generator.engine.pairs import LlamaNumbers, PairNumbers, VllmNumbers
from generator.engine.vllm import (
    default_gpu_memory_utilization,
    parse_version,
    reserves_null_block_in_check,
    subtracts_cudagraph_estimate,
    uses_v0_engine,
)

# viewBox width: positions are in thousandths of the bar.
BAR_WIDTH = 1000

VLLM_SEGMENTS = (
    ("weights", "Weights"),
    ("non_torch", "Non-torch memory"),
    ("activation", "Activation or sampler peak"),
    ("cudagraph", "CUDA graphs"),
    ("kv", "KV cache"),
    ("reserve", "Left out by --gpu-memory-utilization"),
)
LLAMA_SEGMENTS = (
    ("weights", "Weights"),
    ("kv", "KV cache"),
    ("compute", "Compute buffers"),
    ("free", "Free"),
)


def _gib(value: int) -> str:
    return f"{value / 1024**3:.2f} GiB"


def _bar(bar_id: str, title: str, total: int, parts: list[tuple[str, str, int]], over: int) -> dict[str, Any]:
    scale = max(total, sum(size for _, _, size in parts), 1)
    segments, x = [], 0.0
    for key, label, size in parts:
        width = BAR_WIDTH * size / scale
        segments.append({"key": key, "label": label, "bytes": size, "text": _gib(size), "x": round(x, 1), "width": round(width, 1)})
        x += width
    return {"id": bar_id, "title": title, "total_text": _gib(total), "segments": segments,
            "limit_x": round(BAR_WIDTH * total / scale, 1), "over": over, "over_text": _gib(over) if over > 0 else ""}


def vllm_bar(v: VllmNumbers, memory_bytes: int) -> dict[str, Any]:
    """One GPU under vLLM: what the budget subtracts, what is left for the KV cache, and what the
    utilization keeps back. When the subtractions exceed the request, the KV cache is empty and
    the bar runs past the GPU's memory by what is missing."""
    used = {"weights": v.weights_bytes, "non_torch": v.non_torch_bytes, "activation": v.activation_bytes,
            "cudagraph": v.cudagraph_bytes, "kv": max(v.available_bytes, 0), "reserve": max(memory_bytes - v.requested_bytes, 0)}
    parts = [(key, label, used[key]) for key, label in VLLM_SEGMENTS]
    over = max(sum(size for _, _, size in parts) - memory_bytes, 0)
    return _bar("bar-vllm", f"vLLM {v.version} memory budget on one GPU of {_gib(memory_bytes)}", memory_bytes, parts, over)


def llama_bar(l: LlamaNumbers, memory_bytes: int) -> dict[str, Any]:  # noqa: E741 - the templates' name
    used = {"weights": l.weights_bytes, "kv": l.kv_bytes, "compute": l.compute_buffer_bytes,
            "free": max(memory_bytes - l.weights_bytes - l.kv_bytes - l.compute_buffer_bytes, 0)}
    parts = [(key, label, used[key]) for key, label in LLAMA_SEGMENTS]
    over = max(l.weights_bytes + l.kv_bytes + l.compute_buffer_bytes - memory_bytes, 0)
    return _bar("bar-llamacpp", f"llama-server -c {l.ctx_size} on a GPU of {_gib(memory_bytes)}", memory_bytes, parts, over)


def budget_bars(numbers: PairNumbers, memory_bytes: int) -> dict[str, Any]:
    return {"vllm": vllm_bar(numbers.vllm, memory_bytes) if numbers.vllm is not None else None,
            "llamacpp": llama_bar(numbers.llamacpp, memory_bytes) if numbers.llamacpp is not None else None}


# --------------------------------------------------------------------------- for which releases the vLLM figures hold


def _rules(version: tuple[int, int, int]) -> tuple[Any, ...]:
    """The engine's release rules that move the budget or the check."""
    return (uses_v0_engine(version), default_gpu_memory_utilization(version), subtracts_cudagraph_estimate(version, False),
            reserves_null_block_in_check(version))


def vllm_release_span(version_text: str) -> dict[str, str]:
    """The earliest minor release whose budget rules are the engine's release's own, and the last
    V0 release: the figures hold from the first to the engine's release; V0 logs differ."""
    return dict(_release_span(version_text))  # every vLLM pair page asks, for one of a few releases


@lru_cache(maxsize=64)
def _release_span(version_text: str) -> dict[str, str]:
    version = parse_version(version_text)
    own = _rules(version)
    first = version[:2]
    for minor in range(version[1] - 1, -1, -1):
        if _rules((version[0], minor, 0)) != own:
            break
        first = (version[0], minor)
    v0_minors = [minor for minor in range(0, version[1] + 1) if uses_v0_engine((version[0], minor, 0))]
    return {"first": f"{first[0]}.{first[1]}", "last": version_text, "v0_last": f"{version[0]}.{max(v0_minors)}" if v0_minors else ""}
