"""Layers, KV-cache groups and blocks: the blocks one request needs, and the longest request that fits."""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    NO_CACHE,
    SLIDING,
    STATE,
    Geometry,
)
from generator.engine.vllm.versions import VllmInputError
from generator.units import cdiv


def pp_layer_split(num_layers: int, pipeline_parallel_size: int) -> tuple[int, ...]:
    """Layers per PP stage, as vllm/distributed/utils.py get_pp_indices splits them:
    an even share, the remainder one each to the stages before the last, from the back."""
    share, remainder = divmod(num_layers, pipeline_parallel_size)
    parts = [share] * pipeline_parallel_size
    for i in range(2, remainder + 2):
        parts[-i] += 1
    return tuple(parts)


@dataclass(frozen=True)
class KvGroup:
    kind: str  # FULL, SLIDING or CHUNKED
    window: int | None  # sliding window or attention chunk, in tokens
    layers: tuple[int, ...]  # global layer indices
    # Tokens per block as a multiple of the block size: unify_kv_cache_spec_page_size raises the block
    # size of layers whose page is smaller than the largest (Gemma 4's two head sizes; see unify_page_sizes).
    scale: int = 1


def kv_cache_groups(geometry: Geometry) -> tuple[KvGroup, ...]:
    """vLLM's KV cache groups (get_kv_cache_groups / _get_kv_cache_groups_uniform_page_size)."""
    def window_of(kind: str) -> int | None:
        if kind == SLIDING:
            return geometry.sliding_window
        if kind == CHUNKED:
            return geometry.attention_chunk_size
        return None

    buckets: dict[str, list[int]] = {}
    for index, kind in enumerate(geometry.layer_kinds):
        if kind != NO_CACHE:  # MLP/MoE-only layers register no cache spec
            buckets.setdefault(kind, []).append(index)
    if len(buckets) == 1:
        kind, layers = next(iter(buckets.items()))
        return (KvGroup(kind, window_of(kind), tuple(layers)),)
    sizes = [len(layers) for layers in buckets.values()]
    group_size = min(sizes)
    if max(sizes) < min(sizes) * 1.5:
        group_size = max(sizes)
    groups = []
    for kind, layers in buckets.items():
        count = cdiv(len(layers), group_size)
        for i in range(count):
            # layers[i::count], so every PP stage gets a share of each group.
            groups.append(KvGroup(kind, window_of(kind), tuple(layers[i::count])))
    return tuple(groups)


