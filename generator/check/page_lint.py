"""The page lint: every page right for the error its reader pasted.

Run by `kvtriage check` and by every build, over every page:

- record_problems: each error record's fixes move its direction the right way (advice.py); its
  worked example reaches the failure on the release the page names, with no negative budget
  unless the error is that budget; the first fix it names appears in the example's commands
  when it is a fix a command applies (vLLM's outcomes, or llama-server's command builder).
- advice_problems: on every error and pair page, each command block applies a lever the page may
  offer, moves the failing number the right way (a smaller context, a lower or higher
  utilization, a smaller -ub than the one that failed), and carries only numbers the engine
  computed for that page (-c, -ngl, -ub); the lever table holds only the engine's outcomes.
- advice_problems also refuses a page whose commands are all for other engines than its error's.
- advice_problems also refuses, on a unified-memory module's page (Jetson, DGX Spark), a command or lever row
  that splits the model over more GPUs than the host has (one).
- advice_problems also refuses a page whose error signature is not its record's own error (its pattern).
- release_range_problems: a text's source cites no release tag outside the text's own `versions`.
- text_problems: no internal note (repository paths, search notes, file ids) in what readers read,
  and no ghost flag (--kv-cache-memory) in it.

The flags themselves are checked by commands.verify_commands against the CLI surface of the release
the pages name (data/engines.yaml): a flag that release lacks, or that a later release removed, fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Mapping

from generator.engine.pairs import unsizable_variants
from generator.engine.vllm import unified_memory_gpu
from generator.errors import Issue
from generator.launch.commands import LLAMACPP_COMMAND_LEVERS, llamacpp_blocks
from generator.plan.advice import QUANTITY_NAMES, direction_of, fix_direction, gpu_levers, moves_right, needs_own_engine_command, why_wrong
from generator.plan.views import shows_own_error
from generator.units import GIB

# Phrases and paths that belong in YAML comments and the repository, never on a page. Lowercase.
# The notes folder outside the repository is spelled in parts, so that this refusal is not itself
# taken for a pointer to it (tests/test_standalone.py).
_NOTES = "shared"
FORBIDDEN_PHRASES: tuple[str, ...] = (
    f"{_NOTES}/reference",
    f"../{_NOTES}",
    "tests/data",
    "tests/fixtures",
    "generator/",
    "exact-text search",
    "find_string",
    "read_file",
    "file id",
    "seed case",
    "found by search",
    "the search does not name",
)

# Scenarios the engine decides for a pair (pairs.compute_pair): an example with one of these must
# hit it. The others (config errors, runner crashes) the engine cannot reproduce.
MODELLED = frozenset({
    "vllm-kv-too-small", "vllm-no-cache-blocks", "vllm-weights-oom", "vllm-startup-free-memory",
    "vllm-sampler-warmup-oom", "llamacpp-kv-alloc", "llamacpp-context-fail", "ollama-partial-offload",
    "sglang-no-kv-pool", "sglang-pool-short",
})
# Scenarios that fail before or while loading the weights: the failure is that budget, so the
# worked example may show a negative KV cache.
NEGATIVE_BUDGET_OK = frozenset({"weights-on-gpu", "kv-budget"})
# Levers some command block applies; a record's first fix among these must appear in the example's commands.
COMMAND_LEVERS = frozenset({
    "clamp-context", "fp8-kv", "quantized-kv", "enforce-eager", "raise-utilization", "lower-utilization",
    "tensor-parallel", "fewer-gpu-layers", "fewer-seqs",
})


def _line_of(root: Path | None, path: str, needle: str, start: int = 1) -> int:
    """Line 1: only load/ reads content files (tests/test_layering.py); the field names the place."""
    return 1


def _example_numbers(error, results):
    ex = error.example
    return results.get((ex.gpu, ex.model, ex.variant))


# Where each engine's releases are tagged: a text's source cites files at these tags.
_ENGINE_REPOS = {"vllm": "vllm-project/vllm", "llamacpp": "ggml-org/llama.cpp", "ollama": "ollama/ollama", "sglang": "sgl-project/sglang"}
_RELEASE = r"v?(b\d+|\d+(?:\.\d+)+(?:\.x)?)"
_RANGE = re.compile(r"(?:(up to)\s+)?" + _RELEASE + r"(?:-rc\d+)?(?:\s+to\s+" + _RELEASE + r"(?:-rc\d+)?)?")


def _release_tuple(release: str) -> tuple[int, ...]:
    text = release.removeprefix("v")
    if text.startswith("b"):
        return (int(text[1:]),)
    return tuple(int(part) for part in text.split(".") if part != "x")


def release_range_problems(error) -> list[tuple[int, str]]:
    """(text index, message) for each release tag a text's source cites outside the text's own
    `versions` ("0.9.1 to 0.13.0", "up to 0.10.2", "b9093 to b11434"; parentheses are notes). A range
    given in other words (commits, years) is not checked."""
    found = []
    for i, text in enumerate(error.texts):
        ranges = []
        for match in _RANGE.finditer(re.sub(r"\([^)]*\)", "", text.versions)):
            up_to, first, last = match.groups()
            ranges.append((None if up_to else _release_tuple(first), _release_tuple(last or first), first.startswith("b")))
        if not ranges:
            continue
        repo = _ENGINE_REPOS["llamacpp" if ranges[0][2] else error.engine]
        for tag in re.findall(r"github\.com/" + re.escape(repo) + r"/(?:blob|tree)/" + _RELEASE + r"(?:-rc\d+)?/", str(text.source)):
            cited = _release_tuple(tag)
            # An upper bound matches every release it prefixes: "0.13.x" and "0.13.0" both cover 0.13.0.
            if not any((low is None or cited >= low) and cited[: len(high)] <= high for low, high, _ in ranges):
                found.append((i, f"{error.id}: the source cites {tag}, outside the text's releases ({text.versions})"))
    return found


def sizing_problems(dataset) -> list[Issue]:
    """The model builds no engine that runs them can size (engine.pairs.unsizable_variants)."""
    return [Issue(dataset.origins.get(f"model:{model_id}", "data/models.yaml"), 1, 0, f"models.{model_id}.variants[{i}]",
                  f"{model_id} {dataset.models[model_id].variants[i].id}: {why}",
                  "Drop the build, or give it a format whose engine models this architecture")
            for model_id, i, why in unsizable_variants(dataset)]


def record_problems(dataset, results, root: Path | None = None) -> list[Issue]:
    issues: list[Issue] = []
    reached = {scenario for numbers in results.values() for scenario in numbers.scenarios}
    for error in dataset.errors.values():
        path = dataset.origins.get(f"error:{error.id}", error.id)
        for i, message in release_range_problems(error):
            issues.append(Issue(path, _line_of(root, path, "texts:"), 0, f"texts[{i}].versions", message,
                                "Date the text by every release that prints it, from the source at each tag"))
        direction = direction_of(error)
        if error.pair_pages and error.scenario not in reached:
            issues.append(Issue(path, _line_of(root, path, "pair_pages:"), 0, "pair_pages",
                                f"{error.id}: no pair of the catalog reaches {error.scenario}, so no pair page would be built",
                                "Drop pair_pages, or give the catalog what the engine needs to reach it"))
        fixes_at = _line_of(root, path, "fixes:")
        for i, fix in enumerate(error.fixes):
            d = fix_direction(error, fix)
            if not moves_right(d, fix.lever):
                issues.append(Issue(path, _line_of(root, path, f"lever: {fix.lever}", fixes_at), 0, f"fixes[{i}].lever",
                                    f"{error.id}: {why_wrong(d, fix.lever)}",
                                    "Offer only levers that shrink what is too big or grow what is too small (generator/plan/advice.py), or set `direction` on the record"))
        numbers = _example_numbers(error, results)
        if numbers is None:
            continue
        at = _line_of(root, path, "example:")
        ex = error.example
        where = f"{ex.gpu} / {ex.model} {ex.variant}"
        if error.scenario in MODELLED and error.direction is None and error.scenario not in numbers.scenarios:
            found = ", ".join(numbers.scenarios) or "starts"
            issues.append(Issue(path, at, 0, "example",
                                f"{error.id}: the worked example {where} does not reach {error.scenario} (the engine says: {found})",
                                "Pick a pair that fails this way on the release the page names, or give the settings it failed with"))
        v = numbers.vllm
        if v is not None and ((ex.free_gib is not None and v.free_bytes != round(ex.free_gib * GIB))
                              or (ex.gpu_memory_utilization is not None and v.utilization != ex.gpu_memory_utilization)):
            issues.append(Issue(path, at, 0, "example",
                                f"{error.id}: the worked example {where} is computed with other settings (a featured pair or another example fixes them)",
                                "Pick a pair no featured pair or other example sets"))
        if error.engine == "vllm" and v is not None:
            earlier = {"vllm-startup-free-memory", "vllm-weights-oom", "vllm-no-cache-blocks", "vllm-kv-too-small"} & set(numbers.scenarios)
            if error.direction is not None and direction.too_big == "warmup-peak" and earlier:
                # A warm-up or capture runs after the KV cache is allocated: the pair must get that far.
                issues.append(Issue(path, at, 0, "example",
                                    f"{error.id}: the worked example {where} fails earlier ({', '.join(sorted(earlier))}), before any warm-up",
                                    "Pick a pair that passes the KV cache check on the release the page names"))
            if v.available_bytes < 0 and direction.too_small not in NEGATIVE_BUDGET_OK and direction.too_big not in NEGATIVE_BUDGET_OK:
                issues.append(Issue(path, at, 0, "example",
                                    f"{error.id}: the worked example {where} shows a negative KV cache ({v.available_bytes / GIB:.2f} GiB), "
                                    f"so it fails before {QUANTITY_NAMES[direction.too_big]} matters",
                                    "Pick a pair whose weights fit the budget"))
        first = next((f.lever for f in error.fixes if f.memory == "gpu"), None)
        if error.engine == "llamacpp" and first in LLAMACPP_COMMAND_LEVERS and first in gpu_levers(error):
            missing = _llamacpp_first_fix_missing(dataset, error, numbers, first)
            if missing is not None:
                issues.append(Issue(path, _line_of(root, path, f"lever: {first}", fixes_at), 0, "fixes[0]",
                                    f"{error.id}: the first fix ({first}) has no llama-server command on the worked example {where}; "
                                    f"the builder offers {missing or 'none'}",
                                    "Name first a fix the example's commands apply, or pick an example the engine prices it for"))
        if first in COMMAND_LEVERS and first in gpu_levers(error):
            levers = {getattr(o, "lever", "") for o in (v.levers if v is not None else ())}
            if error.engine == "vllm" and first not in levers:
                issues.append(Issue(path, _line_of(root, path, f"lever: {first}", fixes_at), 0, "fixes[0]",
                                    f"{error.id}: the first fix ({first}) has no command on the worked example {where}; the engine offers {sorted(levers) or 'none'}",
                                    "Name first a fix the example's commands apply, or pick an example the engine prices it for"))
    return issues


def _llamacpp_first_fix_missing(dataset, error, numbers, first: str) -> list[str] | None:
    """None when the example's llama-server commands apply `first`; else the levers they do apply."""
    ex = error.example
    model = dataset.models.get(ex.model)
    variant = next((v for v in model.variants if v.id == ex.variant), None) if model is not None else None
    if variant is None or numbers.llamacpp is None:
        return []
    levers = sorted({block.lever for block in llamacpp_blocks(model, variant, numbers.llamacpp)})
    return None if first in levers else levers


