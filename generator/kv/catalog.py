"""The catalog as `kvtriage kv` sees it: model and GPU ids resolved to plain engine inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.engine.pairs import gpu_total_bytes, variant_config
from generator.engine.requests import GpuEntry, ModelEntry
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
        return None

    def gpu(self, gpu_id: str) -> GpuEntry | None:
        gpu = self.dataset.gpus.get(gpu_id)
        if gpu is None:
            return None
        return GpuEntry(total_bytes=gpu_total_bytes(gpu), name=gpu.name)


def catalog_lookup(root: Path) -> CatalogLookup:
    return CatalogLookup(load_dataset(root))
