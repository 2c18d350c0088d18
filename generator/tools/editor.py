"""Editor tools: record skeletons (`new`), JSON Schemas (`schema`) and model import (`import-model`).

Everything here writes YAML that `load` then judges; nothing here decides what is valid.
Skeletons carry "FILL IN: ..." where only an editor knows the value: schema.Record refuses
that text in every field, so `check` names exactly the fields left to fill.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import BaseModel

from generator.errors import ContentError, Issue, SiteError
from generator.kv.catalog import SHIPPED_CATALOG_PATH, shipped_catalog_bytes
from generator.load import Positions, Source, load_dataset, parse_yaml, validate
from generator.schema import (
    ENGINES,
    FILL_IN,
    QUANTITY_NAMES,
    SLUG_PATTERN,
    AffiliateCatalog,
    DateLedger,
    EngineCatalog,
    ErrorSignature,
    GpuCatalog,
    HfConfig,
    Lever,
    ModelCatalog,
    Pair,
    Scenario,
    SiteConfig,
)

# --------------------------------------------------------------------------- JSON Schemas

SCHEMA_DIR = "data/schemas"
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "site": SiteConfig,
    "gpus": GpuCatalog,
    "models": ModelCatalog,
    "engines": EngineCatalog,
    "affiliates": AffiliateCatalog,
    "error": ErrorSignature,
    "pair": Pair,
    "lastmod": DateLedger,
}
_DATA_SCHEMAS = {"site", "gpus", "models", "engines", "affiliates", "lastmod"}
MODELINE_PREFIX = "# yaml-language-server: $schema="


def json_schemas() -> dict[str, bytes]:
    """data/schemas/<name>.schema.json -> bytes, generated from the pydantic models, deterministic."""
    out = {}
    for name, model in SCHEMA_MODELS.items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **model.model_json_schema(mode="validation")}
        out[f"{SCHEMA_DIR}/{name}.schema.json"] = (json.dumps(schema, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return out


def schema_name_for(relative: str) -> str | None:
    """Which schema a YAML file under content/ or data/ follows, or None for files load does not read."""
    parts = Path(relative).parts
    stem = Path(relative).stem
    if len(parts) == 2 and parts[0] == "data" and stem in _DATA_SCHEMAS:
        return stem
    if len(parts) == 3 and parts[:2] == ("content", "errors"):
        return "error"
    if len(parts) == 3 and parts[:2] == ("content", "pairs"):
        return "pair"
    return None


def modeline_for(relative: str) -> str | None:
    """The first line a YAML file needs so editors validate it against its schema."""
    name = schema_name_for(relative)
    if name is None:
        return None
    up = "../" * (len(Path(relative).parts) - 1)
    return f"{MODELINE_PREFIX}{up}{SCHEMA_DIR}/{name}.schema.json"


def yaml_files(root: Path) -> list[str]:
    """Every YAML file under content/ and data/, relative to root, sorted."""
    found = []
    for folder in ("content", "data"):
        base = root / folder
        if base.is_dir():
            found += [p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml")]
    return sorted(found)


def modeline_target(root: Path, relative: str) -> Path | None:
    """The schema file a YAML file's first line points at, if it has such a line."""
    first = (root / relative).read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    if not first.startswith(MODELINE_PREFIX):
        return None
    return ((root / relative).parent / first[len(MODELINE_PREFIX) :].strip()).resolve()


def modeline_problems(root: Path) -> list[Issue]:
    """YAML files whose first line is not `modeline_for` them: the path from the file to
    ROOT/data/schemas/, so it holds in any copy of the root, and the schema it names exists."""
    issues = []
    for relative in yaml_files(root):
        wanted = modeline_for(relative)
        if wanted is None:
            issues.append(Issue(relative, 1, 0, "", "kvtriage reads no YAML file here", "Move it to content/errors/, content/pairs/ or data/"))
            continue
        target = modeline_target(root, relative)
        first = (root / relative).read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
        if first != wanted:
            issues.append(Issue(relative, 1, 1, "", f"first line should be {wanted!r}", "Run `kvtriage schema --fix-modelines`"))
        elif target is None or not target.is_file():
            issues.append(Issue(relative, 1, 1, "", f"{wanted.split('=', 1)[1]} does not exist", "Run `kvtriage schema`"))
    return issues


def writable_path(root: Path, relative: str) -> Path:
    """root/relative, when writing there stays inside root: neither the file nor a folder on the way
    is a link to somewhere else. Otherwise a ContentError naming the path."""
    root = Path(root).resolve()
    path = root / relative
    target = path.resolve()
    if path.is_symlink() or (target != root and root not in target.parents):
        raise ContentError([Issue(relative, 1, 0, "", f"resolves to {target}, a symbolic link or outside the site root",
                                  "Replace the link with the file itself; kvtriage writes only inside the root")])
    return path



def fix_modelines(root: Path) -> list[str]:
    """Insert or correct the modeline of each YAML file; returns the files changed."""
    changed = []
    broken = {issue.path for issue in modeline_problems(root)}
    for relative in yaml_files(root):
        wanted = modeline_for(relative)
        if wanted is None:
            continue
        path = writable_path(root, relative)
        text = path.read_text(encoding="utf-8")
        first, _, rest = text.partition("\n")
        if relative not in broken:
            continue
        text = (wanted + "\n" + rest) if first.startswith(MODELINE_PREFIX) else (wanted + "\n" + text)
        path.write_text(text, encoding="utf-8")
        changed.append(relative)
    return changed


