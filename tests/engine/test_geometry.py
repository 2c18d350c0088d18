"""Geometry from config.json: which layers slide, per vLLM 0.33 with transformers 5.x defaults."""

from __future__ import annotations

import pytest

from generator.engine.geometry import (
    CHUNKED,
    FULL,
    SLIDING,
    GeometryError,
    geometry_from_hf_config,
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    kv_heads_per_rank,
)

BASE = {"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512,
        "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


def kinds(**cfg) -> tuple[str, ...]:
    return geometry_from_hf_config({**BASE, **cfg}).layer_kinds


def test_dense_llama_has_no_sliding_layers():
    assert kinds(model_type="llama") == (FULL,) * 4


def test_phi3_window_slides_on_every_layer_even_below_context():
    # Phi-3-mini-4k: sliding_window 2047 and no layer_types -> CacheConfig.sliding_window for all layers.
    geometry = geometry_from_hf_config({**BASE, "model_type": "phi3", "sliding_window": 2047})
    assert geometry.layer_kinds == (SLIDING,) * 4 and geometry.sliding_window == 2047


def test_window_as_long_as_context_still_slides():
    assert kinds(model_type="mistral", sliding_window=4096) == (SLIDING,) * 4


def test_mistral_window_defaults_to_4096_only_when_the_key_is_absent():
    assert geometry_from_hf_config({**BASE, "model_type": "mistral"}).sliding_window == 4096
    assert kinds(model_type="mistral", sliding_window=None) == (FULL,) * 4


def test_zero_window_means_none():
    assert kinds(model_type="llama", sliding_window=0) == (FULL,) * 4


def test_qwen2_window_is_off_unless_use_sliding_window():
    assert kinds(model_type="qwen2", sliding_window=4096, max_window_layers=4) == (FULL,) * 4
    assert kinds(model_type="qwen2", sliding_window=4096, use_sliding_window=True, max_window_layers=0) == (SLIDING,) * 4
    with pytest.raises(GeometryError, match="only some layers"):
        kinds(model_type="qwen2", sliding_window=4096, use_sliding_window=True, max_window_layers=2)


def test_qwen2_5_vl_window_is_off_unless_use_sliding_window():
    # Qwen2.5-VL-3B-Instruct's config.json: sliding_window 32768, use_sliding_window false, max_window_layers 70
    # (36 layers); transformers' Qwen2_5_VLTextConfig drops the window, so vLLM keeps every layer full.
    geometry = geometry_from_hf_config({**BASE, "model_type": "qwen2_5_vl", "num_hidden_layers": 36, "sliding_window": 32768,
                                        "use_sliding_window": False, "max_window_layers": 70})
    assert geometry.layer_kinds == (FULL,) * 36 and geometry.sliding_window is None
    nested = {"model_type": "qwen2_5_vl", "torch_dtype": "bfloat16",
              "text_config": {**BASE, "model_type": "qwen2_5_vl_text", "sliding_window": 32768, "use_sliding_window": False}}
    assert geometry_from_hf_config(nested).layer_kinds == (FULL,) * 4


def test_gemma2_alternates_and_gemma3_uses_five_to_one():
    assert kinds(model_type="gemma2") == (SLIDING, FULL, SLIDING, FULL)
    g3 = geometry_from_hf_config({**BASE, "model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window": 1024})
    assert g3.layer_kinds == (SLIDING,) * 5 + (FULL,) + (SLIDING,) * 5 + (FULL,)


def test_layer_types_win_and_need_a_window():
    assert kinds(model_type="gpt_oss", layer_types=["sliding_attention", "full_attention"] * 2) == (SLIDING, FULL, SLIDING, FULL)
    assert geometry_from_hf_config({**BASE, "model_type": "gpt_oss"}).sliding_window == 128
    with pytest.raises(GeometryError):
        kinds(model_type="llama", layer_types=["sliding_attention"] * 4)


def test_llama4_chunked_layers():
    geometry = geometry_from_hf_config({**BASE, "model_type": "llama4_text", "attention_chunk_size": 8192})
    assert geometry.layer_kinds == (CHUNKED, CHUNKED, CHUNKED, FULL)
    assert geometry.attention_chunk_size == 8192


def test_bytes_per_token_standard_and_mla():
    geometry = geometry_from_hf_config({**BASE, "model_type": "llama"})
    assert geometry.head_dim == 64
    assert kv_bytes_per_token_per_layer(geometry, 2) == 2 * 2 * 64 * 2
    assert kv_bytes_per_token(geometry, 2) == 4 * 512
    assert kv_heads_per_rank(geometry, 8) == 1
    mla = geometry_from_hf_config({**BASE, "model_type": "deepseek_v3", "kv_lora_rank": 512, "qk_rope_head_dim": 64})
    assert kv_bytes_per_token_per_layer(mla, 2, tensor_parallel_size=8) == 1152


def test_float32_config_loads_in_half_precision():
    assert geometry_from_hf_config({**BASE, "model_type": "llama", "torch_dtype": "float32"}).dtype_bytes == 2


def test_nemotron_h_sizes_its_mixer_from_heads_not_the_expand_it_also_carries():
    # NVIDIA-Nemotron-3-Nano-30B-A3B: 64 heads of 64 (4,096 wide), where expand x hidden would be 5,376.
    nano = {**BASE, "model_type": "nemotron_h", "hidden_size": 2688, "hybrid_override_pattern": "M*",
            "mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
            "expand": 2, "num_hidden_layers": 2}
    assert geometry_from_hf_config(nano).state.intermediate_size == 4096


def test_granite_hybrid_sizes_its_mixer_as_mamba_expand_times_hidden():
    granite = {**BASE, "model_type": "granitemoehybrid", "layer_types": ["mamba", "attention"], "num_hidden_layers": 2,
               "mamba_n_heads": 8, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 1, "mamba_d_conv": 4,
               "mamba_expand": 2}
    assert geometry_from_hf_config(granite).state.intermediate_size == 1024
