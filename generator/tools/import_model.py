"""`kvtriage import-model`: a model record from a Hugging Face config.json or a GGUF file's header,
merged into data/models.yaml as a reviewable diff."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from generator.errors import ContentError, Issue
from generator.load import Positions, Source, parse_yaml, validate
from generator.schema import (
    FILL_IN,
    HfConfig,
    ModelCatalog,
)
from generator.tools.new import _ids
from generator.tools.yaml_out import is_scalar, yaml_block

# --------------------------------------------------------------------------- import-model


class ImportProblem(ContentError):
    """A config.json or GGUF that cannot become a model record."""


def _problem(path: str, message: str, fix: str = "", field: str = "") -> ImportProblem:
    return ImportProblem([Issue(path, 1, 0, field, message, fix)])


# Keys that change KV memory but that HfConfig does not model yet: worth a warning when dropped.
# An explicit null here differs from a missing key: `sliding_window: null` (Mistral, Qwen2.5)
# means no window, while a missing key lets the engine apply the model type's default window.
_NULL_IS_A_FACT = ("sliding_window",)
_KV_KEYS_NOT_MODELLED = ("max_window_layers", "rope_parameters", "attention_type")

# Per-layer attention layouts under names HfConfig does not carry, each with the entry that means plain full
# attention. Dropping one would size every layer as full attention with the model-wide KV heads, overstating the
# cache, so a list with any other entry is refused; a list of full-attention entries only changes nothing.
_LAYOUT_KEYS = {
    # MiMo-V2-Flash: 1 is a sliding-window layer with its own swa_num_key_value_heads, swa_head_dim and
    # sliding_window_size (vLLM MiMoV2FlashDecoderLayer.is_compressed_softmax_layer, https://github.com/vllm-project/
    # vllm/blob/01ed47b4166b26251895a9c298352fcdb2385149/vllm/model_executor/models/mimo_v2_flash.py).
    "hybrid_layer_pattern": (0, "sliding-window layers with their own KV heads and head size (swa_*)"),
    # MiniMax-Text-01 / MiniMax-M1: 0 is a lightning (linear) attention layer that keeps a fixed-size state, 1 full
    # attention; vLLM reads attn_type_list, else decoder_attention_types, else all 1 (MiniMaxText01Model,
    # https://github.com/vllm-project/vllm/blob/01c91c00e45c5e551af83d713809504ef4aaff19/vllm/model_executor/models/
    # minimax_text_01.py). MiniMax-M2 writes all 1s.
    "attn_type_list": (1, "lightning (linear) attention layers that keep a fixed-size state instead of KV"),
    "decoder_attention_types": (1, "lightning (linear) attention layers that keep a fixed-size state instead of KV"),
}


def _refuse_unmodelled_layout(cfg: Mapping[str, Any], top: Mapping[str, Any], where: str, notes: list[str]) -> None:
    """Refuse a layout key of _LAYOUT_KEYS (in the language model's keys or at the top level) that the record would drop."""
    for key, (full, kind) in _LAYOUT_KEYS.items():
        value = cfg.get(key, top.get(key))
        if value is None or value == []:
            continue
        if isinstance(value, list) and value and all(entry == full for entry in value):
            notes.append(f"left out {key}: every layer is full attention ({full})")
            continue
        others = sum(entry != full for entry in value) if isinstance(value, list) else None
        count = f"{others} of {len(value)} layers are" if others is not None else "it sets"
        raise _problem(where, f"{count} {kind}, which the engine does not model: without {key} every layer "
                       "would be sized as full attention and the KV cache overstated",
                       "Leave this model out of the catalog until the engine models this layout", field=key)


def hf_config_fields(config: Mapping[str, Any], where: str = "config.json") -> tuple[dict[str, Any], list[str]]:
    """The HfConfig keys of a config.json (its text_config for multimodal checkpoints), and notes on what was left out."""
    if not isinstance(config, Mapping):
        raise _problem(where, "config.json must be a JSON object")
    if "block_configs" in config:
        # DeciLM / Nemotron-NAS (Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-Ultra-253B): each layer has
        # its own block config, some with fewer KV heads and some with no attention at all, so the
        # model-wide num_key_value_heads would give a wrong KV size.
        raise _problem(where, f"model_type {config.get('model_type')!r} sets attention per layer (block_configs), "
                       "which the engine does not model: its KV cache cannot be computed from one head count",
                       "Leave this model out of the catalog until the engine models per-layer attention")
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
    _refuse_unmodelled_layout(cfg, config, where, notes)
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
    _layer_count_by_another_name(cfg, out, notes)
    _pattern_as_letters(out, notes)
    _zero_experts_dropped(out, notes)
    if "num_key_value_heads" not in out and "num_attention_heads" in out:
        out["num_key_value_heads"] = out["num_attention_heads"]
        notes.append("config.json has no num_key_value_heads: every head keeps its own KV (transformers' default), so it equals num_attention_heads")
    dtype = out.get("torch_dtype")
    if dtype is not None and dtype not in ("bfloat16", "float16", "float32"):
        notes.append(f"dropped torch_dtype {dtype!r}: not one of bfloat16, float16, float32")
        out.pop("torch_dtype")
    rope_parameters = cfg.get("rope_parameters")
    if "rope_scaling" not in out and isinstance(rope_parameters, Mapping) and rope_parameters.get("rope_type", "default") != "default":
        if all(is_scalar(v) for v in rope_parameters.values()):
            out["rope_scaling"] = {k: v for k, v in rope_parameters.items() if k != "rope_theta"}
            notes.append("rope_scaling taken from rope_parameters (transformers 5 layout), without rope_theta")
    for key in _KV_KEYS_NOT_MODELLED:
        if key in cfg and not (key == "rope_parameters" and "rope_scaling" in out):
            notes.append(f"left out {key}={json.dumps(cfg[key])[:60]}: the model record has no field for it yet")
    ordered = {key: out[key] for key in HfConfig.model_fields if key in out}
    return ordered, notes


def _layer_count_by_another_name(cfg: Mapping[str, Any], out: dict[str, Any], notes: list[str]) -> None:
    """Remote-code configs (EXAONE 3, ChatGLM) name the layer count their own way; transformers
    maps it to num_hidden_layers through the config's attribute_map."""
    if "num_hidden_layers" in out:
        return
    for other in ("num_layers", "n_layer", "n_layers"):
        if isinstance(cfg.get(other), int):
            out["num_hidden_layers"] = cfg[other]
            notes.append(f"num_hidden_layers read from {other}={cfg[other]} (this config's name for it)")
            return


def _pattern_as_letters(out: dict[str, Any], notes: list[str]) -> None:
    """EXAONE 4.5 writes `sliding_window_pattern` as letters ("LLLG": L slides, G is global) beside a
    `layer_types` list that states the same per layer; the record keeps the list, which the engine reads first."""
    pattern = out.get("sliding_window_pattern")
    if isinstance(pattern, str) and isinstance(out.get("layer_types"), list):
        out.pop("sliding_window_pattern")
        notes.append(f"left out sliding_window_pattern={pattern!r}: layer_types states the same layers one by one")


def _zero_experts_dropped(out: dict[str, Any], notes: list[str]) -> None:
    """Granite-4.0-H's dense sizes (1B, 350M) write num_local_experts 0: transformers' GraniteMoeHybrid
    layer then has no routed experts (has_experts is num_local_experts > 0) and runs its shared MLP alone,
    so a zero expert count means a dense model, not a field the record can hold."""
    for key in ("num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok"):
        if out.get(key) == 0:
            out.pop(key)
            notes.append(f"left out {key}=0: no routed experts, a dense model")


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
        **({"multimodal": True} if _has_encoder(config) else {}),
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


def _has_encoder(config: Mapping[str, Any]) -> bool:
    """A vision or audio encoder beside the language model (Model.multimodal): Qwen2.5-VL keeps its text keys at the
    top level with a vision_config, Mistral 3 / Qwen3-VL / Gemma 3 nest them in text_config."""
    return any(isinstance(config.get(key), Mapping) for key in ("vision_config", "audio_config", "text_config"))


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


def _gguf_attention_fields(get: Callable[[str], Any], heads: int | None, config: dict[str, Any], notes: list[str]) -> None:
    """The head widths, MLA ranks, sliding window and rope scaling of a GGUF header, into config."""
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
    _gguf_attention_fields(get, heads, config, notes)
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