# --------------------------------------------------------------------------- pages


def _flag_values(argv: Iterable[str], flag: str) -> list[str]:
    argv = list(argv)
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]


# The flags that split one model over several GPUs of a host: vllm serve's and SGLang's.
_PARALLEL_FLAGS = ("--tensor-parallel-size", "-tp", "--pipeline-parallel-size", "-pp", "--tp-size", "--tp", "--pp-size")


def advice_problems(url: str, view: Mapping) -> list[Issue]:
    """What is wrong with one error or pair page's advice; empty for other pages."""
    error = view.get("error") if hasattr(view, "get") else None
    numbers = view.get("numbers") if error is not None else None
    if error is None or numbers is None:
        return []
    issues: list[Issue] = []
    direction = direction_of(error)
    own = gpu_levers(error)

    def problem(what: str, message: str, fix: str = "Fix the planner in generator/plan/planner.py or the builders in generator/launch/commands.py") -> None:
        issues.append(Issue(f"site{url}", 1, 0, what, message, fix))

    sections = view.get("commands", ())
    if sections and needs_own_engine_command(error) and not any(section["engine"] == error.engine for section in sections):
        problem("commands", f"{error.id} page gives commands for {', '.join(sorted({s['engine'] for s in sections}))} only, "
                            f"none for {error.engine}, the engine whose error the reader pasted")
    for section in sections:
        engine = section["engine"]
        engine_numbers = getattr(section.get("numbers") or numbers, engine, None)
        for block in section["blocks"]:
            lever = getattr(block, "lever", "")
            what = f"command {block.title!r}"
            if not lever:
                continue
            if engine == error.engine and lever not in own:
                problem(what, f"{error.id} page offers {lever}, which its record does not name or which moves the wrong way")
            elif not moves_right(direction, lever):
                problem(what, f"{error.id} page offers {lever}: {why_wrong(direction, lever)}")
            # A section for another engine or build is an alternative, not a change to what failed:
            # its numbers must be the engine's, but "below what failed" applies to the reader's own run.
            own_run = engine == error.engine and not section.get("other_build")
            issues.extend(_number_problems(url, what, block, lever if own_run else "", engine,
                                           engine_numbers, direction))
    shown = view.get("error_text")
    if shown and not shows_own_error(error, shown):
        problem("error_text", f"{error.id} page shows another error as its signature: {shown.splitlines()[0][:100]!r}",
                "Show the engine's text only when the record's pattern matches it (generator/plan/views.py error_text)")
    gpu = view.get("gpu")
    if gpu is not None and unified_memory_gpu(gpu.name):
        # A unified-memory module (Jetson, DGX Spark) is the one GPU of its host: no second one to split over.
        for section in sections:
            for block in section["blocks"]:
                ranks = [int(v) for flag in _PARALLEL_FLAGS for v in _flag_values(block.argv, flag)]
                if any(r > 1 for r in ranks):
                    problem(f"command {block.title!r}", f"splits the model over {max(ranks)} GPUs, but the {gpu.name} is the one GPU of its host")
        for lever in view.get("levers", ()):
            if getattr(lever, "gpus", 1) > 1:
                problem(f"lever {lever.label!r}", f"a lever row on {lever.gpus} GPUs, but the {gpu.name} is the one GPU of its host")
    if numbers.vllm is not None:
        known = set(numbers.vllm.levers)
        for lever in view.get("levers", ()):
            if lever not in known:
                problem(f"lever {lever.label!r}", "a lever row that is not the engine's outcome for this pair")
            elif error.engine == "vllm" and lever.lever not in own:
                problem(f"lever {lever.label!r}", f"{error.id} page lists {lever.lever}, which moves the wrong way or the record does not name")
    return issues


