"""The /accuracy/ page: the engine's prediction beside what each real startup log printed.

Every prediction is made here, at build time, by the same engine functions the pair pages use,
from the log's own settings (data/evidence/). Nothing on the page is typed: the errors, medians
and worst cases are computed from the rows."""

from __future__ import annotations

import re
import statistics
from dataclasses import fields
from typing import Any, Callable, Iterable

from generator.engine import sglang as sg
from generator.engine.geometry import geometry_from_hf_config
from generator.engine.llamacpp import (
    COMPUTE_BUFFER_BASIS,
    MIB,
    KvLayout,
    LayerKv,
    ServerSettings,
    compute_buffer_bytes,
    kv_layout_from_geometry,
    kv_layout_from_gguf_metadata,
    plan_kv,
)
from generator.engine.vllm import ASSUMPTIONS, FITTED_ON, GiB, VllmInputError, VllmInputs, parse_version, plan_vllm, unified_memory_gpu
from generator.schema.evidence import Evidence, LlamaLog, SglangEvidence, SglangLog, VllmEvidence, VllmLog

ACCURACY_URL = "/accuracy/"

# Notes written for maintainers (search ids, repository paths) never reach the page.
_INTERNAL = re.compile(r"search id|exact-text|file id|tests/|data/evidence|find_string|read_file", re.IGNORECASE)
_TOKENS = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_RELEASE = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.post\d+)?)\b")
_BUILD = re.compile(r"\b(?:b|build |llama\.cpp )(\d{4,5})\b")

# The bar for the end-to-end budget: within max(10 %, 0.5 GiB) of the printed figure.
VLLM_TARGET_FRACTION = 0.10
VLLM_TARGET_GIB = 0.5

# Which figures are exact arithmetic from the engine's code and which rest on fitted terms, per table.
_BASIS = {
    "vllm-available": ("empirical", "The weights are the log's own figure, while non-torch memory, the "
                       "activation peak, the sampler warm-up and the CUDA-graph estimate are estimates (listed at the end of "
                       "this section)."),
    "vllm-kv-size": ("exact", "vLLM's block arithmetic (bytes per token, block size, whole blocks) applied to the "
                     "KV memory the same log printed; no fitted term."),
    "sglang-pool": ("exact", "SGLang's pool rule applied to the free memory the log printed before and after loading."),
    "sglang-size": ("exact", "SGLang's cell arithmetic applied to the pool's printed token count."),
    "llamacpp-kv": ("exact", "llama.cpp's KV cache arithmetic from the model's geometry and the flags."),
    "llamacpp-compute": ("empirical", "The compute buffer is a fitted estimate (described at the end of this section)."),
}

# The vLLM logs by collection: the fitted terms were tuned on the first; each holdout was gathered after
# the engine last changed and measured before any change it prompted.
_SPLIT_NOTES = {
    "tuning": "the logs the fitted terms were fitted to",
    "holdout": "set aside from the first collection, never tuned on",
    "holdout2": "gathered after the release table was written",
    "holdout3": "gathered after holdout2; measured before the engine changed",
    "holdout4": "gathered after the engine changed for holdout3",
    "holdout5": "from public GitHub issues, gathered after the engine changed for holdout4",
    "holdout6": "quoted in files committed to public repositories, gathered after holdout5",
    "holdout7": "quoted in deployment docs and run notes, gathered after holdout6; measured blind",
    "holdout8": "quoted in lab notes, run logs and deployment docs, gathered after holdout7; measured blind",
    "holdout9": "quoted in benchmark notes, deployment lessons and run logs, gathered after holdout8; measured blind",
    "holdout10": "quoted in committed run logs and articles and in GitHub threads, gathered after holdout9; measured blind",
    "holdout11": "quoted in a committed run log and in GitHub pull-request threads, gathered after holdout10; measured blind",
    "holdout12": "in run logs committed to public repositories and a two-part blog post, gathered after holdout11; measured blind",
    "holdout13": "in run logs committed to public repositories, gathered after holdout12; measured blind",
    "holdout14": "in run logs and model notes committed to public repositories, gathered after holdout13; measured once, blind",
}


def _public(text: str | None) -> str:
    return "" if not text or _INTERNAL.search(text) else text


def _source(url: str) -> dict[str, str | None]:
    """A log's address as a link, or, for a log found through a full-text search of public files
    (which gives no address), the description of where it was found."""
    if url.startswith("https://"):
        address = url.split()[0]
        return {"href": address, "label": address.removeprefix("https://"), "note": None}
    described = re.search(r"\(([^)]*)\)", url)
    note = described.group(1) if described and not _INTERNAL.search(described.group(1)) else "a public file"
    return {"href": None, "label": None, "note": note}


