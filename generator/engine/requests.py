"""The batch API: one JSON-able request in, one JSON-able answer out, never an exception.

A request is an object whose keys are the long flags of `kvtriage kv <engine>` in
snake_case plus `"engine"`. Catalog lookups come in as plain mappings so this module
never touches YAML or files:

- `models`: model id -> ModelEntry (or a mapping with the same keys): its config.json
  object and, when known, the checkpoint size in bytes.
- `gpus`: GPU id -> GpuEntry (or a mapping): total bytes as CUDA reports it, and a name.

A request that cannot be answered gets `{"error_input": "<why>"}`; where vLLM itself
rejects the setting, the message is vLLM's own text.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping

from generator.engine import sglang
from generator.engine.geometry import GeometryError, geometry_from_hf_config
from generator.engine.llamacpp import answer_llamacpp_request
from generator.engine.ollama import answer_ollama_request
from generator.engine.vllm import (
    VllmInputError,
    VllmInputs,
    VllmResult,
    derive_max_model_len,
    plan_vllm,
    serve_command,
    vllm_remediation,
    weight_shape,
)
from generator.schema import BOUNDS, MAX_GIB, MAX_TOKENS, check_int, check_number
from generator.units import GIB, MIB


@dataclass(frozen=True)
class ModelEntry:
    hf_config: Mapping[str, Any]
    weights_bytes: int | None = None  # checkpoint size of the variant, when known
    name: str = ""
    repo: str = ""  # what `vllm serve` is given, e.g. Qwen/Qwen2.5-Coder-32B-Instruct-AWQ


@dataclass(frozen=True)
class GpuEntry:
    total_bytes: int  # cudaMemGetInfo total, what vLLM multiplies by the utilization
    name: str = ""


class RequestError(ValueError):
    """A request this API cannot answer; the message goes to `error_input`."""


VLLM_KEYS = frozenset({
    "engine", "id", "model", "hf_config", "gpu", "gpu_memory_gib", "gpu_count", "tensor_parallel_size",
    "pipeline_parallel_size", "max_model_len", "kv_cache_dtype", "block_size", "gpu_memory_utilization",
    "kv_cache_memory_bytes", "weights_gib", "max_num_batched_tokens", "max_num_seqs", "enforce_eager",
    "vllm_version", "available_kv_cache_bytes",
})

_HUMAN_INT = re.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT]?)$")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_human_int(value: Any, name: str) -> int:
    """vLLM's human_readable_int: `8k` = 8000, `8K` = 8192; decimals only with lower-case suffixes."""
    if isinstance(value, bool):
        raise RequestError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    match = _HUMAN_INT.match(str(value).strip()) if isinstance(value, str) else None
    if not match:
        raise RequestError(f"{name} must be an integer like 32768, 32k or 32K, got {value!r}")
    number, suffix = match.groups()
    if "." in number and suffix not in _DECIMAL:
        raise RequestError(f"{name} {value!r}: decimals need a lower-case suffix (k, m, g, t)")
    if len(number) > 30:
        raise RequestError(f"{name} {_short(value)} is not a size any GPU has")
    if suffix in _BINARY:
        return int(number) * _BINARY[suffix]
    return int(float(number) * _DECIMAL.get(suffix, 1))


def _max_model_len(value: Any) -> int | None:
    if value is None:
        return None
    if value == "auto" or value == -1:
        return -1
    return check_int(parse_human_int(value, "max_model_len"), "max_model_len", "tokens", RequestError, low=-MAX_TOKENS)


def _positive_float(request: Mapping[str, Any], key: str) -> float | None:
    value = request.get(key)
    if value is None:
        return None
    if key == "gpu_memory_utilization" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)  # vLLM's own check words a value above 1
    return check_number(value, key, 0.0, MAX_GIB, RequestError, wrong=f"{key} must be a positive number, got {value!r}")


