"""Rules that need several records: references between files, URL and alias collisions, patterns
that match their own signature, placeholders that name real quantities."""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Mapping

from generator.errors import Issue
from generator.load.yaml_marks import Source
from generator.schema import (
    ENGINE_NAMES,
    PLACEHOLDER,
    QUANTITY_NAMES,
    ErrorSignature,
    Model,
)


def _engines_running(variant) -> set[str]:
    """The engines whose pages may show this build: those it names, and SGLang beside vLLM (it loads
    the same checkpoints; generator/plan/sglang_pages.py decides per pair whether it has figures)."""
    return set(variant.engines) | ({"sglang"} if "vllm" in variant.engines else set())


def url_collisions(models: Mapping[str, tuple[Model, Source]]) -> list[Issue]:
    """Pair pages end in <model>-<variant>/, so model 'a-b' variant 'c' and model 'a' variant
    'b-c' would claim one URL; catch it here, where both records have a line."""
    issues: list[Issue] = []
    seen: dict[str, tuple[str, str, Source, int]] = {}
    for model_id, (model, source) in models.items():
        for i, variant in enumerate(model.variants):
            tail = f"{model_id}-{variant.id}"
            if tail in seen and seen[tail][0] != model_id:
                other_model, other_variant, other_source, other_i = seen[tail]
                line, _ = other_source.positions.at(other_source.loc + ("variants", other_i, "id"))
                issues.append(
                    source.issue(
                        ("variants", i, "id"),
                        f"variants[{i}].id",
                        f"model {model_id!r} variant {variant.id!r} and model {other_model!r} variant {other_variant!r} "
                        f"({other_source.path}:{line}) both make pair pages ending in /{tail}/",
                        "Rename one of the variants",
                    )
                )
            else:
                seen.setdefault(tail, (model_id, variant.id, source, i))
    return issues


def alias_issues(what: str, records: Mapping[str, tuple[Any, Source]]) -> list[Issue]:
    """An alias becomes a redirect from an old URL; it may not shadow a live id or another alias."""
    issues: list[Issue] = []
    claimed: dict[str, str] = {}
    for record_id, (record, source) in records.items():
        for i, alias in enumerate(getattr(record, "aliases", ())):
            if alias in records:
                issues.append(source.issue(("aliases", i), f"aliases[{i}]", f"{alias!r} is the id of {'this' if alias == record_id else 'another'} {what}", "Remove the alias; that page exists"))
            elif alias in claimed and claimed[alias] != record_id:
                issues.append(source.issue(("aliases", i), f"aliases[{i}]", f"{alias!r} is already an alias of {what} {claimed[alias]!r}", "Keep it on one record"))
            else:
                claimed[alias] = record_id
    return issues