def generated_files(root: Path) -> dict[str, bytes]:
    """What `kvtriage schema` writes: the JSON Schemas, and in this repository (where generator/ sits
    under the root) the catalog `kvtriage kv` ships as package data."""
    files = dict(json_schemas())
    if (Path(root) / SHIPPED_CATALOG_PATH).parent.is_dir():
        files[SHIPPED_CATALOG_PATH] = shipped_catalog_bytes(load_dataset(root))
    return files


def write_schemas(root: Path) -> list[str]:
    """Write every generated file whose bytes changed; returns their paths."""
    changed = []
    for relative, data in generated_files(root).items():
        path = writable_path(root, relative)
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changed.append(relative)
    return changed


def stale_schemas(root: Path) -> list[str]:
    return [rel for rel, data in generated_files(root).items() if not (root / rel).is_file() or (root / rel).read_bytes() != data]


# --------------------------------------------------------------------------- catalog ids (raw)


@dataclass(frozen=True)
class KnownIds:
    """Ids as written in data/ and content/, read without validation so a half-edited site still lists them."""

    gpus: tuple[str, ...]
    models: Mapping[str, tuple[str, ...]]  # model id -> variant ids
    errors: tuple[str, ...]


def _raw(root: Path, relative: str) -> tuple[Any, Positions] | None:
    path = root / relative
    if not path.is_file():
        return None
    try:
        return parse_yaml(relative, path.read_bytes())
    except ContentError:
        return None


def _ids(items: Any) -> list[str]:
    """The ids of a list of records, skipping any not yet filled in."""
    if not isinstance(items, list):
        return []
    return [str(item["id"]) for item in items if isinstance(item, dict) and re.fullmatch(SLUG_PATTERN, str(item.get("id", "")))]


def known_ids(root: Path) -> KnownIds:
    gpus = _raw(root, "data/gpus.yaml")
    models = _raw(root, "data/models.yaml")
    model_items = models[0].get("models", []) if models and isinstance(models[0], dict) else []
    variants = {
        str(m["id"]): tuple(_ids(m.get("variants")))
        for m in (model_items if isinstance(model_items, list) else [])
        if isinstance(m, dict) and "id" in m
    }
    errors_dir = root / "content" / "errors"
    errors = tuple(sorted(p.stem for p in errors_dir.glob("*.y*ml"))) if errors_dir.is_dir() else ()
    return KnownIds(
        gpus=tuple(_ids(gpus[0].get("gpus")) if gpus and isinstance(gpus[0], dict) else ()),
        models=variants,
        errors=errors,
    )


# --------------------------------------------------------------------------- skeletons

NEW_KINDS = ("error", "gpu", "model", "pair")


@dataclass(frozen=True)
class Skeleton:
    path: str  # relative to root
    text: str  # the whole file as it should be written
    appended: bool  # True when the record was added to an existing catalog


def _fill(hint: str) -> str:
    return json.dumps(f"{FILL_IN}: {hint}", ensure_ascii=False)


def _examples(values: Iterable[str], n: int = 6) -> str:
    values = list(values)
    if not values:
        return "none yet"
    return ", ".join(values[:n]) + (", ..." if len(values) > n else "")


def _refuse(path: str, message: str, fix: str) -> ContentError:
    return ContentError([Issue(path, 1, 0, "", message, fix)])


def _check_new_slug(kind: str, slug: str) -> None:
    # The same rule as schema.Slug: no '/', '..', '\\', '%' or NUL can reach a file name.
    if not re.fullmatch(SLUG_PATTERN, slug) or len(slug) > 80:
        raise _refuse(
            f"<{kind} slug>",
            f"{slug!r} is not a valid slug; use lowercase letters, digits, '-' or '.' between words (at most 80 characters)",
            "Pick a slug like rtx-4090 or vllm-max-model-len-error",
        )


def _error_skeleton(slug: str, ids: KnownIds) -> str:
    engine = next((e for e in ENGINES if slug.startswith(e + "-")), None)
    scenarios = [s for s in typing.get_args(Scenario) if engine is None or s.startswith(engine + "-")]
    levers = ", ".join(typing.get_args(Lever))
    gpu_hint = f"a GPU id from data/gpus.yaml ({_examples(ids.gpus)})"
    model_hint = f"a model id from data/models.yaml ({_examples(ids.models)})"
    pairs = [f"{m}: {', '.join(v)}" for m, v in list(ids.models.items())[:4]]
    quantity_examples = ", ".join(sorted(QUANTITY_NAMES)[:6])
    engine_line = f"engine: {engine}" if engine else f"engine: {_fill('one of ' + ', '.join(ENGINES))}"
    return f"""# yaml-language-server: $schema=../../data/schemas/error.schema.json
# Written by `kvtriage new error {slug}`. Replace every "{FILL_IN}: ..." value; `kvtriage check`
# lists the ones left. Prose never carries numbers: it names quantities the engine fills in
# for each GPU and model, like {{{{ gpu.name }}}} or {{{{ vllm.max_len }}}} (all of them: QUANTITY_NAMES in
# generator/schema.py, e.g. {quantity_examples}). Links may go to https:// addresses only.
id: {slug}
{engine_line}
scenario: {_fill('one of ' + ', '.join(scenarios))}
title: {_fill('the error as readers search for it, at most 120 characters')}
# short_name: max seq len error   # optional: what pair-page titles call it (3 to 40 characters)
description: {_fill('what the page answers, 50 to 160 characters, for search results')}
signature: {_fill('the line readers paste, as the current release prints it')}
texts:
  # One entry per wording, newest first.
  - versions: {_fill('the releases that print this text, e.g. 0.29.0 to 0.33.0')}
    text: {_fill('the exact text, with {name} where the engine prints a number')}
    source: {_fill('the file and release it comes from, as a URL or repo path@commit')}
pattern: {_fill('a regex, valid in Python and JavaScript, that matches every text above')}
triage: |
  {FILL_IN}: what happened and the one thing to do first, in two or three sentences.
cause: |
  {FILL_IN}: why the engine ran out of memory, step by step, naming quantities.
fixes:
  # lever: one of {levers}
  - lever: {_fill('one of the levers listed above')}
    note: {_fill('one or two sentences on what this lever buys')}
faq: []
# faq:
#   - question: Why does ... ?
#     answer: Because ...
example:
  # The worked example on the error's own page. Known models and variants: {'; '.join(pairs) or 'none yet'}
  gpu: {_fill(gpu_hint)}
  model: {_fill(model_hint)}
  variant: {_fill("one of that model's variant ids")}
related: []
"""


