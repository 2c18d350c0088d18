"""Hugging Face model ids, as logs and pastes name them, resolved to catalog records.

A log names a model the way the reader started it: `Qwen/Qwen2.5-7B-Instruct-AWQ`, a local
copy (`/models/Qwen2-7B-Instruct`), a hub URL, or a GGUF file. Matching is exact but
forgiving of the wrapping: case, a URL or path prefix and a trailing slash are ignored; a bare
name (no owner) matches only when exactly one catalog repository carries that name. Nothing is
matched by similarity, so a fine-tune or a different size never lands on the wrong record.

One rule goes past exact names: a re-packer's repository (any owner) named exactly like a catalog
model's own repository plus a known quantization or packaging suffix (`RedHatAI/Qwen3-32B-FP8-dynamic`,
`unsloth/gemma-3-27b-it-bnb-4bit`) resolves to that model with `same_architecture_only` set. Its
config.json is the base model's, so the KV bytes per token are the same; its weights are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from generator.schema import Model

_URL_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?", re.I)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHARD = re.compile(r"-\d{5}-of-\d{5}(?=\.gguf$)", re.I)
# The quantization a GGUF file name ends with (Model-Q4_K_M.gguf, model.Q8_0.gguf, model-UD-IQ1_S.gguf).
_QUANT_SUFFIX = re.compile(r"[-._](?:UD-)?(?:I?Q\d[A-Z0-9_]*|TQ\d_\d|F16|BF16|F32|FP16)$", re.I)
# Suffixes re-packers add to the base repository's name; longest first so -AWQ-INT4 wins over -AWQ.
_PACKAGING_SUFFIXES = sorted((
    "-AWQ", "-AWQ-INT4", "-GPTQ-Int4", "-GPTQ-Int8", "-GPTQ", "-FP8", "-FP8-dynamic", "-W4A16", "-W8A8",
    "-W4A16-G128", "-NVFP4", "-FP4", "-bnb-4bit", "-unsloth-bnb-4bit", "-GGUF", "-MLX-4bit", "-int4", "-int8",
    "-quantized.w4a16", "-quantized.w8a8", "-quantized.w8a16",  # neuralmagic / RedHatAI naming
), key=len, reverse=True)


@dataclass(frozen=True)
class Resolved:
    model_id: str
    variant_id: str | None  # None: the model's own repository (its first variant loads from it)
    # True for a re-packaged repository the catalog does not list: same config, so the same KV
    # bytes per token, but different weights (their size and dtype are not the record's).
    same_architecture_only: bool = False

    @property
    def key(self) -> str:
        """The `MODEL` or `MODEL-VARIANT` key of the catalog entry this names."""
        return f"{self.model_id}-{self.variant_id}" if self.variant_id else self.model_id


def _key(text: str) -> str:
    return text.strip().lower()


class HfIdIndex:
    """Every repository and GGUF file the catalog names, keyed case-insensitively."""

    def __init__(self, models: Iterable[Model]) -> None:
        self.repos: dict[str, Resolved] = {}
        self.files: dict[str, Resolved] = {}
        self.tags: dict[str, Resolved] = {}
        names: dict[str, set[Resolved]] = {}
        models_seen = list(models)
        for model in models_seen:
            owned = [(model.hf_repo, Resolved(model.id, None)), *((alias, Resolved(model.id, None)) for alias in model.hf_aliases)]
            owned += [(v.hf_repo, Resolved(model.id, v.id)) for v in model.variants if v.hf_repo and v.format != "gguf"]
            owned += [(v.hf_repo, Resolved(model.id, v.id)) for v in model.variants if v.hf_repo and v.format == "gguf"]
            for repo, target in owned:
                # The first claim wins: a model's own repository before a variant that reuses it.
                self.repos.setdefault(_key(repo), target)
                names.setdefault(_key(repo.split("/")[1]), set()).add(self.repos[_key(repo)])
            for variant in model.variants:
                if variant.gguf_file:
                    self.files.setdefault(_key(variant.gguf_file), Resolved(model.id, variant.id))
                if variant.ollama_tag:
                    self.tags.setdefault(_key(variant.ollama_tag), Resolved(model.id, variant.id))
        self.names = {name: next(iter(targets)) for name, targets in names.items() if len(targets) == 1}
        base_names: dict[str, set[str]] = {}
        for model in models_seen:
            for repo in (model.hf_repo, *model.hf_aliases):
                base_names.setdefault(_key(repo.split("/")[1]), set()).add(model.id)
        self.base_names = {name: next(iter(ids)) for name, ids in base_names.items() if len(ids) == 1}

    def resolve(self, named: str) -> Resolved | None:
        """The record a log's model id names, or None when the catalog has no exact match."""
        text = _URL_PREFIX.sub("", named.strip().strip("'\"`")).rstrip("/")
        if (found := self.tags.get(_key(text))) is not None:
            return found  # an Ollama tag, e.g. qwen2.5-coder:7b
        text = re.sub(r"/(?:tree|blob|resolve)/[^/]+(?:/.*)?$", "", text)
        leaf = text.rsplit("/", 1)[-1]
        if leaf.lower().endswith(".gguf"):
            found = self.files.get(_key(leaf)) or self.files.get(_key(_SHARD.sub("", leaf)))
            if found is not None:
                return found
            # A file this catalog does not list: its name without the quantization may still be the model's.
            stem = _QUANT_SUFFIX.sub("", _SHARD.sub("", leaf)[: -len(".gguf")])
            if stem and (found := self.names.get(_key(stem))) is not None:
                return Resolved(found.model_id, None)
            text = text.rsplit("/", 1)[0] if "/" in text else ""
            leaf = text.rsplit("/", 1)[-1]
        if not text:
            return None
        if _REPO.match(text) and (found := self.repos.get(_key(text))) is not None:
            return found
        parts = [p for p in re.split(r"[/\\]", text) if p]
        if len(parts) >= 2 and (found := self.repos.get(_key("/".join(parts[-2:])))) is not None:
            return found  # a local copy kept under owner/name, e.g. ~/models/Qwen/Qwen3-8B
        # Hub cache folders are models--owner--name.
        cache = re.search(r"models--([A-Za-z0-9_.-]+?)--([A-Za-z0-9_.-]+)", text)
        if cache and (found := self.repos.get(_key(f"{cache.group(1)}/{cache.group(2)}"))) is not None:
            return found
        return self.names.get(_key(leaf)) or self._repackaged(leaf)

    def _repackaged(self, leaf: str) -> Resolved | None:
        """A base model's repository name plus one packaging suffix, e.g. Qwen3-8B-AWQ."""
        for suffix in _PACKAGING_SUFFIXES:
            if leaf.lower().endswith(suffix.lower()) and len(leaf) > len(suffix):
                model_id = self.base_names.get(_key(leaf[: -len(suffix)]))
                if model_id is not None:
                    return Resolved(model_id, None, same_architecture_only=True)
        return None


def hf_id_index(models: Mapping[str, Model] | Iterable[Model]) -> HfIdIndex:
    return HfIdIndex(models.values() if isinstance(models, Mapping) else models)
