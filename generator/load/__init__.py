"""The only reader of content/ and data/: YAML with line marks in, a validated Dataset out.

Every problem in every file is collected first and raised once as a ContentError, so an
editor sees the whole list in one pass. The helpers live beside this module: yaml_marks.py
(parsing), validation.py (pydantic errors as issues), cross_checks.py (rules over several records)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Iterable, MutableMapping

from pydantic import BaseModel

import generator.value_pickle as value_pickle
from generator.errors import ContentError, Issue
from generator.load.cross_checks import alias_issues, cross_references, url_collisions
from generator.load.validation import _field_name, validate
from generator.load.yaml_marks import Loc, Positions, Source, YamlProblem, parse_yaml
from generator.markdown import unsafe_links
from generator.schema import (
    AffiliateCatalog,
    Dataset,
    DateLedger,
    EngineCatalog,
    ErrorSignature,
    GpuCatalog,
    ModelCatalog,
    Pair,
    SiteConfig,
)
from generator.schema.evidence import EVIDENCE_FILES, EVIDENCE_MODELS, Evidence

# The real CLIs' flag and environment lists every command block is checked against.
SURFACE_FILES = {"vllm": "vllm-serve-flags.txt", "sglang": "sglang-server-args.txt", "llamacpp": "llama-server-flags.txt", "ollama": "ollama-env.txt"}
# What releases removed and added (generator/launch/surface.py): without them a site's commands are
# checked against the newest surface alone.
RELEASE_SURFACE_FILES = {"removed": "removed-flags.txt", "added": "added-flags.txt"}


# --------------------------------------------------------------------------- files


def _read(root: Path, relative: str, issues: list[Issue], cache: MutableMapping[str, bytes] | None = None) -> tuple[Any, Positions] | None:
    path = root / relative
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            # A symlink to /etc/... would publish whatever it points at.
            issues.append(Issue(relative, 1, 0, "", "is a link to a file outside the site root", "Copy the file in instead"))
            return None
        data = path.read_bytes()
    except OSError as exc:
        issues.append(Issue(relative, 1, 0, "", f"cannot read file: {exc.strerror or exc}", "Check that it exists"))
        return None
    key = None
    if cache is not None:
        # Parsing is most of a load; a rebuild re-parses only the files whose bytes changed.
        key = hashlib.sha256(relative.encode() + b"\0" + data).hexdigest()
        hit = cache.get(key)
        if hit is not None:
            try:
                parsed, link_issues = value_pickle.loads(hit)  # type: ignore[misc]  # a fresh copy: callers may change it
            except value_pickle.CACHE_ERRORS:
                parsed = None  # a damaged entry: parse the file again
            if parsed is not None:
                issues.extend(link_issues)
                return parsed
    try:
        parsed = parse_yaml(relative, data)
    except YamlProblem as problem:
        issues.append(Issue(relative, problem.line, problem.col, "", problem.message, problem.fix))
        return None
    link_issues = _link_issues(parsed[0], Source(relative, parsed[1]))
    issues.extend(link_issues)
    if key is not None:
        cache[key] = value_pickle.dumps((parsed, link_issues))
    return parsed


def _strings(value: Any, loc: Loc = ()) -> Iterable[tuple[Loc, str]]:
    if isinstance(value, str):
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, loc + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, loc + (i,))


def _link_issues(data: Any, source: Source) -> list[Issue]:
    """Any text may reach a page as Markdown, so every string is held to the renderer's link rule."""
    issues = []
    for loc, text in _strings(data):
        if "](" not in text and "]:" not in text and "<" not in text:
            continue  # no inline, reference or autolink: skip the parse
        for target in unsafe_links(text):
            issues.append(
                source.issue(loc, _field_name(loc), f"link to {target[:80]!r} is not allowed", "Link to an https:// or http:// address, a site path (/...) or an #anchor")
            )
    return issues


def _content_files(root: Path, folder: str) -> list[str]:
    directory = root / folder
    if not directory.is_dir():
        return []
    names = sorted(p.name for p in directory.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))
    return [f"{folder}/{name}" for name in names]


def _catalog(root: Path, relative: str, model: type[BaseModel], issues: list[Issue],
             cache: MutableMapping[str, bytes] | None = None) -> tuple[Any, Positions] | None:
    parsed = _read(root, relative, issues, cache)
    if parsed is None:
        return None
    data, positions = parsed
    record, problems = validate(model, data, Source(relative, positions))
    issues.extend(problems)
    return (record, positions) if record is not None else None


