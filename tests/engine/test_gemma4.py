"""Gemma 4: layers of two head sizes, KV-shared layers, and vLLM's page unification, worked by hand.

Facts (vLLM v0.33.0, read in stored main-branch copies):
- vllm/model_executor/models/gemma4.py Gemma4DecoderLayer: a full-attention layer uses `global_head_dim`, and
  `num_global_key_value_heads` KV heads when `attention_k_eq_v`; sliding layers `head_dim`, `num_key_value_heads`.
  Gemma4Attention: the last `num_kv_shared_layers` layers set kv_sharing_target_layer_name, and
  gpu_model_runner.get_kv_cache_spec registers no KV cache spec for them.
- vllm/v1/core/kv_cache_planning.py unify_kv_cache_spec_page_size: a layer whose page is smaller than the largest
  gets block_size * (largest // its page); _get_kv_cache_groups_uniform_page_size then groups by spec as for Gemma 3.
"""

from __future__ import annotations

import pytest

from generator.engine import sglang
from generator.engine.geometry import FULL, NO_CACHE, SLIDING, GeometryError, geometry_from_hf_config, kv_bytes_per_token
from generator.engine.vllm import VllmInputError, VllmInputs, blocks_per_request, kv_cache_groups, largest_fitting_len, plan_vllm
from generator.engine.vllm.blocks import _search_fitting_len, group_shapes, unify_page_sizes
from generator.units import GIB

# The text model of google/gemma-4-31B-it as its config.json states it (the shape data/models.yaml's
# gemma-4-31b-it record carries): 60 layers, five sliding (window 1024) then one full, repeated.
GEMMA4_31B = {
    "architectures": ["Gemma4ForConditionalGeneration"],
    "model_type": "gemma4",
    "text_config": {
        "model_type": "gemma4_text", "num_hidden_layers": 60, "num_attention_heads": 32,
        "num_key_value_heads": 16, "num_global_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
        "attention_k_eq_v": True, "hidden_size": 5376, "intermediate_size": 21504, "vocab_size": 262144,
        "max_position_embeddings": 262144, "sliding_window": 1024, "num_kv_shared_layers": 0,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10,
    },
    "torch_dtype": "bfloat16",
}


def _text(**changes):
    config = {**GEMMA4_31B, "text_config": {**GEMMA4_31B["text_config"], **changes}}
    return config


def _plan(config, **kw):
    defaults = dict(available_kv_cache_bytes=20 * GIB, max_model_len=32768, max_num_batched_tokens=8192)
    return plan_vllm(VllmInputs(config, **{**defaults, **kw}))


def test_geometry_reads_the_full_layers_own_shape():
    g = geometry_from_hf_config(GEMMA4_31B)
    assert (g.count(SLIDING), g.count(FULL)) == (50, 10)
    assert g.layer_shape(SLIDING) == (16, 256)
    assert g.layer_shape(FULL) == (4, 512)
    # 50 sliding layers x 2 x 16 x 256 x 2 B + 10 full layers x 2 x 4 x 512 x 2 B
    assert kv_bytes_per_token(g, 2) == 50 * 16384 + 10 * 8192 == 901120


def test_without_k_eq_v_the_full_layers_keep_the_sliding_head_count():
    # gemma4.py: num_global_key_value_heads applies only to k_eq_v full-attention layers.
    g = geometry_from_hf_config(_text(attention_k_eq_v=False))
    assert g.layer_shape(FULL) == (16, 512)


def test_a_uniform_gemma4_is_an_ordinary_hybrid():
    g = geometry_from_hf_config(_text(global_head_dim=256, attention_k_eq_v=False))
    assert not g.has_global_shape
    assert g.layer_shape(FULL) == g.layer_shape(SLIDING) == (16, 256)


def test_kv_shared_layers_keep_no_cache():
    kinds = ["sliding_attention", "sliding_attention", "full_attention"] * 2
    g = geometry_from_hf_config(_text(num_hidden_layers=6, layer_types=kinds, num_kv_shared_layers=2))
    assert g.layer_kinds == (SLIDING, SLIDING, FULL, SLIDING, NO_CACHE, NO_CACHE)
    # Three sliding layers and one full: the group size is the smaller bucket, 1 (3 >= 1.5 x 1).
    assert [(grp.kind, grp.layers) for grp in kv_cache_groups(g)] == [
        (SLIDING, (0,)), (SLIDING, (1,)), (SLIDING, (3,)), (FULL, (2,))]


def test_bad_gemma4_configs_are_refused():
    with pytest.raises(GeometryError, match="layer_types"):
        geometry_from_hf_config(_text(layer_types=None))
    with pytest.raises(GeometryError, match="no layer"):
        geometry_from_hf_config(_text(num_kv_shared_layers=60))
    kinds = ["full_attention"] + ["sliding_attention"] * 59
    with pytest.raises(GeometryError, match="there is none"):
        # The one full layer is among the shared ones: gemma4.py finds no earlier full layer to read.
        geometry_from_hf_config(_text(layer_types=kinds[1:] + kinds[:1], num_kv_shared_layers=1))