# Each integer key's range in generator.schema.BOUNDS, the ranges data/ records are held to.
REQUEST_KIND = {
    "gpu_count": "gpus", "tensor_parallel_size": "gpus", "pipeline_parallel_size": "gpus", "block_size": "count",
    "kv_cache_memory_bytes": "bytes", "available_kv_cache_bytes": "bytes", "max_num_batched_tokens": "tokens",
    "max_num_seqs": "count",
    "page_size": "count", "context_length": "tokens", "max_total_tokens": "tokens", "max_running_requests": "count",  # SGLang
}
# A batch is answered in one process: at most this many requests, each at most this big as JSON.
MAX_REQUESTS = 1_000


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:20] + f"... ({len(text)} characters)"


def _optional_int(request: Mapping[str, Any], key: str, *, human: bool = False) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    if human:
        value = parse_human_int(value, key)
    # Only the upper bound here: the engine words a value below its minimum as vLLM does.
    return check_int(value, key, REQUEST_KIND[key], RequestError, low=-BOUNDS[REQUEST_KIND[key]][1])


def _entry(catalog: Mapping[str, Any] | None, key: str, what: str) -> Any:
    if catalog is None:
        raise RequestError(f"{what} {key!r} cannot be looked up here; pass hf_config / gpu_memory_gib instead")
    try:
        return catalog[key]
    except KeyError:
        raise RequestError(f"unknown {what} {key!r}") from None


def _field(entry: Any, name: str, default: Any = None) -> Any:
    if isinstance(entry, Mapping):
        return entry.get(name, default)
    return getattr(entry, name, default)


def _model_and_weights(request: Mapping[str, Any], models: Mapping[str, Any] | None) -> tuple[Mapping[str, Any], int | None]:
    """The config.json and checkpoint size a request names: a catalog model, or its own hf_config
    (and weights_gib, which overrides either)."""
    if ("model" in request) == ("hf_config" in request):
        raise RequestError("give exactly one of model or hf_config")
    weights_bytes = None
    if "model" in request:
        entry = _entry(models, str(request["model"]), "model")
        hf_config = _field(entry, "hf_config")
        weights_bytes = _field(entry, "weights_bytes")
    else:
        hf_config = request["hf_config"]
    if not isinstance(hf_config, Mapping):
        raise RequestError("hf_config must be the config.json object")
    weights_gib = _positive_float(request, "weights_gib")
    if weights_gib is not None:
        weights_bytes = round(weights_gib * GIB)
    return hf_config, weights_bytes


def vllm_inputs_from_request(request: Mapping[str, Any], models: Mapping[str, Any] | None = None, gpus: Mapping[str, Any] | None = None) -> VllmInputs:
    unknown = sorted(set(request) - VLLM_KEYS)
    if unknown:
        raise RequestError(f"unknown key(s) {', '.join(map(repr, unknown))}; use the long flags of `kvtriage kv vllm` in snake_case")
    hf_config, weights_bytes = _model_and_weights(request, models)

    if "gpu" in request and "gpu_memory_gib" in request:
        raise RequestError("give gpu or gpu_memory_gib, not both")
    total, gpu_name = None, ""
    if "gpu" in request:
        entry = _entry(gpus, str(request["gpu"]), "gpu")
        total, gpu_name = _field(entry, "total_bytes"), str(_field(entry, "name", "") or request["gpu"])
    elif "gpu_memory_gib" in request:
        total = round(_positive_float(request, "gpu_memory_gib") * GIB)

    enforce_eager = request.get("enforce_eager", False)
    if not isinstance(enforce_eager, bool):
        raise RequestError(f"enforce_eager must be true or false, got {enforce_eager!r}")
    kv_cache_dtype = request.get("kv_cache_dtype", "auto")
    if not isinstance(kv_cache_dtype, str):
        raise RequestError(f"kv_cache_dtype must be a string, got {kv_cache_dtype!r}")
    version = request.get("vllm_version")
    return VllmInputs(
        hf_config=hf_config,
        gpu_total_bytes=total,
        gpu_name=gpu_name,
        gpu_count=_optional_int(request, "gpu_count") or max(1, (_optional_int(request, "tensor_parallel_size") or 1) * (_optional_int(request, "pipeline_parallel_size") or 1)),
        tensor_parallel_size=_optional_int(request, "tensor_parallel_size") or 1,
        pipeline_parallel_size=_optional_int(request, "pipeline_parallel_size") or 1,
        max_model_len=_max_model_len(request.get("max_model_len")),
        kv_cache_dtype=kv_cache_dtype,
        block_size=_optional_int(request, "block_size"),
        gpu_memory_utilization=_positive_float(request, "gpu_memory_utilization"),
        kv_cache_memory_bytes=_optional_int(request, "kv_cache_memory_bytes", human=True),
        available_kv_cache_bytes=_optional_int(request, "available_kv_cache_bytes"),
        weights_bytes=weights_bytes,
        max_num_batched_tokens=_optional_int(request, "max_num_batched_tokens", human=True),
        max_num_seqs=_optional_int(request, "max_num_seqs"),
        enforce_eager=enforce_eager,
        vllm_version=None if version is None else str(version),
    )


