"""What each page says: the formatting of figures, the quantities prose names, buy links, and the
view models of pair pages."""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping, NamedTuple
from urllib.parse import quote_plus

from generator import units
from generator.engine.pairs import PairNumbers, gpu_total_bytes
from generator.engine.vllm import unified_memory_gpu
from generator.errors import Issue, RenderError
from generator.launch.commands import llamacpp_blocks, ollama_blocks, sglang_blocks, vllm_blocks
from generator.plan import sglang_pages
from generator.plan.advice import offered_levers, offered_sections
from generator.plan.budget_bar import budget_bars, vllm_release_span
from generator.plan.routes import pair_url
from generator.schema import ENGINE_NAMES, PLACEHOLDER, Dataset, ErrorSignature, Gpu, Model, ModelVariant, SiteConfig
from generator.units import GIB, KIB

LEVER_NAMES = {
    "clamp-context": "Cap the context",
    "fp8-kv": "fp8 KV cache",
    "quantized-kv": "Quantized KV cache",
    "quantized-kv-same-context": "Quantized KV cache at the same context",
    "enforce-eager": "Skip CUDA graphs",
    "raise-utilization": "Raise the memory utilization",
    "lower-utilization": "Lower the memory utilization",
    "tensor-parallel": "Tensor parallel",
    "smaller-quant": "A smaller quantization",
    "bigger-gpu": "A bigger GPU",
    "fewer-slots": "Fewer parallel slots",
    "fewer-gpu-layers": "Fewer layers on the GPU",
    "free-gpu-memory": "Free GPU memory first",
    "kv-on-cpu": "KV cache in system RAM",
    "allow-long-max-len": "Override the derived limit",
    "enable-flash-attn": "Turn flash attention on",
    "matching-kv-types": "Use the same K and V cache type",
    "fewer-seqs": "Fewer sequences per batch",  # each record's note names its engine's flag
    "cpu-offload-weights": "Offload weights to CPU memory",
    "drop-removed-flag": "Drop the removed flag (or use its replacement)",
    "smaller-ubatch": "A smaller micro-batch (-ub)",
    "longer-load-timeout": "A longer load timeout (OLLAMA_LOAD_TIMEOUT)",
    "more-host-ram": "More system RAM (or a higher container limit)",
}


# --------------------------------------------------------------------------- formatting


class FigureError(ValueError):
    """A figure no page may print: not finite, negative where it cannot be, or past any hardware.
    Valid records never produce one (generator.schema bounds every input); reaching one is a bug,
    and the build stops naming the page and the figure rather than publish "inf GB/s"."""


# Larger than any real figure by orders of magnitude (1 EiB; 2**60 tokens), small enough that a
# float of it still prints as the integer it came from.
_FIGURE_LIMIT = 2**60