def _number_problems(url: str, what: str, block, lever: str, engine: str, engine_numbers, direction) -> list[Issue]:
    out: list[Issue] = []
    argv = block.argv

    def problem(message: str) -> None:
        out.append(Issue(f"site{url}", 1, 0, what, message, "Build commands from the engine's numbers for this page"))

    if engine == "vllm":
        # The section may run another build of the model; its numbers are the section's.
        v = engine_numbers
        if v is None:
            return out
        flags = tuple(argv[3:])
        outcome = next((o for o in v.levers if o.lever == getattr(block, "lever", "") and tuple(o.flags) == flags), None)
        if outcome is None:
            problem(f"vllm serve flags {' '.join(flags)} are not an engine outcome for this pair")
            return out
        for value in _flag_values(flags, "--max-model-len"):
            if int(value) != outcome.max_len:
                problem(f"--max-model-len {value} differs from the engine's {outcome.max_len}")
        utils = [float(u) for u in _flag_values(flags, "--gpu-memory-utilization")]
        if lever == "lower-utilization" and any(u >= v.utilization for u in utils):
            problem(f"lowers the utilization to {utils[0]:.2f}, not below the {v.utilization:.2f} that failed")
        if lever == "raise-utilization" and any(u <= v.utilization for u in utils):
            problem(f"raises the utilization to {utils[0]:.2f}, not above the {v.utilization:.2f} that failed")
        if lever == "lower-utilization" and v.free_bytes is not None:
            from generator.engine.vllm import requested_bytes
            if any(requested_bytes(v.total_memory_bytes, u) > v.free_bytes for u in utils):
                problem(f"--gpu-memory-utilization {utils[0]:.2f} requests more than the {v.free_bytes / GIB:.2f} GiB free")
        if lever == "clamp-context":
            for value in _flag_values(flags, "--max-model-len"):
                if direction.too_big == "context":  # the reader asked above the derived limit: clamp to it
                    if int(value) > v.config_max_len:
                        problem(f"--max-model-len {value} is above the derived limit {v.config_max_len:,}")
                elif int(value) >= v.max_model_len:
                    problem(f"--max-model-len {value} is not below the {v.max_model_len:,} that failed")
    elif engine == "llamacpp":
        if engine_numbers is not None:
            for message in _llamacpp_problems(block.argv, lever, engine_numbers):
                problem(message)
    elif engine == "sglang":
        s = engine_numbers
        if s is None:
            return out
        values = {flag: _flag_values(argv, flag) for flag in ("--tp-size", "--mem-fraction-static", "--context-length", "--kv-cache-dtype")}
        options = [o for o in s.options
                   if values["--tp-size"] == [str(o.tp)] and values["--context-length"] == [str(o.context_length)]
                   and [float(f) for f in values["--mem-fraction-static"]] == [o.mem_fraction_static]
                   and values["--kv-cache-dtype"] == ([] if o.kv_cache_dtype == "auto" else [o.kv_cache_dtype])]
        if not options:
            problem(f"sglang.launch_server flags {' '.join(argv[3:])} are not an SGLang option the engine computed for this pair")
            return out
        one = s.one_gpu
        if lever in ("fp8-kv", "tensor-parallel") and one is not None and one.tokens and options[0].tokens <= one.tokens:
            problem(f"{lever} gives a pool of {options[0].tokens:,} tokens, not more than the {one.tokens:,} that failed")
    elif engine == "ollama":
        o = engine_numbers
        if o is None:
            return out
        env = dict(block.env)
        allowed = {o.max_num_ctx_f16, o.max_num_ctx_q8_0}
        ctx = env.get("OLLAMA_CONTEXT_LENGTH")
        for value in _flag_values(block.text.split(), "num_ctx"):
            if int(value) > o.max_num_ctx_f16 and env.get("OLLAMA_KV_CACHE_TYPE") is None:
                problem(f"num_ctx {value} fits only with a q8_0 cache, which this block does not set (f16 fits {o.max_num_ctx_f16:,})")
        if ctx is not None:
            if int(ctx) not in allowed:
                problem(f"OLLAMA_CONTEXT_LENGTH={ctx} is none of the engine's contexts for this pair ({sorted(allowed)})")
            if lever == "clamp-context" and not o.fits and int(ctx) >= o.num_ctx:
                problem(f"OLLAMA_CONTEXT_LENGTH={ctx} is not below the {o.num_ctx:,} that failed")
    return out


