"""Gemma 4 in llama.cpp, worked by hand: two layer shapes, KV-shared layers, the iSWA split.

Facts (generator.engine.llamacpp.constants.GEMMA4_LLAMACPP_SOURCE):
- src/models/gemma4.cpp @9af0434d load_arch_hparams: SWA layers from the per-layer `sliding_window_pattern`,
  n_layer_kv_from_start = block_count - `shared_kv_layers`; llama_hparams::has_kv(il) is false from there on and
  llama_kv_cache skips the layer ("does not have KV cache"); the graph builds build_attn_inp_kv_iswa.
- conversion/gemma.py @061b8c5f Gemma4Model.set_gguf_parameters: key_length = global_head_dim (full layers),
  key_length_swa = head_dim, head_count_kv per layer with num_global_key_value_heads on full layers.
- src/llama-kv-cache-iswa.cpp: SWA cells = GGML_PAD(min(n_ctx_seq, n_swa * (unified ? n_seq : 1) + n_ubatch), 256).
"""

from __future__ import annotations

import pytest

from generator.engine.geometry import GeometryError, geometry_from_hf_config
from generator.engine.llamacpp import ServerSettings, plan_kv
from generator.engine.llamacpp.layout import kv_layout_from_geometry, kv_layout_from_gguf_metadata
from generator.engine.ollama import estimate_ollama
from generator.units import GIB, MIB

from .test_gemma4 import E2B_TEXT, GEMMA4_31B


def _layout(config):
    return kv_layout_from_geometry(geometry_from_hf_config(config))


def _size_lines(layout, settings):
    return [cache.size_line(settings.parallel) for cache in plan_kv(layout, settings).caches]


def test_31b_full_layers_are_narrower_and_the_sliding_ones_get_the_small_cache():
    """Full layers 4 KV heads x 512 = 2,048 wide, sliding 16 x 256 = 4,096; window 1024.
    -c 32768 -np 1: non-SWA 10 layers x 32,768 cells x 2,048 x 2 B x (K + V) = 2,560 MiB;
    SWA GGML_PAD(min(32768, 1024 + 512), 256) = 1,536 cells x 50 layers x 4,096 x 2 B x 2 = 1,200 MiB."""
    layout = _layout(GEMMA4_31B)
    assert layout.n_swa == 1024 and layout.n_layer == 60
    assert {(layer.swa, layer.k_width, layer.v_width, layer.head_k) for layer in layout.kv_layers} == {(False, 2048, 2048, 512), (True, 4096, 4096, 256)}
    assert [layer.index for layer in layout.kv_layers if not layer.swa] == list(range(5, 60, 6))
    assert _size_lines(layout, ServerSettings(ctx_size=32768, parallel=1)) == [
        "llama_kv_cache: size = 2560.00 MiB ( 32768 cells,  10 layers,  1/1 seqs), K (f16): 1280.00 MiB, V (f16): 1280.00 MiB",
        "llama_kv_cache: size = 1200.00 MiB (  1536 cells,  50 layers,  1/1 seqs), K (f16):  600.00 MiB, V (f16):  600.00 MiB",
    ]


def test_31b_without_flash_attention_pads_the_full_layers_v_to_the_widest():
    """llama-kv-cache.cpp [TAG_V_CACHE_VARIABLE]: with FA off, V rows are n_embd_v_gqa_max() = 4,096 wide, so the full
    layers' V doubles to 2,560 MiB; K and the sliding layers are unchanged."""
    plan = plan_kv(_layout(GEMMA4_31B), ServerSettings(ctx_size=32768, parallel=1, flash_attn="off"))
    base, swa = plan.caches
    assert (base.k_bytes, base.v_bytes) == (1280 * MIB, 2560 * MIB)
    assert swa.total_bytes == 1200 * MIB


