"""The reader's own numbers, recomputed: from what a pasted log prints (the numbers
generator/triage extracts) to the longest `--max-model-len` that starts, the fp8 figure and the
concurrency for vLLM, and to the `-c` that fits for llama.cpp.

Pure: the arithmetic is the engine's (generator/engine/vllm/ plan_vllm with the log's
"Available KV cache memory" as its KV budget), this module only says which inputs came from the
log and which from the model's config.json, and carries the rounding of the printed figure: vLLM
prints GiB with two decimals, so the memory it had is known to within 0.005 GiB either way, and
every figure is given for both ends of that range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from generator.engine.geometry import FULL
from generator.engine.vllm import (
    KvGroup,
    VllmInputError,
    VllmInputs,
    cdiv,
    in_flight_tokens,
    largest_fitting_len,
    parse_version,
    plan_vllm,
    reserves_null_block_in_check,
)

GIB = 1024**3
# vLLM prints GiB with two decimals ("Available KV cache memory: 5.59 GiB").
PRINTED_HALF_STEP_GIB = 0.005
# The block size vLLM uses unless told otherwise (CacheConfig.block_size default).
DEFAULT_BLOCK_SIZE = 16


@dataclass(frozen=True)
class ModelConfig:
    """A catalog model the log's model id resolved to."""

    repo: str
    name: str
    hf_config: Mapping[str, Any]


@dataclass(frozen=True)
class Span:
    """A figure at both ends of the printed value's rounding: low is from the smaller memory."""

    low: float
    high: float

    def text(self, fmt: str = "{:,}") -> str:
        low, high = fmt.format(self.low), fmt.format(self.high)
        return low if low == high else f"{low} to {high}"


@dataclass(frozen=True)
class VllmRecompute:
    available_gib: float  # as printed
    source_line: str  # which printed number it is
    model: str  # the model's name, or "" when the figures come from the error's own numbers
    kv_cache_dtype: str
    max_model_len: int | None  # the reader's, from the log
    longest: Span  # the longest --max-model-len that starts, with the log's cache dtype
    longest_fp8: Span | None  # the same with --kv-cache-dtype fp8 (None when already fp8 or unknown)
    concurrency: Span | None  # requests of the reader's max_model_len the cache holds at once
    from_log: tuple[str, ...]
    modelled: tuple[str, ...]
    command: str  # the reader's command, changed

    def lines(self) -> list[str]:
        out = [f"Recomputed from your log ({self.source_line}: {self.available_gib:.2f} GiB, "
               f"which vLLM rounded: the memory was {self.available_gib - PRINTED_HALF_STEP_GIB:.3f} to "
               f"{self.available_gib + PRINTED_HALF_STEP_GIB:.3f} GiB, so each figure is given for both ends):"]
        out.append(f"  longest --max-model-len that starts: {self.longest.text()} tokens"
                   + (f" (kv cache dtype {self.kv_cache_dtype})" if self.kv_cache_dtype != "auto" else ""))
        if self.longest_fp8 is not None:
            out.append(f"  with --kv-cache-dtype fp8: {self.longest_fp8.text()} tokens")
        if self.concurrency is not None and self.max_model_len:
            out.append(f"  requests of {self.max_model_len:,} tokens held at once: {self.concurrency.text('{:.2f}')}x")
        out.append(f"  try: {self.command}")
        out.append(f"  from your log: {', '.join(self.from_log)}")
        out.append(f"  modelled: {', '.join(self.modelled)}")
        return out


def _available(numbers: Mapping[str, Any]) -> tuple[float, str] | None:
    if numbers.get("available_kv_cache_gib") is None:
        return None
    line = "the error's available KV cache memory" if numbers.get("needed_kv_gib") is not None else "Available KV cache memory"
    return float(numbers["available_kv_cache_gib"]), line


def recompute_vllm(numbers: Mapping[str, Any], release: str | None, model: ModelConfig | None) -> VllmRecompute | None:
    """The figures a vLLM log's printed KV memory gives, or None when it prints none (or neither a
    model this catalog knows nor the needed KV of the error)."""
    found = _available(numbers)
    if found is None:
        return None
    available_gib, source_line = found
    found_config = None
    if model is not None:
        try:
            found_config = _from_config(numbers, release, model, available_gib, source_line)
        except VllmInputError:
            pass
    if numbers.get("derived_max_len"):
        # The error already prints vLLM's own search over the memory it had: that length is exact.
        estimate = int(numbers["derived_max_len"])
        if found_config is None:
            return _from_estimate(numbers, available_gib, source_line)
        return replace(found_config, longest=Span(estimate, estimate),
                       from_log=(*found_config.from_log, f"vLLM's estimated maximum model length {estimate:,}"),
                       command=found_config.command.replace(f"--max-model-len {found_config.longest.low}", f"--max-model-len {estimate}", 1))
    if found_config is not None:
        return found_config
    if numbers.get("needed_kv_gib") is not None and numbers.get("max_model_len"):
        return _from_needed(numbers, release, available_gib, source_line)
    return None