def figure(value: Any, what: str, *, signed: bool = False) -> int | float:
    """value if a page may print it as `what`, else FigureError naming both."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FigureError(f"{what} is {value!r}, not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise FigureError(f"{what} is {value!r}; a page cannot print it")
    if value < 0 and not signed:
        raise FigureError(f"{what} is {value!r}, which cannot be negative")
    if abs(value) > _FIGURE_LIMIT:
        raise FigureError(f"{what} is {value!r}, past any hardware or model")
    return value


def gib(value: int, digits: int = 2) -> str:
    """Bytes as GiB the way readers compare them with vLLM's logs; the templates' `gib` filter too.
    Signed: memory left after the weights is negative when they do not fit."""
    return units.gib(figure(value, "a size in bytes", signed=True), digits)


def kib(value: int) -> str:
    value = figure(value, "a size in bytes")
    return f"{value // KIB:,} KiB" if value % KIB == 0 else f"{value / KIB:,.2f} KiB"


def mib(value: int) -> str:
    return units.mib(figure(value, "a size in bytes"))


def tokens(value: int) -> str:
    """A count (tokens, blocks, sequences) with thousands separators; the `tokens` filter too."""
    return f"{figure(value, 'a count of tokens'):,}"


def gb_s(value: float) -> str:
    """Memory bandwidth in GB/s as the record writes it (1008, 3352.5); the `gb_s` filter."""
    return f"{figure(value, 'a bandwidth in GB/s')} GB/s"


gpu_memory_bytes = gpu_total_bytes


def short_gpu(gpu: Gpu) -> str:
    return gpu.name.removeprefix("GeForce ")


def engine_names(dataset: Dataset, last: str = "or") -> str:
    """The engines with pages, in the records' order: 'vLLM, llama.cpp, Ollama or SGLang'."""
    names = [engine.name for engine in dataset.engines.values()]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def indefinite_article(name: str) -> str:
    """'an' before a name said with a vowel sound: a word that starts with a vowel (an Instinct), or a
    name spelled out letter by letter whose first letter's name does (an RTX 4090, an NVIDIA H100, an
    A100, an MI300X); else 'a' (a GeForce, a Tesla V100, a T4)."""
    word = name.split(" ", 1)[0]
    spelled = word.isupper() or bool(re.match(r"[A-Z]+\d", word))
    return "an" if word[:1] in ("AEFHILMNORSX" if spelled else "AEIOUaeiou") and word else "a"


class FilledText(str):
    """Editor prose with its {{ name }} placeholders filled in. It keeps the prose as written and the
    values in order, so Markdown can be rendered once per error rather than once per page
    (render.md_block); as a string it is the filled text."""

    template: str
    values: tuple[str, ...]


def fill(text: str, quantities: Mapping[str, str]) -> FilledText:
    """Replace {{ name }} with the engine's figure; load() has checked every name exists."""
    values: list[str] = []

    def value(match: re.Match[str]) -> str:
        values.append(quantities[match.group(1)])
        return values[-1]

    filled = FilledText(PLACEHOLDER.sub(value, text))
    filled.template, filled.values = text, tuple(values)
    return filled


# --------------------------------------------------------------------------- links


def sponsored_links(dataset: Dataset, gpu: Gpu | None) -> list[dict[str, Any]]:
    """Buy and rent links for one GPU (or the rent programs alone), from the program records."""
    links = []
    for program in dataset.affiliates.values():
        if program.kind == "buy":
            if gpu is None or gpu.buy_query is None:
                continue
            url = program.url_template.replace("{query}", quote_plus(gpu.buy_query))
            label = f"{short_gpu(gpu)} on {program.name}"
        else:
            if gpu is not None and program.id not in gpu.rent:
                continue
            url = program.url_template.replace("{query}", quote_plus(gpu.buy_query or "") if gpu else "")
            label = f"Rent {indefinite_article(short_gpu(gpu)) + ' ' + short_gpu(gpu) if gpu else 'a GPU'} on {program.name}"
        links.append(
            {
                "program": program.id,
                "label": label,
                "url": url,
                "rel": program.rel,
                "new_tab": program.new_tab,
                "disclosure": program.disclosure,
            }
        )
    return links


# --------------------------------------------------------------------------- quantities


