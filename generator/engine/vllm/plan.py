"""The inputs, the sizing of each pipeline stage and the result: vLLM's KV-cache capacity at engine start."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import asdict, dataclass, replace
from typing import Any, Mapping

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    GEMMA4_TYPES,
    NO_CACHE,
    SLIDING,
    STATE,
    Geometry,
    GeometryError,
)
from generator.engine.vllm.blocks import KvGroup, blocks_per_request, fitting_len, group_shapes, in_flight_tokens, pp_layer_split, state_groups, unify_page_sizes
from generator.engine.vllm.budget import (
    ASSUMPTIONS,
    Breakdown,
    BudgetAssumptions,
    batch_defaults,
    cudagraph_capture_sizes,
    encoder_cache_bytes,
    estimate_activation_peak,
    gemma4_multimodal_bytes,
    requested_bytes,
    unified_memory_gpu,
)
from generator.engine.vllm.config_facts import ConfigFacts
from generator.engine.vllm.error_texts import CANNOT_AUTO_FIT_TEXT, format_gib, gib_for, vllm_error_text
from generator.engine.vllm.kv_dtype import hybrid_pages, kv_bytes_per_token_per_layer
from generator.engine.vllm.model_len import DerivedMaxLen, max_model_len_too_long_text
from generator.engine.vllm.versions import (
    DEFAULT_BLOCK_SIZE,
    VllmInputError,
    default_gpu_memory_utilization,
    format_version,
    has_hybrid_allocator,
    hybrid_too_old_text,
    kv_tokens_rule,
    parse_version,
    prints_available_kv_line,
    prints_kv_size_on_one_line,
    reserves_null_block_in_check,
    subtracts_cudagraph_estimate,
    uses_v0_engine,
)
from generator.engine.vllm_releases import (
    SAMPLER_BACKENDS,
    counts_distributed_init,
    default_mla_block_size,
    is_hopper_gpu,
    is_rocm_gpu,
    retains_profiling_capture,
    runs_v0_engine,
    runs_v2_runner,
    sampler_bytes_per_logit,
    v2_penalties_bytes,
    v2_runner_skips_estimate,
)
from generator.schema import MAX_BYTES, check_int


@dataclass(frozen=True)
class VllmInputs:
    """Everything `vllm serve` would be given. None means vLLM's default."""

    hf_config: Mapping[str, Any]
    gpu_total_bytes: int | None = None  # what cudaMemGetInfo reports as total
    gpu_name: str = ""
    gpu_count: int = 1
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    max_model_len: int | None = None  # -1 = auto-fit
    kv_cache_dtype: str = "auto"
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: int | None = None
    available_kv_cache_bytes: int | None = None  # test/override hook: skip the budget entirely
    weights_bytes: int | None = None  # whole checkpoint; split over TP and PP by parameters
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    vllm_version: str | None = None
    # Optional measured terms (bytes per worker) replacing the model's estimates.
    non_torch_bytes: int | None = None
    activation_peak_bytes: int | None = None
    cudagraph_bytes: int | None = None
    # Release-table overrides: the top-k/top-p path of the sampler warm-up (native, flashinfer,
    # triton; None = the release's default) and VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (None = default).
    sampler_backend: str | None = None
    estimate_cudagraphs: bool | None = None
    mamba_ssm_cache_dtype: str | None = None  # --mamba-ssm-cache-dtype (hybrid models); None = auto
    # --mamba-cache-mode: "none" (default), "align" (prefix caching; 0.20+ picks it for models
    # without full Mamba prefix caching when prefix caching is on), "all" (a state block per block of tokens).
    mamba_cache_mode: str | None = None
    # Multimodal models: the encoder-cache budget the log prints ("Encoder cache will be initialized with a
    # budget of N tokens"); None = no encoder profiled (text-only, or not known). See budget.encoder_cache_bytes.
    encoder_cache_tokens: int | None = None
    # Modalities whose --limit-mm-per-prompt is 0: vLLM does not build their towers (budget.gemma4_multimodal_bytes).
    mm_modalities_off: tuple[str, ...] = ()


@dataclass(frozen=True)
class StagePlan:
    stage: int
    num_layers: int
    bytes_per_block: int
    available_kv_cache_bytes: int
    num_blocks: int
    breakdown: Breakdown | None


@dataclass(frozen=True)
class VllmResult:
    fits: bool
    num_blocks: int
    bytes_per_block: int
    kv_cache_tokens: int
    max_concurrency: float
    estimated_max_model_len: int
    error: str | None
    available_kv_cache_bytes: int
    breakdown: Breakdown | None
    # What pages and commands need besides the headline numbers.
    vllm_version: str
    max_model_len: int  # the length checked (after auto-fit)
    requested_max_model_len: int | None
    derived_max_model_len: int
    kv_cache_dtype: str
    block_size: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    gpu_memory_utilization: float
    max_num_batched_tokens: int
    max_num_seqs: int
    enforce_eager: bool
    kv_bytes_per_token_per_layer: int
    kv_bytes_per_token: int  # across the binding stage's attention layers, as if each kept every token
    num_kv_cache_groups: int
    blocks_per_request: int
    needed_bytes: int  # one request at max_model_len on the binding stage
    check_bytes: int  # available minus the null block (0.29+)
    in_flight_tokens: int
    binding_stage: int
    stages: tuple[StagePlan, ...]
    log_lines: tuple[str, ...]
    assumptions: BudgetAssumptions | None
    uses_budget_model: bool

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["breakdown"] = asdict(self.breakdown) if self.breakdown else None
        return data


