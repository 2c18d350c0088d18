"""Command blocks for vLLM, SGLang, llama.cpp and Ollama, built from the engine's numbers and levers.

Every block keeps its argv and environment as data next to its text, so the build can check
each flag and value against the real CLI surfaces before anything is published.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping

from generator.engine.pairs import LeverOutcome, LlamaNumbers, OllamaNumbers, SglangNumbers, VllmNumbers
from generator.errors import Issue
from generator.launch.surface import (
    LLAMA_SERVER_SHORT,
    VLLM_SHORT,
    AddedFlag,
    RemovedFlag,
    check_command,
    check_command_at,
    parse_added_flags,
    parse_llama_server_flags,
    parse_ollama_env,
    parse_removed_flags,
    parse_sglang_args,
    parse_vllm_flags,
    release_key,
)
from generator.schema import Model, ModelVariant
from generator.units import GIB, MIB


@dataclass(frozen=True)
class CommandBlock:
    engine: str  # vllm | sglang | llamacpp | ollama | shell (not checked: systemctl, launchctl)
    title: str
    why: str
    text: str  # what the reader copies
    argv: tuple[str, ...] = ()  # the engine invocation, for the surface check
    env: tuple[tuple[str, str], ...] = ()  # environment the engine process reads
    language: str = "bash"
    lever: str = ""  # the schema Lever this block applies, for the direction check (generator/plan/advice.py)


# shlex.quote by its argument: pages repeat the same flags, values and repositories thousands of times.
_quote = lru_cache(maxsize=8192)(shlex.quote)


def _shell_join(argv: tuple[str, ...]) -> str:
    """shlex.join(argv)."""
    return " ".join(map(_quote, argv))


def _join(argv: tuple[str, ...]) -> str:
    # Break long invocations after the model so each flag reads on its own line.
    if len(argv) <= 4:
        return _shell_join(argv)
    head = _shell_join(argv[:3])
    rest = []
    i = 3
    while i < len(argv):
        if i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            rest.append(_shell_join(argv[i : i + 2]))
            i += 2
        else:
            rest.append(_quote(argv[i]))
            i += 1
    return " \\\n  ".join([head, *rest])


# --------------------------------------------------------------------------- vLLM


def vllm_argv(variant: ModelVariant, flags: tuple[str, ...]) -> tuple[str, ...]:
    return ("vllm", "serve", variant.hf_repo or "", *flags)


def vllm_blocks(model: Model, variant: ModelVariant, numbers: VllmNumbers) -> list[CommandBlock]:
    blocks = []
    for lever in numbers.levers:
        if lever.lever in ("bigger-gpu", "smaller-quant") or lever.max_len <= 0:
            continue
        argv = vllm_argv(variant, lever.flags)
        blocks.append(
            CommandBlock(
                engine="vllm",
                title=lever.label,
                why=lever.note,
                text=_join(argv),
                argv=argv,
                lever=lever.lever,
            )
        )
    return blocks


# --------------------------------------------------------------------------- SGLang

SGLANG_LAUNCH = ("python", "-m", "sglang.launch_server")


def sglang_argv(variant: ModelVariant, tp: int, fraction: float, context_length: int, kv_cache_dtype: str) -> tuple[str, ...]:
    argv = [*SGLANG_LAUNCH, "--model-path", variant.hf_repo or "", "--tp-size", str(tp),
            "--mem-fraction-static", f"{fraction:g}", "--context-length", str(context_length)]
    if kv_cache_dtype != "auto":
        argv += ["--kv-cache-dtype", kv_cache_dtype]
    return tuple(argv)


def _sglang_join(argv: tuple[str, ...]) -> str:
    # `python -m sglang.launch_server --model-path ORG/NAME`, then one flag and its value per line.
    head, rest = _shell_join(argv[:5]), argv[5:]
    pairs = [_shell_join(rest[i : i + 2]) for i in range(0, len(rest), 2)]
    return " \\\n  ".join([head, *pairs])


def sglang_blocks(model: Model, variant: ModelVariant, numbers: SglangNumbers) -> list[CommandBlock]:
    blocks = []
    for option in numbers.options:
        if option.context_length <= 0:
            continue
        context = f"{option.context_length:,} tokens"
        if option.lever == "tensor-parallel":
            gpus = "Two GPUs" if option.tp == 2 else f"{option.tp} GPUs"
            title = f"{gpus} (--tp-size {option.tp}){', fp8_e4m3 KV cache' if option.kv_cache_dtype != 'auto' else ''}: {context}"
        elif option.kv_cache_dtype != "auto":
            title = f"fp8_e4m3 KV cache: {context}"
        elif option.fits_full:
            title = f"The full context, {context}"
        else:
            title = f"Cap the context at {context}"
        per_token = f"{option.kv_bytes_per_token:,.0f}"
        why = (
            f"About {option.tokens:,} tokens of KV pool per GPU (estimated) at {per_token} bytes per token, with "
            f"--mem-fraction-static {option.mem_fraction_static:g}, SGLang {numbers.release}'s own default for this GPU"
            f"{' and TP ' + str(option.tp) if option.tp > 1 else ''}."
        )
        if not option.fits_full:
            why += f" The model's {numbers.config_context_len:,} tokens do not fit, so --context-length stays within the pool."
        if option.kv_cache_dtype != "auto":
            why += " fp8_e4m3 stores one byte per value instead of two, so the same pool holds twice the tokens."
        argv = sglang_argv(variant, option.tp, option.mem_fraction_static, option.context_length, option.kv_cache_dtype)
        blocks.append(CommandBlock("sglang", title, why, _sglang_join(argv), argv=argv))
    return blocks


# --------------------------------------------------------------------------- llama.cpp


# The levers llamacpp_blocks can apply: the page lint requires a llama.cpp record's first fix, when it is one
# of these, to have a command on its worked example.
LLAMACPP_COMMAND_LEVERS = frozenset({
    "clamp-context", "quantized-kv", "quantized-kv-same-context", "fewer-slots", "fewer-gpu-layers",
    "smaller-ubatch", "matching-kv-types", "enable-flash-attn", "drop-removed-flag",
})


def llamacpp_blocks(model: Model, variant: ModelVariant, numbers: LlamaNumbers) -> list[CommandBlock]:
    gguf = variant.gguf_file or "model.gguf"
    options: list[tuple[str, tuple[str, ...], str, str]] = []
    if numbers.max_ctx_f16 > 0:
        options.append(
            ("clamp-context",
                f"Cap the context at {numbers.max_ctx_f16:,} tokens",
                ("-c", str(numbers.max_ctx_f16), "-np", "1"),
                "The largest context, in steps of 256, whose f16 KV cache fits next to the weights on this GPU, with one slot.",
            )
        )
    if numbers.max_ctx_q8_0 > numbers.max_ctx_f16:
        options.append(
            ("quantized-kv",
                f"q8_0 KV cache: {numbers.max_ctx_q8_0:,} tokens",
                ("-c", str(numbers.max_ctx_q8_0), "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0"),
                "q8_0 stores 34 bytes per 32 values instead of 64, so the same memory holds about 1.9 times the tokens. Flash attention (the default, auto) turns on by itself for a quantized V cache.",  # noqa: E501
            )
        )
    if numbers.max_ctx_q4_0 > numbers.max_ctx_q8_0:
        options.append(
            ("quantized-kv",
                f"q4_0 KV cache: {numbers.max_ctx_q4_0:,} tokens",
                ("-c", str(numbers.max_ctx_q4_0), "-np", "1", "-ctk", "q4_0", "-ctv", "q4_0"),
                "q4_0 halves the cache again, at a measurable cost in quality on long contexts.",
            )
        )
    if not numbers.fits and numbers.gpu_layers_that_fit > 0:
        options.append(
            ("fewer-gpu-layers",
                f"Offload {numbers.gpu_layers_that_fit} of {numbers.num_layers} layers",
                ("-c", str(numbers.ctx_size), "-np", "1", "-ngl", str(numbers.gpu_layers_that_fit)),
                "Keeps the full context by leaving the rest of the layers (and their KV) in system RAM; generation slows down accordingly.",
            )
        )
    options += _llamacpp_more_options(numbers) + _llamacpp_setting_options(numbers)
    blocks = []
    for lever, title, flags, why in options:
        argv = ("llama-server", "-m", gguf, *flags)
        blocks.append(CommandBlock("llamacpp", title, why, _join(argv), argv=argv, lever=lever))
    return blocks


def _llamacpp_more_options(numbers: LlamaNumbers) -> list[tuple[str, str, tuple[str, ...], str]]:
    """The levers beyond a context cap: one slot for the whole cache, a q8_0 cache that frees memory
    at the same context, and partial offload at a short context when no layer fits beside the full one.
    Each page keeps only those its error's direction and record allow (plan/advice.py)."""
    options = []
    if numbers.max_ctx_f16 > 0:
        # llama-server gives each of `-np N` slots n_ctx / N cells (llama_context: n_ctx_seq =
        # n_ctx / n_seq_max, src/llama-context.cpp at b11434) and refuses a prompt of at least a slot's
        # cells (tools/server/server-context.cpp, exceed_context_size_error); `-np 1` gives one request all of them.
        options.append(
            ("fewer-slots",
                f"One slot with the whole {numbers.max_ctx_f16:,}-token cache",
                ("-c", str(numbers.max_ctx_f16), "-np", "1"),
                f"With `-np N` each slot holds only `-c`/N tokens. One slot gets all {numbers.max_ctx_f16:,}, the largest "
                "context, in steps of 256, whose f16 KV cache fits next to the weights on this GPU.",
            )
        )
    if numbers.fits and 0 < numbers.kv_bytes_q8_0 < numbers.kv_bytes:
        # q8_0 rows: 34 bytes per 32 values (ggml-common.h block_q8_0); a quantized V cache needs flash
        # attention, which -fa auto turns on (llama_init_from_model, src/llama-context.cpp).
        freed = (numbers.kv_bytes - numbers.kv_bytes_q8_0) / MIB
        options.append(
            ("quantized-kv-same-context",
                f"q8_0 KV cache at the same {numbers.ctx_size:,} tokens: {freed:,.2f} MiB freed",
                ("-c", str(numbers.ctx_size), "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"),
                f"The cache drops from {numbers.kv_bytes / MIB:,.2f} MiB to {numbers.kv_bytes_q8_0 / MIB:,.2f} MiB, and the "
                "memory it frees is left for the compute buffers that context shifts and graph reservations need. "
                "A quantized V cache needs flash attention, so `-fa on` is set.",
            )
        )
    if numbers.offload_ctx > 0 and numbers.offload_gpu_layers == 0:
        # -ngl 0 keeps every layer, and with it that layer's KV cache, in host memory (llama_model::load_tensors
        # places layers below n_layer - ngl on the CPU; src/llama-model.cpp at b11434).
        options.append(
            ("fewer-gpu-layers",
                f"All {numbers.num_layers} layers in system RAM (-ngl 0) at {numbers.offload_ctx:,} tokens",
                ("-c", str(numbers.offload_ctx), "-np", "1", "-ngl", "0"),
                f"One layer's weights, about {numbers.weights_bytes / (numbers.num_layers + 1) / GIB:,.2f} GiB, do not fit beside "
                f"llama.cpp's margin on this GPU, so no `-ngl` above 0 loads. With `-ngl 0` the {numbers.weights_bytes / GIB:,.2f} GiB "
                "of weights and the cache load into system RAM, which must hold them, and generation runs at CPU speed; "
                "a card or several with more memory is the fix that keeps it fast.",
            )
        )
    if numbers.offload_gpu_layers > 0:
        options.append(
            ("fewer-gpu-layers",
                f"Offload {numbers.offload_gpu_layers} of {numbers.num_layers} layers at {numbers.offload_ctx:,} tokens",
                ("-c", str(numbers.offload_ctx), "-np", "1", "-ngl", str(numbers.offload_gpu_layers)),
                f"Beside the full context's cache not one layer fits, so this starts at {numbers.offload_ctx:,} tokens, the "
                f"smallest context `--fit` goes down to, with the largest `-ngl` whose weights, cache and compute buffer fit. "
                "The other layers and their KV stay in system RAM, so generation is slower.",
            )
        )
    return options