def pair_quantities(gpu: Gpu, model: Model, variant: ModelVariant, numbers: PairNumbers) -> dict[str, str]:
    q = {
        "gpu.name": gpu.name,
        "gpu.memory_gib": gib(gpu_memory_bytes(gpu)),
        "model.name": model.name,
        "variant.name": variant.name,
        "weights.gib": gib(numbers.weights_bytes),
    }
    v = numbers.vllm
    if v is not None:
        q.update(
            {
                "config.max_len": tokens(v.config_max_len),
                "vllm.version": v.version,
                "vllm.utilization": f"{v.utilization:.2f}",
                "vllm.requested_gib": gib(v.requested_bytes),
                "vllm.available_gib": gib(v.available_bytes),
                "vllm.bytes_per_token": kib(v.bytes_per_token),
                "vllm.bytes_per_token_fp8": kib(v.bytes_per_token_fp8),
                "vllm.block_bytes": mib(v.bytes_per_block),
                "vllm.num_blocks": tokens(v.num_blocks),
                "vllm.kv_tokens": tokens(v.kv_cache_tokens),
                "vllm.max_len": tokens(v.max_len),
                "vllm.needed_gib": gib(v.needed_bytes),
                "vllm.max_num_seqs": tokens(v.max_num_seqs),
                "vllm.sampler_peak_gib": gib(v.sampler_peak_bytes),
                "vllm.warmup_headroom_gib": gib(v.warmup_headroom_bytes),
            }
        )
    l = numbers.llamacpp
    if l is not None:
        q.update(
            {
                "config.max_len": tokens(l.ctx_size),
                "llamacpp.bytes_per_token": kib(l.bytes_per_token_f16),
                "llamacpp.kv_mib": mib(l.kv_bytes),
                "llamacpp.n_ctx": tokens(l.n_ctx),
                "llamacpp.max_ctx": tokens(l.max_ctx_f16),
                "llamacpp.gpu_layers": f"{l.gpu_layers_that_fit} of {l.num_layers}",
            }
        )
    o = numbers.ollama
    if o is not None:
        q.update({"ollama.num_ctx": tokens(o.num_ctx), "ollama.kv_mib": mib(o.kv_bytes),
                  "ollama.gpu_layers": f"{o.gpu_layers_that_fit} of {o.num_layers}"})
    q.update(sglang_pages.quantities(numbers))
    return q


def slot_values(records: tuple[Gpu, Model, ModelVariant], numbers: PairNumbers) -> dict[str, str]:
    """Values for the {slots} of error texts, as the engines would print them."""
    gpu, model, variant = records
    values = {"model_path": variant.gguf_file or variant.hf_repo or model.hf_repo, "total_gib": f"{gpu_memory_bytes(gpu) / GIB:.2f}"}
    v = numbers.vllm
    if v is not None:
        values.update(
            {
                "max_model_len": str(v.max_model_len),
                "derived_max_model_len": str(v.config_max_len),
                "estimated_max_len": str(v.max_len),
                "utilization": str(v.utilization),
                "requested_gib": f"{v.requested_bytes / GIB:.2f}",
                "max_num_seqs": str(v.max_num_seqs),
                "num_reqs": str(v.max_num_seqs),
            }
        )
    return values


def fill_slots(text: str, values: Mapping[str, str]) -> str:
    """Fill {name} slots we know; mark the rest <name> so they read as placeholders, not numbers."""
    return re.sub(r"\{([a-z_]+)\}", lambda m: values.get(m.group(1), f"<{m.group(1)}>"), text)


# --------------------------------------------------------------------------- page planning


class PairInputs(NamedTuple):
    """Everything a pair's view is made of. pair_view reads nothing else, so equal inputs mean an
    equal view: an incremental build hashes these instead of building the view."""

    error: ErrorSignature
    gpu: Gpu
    model: Model
    variant: ModelVariant
    numbers: PairNumbers
    command_builds: tuple[tuple[str, ModelVariant, PairNumbers], ...]  # (engine, build, its numbers) per section
    fits_elsewhere: list[dict[str, Any]]  # catalog GPUs where this variant starts at full context
    links: list[dict[str, Any]]  # sponsored links for this GPU
    intro: str | None  # a featured pair's own prose
    duplicate_of: str | None  # the sibling page with the same numbers, for a noindex page


class PageMeta(NamedTuple):
    site: SiteConfig
    url: str
    title: str
    description: str
    lastmod: str
    crumbs: tuple[tuple[str, str], ...]


