"""Batch API: one request (a dict of settings) in, one answer out."""

from __future__ import annotations

from typing import Any, Mapping

from generator.engine.geometry import (
    GeometryError,
    geometry_from_hf_config,
)
from generator.engine.llamacpp.constants import CACHE_TYPES, FLASH_ATTN_AUTO, FLASH_ATTN_OFF, FLASH_ATTN_ON, GGML_BLOCK, LlamaCppError, LlamaCppInputError
from generator.engine.llamacpp.layout import KvLayout, kv_layout_from_geometry, kv_layout_from_gguf_metadata
from generator.engine.llamacpp.remediation import plan_llamacpp_remediation
from generator.engine.llamacpp.settings import ServerSettings
from generator.engine.llamacpp.vram import estimate_llamacpp
from generator.schema import BOUNDS, MAX_COUNT, MAX_GIB, check_int
from generator.units import GIB

# Each integer key's range in generator.schema.BOUNDS, shared with the records and the other engines.
_REQ_KIND = {"ctx_size": "tokens0", "parallel": "count", "ubatch_size": "tokens", "n_gpu_layers": "count0"}


def _req_int(request: Mapping[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    return check_int(value, f"`{key}`", _REQ_KIND[key], LlamaCppInputError, low=-BOUNDS[_REQ_KIND[key]][1] if minimum is None else minimum)


def _req_bool(request: Mapping[str, Any], key: str) -> bool | None:
    value = request.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise LlamaCppInputError(f"`{key}` must be true or false, got {value!r}")


def _req_gib(request: Mapping[str, Any], key: str) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_GIB:
        raise LlamaCppInputError(f"`{key}` must be a positive number of GiB (at most {MAX_GIB:,.0f}), got {value!r}")
    return int(round(value * GIB))


def settings_from_request(request: Mapping[str, Any]) -> ServerSettings:
    kwargs: dict[str, Any] = {}
    ctx = _req_int(request, "ctx_size", minimum=0)
    if ctx is not None:
        kwargs["ctx_size"] = ctx
    for key in ("cache_type_k", "cache_type_v"):
        value = request.get(key)
        if value is not None:
            if not isinstance(value, str) or value not in GGML_BLOCK:
                raise LlamaCppInputError(f"`{key}` {value!r} is not one of {', '.join(CACHE_TYPES)} (llama-server: Unsupported cache type)")
            kwargs[key] = value
    parallel = _req_int(request, "parallel")
    if parallel is not None:
        if parallel == 0 or parallel < -1:
            raise LlamaCppInputError("`parallel` must be at least 1, or -1 for auto (llama-server rejects 0)")
        kwargs["parallel"] = None if parallel == -1 else parallel
    for key in ("kv_unified", "swa_full", "fit"):
        value = _req_bool(request, key)
        if value is not None:
            kwargs[key] = value
    no_kv_offload = _req_bool(request, "no_kv_offload")
    if no_kv_offload is not None:
        kwargs["kv_offload"] = not no_kv_offload
    ubatch = _req_int(request, "ubatch_size", minimum=1)
    if ubatch is not None:
        kwargs["ubatch_size"] = ubatch
    ngl = request.get("n_gpu_layers")
    if ngl is not None:
        if ngl in ("auto", -1):
            kwargs["n_gpu_layers"] = None
        elif ngl == "all":
            kwargs["n_gpu_layers"] = 10**6
        elif isinstance(ngl, int) and not isinstance(ngl, bool) and 0 <= ngl <= MAX_COUNT:
            kwargs["n_gpu_layers"] = ngl
        else:
            raise LlamaCppInputError(f"`n_gpu_layers` must be an integer, 'auto' or 'all', got {ngl!r}")
    fa = request.get("flash_attn")
    if fa is not None:
        if isinstance(fa, bool):
            fa = "on" if fa else "off"
        if not isinstance(fa, str) or fa.lower() not in FLASH_ATTN_ON | FLASH_ATTN_OFF | FLASH_ATTN_AUTO:
            raise LlamaCppInputError(f"`flash_attn` must be on, off or auto, got {fa!r}")
        kwargs["flash_attn"] = fa.lower()
    return ServerSettings(**kwargs)


def layout_from_request(request: Mapping[str, Any], hf_configs: Mapping[str, Mapping[str, Any]] | None = None) -> KvLayout:
    sources = [k for k in ("hf_config", "gguf_metadata") if request.get(k) is not None]
    if len(sources) > 1:
        raise LlamaCppInputError("give either `hf_config` or `gguf_metadata`, not both")
    if sources == ["gguf_metadata"]:
        return kv_layout_from_gguf_metadata(request["gguf_metadata"])
    if sources == ["hf_config"]:
        return kv_layout_from_geometry(geometry_from_hf_config(request["hf_config"]))
    model = request.get("model")
    if isinstance(model, str) and hf_configs and hf_configs.get(model):
        return kv_layout_from_geometry(geometry_from_hf_config(hf_configs[model]))
    if model is not None:
        raise LlamaCppInputError(f"unknown model {model!r}; pass `hf_config` or `gguf_metadata`")
    raise LlamaCppInputError("a llamacpp request needs `hf_config`, `gguf_metadata` or a known `model`")


def answer_llamacpp_request(
    request: Mapping[str, Any],
    *,
    hf_configs: Mapping[str, Mapping[str, Any]] | None = None,
    gpu_memory_bytes: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One `"engine": "llamacpp"` request of the batch API. Never raises.

    `hf_configs` maps model ids to config.json objects, `gpu_memory_bytes` maps GPU ids to the memory
    CUDA reports; both come from the dataset the caller loaded."""
    try:
        if not isinstance(request, Mapping):
            raise LlamaCppInputError("a request must be an object")
        known = {
            "engine", "model", "hf_config", "gguf_metadata", "gpu", "gpu_memory_gib", "weights_gib",
            "ctx_size", "cache_type_k", "cache_type_v", "parallel", "kv_unified", "swa_full", "ubatch_size",
            "n_gpu_layers", "flash_attn", "no_kv_offload", "fit", "id",
        }
        unknown = sorted(set(request) - known)
        if unknown:
            raise LlamaCppInputError(f"unknown key(s) {', '.join(map(repr, unknown))}; llama-server long flags in snake_case")
        layout = layout_from_request(request, hf_configs)
        settings = settings_from_request(request)
        gpu_bytes = _req_gib(request, "gpu_memory_gib")
        gpu = request.get("gpu")
        if gpu is not None:
            if gpu_bytes is not None:
                raise LlamaCppInputError("give either `gpu` or `gpu_memory_gib`, not both")
            if not gpu_memory_bytes or gpu not in gpu_memory_bytes:
                raise LlamaCppInputError(f"unknown gpu {gpu!r}; pass `gpu_memory_gib`")
            gpu_bytes = gpu_memory_bytes[gpu]
        weights = _req_gib(request, "weights_gib") or 0
        model_path = f"{request.get('model') or 'model'}.gguf"
        result = estimate_llamacpp(layout, settings, weights_bytes=weights, gpu_memory_bytes=gpu_bytes, model_path=model_path)
        out = result.to_dict()
        out["engine"] = "llamacpp"
        out["remediation"] = plan_llamacpp_remediation(
            layout, settings, weights_bytes=weights, gpu_memory_bytes=gpu_bytes
        ).to_dict()
        if "id" in request:
            out["id"] = request["id"]
        return out
    except LlamaCppError as exc:
        return {"engine": "llamacpp", "startup_error": str(exc)}
    except (LlamaCppInputError, GeometryError) as exc:
        return {"error_input": str(exc)}
    except Exception as exc:  # the batch API promises an answer per request
        return {"error_input": f"{type(exc).__name__}: {exc}"}