def _content_records(root: Path, folder: str, model: type[BaseModel], issues: list[Issue],
                     cache: MutableMapping[str, bytes] | None = None) -> list[tuple[Any, Source]]:
    """One record per file under folder, validated; files that fail add their issues and are skipped."""
    found = []
    for relative in _content_files(root, folder):
        parsed = _read(root, relative, issues, cache)
        if parsed is None:
            continue
        source = Source(relative, parsed[1])
        record, problems = validate(model, parsed[0], source)
        issues.extend(problems)
        if record is not None:
            found.append((record, source))
    return found


def _unique(records: Iterable[tuple[str, Source]], what: str, issues: list[Issue]) -> None:
    seen: dict[str, Source] = {}
    for slug, source in records:
        if slug in seen:
            first = seen[slug]
            line, _ = first.positions.at(first.loc)
            issues.append(source.issue(("id",), "id", f"{what} {slug!r} is already used at {first.path}:{line}", "Pick another id"))
        else:
            seen[slug] = source


INPUT_FOLDERS = ("content", "data", "templates")


def links_outside(root: Path) -> list[Issue]:
    """Every symbolic link among the inputs (content/, data/, templates/ and the folders themselves)
    whose target is outside root: a build would read, and publish, a file that is not the site's."""
    root = Path(root).resolve()
    issues = []

    def outside(path: Path) -> bool:
        target = path.resolve()
        return target != root and root not in target.parents

    def refuse(path: Path) -> None:
        kind = "folder" if path.is_dir() else "file"
        issues.append(Issue(path.relative_to(root).as_posix(), 1, 0, "", f"is a link to a {kind} outside the site root",
                            f"Copy the {kind} in instead"))

    for name in INPUT_FOLDERS:
        folder = root / name
        if folder.is_symlink():
            if outside(folder):
                refuse(folder)
            continue
        for current, dirs, files in os.walk(folder):
            for entry in (*dirs, *files):
                path = Path(current) / entry
                if path.is_symlink() and outside(path):
                    refuse(path)
    return issues


def _error_records(root: Path, issues: list[Issue], parse_cache: MutableMapping[str, bytes] | None,
                   ) -> tuple[dict[str, tuple[ErrorSignature, Source]], list[tuple[str, Source]]]:
    """content/errors/: the first record of each id, and every (id, file) to tell duplicates."""
    errors: dict[str, tuple[ErrorSignature, Source]] = {}
    error_sources: list[tuple[str, Source]] = []
    for record, source in _content_records(root, "content/errors", ErrorSignature, issues, parse_cache):
        stem = Path(source.path).stem
        if record.id != stem:
            issues.append(source.issue(("id",), "id", f"{record.id!r} differs from the file name {stem!r}", f"Rename the file to {record.id}.yaml or set id: {stem}"))
        error_sources.append((record.id, source))
        errors.setdefault(record.id, (record, source))
    return errors, error_sources


def _pair_records(root: Path, issues: list[Issue], parse_cache: MutableMapping[str, bytes] | None) -> list[tuple[Pair, Source]]:
    pairs: list[tuple[Pair, Source]] = []
    for record, source in _content_records(root, "content/pairs", Pair, issues, parse_cache):
        expected = f"{record.gpu}--{record.model}-{record.variant}"
        if Path(source.path).stem != expected:
            issues.append(source.issue((), "", f"file name should be {expected}.yaml for this pair", f"Rename the file to {expected}.yaml"))
        pairs.append((record, source))
    return pairs


def _surfaces(root: Path, issues: list[Issue]) -> dict[str, str]:
    """data/surfaces/: each engine's CLI surface, as text."""
    surfaces: dict[str, str] = {}
    for engine, name in SURFACE_FILES.items():
        path = root / "data" / "surfaces" / name
        try:
            surfaces[engine] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            issues.append(Issue(f"data/surfaces/{name}", 1, 0, "", f"cannot read the {engine} CLI surface: {exc}", f"Restore it with git checkout data/surfaces/{name}"))
    for kind, name in RELEASE_SURFACE_FILES.items():
        if (root / "data" / "surfaces" / name).is_file():
            surfaces[kind] = (root / "data" / "surfaces" / name).read_text(encoding="utf-8")
    return surfaces