def page_meta_view(meta: PageMeta) -> dict[str, Any]:
    """The canonical URL and structured data every page's view carries."""
    site = meta.site
    base = str(site.base_url).rstrip("/")
    canonical = base + meta.url
    data: list[dict[str, Any]] = [
        {
            "@context": "https://schema.org",
            "@type": "TechArticle",
            "headline": meta.title[:110],
            "description": meta.description,
            "dateModified": meta.lastmod,
            "author": {"@type": "Organization", "name": site.default_author},
            "publisher": {"@type": "Organization", "name": site.title},
            "mainEntityOfPage": canonical,
            "inLanguage": site.language,
        }
    ]
    if meta.crumbs:
        data.append(
            {
                "@context": "https://schema.org",
                "@type": "BreadcrumbList",
                "itemListElement": [
                    {"@type": "ListItem", "position": i + 1, "name": name, "item": base + link}
                    for i, (name, link) in enumerate(meta.crumbs)
                ],
            }
        )
    return {"canonical": canonical, "json_ld": data}


def command_sections(model: Model, variant: ModelVariant, builds: Iterable[tuple[str, ModelVariant, PairNumbers]]) -> list[dict[str, Any]]:
    sections = []
    for engine, use_variant, use_numbers in builds:
        builder = {"vllm": vllm_blocks, "sglang": sglang_blocks, "llamacpp": llamacpp_blocks, "ollama": ollama_blocks}[engine]
        engine_numbers = getattr(use_numbers, engine)
        if engine_numbers is None:  # SGLang beside vLLM for a model its engine does not size
            sections.append({"engine": engine, "name": ENGINE_NAMES[engine], "variant": use_variant, "other_build": False,
                             "numbers": use_numbers, "blocks": [], "note": SGLANG_NOT_MODELLED})
            continue
        blocks = builder(model, use_variant, engine_numbers)
        if blocks or engine == "sglang":  # SGLang's section says so when no GPU count up to 8 starts
            section = {
                "engine": engine,
                "name": ENGINE_NAMES[engine],
                "variant": use_variant,
                "other_build": use_variant.id != variant.id,
                "numbers": use_numbers,  # what the blocks were built from, for the page lint
                "blocks": blocks,
                "note": None,
            }
            if engine == "sglang":
                section["name"] = f"SGLang {engine_numbers.release}"
                none_start = SGLANG_NONE_START if engine_numbers.most_gpus > 1 else SGLANG_NONE_START_ONE_GPU
                section["note"] = sglang_note(engine_numbers) + ("" if blocks else none_start)
            sections.append(section)
    return sections