def _llamacpp_problems(argv, lever: str, l) -> list[str]:
    """A llama-server block's -c and -ngl against the engine's numbers for the pair."""
    out: list[str] = []
    allowed = {l.max_ctx_f16, l.max_ctx_q8_0, l.max_ctx_q4_0, l.ctx_size} | ({l.offload_ctx} if l.offload_ctx else set())
    contexts = _flag_values(argv, "-c")
    for value in contexts:
        if int(value) not in allowed:
            out.append(f"-c {value} is none of the engine's contexts for this pair ({sorted(allowed)})")
        if lever == "clamp-context" and int(value) >= l.n_ctx:
            out.append(f"-c {value} is not below the {l.n_ctx:,} that failed")
    # Partial offload at the short context has its own layer count (pairs._short_context_offload).
    layers = l.offload_gpu_layers if l.offload_ctx and contexts == [str(l.offload_ctx)] else l.gpu_layers_that_fit
    for value in _flag_values(argv, "-ngl"):
        if int(value) != layers:
            out.append(f"-ngl {value} differs from the engine's {layers} at -c {', '.join(contexts) or 'unset'}")
    # The compute buffer the block states is the engine's at its -ub; a smaller-ubatch block must lower it.
    for value in _flag_values(argv, "-ub"):
        if int(value) != l.small_ubatch:
            out.append(f"-ub {value} differs from the engine's {l.small_ubatch or 'none'} for this pair")
        elif lever == "smaller-ubatch" and int(value) >= l.ubatch_size:
            out.append(f"-ub {value} is not below the {l.ubatch_size} that failed")
    return out