def _fits_text(context: int, model_context: int, cache_type: str) -> str:
    if context >= model_context:
        return f"The model's whole context, {context:,} tokens, fits with the cache in {cache_type} next to the weights on this GPU."
    return f"{context:,} tokens is the largest context, in steps of 256, whose {cache_type} cache fits next to the weights on this GPU."


def _llamacpp_setting_options(numbers: LlamaNumbers) -> list[tuple[str, str, tuple[str, ...], str]]:
    """The levers that change a setting rather than the memory plan: a smaller micro-batch for a compute
    buffer that failed, K and V in one type for MLA models, flash attention for a quantized V cache, and
    the replacement of a removed loading flag. Each page keeps those its record names (plan/advice.py)."""
    options = []
    if numbers.fits and numbers.small_ubatch:
        freed = (numbers.total_bytes - numbers.total_bytes_small_ubatch) / MIB
        options.append(
            ("smaller-ubatch",
                f"-ub {numbers.small_ubatch}: compute buffer {numbers.compute_buffer_bytes / MIB:,.2f} MiB → "
                f"{numbers.compute_buffer_bytes_small_ubatch / MIB:,.2f} MiB",
                ("-c", str(numbers.ctx_size), "-np", "1", "-ub", str(numbers.small_ubatch)),
                f"llama.cpp reserves its compute buffer for the largest micro-batch it may run, min(`-c`, `-ub`) tokens, "
                f"at load and again after every context shift or defragmentation. With `-ub {numbers.small_ubatch}` instead "
                f"of {numbers.ubatch_size} the estimated buffer drops from {numbers.compute_buffer_bytes / MIB:,.2f} MiB to "
                f"{numbers.compute_buffer_bytes_small_ubatch / MIB:,.2f} MiB, {freed:,.2f} MiB more room beside the weights "
                f"and the cache, at the same {numbers.ctx_size:,} tokens. Prompts are processed {numbers.small_ubatch} tokens "
                "at a time, so prompt processing is slower. `-b` only caps `-ub` (the micro-batch is the smaller of the two), "
                "so a smaller `-b` alone does the same.",
            )
        )
    if 0 < numbers.kv_bytes_q8_0 < numbers.kv_bytes:
        # llama_init_from_model refuses K and V types that differ for MLA models (src/llama-context.cpp);
        # with -fa auto a quantized V cache turns flash attention on by itself (PR #25871).
        options.append(
            ("matching-kv-types",
                f"K and V both q8_0 at {numbers.ctx_size:,} tokens: {numbers.kv_bytes_q8_0 / MIB:,.2f} MiB of cache",
                ("-c", str(numbers.ctx_size), "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0"),
                f"`-ctk` and `-ctv` name the same type, which a model that caches one latent per token accepts. The cache "
                f"of {numbers.ctx_size:,} tokens takes {numbers.kv_bytes_q8_0 / MIB:,.2f} MiB in q8_0 instead of "
                f"{numbers.kv_bytes / MIB:,.2f} MiB in f16. A quantized V cache needs flash attention, which the default "
                "`-fa auto` turns on by itself."
                + ("" if numbers.fits else " Weights and cache do not all fit on this GPU: `--fit`, on by default, keeps "
                   "`-c` and loads only the layers that fit, the rest into system RAM, which must hold them."),
            )
        )
    if numbers.max_ctx_q8_0 > 0:
        options.append(
            ("enable-flash-attn",
                f"Flash attention on, q8_0 KV cache: {numbers.max_ctx_q8_0:,} tokens",
                ("-c", str(numbers.max_ctx_q8_0), "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"),
                "`-fa on` lets llama.cpp read a quantized V cache, which without flash attention it cannot. "
                + _fits_text(numbers.max_ctx_q8_0, numbers.ctx_size, "q8_0"),
            )
        )
    context = numbers.max_ctx_f16 or numbers.ctx_size
    # --load-mode replaced --mmap, --no-mmap, --mlock and --direct-io (data/surfaces/removed-flags.txt).
    options.append(
        ("drop-removed-flag",
            "--load-mode none in place of --no-mmap",
            ("-c", str(context), "-np", "1", "--load-mode", "none"),
            "The same launch in the form current builds accept: `--load-mode none` reads the weights without mapping the "
            "file, as `--no-mmap` did; `--load-mode mmap`, `mlock` and `dio` stand for `--mmap`, `--mlock` and "
            "`--direct-io`. "
            + (_fits_text(numbers.max_ctx_f16, numbers.ctx_size, "f16") if numbers.max_ctx_f16 else
               "No context fits next to the weights on this GPU: `--fit`, on by default, keeps `-c` and loads only the layers that fit."),
        )
    )
    return options