def own_sections(error: ErrorSignature, sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """On SGLang's own error pages its blocks carry their levers, so only the fixes stay."""
    return sglang_pages.with_levers(sections) if error.engine == "sglang" else sections


SGLANG_NOT_MODELLED = ("SGLang serves this checkpoint too, but kvtriage does not yet model how SGLang sizes its pools for this"
                       " model's layers (Mamba or linear-attention state beside attention), so no SGLang figure or command is given here.")
SGLANG_NONE_START = (" With --tp-size 2, 4 or 8 of these cards the weights per card still leave no room for a KV pool,"
                     " so no SGLang command starts here.")
SGLANG_NONE_START_ONE_GPU = (" This module is the one GPU of its host, and on it the weights leave no room for a KV pool,"
                             " so no SGLang command starts here.")


def sglang_note(numbers: Any) -> str:
    """Which SGLang figures are estimates (pairs.SglangNumbers; the engine's budget_estimated)."""
    return (
        f"Estimates: SGLang sizes its KV pool from the free memory it measures before loading the weights. "
        f"Here that is taken as the card's total less {numbers.startup_overhead_gb} GB (measured on one L4 log), "
        f"{numbers.pre_model_load_gb:,.2f} GB, with {numbers.weights_bytes / GIB:,.2f} GiB of weights split over the GPUs. "
        f"The pool sizes follow from that by SGLang {numbers.release}'s arithmetic; the startup log's "
        f"\"KV Cache is allocated. … #tokens: N\" line gives the real figure."
        + (f" On one card at its default fraction SGLang is expected to stop with: {numbers.error}" if numbers.error else "")
    )


def error_text(error: ErrorSignature, records: tuple[Gpu, Model, ModelVariant], numbers: PairNumbers) -> str:
    """What the engine prints for this pair when the pair hits this error; else the record's
    signature with the slots this pair can fill filled in."""
    if error.engine == "sglang":
        own = sglang_pages.error_text(error.scenario, numbers)
        if own is not None:
            return own
    engine_numbers = getattr(numbers, error.engine, None)
    if (error.engine != "sglang" and engine_numbers is not None and engine_numbers.error and error.scenario in numbers.scenarios
            and shows_own_error(error, engine_numbers.error)):
        return engine_numbers.error
    return fill_slots(error.signature, slot_values(records, numbers))


def shows_own_error(error: ErrorSignature, text: str) -> bool:
    """Whether a line of text is the record's own error, as triage reads a paste: line by line, by the
    record's pattern. The engine prints the failure its scenario models (a CUDA allocation, vLLM's KV
    check), which is not the error of a record that shares the scenario but fails otherwise (Metal,
    Vulkan, an auto-fit, a K/V type check)."""
    # A slot the pair cannot fill shows as <name>; readers paste a value there, so test with digits
    # (as load/cross_checks.py tests each text).
    return any(re.search(error.pattern, re.sub(r"<[a-z_]+>", "123", line), re.ASCII) for line in text.splitlines())


def pair_view(inputs: PairInputs) -> dict[str, Any]:
    error, gpu, model, variant, numbers = inputs.error, inputs.gpu, inputs.model, inputs.variant, inputs.numbers
    try:
        q = pair_quantities(gpu, model, variant, numbers)
    except FigureError as exc:
        url = pair_url(error.id, gpu.id, model.id, variant.id)
        raise RenderError([Issue(f"site{url}", 1, 0, "figure", f"a figure of {gpu.id} with {model.id} {variant.id}: {exc}",
                                 "This is a bug in the engine or a bound missing in generator/schema/fields.py; report it with the records")]) from None
    return {
        "error": error,
        "engine_name": ENGINE_NAMES[error.engine],
        "gpu": gpu,
        "model": model,
        "variant": variant,
        "numbers": numbers,
        "memory_bytes": gpu_memory_bytes(gpu),
        "memory_from_smi": gpu.cuda_total_bytes is None,
        "triage": fill(error.triage, q),
        "cause": fill(error.cause, q),
        # A unified-memory module (Jetson, DGX Spark) is the one GPU of its host: no second one to split over.
        "fixes": [{"lever": f.lever, "note": fill(f.note, q), "memory": f.memory} for f in error.fixes
                  if not (f.lever == "tensor-parallel" and unified_memory_gpu(gpu.name))],
        "faq": [{"question": f.question, "answer": fill(f.answer, q)} for f in error.faq],
        # Only levers that move what is too big down or what is too small up (generator/plan/advice.py).
        "commands": offered_sections(error, own_sections(error, command_sections(model, variant, inputs.command_builds))),
        "levers": offered_levers(error, numbers.vllm.levers) if numbers.vllm is not None else [],
        "links": inputs.links,
        "fits_elsewhere": inputs.fits_elsewhere,
        "error_text": error_text(error, (gpu, model, variant), numbers),
        "lever_names": LEVER_NAMES,
        "assumptions": _assumptions(numbers),
        "budget_bars": budget_bars(numbers, gpu_memory_bytes(gpu)),
        "vllm_releases": vllm_release_span(numbers.vllm.version) if numbers.vllm is not None else None,
    }


def _pair_page_view(inputs: tuple[PairInputs, PageMeta]) -> dict[str, Any]:
    pair, meta = inputs
    view = pair_view(pair)
    view["intro"] = pair.intro
    view["duplicate_of"] = pair.duplicate_of
    view.update(page_meta_view(meta))
    return view


def _assumptions(numbers: PairNumbers) -> list[str]:
    seen: list[str] = []
    for engine_numbers in (numbers.vllm, numbers.llamacpp, numbers.ollama, numbers.sglang):
        for item in engine_numbers.assumptions if engine_numbers is not None else ():
            if item not in seen:
                seen.append(item)
    return seen