_INPUT_FIELDS = frozenset(VllmInputs.__dataclass_fields__)
assert not hasattr(VllmInputs, "__post_init__")


def replace_inputs(inputs: VllmInputs, **changes: Any) -> VllmInputs:
    """dataclasses.replace(inputs, **changes), at about half the cost: replace() walks the dataclass
    fields in Python, while VllmInputs has only init fields, so its instance dict already is the
    constructor's arguments. A catalog pair builds ~15 variants of its inputs (levers, grid).
    The copy's dict is filled directly: the frozen constructor sets its 26 fields one
    object.__setattr__ at a time, and it has nothing else to do (no defaults left to fill, no
    __post_init__). Unknown names are refused as the constructor would refuse them."""
    if not changes.keys() <= _INPUT_FIELDS:
        return type(inputs)(**{**vars(inputs), **changes})
    copy = object.__new__(type(inputs))
    fields = copy.__dict__
    fields.update(vars(inputs))
    fields.update(changes)
    return copy


def facts_for(inputs: VllmInputs, facts: ConfigFacts | None) -> ConfigFacts:
    # Facts for another dict (a lever that swaps the checkpoint's config) are never reused.
    if facts is not None and facts.hf_config is inputs.hf_config:
        return facts
    return ConfigFacts(inputs.hf_config)


# Each integer setting's range in generator.schema.BOUNDS, shared with the records and requests.
_SETTING_KIND = {
    "tensor_parallel_size": "gpus", "pipeline_parallel_size": "gpus", "gpu_count": "gpus", "block_size": "count",
    "max_num_batched_tokens": "tokens", "max_num_seqs": "count", "max_model_len": "tokens", "encoder_cache_tokens": "tokens",
}


def _check_positive(name: str, value: int | None) -> None:
    if value is not None:
        check_int(value, name, _SETTING_KIND[name], VllmInputError, wrong=f"{name} must be a positive integer, got {value!r}")


class _Resolved:
    """What resolve_settings fills in, without building the completed VllmInputs: a catalog pair
    resolves ~16 sets of inputs, and copying the 20-field dataclass each time cost more than the
    arithmetic it fed."""

    __slots__ = ("geometry", "derived", "version", "utilization", "block_size", "max_num_seqs", "max_num_batched_tokens")

    def __init__(self, geometry: Geometry, derived: DerivedMaxLen, version: tuple[int, int, int], utilization: float,
                 block_size: int, max_num_seqs: int, max_num_batched_tokens: int) -> None:
        self.geometry = geometry
        self.derived = derived
        self.version = version
        self.utilization = utilization
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens


def resolve_inputs(inputs: VllmInputs, facts: ConfigFacts) -> _Resolved:
    try:
        geometry = facts.geometry
    except GeometryError as exc:
        raise VllmInputError(f"hf_config: {exc}") from exc
    version = parse_version(inputs.vllm_version)
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "gpu_count", "block_size",
                 "max_num_batched_tokens", "max_num_seqs", "encoder_cache_tokens"):
        _check_positive(name, getattr(inputs, name))
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    if tp * pp > inputs.gpu_count:
        raise VllmInputError(f"tensor_parallel_size x pipeline_parallel_size = {tp * pp} needs {tp * pp} GPUs; gpu_count is {inputs.gpu_count}")
    if geometry.num_attention_heads % tp:
        raise VllmInputError(f"Total number of attention heads ({geometry.num_attention_heads}) must be divisible by tensor parallel size ({tp}).")
    if geometry.mla is None and tp > geometry.num_kv_heads and tp % geometry.num_kv_heads:
        raise VllmInputError(f"tensor_parallel_size {tp} must be a multiple of the {geometry.num_kv_heads} KV heads to replicate them")
    if pp > geometry.num_layers:
        raise VllmInputError(f"pipeline_parallel_size {pp} exceeds the {geometry.num_layers} layers")
    util = inputs.gpu_memory_utilization
    if util is None:
        util = default_gpu_memory_utilization(version)
    if isinstance(util, bool) or not isinstance(util, (int, float)) or not 0 < util <= 1:
        raise VllmInputError(f"gpu_memory_utilization must be in (0, 1], got {util!r}")
    for name in ("kv_cache_memory_bytes", "available_kv_cache_bytes", "weights_bytes", "gpu_total_bytes",
                 "non_torch_bytes", "activation_peak_bytes", "cudagraph_bytes"):
        value = getattr(inputs, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise VllmInputError(f"{name} must be an integer number of bytes, got {value!r}")
        if value is not None and abs(value) > MAX_BYTES:
            raise VllmInputError(f"{name} must be at most 1 PiB ({MAX_BYTES:,} bytes), got {value:,}")
    if inputs.kv_cache_memory_bytes is None and inputs.available_kv_cache_bytes is None and not inputs.gpu_total_bytes:
        raise VllmInputError("give the GPU (gpu or gpu_memory_gib), kv_cache_memory_bytes or available_kv_cache_bytes")
    kv_bytes_per_token_per_layer(geometry, inputs.kv_cache_dtype, tp)  # validates the dtype
    block_size = inputs.block_size or DEFAULT_BLOCK_SIZE
    if geometry.mla is not None and inputs.block_size is None:
        block_size = default_mla_block_size(version, inputs.gpu_name) or DEFAULT_BLOCK_SIZE
    if geometry.has_state:
        if not has_hybrid_allocator(version):
            raise VllmInputError(hybrid_too_old_text(version))
        block_size = hybrid_pages(geometry, inputs.kv_cache_dtype, tp, inputs.block_size, inputs.mamba_ssm_cache_dtype).block_size
    derived = facts.derived
    max_len = inputs.max_model_len
    if max_len is not None and max_len != -1:
        _check_positive("max_model_len", max_len)
        if max_len > derived.value and (derived.model_max_length is None or max_len > derived.model_max_length):
            raise VllmInputError(max_model_len_too_long_text(max_len, derived))
    if inputs.sampler_backend is not None and inputs.sampler_backend not in SAMPLER_BACKENDS:
        raise VllmInputError(f"sampler_backend must be one of {', '.join(SAMPLER_BACKENDS)}, got {inputs.sampler_backend!r}")
    length_for_batch = derived.default_max_model_len if max_len in (None, -1) else max_len
    seqs, tokens = batch_defaults(inputs.gpu_total_bytes or 0, inputs.gpu_name, version, length_for_batch)
    max_num_seqs = inputs.max_num_seqs or seqs
    if inputs.max_num_batched_tokens is None:
        length = derived.default_max_model_len if max_len in (None, -1) else max_len
        max_num_batched_tokens = min(max_num_seqs * length, tokens)
    else:
        max_num_batched_tokens = inputs.max_num_batched_tokens
    return _Resolved(geometry, derived, version, float(util), block_size, max_num_seqs, max_num_batched_tokens)


def resolve_settings(inputs: VllmInputs, *, facts: ConfigFacts | None = None) -> tuple[Geometry, DerivedMaxLen, VllmInputs]:
    """Validate like vLLM and fill vLLM's defaults; returns the completed inputs.
    `facts` may carry what earlier plans already derived from inputs.hf_config."""
    resolved = resolve_inputs(inputs, facts_for(inputs, facts))
    completed = replace(
        inputs,
        gpu_memory_utilization=resolved.utilization,
        block_size=resolved.block_size,
        max_num_seqs=resolved.max_num_seqs,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        vllm_version=format_version(resolved.version),
    )
    return resolved.geometry, resolved.derived, completed


def graph_estimate_subtracted(inputs: VllmInputs, version: tuple[int, int, int], facts: ConfigFacts) -> bool:
    """Whether this start loses the CUDA-graph estimate: the release's rule, unless the model runs on
    the V2 model runner of 0.22-0.28, which estimates 0."""
    if not subtracts_cudagraph_estimate(version, inputs.enforce_eager, inputs.gpu_name, inputs.estimate_cudagraphs):
        return False
    return not v2_runner_skips_estimate(version, *facts_for(inputs, facts).v2_runner_traits)


def _stage_costs(inputs: VllmInputs, resolved: _Resolved, facts: ConfigFacts, stage: int, layers: int,
                 assumptions: BudgetAssumptions) -> tuple[int, int, int, int]:
    """(weights, non-torch, activation peak, CUDA graphs) of one stage: the Breakdown but the requested
    bytes, which alone depend on the utilization."""
    geometry, shape, version = resolved.geometry, facts.weight_shape, resolved.version
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    first, last = stage == 0, stage == pp - 1
    if inputs.weights_bytes is not None:
        whole = shape.total_bytes(geometry.num_layers)
        weights = inputs.weights_bytes * shape.stage_bytes(layers, first, last) // whole // tp
    else:
        weights = shape.stage_bytes(layers, first, last) // tp
        if first:
            weights += gemma4_multimodal_bytes(inputs.hf_config, geometry, resolved.max_num_batched_tokens, inputs.mm_modalities_off)
    v0 = runs_v0_engine(version, inputs.gpu_name)
    if inputs.non_torch_bytes is not None:
        non_torch = inputs.non_torch_bytes
    else:
        non_torch = assumptions.non_torch_bytes_v0 if v0 else assumptions.non_torch_bytes
        if tp * pp > 1:
            non_torch += assumptions.non_torch_extra_bytes_tp
            if tp > 1 and counts_distributed_init(version, v0) and is_hopper_gpu(inputs.gpu_name):
                non_torch += assumptions.nccl_init_bytes_per_rank_hopper
        if unified_memory_gpu(inputs.gpu_name, assumptions):
            non_torch += assumptions.unified_memory_bytes
    # The V2 model runner (vllm_releases.runs_v2_runner) warms up its own sampler and, from 0.27, its penalty
    # buffers on the sampling (last) stage leave the budget.
    model = facts_for(inputs, facts)
    v2 = not v0 and runs_v2_runner(version, *model.v2_runner_traits, model.architectures, is_rocm_gpu(inputs.gpu_name))
    if v2 and last and inputs.non_torch_bytes is None:
        non_torch += v2_penalties_bytes(version, resolved.max_num_seqs, geometry.vocab_size)
    activation = inputs.activation_peak_bytes
    if activation is None:
        activation = estimate_activation_peak(geometry, facts.moe, tp, resolved.max_num_batched_tokens, resolved.max_num_seqs, assumptions,
                                      sampler_bytes_per_logit(version, inputs.sampler_backend, v0, v2))
    if inputs.encoder_cache_tokens and first:
        activation += encoder_cache_bytes(inputs.hf_config, geometry, inputs.encoder_cache_tokens)
    estimate = len(cudagraph_capture_sizes(resolved.max_num_seqs, resolved.max_num_batched_tokens)) * layers * assumptions.cudagraph_bytes_per_size_per_layer
    cudagraph = 0
    if graph_estimate_subtracted(inputs, version, facts):
        cudagraph = estimate if inputs.cudagraph_bytes is None else inputs.cudagraph_bytes
    if inputs.non_torch_bytes is None and retains_profiling_capture(version, tp, inputs.enforce_eager, inputs.gpu_name):
        non_torch += estimate  # the profile's capture, kept by the peers' custom all-reduce handles
    return weights, non_torch, activation, cudagraph


def cudagraph_info_line(gpu_memory_utilization: float, cudagraph_bytes: int, gpu_total_bytes: int) -> str:
    """gpu_worker.py's note when the CUDA-graph estimate is subtracted (0.20+, env on)."""
    delta = cudagraph_bytes / gpu_total_bytes
    return (
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        f"--gpu-memory-utilization={gpu_memory_utilization:.4f} is equivalent to "
        f"--gpu-memory-utilization={round(gpu_memory_utilization - delta, 4):.4f} without CUDA graph memory profiling. "
        "To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to "
        f"{min(round(gpu_memory_utilization + delta, 4), 1.0):.4f}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0."
    )


def kv_cache_tokens_logged(version: tuple[int, int, int], num_blocks: int, per_request_blocks: int, max_model_len: int, block_size: int, num_groups: int) -> int:
    """The 'GPU KV cache size: N tokens' number of that release."""
    rule = kv_tokens_rule(version)
    if rule == "per_request":
        return int(num_blocks / per_request_blocks * max_model_len)  # get_kv_cache_capacity
    if rule == "per_group":
        return num_blocks // num_groups * block_size
    return num_blocks * block_size


class _Sizing:
    """Every number of a plan, before its log lines and result record. Levers and the auto-fit grid
    read only a few of these; plan_vllm adds the rest, so both run the same arithmetic."""

    __slots__ = ("resolved", "per_layer", "groups", "in_flight", "stages", "checks", "estimates", "largest_fit",
                 "full_len", "max_len", "per_request", "binding", "needed", "error", "num_blocks", "concurrency", "tokens")


def _sizing_groups(inputs: VllmInputs, geometry: Geometry, version: tuple[int, int, int], facts: ConfigFacts) -> tuple[KvGroup, ...]:
    groups = facts.groups
    if geometry.has_state:
        groups = state_groups(groups, inputs.mamba_cache_mode)
    if runs_v0_engine(version, inputs.gpu_name):
        if geometry.has_global_shape:
            raise VllmInputError(f"{geometry.model_type} layers of two head sizes are modelled on vLLM's V1 engine only")
        # V0 had no hybrid allocator: every layer keeps every token in one block table.
        groups = (KvGroup(FULL, None, tuple(range(geometry.num_layers))),)
    return groups


def _kind_bytes(geometry: Geometry, kv_cache_dtype: str, tp: int) -> dict[str, int]:
    """Bytes one token takes in one layer of each attention kind on one rank."""
    return {kind: kv_bytes_per_token_per_layer(geometry, kv_cache_dtype, tp, kind) for kind in (FULL, SLIDING, CHUNKED)}


def _stage_kv_bytes_per_token(geometry: Geometry, stages: list[StagePlan], stage: int, kind_bytes: dict[str, int]) -> int:
    """Bytes one token takes across the attention layers of that PP stage, each at its own shape."""
    start = sum(s.num_layers for s in stages[:stage])
    kinds = geometry.layer_kinds[start:start + stages[stage].num_layers]
    return sum(kind_bytes[kind] for kind in kinds if kind in kind_bytes)


def _stage_shapes(inputs: VllmInputs, resolved: _Resolved, facts: ConfigFacts, groups: tuple[KvGroup, ...], page: int,
                  assumptions: BudgetAssumptions) -> tuple[tuple[int, int, int | None, tuple[int, int, int, int] | None], ...]:
    """Each stage's (layers, bytes per block, fixed KV bytes or None, costs or None): what its plan
    needs besides the utilization. The costs are _stage_costs' when the budget model sizes the cache."""
    shapes = []
    start = 0
    for stage, layers in enumerate(pp_layer_split(resolved.geometry.num_layers, inputs.pipeline_parallel_size)):
        # A group's layers are ascending (kv_cache_groups and the V0 group list them in order), so
        # bisect counts those on this stage without walking every layer of every group.
        end = start + layers
        bytes_per_block = max(bisect_left(g.layers, end) - bisect_left(g.layers, start) for g in groups) * page
        start += layers
        fixed = inputs.available_kv_cache_bytes if inputs.available_kv_cache_bytes is not None else inputs.kv_cache_memory_bytes
        costs = None if fixed is not None else _stage_costs(inputs, resolved, facts, stage, layers, assumptions)
        shapes.append((layers, bytes_per_block, fixed, costs))
    return tuple(shapes)


def _stage_plans(inputs: VllmInputs, utilization: float, shapes: tuple) -> list[StagePlan]:
    stages: list[StagePlan] = []
    for stage, (layers, bytes_per_block, fixed, costs) in enumerate(shapes):
        breakdown = None
        if costs is None:
            available = fixed
        else:
            breakdown = Breakdown(requested_bytes(inputs.gpu_total_bytes, utilization), *costs)
            available = breakdown.available_bytes
        num_blocks = max(available, 0) // bytes_per_block
        stages.append(StagePlan(stage, layers, bytes_per_block, available, num_blocks, breakdown))
    return stages


def _start_error(version: tuple[int, int, int], stages: list[StagePlan], checks: list[int], max_len: int, per_request: int,
                 shapes: dict, bs: int, in_flight: int) -> tuple[str | None, StagePlan | None]:
    """The error vLLM raises at start, with the first stage that raises it; (None, None) if it starts."""
    for s, check in zip(stages, checks):
        error = None
        if uses_v0_engine(version):
            max_seq_len = s.num_blocks * bs
            if s.num_blocks <= 0:
                error = vllm_error_text(version, "no_memory")
            elif max_len > max_seq_len:
                error = vllm_error_text(version, "too_long", max_model_len=max_len, max_seq_len=max_seq_len)
        elif check <= 0:
            error = vllm_error_text(version, "no_memory")
        elif s.bytes_per_block * per_request > check:
            estimate = fitting_len(check, s.bytes_per_block, shapes, max_len, bs, in_flight)
            error = vllm_error_text(
                version, "too_long", max_model_len=max_len,
                needed_bytes=s.bytes_per_block * per_request, available_bytes=check,
                estimated_max_model_len=estimate,
            )
        if error:
            return error, s
    return None, None


class _Prefix:
    """What a sizing works out before the utilization comes in: the settings resolved (their
    utilization aside), the groups, pages and each stage's costs. Sizings that differ only in the
    utilization (the grid's rows, the utilization levers) share one."""

    __slots__ = ("resolved", "per_layer", "groups", "in_flight", "shapes", "stage_shapes", "full_only")


def _size_prefix(inputs: VllmInputs, assumptions: BudgetAssumptions, facts: ConfigFacts) -> _Prefix:
    resolved = resolve_inputs(inputs, facts)
    geometry, version = resolved.geometry, resolved.version
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    per_layer = kv_bytes_per_token_per_layer(geometry, inputs.kv_cache_dtype, tp)
    groups = _sizing_groups(inputs, geometry, version, facts)
    if pp > 1 and geometry.model_type in GEMMA4_TYPES and NO_CACHE in geometry.layer_kinds:
        # Gemma 4's KV-shared layers read an earlier layer's cache, which another stage may hold.
        raise VllmInputError(f"{geometry.model_type} shares KV between layers; pipeline parallelism is not modelled for it")
    if geometry.has_global_shape:
        # Two page sizes (Gemma 4): the smaller page's layers hold more tokens per block, so every page is the largest.
        groups, per_layer = unify_page_sizes(groups, _kind_bytes(geometry, inputs.kv_cache_dtype, tp))
    page = resolved.block_size * per_layer  # for a hybrid, the block size is already the aligned block: the state page is padded to this
    prefix = _Prefix()
    prefix.resolved, prefix.per_layer, prefix.groups = resolved, per_layer, groups
    prefix.in_flight = in_flight_tokens(pp, resolved.max_num_batched_tokens)
    _ = facts.weight_shape  # derived here whether or not a budget needs it, as a plan always has
    prefix.stage_shapes = _stage_shapes(inputs, resolved, facts, groups, page, assumptions)
    prefix.shapes = group_shapes(groups)
    prefix.full_only = all(g.kind == FULL for g in groups)
    return prefix


def _size(inputs: VllmInputs, prefix: _Prefix, utilization: float) -> _Sizing:
    """The sizing of inputs, from their prefix and their (valid) utilization."""
    base = prefix.resolved
    resolved = _Resolved(base.geometry, base.derived, base.version, utilization, base.block_size, base.max_num_seqs,
                         base.max_num_batched_tokens)
    derived, version, bs = resolved.derived, resolved.version, resolved.block_size
    groups, in_flight, shapes = prefix.groups, prefix.in_flight, prefix.shapes
    stages = _stage_plans(inputs, utilization, prefix.stage_shapes)

    null_block = reserves_null_block_in_check(version) and not uses_v0_engine(version)
    checks = [s.available_kv_cache_bytes - (s.bytes_per_block if null_block else 0) for s in stages]
    upper = derived.default_max_model_len if inputs.max_model_len in (None, -1) else max(inputs.max_model_len, derived.default_max_model_len)
    estimates = [fitting_len(c, s.bytes_per_block, shapes, upper, bs, in_flight) if c > 0 else 0 for s, c in zip(stages, checks)]
    largest_fit = min(estimates)

    error = None
    max_len = full_len = derived.default_max_model_len if inputs.max_model_len in (None, -1) else inputs.max_model_len
    if inputs.max_model_len == -1:  # auto-fit
        if largest_fit <= 0:
            error = CANNOT_AUTO_FIT_TEXT
        elif largest_fit < max_len:
            max_len = largest_fit

    per_request = blocks_per_request(groups, max_len, bs, in_flight)
    binding = min(range(len(stages)), key=lambda i: (stages[i].num_blocks, -stages[i].bytes_per_block, i))
    needed = stages[binding].bytes_per_block * per_request
    if error is None:
        error, failing = _start_error(version, stages, checks, max_len, per_request, shapes, bs, in_flight)
        if error:
            binding = failing.stage
            needed = failing.bytes_per_block * per_request

    num_blocks = stages[binding].num_blocks if error else min(s.num_blocks for s in stages)
    sizing = _Sizing()
    sizing.resolved, sizing.per_layer, sizing.groups, sizing.in_flight = resolved, prefix.per_layer, groups, in_flight
    sizing.stages, sizing.checks, sizing.estimates, sizing.largest_fit = stages, checks, estimates, largest_fit
    sizing.full_len, sizing.max_len, sizing.per_request = full_len, max_len, per_request
    sizing.binding, sizing.needed, sizing.error, sizing.num_blocks = binding, needed, error, num_blocks
    sizing.concurrency = num_blocks / per_request
    sizing.tokens = kv_cache_tokens_logged(version, num_blocks, per_request, max_len, bs, len(groups))
    return sizing


# A memo of sizings by their inputs (SizeMemo): the catalog sizes the same inputs several times over
# (a lever that sets the utilization or KV dtype a grid cell has; a smaller sibling's quantization
# lever that is that sibling's own auto-fit), and one sizing costs more than the rest of a pair.
SizeMemo = dict
_SIZE_MEMO_MAX = 4096  # entries (about a kilobyte each): a GPU's pairs' sizings, for a catalog in GPU order


def _memo_key(inputs: VllmInputs, assumptions: BudgetAssumptions) -> tuple:
    """The inputs as a key: every field by value (and type, so 1 and True differ), the config by
    identity (the memo keeps the config alive, so its id is not reused), and vLLM's default
    utilization written out, as resolve_inputs fills it in."""
    values = list(vars(inputs).values())
    values[0] = id(values[0])
    if inputs.gpu_memory_utilization is None:
        values[_UTILIZATION_FIELD] = default_gpu_memory_utilization(parse_version(inputs.vllm_version))
    return id(assumptions), tuple(values), tuple(map(type, values))


_FIELD_NAMES = tuple(VllmInputs.__dataclass_fields__)
assert _FIELD_NAMES[0] == "hf_config"
_UTILIZATION_FIELD = _FIELD_NAMES.index("gpu_memory_utilization")
_MAX_LEN_FIELD = _FIELD_NAMES.index("max_model_len")


def size_memo(inputs: VllmInputs, assumptions: BudgetAssumptions, facts: ConfigFacts, memo: SizeMemo | None) -> _Sizing:
    """The sizing of inputs, taken from memo when these inputs were sized before, and built on the
    prefix of inputs that differed only in the utilization when those were. Only sizings and
    prefixes are kept: inputs vLLM rejects raise each time. Both are read, never changed, by their callers."""
    if memo is None:
        prefix = _size_prefix(inputs, assumptions, facts)
        return _size(inputs, prefix, prefix.resolved.utilization)
    key = _memo_key(inputs, assumptions)
    found = memo.get(key)
    if found is not None and found[0] is inputs.hf_config and found[1] is assumptions:
        return found[2]
    sizing = _size(inputs, *_prefix_memo(inputs, assumptions, facts, memo, key))
    _remember(memo, key, (inputs.hf_config, assumptions, sizing))
    return sizing


def _prefix_memo(inputs: VllmInputs, assumptions: BudgetAssumptions, facts: ConfigFacts, memo: SizeMemo,
                 key: tuple) -> tuple[_Prefix, float]:
    """(the prefix of inputs, their utilization) with the prefix from memo when one was kept; key is _memo_key's."""
    values = list(key[1])
    utilization = values[_UTILIZATION_FIELD]  # vLLM's default written out
    values[_UTILIZATION_FIELD] = None
    if values[_MAX_LEN_FIELD] is None:
        values[_MAX_LEN_FIELD] = -1  # both size the batch for the default length; only _size reads which it was
    prefix_key = ("prefix", key[0], tuple(values), tuple(map(type, values)))
    found = memo.get(prefix_key)
    if found is not None and found[0] is inputs.hf_config and found[1] is assumptions:
        if isinstance(utilization, bool) or not isinstance(utilization, (int, float)) or not 0 < utilization <= 1:
            resolve_inputs(inputs, facts)  # raises vLLM's error for it, as the prefix's other settings passed
        return found[2], float(utilization)
    prefix = _size_prefix(inputs, assumptions, facts)
    _remember(memo, prefix_key, (inputs.hf_config, assumptions, prefix))
    return prefix, prefix.resolved.utilization


def _remember(memo: SizeMemo, key: tuple, entry: tuple) -> None:
    if len(memo) >= _SIZE_MEMO_MAX:
        memo.clear()
    memo[key] = entry


def _kv_layers_on_stage(geometry: Geometry, stages: list[StagePlan], stage: int) -> int:
    """Layers of that PP stage that keep per-token KV (state and cache-free layers do not)."""
    start = sum(s.num_layers for s in stages[:stage])
    kinds = geometry.layer_kinds[start:start + stages[stage].num_layers]
    return sum(1 for kind in kinds if kind not in (STATE, NO_CACHE))


def plan_vllm(inputs: VllmInputs, assumptions: BudgetAssumptions = ASSUMPTIONS, *, facts: ConfigFacts | None = None,
              memo: SizeMemo | None = None) -> VllmResult:
    """What vLLM computes at startup for these settings. Raises VllmInputError for settings
    vLLM rejects before it sizes the cache. `facts` may carry what earlier plans already derived
    from inputs.hf_config (see ConfigFacts); they are ignored for any other config. `memo` (a
    SizeMemo the caller keeps) reuses sizings of equal inputs; a config in it must not be changed."""
    sizing = size_memo(inputs, assumptions, facts_for(inputs, facts), memo)
    resolved, version, stages = sizing.resolved, sizing.resolved.version, sizing.stages
    error, max_len, largest_fit = sizing.error, sizing.max_len, sizing.largest_fit
    log_lines: list[str] = []
    if inputs.max_model_len == -1 and largest_fit > 0:
        memory = f"{format_gib(sizing.checks[sizing.estimates.index(largest_fit)])} GiB GPU"
        if largest_fit >= sizing.full_len:
            log_lines.append(f"Auto-fit max_model_len: full model context length {max_len} fits in available KV cache memory ({memory})")
        else:
            log_lines.append(f"Auto-fit max_model_len: reduced from {sizing.full_len} to {largest_fit} to fit in available KV cache memory ({memory})")
    chosen = stages[sizing.binding]
    if prints_available_kv_line(version):
        log_lines.insert(0, f"Available KV cache memory: {gib_for(version, chosen.available_kv_cache_bytes)} GiB")
    if chosen.breakdown and chosen.breakdown.cudagraph_bytes > 0 and inputs.gpu_total_bytes:
        log_lines.insert(1, cudagraph_info_line(resolved.utilization, chosen.breakdown.cudagraph_bytes, inputs.gpu_total_bytes))
    tokens, concurrency = sizing.tokens, sizing.concurrency
    if error is None:
        if prints_kv_size_on_one_line(version):
            log_lines.append(f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {max_len:,} tokens per request: {concurrency:.2f}x")
        else:
            log_lines.append(f"GPU KV cache size: {tokens:,} tokens")
            log_lines.append(f"Maximum concurrency for {max_len:,} tokens per request: {concurrency:.2f}x")

    uses_budget = inputs.kv_cache_memory_bytes is None and inputs.available_kv_cache_bytes is None
    return VllmResult(
        fits=error is None,
        num_blocks=sizing.num_blocks,
        bytes_per_block=chosen.bytes_per_block,
        kv_cache_tokens=tokens,
        max_concurrency=round(concurrency, 2),
        estimated_max_model_len=largest_fit,
        error=error,
        available_kv_cache_bytes=chosen.available_kv_cache_bytes,
        breakdown=chosen.breakdown,
        vllm_version=format_version(version),
        max_model_len=max_len,
        requested_max_model_len=inputs.max_model_len,
        derived_max_model_len=resolved.derived.value,
        kv_cache_dtype=inputs.kv_cache_dtype,
        block_size=resolved.block_size,
        tensor_parallel_size=inputs.tensor_parallel_size,
        pipeline_parallel_size=inputs.pipeline_parallel_size,
        gpu_memory_utilization=resolved.utilization,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        max_num_seqs=resolved.max_num_seqs,
        enforce_eager=inputs.enforce_eager,
        kv_bytes_per_token_per_layer=sizing.per_layer,
        kv_bytes_per_token=(_stage_kv_bytes_per_token(resolved.geometry, stages, chosen.stage, _kind_bytes(resolved.geometry, inputs.kv_cache_dtype, inputs.tensor_parallel_size))
                            if resolved.geometry.has_global_shape else sizing.per_layer * _kv_layers_on_stage(resolved.geometry, stages, chosen.stage)),
        num_kv_cache_groups=len(sizing.groups),
        blocks_per_request=sizing.per_request,
        needed_bytes=sizing.needed,
        check_bytes=sizing.checks[chosen.stage],
        in_flight_tokens=sizing.in_flight,
        binding_stage=chosen.stage,
        stages=tuple(stages),
        log_lines=tuple(log_lines),
        assumptions=assumptions if uses_budget else None,
        uses_budget_model=uses_budget,
    )


def fitting_max_model_len(inputs: VllmInputs, assumptions: BudgetAssumptions = ASSUMPTIONS, *, facts: ConfigFacts | None = None,
                          memo: SizeMemo | None = None) -> int:
    """plan_vllm(inputs).estimated_max_model_len when that plan starts, else 0; with max_model_len -1,
    the context auto-fit starts with. The same arithmetic without the log lines and result record,
    which the catalog's utilization x KV-dtype grid (eight plans a pair) never reads."""
    facts = facts_for(inputs, facts)
    if inputs.max_model_len == -1:
        return auto_fit(inputs, assumptions, facts, memo)[0]
    sizing = size_memo(inputs, assumptions, facts, memo)
    return sizing.largest_fit if sizing.error is None else 0


def auto_fit(inputs: VllmInputs, assumptions: BudgetAssumptions, facts: ConfigFacts, memo: SizeMemo | None) -> tuple[int, int, int]:
    """For auto-fit inputs (max_model_len -1): (the length the plan starts with, 0 when it does not
    start; its number of blocks; the binding stage's available KV bytes), as plan_vllm(inputs) reports
    them; memo as plan_vllm's. What a lever or a grid cell reads, mostly without a whole sizing (_auto_fit)."""
    if memo is None:
        prefix = _size_prefix(inputs, assumptions, facts)
        fit = _auto_fit(inputs, prefix, prefix.resolved.utilization)
    else:
        key = _memo_key(inputs, assumptions)
        found = memo.get(("auto", key))
        if found is not None and found[0] is inputs.hf_config and found[1] is assumptions:
            return found[2]
        fit = _auto_fit(inputs, *_prefix_memo(inputs, assumptions, facts, memo, key))
    if fit is None:
        sizing = size_memo(inputs, assumptions, facts, memo)
        fit = (sizing.largest_fit if sizing.error is None else 0, sizing.num_blocks,
               sizing.stages[sizing.binding].available_kv_cache_bytes)
    if memo is not None:
        _remember(memo, ("auto", key), (inputs.hf_config, assumptions, fit))
    return fit


def _auto_fit(inputs: VllmInputs, prefix: _Prefix, utilization: float) -> tuple[int, int, int] | None:
    """auto_fit's numbers from _size(inputs, prefix, utilization)'s stages alone, for auto-fit inputs;
    None where that shortcut does not hold.

    Auto-fit checks the length it found, which is at most every stage's estimate. On the V1 engine a
    stage fails the start only when its check is not positive (then its estimate, and so the length,
    is 0: auto-fit's own error, raised before the start check) or when a request of that length needs
    more than the check; blocks per request never fall as the length grows (positive block sizes), so
    a length at most a stage's estimate fits that stage when its blocks have a positive size. So the
    plan starts exactly when the length is positive, and either way its binding stage is the one with
    the fewest blocks (then the larger blocks, then the first). V0's start check counts blocks
    instead, and a block of no bytes fails to divide; those go through _size, as do requests of no
    blocks (odd windows), over which _size divides."""
    resolved = prefix.resolved
    version, bs = resolved.version, resolved.block_size
    if uses_v0_engine(version) or bs <= 0 or any(g.scale <= 0 for g in prefix.groups):
        return None
    null_block = reserves_null_block_in_check(version)
    upper = resolved.derived.default_max_model_len
    largest_fit = None
    binding = None
    for i, (_layers, bytes_per_block, fixed, costs) in enumerate(prefix.stage_shapes):
        if bytes_per_block <= 0:
            return None
        if costs is None:
            available = fixed
        else:
            available = Breakdown(requested_bytes(inputs.gpu_total_bytes, utilization), *costs).available_bytes
        check = available - (bytes_per_block if null_block else 0)
        estimate = fitting_len(check, bytes_per_block, prefix.shapes, upper, bs, prefix.in_flight) if check > 0 else 0
        largest_fit = estimate if largest_fit is None else min(largest_fit, estimate)
        stage = (max(available, 0) // bytes_per_block, -bytes_per_block, i, available)
        binding = stage if binding is None or stage[:3] < binding[:3] else binding
    assert largest_fit is not None and binding is not None  # a plan has at least one stage
    length = largest_fit if largest_fit > 0 else upper  # the length _size checks
    if (largest_fit <= 0 or not prefix.full_only) and blocks_per_request(prefix.groups, length, bs, prefix.in_flight) == 0:
        return None
    return max(largest_fit, 0), binding[0], binding[3]
