"""Record skeletons (`kvtriage new`): "FILL IN: ..." where only an editor knows the value. schema.Record
refuses that text in every field, so `check` names exactly the fields left to fill."""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from generator.errors import ContentError, Issue, SiteError
from generator.load import Positions, load_dataset, parse_yaml
from generator.schema import (
    ENGINES,
    FILL_IN,
    QUANTITY_NAMES,
    SLUG_PATTERN,
    Lever,
    Scenario,
)
from generator.tools.schema_export import MODELINE_PREFIX, SCHEMA_DIR, writable_path

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
# generator/schema/fields.py, e.g. {quantity_examples}). Links may go to https:// addresses only.
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