# --------------------------------------------------------------------------- Ollama


def ollama_blocks(model: Model, variant: ModelVariant, numbers: OllamaNumbers) -> list[CommandBlock]:
    tag = variant.ollama_tag or "MODEL"
    blocks = []
    best_ctx, cache_type = numbers.max_num_ctx_f16, ""
    if numbers.max_num_ctx_q8_0 > numbers.max_num_ctx_f16:
        best_ctx, cache_type = numbers.max_num_ctx_q8_0, "q8_0"
    if best_ctx <= 0:
        return _ollama_smaller_cache(tag, numbers)
    lever = "quantized-kv" if cache_type else "clamp-context"
    env = [("OLLAMA_CONTEXT_LENGTH", str(best_ctx)), ("OLLAMA_NUM_PARALLEL", "1")]
    if cache_type:
        env.insert(0, ("OLLAMA_KV_CACHE_TYPE", cache_type))
    env_text = " ".join(f"{k}={v}" for k, v in env)
    blocks.append(
        CommandBlock(
            "ollama",
            "Set it on the server (foreground)",
            "These variables are read by `ollama serve` when it loads a model, not by `ollama run`, which is only a client. Stop the running server first.",
            f"{env_text} ollama serve\n# in another terminal:\nollama run {tag}",
            argv=("ollama", "serve"),
            env=tuple(env),
            lever=lever,
        )
    )
    systemd_lines = "\n".join(f'Environment="{k}={v}"' for k, v in env)
    blocks.append(
        CommandBlock(
            "ollama",
            "Linux service (systemd)",
            "The packaged server runs as a systemd unit, so the variables go in an override, then the unit restarts.",
            f"sudo systemctl edit ollama.service\n# add under [Service]:\n{systemd_lines}\n"
            "sudo systemctl daemon-reload && sudo systemctl restart ollama",
            argv=("ollama", "serve"),
            env=tuple(env),
            lever=lever,
        )
    )
    launchctl = "\n".join(f"launchctl setenv {k} {v}" for k, v in env)
    blocks.append(
        CommandBlock(
            "ollama",
            "macOS app",
            "The menu-bar app does not read your shell's environment; launchctl sets it for the app, which must then restart.",
            f"{launchctl}\n# then quit and reopen Ollama",
            argv=("ollama", "serve"),
            env=tuple(env),
            lever=lever,
        )
    )
    # A Modelfile carries num_ctx but not the cache type: without the server's q8_0 it gets the f16 context.
    model_ctx = best_ctx if not cache_type else numbers.max_num_ctx_f16
    if model_ctx <= 0:
        return blocks
    # Named by its context in thousands; a context under 1,024 tokens by its count, not "0k".
    model_name = f"{tag.split(':')[0]}-{f'{model_ctx // 1024}k' if model_ctx >= 1024 else model_ctx}"
    blocks.append(
        CommandBlock(
            "ollama",
            "Per model (Modelfile)",
            "num_ctx is the one memory setting a model or request can carry; the KV cache type stays a server setting."
            + (f" This is the f16 context; with OLLAMA_KV_CACHE_TYPE=q8_0 on the server, {best_ctx} fits." if cache_type else ""),
            f"cat > Modelfile <<'EOF'\nFROM {tag}\nPARAMETER num_ctx {model_ctx}\nEOF\nollama create {model_name} -f Modelfile\nollama run {model_name}",
            argv=("ollama", "create"),
            lever="clamp-context",
        )
    )
    return blocks