# --------------------------------------------------------------------------- reader-facing text

_FORBIDDEN = re.compile("|".join(re.escape(p) for p in FORBIDDEN_PHRASES), re.IGNORECASE)
# A flag that vLLM's docs and its own log suggestion name but `vllm serve` does not register
# (launch/surface.py VLLM_GHOST); the size that log suggests double-counts CUDA-graph memory.
_GHOST_FLAG = re.compile(r"--kv-cache-memory(?![-\w])")


# The only non-ASCII letters re.IGNORECASE takes for an ASCII one besides the Kelvin sign, which
# lower() maps to "k": a text without them holds a phrase exactly when its lower() does.
_FOLDED_LETTERS = "\u0130\u0131\u017f"
_PHRASES_LOWER = tuple(phrase.lower() for phrase in FORBIDDEN_PHRASES)


def _may_quote_note(text: str) -> bool:
    """False only when _FORBIDDEN finds nothing in text: a substring test is a hundred times faster
    than the case-blind pattern over a whole page."""
    if any(letter in text for letter in _FOLDED_LETTERS):
        return True
    lowered = text.lower()
    return any(phrase in lowered for phrase in _PHRASES_LOWER)


# A sentence that ends twice: items that end in a full stop joined by "; " or followed by ". " (an
# ellipsis is three stops, and the character before its last two is a stop, not a letter).
_DOUBLE_STOP = re.compile(r"[a-z0-9)]\.(?:;|\.\s)")