def _version(release: str | None) -> tuple[int, int, int] | None:
    try:
        return parse_version(release) if release else None
    except VllmInputError:
        return None


def _inputs(model: ModelConfig, numbers: Mapping[str, Any], release: str | None, available_bytes: int,
            max_model_len: int | None, kv_cache_dtype: str) -> VllmInputs:
    return VllmInputs(
        hf_config=model.hf_config,
        tensor_parallel_size=int(numbers.get("tensor_parallel_size") or 1),
        max_model_len=max_model_len,
        kv_cache_dtype=kv_cache_dtype,
        block_size=numbers.get("block_size"),
        available_kv_cache_bytes=available_bytes,
        vllm_version=release if _version(release) else None,
    )


def _from_config(numbers: Mapping[str, Any], release: str | None, model: ModelConfig, available_gib: float,
                 source_line: str) -> VllmRecompute:
    dtype = str(numbers.get("kv_cache_dtype") or "auto")
    reader_len = numbers.get("max_model_len")
    # Without a release in the log the engine models its latest one, and so does this adjustment.
    version = _version(release) or parse_version(None)
    ends = []
    for gib in (available_gib - PRINTED_HALF_STEP_GIB, available_gib + PRINTED_HALF_STEP_GIB):
        available = max(int(gib * GIB), 0)
        probe = plan_vllm(_inputs(model, numbers, release, available, None, dtype))
        if source_line != "Available KV cache memory" and reserves_null_block_in_check(version):
            # The error prints the memory after the one block the check sets aside; the log line before it.
            available += probe.bytes_per_block
            probe = plan_vllm(_inputs(model, numbers, release, available, None, dtype))
        fp8 = None
        if dtype in ("auto", "float16", "bfloat16"):
            fp8 = plan_vllm(_inputs(model, numbers, release, available, None, "fp8")).estimated_max_model_len
        concurrency = None
        if reader_len:
            concurrency = plan_vllm(_inputs(model, numbers, release, available, int(reader_len), dtype)).max_concurrency
        ends.append((probe.estimated_max_model_len, fp8, concurrency, probe.block_size))
    (low, fp8_low, conc_low, block), (high, fp8_high, conc_high, _) = ends
    from_log = [f"{source_line} {available_gib:.2f} GiB", f"model {model.repo}"]
    if reader_len:
        from_log.append(f"max_model_len {int(reader_len):,}")
    if numbers.get("kv_cache_dtype"):
        from_log.append(f"kv cache dtype {dtype}")
    if numbers.get("tensor_parallel_size"):
        from_log.append(f"tensor parallel size {numbers['tensor_parallel_size']}")
    if numbers.get("block_size"):
        from_log.append(f"block size {numbers['block_size']}")
    modelled = [f"bytes per token from {model.repo}'s config.json (layers, KV heads, head size, attention windows)"]
    if not numbers.get("block_size"):
        modelled.append(f"block size {block} (vLLM's default)")
    if not numbers.get("kv_cache_dtype"):
        modelled.append("kv cache dtype auto (the model's dtype)")
    longest = Span(low, high)
    command = f"vllm serve {model.repo} --max-model-len {low}"
    if fp8_low is not None and fp8_low > low:
        command += f"   (or --kv-cache-dtype fp8 --max-model-len {fp8_low})"
    return VllmRecompute(
        available_gib=available_gib, source_line=source_line, model=model.name, kv_cache_dtype=dtype,
        max_model_len=int(reader_len) if reader_len else None, longest=longest,
        longest_fp8=Span(fp8_low, fp8_high) if fp8_low is not None else None,
        concurrency=Span(conc_low, conc_high) if conc_low is not None else None,
        from_log=tuple(from_log), modelled=tuple(modelled), command=command,
    )


def _from_needed(numbers: Mapping[str, Any], release: str | None, available_gib: float, source_line: str) -> VllmRecompute:
    """No model config: the error's own "X GiB KV cache is needed" for its max_model_len gives the
    bytes per token, taken as full attention (every token kept in every layer)."""
    reader_len = int(numbers["max_model_len"])
    needed_gib = float(numbers["needed_kv_gib"])
    block = int(numbers.get("block_size") or DEFAULT_BLOCK_SIZE)
    blocks = cdiv(reader_len, block)
    groups = (KvGroup(FULL, None, (0,)),)
    in_flight = in_flight_tokens(1, 1)  # unused by full attention
    spans = []
    for needed_sign, available_sign in ((+1, -1), (-1, +1)):  # low end: most needed, least available
        needed = (needed_gib + needed_sign * PRINTED_HALF_STEP_GIB) * GIB
        available = int((available_gib + available_sign * PRINTED_HALF_STEP_GIB) * GIB)
        bytes_per_block = max(int(needed / blocks), 1)
        spans.append(largest_fitting_len(available, bytes_per_block, groups, reader_len, block, in_flight))
    from_log = [f"{source_line} {available_gib:.2f} GiB", f"KV cache needed {needed_gib:.2f} GiB",
                f"max_model_len {reader_len:,}"]
    modelled = [f"bytes per token = needed / max_model_len, in blocks of {block} tokens, as if every layer kept every token"]
    return VllmRecompute(
        available_gib=available_gib, source_line=source_line, model="", kv_cache_dtype=str(numbers.get("kv_cache_dtype") or "auto"),
        max_model_len=reader_len, longest=Span(spans[0], spans[1]), longest_fp8=None, concurrency=None,
        from_log=tuple(from_log), modelled=tuple(modelled), command=f"--max-model-len {spans[0]}",
    )