def _ollama_smaller_cache(tag: str, numbers: OllamaNumbers) -> list[CommandBlock]:
    """When no context fits on the GPU, what still shrinks the load: the cache in q8_0 and one slot."""
    if numbers.kv_bytes_q8_0 >= numbers.kv_bytes:
        return []
    env = (("OLLAMA_KV_CACHE_TYPE", "q8_0"), ("OLLAMA_NUM_PARALLEL", "1"))
    saved = (numbers.kv_bytes - numbers.kv_bytes_q8_0) / MIB
    return [
        CommandBlock(
            "ollama",
            f"q8_0 KV cache, one slot: {saved:,.2f} MiB less",
            f"At num_ctx {numbers.num_ctx:,} the cache takes {numbers.kv_bytes / MIB:,.2f} MiB in f16 and "
            f"{numbers.kv_bytes_q8_0 / MIB:,.2f} MiB in q8_0. The model does not fit on this GPU at any context, "
            "so this only trims what goes to system RAM; if RAM is short by more, a smaller tag is the fix.",
            " ".join(f"{k}={v}" for k, v in env) + f" ollama serve\n# in another terminal:\nollama run {tag}",
            argv=("ollama", "serve"),
            env=env,
            lever="quantized-kv",
        )
    ]


def lever_by_id(levers: tuple[LeverOutcome, ...], lever_id: str) -> LeverOutcome | None:
    for lever in levers:
        if lever.lever == lever_id:
            return lever
    return None


