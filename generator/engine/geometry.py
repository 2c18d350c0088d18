"""Attention geometry shared by every engine: what one token costs in one layer.

Everything here is derived from config.json keys (the Hugging Face names), so a model
record in data/ and a raw config.json pasted into `kvtriage kv --hf-config` go through
the same function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from generator.schema import check_int, rope_scaling_problem

FULL = "full"
SLIDING = "sliding"
CHUNKED = "chunked"
# Layers that keep a fixed-size state per sequence instead of per-token KV (Mamba, Gated
# DeltaNet), and layers with no cache at all (the MLP/MoE blocks Nemotron-H counts as layers).
STATE = "state"
NO_CACHE = "none"
LAYER_KINDS = (FULL, SLIDING, CHUNKED, STATE, NO_CACHE)

# config.json `torch_dtype` -> bytes per element of the model's own tensors.
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}

_HF_LAYER_TYPE = {
    "full_attention": FULL,
    "sliding_attention": SLIDING,
    "chunked_attention": CHUNKED,
    # Qwen3-Next / Qwen3.5 `layer_types`; Granite-4.0-H `layer_types` ("attention", "mamba").
    "linear_attention": STATE,
    "attention": FULL,
    "mamba": STATE,
}


# Hybrids with attention and state side by side in one layer, shared attention blocks, or other
# state kinds: vLLM builds more cache layers than config.json lists, which this geometry does not model.
STATE_REFUSED = ("falcon_h1", "zamba2", "plamo2", "minimax_text_01", "kimi_linear", "lfm2")

# Qwen-style configs carry a `sliding_window` value that `use_sliding_window: false`
# (the transformers default) switches off; when on, `max_window_layers` picks the layers.
# Qwen2.5-VL's language model (top-level `qwen2_5_vl` keys in its config.json, or a
# `qwen2_5_vl_text` text_config) does the same: transformers' Qwen2_5_VLTextConfig sets
# `sliding_window = sliding_window if use_sliding_window else None`
# (https://github.com/huggingface/transformers/blob/018c8e0394c47749c55861e11f5f7e2a577973d7/src/transformers/models/qwen2_5_vl/configuration_qwen2_5_vl.py).
_QWEN_STYLE = frozenset({"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_5_vl", "qwen2_5_vl_text"})

# transformers 5.x config-class defaults for `sliding_window` when config.json omits the
# key (an explicit null means "no window"): MistralConfig, Gemma2Config, Gemma3TextConfig,
# GptOssConfig (transformers 5.20.2 models/*/configuration_*.py).
_DEFAULT_WINDOW = {"mistral": 4096, "gemma2": 4096, "gemma3": 4096, "gemma3_text": 4096, "gpt_oss": 128}

# Default layer pattern when config.json has neither `layer_types` nor
# `sliding_window_pattern`: Gemma2Config and GptOssConfig alternate (pattern 2),
# Gemma3TextConfig uses 6 (five sliding layers, then one global).
_DEFAULT_PATTERN = {"gemma2": 2, "gemma3": 6, "gemma3_text": 6, "gpt_oss": 2}

# Gemma 4 (vLLM 0.33.0 vllm/model_executor/models/gemma4.py, Gemma4DecoderLayer and Gemma4Attention:
# https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/models/gemma4.py, read in the stored
# main-branch copy at 001cabc1be16): a full-attention layer uses `global_head_dim`, and its KV head count is
# `num_global_key_value_heads` only when `attention_k_eq_v` is set (K is stored in the V slot too, so the cache
# still holds K and V); sliding layers use `head_dim` and `num_key_value_heads`. The last `num_kv_shared_layers`
# layers read the cache of an earlier layer of their type (kv_sharing_target_layer_name), and the model runner
# registers no KV cache spec for them (vllm/v1/worker/gpu_model_runner.py get_kv_cache_spec).
GEMMA4_TYPES = ("gemma4", "gemma4_text")
GEMMA4_SOURCE = "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/models/gemma4.py"


class GeometryError(ValueError):
    """A config.json that cannot describe an attention geometry."""


@dataclass(frozen=True)
class MlaRanks:
    kv_lora_rank: int
    qk_rope_head_dim: int


@dataclass(frozen=True)
class StateShape:
    """The per-sequence state of one Mamba or Gated-DeltaNet layer, as vLLM sizes it
    (vllm/model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator)."""

    family: str  # "gdn" (Gated DeltaNet), "mamba2" or "mamba1"
    conv_kernel: int
    # gdn
    num_k_heads: int = 0
    num_v_heads: int = 0
    head_k_dim: int = 0
    head_v_dim: int = 0
    # mamba1 / mamba2
    intermediate_size: int = 0
    state_size: int = 0
    num_heads: int = 0
    head_dim: int = 0
    n_groups: int = 0
    # config.json `mamba_ssm_dtype` (Qwen3.5 family: "float32"): the temporal state's dtype
    # when vLLM is not told otherwise; None = the model's dtype.
    ssm_dtype: str | None = None

    def tensor_elements(self, tensor_parallel_size: int) -> tuple[int, int]:
        """(conv state elements, temporal/SSM state elements) one TP rank keeps per sequence."""
        tp = tensor_parallel_size
        if self.family == "gdn":
            conv_dim = self.head_k_dim * self.num_k_heads * 2 + self.head_v_dim * self.num_v_heads
            return (self.conv_kernel - 1) * (conv_dim // tp), (self.num_v_heads // tp) * self.head_k_dim * self.head_v_dim
        if self.family == "mamba2":
            groups = self.n_groups if self.n_groups % tp == 0 else self.n_groups + tp - self.n_groups  # replicated for the head shards
            conv_dim = self.intermediate_size + 2 * groups * self.state_size
            return (self.conv_kernel - 1) * (conv_dim // tp), (self.num_heads // tp) * self.head_dim * self.state_size
        return (self.conv_kernel - 1) * (self.intermediate_size // tp), (self.intermediate_size // tp) * self.state_size

    def page_bytes(self, tensor_parallel_size: int, conv_bytes: int, ssm_bytes: int) -> int:
        """MambaSpec.page_size_bytes: every state tensor of one sequence on one rank."""
        conv, ssm = self.tensor_elements(tensor_parallel_size)
        return conv * conv_bytes + ssm * ssm_bytes


@dataclass(frozen=True)
class Geometry:
    model_type: str
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int | None
    vocab_size: int
    dtype: str
    max_position_embeddings: int
    rope_scaling: tuple[tuple[str, Any], ...] | None
    layer_kinds: tuple[str, ...]
    sliding_window: int | None
    attention_chunk_size: int | None
    mla: MlaRanks | None
    tie_word_embeddings: bool
    state: StateShape | None = None  # the state layers' shape, when layer_kinds has STATE layers
    # Gemma 4: its full-attention layers have their own head size and, with attention_k_eq_v, their
    # own KV head count (None: the same as every other layer). See GEMMA4_SOURCE.
    global_head_dim: int | None = None
    global_kv_heads: int | None = None

    @property
    def has_global_shape(self) -> bool:
        return self.global_head_dim is not None or self.global_kv_heads is not None

    def layer_shape(self, kind: str) -> tuple[int, int]:
        """(KV heads, head size) of one layer of that kind, before tensor parallelism."""
        if kind == FULL and self.has_global_shape:
            return self.global_kv_heads or self.num_kv_heads, self.global_head_dim or self.head_dim
        return self.num_kv_heads, self.head_dim

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def is_hybrid(self) -> bool:
        # Attention of two kinds (sliding + full); state-space hybrids are has_state.
        return len(set(self.layer_kinds) - {STATE, NO_CACHE}) > 1

    @property
    def has_state(self) -> bool:
        return self.state is not None

    def count(self, kind: str) -> int:
        return sum(1 for k in self.layer_kinds if k == kind)

    def rope_scaling_dict(self) -> dict[str, Any] | None:
        return dict(self.rope_scaling) if self.rope_scaling is not None else None


# config.json key -> its range in generator.schema.BOUNDS, shared with data/models.yaml.
_KEY_KIND = {
    "num_hidden_layers": "layers",
    "num_attention_heads": "count",
    "num_key_value_heads": "count",
    "head_dim": "count",
    "hidden_size": "width",
    "intermediate_size": "width",
    "vocab_size": "width",
    "max_position_embeddings": "tokens",
    "sliding_window": "tokens0",
    "attention_chunk_size": "tokens",
    "kv_lora_rank": "count",
    "qk_rope_head_dim": "count",
    "global_head_dim": "count",
    "num_global_key_value_heads": "count",
    "num_kv_shared_layers": "layers",
}


def _int(cfg: Mapping[str, Any], key: str, *, required: bool = True) -> int | None:
    value = cfg.get(key)
    if value is None:
        if required:
            raise GeometryError(f"config.json lacks `{key}`")
        return None
    return check_int(value, f"`{key}`", _KEY_KIND[key], GeometryError)


def _text_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    # Multimodal checkpoints (Gemma 3 4B+, Llama 4, Mistral 3) nest the language model;
    # the KV cache belongs to it, while torch_dtype often stays at the top level.
    inner = cfg.get("text_config")
    if isinstance(inner, Mapping):
        merged = dict(inner)
        for key in ("torch_dtype", "dtype"):
            if key not in merged and key in cfg:
                merged[key] = cfg[key]
        if "model_type" not in merged and "model_type" in cfg:
            merged["model_type"] = cfg["model_type"]
        return merged
    return cfg


def _state_layer_kinds(cfg: Mapping[str, Any], model_type: str, num_layers: int) -> tuple[str, ...] | None:
    """Which layers keep state, for the hybrid families whose config.json has no `layer_types`."""
    if model_type in STATE_REFUSED:
        raise GeometryError(f"{model_type} mixes attention and state layers in a way this calculator does not model yet")
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str):
        # Nemotron-H: one character per layer, M = Mamba-2, * = attention, - = MLP, E = MoE.
        if len(pattern) != num_layers:
            raise GeometryError(f"`hybrid_override_pattern` must have {num_layers} characters, one per layer")
        kinds = {"M": STATE, "*": FULL, "-": NO_CACHE, "E": NO_CACHE}
        if any(ch not in kinds for ch in pattern):
            raise GeometryError("`hybrid_override_pattern` characters must be M, *, - or E")
        return tuple(kinds[ch] for ch in pattern)
    interval = cfg.get("full_attention_interval")
    if isinstance(interval, int) and not isinstance(interval, bool) and interval > 0 and cfg.get("linear_num_value_heads"):
        # Qwen3-Next: every `interval`-th layer (1-based) is full attention, the rest Gated DeltaNet.
        return tuple(FULL if (i + 1) % interval == 0 else STATE for i in range(num_layers))
    period, offset = cfg.get("attn_layer_period"), cfg.get("attn_layer_offset")
    if isinstance(period, int) and isinstance(offset, int) and period > 0:
        # Jamba: attention where i % period == offset, Mamba elsewhere.
        return tuple(FULL if i % period == offset else STATE for i in range(num_layers))
    block_types = cfg.get("layers_block_type")
    if isinstance(block_types, list):
        if len(block_types) != num_layers:
            raise GeometryError(f"`layers_block_type` must list {num_layers} entries, one per layer")
        return tuple(STATE if t == "mamba" else FULL for t in block_types)
    return None


def _state_shape(cfg: Mapping[str, Any], model_type: str, hidden_size: int) -> StateShape:
    """The state layers' shape from the family's own config.json names."""
    def num(*keys: str, default: int | None = None) -> int:
        for key in keys:
            value = cfg.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        if default is None:
            raise GeometryError(f"config.json lacks `{keys[0]}` for its state (Mamba / linear-attention) layers")
        return default

    ssm_dtype = cfg.get("mamba_ssm_dtype")
    if ssm_dtype is not None and ssm_dtype not in DTYPE_BYTES:
        raise GeometryError(f"`mamba_ssm_dtype` {ssm_dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
    if cfg.get("linear_num_value_heads") is not None:
        return StateShape("gdn", num("linear_conv_kernel_dim", default=4), num_k_heads=num("linear_num_key_heads"),
                          num_v_heads=num("linear_num_value_heads"), head_k_dim=num("linear_key_head_dim"),
                          head_v_dim=num("linear_value_head_dim"), ssm_dtype=ssm_dtype)
    heads = cfg.get("mamba_n_heads", cfg.get("mamba_num_heads"))
    if heads is not None:
        # Mamba-2: Granite-4.0-H / Bamba (mamba_*), Nemotron-H (mamba_num_heads, ssm_state_size, n_groups, conv_kernel).
        # vLLM sizes Granite's and Bamba's mixer as mamba_expand x hidden, Nemotron-H's as heads x head_dim: the
        # `expand` its config.json also carries is never read, and 2 x hidden is wrong for the 4B and 30B
        # (nemotron_h.py get_mamba_state_shape_from_config, granitemoehybrid.py, bamba.py).
        n_heads = num("mamba_n_heads", "mamba_num_heads")
        head_dim = num("mamba_d_head", "mamba_head_dim")
        expand = cfg.get("mamba_expand")
        intermediate = n_heads * head_dim if not isinstance(expand, int) else expand * hidden_size
        return StateShape("mamba2", num("mamba_d_conv", "conv_kernel"), intermediate_size=intermediate,
                          state_size=num("mamba_d_state", "ssm_state_size"), num_heads=n_heads, head_dim=head_dim,
                          n_groups=num("mamba_n_groups", "n_groups", default=1), ssm_dtype=ssm_dtype)
    if cfg.get("mamba_d_state") is not None:
        # Mamba-1 (Jamba): intermediate = expand x hidden.
        return StateShape("mamba1", num("mamba_d_conv"), intermediate_size=num("mamba_expand") * hidden_size,
                          state_size=num("mamba_d_state"))
    raise GeometryError(f"{model_type or 'this model'} has state layers but config.json names no Mamba or linear-attention sizes")


def _layer_kinds(cfg: Mapping[str, Any], model_type: str, num_layers: int, sliding_window: int | None) -> tuple[str, ...]:
    state_kinds = _state_layer_kinds(cfg, model_type, num_layers)
    if state_kinds is not None:
        return state_kinds
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != num_layers:
            raise GeometryError(f"`layer_types` must list {num_layers} entries, one per layer")
        kinds = []
        for entry in layer_types:
            if entry not in _HF_LAYER_TYPE:
                raise GeometryError(f"`layer_types` entry {entry!r} is not one of {', '.join(_HF_LAYER_TYPE)}")
            kinds.append(_HF_LAYER_TYPE[entry])
        return tuple(kinds)

    if model_type.startswith("llama4") and cfg.get("attention_chunk_size"):
        # Llama 4 keeps full KV only on its NoPE layers (no_rope_layers[i] == 0).
        no_rope = cfg.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(num_layers)]
        if len(no_rope) != num_layers:
            raise GeometryError(f"`no_rope_layers` must list {num_layers} entries")
        return tuple(CHUNKED if flag else FULL for flag in no_rope)

    if sliding_window is None:
        return (FULL,) * num_layers

    if model_type in _QWEN_STYLE:
        # transformers' Qwen2Config: layers from index `max_window_layers` on slide.
        first_sliding = cfg.get("max_window_layers", 28)
        if not isinstance(first_sliding, int) or isinstance(first_sliding, bool):
            raise GeometryError("`max_window_layers` must be an integer")
        kinds = tuple(SLIDING if i >= first_sliding else FULL for i in range(num_layers))
        if len(set(kinds)) > 1:
            # vllm/model_executor/models/qwen2.py asserts max_window_layers == num_hidden_layers.
            raise GeometryError(
                "vLLM does not support sliding window on only some layers of a Qwen2-style model "
                f"(max_window_layers={first_sliding}, num_hidden_layers={num_layers})"
            )
        return kinds

    pattern = cfg.get("sliding_window_pattern", _DEFAULT_PATTERN.get(model_type))
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern > 1:
        # Gemma-style: every `pattern`-th layer (1-based) is global, the rest slide.
        return tuple(SLIDING if (i + 1) % pattern else FULL for i in range(num_layers))

    # No per-layer list: vLLM sets the model-wide CacheConfig.sliding_window
    # (vllm/engine/arg_utils.py) and every attention layer slides (Mistral v0.1, Phi-3).
    return (SLIDING,) * num_layers


def geometry_from_hf_config(config: Mapping[str, Any]) -> Geometry:
    if not isinstance(config, Mapping):
        raise GeometryError("config.json must be a JSON object")
    cfg = _text_config(config)
    model_type = str(cfg.get("model_type") or "")
    num_layers = _int(cfg, "num_hidden_layers")
    num_heads = _int(cfg, "num_attention_heads")
    num_kv_heads = _int(cfg, "num_key_value_heads", required=False) or num_heads
    hidden_size = _int(cfg, "hidden_size")
    head_dim = _int(cfg, "head_dim", required=False) or hidden_size // num_heads
    if head_dim < 1:
        raise GeometryError(f"`hidden_size` {hidden_size} is smaller than `num_attention_heads` {num_heads}; give `head_dim`")
    vocab_size = _int(cfg, "vocab_size")
    max_pos = _int(cfg, "max_position_embeddings")

    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"
    if dtype not in DTYPE_BYTES:
        raise GeometryError(f"`torch_dtype` {dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
    # vLLM loads a float32 config in half precision unless told otherwise.
    if dtype == "float32":
        dtype = "bfloat16"

    if "sliding_window" in cfg:
        sliding_window = _int(cfg, "sliding_window", required=False)
    else:
        sliding_window = _DEFAULT_WINDOW.get(model_type)
    if sliding_window == 0:
        # vllm/config/model.py: some checkpoints write 0 for "no sliding window".
        sliding_window = None
    if model_type in _QWEN_STYLE and not cfg.get("use_sliding_window", False):
        sliding_window = None
    # A window as long as the context still slides in vLLM: a SlidingWindowSpec layer
    # needs one block more per request than a full-attention one.

    mla = None
    if cfg.get("kv_lora_rank") is not None:
        mla = MlaRanks(
            kv_lora_rank=_int(cfg, "kv_lora_rank"),
            qk_rope_head_dim=_int(cfg, "qk_rope_head_dim"),
        )

    rope = cfg.get("rope_scaling")
    for key in ("rope_scaling", "rope_parameters"):
        problem = rope_scaling_problem(cfg.get(key), key)
        if problem:
            raise GeometryError(problem)

    kinds = _layer_kinds(cfg, model_type, num_layers, sliding_window)
    global_head_dim = global_kv_heads = None
    if model_type in GEMMA4_TYPES:
        kinds, global_head_dim, global_kv_heads = _gemma4_shape(cfg, kinds, head_dim, num_kv_heads)
    if SLIDING in kinds and sliding_window is None:
        raise GeometryError("`layer_types` names sliding layers but `sliding_window` is not set")
    state = _state_shape(cfg, model_type, hidden_size) if STATE in kinds else None
    if not any(kind in (FULL, SLIDING, CHUNKED) for kind in kinds):
        raise GeometryError("every layer keeps state: a pure Mamba model has no KV cache to size")

    return Geometry(
        model_type=model_type,
        num_layers=num_layers,
        num_attention_heads=num_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        hidden_size=hidden_size,
        intermediate_size=_int(cfg, "intermediate_size", required=False),
        vocab_size=vocab_size,
        dtype=dtype,
        max_position_embeddings=max_pos,
        rope_scaling=tuple(sorted(rope.items())) if rope else None,
        layer_kinds=kinds,
        sliding_window=sliding_window if SLIDING in kinds else None,
        attention_chunk_size=_int(cfg, "attention_chunk_size", required=False) if CHUNKED in kinds else None,
        mla=mla,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        state=state,
        global_head_dim=global_head_dim,
        global_kv_heads=global_kv_heads,
    )


def _gemma4_shape(cfg: Mapping[str, Any], kinds: tuple[str, ...], head_dim: int, num_kv_heads: int) -> tuple[tuple[str, ...], int | None, int | None]:
    """Gemma 4's layer kinds (KV-shared layers keep no cache) and its full-attention layers' shape (GEMMA4_SOURCE)."""
    if cfg.get("layer_types") is None:
        raise GeometryError("a Gemma 4 config.json lists its layers in `layer_types`; this one does not")
    shared = cfg.get("num_kv_shared_layers") or 0
    shared = check_int(shared, "`num_kv_shared_layers`", "layers", GeometryError, low=0)
    if shared >= len(kinds):
        raise GeometryError(f"`num_kv_shared_layers` {shared} leaves no layer of the {len(kinds)} with a KV cache")
    first_shared = len(kinds) - shared
    for index in range(first_shared, len(kinds)):
        if kinds[index] not in kinds[:first_shared]:
            # gemma4.py finds the last earlier layer of the same type; with none it has nothing to share.
            raise GeometryError(f"layer {index} shares the KV cache of an earlier {kinds[index]} layer, but there is none")
    kinds = kinds[:first_shared] + (NO_CACHE,) * shared
    global_head_dim = _int(cfg, "global_head_dim", required=False)
    global_kv_heads = num_kv_heads
    if cfg.get("attention_k_eq_v"):
        global_kv_heads = _int(cfg, "num_global_key_value_heads", required=False) or num_kv_heads
    # None where the full layers' shape is every layer's.
    return kinds, global_head_dim if global_head_dim != head_dim else None, global_kv_heads if global_kv_heads != num_kv_heads else None


def kv_heads_per_rank(geometry: Geometry, tensor_parallel_size: int = 1) -> int:
    """KV heads one tensor-parallel rank stores; heads replicate once TP exceeds them."""
    if geometry.mla is not None:
        return 1
    return max(1, geometry.num_kv_heads // tensor_parallel_size)


def kv_bytes_per_token_per_layer(geometry: Geometry, dtype_bytes: int, tensor_parallel_size: int = 1, kind: str = SLIDING) -> int:
    """Bytes one token adds to one layer of that kind (only Gemma 4's full layers differ from the rest)."""
    if geometry.mla is not None:
        # MLA caches one latent (plus its RoPE key) per token, whole on every TP rank.
        return (geometry.mla.kv_lora_rank + geometry.mla.qk_rope_head_dim) * dtype_bytes
    heads, head_dim = geometry.layer_shape(kind)
    return 2 * max(1, heads // tensor_parallel_size) * head_dim * dtype_bytes


def attention_layers(geometry: Geometry) -> int:
    """Layers that keep per-token KV (state and cache-free layers do not)."""
    return sum(1 for kind in geometry.layer_kinds if kind in (FULL, SLIDING, CHUNKED))


def kv_bytes_per_token(geometry: Geometry, dtype_bytes: int, tensor_parallel_size: int = 1) -> int:
    """Bytes one token adds across every attention layer of one rank when each layer keeps it."""
    if geometry.has_global_shape:
        return sum(kv_bytes_per_token_per_layer(geometry, dtype_bytes, tensor_parallel_size, kind)
                   for kind in geometry.layer_kinds if kind in (FULL, SLIDING, CHUNKED))
    return kv_bytes_per_token_per_layer(geometry, dtype_bytes, tensor_parallel_size) * attention_layers(geometry)
