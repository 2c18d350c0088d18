"""Which way each fix must move: per scenario, what is too big and what is too small.

A reader who pasted an error has one quantity that is too big for another. A lever is worth
offering only when it shrinks the first or grows the second, and never the other way round:
raising `--gpu-memory-utilization` is right when the KV budget is too small and wrong when the
free memory at start is. `DIRECTIONS` states this per Scenario; an error record may override it
with its optional `direction` field (for an error that shares a scenario's numbers but fails at
another step, e.g. the sampler warm-up). `LEVER_EFFECTS` says which quantities each lever moves.

The planner (planner.py) offers a lever only when `moves_right(direction, lever)`; `kvtriage check`
refuses a record whose fixes move the wrong way (page_lint.record_problems).
"""

from __future__ import annotations

from typing import Literal, Mapping, NamedTuple

# The quantities a failure compares. Each is what a reader can read off the error or the page.
Quantity = Literal[
    "kv-needed",  # KV cache the requested context needs (on the GPU)
    "kv-budget",  # what vLLM's budget leaves for the KV cache after weights and reserves
    "requested",  # vLLM's request at start: utilization x total memory
    "free-memory",  # memory free on the GPU when the engine starts
    "weights-on-gpu",  # weight bytes the GPU must hold
    "warmup-peak",  # activation, sampler and CUDA-graph peaks after the KV cache is allocated
    "headroom",  # GPU memory outside vLLM's budget, where those peaks must fit
    "host-needed",  # system RAM the load needs (weights and cache kept off the GPU)
    "host-ram",  # system RAM available
    "derived-limit",  # the longest context config.json allows
    "context",  # the context the reader asks for
    "kv-type-mismatch",  # K and V cache types that a kernel cannot combine
    "kernel-support",  # what the attention kernels accept (flash attention on, for a quantized V)
    "room-after-weights",  # GPU memory left beside the weights for cache and compute buffers
    "compute-buffer",  # llama.cpp's worst-case compute graph, sized for min(n_ctx, n_ubatch) tokens
    "room-for-compute",  # GPU memory left beside the weights and the KV cache, where compute buffers go
    # Not memory: a command line that names options the build does not have.
    "flags-not-accepted",  # flags (or preset keys) on the command line that the build no longer registers
    "build-options",  # the options the build registers (its replacements, such as --load-mode)
    # Not memory: how long a model takes to load, against how long the server waits for it.
    "load-time",  # the time the load takes (reading the file, placing layers, allocating caches)
    "load-timeout",  # how long the server waits for a stalled load (Ollama's OLLAMA_LOAD_TIMEOUT)
]
QUANTITIES: tuple[str, ...] = Quantity.__args__  # type: ignore[attr-defined]


class Direction(NamedTuple):
    too_big: str
    too_small: str


# Per Scenario (schema.Scenario): the default direction of an error with that scenario.
DIRECTIONS: Mapping[str, Direction] = {
    "vllm-kv-too-small": Direction("kv-needed", "kv-budget"),
    "vllm-no-cache-blocks": Direction("weights-on-gpu", "kv-budget"),
    "vllm-startup-free-memory": Direction("requested", "free-memory"),
    "vllm-weights-oom": Direction("weights-on-gpu", "free-memory"),
    "vllm-sampler-warmup-oom": Direction("warmup-peak", "headroom"),
    "vllm-max-len-above-derived": Direction("context", "derived-limit"),
    "llamacpp-kv-alloc": Direction("kv-needed", "room-after-weights"),
    "llamacpp-context-fail": Direction("kv-needed", "room-after-weights"),
    "llamacpp-compute-buffer": Direction("compute-buffer", "room-for-compute"),
    "ollama-system-memory": Direction("host-needed", "host-ram"),
    # The slowness is the share of the model left in system RAM: what shrinks it helps, and keeping
    # fewer layers on the GPU (llama-server -ngl) is the failure itself, not a fix.
    "ollama-partial-offload": Direction("host-needed", "room-after-weights"),
    "ollama-gpu-oom": Direction("kv-needed", "room-after-weights"),
    "ollama-runner-crash": Direction("kv-needed", "room-after-weights"),
    "sglang-kv-pool": Direction("kv-needed", "kv-budget"),
    # Not a memory error: nothing is too big for the GPU; the command names a flag the build dropped.
    "llamacpp-not-memory": Direction("flags-not-accepted", "build-options"),
    "sglang-no-kv-pool": Direction("weights-on-gpu", "kv-budget"),
    "sglang-pool-short": Direction("kv-needed", "kv-budget"),
    "ollama-load-timeout": Direction("load-time", "load-timeout"),
    "vllm-host-memory": Direction("host-needed", "host-ram"),
}

