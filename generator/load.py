"""The only reader of content/ and data/: YAML with line marks in, a validated Dataset out.

Every problem in every file is collected first and raised once as a ContentError, so an
editor sees the whole list in one pass.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, MutableMapping

import yaml
from pydantic import BaseModel, ValidationError

import generator.value_pickle as value_pickle
from generator.errors import ContentError, Issue
from generator.markdown import unsafe_links
from generator.schema import (
    ENGINE_NAMES,
    FILL_IN,
    PLACEHOLDER,
    QUANTITY_NAMES,
    AffiliateCatalog,
    Dataset,
    DateLedger,
    EngineCatalog,
    ErrorSignature,
    GpuCatalog,
    Model,
    ModelCatalog,
    Pair,
    SiteConfig,
)
from generator.schema_evidence import EVIDENCE_FILES, EVIDENCE_MODELS, Evidence

MAX_FILE_BYTES = 2 * 1024 * 1024
# The real CLIs' flag and environment lists every command block is checked against.
SURFACE_FILES = {"vllm": "vllm-serve-flags.txt", "sglang": "sglang-server-args.txt", "llamacpp": "llama-server-flags.txt", "ollama": "ollama-env.txt"}
# What releases removed and added (generator/launch/surface.py): without them a site's commands are
# checked against the newest surface alone.
RELEASE_SURFACE_FILES = {"removed": "removed-flags.txt", "added": "added-flags.txt"}
MAX_DEPTH = 40
_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)

Location = tuple[int, int]  # 1-based line, column
Loc = tuple[Any, ...]


@dataclass(frozen=True)
class Positions:
    """Where each value of one YAML file starts, keyed by its path of keys and indexes."""

    path: str
    marks: Mapping[Loc, Location]
    key_marks: Mapping[Loc, Location] = field(default_factory=dict)

    def key_at(self, loc: Loc) -> Location:
        """Where the key of loc is written (for unknown keys), else where its value starts."""
        return self.key_marks.get(tuple(loc)) or self.at(loc)

    def at(self, loc: Loc) -> Location:
        # Missing keys point at their parent mapping: the closest thing an editor can open.
        loc = tuple(loc)
        while loc and loc not in self.marks:
            loc = loc[:-1]
        return self.marks.get(loc, (1, 1))


@dataclass(frozen=True)
class Source:
    """A record and where it came from, for messages that point back into the file."""

    path: str
    positions: Positions
    loc: Loc = ()

    def issue(self, sub_loc: Loc, field_name: str, message: str, fix: str = "", *, at_key: bool = False) -> Issue:
        loc = self.loc + tuple(sub_loc)
        line, col = self.positions.key_at(loc) if at_key else self.positions.at(loc)
        return Issue(self.path, line, col, field_name, message, fix)


# --------------------------------------------------------------------------- YAML


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases and custom tags: content needs none of them,
    and aliases are how a small file expands into gigabytes."""

    _depth = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        # The composer recurses once per level: stop at MAX_DEPTH, long before Python's stack does.
        if self._depth > MAX_DEPTH:
            raise yaml.MarkedYAMLError(
                "while reading content", None, f"nesting deeper than {MAX_DEPTH} levels; flatten the structure", self.peek_event().start_mark
            )
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(
                "while reading content", None, "YAML aliases (*name) are not allowed; write the value out", event.start_mark
            )
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise yaml.MarkedYAMLError(
                "while reading content", None, f"YAML anchors (&{anchor}) are not allowed; write the value out", event.start_mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _YamlProblem(ContentError):
    """One file that is not YAML kvtriage accepts; a ContentError, so callers need no other type."""

    def __init__(self, line: int, col: int, message: str, fix: str = "", path: str = "<yaml>"):
        super().__init__([Issue(path, line, col, "", message, fix)])
        self.line, self.col, self.message, self.fix, self.path = line, col, message, fix, path


def _scalar(node: yaml.ScalarNode, loader: _StrictLoader) -> Any:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    try:
        value = loader.construct_object(node, deep=True)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError):
        # e.g. `!!int abc`, `!!bool maybe` or an empty `!!float`: the standard tag names a type the text is not.
        raise _YamlProblem(line, col, f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[-1]}", "Remove the tag or fix the value") from None
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            # "\ud800" escapes decode to lone surrogates, which no page can be written in.
            raise _YamlProblem(line, col, f"contains an unpaired surrogate {value[exc.start]!r}", "Remove the escape") from None
    return value