def test_31b_on_one_gpu_worked_by_hand():
    """TP 1, bf16, 20 GiB of KV cache, --max-model-len 32768, --max-num-batched-tokens 8192.

    Pages per token: sliding 2 x 16 x 256 x 2 = 16,384 B, full 2 x 4 x 512 x 2 = 8,192 B, so the
    full layers' blocks hold 16 x 2 = 32 tokens and every page is 16 x 16,384 = 256 KiB.
    Groups: 50 sliding, 10 full -> group size 10 -> 5 sliding groups + 1 full group of 10 layers;
    bytes_per_block = 10 x 256 KiB = 2,621,440; num_blocks = 20 GiB // 2.5 MiB = 8,192.
    One request: full cdiv(32768, 32) = 1,024; each sliding group cdiv(min(1023 + 2 x 8192, 32768), 16) + 1
    = 1,089; total 1,024 + 5 x 1,089 = 6,469 blocks = 16,958,095,360 B.
    GPU KV cache size int(8192 / 6469 x 32768) = 41,495 tokens; concurrency 1.27x.
    Longest length: 8,191 usable blocks - 5,445 sliding = 2,746 full blocks x 32 = 87,872 tokens.
    """
    r = _plan(GEMMA4_31B)
    assert r.fits
    assert (r.kv_bytes_per_token_per_layer, r.bytes_per_block, r.num_blocks) == (16384, 2621440, 8192)
    assert r.num_kv_cache_groups == 6
    assert (r.blocks_per_request, r.needed_bytes) == (6469, 16958095360)
    assert (r.kv_cache_tokens, r.max_concurrency) == (41495, 1.27)
    assert r.estimated_max_model_len == 87872
    assert r.kv_bytes_per_token == 901120
    assert r.log_lines[-1] == "GPU KV cache size: 41,495 tokens, Maximum concurrency for 32,768 tokens per request: 1.27x"


def test_31b_tensor_parallel_moves_the_larger_page():
    # TP 8: sliding 2 heads x 256, full max(1, 4 // 8) = 1 head x 512: equal pages, 16 tokens each.
    r8 = _plan(GEMMA4_31B, tensor_parallel_size=8, gpu_count=8)
    assert (r8.kv_bytes_per_token_per_layer, r8.bytes_per_block) == (2048, 10 * 16 * 2048)
    assert r8.blocks_per_request == 2048 + 5 * 1089
    # TP 16: sliding 1 x 256 = 1,024 B, full 1 x 512 = 2,048 B: now the sliding blocks hold 32 tokens,
    # cdiv(17407, 32) + 1 = 545 each, and the full group cdiv(32768, 16) = 2,048.
    r16 = _plan(GEMMA4_31B, tensor_parallel_size=16, gpu_count=16)
    assert (r16.kv_bytes_per_token_per_layer, r16.bytes_per_block) == (2048, 10 * 16 * 2048)
    assert r16.blocks_per_request == 2048 + 5 * 545


def test_fp8_halves_both_pages_and_keeps_the_ratio():
    r = _plan(GEMMA4_31B, kv_cache_dtype="fp8")
    assert (r.kv_bytes_per_token_per_layer, r.bytes_per_block, r.blocks_per_request) == (8192, 1310720, 6469)


def test_the_longest_length_is_vllms_binary_search():
    g = geometry_from_hf_config(GEMMA4_31B)
    groups, per_token = unify_page_sizes(kv_cache_groups(g), {FULL: 8192, SLIDING: 16384, "chunked": 16384})
    assert per_token == 16384 and {grp.kind: grp.scale for grp in groups} == {SLIDING: 1, FULL: 2}
    bpb = 10 * 16 * per_token
    for check in (bpb * 5446, bpb * 6000, bpb * 8191, 17 * GIB + 12345):
        found = largest_fitting_len(check, bpb, groups, 262144, 16, 16384)
        assert found == _search_fitting_len(check, bpb, group_shapes(groups), 262144, 16, 16384)
        assert bpb * blocks_per_request(groups, found, 16, 16384) <= check
        if found < 262144:
            assert bpb * blocks_per_request(groups, found + 1, 16, 16384) > check


def test_pages_that_do_not_divide_are_refused():
    g = geometry_from_hf_config(GEMMA4_31B)
    with pytest.raises(VllmInputError, match="does not divide"):
        unify_page_sizes(kv_cache_groups(g), {FULL: 12288, SLIDING: 16384})