# --------------------------------------------------------------------------- the surface check

_PARSERS = {"vllm": parse_vllm_flags, "sglang": parse_sglang_args, "llamacpp": parse_llama_server_flags, "ollama": parse_ollama_env}
# Engines whose flags changed between releases in ways data/surfaces/removed-flags.txt and added-flags.txt record.
_RELEASE_CHECKED = ("vllm", "llamacpp")


class Surfaces(dict):
    """engine -> the long flags (Ollama: the variables) of the newest release read, plus what the
    release check needs: the release the site's pages name per engine (data/engines.yaml) and the
    flags later releases removed or added. Without releases it is the plain newest-surface check."""

    def __init__(self, flags: Mapping[str, frozenset[str]], releases: Mapping[str, str] | None = None,
                 removed: Mapping[tuple[str, str], RemovedFlag] | None = None,
                 added: Mapping[tuple[str, str], AddedFlag] | None = None) -> None:
        super().__init__(flags)
        self.releases = dict(releases or {})
        self.removed = dict(removed or {})
        self.added = dict(added or {})
        # (engine, argv, env) -> what command_problems found: pages repeat the same commands, and the
        # surfaces are not changed once read.
        self.problems: dict[tuple, list[str]] = {}


def parse_surfaces(texts: Mapping[str, str], releases: Mapping[str, str] | None = None) -> Surfaces:
    """The surface files' texts (load.SURFACE_FILES; "removed" and "added" are the release records)."""
    flags = {engine: _PARSERS[engine](text) for engine, text in texts.items() if engine in _PARSERS}
    removed = parse_removed_flags(texts["removed"]) if "removed" in texts else {}
    added = parse_added_flags(texts["added"]) if "added" in texts else {}
    return Surfaces(flags, releases, removed, added)