def vllm_result_dict(result: VllmResult) -> dict[str, Any]:
    """The JSON shape of a vLLM answer (headline fields first, then what pages need)."""
    return {
        "fits": result.fits,
        "num_blocks": result.num_blocks,
        "bytes_per_block": result.bytes_per_block,
        "kv_cache_tokens": result.kv_cache_tokens,
        "max_concurrency": result.max_concurrency,
        "estimated_max_model_len": result.estimated_max_model_len,
        "error": result.error,
        "available_kv_cache_bytes": result.available_kv_cache_bytes,
        "breakdown": asdict(result.breakdown) if result.breakdown else None,
        "vllm_version": result.vllm_version,
        "max_model_len": result.max_model_len,
        "derived_max_model_len": result.derived_max_model_len,
        "kv_cache_dtype": result.kv_cache_dtype,
        "block_size": result.block_size,
        "tensor_parallel_size": result.tensor_parallel_size,
        "pipeline_parallel_size": result.pipeline_parallel_size,
        "gpu_memory_utilization": result.gpu_memory_utilization,
        "max_num_batched_tokens": result.max_num_batched_tokens,
        "max_num_seqs": result.max_num_seqs,
        "enforce_eager": result.enforce_eager,
        "kv_bytes_per_token_per_layer": result.kv_bytes_per_token_per_layer,
        "kv_bytes_per_token": result.kv_bytes_per_token,
        "num_kv_cache_groups": result.num_kv_cache_groups,
        "blocks_per_request": result.blocks_per_request,
        "needed_bytes": result.needed_bytes,
        "check_bytes": result.check_bytes,
        "in_flight_tokens": result.in_flight_tokens,
        "binding_stage": result.binding_stage,
        "log_lines": list(result.log_lines),
        "assumptions": asdict(result.assumptions) if result.assumptions else None,
    }


def answer_vllm_request(request: Mapping[str, Any], models: Mapping[str, Any] | None = None, gpus: Mapping[str, Any] | None = None) -> dict[str, Any]:
    inputs = vllm_inputs_from_request(request, models, gpus)
    result = plan_vllm(inputs)
    answer = vllm_result_dict(result)
    if not result.fits:
        model = str(request.get("model", "MODEL"))
        entry = models.get(model) if models is not None and "model" in request else None
        model = getattr(entry, "repo", "") or model
        base = (("--gpu-memory-utilization", str(inputs.gpu_memory_utilization)),) if inputs.gpu_memory_utilization is not None else ()
        answer["remediation"] = [
            {**asdict(lever), "flags": [list(flag) for flag in lever.flags], "command": serve_command(model, lever.serve_flags(base)) if lever.flags else None}
            for lever in vllm_remediation(inputs)
        ]
    return answer


SGLANG_KEYS = frozenset({
    "engine", "id", "model", "hf_config", "gpu", "gpu_memory_gib", "tensor_parallel_size", "context_length",
    "kv_cache_dtype", "page_size", "mem_fraction_static", "kv_cache_memory_bytes", "weights_gib",
    "max_total_tokens", "swa_full_tokens_ratio", "sglang_version", "max_running_requests",
})


def _weights_bytes(hf_config: Mapping[str, Any]) -> int:
    """Parameters x bits from config.json (the same estimate vLLM pages use when no checkpoint size is on record)."""
    geometry = geometry_from_hf_config(hf_config)
    return weight_shape(hf_config, geometry).total_bytes(geometry.num_layers)