def _stats(rows: list[dict[str, Any]], key: str = "abs_error") -> dict[str, Any]:
    values = [row[key] for row in rows]
    return {"count": len(values), "median": statistics.median(values) if values else 0.0, "worst": max(values, default=0.0),
            "within": sum(1 for row in rows if row.get("within", True))}


def _by_release(rows: list[dict[str, Any]], order: Callable[[str], Any]) -> list[dict[str, Any]]:
    releases: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        releases.setdefault(row["release"], []).append(row)
    return [{"release": release, **_stats(group)} for release, group in sorted(releases.items(), key=lambda item: order(item[0]))]


def _by_split(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median, worst and within-the-bar count per collection, tuning first."""
    order = list(_SPLIT_NOTES)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row.get("split") or "tuning", []).append(row)
    return [{"split": name, "note": _SPLIT_NOTES.get(name, ""), **_stats(group)}
            for name, group in sorted(groups.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))]


def _table(table_id: str, caption: str, unit: str, rows: list[dict[str, Any]], order: Callable[[str], Any], what: str) -> dict[str, Any]:
    for row in rows:
        for key, empty in (("settings", ""), ("version", row["release"]), ("known_gap", ""), ("tp", 1), ("gpu", "")):
            row.setdefault(key, empty)
        row["error_text"] = f"{row['error']:+,}" if isinstance(row["error"], int) else f"{row['error']:+.2f}"
        row["percent_text"] = f"{row['percent']:+.2f}\u00a0%" if row.get("percent") is not None and row["printed"] > 0 else ""
    rows.sort(key=lambda row: (order(row["release"]), row["version"], row["id"]))
    basis, basis_text = _BASIS.get(table_id, ("", ""))
    return {"id": table_id, "caption": caption, "unit": unit, "what": what, "rows": rows, "basis": basis, "basis_text": basis_text,
            "releases": _by_release(rows, order), "splits": _by_split(rows) if table_id == "vllm-available" else [],
            "overall": _stats(rows)}


def _fmt(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


# --------------------------------------------------------------------------- vLLM


def _vllm_release(version: str) -> str:
    major, minor, _ = parse_version(version)
    return f"{major}.{minor}"


def _release_order(release: str) -> tuple[int, ...]:
    found = re.findall(r"\d+", release)
    return tuple(int(part) for part in found) if found else (10**6,)


def _checkpoint_config(log: VllmLog, config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The config.json of the checkpoint the log served: a quantized checkpoint declares its method, which
    sets the weights term when the log prints no weights line."""
    if config is None or not log.weights_quantization:
        return config
    return {**config, "quantization_config": dict(log.weights_quantization)}


def _vllm_inputs(log: VllmLog, config: dict[str, Any], **extra: Any) -> VllmInputs:
    settings = log.settings.engine_inputs()
    ranks = settings.get("tensor_parallel_size", 1) * settings.get("pipeline_parallel_size", 1)
    # The GPU's name picks release rules as vLLM does (batch defaults by name, V0 below Ampere, MLA block sizes).
    return VllmInputs(hf_config=config, gpu_count=ranks, gpu_name=log.gpu or "", vllm_version=log.vllm_version, **settings, **extra)


def _vllm_row(log: VllmLog, evidence: VllmEvidence) -> dict[str, Any]:
    model = evidence.models[log.model]
    split = log.split or "tuning"
    fitted = bool(log.split) and unified_memory_gpu(log.gpu or "")  # the unified-memory term is fitted on these holdouts
    nccl = bool(log.split) and log.id in FITTED_ON["nccl_init"]
    marks = [label for label, on in ((split, bool(log.split)), ("unified-memory term fitted on it, not blind", fitted),
                                     ("NCCL term fitted on it, not blind", nccl), (_public(log.inferred), bool(log.inferred)),
                                     ("known gap", bool(log.known_gap))) if on]
    settings = log.settings
    return {
        "id": log.id, "source": _source(log.url), "release": _vllm_release(log.vllm_version), "version": log.vllm_version,
        "split": split,
        "gpu": log.gpu or "not named", "model": log.model, "kind": model.kind,
        "tp": settings.tensor_parallel_size or 1, "marks": marks, "known_gap": _public(log.known_gap),
    }


def model_kind(evidence: VllmEvidence, log: VllmLog) -> str:
    return evidence.models[log.model].kind


def _vllm_end_to_end(evidence: VllmEvidence) -> list[dict[str, Any]]:
    rows = []
    for log in evidence.budget:
        config = _checkpoint_config(log, evidence.models[log.model].config)
        printed = log.log.available_kv_cache_gib
        if log.status or config is None or printed is None or log.gpu_total_gib is None:
            continue
        ranks = (log.settings.tensor_parallel_size or 1)
        weights_gib = log.log.model_loading_gib or log.log.weights_gib
        extra: dict[str, Any] = {"gpu_total_bytes": round(log.gpu_total_gib * GiB), "encoder_cache_tokens": log.log.encoder_cache_tokens}
        if weights_gib is not None:
            extra["weights_bytes"] = round(weights_gib * GiB) * ranks
        result = plan_vllm(_vllm_inputs(log, config, **extra))
        predicted = result.available_kv_cache_bytes / GiB
        error = predicted - printed
        row = _vllm_row(log, evidence)
        row.update(printed=printed, predicted=predicted, printed_text=_fmt(printed), predicted_text=_fmt(predicted),
                   error=error, abs_error=abs(error), percent=100 * error / printed if printed else None,
                   within=abs(error) <= max(VLLM_TARGET_FRACTION * printed, VLLM_TARGET_GIB),
                   weights="from the log" if weights_gib is not None else "estimated")
        if log.log.available_kv_cache_derived:
            row["marks"].append("printed as a token count; the GiB figure is tokens x bytes per token")
        rows.append(row)
    return rows


def _vllm_kv_size(evidence: VllmEvidence) -> list[dict[str, Any]]:
    """'GPU KV cache size' from the 'Available KV cache memory' the same log printed."""
    rows = []
    for log in [*evidence.budget, *evidence.cudagraph]:
        config = evidence.models[log.model].config
        printed_line = log.log.gpu_kv_cache_size or ""
        match = _TOKENS.search(printed_line)
        if config is None or match is None or log.log.available_kv_cache_gib is None:
            continue
        try:
            result = plan_vllm(_vllm_inputs(log, config, available_kv_cache_bytes=round(log.log.available_kv_cache_gib * GiB)))
        except VllmInputError:
            continue
        printed = int(match.group(1).replace(",", ""))
        error = result.kv_cache_tokens - printed
        row = _vllm_row(log, evidence)
        row.update(printed=printed, predicted=result.kv_cache_tokens, printed_text=f"{printed:,}",
                   predicted_text=f"{result.kv_cache_tokens:,}", error=error, percent=100 * error / printed,
                   abs_error=abs(100 * error / printed))
        if log.status:
            row["marks"].append(f"{model_kind(evidence, log)} start, not modelled end to end")
        rows.append(row)
    return rows


def _vllm_unmodelled(evidence: VllmEvidence) -> list[dict[str, Any]]:
    rows = []
    for log in evidence.budget:
        if not log.status:
            continue
        row = _vllm_row(log, evidence)
        why = _public(log.reason) if log.status == "unmodelled" else "; ".join(_public(item) for item in log.missing or ())
        row.update(status=log.status, why=why.strip("; ") or ("the engine does not model this start" if log.status == "unmodelled" else "a budget input is not in the published log"))
        rows.append(row)
    return rows


_TERM_NAMES = {
    "non_torch": "Non-torch memory (CUDA context, NCCL)",
    "non_torch_v0": "Non-torch memory, V0 engine",
    "non_torch_tp": "Extra non-torch memory with tensor parallelism",
    "nccl_init": "NCCL buffers of a tensor-parallel rank, vLLM before 0.11 on Hopper",
    "unified_memory": "Extra non-torch memory on unified-memory GPUs (GB10, Jetson)",
    "activation": "Activation peak of the profiling batch",
    "sampler": "Sampler warm-up",
    "cudagraph": "CUDA-graph estimate",
    "weights": "Weights when the checkpoint size is unknown",
}


def _vllm_empirical_terms(evidence: VllmEvidence) -> list[dict[str, Any]]:
    """Every `*_source` text of the budget model's constants: each says what it was fitted to, with links to the
    table's rows a term is fitted on (budget.FITTED_ON)."""
    logs = {log.id: log for log in evidence.budget}
    terms = []
    for item in fields(ASSUMPTIONS):
        if item.name.endswith("_source"):
            key = item.name.removesuffix("_source")
            rows = [{"id": i, "source": _source(logs[i].url)} for i in FITTED_ON.get(key, ()) if i in logs]
            terms.append({"term": _TERM_NAMES.get(key, key.replace("_", " ").capitalize()), "text": getattr(ASSUMPTIONS, item.name),
                          "rows": rows})
    return terms


def _vllm_section(evidence: VllmEvidence) -> dict[str, Any]:
    end_to_end = _vllm_end_to_end(evidence)
    kv_size = _vllm_kv_size(evidence)
    return {
        "id": "vllm", "name": "vLLM",
        "tables": [
            _table("vllm-available", "vLLM: \"Available KV cache memory\", predicted from the GPU, the flags and the logged weights",
                   "GiB", end_to_end, _release_order, "end to end"),
            _table("vllm-kv-size", "vLLM: \"GPU KV cache size\", predicted from the KV memory the same log printed",
                   "tokens", kv_size, _release_order, "block arithmetic"),
        ],
        "unmodelled": _vllm_unmodelled(evidence),
        "empirical": _vllm_empirical_terms(evidence),
        "target_percent": f"{100 * VLLM_TARGET_FRACTION:.0f}",
        "target_gib": f"{VLLM_TARGET_GIB:.1f}",
    }


# --------------------------------------------------------------------------- SGLang


def _sglang_release(log: SglangLog) -> str:
    found = _RELEASE.search(log.sglang_version)
    return found.group(1) if found else "not stated in the log"


def _sglang_row(log: SglangLog) -> dict[str, Any]:
    return {"id": log.id, "source": _source(log.url), "release": _sglang_release(log), "gpu": log.gpu, "model": log.model or "",
            "tp": log.tp, "marks": []}


def _sglang_cell(log: SglangLog, evidence: SglangEvidence) -> sg.CellSize:
    return sg.cell_size(evidence.models[log.model].config, kv_cache_dtype=log.kv_cache_dtype or "auto", tp=log.tp)


def _sglang_tables(evidence: SglangEvidence) -> list[dict[str, Any]]:
    pool_rows, size_rows = [], []
    for log in evidence.logs:
        if not log.model or log.model not in evidence.models:
            continue
        cell = _sglang_cell(log, evidence)
        if log.budget is not None and log.tokens:
            b = log.budget
            pool = sg.pool_from_gpu(cell, pre_model_load_gb=b.avail_after_load_gb + b.weights_gb, weights_gb=b.weights_gb,
                                    mem_fraction_static=b.mem_fraction_static, page_size=log.page_size)
            error = pool.max_total_num_tokens - log.tokens
            row = _sglang_row(log)
            row.update(printed=log.tokens, predicted=pool.max_total_num_tokens, printed_text=f"{log.tokens:,}",
                       predicted_text=f"{pool.max_total_num_tokens:,}", error=error, percent=100 * error / log.tokens,
                       abs_error=abs(100 * error / log.tokens))
            pool_rows.append(row)
        printed_gb = log.k_size_gb if log.k_size_gb is not None else log.kv_size_gb
        if log.tokens and printed_gb is not None:
            pool = sg.pool_from_bytes(cell, log.tokens * cell.full_bytes, page_size=log.page_size)
            if log.k_size_gb is not None:
                predicted = pool.k_size_gb
            elif log.printed_excludes_indexer:
                predicted = pool.rows * cell.k_bytes / sg.GB
            else:
                predicted = pool.kv_size_gb
            error = predicted - printed_gb
            row = _sglang_row(log)
            row.update(printed=printed_gb, predicted=predicted, printed_text=_fmt(printed_gb), predicted_text=_fmt(predicted),
                       error=error, percent=100 * error / printed_gb, abs_error=abs(100 * error / printed_gb))
            size_rows.append(row)
    return [
        _table("sglang-pool", "SGLang: pool tokens (#tokens), predicted from the free memory the log printed before and after loading",
               "tokens", pool_rows, _release_order, "end to end"),
        _table("sglang-size", "SGLang: printed K (or KV) size, predicted from the pool's #tokens", "GB", size_rows, _release_order,
               "cell arithmetic"),
    ]


def _sglang_section(evidence: SglangEvidence) -> dict[str, Any]:
    return {"id": "sglang", "name": "SGLang", "tables": _sglang_tables(evidence), "unmodelled": [],
            "empirical": [{"term": "Memory before the weights load", "text": (
                f"{sg.STARTUP_OVERHEAD_GB:.2f} GB of CUDA context and NCCL buffers below the GPU total, from one startup log; "
                "the pool rule itself is SGLang's own, and the rows above use the free memory each log printed instead.")}]}


# --------------------------------------------------------------------------- llama.cpp


def _llama_layout(log: LlamaLog) -> KvLayout:
    geometry = log.geometry
    if geometry.hf_config is not None:
        return kv_layout_from_geometry(geometry_from_hf_config(geometry.hf_config))
    if geometry.gguf_metadata is not None:
        return kv_layout_from_gguf_metadata(geometry.gguf_metadata)
    w = geometry.log_widths
    layers = tuple(LayerKv(il, w.k_width, w.v_width, w.head, w.head, False) for il in range(w.n_layer))
    return KvLayout("log", w.n_layer, layers, None, False, w.n_ctx_train, 0, 1, 0, None)


def _llama_build(log: LlamaLog) -> str:
    found = _BUILD.search(log.build)
    return f"b{found.group(1)}" if found else "build not stated"


def _llama_tables(logs: Iterable[LlamaLog]) -> list[dict[str, Any]]:
    kv_rows, compute_rows = [], []
    for log in logs:
        layout = _llama_layout(log)
        for number, run in enumerate(log.all_runs(), start=1):
            settings = ServerSettings(**run.settings)
            plan = plan_kv(layout, settings)
            base = {"id": log.id if len(log.all_runs()) == 1 else f"{log.id} (run {number})", "source": _source(log.url),
                    "release": _llama_build(log), "gpu": "", "model": log.model.split(" (")[0].removeprefix("inferred - "),
                    "settings": f"-c {settings.ctx_size}, {settings.parallel} slot{'s' if settings.parallel != 1 else ''}",
                    "marks": ["ik_llama.cpp fork"] if log.fork else []}
            if run.expect.kv_mib is not None:
                printed = float(run.expect.kv_mib)
                predicted = plan.kv_bytes / MIB
                error = predicted - printed
                kv_rows.append({**base, "printed": printed, "predicted": predicted, "printed_text": _fmt(printed),
                                "predicted_text": _fmt(predicted), "error": error, "percent": 100 * error / printed,
                                "abs_error": abs(100 * error / printed)})
            if run.expect.compute_mib is not None:
                printed = run.expect.compute_mib
                predicted = compute_buffer_bytes(layout, plan, settings.ubatch_size) / MIB
                error = predicted - printed
                compute_rows.append({**base, "printed": printed, "predicted": predicted, "printed_text": _fmt(printed),
                                     "predicted_text": _fmt(predicted), "error": error, "percent": 100 * error / printed,
                                     "abs_error": abs(100 * error / printed)})
    return [
        _table("llamacpp-kv", "llama.cpp: KV buffer, predicted from the model's geometry and the flags", "MiB", kv_rows,
               _release_order, "cache arithmetic"),
        _table("llamacpp-compute", "llama.cpp: compute buffer, estimated", "MiB", compute_rows, _release_order, "modelled"),
    ]


def _llama_section(logs: Iterable[LlamaLog]) -> dict[str, Any]:
    return {"id": "llamacpp", "name": "llama.cpp", "tables": _llama_tables(logs), "unmodelled": [],
            "empirical": [{"term": "Compute buffer", "text": COMPUTE_BUFFER_BASIS}]}


# --------------------------------------------------------------------------- the page


def accuracy_view(evidence: Evidence | None) -> dict[str, Any]:
    """Every engine's table of predicted against printed, with medians and worst cases by release."""
    sections = []
    if evidence is not None and evidence.vllm is not None:
        sections.append(_vllm_section(evidence.vllm))
    if evidence is not None and evidence.sglang is not None:
        sections.append(_sglang_section(evidence.sglang))
    if evidence is not None and evidence.llamacpp is not None:
        sections.append(_llama_section(evidence.llamacpp.logs))
    for section in sections:
        section["tables"] = [table for table in section["tables"] if table["rows"]]
    logs = sum(len(table["rows"]) for section in sections for table in section["tables"])
    return {"sections": sections, "row_count": logs}


def plan_accuracy(planner: Any) -> None:
    """Add the /accuracy/ page (a hook for plan/pages.py's planner)."""
    dataset = planner.d
    inputs = tuple(f"evidence:{engine}" for engine in ("vllm", "sglang", "llamacpp")) + ("engine",)
    planner.add(url=ACCURACY_URL, template="accuracy",
                title=f"How close {dataset.site.title}'s numbers come to real startup logs, engine by engine",
                description="Predicted against printed for every public vLLM, SGLang and llama.cpp startup log on record: error per log, median and worst by release, fitted terms named.",
                kind="accuracy", view=accuracy_view(dataset.evidence), inputs=inputs,
                crumbs=(("Home", "/"), ("Accuracy", ACCURACY_URL)))
