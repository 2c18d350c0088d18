"""Ollama: which context, how many slots, which KV type and flash-attention mode a load gets, what
Ollama predicts, and what llama-server then really allocates (Ollama >= 0.30 runs llama-server).

Facts are from the Ollama source at https://github.com/ollama/ollama/tree/v0.33.0-rc2 (fb30760): envconfig/config.go,
server/routes.go, server/sched.go, llm/llama_server.go. The KV bytes come from generator.engine.llamacpp.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Mapping, Sequence

from generator.engine.geometry import GeometryError
from generator.engine.llamacpp import (
    FIT_TARGET_BYTES,
    KvLayout,
    LlamaCppError,
    LlamaCppInputError,
    LlamaCppResult,
    ServerSettings,
    estimate_llamacpp,
    gpu_use,
    layout_from_request,
    plan_kv,
)
from generator.schema import MAX_GIB, check_int
from generator.units import GIB, MIB

OLLAMA_VERSION = (0, 33, 0)

# server/sched.go: NumParallel is forced to 1 for these architectures (and for embedding models).
SINGLE_SLOT_ARCHS = frozenset(
    {"mllama", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen3next", "lfm2", "lfm2moe"}
)
SINGLE_SLOT_ARCH_PREFIXES = ("nemotron_h",)

# envconfig Bool readers use strconv.ParseBool.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# Automatic-context retry after a load OOM: reduceAutoNumCtxForLoadOOM (server/sched.go).
_AUTO_CTX_STEPS = {262144: 32768, 32768: 4096}


class OllamaInputError(ValueError):
    """The request cannot describe an Ollama load."""


def parse_version(text: str) -> tuple[int, int, int]:
    cleaned = text.strip().lstrip("v").split("-")[0].split("+")[0]
    parts = cleaned.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise OllamaInputError(f"version {text!r} is not like 0.33.0")
    numbers = [int(p) for p in parts] + [0] * (3 - len(parts))
    return numbers[0], numbers[1], numbers[2]


# ---------------------------------------------------------------------------------------------
# Server environment


@dataclass(frozen=True)
class OllamaEnv:
    """The memory-relevant variables the SERVER reads (envconfig/config.go). `ollama run` reads none."""

    context_length: int = 0  # OLLAMA_CONTEXT_LENGTH; 0 = VRAM tier
    num_parallel: int = 1  # OLLAMA_NUM_PARALLEL
    kv_cache_type: str = ""  # OLLAMA_KV_CACHE_TYPE; empty = llama-server default f16
    flash_attention: bool | None = None  # OLLAMA_FLASH_ATTENTION; None = unset (auto when supported)
    gpu_overhead_bytes: int = 0  # OLLAMA_GPU_OVERHEAD
    fit: bool = True  # LLAMA_ARG_FIT passed through to llama-server
    fit_target_bytes: int = FIT_TARGET_BYTES  # LLAMA_ARG_FIT_TARGET (MiB) passed through

    @classmethod
    def from_mapping(cls, env: Mapping[str, Any]) -> OllamaEnv:
        def uint(name: str, default: int) -> int:
            value = env.get(name)
            if value is None or value == "":
                return default
            text = str(value).strip()
            if not text.isdigit():
                raise OllamaInputError(f"{name}={value!r} is not an unsigned integer")
            return int(text)

        flash = env.get("OLLAMA_FLASH_ATTENTION")
        flash_value: bool | None = None
        if flash is not None and flash != "":
            text = str(flash).strip() if not isinstance(flash, bool) else ("1" if flash else "0")
            if text in _TRUE:
                flash_value = True
            elif text in _FALSE:
                flash_value = False
            else:
                raise OllamaInputError(f"OLLAMA_FLASH_ATTENTION={flash!r} is not a boolean (1/true or 0/false)")
        fit = env.get("LLAMA_ARG_FIT")
        fit_value = True
        if fit is not None and fit != "":
            text = str(fit).strip().lower()
            if text not in ("on", "off"):
                raise OllamaInputError(f"LLAMA_ARG_FIT={fit!r} must be on or off")
            fit_value = text == "on"
        target = env.get("LLAMA_ARG_FIT_TARGET")
        target_bytes = FIT_TARGET_BYTES
        if target is not None and target != "":
            first = str(target).split(",")[0].strip()
            if not first.isdigit():
                raise OllamaInputError(f"LLAMA_ARG_FIT_TARGET={target!r} must be MiB per device")
            target_bytes = int(first) * MIB
        return cls(
            context_length=uint("OLLAMA_CONTEXT_LENGTH", 0),
            num_parallel=uint("OLLAMA_NUM_PARALLEL", 1),
            kv_cache_type=str(env.get("OLLAMA_KV_CACHE_TYPE") or "").lower(),
            flash_attention=flash_value,
            gpu_overhead_bytes=uint("OLLAMA_GPU_OVERHEAD", 0),
            fit=fit_value,
            fit_target_bytes=target_bytes,
        )


# ---------------------------------------------------------------------------------------------
# Context length


def vram_tier_num_ctx(total_vram_bytes: int) -> int:
    """server/routes.go Serve: totalVRAM = sum(gpu.TotalMemory - OLLAMA_GPU_OVERHEAD)."""
    if total_vram_bytes >= 47 * GIB:
        return 262144
    if total_vram_bytes >= 23 * GIB:
        return 32768
    return 4096


def default_num_ctx(version: tuple[int, int, int], total_vram_bytes: int | None) -> int:
    """The default when nothing sets num_ctx: 2048 before v0.6.7 (num_ctx default before v0.5.13,
    OLLAMA_CONTEXT_LENGTH default in v0.5.13), 4096 from v0.6.7, VRAM tiers from v0.15.5."""
    if version < (0, 6, 7):
        return 2048
    if version < (0, 15, 5):
        return 4096
    if total_vram_bytes is None:
        raise OllamaInputError("from Ollama 0.15.5 the default context depends on total VRAM; give the GPU")
    return vram_tier_num_ctx(total_vram_bytes)


@dataclass(frozen=True)
class NumCtx:
    value: int  # per slot, as `ollama ps` CONTEXT shows
    source: str  # request | modelfile | OLLAMA_CONTEXT_LENGTH | default
    automatic: bool  # chosen by Ollama (usesAutomaticNumCtx): eligible for the OOM retry
    requested: int
    notes: tuple[str, ...]


def resolve_num_ctx(
    *,
    version: tuple[int, int, int] = OLLAMA_VERSION,
    request_num_ctx: int | None = None,
    modelfile_num_ctx: int | None = None,
    env: OllamaEnv = OllamaEnv(),
    total_vram_bytes: int | None = None,
    n_ctx_train: int | None = None,
    vision: bool = False,
) -> NumCtx:
    """Request option > Modelfile PARAMETER num_ctx > OLLAMA_CONTEXT_LENGTH > default
    (modelOptionsWithEmbeddingBatchDefault in server/routes.go), then the clamps."""
    notes = []
    if request_num_ctx is not None:
        value, source = request_num_ctx, "request"
    elif modelfile_num_ctx is not None:
        value, source = modelfile_num_ctx, "modelfile"
    elif env.context_length:
        value, source = env.context_length, "OLLAMA_CONTEXT_LENGTH"
    else:
        value, source = default_num_ctx(version, total_vram_bytes), "default"
    requested = value
    if value < 4:
        value = 4
        notes.append("num_ctx below 4 is raised to 4 (server/sched.go getRunner)")
    if vision and value < 2048:
        value = 2048
        notes.append("vision models get at least 2048 (server/sched.go getRunner)")
    if n_ctx_train and value > n_ctx_train:
        notes.append(f"requested context size too large for model: lowered from {value} to n_ctx_train {n_ctx_train} (llm/server.go)")
        value = n_ctx_train
    return NumCtx(value, source, source == "default", requested, tuple(notes))


def next_automatic_num_ctx(num_ctx: int) -> int | None:
    """The one retry after an OOM at an automatic context: 262144 -> 32768 -> 4096."""
    return _AUTO_CTX_STEPS.get(num_ctx)


# ---------------------------------------------------------------------------------------------
# Slots, KV type, flash attention, launch


def effective_num_parallel(env: OllamaEnv, *, arch: str = "", embedding: bool = False) -> int:
    """numParallel := max(OLLAMA_NUM_PARALLEL, 1), forced to 1 for embedding models and some archs."""
    if embedding or arch in SINGLE_SLOT_ARCHS or arch.startswith(SINGLE_SLOT_ARCH_PREFIXES):
        return 1
    return max(env.num_parallel, 1)


def flash_attention_supported(library: str, compute_capability: str | None = None, driver_major: int | None = None) -> bool:
    """ml.FlashAttentionSupported: CUDA needs compute capability >= 6.0 (Jetson Xavier 7.2 excluded)
    and driver >= 7; Metal, ROCm, Vulkan and CPU count as supported."""
    lib = library.lower()
    if lib != "cuda":
        return True
    if compute_capability is None:
        return True
    major, _, minor = compute_capability.partition(".")
    cc = (int(major), int(minor or 0))
    if cc < (6, 0) or cc == (7, 2):
        return False
    return driver_major is None or driver_major >= 7


def llama_server_flash_attn(env: OllamaEnv, fa_supported: bool) -> str:
    """LlamaServerFlashAttention (llm/llama_server.go)."""
    if env.flash_attention is True:
        return "on"
    if env.flash_attention is False:
        return "off"
    return "auto" if fa_supported else "off"


def llama_server_args(num_ctx: int, num_parallel: int, kv_cache_type: str, flash_attn: str, num_gpu: int | None) -> tuple[str, ...]:
    """The memory-relevant part of startLlamaServer's command line. Ollama never passes --kv-unified."""
    args = ["-c", str(num_ctx * num_parallel), "-np", str(num_parallel)]
    if kv_cache_type:
        args += ["--cache-type-k", kv_cache_type, "--cache-type-v", kv_cache_type]
    args += ["--flash-attn", flash_attn]
    if num_gpu is not None and num_gpu >= 0:
        args += ["-ngl", str(num_gpu)]
    return tuple(args)