def dataset_surfaces(dataset) -> Surfaces:
    """The surfaces of a loaded Dataset, each checked at the release data/engines.yaml names for its engine."""
    return parse_surfaces(dataset.surfaces, {engine_id: engine.version for engine_id, engine in dataset.engines.items()})


def _flag_check(engine: str, argv: tuple[str, ...], surfaces: Mapping[str, frozenset[str]]) -> list[str]:
    """check_command at the release the pages name, when it is known; a flag that release still had but a
    later one removed is refused too, since readers on a newer build would get an error."""
    releases = getattr(surfaces, "releases", {})
    release = releases.get(engine)
    if engine not in _RELEASE_CHECKED or not release:
        return check_command(engine, argv, surfaces[engine])
    removed = surfaces.removed
    problems = check_command_at(engine, argv, surfaces[engine], release, removed, surfaces.added)
    key = release_key(release)
    short = VLLM_SHORT if engine == "vllm" else LLAMA_SERVER_SHORT
    for token in argv:
        name = token.split("=", 1)[0]
        entry = removed.get((engine, name)) or removed.get((engine, short.get(name, name)))
        if entry is not None and key <= release_key(entry.last_seen):
            use = f"; use {entry.replaced_by}" if entry.replaced_by else ""
            problems.append(f"{token} still works in {release} but was removed in {entry.removed_in}{use}")
    return problems