def _to_python(node: yaml.Node, loader: _StrictLoader, loc: Loc, marks: dict[Loc, Location], depth: int, key_marks: dict[Loc, Location]) -> Any:
    if depth > MAX_DEPTH:
        raise _YamlProblem(node.start_mark.line + 1, node.start_mark.column + 1, f"nesting deeper than {MAX_DEPTH} levels")
    marks[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if node.tag not in _STANDARD_TAGS:
        raise _YamlProblem(
            node.start_mark.line + 1, node.start_mark.column + 1, f"tag {node.tag!r} is not allowed", "Remove the tag"
        )
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _YamlProblem(key_node.start_mark.line + 1, key_node.start_mark.column + 1, "keys must be plain text")
            key = _scalar(key_node, loader) if key_node.tag == "tag:yaml.org,2002:str" else str(key_node.value)
            if key in result:
                raise _YamlProblem(
                    key_node.start_mark.line + 1, key_node.start_mark.column + 1, f"key {key!r} appears twice", "Keep one"
                )
            key_marks[loc + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _to_python(value_node, loader, loc + (key,), marks, depth + 1, key_marks)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, loader, loc + (i,), marks, depth + 1, key_marks) for i, item in enumerate(node.value)]
    if node.tag == "tag:yaml.org,2002:timestamp":
        # Dates stay text: pydantic and templates should see what the editor typed.
        return node.value
    return _scalar(node, loader)


def parse_yaml(path: str, data: bytes) -> tuple[Any, Positions]:
    """Parse one YAML document into plain Python values and their line marks.

    Raises _YamlProblem (a ContentError naming path) for anything kvtriage does not accept.
    """
    try:
        return _parse_yaml(path, data)
    except _YamlProblem as problem:
        if problem.path == path:
            raise
        raise _YamlProblem(problem.line, problem.col, problem.message, problem.fix, path) from None