def _pair_skeleton(slug: str, ids: KnownIds) -> str:
    gpu, sep, rest = slug.partition("--")
    if not sep or not gpu or not rest:
        raise _refuse("<pair slug>", f"{slug!r} is not GPU--MODEL-VARIANT", "e.g. kvtriage new pair rtx-4090--qwen2.5-coder-32b-instruct-awq")
    if gpu not in ids.gpus:
        raise _refuse("data/gpus.yaml", f"GPU {gpu!r} does not exist", f"Known GPUs: {_examples(ids.gpus, 10)}")
    matches = [(m, v) for m, variants in ids.models.items() for v in variants if f"{m}-{v}" == rest]
    if len(matches) != 1:
        known = [f"{m}-{v}" for m, vs in ids.models.items() for v in vs]
        raise _refuse("data/models.yaml", f"no single model and variant make {rest!r}", f"Known MODEL-VARIANT: {_examples(known, 10)}")
    model, variant = matches[0]
    return f"""# yaml-language-server: $schema=../../data/schemas/pair.schema.json
# Written by `kvtriage new pair {slug}`. Replace every "{FILL_IN}: ..." value; `kvtriage check`
# lists the ones left. Every GPU/model page exists already; this file adds settings or prose.
gpu: {gpu}
model: {model}
variant: {variant}
errors: [{_fill('ids of the errors this page features, e.g. ' + _examples(ids.errors, 3))}]
# settings:
#   gpu_memory_utilization: 0.90
#   max_model_len: 32768
#   kv_cache_dtype: fp8
# intro: |
#   A few sentences for this GPU and model, shown above the numbers.
"""


def _gpu_item(slug: str, dash: str) -> str:
    pad = dash + "  "
    return f"""{dash}# Added by `kvtriage new gpu {slug}`: replace every "{FILL_IN}: ..." value; each figure needs a source.
{dash}- id: {slug}
{pad}name: {_fill('the product name, e.g. GeForce RTX 4090')}
{pad}vendor: {_fill('nvidia or amd')}
{pad}architecture: {_fill('e.g. Ada Lovelace')}
{pad}marketed_gb: {_fill('memory as marketed, in GB, a whole number')}
{pad}cuda_total_bytes: {_fill('total memory in bytes as CUDA reports it (deviceQuery totalGlobalMem, or torch.cuda.get_device_properties(0).total_memory)')}
{pad}# nvidia_smi_total_mib: 24564   # instead of cuda_total_bytes when nvidia-smi is all you have
{pad}memory_source: {_fill('where the memory figure was read, as a URL or repo path@commit')}
{pad}source: {_fill('where the other facts come from, as a URL or repo path@commit')}
{pad}# bandwidth_gb_s: 1008          # optional, with bandwidth_source
{pad}# compute_capability: "8.9"     # optional, with compute_capability_source
{pad}# buy_query: RTX 4090 24GB      # optional: the search the buy links use
{pad}# rent: [runpod, vast]          # optional: rent programs in data/affiliates.yaml
"""


def _model_item(slug: str, dash: str) -> str:
    pad = dash + "  "
    cfg = pad + "  "
    var = pad + "  "
    return f"""{dash}# Added by `kvtriage new model {slug}`: replace every "{FILL_IN}: ..." value. `kvtriage import-model
{dash}# --hf-config config.json --id {slug}` fills `config` from the model's own config.json.
{dash}- id: {slug}
{pad}name: {_fill('the model name, e.g. Qwen2.5-Coder-32B-Instruct')}
{pad}family: {_fill('e.g. Qwen2.5')}
{pad}hf_repo: {_fill('the Hugging Face repository, owner/name')}
{pad}config:
{cfg}# config.json keys under their Hugging Face names, exactly as shipped.
{cfg}model_type: {_fill('model_type from config.json')}
{cfg}num_hidden_layers: {_fill('num_hidden_layers')}
{cfg}num_attention_heads: {_fill('num_attention_heads')}
{cfg}num_key_value_heads: {_fill('num_key_value_heads')}
{cfg}hidden_size: {_fill('hidden_size')}
{cfg}vocab_size: {_fill('vocab_size')}
{cfg}max_position_embeddings: {_fill('max_position_embeddings')}
{cfg}torch_dtype: {_fill('bfloat16, float16 or float32')}
{pad}config_source: {_fill('the config.json URL, pinned to a commit')}
{pad}variants:
{pad}  - id: {_fill('a slug for this build, e.g. bf16, awq, q4-k-m')}
{var}  name: {_fill('e.g. BF16, AWQ int4, GGUF Q4_K_M')}
{var}  format: {_fill('one of bf16, fp16, fp8, awq, gptq, mxfp4, gguf')}
{var}  hf_repo: {_fill('the repository the engine loads, owner/name')}
{var}  # gguf_file: Model-Q4_K_M.gguf   # gguf builds: the file, and gguf_type: Q4_K_M
{var}  # checkpoint_bytes: 19330000000  # bytes on disk, when a source lists them
{var}  source: {_fill('where the build and its size are listed')}
"""


