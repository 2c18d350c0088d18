"""SGLang's pair pages: what pages.py asks of an error whose engine is SGLang.

SGLang's numbers are computed beside vLLM's for every checkpoint vLLM serves (pairs.SglangNumbers),
so a pair "runs" under SGLang when it has them, and the error text, title and figures come from
the one-GPU pool at SGLang's default --mem-fraction-static (pairs.SglangOneGpu). The budget behind
them is an estimate (the free memory before loading), which the page's SGLang note states.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from generator.engine import sglang
from generator.engine.pairs import PairNumbers
from generator.launch.commands import sglang_argv
from generator.schema import Model, ModelVariant


def runs(numbers: PairNumbers) -> bool:
    """Whether SGLang has figures for this pair (a checkpoint vLLM serves, a geometry SGLang sizes)."""
    return numbers.sglang is not None and numbers.sglang.one_gpu is not None


def prompt_tokens(numbers: PairNumbers) -> int:
    """The worked prompt of a pool-short page: as long as the pool, so it is under the context length
    (pairs.SGLANG_SHORT_POOL_MARGIN below it) and at or past the longest input the scheduler admits."""
    assert numbers.sglang is not None and numbers.sglang.one_gpu is not None
    return numbers.sglang.one_gpu.tokens


def error_text(scenario: str, numbers: PairNumbers) -> str | None:
    """What SGLang prints for this pair when it reaches the scenario; None when it does not."""
    s = numbers.sglang
    if s is None or s.one_gpu is None or scenario not in numbers.scenarios:
        return None
    if scenario == "sglang-no-kv-pool":
        return s.error
    if scenario == "sglang-pool-short":
        one = s.one_gpu
        assert one.max_req_input_len is not None
        return sglang.input_too_long_text(prompt_tokens(numbers), one.max_req_input_len)
    return None


def title_parts(gpu_label: str, model: Model, variant: ModelVariant, numbers: PairNumbers, memory: str) -> tuple[str, str]:
    """(verdict, description) of an SGLang pair page."""
    s = numbers.sglang
    assert s is not None and s.one_gpu is not None
    one = s.one_gpu
    if one.tokens:
        verdict = f"pool of {one.tokens:,} tokens, inputs up to {one.max_req_input_len:,}"
        desc = (f"{model.name} {variant.name} on {gpu_label} ({memory}): SGLang {s.release} sizes a {one.tokens:,}-token KV pool "
                f"at --mem-fraction-static {one.mem_fraction_static}, below the {s.config_context_len:,}-token context.")
    else:
        verdict = f"no KV pool at --mem-fraction-static {one.mem_fraction_static}"
        desc = (f"{model.name} {variant.name} on {gpu_label} ({memory}): {one.weights_gb:,.2f} GB of weights leave no KV pool "
                f"in SGLang {s.release} below --mem-fraction-static {one.min_mem_fraction_static:.3f}.")
    return verdict, desc


def quantities(numbers: PairNumbers) -> dict[str, str]:
    """Record-prose quantities ({{ sglang.* }}) for SGLang's errors."""
    s = numbers.sglang
    if s is None or s.one_gpu is None:
        return {}
    one = s.one_gpu
    q = {
        "sglang.release": s.release,
        "sglang.mem_fraction_static": str(one.mem_fraction_static),
        "sglang.pre_model_load_gb": f"{s.pre_model_load_gb:,.2f} GB",
        "sglang.kv_budget_gb": f"{one.kv_budget_gb:,.2f} GB",
        "sglang.pool_tokens": f"{one.tokens:,}",
        "sglang.min_mem_fraction_static": f"{one.min_mem_fraction_static:.3f}",
        "sglang.context_len": f"{s.config_context_len:,}",
    }
    return q


def runnable_count(results) -> int:
    """How many catalog pairs SGLang has figures for (the thin-page report's denominator)."""
    return sum(1 for numbers in results.values() if runs(numbers))


def with_levers(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SGLang's command blocks tagged with the lever of the option each was built from, so that on
    SGLang's own error pages the direction check (advice.offered_sections) keeps only the fixes."""
    out = []
    for section in sections:
        numbers = section["numbers"].sglang if section["engine"] == "sglang" else None
        if numbers is None:
            out.append(section)
            continue
        by_argv = {sglang_argv(section["variant"], o.tp, o.mem_fraction_static, o.context_length, o.kv_cache_dtype): o.lever
                   for o in numbers.options}
        blocks = [replace(block, lever=by_argv.get(block.argv, "")) for block in section["blocks"]]
        out.append({**section, "blocks": blocks})
    return out
