"""llama.cpp KV arithmetic against tables worked by hand from the llama.cpp source (master 3f545be, nearest release
https://github.com/ggml-org/llama.cpp/tree/b10573) and real logs from public threads (data/evidence/llamacpp_real_logs.yaml)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from generator.engine.geometry import geometry_from_hf_config
from generator.engine.llamacpp import (
    CACHE_TYPES,
    KvLayout,
    LayerKv,
    LlamaCppError,
    ServerSettings,
    answer_llamacpp_request,
    compute_buffer_bytes,
    context_cells,
    estimate_llamacpp,
    geometry_from_gguf_metadata,
    gpu_layers_that_fit,
    kv_layout_from_geometry,
    kv_layout_from_gguf_metadata,
    kv_log_lines,
    max_ctx_that_fits,
    mib_text,
    plan_kv,
    plan_llamacpp_remediation,
    resolve_flash_attn,
    row_size,
)
from generator.units import GIB, MIB

REAL_LOGS = yaml.safe_load((Path(__file__).resolve().parents[2] / "data" / "evidence" / "llamacpp_real_logs.yaml").read_text())["logs"]

# Qwen2.5-Coder-32B-Instruct config.json (copy: https://huggingface.co/ai-team-20/qwen3-coder-480b-3/commit/6e6b0cb69a58fc511a4dbfe5ac908e26dbd27580).
QWEN_CODER_32B = {
    "model_type": "qwen2", "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
    "hidden_size": 5120, "intermediate_size": 27648, "vocab_size": 152064, "max_position_embeddings": 32768,
}
# gemma-3-27b-it text config, as data/models.yaml cites it: repo google/gemma_pytorch gemma/config.py @014acb7ac456
# (get_config_for_27b_v3) and transformers configuration_gemma3.py @008f5c8c29be (Gemma3TextConfig defaults).
GEMMA3_27B = {
    "model_type": "gemma3_text", "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16,
    "head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "vocab_size": 262208,
    "max_position_embeddings": 131072, "sliding_window": 1024, "sliding_window_pattern": 6,
}
# DeepSeek-V3 config.json (copy: repo ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/model_configs/
# deepseek-ai--DeepSeek-V3_config.json @095f58a51c4c).
DEEPSEEK_V3 = {
    "model_type": "deepseek_v3", "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
    "hidden_size": 7168, "intermediate_size": 18432, "vocab_size": 129280, "max_position_embeddings": 163840,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64,
}


def layout_of(config) -> KvLayout:
    return kv_layout_from_geometry(geometry_from_hf_config(config))


def size_lines(plan, layout, settings, buffer_name="CUDA0"):
    return [line for line in kv_log_lines(plan, layout, settings, buffer_name) if line.startswith("llama_kv_cache: size = ")]


# --- ggml type sizes -------------------------------------------------------------------------

@pytest.mark.parametrize(
    "cache_type, bytes_per_1024",
    [("f32", 4096), ("f16", 2048), ("bf16", 2048), ("q8_0", 1088), ("q5_1", 768), ("q5_0", 704),
     ("q4_1", 640), ("q4_0", 576), ("iq4_nl", 576)],
)
def test_row_size_matches_spec_table(cache_type, bytes_per_1024):
    assert row_size(cache_type, 1024) == bytes_per_1024


def test_every_accepted_cache_type_has_a_row_size():
    assert set(CACHE_TYPES) == {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}
    for cache_type in CACHE_TYPES:
        assert row_size(cache_type, 128) > 0


# --- worked example: Qwen2.5-Coder-32B --------------------------------------------

def test_worked_example_q8_0_default_parallel_prints_the_observed_lines():
    layout = layout_of(QWEN_CODER_32B)
    settings = ServerSettings(ctx_size=16384, cache_type_k="q8_0", cache_type_v="q8_0")
    plan = plan_kv(layout, settings)
    lines = kv_log_lines(plan, layout, settings, buffer_name="CPU")
    assert "llama_init_from_model: enabling flash_attn since it is required for quantized V cache" in lines
    assert "llama_kv_cache:        CPU KV buffer size =  2176.00 MiB" in lines
    assert (
        "llama_kv_cache: size = 2176.00 MiB ( 16384 cells,  64 layers,  4/1 seqs), "
        "K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB"
    ) in lines
    assert plan.kv_bytes == 2 * 1_140_850_688
    assert plan.kv_bytes // plan.context.cells == 139_264  # 136 KiB per token
    assert plan.kv_unified and plan.context.n_seq_max == 4


@pytest.mark.parametrize(
    "settings, line",
    [
        (dict(parallel=1, cache_type_k="q8_0", cache_type_v="q8_0"),
         "llama_kv_cache: size = 2176.00 MiB ( 16384 cells,  64 layers,  1/1 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB"),
        (dict(parallel=4, cache_type_k="q8_0", cache_type_v="q8_0"),
         "llama_kv_cache: size = 2176.00 MiB (  4096 cells,  64 layers,  4/4 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB"),
        (dict(parallel=2, cache_type_k="q8_0", cache_type_v="q8_0"),
         "llama_kv_cache: size = 2176.00 MiB (  8192 cells,  64 layers,  2/2 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB"),
        (dict(parallel=1),
         "llama_kv_cache: size = 4096.00 MiB ( 16384 cells,  64 layers,  1/1 seqs), K (f16): 2048.00 MiB, V (f16): 2048.00 MiB"),
        (dict(parallel=1, cache_type_k="q4_0", cache_type_v="q4_0"),
         "llama_kv_cache: size = 1152.00 MiB ( 16384 cells,  64 layers,  1/1 seqs), K (q4_0):  576.00 MiB, V (q4_0):  576.00 MiB"),
        (dict(parallel=1, cache_type_k="iq4_nl", cache_type_v="iq4_nl"),
         "llama_kv_cache: size = 1152.00 MiB ( 16384 cells,  64 layers,  1/1 seqs), K (iq4_nl):  576.00 MiB, V (iq4_nl):  576.00 MiB"),
        (dict(parallel=1, cache_type_k="q5_1", cache_type_v="q5_1"),
         "llama_kv_cache: size = 1536.00 MiB ( 16384 cells,  64 layers,  1/1 seqs), K (q5_1):  768.00 MiB, V (q5_1):  768.00 MiB"),
    ],
)
def test_worked_example_table(settings, line):
    layout = layout_of(QWEN_CODER_32B)
    s = ServerSettings(ctx_size=16384, **settings)
    assert size_lines(plan_kv(layout, s), layout, s) == [line]


def test_np_3_rounds_the_context_up_and_says_rounding_down():
    layout = layout_of(QWEN_CODER_32B)
    settings = ServerSettings(ctx_size=16384, parallel=3)
    plan = plan_kv(layout, settings)
    assert (plan.context.n_ctx, plan.context.n_ctx_seq, plan.context.cells) == (16896, 5632, 16896)
    lines = kv_log_lines(plan, layout, settings)
    assert "llama_context: n_ctx is not divisible by n_seq_max - rounding down to 16896" in lines
    assert any(line.startswith("llama_context: n_ctx ") and line.endswith("= 16896") for line in lines)


def test_context_padding_and_ctx_size_zero():
    assert context_cells(16000, 32768, 1, False).n_ctx == 16128
    assert context_cells(0, 32768, 1, False).n_ctx == 32768  # -c 0 = n_ctx_train
    assert context_cells(16000, 32768, 1, True, ctx_pad=32).n_ctx == 16000  # before 2025-11 without FA
    assert context_cells(1000, 32768, 1, True, ctx_pad=32).n_ctx == 1024
    assert context_cells(40000, 32768, 1, False).n_ctx == 40192  # above n_ctx_train: still allocated


def test_parallel_auto_is_four_unified_and_explicit_is_split_unless_kvu():
    assert ServerSettings().seqs() == (4, True)
    assert ServerSettings(parallel=-1).seqs() == (4, True)
    assert ServerSettings(parallel=4).seqs() == (4, False)
    assert ServerSettings(parallel=4, kv_unified=True).seqs() == (4, True)
    layout = layout_of(QWEN_CODER_32B)
    unified = plan_kv(layout, ServerSettings(ctx_size=32768, parallel=4, kv_unified=True))
    assert (unified.context.n_ctx_seq, unified.context.n_stream) == (32768, 1)


def test_np_does_not_multiply_a_full_attention_cache():
    layout = layout_of(QWEN_CODER_32B)
    one = plan_kv(layout, ServerSettings(ctx_size=16384, parallel=1)).kv_bytes
    for n in (2, 4, 8):
        assert plan_kv(layout, ServerSettings(ctx_size=16384, parallel=n)).kv_bytes == one


# --- Gemma 3 SWA -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "settings, base, swa",
    [
        (dict(), "size = 2560.00 MiB ( 32768 cells,  10 layers,  4/1 seqs)", "size = 1872.00 MiB (  4608 cells,  52 layers,  4/1 seqs)"),
        (dict(parallel=1), "size = 2560.00 MiB ( 32768 cells,  10 layers,  1/1 seqs)", "size =  624.00 MiB (  1536 cells,  52 layers,  1/1 seqs)"),
        (dict(parallel=4), "size = 2560.00 MiB (  8192 cells,  10 layers,  4/4 seqs)", "size = 2496.00 MiB (  1536 cells,  52 layers,  4/4 seqs)"),
        (dict(parallel=1, swa_full=True), "size = 2560.00 MiB ( 32768 cells,  10 layers,  1/1 seqs)", "size = 13312.00 MiB ( 32768 cells,  52 layers,  1/1 seqs)"),
    ],
)
def test_gemma3_swa_table(settings, base, swa):
    layout = layout_of(GEMMA3_27B)
    s = ServerSettings(ctx_size=32768, **settings)
    plan = plan_kv(layout, s)
    lines = size_lines(plan, layout, s)
    assert len(lines) == 2
    assert base in lines[0] and swa in lines[1]
    result = estimate_llamacpp(layout, s)
    assert result.kv_bytes == plan.caches[0].total_bytes + plan.caches[1].total_bytes


def test_gemma3_iswa_log_shape():
    layout = layout_of(GEMMA3_27B)
    s = ServerSettings(ctx_size=32768)
    lines = kv_log_lines(plan_kv(layout, s), layout, s)
    assert "llama_kv_cache_iswa: creating non-SWA KV cache, size = 32768 cells" in lines
    assert "llama_kv_cache_iswa: creating     SWA KV cache, size = 4608 cells" in lines


def test_gemma3_same_lines_from_gguf_metadata():
    meta = {
        "general.architecture": "gemma3",
        "gemma3.block_count": 62,
        "gemma3.context_length": 131072,
        "gemma3.embedding_length": 5376,
        "gemma3.feed_forward_length": 21504,
        "gemma3.attention.head_count": 32,
        "gemma3.attention.head_count_kv": 16,
        "gemma3.attention.key_length": 128,
        "gemma3.attention.value_length": 128,
        "gemma3.attention.sliding_window": 1024,
    }
    from_gguf = kv_layout_from_gguf_metadata(meta)
    from_hf = layout_of(GEMMA3_27B)
    assert [l.swa for l in from_gguf.kv_layers] == [l.swa for l in from_hf.kv_layers]
    for settings in (ServerSettings(ctx_size=32768), ServerSettings(ctx_size=32768, parallel=4)):
        assert plan_kv(from_gguf, settings).caches == plan_kv(from_hf, settings).caches
    geometry = geometry_from_gguf_metadata(meta)
    assert (geometry.num_layers, geometry.num_kv_heads, geometry.head_dim, geometry.sliding_window) == (62, 16, 128, 1024)
    assert geometry.count("sliding") == 52 and geometry.count("full") == 10


def test_gpt_oss_alternates_swa_layers():
    # gpt-oss-20b config.json (copy: repo ai-dynamo/aiconfigurator
    # aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-20b_config.json @095f58a51c4c): 24 layers, 8 KV heads x 64, sliding 128, even layers slide.
    config = {
        "model_type": "gpt_oss", "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
        "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880, "vocab_size": 201088,
        "max_position_embeddings": 131072, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
    }
    layout = layout_of(config)
    plan = plan_kv(layout, ServerSettings(ctx_size=32768, parallel=1))
    base, swa = plan.caches
    assert len(base.layer_indices) == len(swa.layer_indices) == 12
    assert swa.cells_per_stream == 768  # PAD256(128 + 512)
    assert base.total_bytes == 12 * 32768 * 2 * row_size("f16", 512)


# --- DeepSeek MLA ----------------------------------------------------------------------------

def test_deepseek_mla_k_only_cache():
    layout = layout_of(DEEPSEEK_V3)
    s = ServerSettings(ctx_size=32768, parallel=1)
    assert size_lines(plan_kv(layout, s), layout, s) == [
        "llama_kv_cache: size = 2196.00 MiB ( 32768 cells,  61 layers,  1/1 seqs), K (f16): 2196.00 MiB, V (f16):    0.00 MiB"
    ]
    q8 = replace(s, cache_type_k="q8_0", cache_type_v="q8_0")
    assert size_lines(plan_kv(layout, q8), layout, q8) == [
        "llama_kv_cache: size = 1166.62 MiB ( 32768 cells,  61 layers,  1/1 seqs), K (q8_0): 1166.62 MiB, V (q8_0):    0.00 MiB"
    ]
    assert plan_kv(layout, s).kv_bytes // 32768 == 70_272


def test_deepseek_mla_requires_equal_k_and_v_types():
    layout = layout_of(DEEPSEEK_V3)
    with pytest.raises(LlamaCppError, match=r"model does not support different K \(q8_0\) and V \(f16\) cache types"):
        plan_kv(layout, ServerSettings(ctx_size=32768, cache_type_k="q8_0"))


def test_deepseek_gguf_with_and_without_mla_keys():
    base = {
        "general.architecture": "deepseek2", "deepseek2.block_count": 61, "deepseek2.context_length": 163840,
        "deepseek2.embedding_length": 7168, "deepseek2.attention.head_count": 128,
    }
    mla = dict(base, **{
        "deepseek2.attention.head_count_kv": 1, "deepseek2.attention.key_length": 576,
        "deepseek2.attention.value_length": 512, "deepseek2.attention.key_length_mla": 192,
        "deepseek2.attention.value_length_mla": 128, "deepseek2.attention.kv_lora_rank": 512,
        "deepseek2.rope.dimension_count": 64,
    })
    old = dict(base, **{
        "deepseek2.attention.head_count_kv": 128, "deepseek2.attention.key_length": 192,
        "deepseek2.attention.value_length": 128,
    })
    s = ServerSettings(ctx_size=32768, parallel=1)
    assert plan_kv(kv_layout_from_gguf_metadata(mla), s).kv_bytes == plan_kv(layout_of(DEEPSEEK_V3), s).kv_bytes
    old_bytes = plan_kv(kv_layout_from_gguf_metadata(old), s).kv_bytes
    assert old_bytes == 61 * 32768 * (128 * 192 + 128 * 128) * 2
    assert old_bytes / plan_kv(kv_layout_from_gguf_metadata(mla), s).kv_bytes > 70
    geometry = geometry_from_gguf_metadata(mla)
    assert geometry.mla is not None and (geometry.mla.kv_lora_rank, geometry.mla.qk_rope_head_dim) == (512, 64)


# --- flash attention and type checks ---------------------------------------------------------

def test_quantized_v_needs_flash_attention():
    assert resolve_flash_attn("auto", "q8_0").enabled
    assert resolve_flash_attn("on", "q4_0").enabled
    with pytest.raises(LlamaCppError, match="quantized V cache requires flash_attn to be enabled"):
        resolve_flash_attn("off", "q8_0")
    # a quantized K alone works with FA off
    plan = plan_kv(layout_of(QWEN_CODER_32B), ServerSettings(ctx_size=4096, cache_type_k="q8_0", flash_attn="off"))
    assert not plan.flash_attn.enabled
    with pytest.raises(LlamaCppError, match="unknown value for --flash-attn: 'maybe'"):
        resolve_flash_attn("maybe", "f16")
    assert not resolve_flash_attn("auto", "f16", fa_supported=False).enabled
    with pytest.raises(LlamaCppError, match="quantized V cache requires flash_attn"):
        resolve_flash_attn("auto", "q8_0", arch="grok")


def test_head_size_must_divide_into_quantized_blocks():
    # head_dim 80 (e.g. 2560 hidden / 32 heads) is not a multiple of the 32-element q8_0 block.
    config = {"model_type": "phi", "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 2560,
              "vocab_size": 51200, "max_position_embeddings": 2048}
    layout = layout_of(config)
    with pytest.raises(LlamaCppError, match="K cache type q8_0 with block size 32 does not divide n_embd_head_k=80"):
        plan_kv(layout, ServerSettings(ctx_size=2048, cache_type_k="q8_0", cache_type_v="f16"))
    with pytest.raises(LlamaCppError, match="V cache type q4_0 with block size 32 does not divide n_embd_head_v=80"):
        plan_kv(layout, ServerSettings(ctx_size=2048, cache_type_k="f16", cache_type_v="q4_0"))
    with pytest.raises(LlamaCppError, match="Unsupported cache type: q2_k"):
        plan_kv(layout, ServerSettings(ctx_size=2048, cache_type_k="q2_k"))


def test_v_rows_pad_to_widest_when_flash_attention_is_off():
    meta = {
        "general.architecture": "gemma3", "gemma3.block_count": 6, "gemma3.context_length": 8192,
        "gemma3.embedding_length": 1024, "gemma3.attention.head_count": 8, "gemma3.attention.head_count_kv": 2,
        "gemma3.attention.key_length": 512, "gemma3.attention.value_length": 512,
        "gemma3.attention.key_length_swa": 256, "gemma3.attention.value_length_swa": 256,
        "gemma3.attention.sliding_window": 512,
    }
    layout = kv_layout_from_gguf_metadata(meta)
    on = plan_kv(layout, ServerSettings(ctx_size=4096, parallel=1, flash_attn="on"))
    off = plan_kv(layout, ServerSettings(ctx_size=4096, parallel=1, flash_attn="off"))
    swa_on, swa_off = on.caches[1], off.caches[1]
    assert swa_on.k_bytes == swa_off.k_bytes
    assert swa_off.v_bytes == 2 * swa_on.v_bytes  # 512-wide V rows instead of 256


def test_per_layer_kv_heads_skip_layers_without_attention():
    meta = {
        "general.architecture": "hybrid", "hybrid.block_count": 4, "hybrid.context_length": 4096,
        "hybrid.embedding_length": 1024, "hybrid.attention.head_count": 8,
        "hybrid.attention.head_count_kv": [0, 2, 0, 4], "hybrid.attention.key_length": 128,
    }
    layout = kv_layout_from_gguf_metadata(meta)
    assert [(l.index, l.k_width) for l in layout.kv_layers] == [(1, 256), (3, 512)]
    plan = plan_kv(layout, ServerSettings(ctx_size=1024, parallel=1))
    assert plan.kv_bytes == 1024 * (256 + 512) * 2 * 2
    assert "  2 layers" in size_lines(plan, layout, ServerSettings(ctx_size=1024, parallel=1))[0]
    # -ngl 1 puts only the last repeating layer (index 3, 512 wide) and its KV on the GPU
    from generator.engine.llamacpp import gpu_use
    settings = ServerSettings(ctx_size=1024, parallel=1)
    assert gpu_use(layout, plan, settings, 5 * MIB, 1).kv_bytes == 1024 * 512 * 2 * 2
    assert gpu_use(layout, plan, settings, 5 * MIB, 1).weights_bytes == 1 * MIB
    assert gpu_use(layout, plan, settings, 5 * MIB, 0).total_bytes == 0


# --- real logs -------------------------------------------------------------------------------

def _layout_for(entry) -> KvLayout:
    geometry = entry["geometry"]
    if "hf_config" in geometry:
        return layout_of(geometry["hf_config"])
    if "gguf_metadata" in geometry:
        return kv_layout_from_gguf_metadata(geometry["gguf_metadata"])
    w = geometry["log_widths"]
    layers = tuple(LayerKv(il, w["k_width"], w["v_width"], w["head"], w["head"], False) for il in range(w["n_layer"]))
    return KvLayout("log", w["n_layer"], layers, None, False, w["n_ctx_train"], 0, 1, 0, None)


def _real_runs():
    for entry in REAL_LOGS:
        runs = entry.get("runs") or [{"settings": entry["settings"], "printed": entry["printed"], "expect": entry["expect"]}]
        for i, run in enumerate(runs):
            yield pytest.param(entry, run, id=f"{entry['id']}#{i}")


def test_real_log_table_is_sourced():
    assert len(REAL_LOGS) >= 8
    for entry in REAL_LOGS:
        assert entry["url"].startswith("https://github.com/"), entry["id"]
        for key in ("build", "model", "geometry_source"):
            assert entry.get(key), (entry["id"], key)


@pytest.mark.parametrize("entry, run", list(_real_runs()))
def test_real_log(entry, run):
    layout = _layout_for(entry)
    settings = ServerSettings(**run["settings"])
    plan = plan_kv(layout, settings)
    expect = run["expect"]
    printed = "\n".join(run["printed"])
    if "cells" in expect:
        assert plan.caches[0].cells == expect["cells"]
    if "n_ctx" in expect:
        assert plan.context.n_ctx == expect["n_ctx"]
    if "kv_mib" in expect:
        assert mib_text(plan.kv_bytes) == expect["kv_mib"]
        assert expect["kv_mib"] in printed or expect["kv_mib"].rstrip("0").rstrip(".") in printed
    if "k_mib" in expect:
        assert mib_text(plan.k_bytes) == expect["k_mib"] and expect["k_mib"] in printed
    if "v_mib" in expect:
        assert mib_text(plan.v_bytes) == expect["v_mib"] and expect["v_mib"] in printed
    if "non_swa_mib" in expect:
        base = next(cache for cache in plan.caches if cache.kind == "non-SWA")
        assert mib_text(base.total_bytes) == expect["non_swa_mib"] and base.size_line(settings.parallel or 1) in printed
    for buffer_mib, n_layers in (expect.get("device_layers") or {}).items():
        per_layer = plan.bytes_by_layer()
        assert len(set(per_layer.values())) == 1
        assert f"{next(iter(per_layer.values())) * n_layers / MIB:.2f}" == buffer_mib
        assert buffer_mib in printed


COMPUTE_TOLERANCE = 0.12


def test_compute_buffer_estimate_against_real_logs():
    errors = {}
    for entry in REAL_LOGS:
        runs = entry.get("runs") or [{"settings": entry["settings"], "expect": entry["expect"]}]
        for i, run in enumerate(runs):
            if "compute_mib" not in run["expect"]:
                continue
            layout = _layout_for(entry)
            settings = ServerSettings(**run["settings"])
            estimate = compute_buffer_bytes(layout, plan_kv(layout, settings), settings.ubatch_size) / MIB
            errors[f"{entry['id']}#{i}"] = estimate / run["expect"]["compute_mib"] - 1
    assert len(errors) >= 4
    worst = max(errors.values(), key=abs)
    assert abs(worst) <= COMPUTE_TOLERANCE, errors


# --- the VRAM picture ------------------------------------------------------------------------

def test_estimate_fits_and_limits_are_consistent():
    layout = layout_of(QWEN_CODER_32B)
    weights = int(18.5 * GIB)
    settings = ServerSettings(ctx_size=32768, parallel=1)
    result = estimate_llamacpp(layout, settings, weights_bytes=weights, gpu_memory_bytes=24 * GIB)
    assert result.fits is False
    assert 0 < result.max_ctx_that_fits < 32768 and result.max_ctx_that_fits % 256 == 0
    smaller = estimate_llamacpp(layout, replace(settings, ctx_size=result.max_ctx_that_fits), weights_bytes=weights, gpu_memory_bytes=24 * GIB)
    assert smaller.fits is True
    over = estimate_llamacpp(layout, replace(settings, ctx_size=result.max_ctx_that_fits + 256), weights_bytes=weights, gpu_memory_bytes=24 * GIB)
    assert over.fits is False
    assert 0 <= result.gpu_layers_that_fit <= 64
    assert result.fit_outcome.startswith("--fit keeps -c")
    assert result.oom_lines  # the sequence a pinned -ngl would produce
    d = result.to_dict()
    for key in ("k_bytes", "v_bytes", "kv_bytes", "kv_cells", "n_ctx", "weights_bytes", "compute_buffer_bytes",
                "fits", "max_ctx_that_fits", "gpu_layers_that_fit", "log_lines", "oom_lines", "basis"):
        assert key in d


def test_oom_sequence_names_the_kv_buffer_when_kv_is_what_overflows():
    layout = layout_of(QWEN_CODER_32B)
    settings = ServerSettings(ctx_size=32768, parallel=1, n_gpu_layers=99)
    result = estimate_llamacpp(layout, settings, weights_bytes=18 * GIB, gpu_memory_bytes=24 * GIB, model_path="qwen.gguf")
    assert result.oom_lines == (
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory",
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 8589934592",
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        "cmn  common_init_: failed to create context with model 'qwen.gguf'",
        "srv    load_model: failed to create_context with model 'qwen.gguf'",
        "srv  llama_server: exiting due to model loading error",
    )
    assert result.fit_outcome.startswith("no fit adjustment")


def test_fewer_layers_and_no_kv_offload_reduce_gpu_use():
    layout = layout_of(QWEN_CODER_32B)
    plan = plan_kv(layout, ServerSettings(ctx_size=16384, parallel=1))
    budget = 20 * GIB
    ngl = gpu_layers_that_fit(layout, plan, ServerSettings(ctx_size=16384, parallel=1), 18 * GIB, budget)
    assert 0 < ngl < 65
    full = estimate_llamacpp(layout, ServerSettings(ctx_size=16384, parallel=1), weights_bytes=18 * GIB)
    nkvo = estimate_llamacpp(layout, ServerSettings(ctx_size=16384, parallel=1, kv_offload=False), weights_bytes=18 * GIB)
    assert nkvo.gpu_bytes < full.gpu_bytes - plan.kv_bytes + MIB
    assert any("      CPU KV buffer size" in line for line in nkvo.log_lines)


def test_max_ctx_respects_stream_multiples():
    layout = layout_of(QWEN_CODER_32B)
    settings = ServerSettings(ctx_size=32768, parallel=3)
    best = max_ctx_that_fits(layout, settings, 18 * GIB, 22 * GIB)
    assert best % (256 * 3) == 0
    assert not plan_kv(layout, replace(settings, ctx_size=best)).context.rounded


def test_remediation_levers_are_deterministic_and_each_helps():
    layout = layout_of(GEMMA3_27B)
    settings = ServerSettings(ctx_size=32768, parallel=4, swa_full=True)
    a = plan_llamacpp_remediation(layout, settings, weights_bytes=16 * GIB, gpu_memory_bytes=24 * GIB)
    b = plan_llamacpp_remediation(layout, settings, weights_bytes=16 * GIB, gpu_memory_bytes=24 * GIB)
    assert a == b
    names = [lever.name for lever in a.levers]
    assert names[:3] == ["ctx_size", "cache_type_q8_0", "cache_type_q4_0"]
    assert {"no_kv_offload", "swa_full_off"} <= set(names)
    # with --swa-full every stream is full size, so one slot saves nothing; without it, it does
    assert "parallel_1" not in names
    no_full = plan_llamacpp_remediation(layout, replace(settings, swa_full=False), weights_bytes=16 * GIB, gpu_memory_bytes=24 * GIB)
    assert "parallel_1" in [lever.name for lever in no_full.levers]
    base = plan_kv(layout, settings).kv_bytes
    by_name = {lever.name: lever for lever in a.levers}
    assert by_name["cache_type_q8_0"].kv_bytes < base
    assert by_name["swa_full_off"].kv_bytes < base
    assert by_name["ctx_size"].fits and by_name["ctx_size"].yields < 32768
    assert by_name["cache_type_q8_0"].flags == (("--cache-type-k", "q8_0"), ("--cache-type-v", "q8_0"))


def test_quantized_lever_adds_flash_attention_when_it_was_off():
    layout = layout_of(QWEN_CODER_32B)
    settings = ServerSettings(ctx_size=32768, parallel=1, flash_attn="off")
    plan = plan_llamacpp_remediation(layout, settings, weights_bytes=18 * GIB, gpu_memory_bytes=24 * GIB)
    q8 = next(lever for lever in plan.levers if lever.name == "cache_type_q8_0")
    assert ("--flash-attn", "on") in q8.flags


# --- batch API -------------------------------------------------------------------------------

def test_answer_request_happy_path():
    out = answer_llamacpp_request({
        "engine": "llamacpp", "hf_config": QWEN_CODER_32B, "ctx_size": 16384, "cache_type_k": "q8_0",
        "cache_type_v": "q8_0", "gpu_memory_gib": 24, "weights_gib": 18.5,
    })
    assert out["kv_bytes"] == 2176 * MIB
    assert out["n_ctx"] == 16384 and out["kv_cells"] == 16384 and out["n_seq_max"] == 4
    assert out["fits"] is True
    assert out["remediation"]["engine"] == "llamacpp"


def test_answer_request_gguf_metadata_and_known_model():
    meta = {"general.architecture": "llama", "llama.block_count": 32, "llama.context_length": 131072,
            "llama.embedding_length": 4096, "llama.attention.head_count": 32, "llama.attention.head_count_kv": 8}
    out = answer_llamacpp_request({"engine": "llamacpp", "gguf_metadata": meta, "ctx_size": 8192, "parallel": 1})
    assert out["kv_bytes"] == 1024 * MIB
    out = answer_llamacpp_request({"model": "qwen", "ctx_size": 0, "parallel": 1}, hf_configs={"qwen": QWEN_CODER_32B})
    assert out["n_ctx"] == 32768


@pytest.mark.parametrize(
    "request_, fragment",
    [
        ({"hf_config": QWEN_CODER_32B, "cache_type_k": "fp8"}, "cache_type_k"),
        ({"hf_config": QWEN_CODER_32B, "parallel": 0}, "parallel"),
        ({"hf_config": QWEN_CODER_32B, "ctx_size": "big"}, "ctx_size"),
        ({"hf_config": QWEN_CODER_32B, "max_model_len": 4096}, "unknown key"),
        ({"ctx_size": 4096}, "hf_config"),
        ({"model": "nope"}, "unknown model"),
        ({"hf_config": {"model_type": "x"}}, "num_hidden_layers"),
        ({"hf_config": QWEN_CODER_32B, "flash_attn": "sometimes"}, "flash_attn"),
        ({"hf_config": QWEN_CODER_32B, "gpu": "rtx-9090"}, "unknown gpu"),
    ],
)
def test_answer_request_bad_input(request_, fragment):
    out = answer_llamacpp_request(request_)
    assert set(out) == {"error_input"} and fragment in out["error_input"]


def test_answer_request_never_raises():
    for bad in (None, [], "x", {"gguf_metadata": "nope"}, {"gguf_metadata": {"general.architecture": 3}}):
        out = answer_llamacpp_request(bad)
        assert "error_input" in out


def test_answer_request_reports_llamacpp_startup_errors():
    out = answer_llamacpp_request({"hf_config": QWEN_CODER_32B, "cache_type_v": "q8_0", "flash_attn": "off"})
    assert out == {"engine": "llamacpp", "startup_error": "llama_init_from_model: quantized V cache requires flash_attn to be enabled"}