def test_sglang_refuses_what_it_does_not_model():
    # llama.cpp's Gemma 4 cache is modelled: tests/engine/test_llamacpp_gemma4.py.
    with pytest.raises(sglang.SglangInputError, match="not modelled"):
        sglang.cell_size(GEMMA4_31B)


def test_a_real_vllm_log_of_the_31b_matches_block_for_block():
    """LargitData/gemma-4-31b-it-fp8's model card (https://huggingface.co/LargitData/gemma-4-31b-it-fp8, read in the
    copy at https://hf.pcdashi.cn/LargitData/gemma-4-31b-it-fp8): vllm/vllm-openai:gemma4 on an H200 NVL, fp8 KV cache,
    --max-model-len 32768, max_num_batched_tokens 8192: "available KV cache memory: 55.22 GiB", "GPU KV cache size:
    120,624 tokens", "maximum concurrency at 32,768 tokens/request: 11.57x"; the BF16 baseline: 60,752 tokens after
    loading 58.9 GiB of weights instead of 31.49.

    fp8 pages: sliding 2 x 16 x 256 = 8,192 B, full 2 x 4 x 512 = 4,096 B a token, so 6 groups of 10 layers and
    1,310,720 B a block. 55.22 GiB (printed to 0.01) holds 45,231..45,240 blocks. The image's release counts tokens as
    blocks // groups x 16 (kv_tokens_rule "per_group", before 0.21) and one batch of 8,192 tokens as in flight:
    full cdiv(32768, 32) = 1,024 + 5 x (cdiv(1023 + 8192, 16) + 1) = 5 x 577 -> 3,909 blocks a request.
    45,236 blocks: 45,236 // 6 x 16 = 120,624 tokens and 45,236 / 3,909 = 11.57x, as logged. Without the page
    unification (full layers at 16 tokens a block) a request would need 2,048 + 2,885 = 4,933 blocks: 9.17x.
    """
    g = geometry_from_hf_config(GEMMA4_31B)
    groups, per_token = unify_page_sizes(kv_cache_groups(g), {FULL: 4096, SLIDING: 8192, "chunked": 8192})
    bytes_per_block = 10 * 16 * per_token
    assert (len(groups), bytes_per_block) == (6, 1310720)
    per_request = blocks_per_request(groups, 32768, 16, 8192)
    assert per_request == 1024 + 5 * 577 == 3909
    printed = range(int(55.215 * GIB) // bytes_per_block, int(55.225 * GIB) // bytes_per_block + 1)
    matching = [n for n in printed if n // 6 * 16 == 120624 and round(n / per_request, 2) == 11.57]
    assert matching and 45236 in matching
    unscaled = blocks_per_request(kv_cache_groups(g), 32768, 16, 8192)
    assert unscaled == 4933 and round(45236 / unscaled, 2) == 9.17
    # The BF16 run (same fp8 KV cache, util and GPU) loads 58.9 - 31.49 = 27.41 GiB more weights (58.9 printed to 0.1),
    # so 27.76..27.86 GiB of KV cache: 22,740..22,822 blocks, among them 22,782..22,787, which log 60,752 tokens.
    bf16_blocks = range(int((55.215 - 58.95 + 31.485) * GIB) // bytes_per_block, int((55.225 - 58.85 + 31.495) * GIB) // bytes_per_block + 1)
    assert [n for n in bf16_blocks if n // 6 * 16 == 60752] == list(range(22782, 22788))


E2B_TEXT = {
    "model_type": "gemma4_text", "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256,
    "global_head_dim": 512, "attention_k_eq_v": False, "num_kv_shared_layers": 20, "hidden_size": 1536, "intermediate_size": 6144,
    "vocab_size": 262144, "max_position_embeddings": 131072, "sliding_window": 512, "torch_dtype": "bfloat16",
    "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
}


def test_e2b_shape_shares_kv_and_its_sliding_pages_are_the_smaller():
    """E2B's shape (transformers' convert_gemma4_weights.py _VARIANTS[gemma-4-e2b] with Gemma4TextConfig's defaults):
    the last 20 of 35 layers share KV, so 12 sliding + 3 full layers keep a cache. Sliding 2 x 1 x 256 x 2 = 1,024 B,
    full 2 x 1 x 512 x 2 = 2,048 B a token: the sliding blocks hold 32 tokens. Groups of 3: 4 sliding + 1 full,
    3 x 16 x 2,048 = 98,304 B a block. A 32,768-token request: full cdiv(32768, 16) = 2,048, each sliding group
    cdiv(min(511 + 16,384, 32,768), 32) + 1 = 529: 2,048 + 4 x 529 = 4,164 blocks."""
    r = _plan(E2B_TEXT, available_kv_cache_bytes=4 * GIB)
    assert (r.kv_bytes_per_token_per_layer, r.bytes_per_block, r.num_kv_cache_groups) == (2048, 98304, 5)
    assert r.blocks_per_request == 2048 + 4 * 529 == 4164
    assert r.kv_bytes_per_token == 12 * 1024 + 3 * 2048
    with pytest.raises(VllmInputError, match="pipeline parallelism"):
        _plan(E2B_TEXT, pipeline_parallel_size=2, gpu_count=2)


def test_e2b_weight_estimate_counts_per_layer_embeddings_and_the_double_wide_mlp():
    """vllm/model_executor/models/gemma4.py: Gemma4Model's embed_tokens_per_layer (262,144 x 35 x 256) and
    per_layer_model_projection (1,536 -> 35 x 256) on the first stage; per layer a PLE gate and projection
    (2 x 1,536 x 256) and, in the 20 KV-shared layers, a 2 x 6,144 MLP (use_double_wide_mlp).
    First stage: 262,144 x 1,536 + (262,144 + 1,536) x 35 x 256 = 2,765,225,984 parameters. Layers, mean of 35:
    attention (32 x 1,536 x 256 x 18 + 3 x 1,536 x 512 x 18) // 35 = 7,684,564 (KV-shared layers at the sliding shape),
    MLP 3 x 1,536 x 6,144 = 28,311,552, PLE and double width (27,525,120 + 20 x 28,311,552) // 35 = 16,964,461.
    Total 2,765,225,984 + 35 x 52,960,577 = 4,618,846,179 parameters, 9,237,692,358 bytes in BF16."""
    from generator.engine.vllm import weight_shape

    config = {**E2B_TEXT, "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144, "use_double_wide_mlp": True,
              "tie_word_embeddings": True}
    shape = weight_shape(config, geometry_from_hf_config(config))
    assert shape.embedding_params == 2765225984
    assert shape.layer_params == 7684564 + 28311552 + 16964461
    assert shape.total_bytes(35) == 2 * (2765225984 + 35 * 52960577) == 9237692358


def test_e2b_multimodal_class_loads_its_towers_and_a_per_layer_embedding_buffer():
    """vllm/model_executor/models/gemma4_mm.py (vllm_releases.GEMMA4_MM_SOURCE): Gemma4ForConditionalGeneration builds the
    vision tower and embed_vision, the audio tower and embed_audio (the config has audio_config), and a
    per_layer_embeddings buffer of max_num_batched_tokens x 35 x 256; a modality with --limit-mm-per-prompt 0
    builds no tower. E2B's towers (convert_gemma4_weights.py _ON_DEVICE_VISION_CONFIG, _DEFAULT_AUDIO_CONFIG):
    vision 16 x (768 x 64 x (24 + 24) + 3 x 768 x 3,072) + 3 x 16^2 x 768 + 2 x 10,240 x 768 + 768 x 1,536 = 168,493,056;
    audio 12 x (24 x 1,024^2 + 5 x 1,024) + (9 x 128 + 9 x 128 x 32 + 32 x 32 x 1,024) + 1,024 x 1,536 + 1,536^2
    = 307,070,080; the buffer at 16,384 tokens 146,800,640 values; all in BF16."""
    from generator.engine.vllm.budget import gemma4_multimodal_bytes

    vision = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 16, "num_attention_heads": 12,
              "num_key_value_heads": 12, "head_dim": 64, "patch_size": 16, "position_embedding_size": 10240}
    audio = {"hidden_size": 1024, "num_hidden_layers": 12, "conv_kernel_size": 5, "subsampling_conv_channels": [128, 32],
             "output_proj_dims": 1536}
    text = {**E2B_TEXT, "hidden_size_per_layer_input": 256}
    geometry = geometry_from_hf_config(text)
    config = {**text, "vision_config": vision, "audio_config": audio}
    assert gemma4_multimodal_bytes(text, geometry, 16384) == 0  # the text-only class
    assert gemma4_multimodal_bytes(config, geometry, 16384) == 2 * (168493056 + 307070080 + 146800640)
    assert gemma4_multimodal_bytes(config, geometry, 16384, ("audio",)) == 2 * (168493056 + 146800640)
    assert gemma4_multimodal_bytes(config, geometry, 16384, ("image", "video", "audio")) == 2 * 146800640
    estimated = _plan(config, available_kv_cache_bytes=None, gpu_total_bytes=80 * GIB, max_num_batched_tokens=16384,
                      mm_modalities_off=("audio",))
    text_only = _plan(text, available_kv_cache_bytes=None, gpu_total_bytes=80 * GIB, max_num_batched_tokens=16384)
    assert estimated.breakdown.weights_bytes - text_only.breakdown.weights_bytes == 2 * (168493056 + 146800640)
    printed = _plan(config, available_kv_cache_bytes=None, gpu_total_bytes=80 * GIB, weights_bytes=10 * GIB,
                    max_num_batched_tokens=16384)
    assert printed.breakdown.weights_bytes == 10 * GIB  # a printed "Model loading took" already holds them
