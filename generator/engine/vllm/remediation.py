"""Remediation: the flag changes that make a failing start fit, each planned again."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from generator.engine.vllm.budget import ASSUMPTIONS
from generator.engine.vllm.config_facts import ConfigFacts
from generator.engine.vllm.plan import SizeMemo, VllmInputs, auto_fit, facts_for, graph_estimate_subtracted, replace_inputs, resolve_inputs
from generator.engine.vllm.versions import VllmInputError


@dataclass(frozen=True)
class Lever:
    """One change to the `vllm serve` line and what it buys, computed by rerunning the plan."""

    kind: str  # clamp_max_model_len, kv_cache_dtype_fp8, enforce_eager, fp8_and_eager, utilization, tensor_parallel, quantization, gpu
    label: str
    flags: tuple[tuple[str, str], ...]  # vllm serve flags to set, e.g. (("--kv-cache-dtype", "fp8"),)
    fits_requested: bool  # the requested max_model_len starts with this lever
    max_model_len_that_fits: int  # the largest length that starts (<= the model's limit)
    num_blocks: int
    available_kv_cache_bytes: int
    note: str = ""

    def serve_flags(self, base: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """Flags for a `vllm serve` line that starts: the reader's own flags, this lever's, and
        --max-model-len when the lever alone does not reach the requested length."""
        own = {flag for flag, _ in self.flags}
        flags = tuple(f for f in base if f[0] not in own) + self.flags
        if self.kind not in ("clamp_max_model_len", "quantization", "gpu") and not self.fits_requested and self.max_model_len_that_fits > 0:
            flags += (("--max-model-len", str(self.max_model_len_that_fits)),)
        return flags


_LEVER_ORDER = ("clamp_max_model_len", "kv_cache_dtype_fp8", "enforce_eager", "fp8_and_eager", "utilization",
                "tensor_parallel", "quantization", "gpu")


def make_lever(kind: str, label: str, flags: tuple[tuple[str, str], ...], inputs: VllmInputs, changes: Mapping[str, Any],
           requested_len: int, note: str = "", facts: ConfigFacts | None = None, memo: SizeMemo | None = None) -> Lever | None:
    """The lever that applies `changes` to inputs, priced by auto-fit (max_model_len -1); memo as plan_vllm's."""
    changed = replace_inputs(inputs, max_model_len=-1, **changes)
    try:
        # What plan_vllm(changed) would report, without its log lines and result record.
        length, num_blocks, available = auto_fit(changed, ASSUMPTIONS, facts_for(changed, facts), memo)
    except VllmInputError:
        return None
    # A plan that starts checks the length it fitted (plan_vllm's max_model_len).
    return Lever(kind, label, flags, length > 0 and length >= requested_len, length, num_blocks, available, note)


def _next_power_of_two(value: int) -> int:
    return 1 << (value - 1).bit_length()


def vllm_remediation(
    inputs: VllmInputs,
    alternative_weights: Mapping[str, tuple[int, Mapping[str, Any] | None]] | None = None,
    candidate_gpus: Mapping[str, int] | None = None,
    *,
    facts: ConfigFacts | None = None,
    alternative_facts: Mapping[str, ConfigFacts] | None = None,
    memo: SizeMemo | None = None,
) -> tuple[Lever, ...]:
    """Rank the levers for a pair that does not start.

    alternative_weights: variant name -> (checkpoint bytes, its config.json or None to keep
    the current one), e.g. a 4-bit variant. candidate_gpus: GPU name -> total bytes.
    Sorted: levers that start the requested length first, then by the length they allow,
    then by a fixed kind order, then by label. `facts` may carry what earlier plans derived from
    inputs.hf_config; every lever on that config shares them. `alternative_facts` does the same for
    alternative_weights' configs, by the same names. `memo` is plan_vllm's.
    """
    facts = facts_for(inputs, facts)
    resolved = resolve_inputs(inputs, facts)
    geometry, derived, version = resolved.geometry, resolved.derived, resolved.version
    requested_len = derived.default_max_model_len if inputs.max_model_len in (None, -1) else inputs.max_model_len
    levers: list[Lever | None] = []
    base = make_lever("clamp_max_model_len", "", (), inputs, {}, requested_len, facts=facts, memo=memo)
    if base and base.max_model_len_that_fits > 0:
        levers.append(replace(base, label=f"--max-model-len {base.max_model_len_that_fits}",
                              flags=(("--max-model-len", str(base.max_model_len_that_fits)),), fits_requested=False,
                              note="the largest length that starts with everything else unchanged"))
    if inputs.kv_cache_dtype == "auto" and geometry.dtype_bytes > 1:
        levers.append(make_lever("kv_cache_dtype_fp8", "--kv-cache-dtype fp8", (("--kv-cache-dtype", "fp8"),),
                             inputs, {"kv_cache_dtype": "fp8"}, requested_len, "halves bytes per token", facts, memo))
    eager_helps = graph_estimate_subtracted(inputs, version, facts) and inputs.kv_cache_memory_bytes is None
    if eager_helps:
        levers.append(make_lever("enforce_eager", "--enforce-eager", (("--enforce-eager", ""),),
                             inputs, {"enforce_eager": True}, requested_len, "no CUDA graphs: slower decoding", facts, memo))
        if inputs.kv_cache_dtype == "auto" and geometry.dtype_bytes > 1:
            levers.append(make_lever("fp8_and_eager", "--kv-cache-dtype fp8 --enforce-eager",
                                 (("--kv-cache-dtype", "fp8"), ("--enforce-eager", "")),
                                 inputs, {"kv_cache_dtype": "fp8", "enforce_eager": True}, requested_len, facts=facts, memo=memo))
    if inputs.kv_cache_memory_bytes is None and resolved.utilization < 0.95:
        levers.append(make_lever("utilization", "--gpu-memory-utilization 0.95", (("--gpu-memory-utilization", "0.95"),),
                             inputs, {"gpu_memory_utilization": 0.95}, requested_len,
                             "needs that much memory free at startup", facts, memo))
    tp = _next_power_of_two(inputs.tensor_parallel_size + 1)
    if tp * inputs.pipeline_parallel_size <= inputs.gpu_count:
        levers.append(make_lever("tensor_parallel", f"--tensor-parallel-size {tp}", (("--tensor-parallel-size", str(tp)),),
                             inputs, {"tensor_parallel_size": tp}, requested_len, facts=facts, memo=memo))
    for name, (weights, config) in sorted((alternative_weights or {}).items()):
        changes = {"weights_bytes": weights, "hf_config": config if config is not None else inputs.hf_config}
        levers.append(make_lever("quantization", name, (), inputs, changes, requested_len, "a smaller checkpoint",
                             (alternative_facts or {}).get(name, facts), memo))
    for name, total in sorted((candidate_gpus or {}).items()):
        levers.append(make_lever("gpu", name, (), inputs, {"gpu_total_bytes": total, "gpu_name": name}, requested_len, facts=facts, memo=memo))
    found = [lever for lever in levers if lever is not None]
    return tuple(sorted(found, key=lambda l: (not l.fits_requested, -l.max_model_len_that_fits, _LEVER_ORDER.index(l.kind), l.label)))


def serve_command(model: str, flags: tuple[tuple[str, str], ...]) -> str:
    """A plain `vllm serve` line."""
    parts = ["vllm", "serve", model]
    for flag, value in flags:
        parts.append(flag if value == "" else f"{flag} {value}")
    return " ".join(parts)