def _append_item(root: Path, relative: str, key: str, slug: str, make_item: Any, header: str) -> str:
    """The catalog's text with item appended to its top-level `key:` list, or a refusal."""
    path = root / relative
    text = path.read_text(encoding="utf-8") if path.is_file() else f"{header}\n{key}:\n"
    try:
        data, positions = parse_yaml(relative, text.encode("utf-8"))
    except ContentError as error:
        raise ContentError([*error.issues, Issue(relative, 1, 0, "", "cannot add a record to a file that does not parse", "Fix it first")]) from None
    items = data.get(key) if isinstance(data, dict) else None
    if data is not None and not isinstance(items, (list, type(None))):
        raise _refuse(relative, f"`{key}:` is not a list", "Fix the file first")
    if slug in _ids(items or []):
        line, _ = positions.at((key, _ids(items or []).index(slug)))
        raise _refuse(relative, f"{slug!r} already exists (line {line})", "Edit that record, or pick another id")
    if items:
        dash = " " * max(positions.at((key, 0))[1] - 3, 0)
    else:
        dash = "  "
        text = re.sub(rf"(?m)^{key}:\s*(\[\])?\s*$", f"{key}:", text)
    if not text.endswith("\n"):
        text += "\n"
    new_text = text + make_item(slug, dash)
    data2, positions2 = parse_yaml(relative, new_text.encode("utf-8"))
    items2 = data2.get(key) if isinstance(data2, dict) else None
    if not isinstance(items2, list) or not items2 or not isinstance(items2[-1], dict) or items2[-1].get("id") != slug:
        raise _refuse(relative, f"`{key}:` is not the last list in the file, so a record cannot be appended", "Add the record by hand")
    return new_text


def skeleton(root: Path, kind: str, slug: str) -> Skeleton:
    """The file `kvtriage new KIND SLUG` writes, or ContentError saying why not."""
    root = Path(root)
    if kind not in NEW_KINDS:
        raise _refuse(f"<{kind}>", f"unknown record kind {kind!r}", f"Use one of {', '.join(NEW_KINDS)}")
    if kind == "pair":
        gpu, _, rest = slug.partition("--")
        _check_new_slug(kind, gpu or slug)
        _check_new_slug(kind, rest or slug)
    else:
        _check_new_slug(kind, slug)
    ids = known_ids(root)
    if kind == "error":
        relative = f"content/errors/{slug}.yaml"
        if (root / relative).exists() or (root / relative).with_suffix(".yml").exists() or slug in ids.errors:
            raise _refuse(relative, "already exists", "Edit it, or pick another slug")
        return Skeleton(relative, _error_skeleton(slug, ids), appended=False)
    if kind == "pair":
        relative = f"content/pairs/{slug}.yaml"
        if (root / relative).exists() or (root / relative).with_suffix(".yml").exists():
            raise _refuse(relative, "already exists", "Edit it")
        return Skeleton(relative, _pair_skeleton(slug, ids), appended=False)
    key, item = ("gpus", _gpu_item) if kind == "gpu" else ("models", _model_item)
    relative = f"data/{key}.yaml"
    return Skeleton(relative, _append_item(root, relative, key, slug, item, f"{MODELINE_PREFIX}../{SCHEMA_DIR}/{key}.schema.json"), appended=True)


def fill_in_issues(root: Path, relative: str) -> tuple[list[Issue], list[Issue]]:
    """(fields still to fill in relative, other problems in relative) as `check` reports them."""
    try:
        load_dataset(root)
    except SiteError as error:
        mine = [i for i in error.issues if i.path == relative]
        return [i for i in mine if i.message.startswith("fill this in")], [i for i in mine if not i.message.startswith("fill this in")]
    return [], []


def write_new(root: Path, kind: str, slug: str) -> tuple[Skeleton, list[Issue], list[Issue]]:
    made = skeleton(root, kind, slug)
    path = writable_path(root, made.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if made.appended:
        path.write_text(made.text, encoding="utf-8")
    else:
        with open(path, "x", encoding="utf-8") as handle:  # "x": never overwrite, even in a race
            handle.write(made.text)
    to_fill, other = fill_in_issues(Path(root), made.path)
    return made, to_fill, other


# --------------------------------------------------------------------------- YAML out

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        mantissa, e, exponent = repr(value).partition("e")
        # PyYAML (YAML 1.1) reads a float only with a '.' in it: 1e+20 would be a string.
        return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return yaml_scalar(value)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple))


def yaml_block(value: Mapping[str, Any], indent: int, width: int = 100) -> list[str]:
    """A mapping as block YAML: nested mappings as blocks, short ones and scalar lists in flow style."""
    pad = " " * indent
    lines: list[str] = []
    for key, item in value.items():
        head = f"{pad}{yaml_scalar(key)}:"
        if isinstance(item, dict) and item and not all(_is_scalar(v) for v in item.values()):
            lines.append(head)
            lines += yaml_block(item, indent + 2, width)
        elif isinstance(item, (list, tuple)) and item and all(isinstance(v, dict) for v in item):
            lines.append(head)
            for entry in item:
                body = yaml_block(entry, indent + 4, width)
                lines.append(f"{pad}  - " + body[0].lstrip())
                lines += body[1:]
        elif isinstance(item, (list, tuple)) and len(head) + 2 + len(_flow(item)) > width:
            lines.append(head + " [")
            row = pad + "  "
            for i, entry in enumerate(item):
                piece = _flow(entry) + ("," if i < len(item) - 1 else "")
                if len(row) + len(piece) + 1 > width and row.strip():
                    lines.append(row.rstrip())
                    row = pad + "  "
                row += piece + " "
            lines.append(row.rstrip())
            lines.append(pad + "]")
        else:
            lines.append(f"{head} {_flow(item)}")
    return lines