def _evidence(root: Path, issues: list[Issue], cache: MutableMapping[str, bytes] | None) -> Evidence | None:
    """The real-log tables that exist under data/evidence/, validated."""
    found = {}
    for engine, relative in EVIDENCE_FILES.items():
        if (root / relative).is_file() and (parsed := _catalog(root, relative, EVIDENCE_MODELS[engine], issues, cache)) is not None:
            found[engine] = parsed[0]
    return Evidence(**found) if found else None


def load_dataset(root: Path, parse_cache: MutableMapping[str, bytes] | None = None) -> Dataset:
    """Read and validate every record under root, or raise ContentError with all problems.

    parse_cache, when given, keeps each file's parse by its path and bytes between loads."""
    root = Path(root)
    issues: list[Issue] = links_outside(root)
    if issues:
        raise ContentError(issues)

    site = _catalog(root, "data/site.yaml", SiteConfig, issues, parse_cache)
    gpus = _catalog(root, "data/gpus.yaml", GpuCatalog, issues, parse_cache)
    models = _catalog(root, "data/models.yaml", ModelCatalog, issues, parse_cache)
    engines = _catalog(root, "data/engines.yaml", EngineCatalog, issues, parse_cache)
    affiliates = _catalog(root, "data/affiliates.yaml", AffiliateCatalog, issues, parse_cache)

    errors, error_sources = _error_records(root, issues, parse_cache)
    pairs = _pair_records(root, issues, parse_cache)

    ledger = None
    if (root / "data/lastmod.yaml").is_file():
        ledger = _catalog(root, "data/lastmod.yaml", DateLedger, issues, parse_cache)

    surfaces = _surfaces(root, issues)
    evidence = _evidence(root, issues, parse_cache)

    if None in (site, gpus, models, engines, affiliates):
        raise ContentError(issues)

    gpu_records = {g.id: (g, Source("data/gpus.yaml", gpus[1], ("gpus", i))) for i, g in enumerate(gpus[0].gpus)}
    model_records = {m.id: (m, Source("data/models.yaml", models[1], ("models", i))) for i, m in enumerate(models[0].models)}
    program_records = {p.id: (p, Source("data/affiliates.yaml", affiliates[1], ("programs", i))) for i, p in enumerate(affiliates[0].programs)}
    _unique(((g.id, Source("data/gpus.yaml", gpus[1], ("gpus", i))) for i, g in enumerate(gpus[0].gpus)), "GPU id", issues)
    _unique(((m.id, Source("data/models.yaml", models[1], ("models", i))) for i, m in enumerate(models[0].models)), "model id", issues)
    _unique(((p.id, Source("data/affiliates.yaml", affiliates[1], ("programs", i))) for i, p in enumerate(affiliates[0].programs)), "program id", issues)
    _unique(error_sources, "error id", issues)
    _unique(((e.id, Source("data/engines.yaml", engines[1], ("engines", i))) for i, e in enumerate(engines[0].engines)), "engine id", issues)
    issues.extend(url_collisions(model_records))
    issues.extend(alias_issues("GPU", gpu_records))
    issues.extend(alias_issues("model", model_records))
    issues.extend(alias_issues("error", errors))

    # Error files that exist but failed to validate are reported already; naming them is not dangling.
    broken_errors = {Path(rel).stem for rel in _content_files(root, "content/errors")} - set(errors)
    issues.extend(cross_references(gpu_records, model_records, program_records, errors, pairs, broken_errors))

    if issues:
        raise ContentError(issues)

    origins = {f"gpu:{g}": "data/gpus.yaml" for g in gpu_records}
    origins.update({f"model:{m}": "data/models.yaml" for m in model_records})
    origins.update({f"error:{e}": src.path for e, (_, src) in errors.items()})
    origins.update({f"pair:{p.gpu}--{p.model}-{p.variant}": src.path for p, src in pairs})
    return Dataset(
        site=site[0],
        gpus={k: v[0] for k, v in sorted(gpu_records.items())},
        models={k: v[0] for k, v in sorted(model_records.items())},
        engines={e.id: e for e in engines[0].engines},
        affiliates={k: v[0] for k, v in sorted(program_records.items())},
        errors={k: v[0] for k, v in sorted(errors.items())},
        pairs=tuple(sorted((p for p, _ in pairs), key=lambda p: (p.gpu, p.model, p.variant))),
        origins=origins,
        ledger=ledger[0].records if ledger else {},
        surfaces=surfaces,
        evidence=evidence,
    )
