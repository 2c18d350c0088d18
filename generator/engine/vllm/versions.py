"""vLLM releases as version tuples, and the defaults and rules that change with the release."""

from __future__ import annotations

import re

from generator.engine.vllm_releases import (
    subtracts_cudagraph_estimate_for,
)

LATEST_VERSION = (0, 33, 0)
DEFAULT_BLOCK_SIZE = 16  # vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE (FlashAttention/Triton keep it)


class VllmInputError(ValueError):
    """A setting vLLM itself would reject, or one this engine cannot model."""


# A catalog plans every pair ~16 times and each plan reads the version three times; the regex was
# a visible share of that. Only strings are remembered (other values go through str() and may be
# unhashable), and only the first few dozen, so the memo stays small whatever callers pass.
_PARSED_VERSIONS: dict[str, tuple[int, int, int]] = {}
_PARSED_VERSIONS_MAX = 64


def parse_version(text: str | None) -> tuple[int, int, int]:
    if text is None:
        return LATEST_VERSION
    if type(text) is str:
        known = _PARSED_VERSIONS.get(text)
        if known is not None:
            return known
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-].*)?", str(text).strip())
    if not match:
        raise VllmInputError(f"vllm_version {text!r} is not a version like 0.33.0")
    version = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    if type(text) is str and len(_PARSED_VERSIONS) < _PARSED_VERSIONS_MAX:
        _PARSED_VERSIONS[text] = version
    return version


def format_version(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


def uses_v0_engine(version: tuple[int, int, int]) -> bool:
    # V1 became the default in 0.8.0 (VLLM_USE_V1=1); V0 was removed in 0.11.0.
    return version < (0, 8, 0)


def default_gpu_memory_utilization(version: tuple[int, int, int]) -> float:
    # vllm/config/cache.py: Field(default=0.92) since 0.20.0; 0.90 before.
    return 0.92 if version >= (0, 20, 0) else 0.90


def subtracts_cudagraph_estimate(version: tuple[int, int, int], enforce_eager: bool, gpu_name: str = "",
                                 estimate_env: bool | None = None) -> bool:
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1" from 0.20.0 (opt-in in 0.18/0.19);
    # ROCm gets no estimate before 0.26 (vllm_releases.CUDAGRAPH_ESTIMATE).
    return subtracts_cudagraph_estimate_for(version, enforce_eager, gpu_name, estimate_env)


def reserves_null_block_in_check(version: tuple[int, int, int]) -> bool:
    # get_kv_cache_configs subtracts one block before the fit check since 0.29.0.
    return version >= (0, 29, 0)


def has_hybrid_allocator(version: tuple[int, int, int]) -> bool:
    # Mamba / linear-attention state joined the KV cache's allocator in 0.10.0 (V0 kept a MambaCacheManager).
    return version >= (0, 10, 0)


def hybrid_too_old_text(version: tuple[int, int, int]) -> str:
    return (f"vLLM {format_version(version)} keeps Mamba / linear-attention state outside the KV cache "
            "(V0 MambaCacheManager); this calculator models the hybrid allocator of 0.10 and later")


def prints_available_kv_line(version: tuple[int, int, int]) -> bool:
    # gpu_worker.py logs "Available KV cache memory" from 0.10.0.
    return version >= (0, 10, 0)


def prints_kv_size_on_one_line(version: tuple[int, int, int]) -> bool:
    # "GPU KV cache size" and "Maximum concurrency" share one line from 0.30.0.
    return version >= (0, 30, 0)


def kv_tokens_rule(version: tuple[int, int, int]) -> str:
    """How the release counts "GPU KV cache size: N tokens": per_request (get_kv_cache_capacity, 0.21+),
    per_group (blocks // groups x block size, 0.10+) or blocks (blocks x block size)."""
    if version >= (0, 21, 0):
        return "per_request"
    return "per_group" if version >= (0, 10, 0) else "blocks"