def command_problems(block: CommandBlock, surfaces: Mapping[str, frozenset[str]]) -> list[str]:
    """What the real CLI would reject in this block, at the release the pages name; empty when every flag,
    variable and value exists there and in the newest release read."""
    if block.engine == "vllm":
        return _flag_check("vllm", block.argv[3:], surfaces)
    if block.engine == "sglang":
        return check_command("sglang", block.argv, surfaces["sglang"])
    if block.engine == "llamacpp":
        return _flag_check("llamacpp", block.argv, surfaces)
    if block.engine == "ollama":
        problems = check_command("ollama", [f"{k}={v}" for k, v in block.env] + list(block.argv), surfaces["ollama"]) if block.argv[:2] == ("ollama", "serve") else []
        if block.env:
            problems += check_command("ollama", dict(block.env), surfaces["ollama"])
        return problems
    return []


def _block_problems(block: CommandBlock, surfaces: Mapping[str, frozenset[str]]) -> list[str]:
    """command_problems(block, surfaces), kept in the surfaces' memo when they have one."""
    memo = getattr(surfaces, "problems", None)
    if memo is None:
        return command_problems(block, surfaces)
    key = (block.engine, block.argv, block.env)
    found = memo.get(key)
    if found is None:
        found = memo[key] = command_problems(block, surfaces)
    return found


def verify_commands(blocks_by_page: Iterable[tuple[str, Iterable[CommandBlock]]], surfaces: Mapping[str, frozenset[str]]) -> list[Issue]:
    """Every block on every page against the CLI surfaces; one Issue per problem, naming the page."""
    issues = []
    checked: dict[CommandBlock, list[str]] = {}
    for url, blocks in blocks_by_page:
        for block in blocks:
            if block not in checked:
                checked[block] = _block_problems(block, surfaces)
            for problem in checked[block]:
                issues.append(Issue(f"site{url}", 1, 0, f"command {block.title!r}", problem, "Fix the command builder in generator/launch/commands.py"))
    return issues
