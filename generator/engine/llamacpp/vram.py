"""The rest of the VRAM picture: compute buffer, offloaded layers and weights, estimates with their basis stated."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from generator.engine.llamacpp.cache import KvPlan, kv_log_lines, kv_parts, kv_setup, plan_kv
from generator.engine.llamacpp.constants import FIT_MIN_CTX, FIT_TARGET_BYTES, FLASH_ATTN_AUTO, QUANTIZED_CACHE_TYPES
from generator.engine.llamacpp.flash_attn import FlashAttention
from generator.engine.llamacpp.layout import KvLayout
from generator.engine.llamacpp.settings import ServerSettings
from generator.units import MIB

COMPUTE_BUFFER_BASIS = (
    "compute buffer estimated as the peak of the prompt-processing graph llama.cpp reserves "
    "(graph_reserve(n_tokens = min(n_ctx, n_ubatch), n_outputs = n_tokens)): "
    "max(attention = [FA off: n_head*n_kv*n_tokens*4 B KQ] + mask n_kv*n_tokens*(FA ? 2 : 4) B, "
    "logits = n_vocab*n_tokens*4 B, FFN = 2*n_ff*n_tokens*4 B) + residual 2*n_embd*n_tokens*4 B; "
    "calibrated on public startup logs, within about 10%"
)
WEIGHTS_BASIS = (
    "weights = the GGUF file size; the share on the GPU is file size * offloaded/(n_layer + 1) "
    "(output layer counted as one more layer; the token-embedding table llama.cpp keeps in host memory is not subtracted)"
)


def compute_buffer_bytes(layout: KvLayout, plan: KvPlan, ubatch_size: int, *, attention_on_gpu: bool = True) -> int:
    """Estimated GPU compute buffer (see COMPUTE_BUFFER_BASIS)."""
    n_kv = max((c.cells_per_stream for c in plan.caches), default=plan.context.n_ctx_seq)
    return _compute_buffer(layout, plan.context.n_ctx, n_kv, plan.flash_attn.enabled, ubatch_size, attention_on_gpu)


def _compute_buffer(layout: KvLayout, n_ctx: int, n_kv: int, flash_attn: bool, ubatch_size: int, attention_on_gpu: bool) -> int:
    n_tokens = min(n_ctx, ubatch_size)
    attention = 0
    if attention_on_gpu:
        mask = n_kv * n_tokens * (2 if flash_attn else 4)
        kq = 0 if flash_attn else layout.n_head * n_kv * n_tokens * 4
        attention = kq + mask
    logits = layout.n_vocab * n_tokens * 4
    ffn = 2 * (layout.n_ff or 0) * n_tokens * 4
    residual = 2 * layout.n_embd * n_tokens * 4
    return max(attention, logits, ffn) + residual


def _offloaded_units(layout: KvLayout, n_gpu_layers: int) -> tuple[int, bool]:
    """(repeating layers on the GPU, output layer on the GPU) for -ngl N (llama_model::load_tensors:
    i_gpu_start = n_layer - ngl; the output layer goes to the GPU only when ngl > n_layer)."""
    ngl = max(0, n_gpu_layers)
    return min(ngl, layout.n_layer), ngl > layout.n_layer


@dataclass(frozen=True)
class GpuUse:
    weights_bytes: int
    kv_bytes: int
    compute_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.compute_bytes


def gpu_use(layout: KvLayout, plan: KvPlan, settings: ServerSettings, weights_bytes: int, n_gpu_layers: int) -> GpuUse:
    compute = compute_buffer_bytes(layout, plan, settings.ubatch_size, attention_on_gpu=settings.kv_offload)
    return GpuUse(*_gpu_parts(layout, settings, weights_bytes, n_gpu_layers, plan.kv_bytes_from_layer, compute))


def _gpu_parts(layout: KvLayout, settings: ServerSettings, weights_bytes: int, n_gpu_layers: int,
               kv_bytes_from_layer: Callable[[int], int], compute_bytes: int) -> tuple[int, int, int]:
    """gpu_use's (weights, KV, compute) on the GPU, given the KV of the layers from a given one up and
    the compute buffer with any layer on the GPU; the searches below reuse both across probes."""
    repeating, output = _offloaded_units(layout, n_gpu_layers)
    units = repeating + (1 if output else 0)
    weights_gpu = weights_bytes * units // (layout.n_layer + 1)
    kv_gpu = 0
    if settings.kv_offload and repeating:
        kv_gpu = kv_bytes_from_layer(layout.n_layer - repeating)
    return weights_gpu, kv_gpu, compute_bytes if units else 0


def use_at_ubatch(layout: KvLayout, settings: ServerSettings, weights_bytes: int, ubatch_size: int) -> GpuUse:
    """GPU use with `-ub ubatch_size` and the other settings unchanged. llama_context keeps
    n_ubatch = min(n_batch, n_ubatch) and reserves the worst-case graph for min(n_ctx, n_ubatch)
    tokens at load and again after every KV-cache update (sched_reserve, memory_update), so the
    compute buffer follows -ub; an iSWA model's SWA cache holds n_swa + n_ubatch cells, so it
    shrinks a little too."""
    small = replace(settings, ubatch_size=ubatch_size)
    return gpu_use(layout, plan_kv(layout, small), small, weights_bytes, ngl_value(layout, small))


def ngl_value(layout: KvLayout, settings: ServerSettings) -> int:
    if settings.n_gpu_layers is None or settings.n_gpu_layers < 0:
        return layout.n_layer + 1  # auto / all: everything, unless fit trims it
    return settings.n_gpu_layers


def gpu_layers_that_fit(layout: KvLayout, plan: KvPlan, settings: ServerSettings, weights_bytes: int, budget_bytes: int) -> int:
    """Largest -ngl (0..n_layer+1) whose estimated GPU use stays within budget."""
    compute = compute_buffer_bytes(layout, plan, settings.ubatch_size, attention_on_gpu=settings.kv_offload)

    def fits(ngl: int) -> bool:
        return sum(_gpu_parts(layout, settings, weights_bytes, ngl, plan.kv_bytes_from_layer, compute)) <= budget_bytes

    top = layout.n_layer + 1
    if top >= 1 and weights_bytes >= 0 and compute >= 0 and all(min(cache.layer_bytes, default=0) >= 0 for cache in plan.caches):
        # With no negative term, GPU use never falls as -ngl grows (more weights, more layers' KV,
        # the compute buffer once any unit is on the GPU), so the largest -ngl that fits is found by
        # bisection: what the scan from the top below finds, in a handful of probes instead of n_layer.
        if fits(top):
            return top
        lo = _largest_fitting(fits, 0, top - 1)
        return lo if fits(lo) else 0
    best = 0
    for ngl in range(top, -1, -1):
        if fits(ngl):
            best = ngl
            break
    return best


def max_ctx_that_fits(layout: KvLayout, settings: ServerSettings, weights_bytes: int, budget_bytes: int, *, limit: int | None = None) -> int:
    """Largest -c (a multiple of 256 * streams, so no rounding) whose full-offload estimate fits; 0 if none."""
    n_seq_max, unified = settings.seqs()
    step = settings.ctx_pad * (1 if unified else n_seq_max)
    top = limit if limit is not None else max(layout.n_ctx_train, settings.ctx_size)
    hi = top // step
    ngl = ngl_value(layout, settings)
    setup: tuple[FlashAttention, int, bool, int] | None = None

    def fits(k: int) -> bool:
        # gpu_use(layout, plan_kv(layout, replace(settings, ctx_size=k * step)), settings, ...) from the
        # same parts plan_kv builds its caches from, without building them. What does not depend on
        # -c is worked out at the first probe, where plan_kv would first do it.
        nonlocal setup
        if setup is None:
            setup = kv_setup(layout, settings)
        fa, n_stream = setup[0], setup[3]
        ctx, parts = kv_parts(layout, settings, setup, k * step)

        def kv_bytes_from_layer(first_layer: int) -> int:
            return sum(rows.bytes_from_layer(first_layer) * (cells_per_stream * n_stream) for _kind, rows, cells_per_stream in parts)

        n_kv = max(cells_per_stream for _kind, _rows, cells_per_stream in parts)
        compute = _compute_buffer(layout, ctx.n_ctx, n_kv, fa.enabled, settings.ubatch_size, settings.kv_offload)
        return sum(_gpu_parts(layout, settings, weights_bytes, ngl, kv_bytes_from_layer, compute)) <= budget_bytes

    if hi < 1 or not fits(1):
        return 0
    # GPU use never falls as -c grows when no size is negative (cells, padding and the compute buffer
    # all grow with it), so the search ends at the top whenever the top fits: most catalog pairs
    # either fit their whole context or not even one step, and this spares the dozen probes between.
    if layout._sizes_nonnegative and settings.ubatch_size >= 0 and fits(hi):
        return hi * step
    return _largest_fitting(fits, 1, hi) * step


def _largest_fitting(fits: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest value in [lo, hi] that fits, by bisection: fits must hold up to some value and
    fail above it, and is taken to hold at lo (the callers check lo themselves, or not at all)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def oom_log_lines(use: GpuUse, budget_bytes: int, model_path: str) -> tuple[str, ...]:
    """CUDA load failure sequence, assembled from llama.cpp's format strings (ggml-cuda.cu, ggml-alloc.c,
    src/llama-context.cpp, src/llama-model.cpp, common/common.cpp, tools/server at master 3f545be) for the first
    allocation that would not fit: weights (load_tensors), then KV (context), then compute."""
    model = model_path
    tail_ctx = (
        f"cmn  common_init_: failed to create context with model '{model}'",
        f"srv    load_model: failed to create_context with model '{model}'",
        "srv  llama_server: exiting due to model loading error",
    )

    def cuda_alloc(size: int) -> str:
        return f"ggml_backend_cuda_buffer_type_alloc_buffer: allocating {size / MIB:.2f} MiB on device 0: cudaMalloc failed: out of memory"

    if use.weights_bytes > budget_bytes:
        return (
            cuda_alloc(use.weights_bytes),
            f"alloc_tensor_range: failed to allocate CUDA0 buffer of size {use.weights_bytes}",
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
            "llama_model_load_from_file_impl: failed to load model",
            f"srv    load_model: failed to load model, '{model}'",
            "srv  llama_server: exiting due to model loading error",
        )
    if use.weights_bytes + use.kv_bytes > budget_bytes:
        return (
            cuda_alloc(use.kv_bytes),
            f"alloc_tensor_range: failed to allocate CUDA0 buffer of size {use.kv_bytes}",
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        ) + tail_ctx
    return (
        cuda_alloc(use.compute_bytes),
        f"ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size {use.compute_bytes}",
        "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers",
    ) + tail_ctx


@dataclass(frozen=True)
class LlamaCppResult:
    k_bytes: int
    v_bytes: int
    kv_bytes: int  # every KV cache together (both for SWA models)
    kv_cells: int  # cells of the main (non-SWA) cache, all streams
    swa_cells: int | None  # cells of the SWA cache, all streams
    n_ctx: int  # as `llama_context: n_ctx` prints
    n_ctx_seq: int
    n_seq_max: int
    n_stream: int
    kv_unified: bool
    flash_attn: bool
    weights_bytes: int
    compute_buffer_bytes: int
    gpu_bytes: int  # estimated GPU use at the requested -ngl (all layers when auto)
    gpu_budget_bytes: int | None  # GPU memory minus the --fit-target margin
    fits: bool | None
    max_ctx_that_fits: int | None
    gpu_layers_that_fit: int | None
    fit_outcome: str | None
    log_lines: tuple[str, ...]
    oom_lines: tuple[str, ...]
    basis: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["log_lines"] = list(self.log_lines)
        out["oom_lines"] = list(self.oom_lines)
        out["basis"] = list(self.basis)
        return out


def estimate_llamacpp(
    layout: KvLayout,
    settings: ServerSettings,
    *,
    weights_bytes: int = 0,
    gpu_memory_bytes: int | None = None,
    headroom_bytes: int = FIT_TARGET_BYTES,
    model_path: str = "model.gguf",
    buffer_name: str = "CUDA0",
) -> LlamaCppResult:
    plan = plan_kv(layout, settings)
    ngl = ngl_value(layout, settings)
    use = gpu_use(layout, plan, settings, weights_bytes, ngl)
    basis = [
        "KV bytes: exact, llama.cpp 3f545be (b10573) arithmetic: row_size(type, n_embd_k_gqa/v_gqa) per layer * cells per stream * streams",
        COMPUTE_BUFFER_BASIS,
        WEIGHTS_BASIS,
    ]
    if settings.flash_attn.lower() in FLASH_ATTN_AUTO and settings.cache_type_v not in QUANTIZED_CACHE_TYPES:
        basis.append("-fa auto assumed to resolve to " + ("on (backend supports flash attention)" if settings.fa_supported else "off"))
    fits = max_ctx = layers_fit = fit_outcome = None
    budget = None
    oom: tuple[str, ...] = ()
    if gpu_memory_bytes is not None:
        budget = gpu_memory_bytes - headroom_bytes
        basis.append(f"GPU budget = GPU memory - {headroom_bytes // MIB} MiB (llama-server --fit-target default margin)")
        fits = use.total_bytes <= budget
        max_ctx = max_ctx_that_fits(layout, settings, weights_bytes, budget)
        layers_fit = gpu_layers_that_fit(layout, plan, settings, weights_bytes, budget)
        if not fits:
            pinned_ngl = settings.n_gpu_layers is not None and settings.n_gpu_layers >= 0
            if not settings.fit or pinned_ngl:
                fit_outcome = "no fit adjustment (-ngl set or --fit off): loading fails with a CUDA out-of-memory error"
            elif settings.ctx_size == 0 and max_ctx >= FIT_MIN_CTX:
                fit_outcome = (
                    f"--fit reduces the context (was n_ctx_train {layout.n_ctx_train}); the largest that fits is about {max_ctx}"
                )
            else:
                fit_outcome = f"--fit keeps -c and offloads fewer layers: about {layers_fit}/{layout.n_layer + 1} layers on the GPU"
            oom = oom_log_lines(use, budget, model_path)
    return LlamaCppResult(
        k_bytes=plan.k_bytes,
        v_bytes=plan.v_bytes,
        kv_bytes=plan.kv_bytes,
        kv_cells=plan.caches[0].cells,
        swa_cells=plan.caches[1].cells if len(plan.caches) > 1 else None,
        n_ctx=plan.context.n_ctx,
        n_ctx_seq=plan.context.n_ctx_seq,
        n_seq_max=plan.context.n_seq_max,
        n_stream=plan.context.n_stream,
        kv_unified=plan.kv_unified,
        flash_attn=plan.flash_attn.enabled,
        weights_bytes=weights_bytes,
        compute_buffer_bytes=use.compute_bytes,
        gpu_bytes=use.total_bytes,
        gpu_budget_bytes=budget,
        fits=fits,
        max_ctx_that_fits=max_ctx,
        gpu_layers_that_fit=layers_fit,
        fit_outcome=fit_outcome,
        log_lines=kv_log_lines(plan, layout, settings, buffer_name),
        oom_lines=oom,
        basis=tuple(basis),
    )
