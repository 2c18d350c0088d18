"""The catalog as `kvtriage kv` sees it: model and GPU ids resolved to plain engine inputs.

A site root's data/ when there is one; otherwise the catalog shipped inside the package
(kv/catalog.json, written by `kvtriage schema` from this repository's data/), so `kvtriage kv`
works after `pip install` from any folder."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from generator.engine.pairs import gpu_total_bytes, variant_config
from generator.engine.requests import GpuEntry, ModelEntry
from generator.kv.hf_ids import hf_id_index
from generator.load import load_dataset
from generator.schema import Dataset


@dataclass(frozen=True)
class CatalogLookup:
    dataset: Dataset

    def model(self, model_id: str) -> ModelEntry | None:
        """`MODEL-VARIANT` (e.g. qwen2.5-coder-32b-instruct-awq) or `MODEL` (its first build vLLM can load)."""
        for model in self.dataset.models.values():
            for variant in model.variants:
                if model_id in (f"{model.id}-{variant.id}", model.id) and "vllm" in variant.engines:
                    return ModelEntry(
                        hf_config=variant_config(model, variant),
                        weights_bytes=variant.checkpoint_bytes,
                        name=f"{model.name} {variant.name}",
                        repo=variant.hf_repo or model.hf_repo,
                    )
        for model in self.dataset.models.values():
            for variant in model.variants:
                if model_id in (f"{model.id}-{variant.id}", model.id):
                    return ModelEntry(hf_config=model.config.as_config_json(), weights_bytes=variant.checkpoint_bytes, name=f"{model.name} {variant.name}")
        key = catalog_key_for_hf_id(self.dataset, model_id)
        return self.model(key) if key is not None and key != model_id else None

    def gpu(self, gpu_id: str) -> GpuEntry | None:
        gpu = self.dataset.gpus.get(gpu_id)
        if gpu is None:
            return None
        return GpuEntry(total_bytes=gpu_total_bytes(gpu), name=gpu.name)


def catalog_key_for_hf_id(dataset: Dataset, named: str) -> str | None:
    """The `MODEL` or `MODEL-VARIANT` key a Hugging Face id (or a GGUF file, an Ollama tag) names."""
    found = hf_id_index(dataset.models).resolve(named)
    return found.key if found is not None else None


SHIPPED_CATALOG = Path(__file__).with_name("catalog.json")
SHIPPED_CATALOG_PATH = "generator/kv/catalog.json"  # where `kvtriage schema` writes it, under the repository root


@dataclass(frozen=True)
class ShippedLookup:
    models: Mapping[str, ModelEntry]
    gpus: Mapping[str, GpuEntry]
    hf_ids: Mapping[str, str] = field(default_factory=dict)  # lower-case Hugging Face id -> key in models

    def model(self, model_id: str) -> ModelEntry | None:
        found = self.models.get(model_id)
        if found is None and (key := self.hf_ids.get(model_id.strip().lower())) is not None:
            found = self.models.get(key)
        return found

    def gpu(self, gpu_id: str) -> GpuEntry | None:
        return self.gpus.get(gpu_id)


def shipped_catalog_bytes(dataset: Dataset) -> bytes:
    """Every id `kvtriage kv` accepts, resolved as CatalogLookup resolves it, as JSON."""
    lookup = CatalogLookup(dataset)
    keys = sorted({key for model in dataset.models.values() for key in (model.id, *(f"{model.id}-{v.id}" for v in model.variants))})
    models = {}
    for key in keys:
        entry = lookup.model(key)
        if entry is not None:
            models[key] = {"hf_config": dict(entry.hf_config), "weights_bytes": entry.weights_bytes, "name": entry.name, "repo": entry.repo}
    gpus = {}
    for gpu_id in sorted(dataset.gpus):
        found = lookup.gpu(gpu_id)
        if found is not None:
            gpus[gpu_id] = {"total_bytes": found.total_bytes, "name": found.name}
    index = hf_id_index(dataset.models)
    hf_ids = {}
    for repo, found in index.repos.items():
        key = f"{found.model_id}-{found.variant_id}" if found.variant_id else found.model_id
        if key in models:
            hf_ids[repo] = key
    return json.dumps({"models": models, "gpus": gpus, "hf_ids": hf_ids}, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def shipped_lookup(path: Path = SHIPPED_CATALOG) -> ShippedLookup:
    data = json.loads(path.read_bytes())
    return ShippedLookup(
        models={key: ModelEntry(**entry) for key, entry in data["models"].items()},
        gpus={key: GpuEntry(**entry) for key, entry in data["gpus"].items()},
        hf_ids=data.get("hf_ids", {}),
    )


def catalog_lookup(root: Path) -> CatalogLookup | ShippedLookup:
    """The root's catalog when it has one (data/models.yaml), else the shipped one."""
    if (Path(root) / "data" / "models.yaml").is_file():
        return CatalogLookup(load_dataset(root))
    return shipped_lookup()