# lever -> {quantity: +1 grows it, -1 shrinks it}. Only what the lever does by itself: a smaller
# quantization does not change what vLLM requests at start, nor the memory outside its budget.
LEVER_EFFECTS: Mapping[str, Mapping[str, int]] = {
    "clamp-context": {"context": -1, "kv-needed": -1, "host-needed": -1, "room-for-compute": +1},
    "fp8-kv": {"kv-needed": -1},
    "quantized-kv": {"kv-needed": -1, "host-needed": -1},
    # The same -c in fewer bytes: memory freed for compute buffers, but not one more token of context.
    "quantized-kv-same-context": {"kv-needed": -1, "host-needed": -1, "room-for-compute": +1},
    "enforce-eager": {"warmup-peak": -1, "kv-budget": +1},
    "raise-utilization": {"requested": +1, "kv-budget": +1, "headroom": -1},
    "lower-utilization": {"requested": -1, "kv-budget": -1, "headroom": +1},
    "tensor-parallel": {"weights-on-gpu": -1, "kv-needed": -1, "kv-budget": +1, "room-after-weights": +1, "room-for-compute": +1},
    "smaller-quant": {"weights-on-gpu": -1, "kv-budget": +1, "host-needed": -1, "room-after-weights": +1, "room-for-compute": +1,
                      "load-time": -1},
    "bigger-gpu": {"free-memory": +1, "kv-budget": +1, "headroom": +1, "host-needed": -1, "room-after-weights": +1,
                   "room-for-compute": +1},
    "fewer-slots": {"kv-needed": -1, "host-needed": -1},
    "fewer-gpu-layers": {"weights-on-gpu": -1, "kv-needed": -1, "host-needed": +1, "room-after-weights": +1, "room-for-compute": +1},
    "free-gpu-memory": {"free-memory": +1, "headroom": +1, "room-after-weights": +1, "room-for-compute": +1},
    "kv-on-cpu": {"kv-needed": -1, "host-needed": +1},
    "allow-long-max-len": {"derived-limit": +1},
    "enable-flash-attn": {"kernel-support": +1},
    "matching-kv-types": {"kv-type-mismatch": -1},
    "fewer-seqs": {"warmup-peak": -1, "kv-budget": +1},
    "cpu-offload-weights": {"weights-on-gpu": -1, "kv-budget": +1, "host-needed": +1, "room-after-weights": +1, "room-for-compute": +1},
    "drop-removed-flag": {"flags-not-accepted": -1},
    # -ub N: llama.cpp reserves its worst-case graph for min(n_ctx, n_ubatch) tokens, so the compute
    # buffer shrinks with it; the KV cache and the context stay as they were.
    "smaller-ubatch": {"compute-buffer": -1},
    "longer-load-timeout": {"load-timeout": +1},
    # More RAM (or a higher container limit) also spares a load the swapping that stalls it.
    "more-host-ram": {"host-ram": +1, "load-time": -1},
}

# What the quantities are called on a page and in messages.
QUANTITY_NAMES: Mapping[str, str] = {
    "kv-needed": "the KV cache the context needs",
    "kv-budget": "the memory left for the KV cache",
    "requested": "the memory vLLM requests at start (utilization × total)",
    "free-memory": "the free GPU memory",
    "weights-on-gpu": "the weights on the GPU",
    "warmup-peak": "the warm-up peak (activations, sampler, CUDA graphs)",
    "headroom": "the GPU memory outside vLLM's budget",
    "host-needed": "the system RAM the model needs",
    "host-ram": "the available system RAM",
    "derived-limit": "the limit derived from config.json",
    "context": "the requested context",
    "kv-type-mismatch": "the mismatch between K and V cache types",
    "kernel-support": "what the attention kernels accept",
    "room-after-weights": "the GPU memory left beside the weights",
    "flags-not-accepted": "the flags the build no longer accepts",
    "build-options": "the options the build registers",
    "compute-buffer": "the compute buffer llama.cpp reserves",
    "room-for-compute": "the GPU memory left beside the weights and the KV cache",
    "load-time": "the time the model takes to load",
    "load-timeout": "how long the server waits for the load",
}