# --------------------------------------------------------------------------- import-model


class ImportProblem(ContentError):
    """A config.json or GGUF that cannot become a model record."""


def _problem(path: str, message: str, fix: str = "") -> ImportProblem:
    return ImportProblem([Issue(path, 1, 0, "", message, fix)])


# Keys that change KV memory but that HfConfig does not model yet: worth a warning when dropped.
# An explicit null here differs from a missing key: `sliding_window: null` (Mistral, Qwen2.5)
# means no window, while a missing key lets the engine apply the model type's default window.
_NULL_IS_A_FACT = ("sliding_window",)
_KV_KEYS_NOT_MODELLED = ("max_window_layers", "rope_parameters", "num_kv_shared_layers", "attention_type", "full_attention_interval")


def hf_config_fields(config: Mapping[str, Any], where: str = "config.json") -> tuple[dict[str, Any], list[str]]:
    """The HfConfig keys of a config.json (its text_config for multimodal checkpoints), and notes on what was left out."""
    if not isinstance(config, Mapping):
        raise _problem(where, "config.json must be a JSON object")
    notes: list[str] = []
    cfg: Mapping[str, Any] = config
    inner = config.get("text_config")
    if isinstance(inner, Mapping) and "num_hidden_layers" in inner:
        merged = dict(inner)
        for key in ("torch_dtype", "dtype", "model_type"):
            if key not in merged and key in config:
                merged[key] = config[key]
        cfg = merged
        notes.append("read the language model from text_config (a multimodal checkpoint)")
    out: dict[str, Any] = {}
    for key in HfConfig.model_fields:
        value = cfg.get(key)
        if key == "torch_dtype" and value is None:
            value = cfg.get("dtype")  # transformers 4.56+ writes `dtype`
        if value is None:
            if key in _NULL_IS_A_FACT and key in cfg:
                out[key] = None
            continue
        out[key] = value
    if "num_hidden_layers" not in out:
        # Remote-code configs (EXAONE 3, ChatGLM) name the layer count their own way; transformers
        # maps it to num_hidden_layers through the config's attribute_map.
        for other in ("num_layers", "n_layer", "n_layers"):
            if isinstance(cfg.get(other), int):
                out["num_hidden_layers"] = cfg[other]
                notes.append(f"num_hidden_layers read from {other}={cfg[other]} (this config's name for it)")
                break
    if "num_key_value_heads" not in out and "num_attention_heads" in out:
        out["num_key_value_heads"] = out["num_attention_heads"]
        notes.append("config.json has no num_key_value_heads: every head keeps its own KV (transformers' default), so it equals num_attention_heads")
    dtype = out.get("torch_dtype")
    if dtype is not None and dtype not in ("bfloat16", "float16", "float32"):
        notes.append(f"dropped torch_dtype {dtype!r}: not one of bfloat16, float16, float32")
        out.pop("torch_dtype")
    rope_parameters = cfg.get("rope_parameters")
    if "rope_scaling" not in out and isinstance(rope_parameters, Mapping) and rope_parameters.get("rope_type", "default") != "default":
        if all(_is_scalar(v) for v in rope_parameters.values()):
            out["rope_scaling"] = {k: v for k, v in rope_parameters.items() if k != "rope_theta"}
            notes.append("rope_scaling taken from rope_parameters (transformers 5 layout), without rope_theta")
    for key in _KV_KEYS_NOT_MODELLED:
        if key in cfg and not (key == "rope_parameters" and "rope_scaling" in out):
            notes.append(f"left out {key}={json.dumps(cfg[key])[:60]}: the model record has no field for it yet")
    ordered = {key: out[key] for key in HfConfig.model_fields if key in out}
    return ordered, notes


def _slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")
    return re.sub(r"[.-]{2,}", "-", slug)[:80].strip("-.")


def _repo_from_url(url: Any) -> str | None:
    match = re.match(r"^https://huggingface\.co/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/?$", str(url or ""))
    return match.group(1) if match else None