def _sglang_started(result: sglang.SglangResult, context_len: int, tp: int, kv_cache_dtype: str, page_size: int,
                    fraction: float | None, weights_per_rank: float | None) -> dict[str, Any]:
    """The answer for an SGLang start that succeeds: its pool, log lines and the settings it ran with."""
    allocated = [line for line in result.log_lines if "KV Cache is allocated" in line]
    return {
        "starts": True,
        "kv_cache_tokens": result.max_total_num_tokens,
        "kv_bytes_per_token": result.kv_bytes_per_token,
        "log_line": allocated[0] if allocated else None,
        "log_lines": list(result.log_lines),
        "kv_cache_memory_bytes": result.kv_cache_bytes,
        "budget_estimated": result.budget_estimated,
        "swa_kv_cache_tokens": result.swa_max_total_num_tokens,
        "pool_kind": result.kind,
        "k_size_gb": result.k_size_gb,
        "v_size_gb": result.v_size_gb,
        "kv_size_gb": result.kv_size_gb,
        "context_length": context_len,
        "max_req_input_len": result.max_req_input_len,
        "context_fits": result.context_fits,
        "sglang_version": result.release,
        "tensor_parallel_size": tp,
        "kv_cache_dtype": kv_cache_dtype,
        "page_size": page_size,
        "mem_fraction_static": fraction,
        "weights_bytes_per_rank": weights_per_rank,
        "startup_overhead_gb": sglang.STARTUP_OVERHEAD_GB if result.budget_estimated else None,
    }