# A KV cache that failed in system RAM rather than on the GPU (llama.cpp with -nkvo or no GPU
# layers): the same cache is too big, but for the host's memory.
HOST_DIRECTION = Direction("host-needed", "host-ram")


def direction_of(error) -> Direction:
    """The record's own direction if it gives one, else its scenario's."""
    own = getattr(error, "direction", None)
    if own is not None:
        return Direction(own.too_big, own.too_small)
    return DIRECTIONS[error.scenario]


def fix_direction(error, fix) -> Direction:
    """The direction one fix answers: the error's, or the host-RAM one for a fix marked `memory: host`."""
    if getattr(fix, "memory", "gpu") == "host":
        return HOST_DIRECTION
    return direction_of(error)


def effect(lever: str, quantity: str) -> int:
    return LEVER_EFFECTS.get(lever, {}).get(quantity, 0)


def moves_right(direction: Direction, lever: str) -> bool:
    """Whether the lever shrinks what is too big or grows what is too small, and does neither the wrong way."""
    big, small = effect(lever, direction.too_big), effect(lever, direction.too_small)
    return (big < 0 or small > 0) and not (big > 0 or small < 0)


def why_wrong(direction: Direction, lever: str) -> str:
    big, small = effect(lever, direction.too_big), effect(lever, direction.too_small)
    if big > 0:
        return f"{lever} grows {QUANTITY_NAMES[direction.too_big]}, which is already too big"
    if small < 0:
        return f"{lever} shrinks {QUANTITY_NAMES[direction.too_small]}, which is already too small"
    return f"{lever} moves neither {QUANTITY_NAMES[direction.too_big]} (too big) nor {QUANTITY_NAMES[direction.too_small]} (too small)"


def gpu_levers(error) -> frozenset[str]:
    """The levers a page offers for the error's own engine: those the record names for the GPU case
    that move its direction the right way (a record naming a wrong one fails `check`)."""
    direction = direction_of(error)
    return frozenset(f.lever for f in error.fixes if getattr(f, "memory", "gpu") == "gpu" and moves_right(direction, f.lever))


def offered(error, engine: str, lever: str) -> bool:
    """Whether a page for `error` offers a command or table row applying `lever` in `engine`'s
    section: in the error's own engine, a lever its record names and the direction allows; in
    another engine's section (the same model in another runtime), any lever the direction allows.
    A block that names no lever (a helper that does not say) is left to the page lint."""
    if not lever:
        return True
    if engine == error.engine:
        return lever in gpu_levers(error)
    return moves_right(direction_of(error), lever)


def offered_levers(error, levers: tuple) -> list:
    """The engine's lever outcomes (LeverOutcome) a page of this error shows in its table."""
    return [lever for lever in levers if offered(error, error.engine, lever.lever)]


def needs_own_engine_command(error) -> bool:
    """Whether a page for `error` may show commands only if one is for the error's own engine. Weights
    too big for the GPU are the exception: another runtime that keeps some layers in system RAM
    (llama.cpp, Ollama) is itself a fix there."""
    return direction_of(error).too_big != "weights-on-gpu"


def _distinct_commands(blocks: list) -> list:
    """The first block of each command line: one invocation can serve two levers (llama-server's
    `-c N -np 1` both caps the context and keeps one slot), and a page offering both shows it once."""
    seen, kept = set(), []
    for block in blocks:
        key = (block.engine, block.text, block.env)
        if key not in seen:
            seen.add(key)
            kept.append(block)
    return kept


def offered_sections(error, sections: list[dict]) -> list[dict]:
    """command_sections' output with the blocks this error does not offer removed (and a section
    left empty dropped; one that came without blocks is a note and stays). Other engines' sections are
    alternatives to the reader's own commands, never a substitute: with no command of the error's own
    engine left, the page shows none (but see needs_own_engine_command)."""
    kept = []
    for section in sections:
        blocks = _distinct_commands([b for b in section["blocks"] if offered(error, section["engine"], getattr(b, "lever", ""))])
        if blocks or not section["blocks"]:
            kept.append({**section, "blocks": blocks})
    if needs_own_engine_command(error) and not any(section["engine"] == error.engine for section in kept):
        return []
    return kept
