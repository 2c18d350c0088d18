"""The max model length vLLM derives from config.json, and its error when a setting asks for more."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from generator.engine.vllm.versions import VllmInputError
from generator.schema import rope_scaling_problem

# vllm/transformers_utils/model_arch_config_convertor.py derive_max_model_len_and_key
MAX_LEN_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
)
# vllm/config/model.py _get_and_verify_max_len: these RoPE types already scaled
# max_position_embeddings, so their `factor` is not applied again.
ROPE_TYPES_ALREADY_SCALED = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base")
DEFAULT_MAX_LEN = 2048  # used by vLLM when config.json names no length key


@dataclass(frozen=True)
class DerivedMaxLen:
    value: int  # int(derived): vLLM's default max_model_len (LongRoPE aside)
    default_max_model_len: int
    key: str | None
    printed: str  # how vLLM's f-string prints the derived length ("32768.0" after RoPE scaling)
    model_max_length: int | None


def _rope_parameter_sets(cfg: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    params = cfg.get("rope_parameters")
    if params is None:
        params = cfg.get("rope_scaling")
    if not isinstance(params, Mapping) or not params:
        # transformers 5 standardises every RoPE config to {"rope_type": "default", ...}.
        return [{"rope_type": "default"}] if any(k in cfg for k in ROPE_KEYS) else []
    nested = [p for p in params.values() if isinstance(p, Mapping)]
    if nested and len(nested) == len(params):
        return [p for p in nested if p]
    return [params]


def derive_max_model_len(hf_config: Mapping[str, Any]) -> DerivedMaxLen:
    """The longest max_model_len vLLM accepts for this config.json, as vLLM derives it."""
    text = hf_config.get("text_config") if isinstance(hf_config.get("text_config"), Mapping) else hf_config
    derived: float | int | None = None
    key = None
    for key in ("rope_scaling", "rope_parameters"):
        for config in (hf_config, text):
            problem = rope_scaling_problem(config.get(key), key)
            if problem:
                raise VllmInputError(f"hf_config: {problem}")
    for name in MAX_LEN_KEYS + ("model_max_length", "original_max_position_embeddings"):
        value = text.get(name)
        if isinstance(value, float) and not math.isfinite(value):
            raise VllmInputError(f"hf_config: `{name}` must be a finite number, got {value!r}")
    for name in MAX_LEN_KEYS:
        value = text.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if derived is None or value < derived:
                key, derived = name, value
    if isinstance(text.get("model_max_length"), (int, float)) and text.get("model_max_length"):
        key, derived = "model_max_length", text["model_max_length"]
    if derived is None:
        derived = DEFAULT_MAX_LEN
    model_type = str(hf_config.get("model_type") or "")
    rope_sets = _rope_parameter_sets(hf_config)
    if rope_sets and "gemma3" not in model_type:
        factor: float | int = 1.0
        for params in rope_sets:
            rope_type = params.get("rope_type", params.get("type", "default"))
            if rope_type not in ROPE_TYPES_ALREADY_SCALED:
                factor = params.get("factor", factor)
        derived = derived * (1.0 if factor is None else factor)
    printed = repr(float(derived)) if isinstance(derived, float) else str(derived)
    default = int(derived)
    if any(p.get("rope_type", p.get("type")) == "longrope" for p in rope_sets):
        default = int(text.get("original_max_position_embeddings", derived))
    mml = hf_config.get("model_max_length")
    return DerivedMaxLen(int(derived), default, key, printed, mml if isinstance(mml, int) else None)


def max_model_len_too_long_text(max_model_len: int, derived: DerivedMaxLen) -> str:
    # vllm/config/model.py _get_and_verify_max_len (0.33.0)
    return (
        f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
        f"({derived.key}={derived.printed} or model_max_length={derived.model_max_length} in model's "
        "config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative "
        "position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model "
        "uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
        "array out-of-bounds error."
    )