def predict_server_vram(layout: KvLayout, weights_bytes: int, num_ctx: int, num_parallel: int) -> int:
    """PredictServerVRAM (llm/llama_server.go): file size + an f16 KV guess that ignores the KV type,
    SWA, MLA and the compute graph. kvHeads = HeadCountKVMin, headDim = embedding_length / head_count_max."""
    kv_heads = min((layer.k_width // layer.head_k for layer in layout.kv_layers if layer.head_k), default=0)
    head_dim = layout.n_embd // layout.n_head if layout.n_head else 0
    ctx = min(num_ctx, layout.n_ctx_train) * num_parallel
    return weights_bytes + 2 * layout.n_layer * kv_heads * head_dim * ctx * 2


def processor_text(total_bytes: int, gpu_bytes: int) -> str:
    """`ollama ps` PROCESSOR column from the share of the loaded size that sits in VRAM."""
    if total_bytes <= 0 or gpu_bytes >= total_bytes:
        return "100% GPU"
    if gpu_bytes <= 0:
        return "100% CPU"
    cpu = round((total_bytes - gpu_bytes) / total_bytes * 100)
    return f"{cpu}%/{100 - cpu}% CPU/GPU"


# ---------------------------------------------------------------------------------------------
# Error texts by version: llm/llama_server.go, llm/server.go and server/sched.go at v0.33.0-rc2; llm/server.go
# from v0.12.11; llm/memory.go's offload log before (https://github.com/ollama/ollama at those tags).


def error_texts(version: tuple[int, int, int]) -> dict[str, str]:
    """What a user of that version sees when memory runs out; keys name the situation."""
    if version >= (0, 30, 0):
        return {
            "load_oom": "llama-server process has terminated: exit status 1: {captured}",
            "startup_oom": "llama-server reported out-of-memory during startup: {detail}",
            "timeout": "timed out waiting for llama-server to start - {detail}",
            "runner_stopped": "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details",
            "load_required_full": "unable to load full model on GPU",
            "retry_auto_ctx_log": "llama-server load failed; reducing automatic context and retrying once",
            "retry_evict_log": "llama-server load failed; evicting all other models and retrying once",
            "system_memory_log": "model is too large for system memory",
        }
    if version >= (0, 12, 11):
        return {
            "system_memory": "model requires more system memory ({required}) than is available ({available})",
            "system_memory_full": "model requires more system memory than is currently available",
            "layout": "memory layout cannot be allocated",
            "layout_num_gpu": "memory layout cannot be allocated with num_gpu = {num_gpu}",
            "runner_stopped": "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details",
        }
    return {
        "offload_log": "offload to cuda" if version < (0, 6, 0) else "offload",
        "offload_attributes": "layers.requested layers.model layers.offload layers.split memory.available memory.gpu_overhead "
        "memory.required.full memory.required.partial memory.required.kv memory.required.allocations "
        "memory.weights.total memory.weights.repeating memory.weights.nonrepeating memory.graph.full memory.graph.partial",
        "runner_stopped": "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details",
    }


# ---------------------------------------------------------------------------------------------
# The whole load


@dataclass(frozen=True)
class OllamaResult:
    version: str
    num_ctx: int
    num_ctx_source: str
    num_ctx_automatic: bool
    num_parallel: int
    kv_cache_type: str  # what llama-server gets; "f16" when OLLAMA_KV_CACHE_TYPE is empty
    flash_attn: str  # the --flash-attn value Ollama passes
    llama_server_args: tuple[str, ...]
    predicted_vram_bytes: int  # PredictServerVRAM (always f16)
    eviction_log: str | None
    kv_bytes: int  # what llama-server really allocates
    kv_cells: int
    n_ctx: int
    weights_bytes: int
    compute_buffer_bytes: int
    gpu_budget_bytes: int | None
    fits: bool | None
    gpu_layers: int | None  # layers llama-server's fit puts on the GPU
    processor: str | None
    error: str | None  # the text the user sees, when the load fails
    error_lines: tuple[str, ...]
    retry: tuple[str, ...]
    notes: tuple[str, ...]
    llama_server_log: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("llama_server_args", "error_lines", "retry", "notes", "llama_server_log"):
            out[key] = list(out[key])
        return out


def _eviction_log(predicted: int, gpu_free_bytes: int | None) -> str | None:
    """The scheduler's line about other loaded models, when free memory is known."""
    if gpu_free_bytes is None:
        return None
    if predicted > gpu_free_bytes * 80 // 100:
        return "llama-server model predicted to exceed available memory, evicting"
    return "llama-server model fits alongside existing models"


def _load_failure(v: tuple[int, int, int], oom_lines: Sequence[str], pinned: bool, num_gpu: int | None) -> tuple[str, tuple[str, ...]]:
    """(Ollama's error, the llama-server lines it captured) for a load that does not fit."""
    captured = [line for line in oom_lines if "cudaMalloc failed" in line or line.startswith("llama_init_from_model:")]
    error_lines = tuple(
        "cudaMalloc failed: out of memory" if "cudaMalloc failed" in line else line for line in captured
    )
    texts = error_texts(v)
    if "load_oom" in texts:
        error = texts["load_oom"].format(captured="\n".join(error_lines))
    elif pinned and "layout_num_gpu" in texts:
        error = texts["layout_num_gpu"].format(num_gpu=num_gpu)
    else:
        error = texts["runner_stopped"]
    return error, error_lines


def _automatic_retry(layout: KvLayout, settings: ServerSettings, num_ctx: int, n_parallel: int, weights_bytes: int,
                     budget_gpu: int | None, env: OllamaEnv) -> list[str]:
    """The one retry at a smaller automatic context after a failed load, as Ollama logs it."""
    smaller = next_automatic_num_ctx(num_ctx)
    if not smaller:
        return []
    again = estimate_llamacpp(
        layout, replace(settings, ctx_size=smaller * n_parallel), weights_bytes=weights_bytes,
        gpu_memory_bytes=budget_gpu, headroom_bytes=env.fit_target_bytes,
    )
    return [f"llama-server load failed; reducing automatic context and retrying once (old_num_ctx={num_ctx} new_num_ctx={smaller})",
            f"retry at num_ctx {smaller}: " + ("loads" if again.fits else "fails again")]


def _placement(layout: KvLayout, settings: ServerSettings, result: LlamaCppResult, v: tuple[int, int, int], ctx: NumCtx,
               num_gpu: int | None, n_parallel: int, weights_bytes: int, budget_gpu: int | None, env: OllamaEnv,
               notes: list[str]) -> tuple[int | None, str | None, str | None, tuple[str, ...], list[str]]:
    """(layers on the GPU, `ollama ps` processor text, error, captured error lines, retry lines) once
    llama-server's fit is known; notes gains what the reader should know about it."""
    gpu_layers = processor = error = None
    error_lines: tuple[str, ...] = ()
    retry: list[str] = []
    if result.fits is None:
        return gpu_layers, processor, error, error_lines, retry
    pinned = num_gpu is not None and num_gpu >= 0
    if result.fits:
        gpu_layers = layout.n_layer + 1 if not pinned else min(num_gpu, layout.n_layer + 1)
    elif pinned or not env.fit:
        # llama-server cannot move layers: the load fails, and an automatic context retries once.
        error, error_lines = _load_failure(v, result.oom_lines, pinned, num_gpu)
        if ctx.automatic and v >= (0, 30, 0):
            retry = _automatic_retry(layout, settings, ctx.value, n_parallel, weights_bytes, budget_gpu, env)
    else:
        # Ollama always passes -c, so fit keeps the context and offloads fewer layers.
        gpu_layers = result.gpu_layers_that_fit
        notes.append("Ollama passes -c, so llama-server --fit keeps the context and moves layers to the CPU")
    if gpu_layers is not None:
        on_gpu = _gpu_bytes_at(layout, settings, weights_bytes, gpu_layers)
        processor = processor_text(weights_bytes + result.kv_bytes + result.compute_buffer_bytes, on_gpu)
    return gpu_layers, processor, error, error_lines, retry


def estimate_ollama(
    layout: KvLayout,
    *,
    version: str = "0.33.0",
    env: OllamaEnv = OllamaEnv(),
    request_num_ctx: int | None = None,
    modelfile_num_ctx: int | None = None,
    num_gpu: int | None = None,
    weights_bytes: int = 0,
    gpu_total_bytes: int | None = None,
    gpu_free_bytes: int | None = None,
    gpu_library: str = "cuda",
    compute_capability: str | None = None,
    vision: bool = False,
    embedding: bool = False,
    num_batch: int = 512,
    model_name: str = "model",
) -> OllamaResult:
    v = parse_version(version)
    notes: list[str] = []
    total_vram = None if gpu_total_bytes is None else max(gpu_total_bytes - env.gpu_overhead_bytes, 0)
    ctx = resolve_num_ctx(
        version=v, request_num_ctx=request_num_ctx, modelfile_num_ctx=modelfile_num_ctx, env=env,
        total_vram_bytes=total_vram, n_ctx_train=layout.n_ctx_train, vision=vision,
    )
    notes.extend(ctx.notes)
    n_parallel = effective_num_parallel(env, arch=layout.arch, embedding=embedding)
    if n_parallel != max(env.num_parallel, 1):
        notes.append(f"OLLAMA_NUM_PARALLEL forced to 1 for {'embedding models' if embedding else layout.arch}")
    kv_type = env.kv_cache_type  # no validation in Go: llama-server itself rejects a bad value
    fa_supported = flash_attention_supported(gpu_library, compute_capability)
    flash = llama_server_flash_attn(env, fa_supported)
    if v < (0, 30, 0):
        notes.append(
            "before v0.30.0 Ollama ran its own runner: set OLLAMA_FLASH_ATTENTION=1 with OLLAMA_KV_CACHE_TYPE; "
            "the llama-server flag resolution shown here is the v0.30+ behaviour"
        )
    args = llama_server_args(ctx.value, n_parallel, kv_type, flash, num_gpu)
    settings = ServerSettings(
        ctx_size=ctx.value * n_parallel, cache_type_k=kv_type or "f16", cache_type_v=kv_type or "f16", parallel=n_parallel,
        kv_unified=False, ubatch_size=num_batch, n_gpu_layers=num_gpu if num_gpu is not None and num_gpu >= 0 else None,
        flash_attn=flash, fit=env.fit, fa_supported=fa_supported,
    )
    predicted = predict_server_vram(layout, weights_bytes, ctx.value, n_parallel)
    eviction = _eviction_log(predicted, gpu_free_bytes)
    budget_gpu = gpu_free_bytes if gpu_free_bytes is not None else gpu_total_bytes
    if budget_gpu is not None:
        budget_gpu = max(budget_gpu - env.gpu_overhead_bytes, 0)
    try:
        result = estimate_llamacpp(
            layout, settings, weights_bytes=weights_bytes, gpu_memory_bytes=budget_gpu,
            headroom_bytes=env.fit_target_bytes, model_path=f"/root/.ollama/models/blobs/sha256-<{model_name}>",
        )
    except LlamaCppError as exc:
        captured = str(exc)
        return OllamaResult(
            version=version, num_ctx=ctx.value, num_ctx_source=ctx.source, num_ctx_automatic=ctx.automatic,
            num_parallel=n_parallel, kv_cache_type=kv_type or "f16", flash_attn=flash, llama_server_args=args,
            predicted_vram_bytes=predicted, eviction_log=eviction, kv_bytes=0, kv_cells=0, n_ctx=0,
            weights_bytes=weights_bytes, compute_buffer_bytes=0, gpu_budget_bytes=budget_gpu, fits=None,
            gpu_layers=None, processor=None,
            error=error_texts(v).get("load_oom", "{captured}").format(captured=captured),
            error_lines=(captured,), retry=(), notes=tuple(notes), llama_server_log=(),
        )

    gpu_layers, processor, error, error_lines, retry = _placement(
        layout, settings, result, v, ctx, num_gpu, n_parallel, weights_bytes, budget_gpu, env, notes)
    if kv_type and kv_type not in ("f16", "q8_0", "q4_0"):
        notes.append(f"{kv_type} works (llama-server accepts it) but docs/faq.mdx documents only f16, q8_0 and q4_0")
    return OllamaResult(
        version=version, num_ctx=ctx.value, num_ctx_source=ctx.source, num_ctx_automatic=ctx.automatic,
        num_parallel=n_parallel, kv_cache_type=kv_type or "f16", flash_attn=flash, llama_server_args=args,
        predicted_vram_bytes=predicted, eviction_log=eviction, kv_bytes=result.kv_bytes, kv_cells=result.kv_cells,
        n_ctx=result.n_ctx, weights_bytes=weights_bytes, compute_buffer_bytes=result.compute_buffer_bytes,
        gpu_budget_bytes=result.gpu_budget_bytes, fits=result.fits, gpu_layers=gpu_layers, processor=processor,
        error=error, error_lines=error_lines, retry=tuple(retry), notes=tuple(notes), llama_server_log=result.log_lines,
    )


def _gpu_bytes_at(layout: KvLayout, settings: ServerSettings, weights_bytes: int, ngl: int) -> int:
    return gpu_use(layout, plan_kv(layout, settings), settings, weights_bytes, ngl).total_bytes


# ---------------------------------------------------------------------------------------------
# Batch API


# Each integer key's range in generator.schema.BOUNDS, shared with the records and the other engines.
_OPT_KIND = {"num_ctx": "tokens0", "modelfile_num_ctx": "tokens0", "num_gpu": "count0", "num_batch": "tokens"}


def _opt_int(request: Mapping[str, Any], key: str, minimum: int = 0) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    return check_int(value, f"`{key}`", _OPT_KIND[key], OllamaInputError, low=minimum,
                     wrong=f"`{key}` must be an integer >= {minimum}, got {value!r}")


def _opt_gib(request: Mapping[str, Any], key: str) -> int | None:
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_GIB:
        raise OllamaInputError(f"`{key}` must be a positive number of GiB (at most {MAX_GIB:,.0f}), got {value!r}")
    return int(round(value * GIB))


def answer_ollama_request(
    request: Mapping[str, Any],
    *,
    hf_configs: Mapping[str, Mapping[str, Any]] | None = None,
    gpu_memory_bytes: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One `"engine": "ollama"` request. Keys: `model` / `hf_config` / `gguf_metadata`, `num_ctx` (request
    option), `modelfile_num_ctx`, `env` (server environment), `version`, `gpu` or `gpu_memory_gib`,
    `gpu_free_gib`, `weights_gib`, `num_gpu`, `num_batch`, `compute_capability`, `vision`, `embedding`.
    Never raises."""
    try:
        if not isinstance(request, Mapping):
            raise OllamaInputError("a request must be an object")
        known = {
            "engine", "id", "model", "hf_config", "gguf_metadata", "num_ctx", "modelfile_num_ctx", "env", "version",
            "gpu", "gpu_memory_gib", "gpu_free_gib", "weights_gib", "num_gpu", "num_batch", "compute_capability",
            "gpu_library", "vision", "embedding",
        }
        unknown = sorted(set(request) - known)
        if unknown:
            raise OllamaInputError(f"unknown key(s) {', '.join(map(repr, unknown))}")
        layout = layout_from_request(request, hf_configs)
        env_map = request.get("env") or {}
        if not isinstance(env_map, Mapping):
            raise OllamaInputError("`env` must be an object of server environment variables")
        env = OllamaEnv.from_mapping(env_map)
        total = _opt_gib(request, "gpu_memory_gib")
        gpu = request.get("gpu")
        if gpu is not None:
            if total is not None:
                raise OllamaInputError("give either `gpu` or `gpu_memory_gib`, not both")
            if not gpu_memory_bytes or gpu not in gpu_memory_bytes:
                raise OllamaInputError(f"unknown gpu {gpu!r}; pass `gpu_memory_gib`")
            total = gpu_memory_bytes[gpu]
        version = request.get("version") or "0.33.0"
        if not isinstance(version, str):
            raise OllamaInputError("`version` must be a string like 0.33.0")
        for flag in ("vision", "embedding"):
            if request.get(flag) is not None and not isinstance(request.get(flag), bool):
                raise OllamaInputError(f"`{flag}` must be true or false")
        cc = request.get("compute_capability")
        if cc is not None and (not isinstance(cc, str) or not all(p.isdigit() for p in cc.split(".", 1))):
            raise OllamaInputError("`compute_capability` must be a string like '8.6'")
        result = estimate_ollama(
            layout,
            version=version,
            env=env,
            request_num_ctx=_opt_int(request, "num_ctx"),
            modelfile_num_ctx=_opt_int(request, "modelfile_num_ctx"),
            num_gpu=_opt_int(request, "num_gpu"),
            weights_bytes=_opt_gib(request, "weights_gib") or 0,
            gpu_total_bytes=total,
            gpu_free_bytes=_opt_gib(request, "gpu_free_gib"),
            gpu_library=str(request.get("gpu_library") or "cuda"),
            compute_capability=cc,
            vision=bool(request.get("vision")),
            embedding=bool(request.get("embedding")),
            num_batch=_opt_int(request, "num_batch", minimum=1) or 512,
            model_name=str(request.get("model") or "model"),
        )
        out = result.to_dict()
        out["engine"] = "ollama"
        if "id" in request:
            out["id"] = request["id"]
        return out
    except (OllamaInputError, LlamaCppInputError, GeometryError) as exc:
        return {"error_input": str(exc)}
    except LlamaCppError as exc:
        return {"engine": "ollama", "startup_error": str(exc)}
    except Exception as exc:  # the batch API promises an answer per request
        return {"error_input": f"{type(exc).__name__}: {exc}"}

