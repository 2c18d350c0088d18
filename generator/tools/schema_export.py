"""JSON Schemas of the record kinds (`kvtriage schema`), the modelines that point editors' YAML
files at them, and `writable_path`, which refuses writes through links."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from generator.errors import ContentError, Issue
from generator.kv.catalog import SHIPPED_CATALOG_PATH, shipped_catalog_bytes
from generator.load import load_dataset
from generator.schema import (
    AffiliateCatalog,
    DateLedger,
    EngineCatalog,
    ErrorSignature,
    GpuCatalog,
    ModelCatalog,
    Pair,
    SiteConfig,
)
from generator.schema.evidence import EVIDENCE_FILES, EVIDENCE_MODELS

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
    **{Path(path).stem: EVIDENCE_MODELS[engine] for engine, path in EVIDENCE_FILES.items()},
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
    if relative in EVIDENCE_FILES.values():
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