def test_e2b_kv_shared_layers_have_no_cache():
    """Layers 15-34 of 35 share KV: 3 full layers (4, 9, 14; 1 KV head x 512) and 12 sliding (1 x 256) keep a cache.
    --swa-full at -c 2048: 3 x 2,048 x 512 x 2 B x 2 = 12 MiB and 12 x 2,048 x 256 x 2 B x 2 = 24 MiB."""
    layout = _layout(E2B_TEXT)
    assert [layer.index for layer in layout.kv_layers if not layer.swa] == [4, 9, 14]
    assert [layer.index for layer in layout.kv_layers if layer.swa] == [i for i in range(15) if i % 5 != 4]
    assert _size_lines(layout, ServerSettings(ctx_size=2048, parallel=1, swa_full=True)) == [
        "llama_kv_cache: size =   12.00 MiB (  2048 cells,   3 layers,  1/1 seqs), K (f16):    6.00 MiB, V (f16):    6.00 MiB",
        "llama_kv_cache: size =   24.00 MiB (  2048 cells,  12 layers,  1/1 seqs), K (f16):   12.00 MiB, V (f16):   12.00 MiB",
    ]


def _e2b_gguf(**changes):
    swa = [t == "sliding_attention" for t in E2B_TEXT["layer_types"]]
    meta = {
        "general.architecture": "gemma4", "gemma4.block_count": 35, "gemma4.context_length": 131072,
        "gemma4.embedding_length": 1536, "gemma4.feed_forward_length": [6144] * 15 + [12288] * 20,
        "gemma4.attention.head_count": 8, "gemma4.attention.head_count_kv": 1,
        "gemma4.attention.key_length": 512, "gemma4.attention.value_length": 512,
        "gemma4.attention.key_length_swa": 256, "gemma4.attention.value_length_swa": 256,
        "gemma4.attention.sliding_window": 512, "gemma4.attention.sliding_window_pattern": swa,
        "gemma4.attention.shared_kv_layers": 20, "gemma4.vocab_size": 262144,
    }
    return {**meta, **changes}


def test_gguf_metadata_gives_the_same_cache_as_config_json():
    """The keys conversion/gemma.py writes for E2B (no num_global_key_value_heads: one scalar head_count_kv)."""
    from_gguf, from_hf = kv_layout_from_gguf_metadata(_e2b_gguf()), _layout(E2B_TEXT)
    assert from_gguf.kv_layers == from_hf.kv_layers and from_gguf.n_swa == from_hf.n_swa == 512
    settings = ServerSettings(ctx_size=16384, parallel=2)
    assert plan_kv(from_gguf, settings).kv_bytes == plan_kv(from_hf, settings).kv_bytes
    with pytest.raises(GeometryError, match="leaves no layer"):
        kv_layout_from_gguf_metadata(_e2b_gguf(**{"gemma4.attention.shared_kv_layers": 35}))
    # Another architecture's shared_kv_layers key is not read (Gemma 3n hardcodes its start).
    assert len(kv_layout_from_gguf_metadata({**_e2b_gguf(), "general.architecture": "other", **{
        k.replace("gemma4.", "other."): v for k, v in _e2b_gguf().items() if k.startswith("gemma4.")}}).kv_layers) == 35


def test_31b_gguf_per_layer_kv_heads():
    """31B: head_count_kv [16 sliding, 4 full] as conversion/gemma.py writes it with num_global_key_value_heads."""
    swa = [t == "sliding_attention" for t in GEMMA4_31B["text_config"]["layer_types"]]
    meta = {
        "general.architecture": "gemma4", "gemma4.block_count": 60, "gemma4.context_length": 262144,
        "gemma4.embedding_length": 5376, "gemma4.feed_forward_length": 21504, "gemma4.attention.head_count": 32,
        "gemma4.attention.head_count_kv": [16 if s else 4 for s in swa], "gemma4.attention.key_length": 512,
        "gemma4.attention.value_length": 512, "gemma4.attention.key_length_swa": 256, "gemma4.attention.value_length_swa": 256,
        "gemma4.attention.sliding_window": 1024, "gemma4.attention.sliding_window_pattern": swa, "gemma4.attention.shared_kv_layers": 0,
    }
    assert kv_layout_from_gguf_metadata(meta).kv_layers == _layout(GEMMA4_31B).kv_layers


def test_ollama_runs_gemma4_through_llama_server():
    """Ollama 0.33 (server/sched.go) starts llama-server for a GGUF Gemma 4: its KV is llama.cpp's, here at
    num_ctx 32768 with one slot, as in the 31B case above."""
    result = estimate_ollama(_layout(GEMMA4_31B), request_num_ctx=32768, weights_bytes=18 * GIB, gpu_total_bytes=80 * GIB)
    assert result.kv_bytes == (2560 + 1200) * MIB
    assert result.kv_cells == 32768