def text_problems(path: str, text: str) -> list[Issue]:
    """Internal notes in one rendered file (HTML or Markdown twin), each at its line."""
    issues = []
    for match in _DOUBLE_STOP.finditer(text) if (".;" in text or ".." in text) else ():
        line = text.count("\n", 0, match.start()) + 1
        issues.append(Issue(f"site/{path}", line, 0, "text", f"a sentence ends twice: {text[max(0, match.start() - 30):match.end() + 10]!r}",
                            "Join sentences that end in a full stop as a list, not with '; ' or another stop"))
    for match in _FORBIDDEN.finditer(text) if _may_quote_note(text) else ():
        line = text.count("\n", 0, match.start()) + 1
        issues.append(Issue(f"site/{path}", line, 0, "text", f"reader-facing text quotes an internal note: {match.group(0)!r}",
                            "Give readers a URL they can open; keep internal notes in YAML comments"))
    for match in _GHOST_FLAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        issues.append(Issue(f"site/{path}", line, 0, "text", "reader-facing text names --kv-cache-memory, which is not a vllm serve flag",
                            "Give --kv-cache-memory-bytes with the engine's number for the pair, never the size vLLM's log suggests"))
    return issues


# The same test on a file's bytes, without decoding it: the phrases and the ghost flag are ASCII, and
# an ASCII byte decodes to itself, so only the letters that fold to ASCII ones (in UTF-8) need the text.
_FOLDED_BYTES = tuple(letter.encode() for letter in _FOLDED_LETTERS + "\u212a")
_PHRASES_BYTES = tuple(phrase.encode() for phrase in _PHRASES_LOWER)
_ASCII = bytes(range(128))


def _phrase_groups(phrases: tuple[bytes, ...], words: tuple[bytes, ...]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """The phrases under a word several of them hold (a page without it holds none of them), each
    other phrase under itself: one search of a page per group, and one per phrase only where its
    group's word is."""
    groups = [(word, tuple(p for p in phrases if word in p)) for word in words]
    grouped = {p for _, members in groups for p in members}
    return (*groups, *((p, (p,)) for p in phrases if p not in grouped))


_PHRASE_GROUPS = _phrase_groups(_PHRASES_BYTES, (b"shared", b"tests/", b" search"))


def _may_hold_text_problem(content: bytes) -> bool:
    """False only when text_problems finds nothing in content, decoded. The folded letters are looked
    for among the page's non-ASCII bytes alone (a few hundred): each letter's bytes stay together
    there, and a search for a two-byte string through a whole page is slow."""
    if b"--kv-cache-memory" in content or b".;" in content or b".. " in content or b"..\n" in content:
        return True
    wide = content.translate(None, _ASCII)
    if wide and any(letter in wide for letter in _FOLDED_BYTES):
        return True
    lowered = content.lower()
    return any(word in lowered and any(phrase in lowered for phrase in phrases) for word, phrases in _PHRASE_GROUPS)


def rendered_problems(files) -> list[Issue]:
    issues: list[Issue] = []
    for f in files:
        if f.path.endswith((".html", ".md", ".txt")) and _may_hold_text_problem(f.content):
            issues.extend(text_problems(f.path, f.content.decode("utf-8", "replace")))
    return issues