def _did_you_mean(value: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    if close:
        return f"Did you mean {close[0]!r}?"
    return f"Known ids: {', '.join(sorted(choices)[:8])}" if choices else "None is defined yet"


def cross_references(gpus, models, programs, errors, pairs, broken_errors: frozenset[str] | set[str] = frozenset()) -> list[Issue]:
    issues: list[Issue] = []
    for gpu, source in gpus.values():
        for i, program in enumerate(gpu.rent):
            if program not in programs or programs[program][0].kind != "rent":
                issues.append(source.issue(("rent", i), "rent", f"{program!r} is not a rent program in data/affiliates.yaml", _did_you_mean(program, programs)))
    for error, source in errors.values():
        ex = error.example
        if ex.gpu not in gpus:
            issues.append(source.issue(("example", "gpu"), "example.gpu", f"GPU {ex.gpu!r} does not exist", _did_you_mean(ex.gpu, gpus)))
        if ex.model not in models:
            issues.append(source.issue(("example", "model"), "example.model", f"model {ex.model!r} does not exist", _did_you_mean(ex.model, models)))
        elif ex.variant not in {v.id for v in models[ex.model][0].variants}:
            variants = [v.id for v in models[ex.model][0].variants]
            issues.append(source.issue(("example", "variant"), "example.variant", f"model {ex.model!r} has no variant {ex.variant!r}", _did_you_mean(ex.variant, variants)))
        else:
            variant = next(v for v in models[ex.model][0].variants if v.id == ex.variant)
            # SGLang loads the same safetensors builds as vLLM.
            runs_on = "vllm" if error.engine == "sglang" else error.engine
            runnable = [v.id for v in models[ex.model][0].variants if runs_on in v.engines and (error.engine != "ollama" or v.ollama_tag)]
            if runs_on not in variant.engines or (error.engine == "ollama" and not variant.ollama_tag):
                need = "a GGUF build with an ollama_tag" if error.engine == "ollama" else ("a GGUF build" if error.engine == "llamacpp" else "a safetensors build (bf16, fp8, AWQ, GPTQ)")
                issues.append(source.issue(("example", "variant"), "example.variant", f"{ex.variant!r} is not a build {error.engine} runs; the example needs {need}", f"Use one of: {', '.join(runnable) or 'none in this model: pick another model'}"))  # noqa: E501
        for i, other in enumerate(error.related):
            if other not in errors and other not in broken_errors:
                issues.append(source.issue(("related", i), f"related[{i}]", f"error {other!r} does not exist", _did_you_mean(other, errors)))
        for i, text in enumerate(error.texts):
            if not _pattern_matches(error.pattern, text.text):
                issues.append(source.issue(("texts", i, "text"), f"texts[{i}].text", "pattern does not match this text", "Widen pattern so readers who paste this version land here"))
        issues.extend(_placeholder_issues(error, source))
    primary: dict[str, str] = {}
    for error, source in errors.values():
        if error.pair_pages:
            if error.scenario in primary:
                issues.append(source.issue(("pair_pages",), "pair_pages", f"error {primary[error.scenario]!r} already generates the {error.scenario} pair pages", "Set pair_pages: false here; two errors would repeat the same numbers"))  # noqa: E501
            else:
                primary[error.scenario] = error.id
    for pair, source in pairs:
        if pair.gpu not in gpus:
            issues.append(source.issue(("gpu",), "gpu", f"GPU {pair.gpu!r} does not exist", _did_you_mean(pair.gpu, gpus)))
        if pair.model not in models:
            issues.append(source.issue(("model",), "model", f"model {pair.model!r} does not exist", _did_you_mean(pair.model, models)))
        elif pair.variant not in {v.id for v in models[pair.model][0].variants}:
            variants = [v.id for v in models[pair.model][0].variants]
            issues.append(source.issue(("variant",), "variant", f"model {pair.model!r} has no variant {pair.variant!r}", _did_you_mean(pair.variant, variants)))
        variant = next((v for v in models[pair.model][0].variants if v.id == pair.variant), None) if pair.model in models else None
        for i, error_id in enumerate(pair.errors):
            if error_id not in errors and error_id not in broken_errors:
                issues.append(source.issue(("errors", i), f"errors[{i}]", f"error {error_id!r} does not exist", _did_you_mean(error_id, errors)))
            elif error_id in errors and variant is not None and errors[error_id][0].engine not in _engines_running(variant):
                # No page could show the pair with this error: the engine cannot load the build.
                engine = ENGINE_NAMES[errors[error_id][0].engine]
                runs_on = " and ".join(ENGINE_NAMES[e] for e in variant.engines)
                issues.append(source.issue(("errors", i), f"errors[{i}]",
                                           f"{error_id!r} is printed by {engine}, which does not run variant {pair.variant!r} "
                                           f"(it runs on {runs_on})",
                                           "List only errors of an engine the variant names, or feature a variant that engine runs"))
    return issues


def _pattern_matches(pattern: str, text: str) -> bool:
    import re

    # Texts carry {name} slots where numbers go; readers paste numbers, so test with digits.
    sample = re.sub(r"\{[a-z_]+(?::[^}]*)?\}", "123", text)
    return re.search(pattern, sample) is not None


# Which quantities an error's prose may name: its own engine's, and the shared ones.
_NAMESPACES = {
    "vllm": ("gpu.", "model.", "variant.", "weights.", "config.", "vllm."),
    "llamacpp": ("gpu.", "model.", "variant.", "weights.", "config.", "llamacpp."),
    "ollama": ("gpu.", "model.", "variant.", "weights.", "config.", "llamacpp.", "ollama."),
    "sglang": ("gpu.", "model.", "variant.", "weights.", "config.", "sglang."),  # SGLang beside vLLM: vLLM checkpoints only
}


def _placeholder_issues(error: ErrorSignature, source: Source) -> list[Issue]:
    issues = []
    prose = [(("triage",), "triage", error.triage), (("cause",), "cause", error.cause)]
    prose += [(("fixes", i, "note"), f"fixes[{i}].note", f.note) for i, f in enumerate(error.fixes)]
    prose += [(("faq", i, "answer"), f"faq[{i}].answer", f.answer) for i, f in enumerate(error.faq)]
    for loc, name, text in prose:
        for match in PLACEHOLDER.finditer(text):
            quantity = match.group(1)
            if quantity not in QUANTITY_NAMES:
                issues.append(source.issue(loc, name, f"{{{{ {quantity} }}}} is not a quantity the engine provides", _did_you_mean(quantity, QUANTITY_NAMES)))
            elif not quantity.startswith(_NAMESPACES[error.engine]):
                allowed = ", ".join(p.rstrip(".") for p in _NAMESPACES[error.engine])
                issues.append(source.issue(loc, name, f"{{{{ {quantity} }}}} is not computed for {error.engine} pages", f"Use quantities from {allowed}"))
    return issues