def model_from_hf_config(config: Mapping[str, Any], model_id: str | None, repo: str | None, source: str | None) -> tuple[dict[str, Any], list[str]]:
    fields, notes = hf_config_fields(config)
    name_or_path = str(config.get("_name_or_path") or "")
    if repo is None and re.match(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", name_or_path):
        repo = name_or_path
    if model_id is None:
        model_id = _slugify(repo.split("/")[-1]) if repo else None
    if not model_id:
        raise _problem("config.json", "cannot tell the model id", "Pass --id")
    quant = config.get("quantization_config") if isinstance(config.get("quantization_config"), Mapping) else {}
    method = str(quant.get("quant_method") or "").lower()
    fmt = method if method in ("awq", "gptq", "fp8", "mxfp4") else {"float16": "fp16"}.get(str(fields.get("torch_dtype")), "bf16")
    record = {
        "id": model_id,
        "name": repo.split("/")[-1] if repo else f"{FILL_IN}: the model name",
        "family": f"{FILL_IN}: e.g. Qwen2.5",
        "hf_repo": repo or f"{FILL_IN}: the Hugging Face repository, owner/name",
        "config": fields,
        "config_source": source or f"{FILL_IN}: the config.json URL, pinned to a commit",
        "variants": [
            {
                "id": fmt,
                "name": fmt.upper() if fmt in ("bf16", "fp16", "fp8") else f"{fmt.upper()} int4" if fmt in ("awq", "gptq") else fmt.upper(),
                "format": fmt,
                "hf_repo": repo or f"{FILL_IN}: the repository the engine loads, owner/name",
                "source": f"{FILL_IN}: where the checkpoint and its size are listed",
            }
        ],
    }
    return record, notes


# GGUF: only the key/value header is read; tensor data is never touched.


def _gguf_fields(path: Path) -> dict[str, Any]:
    try:
        import gguf  # optional: pip install 'kvtriage[editor]'
    except ImportError:
        raise _problem(str(path), "reading GGUF needs the gguf package", "pip install 'kvtriage[editor]'") from None

    class _HeaderReader(gguf.GGUFReader):  # type: ignore[misc, name-defined]
        # GGUFReader maps every tensor too; the record needs only the header.
        def _build_tensors(self, start_offs, fields):  # noqa: ANN001
            self.tensors = []

    try:
        reader = _HeaderReader(str(path))
    except (ValueError, OSError, IndexError, KeyError) as exc:
        raise _problem(str(path), f"not a GGUF file gguf can read: {exc}", "Check the file") from None
    values: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key not in ("tokenizer.ggml.tokens",):
            continue
        try:
            if key == "tokenizer.ggml.tokens":
                values[key] = len(field.data)
            else:
                values[key] = field.contents()
        except (ValueError, UnicodeDecodeError):
            continue
    return values


def _per_layer(value: Any, what: str, notes: list[str]) -> int | None:
    if isinstance(value, list):
        nonzero = [v for v in value if v]
        if not nonzero:
            return None
        if len(set(nonzero)) > 1 or len(nonzero) < len(value):
            notes.append(f"{what} varies by layer ({sorted(set(value))}); the record keeps the largest")
        return max(nonzero)
    return value


def _gguf_type(file_type: Any) -> str | None:
    try:
        import gguf

        name = gguf.LlamaFileType(int(file_type)).name
    except (ImportError, ValueError, TypeError):
        return None
    if name == "GUESSED":
        return None
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def model_from_gguf(path: Path, model_id: str | None, repo: str | None, source: str | None) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(model record, gguf variant record, notes) from a GGUF header."""
    kv = _gguf_fields(path)
    notes: list[str] = []
    arch = kv.get("general.architecture")
    if not isinstance(arch, str):
        raise _problem(str(path), "the GGUF header has no general.architecture", "Is this a model file?")

    def get(suffix: str) -> Any:
        return kv.get(f"{arch}.{suffix}")

    heads = _per_layer(get("attention.head_count"), "attention.head_count", notes)
    kv_heads = _per_layer(get("attention.head_count_kv"), "attention.head_count_kv", notes)
    config: dict[str, Any] = {
        "model_type": arch,
        "num_hidden_layers": get("block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads if kv_heads is not None else heads,
        "hidden_size": get("embedding_length"),
        "intermediate_size": _per_layer(get("feed_forward_length"), "feed_forward_length", notes),
        "vocab_size": get("vocab_size") or kv.get("tokenizer.ggml.tokens"),
        "max_position_embeddings": get("context_length"),
    }
    notes.append(f"model_type is the GGUF architecture {arch!r}; set the Hugging Face model_type if it differs")
    key_length = get("attention.key_length")
    kv_lora_rank = get("attention.kv_lora_rank")
    if kv_lora_rank:
        rope_dims = get("rope.dimension_count")
        config.update({"kv_lora_rank": kv_lora_rank, "qk_rope_head_dim": rope_dims, "q_lora_rank": get("attention.q_lora_rank")})
        key_mla, value_mla = get("attention.key_length_mla"), get("attention.value_length_mla")
        if key_mla and rope_dims:
            config["qk_nope_head_dim"] = key_mla - rope_dims
            config["v_head_dim"] = value_mla
            # llama.cpp stores MLA as MQA (head_count_kv = 1); HF configs keep one KV head per head.
            config["num_key_value_heads"] = heads
        else:
            notes.append("no *_mla lengths in this GGUF: llama.cpp caches it as full MHA, much larger than the MLA cache the record describes")
    elif key_length and heads and config["hidden_size"] and key_length != config["hidden_size"] // heads:
        config["head_dim"] = key_length
    elif key_length:
        config["head_dim"] = key_length
    window = get("attention.sliding_window")
    pattern = get("attention.sliding_window_pattern")
    if window:
        config["sliding_window"] = window
        if isinstance(pattern, list):
            # convert_hf_to_gguf.py writes one bool per layer: true where the layer slides.
            config["layer_types"] = ["sliding_attention" if flag else "full_attention" for flag in pattern]
        elif isinstance(pattern, int) and pattern > 1:
            config["sliding_window_pattern"] = pattern
    rope_type = get("rope.scaling.type")
    if rope_type and rope_type != "none":
        rope: dict[str, Any] = {"rope_type": rope_type}
        if get("rope.scaling.factor") is not None:
            rope["factor"] = round(float(get("rope.scaling.factor")), 6)
        if get("rope.scaling.original_context_length"):
            rope["original_max_position_embeddings"] = get("rope.scaling.original_context_length")
        config["rope_scaling"] = rope
    file_type = _gguf_type(kv.get("general.file_type"))
    if file_type in ("F16", "BF16", "F32"):
        config["torch_dtype"] = {"F16": "float16", "BF16": "bfloat16", "F32": "float32"}[file_type]
    config = {k: config[k] for k in HfConfig.model_fields if config.get(k) is not None}

    repo = repo or _repo_from_url(kv.get("general.base_model.0.repo_url")) or _repo_from_url(kv.get("general.source.repo_url"))
    name = kv.get("general.basename") or kv.get("general.name")
    if model_id is None:
        model_id = _slugify(repo.split("/")[-1]) if repo else _slugify(str(name or ""))
    if not model_id:
        raise _problem(str(path), "cannot tell the model id", "Pass --id")
    gguf_type = file_type or f"{FILL_IN}: the quantization, e.g. Q4_K_M"
    file_name = path.name if re.match(r"^[A-Za-z0-9_.-]+\.gguf$", path.name) else f"{FILL_IN}: the file name, e.g. Model-Q4_K_M.gguf"
    variant = {
        "id": _slugify(file_type) if file_type else f"{FILL_IN}: a slug for this build, e.g. q4-k-m",
        "name": f"GGUF {file_type}" if file_type else f"{FILL_IN}: e.g. GGUF Q4_K_M",
        "format": "gguf",
        "gguf_file": file_name,
        "gguf_type": gguf_type,
        "checkpoint_bytes": path.stat().st_size,
        "source": source or f"{FILL_IN}: the page that lists {path.name} and its size",
    }
    if re.search(r"-\d{5}-of-\d{5}\.gguf$", path.name):
        notes.append("a split GGUF: checkpoint_bytes counts this shard only; add the others")
    record = {
        "id": model_id,
        "name": str(name) if name else f"{FILL_IN}: the model name",
        "family": f"{FILL_IN}: e.g. Qwen2.5",
        "hf_repo": repo or f"{FILL_IN}: the Hugging Face repository of the original model, owner/name",
        "config": config,
        "config_source": f"{FILL_IN}: the original config.json URL, pinned to a commit (read from the GGUF header of {path.name})",
        "variants": [variant],
    }
    return record, variant, notes


# --------------------------------------------------------------------------- merging into data/models.yaml

MODELS = "data/models.yaml"


def _block_end(lines: list[str], start: int, stop: int) -> int:
    """Index after the last content line in lines[start:stop] (comments and blanks before the next key belong to it)."""
    end = stop
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _sibling_lines(positions: Positions, loc: tuple[Any, ...]) -> list[int]:
    """0-based lines of the keys directly inside the mapping at loc."""
    return sorted(line - 1 for key, (line, _) in positions.key_marks.items() if len(key) == len(loc) + 1 and tuple(key[:-1]) == tuple(loc))


def merge_model(text: str, record: Mapping[str, Any], variant_only: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """data/models.yaml with record added, or its config (or, for GGUF, a variant) updated. Returns (text, what changed)."""
    data, positions = parse_yaml(MODELS, text.encode("utf-8"))
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise _problem(MODELS, "has no `models:` list", "Fix the file first")
    lines = text.splitlines(keepends=True)
    ids = _ids(models)
    if record["id"] not in ids:
        dash = " " * max(positions.at(("models", 0))[1] - 3, 0) if models else "  "
        body = yaml_block(dict(record), len(dash) + 2)
        item = [f"{dash}- {body[0].lstrip()}"] + body[1:]
        joined = "".join(lines)
        if joined and not joined.endswith("\n"):
            joined += "\n"
        return joined + "\n".join(item) + "\n", f"added model {record['id']!r}"
    index = ids.index(record["id"])
    loc = ("models", index)
    next_item = positions.at(("models", index + 1))[0] - 1 if index + 1 < len(models) else len(lines)
    if variant_only is not None:
        existing = _ids(models[index].get("variants", []))
        if variant_only["id"] in existing:
            raise _problem(MODELS, f"model {record['id']!r} already has variant {variant_only['id']!r}", "Edit it by hand, or pass --id for another model")
        key_line = positions.key_at(loc + ("variants",))[0] - 1
        later = [n for n in _sibling_lines(positions, loc) if n > key_line]
        end = _block_end(lines, key_line, later[0] if later else next_item)
        first_variant = positions.at(loc + ("variants", 0))
        dash = " " * max(first_variant[1] - 3, 0)
        body = yaml_block(dict(variant_only), len(dash) + 2)
        new_lines = [f"{dash}- {body[0].lstrip()}\n"] + [line + "\n" for line in body[1:]]
        return "".join(lines[:end] + new_lines + lines[end:]), f"added variant {variant_only['id']!r} to model {record['id']!r}"
    if "config" not in models[index]:
        raise _problem(MODELS, f"model {record['id']!r} has no config to update", "Add `config:` by hand first")
    key_line, key_col = positions.key_at(loc + ("config",))
    key_line -= 1
    later = [n for n in _sibling_lines(positions, loc) if n > key_line]
    end = _block_end(lines, key_line, later[0] if later else next_item)
    block = yaml_block({"config": record["config"]}, key_col - 1)
    return "".join(lines[:key_line] + [line + "\n" for line in block] + lines[end:]), f"updated the config of model {record['id']!r}"


def models_issues(text: str) -> tuple[list[Issue], list[Issue]]:
    """(fill-in fields, other problems) of a proposed data/models.yaml."""
    try:
        data, positions = parse_yaml(MODELS, text.encode("utf-8"))
    except ContentError as error:
        return [], list(error.issues)
    _, issues = validate(ModelCatalog, data, Source(MODELS, positions))
    return [i for i in issues if i.message.startswith("fill this in")], [i for i in issues if not i.message.startswith("fill this in")]


def unified_diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"))


# --------------------------------------------------------------------------- command line


def _cmd_new(args: argparse.Namespace) -> int:
    made, to_fill, other = write_new(Path(args.root), args.kind, args.slug)
    verb = "added to" if made.appended else "wrote"
    print(f"{verb} {made.path}")
    if to_fill:
        print(f"Fill in these {len(to_fill)} fields, then run `kvtriage check`:")
        for issue in to_fill:
            print("  " + issue.format())
    for issue in other:
        print("  " + issue.format(), file=sys.stderr)
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if args.check:
        stale = stale_schemas(root)
        problems = modeline_problems(root)
        for rel in stale:
            print(f"{rel}: out of date; run `kvtriage schema`", file=sys.stderr)
        for issue in problems:
            print(issue.format(), file=sys.stderr)
        return 1 if stale or problems else 0
    for rel in write_schemas(root):
        print(f"wrote {rel}")
    if args.fix_modelines:
        for rel in fix_modelines(root):
            print(f"set the schema line of {rel}")
    for issue in modeline_problems(root):
        print(issue.format(), file=sys.stderr)
    return 0


def _cmd_import_model(args: argparse.Namespace) -> int:
    root = Path(args.root)
    variant = None
    if args.hf_config:
        try:
            config = json.loads(Path(args.hf_config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: JSON syntax, or an integer of 4,300+ digits
            raise _problem(args.hf_config, f"cannot read config.json: {str(exc)[:200]}", "Download config.json from the model repository") from None
        record, notes = model_from_hf_config(config, args.id, args.repo, args.source)
    else:
        record, variant, notes = model_from_gguf(Path(args.gguf), args.id, args.repo, args.source)
    path = writable_path(root, MODELS)
    old = path.read_text(encoding="utf-8") if path.is_file() else "# yaml-language-server: $schema=../data/schemas/models.schema.json\nmodels:\n"
    known = _ids((parse_yaml(MODELS, old.encode("utf-8"))[0] or {}).get("models") or [])
    if variant is not None and record["id"] in known:
        existing = (parse_yaml(MODELS, old.encode("utf-8"))[0]["models"][known.index(record["id"])] or {}).get("config") or {}
        for key in ("num_hidden_layers", "num_key_value_heads", "hidden_size", "kv_lora_rank"):
            if key in record["config"] and key in existing and existing[key] != record["config"][key]:
                notes.append(f"this GGUF has {key}={record['config'][key]} but model {record['id']!r} has {existing[key]}: is --id right?")
    elif args.hf_config and record["id"] in known and not args.source:
        notes.append(f"model {record['id']!r} keeps its config_source; pass --source if this config.json comes from elsewhere")
    new, what = merge_model(old, record, variant if record["id"] in known else None)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    diff = unified_diff(old, new, MODELS)
    print(diff, end="")
    to_fill, other = models_issues(new)
    if other:
        raise ContentError(other)
    if to_fill:
        print(f"{len(to_fill)} field{'s' if len(to_fill) != 1 else ''} to fill in after writing:", file=sys.stderr)
        for issue in to_fill:
            print("  " + issue.format(), file=sys.stderr)
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
        print(f"{what} in {MODELS}", file=sys.stderr)
    else:
        print(f"(not written: {what}; pass --write to apply)", file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    """Register `new`, `schema` and `import-model` on the kvtriage subcommand parser."""
    new = sub.add_parser("new", help="write a commented skeleton for a new error, GPU, model or pair")
    new.add_argument("kind", choices=NEW_KINDS)
    new.add_argument("slug", help="the new record's id (a pair: GPU--MODEL-VARIANT)")
    new.add_argument("--root", default=".", help="site root (default: .)")
    new.set_defaults(handler=_cmd_new)

    schema = sub.add_parser("schema", help="write JSON Schemas for the YAML records to data/schemas/ (and kvtriage kv's shipped catalog)")
    schema.add_argument("--root", default=".", help="site root (default: .)")
    schema.add_argument("--check", action="store_true", help="exit 1 when a schema is stale or a YAML file lacks its schema line")
    schema.add_argument("--fix-modelines", action="store_true", help="add or correct the `# yaml-language-server` line of each YAML file")
    schema.set_defaults(handler=_cmd_schema)

    imp = sub.add_parser("import-model", help="make a model record from a config.json or a GGUF header, shown as a diff")
    source = imp.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="CONFIG_JSON", help="a Hugging Face config.json")
    source.add_argument("--gguf", metavar="FILE", help="a GGUF file (only its header is read)")
    imp.add_argument("--id", help="model id (default: from the repository name)")
    imp.add_argument("--repo", help="Hugging Face repository, owner/name")
    imp.add_argument("--source", help="where the config or file comes from (URL or repo path@commit)")
    imp.add_argument("--write", action="store_true", help="write data/models.yaml (default: only show the diff)")
    imp.add_argument("--root", default=".", help="site root (default: .)")
    imp.set_defaults(handler=_cmd_import_model)


__all__ = [
    "SCHEMA_MODELS",
    "Skeleton",
    "add_parsers",
    "fix_modelines",
    "hf_config_fields",
    "json_schemas",
    "merge_model",
    "model_from_gguf",
    "model_from_hf_config",
    "modeline_for",
    "modeline_problems",
    "models_issues",
    "skeleton",
    "stale_schemas",
    "write_new",
    "write_schemas",
    "yaml_block",
    "yaml_files",
]