def answer_sglang_request(request: Mapping[str, Any], models: Mapping[str, Any] | None = None, gpus: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """SGLang's KV pool for one rank (generator/engine/sglang.py, release 0.5.23 by default).

    The budget is `kv_cache_memory_bytes` (one rank's pool) when given; otherwise it is estimated
    from the GPU's total, the weights per rank and `mem_fraction_static` (default: SGLang's own
    default for that GPU), and the answer says `budget_estimated: true`."""
    unknown = sorted(set(request) - SGLANG_KEYS)
    if unknown:
        raise RequestError(f"unknown key(s) {', '.join(map(repr, unknown))}; use the long flags of `kvtriage kv sglang` in snake_case")
    hf_config, weights_bytes = _model_and_weights(request, models)
    if "gpu" in request and "gpu_memory_gib" in request:
        raise RequestError("give gpu or gpu_memory_gib, not both")
    total = None
    if "gpu" in request:
        total = _field(_entry(gpus, str(request["gpu"]), "gpu"), "total_bytes")
    elif "gpu_memory_gib" in request:
        total = round(_positive_float(request, "gpu_memory_gib") * GIB)

    tp = _optional_int(request, "tensor_parallel_size") or 1
    page_size = _optional_int(request, "page_size") or 1
    if tp < 1:
        raise RequestError(f"tensor_parallel_size must be at least 1, got {tp}")
    kv_cache_dtype = request.get("kv_cache_dtype", "auto")
    if not isinstance(kv_cache_dtype, str):
        raise RequestError(f"kv_cache_dtype must be a string, got {kv_cache_dtype!r}")
    release = str(request.get("sglang_version") or sglang.RELEASE)
    ratio = _positive_float(request, "swa_full_tokens_ratio")
    context_len = _optional_int(request, "context_length", human=True)
    if context_len is None:
        context_len = derive_max_model_len(hf_config).value
    elif context_len < 1:
        raise RequestError(f"context_length must be at least 1, got {context_len}")
    budget = _optional_int(request, "kv_cache_memory_bytes", human=True)
    if budget is not None and budget < 0:
        raise RequestError(f"kv_cache_memory_bytes must not be negative, got {budget}")
    fraction = _positive_float(request, "mem_fraction_static")
    max_total_tokens = _optional_int(request, "max_total_tokens")
    # Only SGLang's default fraction reads it (fewer CUDA graphs to capture, a smaller reserve).
    max_running_requests = _optional_int(request, "max_running_requests")
    if max_running_requests is not None and max_running_requests < 1:
        raise RequestError(f"max_running_requests must be at least 1, got {max_running_requests}")

    common = dict(tp=tp, kv_cache_dtype=kv_cache_dtype, page_size=page_size, max_total_tokens=max_total_tokens,
                  context_len=context_len, release=release,
                  swa_full_tokens_ratio=ratio if ratio is not None else sglang.DEFAULT_SWA_FULL_TOKENS_RATIO)
    weights_per_rank = None
    if budget is None:
        if total is None:
            raise RequestError("give kv_cache_memory_bytes, or a gpu / gpu_memory_gib to estimate it from")
        if weights_bytes is None:
            weights_bytes = _weights_bytes(hf_config)
        weights_per_rank = weights_bytes / tp
        if fraction is None:
            mla = geometry_from_hf_config(hf_config).mla is not None
            fraction = sglang.default_mem_fraction_static(total / MIB, tp=tp, mla=mla, max_running_requests=max_running_requests).mem_fraction_static
        common.update(gpu_total_bytes=total, weights_gb=weights_per_rank / sglang.GB, mem_fraction_static=fraction)
    else:
        common.update(kv_cache_bytes=budget, mem_fraction_static=fraction)
    try:
        result = sglang.plan(hf_config, **common)
    except sglang.SglangInputError as exc:
        message = str(exc)
        if not (message.startswith(sglang.NOT_ENOUGH_MEMORY) or message.startswith("Loaded weights leave")):
            raise RequestError(message) from None
        # SGLang itself refuses to start: an answer, not a bad request.
        return {"starts": False, "error": message, "kv_cache_tokens": 0, "sglang_version": release,
                "tensor_parallel_size": tp, "kv_cache_dtype": kv_cache_dtype, "mem_fraction_static": fraction,
                "context_length": context_len, "weights_bytes_per_rank": weights_per_rank,
                "budget_estimated": budget is None}
    return _sglang_started(result, context_len, tp, kv_cache_dtype, page_size, fraction, weights_per_rank)


def _gguf_engine(answer):
    """Adapt llama.cpp's and Ollama's keyword-style answer functions to (request, models, gpus)."""

    def handler(request: Mapping[str, Any], models: Mapping[str, Any] | None, gpus: Mapping[str, Any] | None) -> dict[str, Any]:
        hf_configs = {key: _field(entry, "hf_config") for key, entry in (models or {}).items()}
        gpu_bytes = {key: _field(entry, "total_bytes") for key, entry in (gpus or {}).items()}
        return answer(request, hf_configs=hf_configs, gpu_memory_bytes=gpu_bytes)

    return handler


# One entry per engine; each takes (request, models, gpus) and returns the answer dict.
ENGINES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any] | None], dict[str, Any]]] = {
    "vllm": answer_vllm_request,
    "llamacpp": _gguf_engine(answer_llamacpp_request),
    "ollama": _gguf_engine(answer_ollama_request),
    "sglang": answer_sglang_request,
}


def answer_request(request: Mapping[str, Any], models: Mapping[str, Any] | None = None, gpus: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Answer one request; never raises for bad input."""
    if not isinstance(request, Mapping):
        return {"error_input": "a request must be a JSON object"}
    engine = request.get("engine")
    handler = ENGINES.get(engine) if isinstance(engine, str) else None
    echo = {"id": request["id"]} if "id" in request else {}
    if handler is None:
        return {**echo, "error_input": f"unknown engine {engine!r}; use one of {', '.join(sorted(ENGINES))}"}
    try:
        answer = handler(request, models, gpus)
    except (RequestError, VllmInputError, GeometryError, sglang.SglangInputError) as exc:
        return {**echo, "engine": engine, "error_input": str(exc)}
    return {**echo, "engine": engine, **answer}


def answer_requests(requests: Any, models: Mapping[str, Any] | None = None, gpus: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    if not isinstance(requests, list):
        return [{"error_input": "the input must be a JSON list of requests"}]
    if len(requests) > MAX_REQUESTS:
        return [{"error_input": f"{len(requests):,} requests in one batch, more than {MAX_REQUESTS:,}; split the list"}]
    return [answer_request(request, models, gpus) for request in requests]