def _from_estimate(numbers: Mapping[str, Any], available_gib: float, source_line: str) -> VllmRecompute:
    """The error already prints vLLM's own search over that memory: its estimate is exact."""
    estimate = int(numbers["derived_max_len"])
    reader_len = numbers.get("max_model_len")
    from_log = [f"{source_line} {available_gib:.2f} GiB", f"vLLM's estimated maximum model length {estimate:,}"]
    if reader_len:
        from_log.append(f"max_model_len {int(reader_len):,}")
    return VllmRecompute(
        available_gib=available_gib, source_line=source_line, model="", kv_cache_dtype=str(numbers.get("kv_cache_dtype") or "auto"),
        max_model_len=int(reader_len) if reader_len else None, longest=Span(estimate, estimate), longest_fp8=None,
        concurrency=None, from_log=tuple(from_log),
        modelled=("nothing: vLLM ran the same search over the memory it had, so the rounding of the printed GiB does not matter",),
        command=f"--max-model-len {estimate}",
    )


# --------------------------------------------------------------------------- llama.cpp

MIB = 1024**2


@dataclass(frozen=True)
class LlamacppRecompute:
    n_ctx: int  # the context the log's KV cache was sized for (cells)
    kv_mib: float  # its KV buffer, as printed
    mib_per_1k: float  # KV cache per 1024 tokens of context, from the two
    free_mib: int | None  # the device's free memory, as llama.cpp printed it at load
    model_mib: float | None
    compute_mib: float | None
    fitting_ctx: int | None  # the largest -c whose KV cache fits beside the weights and the compute buffer
    from_log: tuple[str, ...]
    modelled: tuple[str, ...]
    command: str

    def lines(self) -> list[str]:
        out = ["Recomputed from your log (llama.cpp prints MiB with two decimals: each is known to 0.005 MiB):",
               f"  KV cache: {self.kv_mib:.2f} MiB for {self.n_ctx:,} tokens, {self.mib_per_1k:.2f} MiB per 1024 tokens"]
        if self.fitting_ctx is not None:
            out.append(f"  largest -c that fits the device's free memory: {self.fitting_ctx:,}")
            out.append(f"  try: {self.command}")
        out.append(f"  from your log: {', '.join(self.from_log)}")
        out.append(f"  modelled: {', '.join(self.modelled)}")
        return out


def recompute_llamacpp(numbers: Mapping[str, Any], ctx_pad: int) -> LlamacppRecompute | None:
    """What a llama.cpp log's buffers give: the KV cost per token, and when the log also prints the
    device's free memory, the largest -c (a multiple of llama.cpp's context padding) whose KV cache
    fits beside the weights and the compute buffer as printed. None without a KV size and its cells."""
    kv_mib, n_ctx = numbers.get("kv_buffer_mib"), numbers.get("n_ctx")
    if not kv_mib or not n_ctx:
        return None
    bytes_per_cell = kv_mib * MIB / n_ctx
    free, model, compute = numbers.get("device_free_mib"), numbers.get("model_buffer_mib"), numbers.get("compute_buffer_mib")
    from_log = [f"KV buffer {kv_mib:.2f} MiB", f"n_ctx {int(n_ctx):,}"]
    modelled = ["KV bytes per token = KV buffer / n_ctx (the cache grows linearly with -c)"]
    fitting = None
    command = ""
    if numbers.get("second_device"):
        modelled.append(f"no -c that fits: the log spreads the model over several devices ({numbers['second_device']} too)")
    elif free is not None:
        room = free * MIB - (model or 0) * MIB - (compute or 0) * MIB
        fitting = max(math.floor(room / bytes_per_cell) // ctx_pad * ctx_pad, 0)
        from_log.append(f"{free:,} MiB free on the device")
        from_log.extend(f"{name} {value:.2f} MiB" for name, value in (("model buffer", model), ("compute buffer", compute)) if value)
        modelled.append(f"-c rounded down to a multiple of {ctx_pad} (llama.cpp pads the context)")
        modelled.append("the compute buffer as printed (it shrinks a little with a smaller -c), all on that one device")
        command = f"-c {fitting}"
    return LlamacppRecompute(
        n_ctx=int(n_ctx), kv_mib=float(kv_mib), mib_per_1k=bytes_per_cell * 1024 / MIB, free_mib=free,
        model_mib=model, compute_mib=compute, fitting_ctx=fitting, from_log=tuple(from_log), modelled=tuple(modelled),
        command=command,
    )