def _parse_yaml(path: str, data: bytes) -> tuple[Any, Positions]:
    if len(data) > MAX_FILE_BYTES:
        raise _YamlProblem(1, 1, f"file is {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} allowed", "Split it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _YamlProblem(line, col, f"not UTF-8 (byte {exc.start} is 0x{data[exc.start]:02x})", "Save the file as UTF-8") from None
    if "\x00" in text:
        index = text.index("\x00")
        raise _YamlProblem(text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1, "contains a NUL character", "Remove it")
    loader = None
    try:
        loader = _StrictLoader(text)  # the reader checks every character here
        node = loader.get_single_node()
        marks: dict[Loc, Location] = {}
        key_marks: dict[Loc, Location] = {}
        value = _to_python(node, loader, (), marks, 0, key_marks) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise _YamlProblem(line, col, f"YAML: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:
        index = min(max(exc.position, 0), len(text))
        line, col = text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\x00")
        raise _YamlProblem(line, col, f"YAML: control character U+{code:04X} is not allowed", "Remove it") from None
    except yaml.YAMLError as exc:
        raise _YamlProblem(1, 1, f"YAML: {exc}") from None
    except RecursionError:
        raise _YamlProblem(1, 1, f"nesting deeper than {MAX_DEPTH} levels", "Flatten the structure") from None
    finally:
        if loader is not None:
            loader.dispose()
    return value, Positions(path, marks, key_marks)


# --------------------------------------------------------------------------- validation


def _field_name(loc: Loc) -> str:
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name


def _fix_for(error: Mapping[str, Any], model: type[BaseModel], loc: Loc) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        if owner is not None:
            close = difflib.get_close_matches(str(loc[-1]), list(owner.model_fields), n=1, cutoff=0.6)
            if close:
                return f"Did you mean {close[0]!r}?"
            return f"Allowed keys: {', '.join(owner.model_fields)}"
        return "Remove the key"
    if kind == "missing":
        return "Add it"
    if kind == "literal_error":
        return "Use one of the listed values"
    if kind == "value_error" and str(error.get("msg", "")).startswith("Value error, fill this in"):
        return f"Replace the {FILL_IN} placeholder"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "Write a whole number without quotes or units"
    if kind in ("float_parsing", "float_type"):
        return "Write a number without quotes or units"
    if kind == "value_error" and "rope_scaling" in str(error.get("msg", "")):
        return "Copy rope_scaling from the model's config.json; factor is a number such as 4.0"
    if kind == "finite_number":
        return "Write a finite number (not .inf or .nan)"
    if kind in ("less_than", "less_than_equal"):
        return "Check the value against its source; no GPU or model comes near this bound"
    if kind in ("greater_than", "greater_than_equal"):
        return "Check the value against its source"
    return ""


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """Follow a pydantic loc through nested models to the model that owns its last key."""
    import typing

    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        annotation = current.model_fields[part].annotation
        current = _inner_model(annotation, typing)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any, typing: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg, typing)
        if found is not None:
            return found
    return None


def _data_loc(data: Any, loc: Loc) -> Loc:
    """The part of a pydantic loc that names keys and indexes of the data; pydantic also puts
    union members and validator names ('function-after[...]', 'tuple[...]') there, which editors
    never wrote. Walking the data tells the two apart even for a key like ':[' ."""
    out: list[Any] = []
    current = data
    for part in loc:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and "[" not in part and not part.startswith("function-"):
            current = None  # a missing key: nothing below it
        else:
            continue
        out.append(part)
    return tuple(out)


def validate(model: type[BaseModel], data: Any, source: Source) -> tuple[BaseModel | None, list[Issue]]:
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        issues = []
        errors = exc.errors(include_url=False)
        failed_locs = [tuple(e["loc"]) for e in errors if e["type"] != "too_short"]
        for error in errors:
            if error["type"] == "too_short" and any(l[: len(error["loc"])] == tuple(error["loc"]) and len(l) > len(error["loc"]) for l in failed_locs):
                continue  # the list is short only because its items failed, which are reported
            loc = _data_loc(data, error["loc"])
            message = error["msg"]
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            if error["type"] == "extra_forbidden":
                message = f"unknown key {loc[-1]!r}"
            elif error["type"] == "missing":
                message = "is required"
            issues.append(
                source.issue(loc, _field_name(loc) or model.__name__, message, _fix_for(error, model, loc), at_key=error["type"] == "extra_forbidden")
            )
        # A misspelt key is also a missing one; "Did you mean 'x'?" on the unknown key says both.
        meant = {(i.path, i.field.rsplit(".", 1)[0] if "." in i.field else "", i.fix[len("Did you mean '") : -2]) for i in issues if i.message.startswith("unknown key") and i.fix.startswith("Did you mean '")}  # noqa: E501
        issues = [
            i for i in issues
            if not (i.message == "is required" and (i.path, i.field.rsplit(".", 1)[0] if "." in i.field else "", i.field.rsplit(".", 1)[-1]) in meant)
        ]
        return None, issues


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
    except _YamlProblem as problem:
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

    errors: dict[str, tuple[ErrorSignature, Source]] = {}
    error_sources: list[tuple[str, Source]] = []
    for record, source in _content_records(root, "content/errors", ErrorSignature, issues, parse_cache):
        stem = Path(source.path).stem
        if record.id != stem:
            issues.append(source.issue(("id",), "id", f"{record.id!r} differs from the file name {stem!r}", f"Rename the file to {record.id}.yaml or set id: {stem}"))
        error_sources.append((record.id, source))
        errors.setdefault(record.id, (record, source))

    pairs: list[tuple[Pair, Source]] = []
    for record, source in _content_records(root, "content/pairs", Pair, issues, parse_cache):
        expected = f"{record.gpu}--{record.model}-{record.variant}"
        if Path(source.path).stem != expected:
            issues.append(source.issue((), "", f"file name should be {expected}.yaml for this pair", f"Rename the file to {expected}.yaml"))
        pairs.append((record, source))

    ledger = None
    if (root / "data/lastmod.yaml").is_file():
        ledger = _catalog(root, "data/lastmod.yaml", DateLedger, issues, parse_cache)

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
    issues.extend(_url_collisions(model_records))
    issues.extend(_alias_issues("GPU", gpu_records))
    issues.extend(_alias_issues("model", model_records))
    issues.extend(_alias_issues("error", errors))

    # Error files that exist but failed to validate are reported already; naming them is not dangling.
    broken_errors = {Path(rel).stem for rel in _content_files(root, "content/errors")} - set(errors)
    issues.extend(_cross_references(gpu_records, model_records, program_records, errors, pairs, broken_errors))

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


def _evidence(root: Path, issues: list[Issue], cache: MutableMapping[str, bytes] | None) -> Evidence | None:
    """The real-log tables that exist under data/evidence/, validated."""
    found = {}
    for engine, relative in EVIDENCE_FILES.items():
        if (root / relative).is_file() and (parsed := _catalog(root, relative, EVIDENCE_MODELS[engine], issues, cache)) is not None:
            found[engine] = parsed[0]
    return Evidence(**found) if found else None


def _url_collisions(models: Mapping[str, tuple[Model, Source]]) -> list[Issue]:
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


def _alias_issues(what: str, records: Mapping[str, tuple[Any, Source]]) -> list[Issue]:
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


def _cross_references(gpus, models, programs, errors, pairs, broken_errors: frozenset[str] | set[str] = frozenset()) -> list[Issue]:
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
            elif error_id in errors and variant is not None and errors[error_id][0].engine not in variant.engines:
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