def unify_page_sizes(groups: tuple[KvGroup, ...], bytes_per_token: dict[str, int]) -> tuple[tuple[KvGroup, ...], int]:
    """Groups with their block-size multiples, and the bytes one token takes in the largest page.

    vLLM 0.33.0 vllm/v1/core/kv_cache_planning.py unify_kv_cache_spec_page_size
    (https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/core/kv_cache_planning.py): when layers'
    pages differ, every layer whose page is smaller gets block_size * (largest page // its page), so
    every page is the largest; a page that does not divide the largest is not unified (NotImplementedError).
    Grouping (kv_cache_groups) runs after it on specs that keep their kind and window, so it is unchanged.
    `bytes_per_token` gives one layer's bytes per token by kind."""
    largest = max(bytes_per_token[g.kind] for g in groups)
    unified = []
    for g in groups:
        own = bytes_per_token[g.kind]
        if largest % own:
            raise VllmInputError(
                f"vLLM cannot unify these KV cache pages: a {g.kind} layer keeps {own} bytes per token, "
                f"which does not divide the largest page's {largest} (unify_kv_cache_spec_page_size)"
            )
        unified.append(replace(g, scale=largest // own))
    return tuple(unified), largest


MAMBA_CACHE_MODES = ("none", "align", "all")


def state_groups(groups: tuple[KvGroup, ...], mode: str | None) -> tuple[KvGroup, ...]:
    """State groups as vLLM 0.20's MambaSpec.max_memory_usage_bytes counts them per request
    (https://github.com/vllm-project/vllm/blob/v0.20.0/vllm/v1/kv_cache_interface.py#L540):
    1 page, 2 in "align" mode, or one per block of tokens in "all" mode (then they grow like full attention)."""
    mode = mode or "none"
    if mode not in MAMBA_CACHE_MODES:
        raise VllmInputError(f"mamba_cache_mode must be one of {', '.join(MAMBA_CACHE_MODES)}, got {mode!r}")
    if mode == "none":
        return groups
    if mode == "all":
        return tuple(replace(g, kind=FULL) if g.kind == STATE else g for g in groups)
    return tuple(replace(g, window=2) if g.kind == STATE else g for g in groups)


def group_blocks_per_request(kind: str, window: int | None, max_model_len: int, block_size: int, in_flight_tokens: int,
                             scale: int = 1) -> int:
    """Blocks one request of max_model_len tokens holds in a group (max_memory_usage_bytes), whose
    blocks hold block_size * scale tokens."""
    block_size *= scale
    if kind == STATE:
        # MambaSpec.max_memory_usage_bytes: one page ("none"), two ("align": the running state and the
        # last block-aligned checkpoint); `window` carries that count (see state_groups).
        return window or 1
    if kind == SLIDING:
        # SlidingWindowSpec: the window, plus tokens scheduled but not settled, +1 for alignment.
        return cdiv(min(window - 1 + in_flight_tokens, max_model_len), block_size) + 1
    if kind == CHUNKED:
        return cdiv(min(window + in_flight_tokens, max_model_len), block_size)
    return cdiv(max_model_len, block_size)


def blocks_per_request(groups: tuple[KvGroup, ...], max_model_len: int, block_size: int, in_flight_tokens: int) -> int:
    return sum(group_blocks_per_request(g.kind, g.window, max_model_len, block_size, in_flight_tokens, g.scale) for g in groups)


def in_flight_tokens(pipeline_parallel_size: int, max_num_batched_tokens: int) -> int:
    # VllmConfig.max_in_flight_tokens: async scheduling (default) with the V2 runner
    # (default) keeps pp + 1 batches in flight.
    return (pipeline_parallel_size + 1) * max_num_batched_tokens


def largest_fitting_len(check_bytes: int, bytes_per_block: int, groups: tuple[KvGroup, ...], upper: int, block_size: int, in_flight: int) -> int:
    """_estimate_max_model_len_from_groups: binary search over [1, upper]; 0 if 1 token does not fit."""
    return fitting_len(check_bytes, bytes_per_block, group_shapes(groups), upper, block_size, in_flight)


def group_shapes(groups: tuple[KvGroup, ...]) -> dict[tuple[str, int | None, int], int]:
    """Groups of one kind, window and block multiple hold the same blocks: how many groups have each."""
    shapes: dict[tuple[str, int | None, int], int] = {}
    for g in groups:
        shape = (g.kind, g.window, g.scale)
        shapes[shape] = shapes.get(shape, 0) + 1
    return shapes


def fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    # A catalog runs this ~20 times per pair. For plain integer inputs the length vLLM's search finds
    # is solved instead (_solve_fitting_len); anything else goes through the search itself.
    if (type(check_bytes) is int and type(bytes_per_block) is int and type(upper) is int and type(block_size) is int
            and type(in_flight) is int and bytes_per_block > 0 and block_size > 0
            and all(type(window) is int for kind, window, _ in shapes if kind in (SLIDING, CHUNKED))
            and all(scale == 1 for _, _, scale in shapes)):
        return _solve_fitting_len(check_bytes, bytes_per_block, shapes, upper, block_size, in_flight)
    return _search_fitting_len(check_bytes, bytes_per_block, shapes, upper, block_size, in_flight)


def _search_fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    """vLLM's binary search, as vLLM runs it."""
    def fits(length: int) -> bool:
        blocks = sum(count * group_blocks_per_request(kind, window, length, block_size, in_flight, scale)
                     for (kind, window, scale), count in shapes.items())
        return bytes_per_block * blocks <= check_bytes

    if upper < 1 or not fits(1):
        return 0
    low, high, best = 1, upper, 1
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _solve_fitting_len(check_bytes: int, bytes_per_block: int, shapes: dict, upper: int, block_size: int, in_flight: int) -> int:
    """The length _search_fitting_len finds, solved (integers, bytes_per_block and block_size > 0, one block size).

    Blocks per request never fall as the length grows, so the search finds the largest length in
    [1, upper] that fits. With t = cdiv(L, block_size), and cdiv(min(cap, L), bs) = min(cdiv(cap, bs), t),
    a request holds G(t) = sum of count * min(C, t) over the groups (C = cdiv(window cap, block_size);
    no cap for full attention) plus one block per sliding group. G is linear between the caps, so
    the largest t with G(t) <= check // bytes_per_block is solved segment by segment, and the
    largest length is t * block_size (or upper, if smaller)."""
    if upper < 1:
        return 0
    budget = check_bytes // bytes_per_block  # blocks one request may hold
    fixed = 0  # blocks that no longer grow with t: capped groups already passed, sliding groups' +1
    slope = 0  # groups that still grow by one block per block of tokens
    ahead: dict[int, int] = {}  # cap -> groups with that cap, not yet reached
    for (kind, window, _scale), count in shapes.items():  # every scale is 1 here (fitting_len)
        if kind == STATE:
            fixed += count * (window or 1)
            continue
        if kind == SLIDING:
            fixed += count
            cap = cdiv(window - 1 + in_flight, block_size)
        elif kind == CHUNKED:
            cap = cdiv(window + in_flight, block_size)
        else:
            slope += count
            continue
        if cap <= 1:
            fixed += count * cap  # min(cap, t) is cap for every t >= 1
        else:
            slope += count
            ahead[cap] = ahead.get(cap, 0) + count
    if fixed + slope > budget:  # G(1): one token does not fit
        return 0
    for cap in sorted(ahead):
        # Between the previous cap (where G fit) and this one, G(t) = fixed + slope * t.
        if fixed + slope * cap > budget:
            return min(upper, (budget - fixed) // slope * block_size)
        fixed += ahead[cap] * cap
        slope -= ahead[cap]
    if slope == 0:
        return upper  # every group is capped and the capped total fits: any length does
    return min(upper, (budget - fixed) // slope * block_size)
