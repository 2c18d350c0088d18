"""Ollama: context precedence, slots, KV type and flash attention, prediction, offload and errors
(Ollama source at https://github.com/ollama/ollama/tree/v0.33.0-rc2)."""

from __future__ import annotations

import pytest

from generator.engine.geometry import geometry_from_hf_config
from generator.engine.llamacpp import kv_layout_from_geometry
from generator.engine.ollama import (
    OllamaEnv,
    answer_ollama_request,
    default_num_ctx,
    effective_num_parallel,
    error_texts,
    estimate_ollama,
    flash_attention_supported,
    llama_server_args,
    llama_server_flash_attn,
    next_automatic_num_ctx,
    parse_version,
    predict_server_vram,
    processor_text,
    resolve_num_ctx,
    vram_tier_num_ctx,
)
from generator.units import GIB, MIB

# Qwen2.5-Coder-32B-Instruct config.json (copy: https://huggingface.co/ai-team-20/qwen3-coder-480b-3/commit/6e6b0cb69a58fc511a4dbfe5ac908e26dbd27580).
QWEN_CODER_32B = {
    "model_type": "qwen2", "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
    "hidden_size": 5120, "intermediate_size": 27648, "vocab_size": 152064, "max_position_embeddings": 32768,
}
LAYOUT = kv_layout_from_geometry(geometry_from_hf_config(QWEN_CODER_32B))


def test_version_parsing():
    assert parse_version("0.33.0-rc2") == (0, 33, 0)
    assert parse_version("v0.6.7") == (0, 6, 7)
    assert parse_version("0.15") == (0, 15, 0)
    with pytest.raises(ValueError):
        parse_version("latest")


@pytest.mark.parametrize(
    "version, vram_gib, expected",
    [
        ("0.5.12", None, 2048),  # num_ctx default 2048 before v0.5.13
        ("0.5.13", None, 2048),  # OLLAMA_CONTEXT_LENGTH default 2048 in v0.5.13
        ("0.6.7", None, 4096),
        ("0.15.4", 80, 4096),
        ("0.15.5", 22.9, 4096),
        ("0.15.5", 23, 32768),
        ("0.33.0", 46.9, 32768),
        ("0.33.0", 47, 262144),
    ],
)
def test_default_context_by_version_and_vram(version, vram_gib, expected):
    vram = None if vram_gib is None else int(vram_gib * GIB)
    assert default_num_ctx(parse_version(version), vram) == expected


def test_vram_tier_needs_the_gpu_from_0_15_5():
    with pytest.raises(ValueError):
        default_num_ctx((0, 15, 5), None)
    assert vram_tier_num_ctx(24 * GIB) == 32768


def test_precedence_request_over_modelfile_over_env_over_default():
    env = OllamaEnv(context_length=16384)
    assert resolve_num_ctx(request_num_ctx=8192, modelfile_num_ctx=12288, env=env, total_vram_bytes=24 * GIB).source == "request"
    got = resolve_num_ctx(modelfile_num_ctx=12288, env=env, total_vram_bytes=24 * GIB)
    assert (got.value, got.source) == (12288, "modelfile")
    got = resolve_num_ctx(env=env, total_vram_bytes=24 * GIB)
    assert (got.value, got.source, got.automatic) == (16384, "OLLAMA_CONTEXT_LENGTH", False)
    got = resolve_num_ctx(total_vram_bytes=24 * GIB)
    assert (got.value, got.source, got.automatic) == (32768, "default", True)


def test_context_clamps():
    assert resolve_num_ctx(request_num_ctx=2, total_vram_bytes=24 * GIB).value == 4
    assert resolve_num_ctx(request_num_ctx=1024, vision=True, total_vram_bytes=24 * GIB).value == 2048
    capped = resolve_num_ctx(request_num_ctx=131072, n_ctx_train=32768, total_vram_bytes=24 * GIB)
    assert capped.value == 32768 and "too large for model" in capped.notes[0]
    # the VRAM tier default is capped to n_ctx_train too
    assert resolve_num_ctx(total_vram_bytes=80 * GIB, n_ctx_train=32768).value == 32768


def test_automatic_context_retry_steps():
    assert next_automatic_num_ctx(262144) == 32768
    assert next_automatic_num_ctx(32768) == 4096
    assert next_automatic_num_ctx(4096) is None


def test_env_parsing_and_validation():
    env = OllamaEnv.from_mapping({
        "OLLAMA_KV_CACHE_TYPE": "Q8_0", "OLLAMA_NUM_PARALLEL": "2", "OLLAMA_FLASH_ATTENTION": "true",
        "OLLAMA_CONTEXT_LENGTH": "16384", "OLLAMA_GPU_OVERHEAD": "536870912", "LLAMA_ARG_FIT_TARGET": "2048",
    })
    assert env == OllamaEnv(16384, 2, "q8_0", True, 536870912, True, 2048 * MIB)
    assert OllamaEnv.from_mapping({}) == OllamaEnv()
    for bad in ({"OLLAMA_NUM_PARALLEL": "two"}, {"OLLAMA_FLASH_ATTENTION": "yes"}, {"LLAMA_ARG_FIT": "maybe"}):
        with pytest.raises(ValueError):
            OllamaEnv.from_mapping(bad)


def test_num_parallel_multiplies_and_is_forced_to_one_for_some_models():
    assert effective_num_parallel(OllamaEnv(num_parallel=0)) == 1
    assert effective_num_parallel(OllamaEnv(num_parallel=4)) == 4
    assert effective_num_parallel(OllamaEnv(num_parallel=4), embedding=True) == 1
    assert effective_num_parallel(OllamaEnv(num_parallel=4), arch="qwen3next") == 1
    assert effective_num_parallel(OllamaEnv(num_parallel=4), arch="nemotron_h_moe") == 1
    one = estimate_ollama(LAYOUT, request_num_ctx=8192, env=OllamaEnv(num_parallel=1))
    four = estimate_ollama(LAYOUT, request_num_ctx=8192, env=OllamaEnv(num_parallel=4))
    assert four.kv_bytes == 4 * one.kv_bytes
    assert four.llama_server_args[:4] == ("-c", "32768", "-np", "4")


def test_spec_example_num_ctx_8192_two_slots_q8_0():
    env = OllamaEnv.from_mapping({"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_NUM_PARALLEL": "2"})
    result = estimate_ollama(LAYOUT, env=env, request_num_ctx=8192)
    assert result.kv_bytes == 2176 * MIB
    assert (
        "llama_kv_cache: size = 2176.00 MiB (  8192 cells,  64 layers,  2/2 seqs), K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB"
        in result.llama_server_log
    )
    assert result.llama_server_args == ("-c", "16384", "-np", "2", "--cache-type-k", "q8_0", "--cache-type-v", "q8_0", "--flash-attn", "auto")


def test_flash_attention_resolution():
    assert llama_server_flash_attn(OllamaEnv(), True) == "auto"
    assert llama_server_flash_attn(OllamaEnv(), False) == "off"
    assert llama_server_flash_attn(OllamaEnv(flash_attention=True), False) == "on"
    assert llama_server_flash_attn(OllamaEnv(flash_attention=False), True) == "off"
    assert flash_attention_supported("cuda", "6.0")
    assert not flash_attention_supported("cuda", "5.2")
    assert not flash_attention_supported("cuda", "7.2")  # Jetson Xavier
    assert not flash_attention_supported("cuda", "8.6", driver_major=6)
    assert flash_attention_supported("metal") and flash_attention_supported("rocm")


def test_quantized_kv_with_flash_attention_off_fails_in_llama_server():
    env = OllamaEnv.from_mapping({"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_FLASH_ATTENTION": "0"})
    result = estimate_ollama(LAYOUT, env=env, request_num_ctx=8192)
    assert result.error == "llama-server process has terminated: exit status 1: llama_init_from_model: quantized V cache requires flash_attn to be enabled"
    # an old GPU without flash attention support gets --flash-attn off, with the same failure
    old_gpu = estimate_ollama(LAYOUT, env=OllamaEnv(kv_cache_type="q8_0"), request_num_ctx=8192, compute_capability="5.2")
    assert old_gpu.flash_attn == "off" and "requires flash_attn" in old_gpu.error
    # unset on a supported GPU: auto, and llama.cpp turns FA on for the quantized V
    ok = estimate_ollama(LAYOUT, env=OllamaEnv(kv_cache_type="q8_0"), request_num_ctx=8192, compute_capability="8.6")
    assert ok.error is None and ok.flash_attn == "auto"


def test_bad_kv_type_is_rejected_by_llama_server():
    result = estimate_ollama(LAYOUT, env=OllamaEnv(kv_cache_type="fp8"), request_num_ctx=4096)
    assert result.error.endswith("Unsupported cache type: fp8")


def test_launch_args_and_num_gpu():
    assert llama_server_args(4096, 1, "", "auto", None) == ("-c", "4096", "-np", "1", "--flash-attn", "auto")
    assert llama_server_args(4096, 1, "", "auto", 0)[-2:] == ("-ngl", "0")
    assert "--kv-unified" not in llama_server_args(4096, 4, "q4_0", "on", 20)


def test_predict_server_vram_is_f16_and_ignores_kv_type():
    predicted = predict_server_vram(LAYOUT, 18 * GIB, 8192, 2)
    assert predicted == 18 * GIB + 2 * 64 * 8 * (5120 // 40) * 16384 * 2
    q8 = estimate_ollama(LAYOUT, env=OllamaEnv(kv_cache_type="q8_0", num_parallel=2), request_num_ctx=8192, weights_bytes=18 * GIB)
    assert q8.predicted_vram_bytes == predicted
    assert q8.kv_bytes < predicted - 18 * GIB
    # capped at n_ctx_train before multiplying by slots
    assert predict_server_vram(LAYOUT, 0, 65536, 1) == predict_server_vram(LAYOUT, 0, 32768, 1)


def test_eviction_precheck_uses_80_percent_of_free():
    result = estimate_ollama(LAYOUT, request_num_ctx=8192, weights_bytes=18 * GIB, gpu_free_bytes=24 * GIB)
    assert result.eviction_log == "llama-server model predicted to exceed available memory, evicting"
    small = estimate_ollama(LAYOUT, request_num_ctx=2048, weights_bytes=10 * GIB, gpu_free_bytes=24 * GIB)
    assert small.eviction_log == "llama-server model fits alongside existing models"


def test_too_big_with_fit_becomes_a_partial_offload_not_an_error():
    result = estimate_ollama(LAYOUT, weights_bytes=int(18.5 * GIB), gpu_total_bytes=24 * GIB)
    assert result.num_ctx == 32768 and result.num_ctx_automatic
    assert result.fits is False and result.error is None
    assert 0 < result.gpu_layers < 65
    assert result.processor.endswith("CPU/GPU")


def test_pinned_num_gpu_fails_and_automatic_context_retries_once():
    result = estimate_ollama(LAYOUT, weights_bytes=int(18.5 * GIB), gpu_total_bytes=24 * GIB, num_gpu=99)
    assert result.error == (
        "llama-server process has terminated: exit status 1: cudaMalloc failed: out of memory\n"
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache"
    )
    assert result.retry[0].startswith("llama-server load failed; reducing automatic context and retrying once")
    assert "new_num_ctx=4096" in result.retry[0]
    assert result.retry[1] == "retry at num_ctx 4096: loads"
    explicit = estimate_ollama(LAYOUT, request_num_ctx=32768, weights_bytes=int(18.5 * GIB), gpu_total_bytes=24 * GIB, num_gpu=99)
    assert explicit.error and explicit.retry == ()


def test_error_texts_by_version():
    assert "llama-server process has terminated" in error_texts((0, 33, 0))["load_oom"]
    assert error_texts((0, 20, 0))["layout_num_gpu"].format(num_gpu=99) == "memory layout cannot be allocated with num_gpu = 99"
    assert error_texts((0, 5, 7))["offload_log"] == "offload to cuda"
    assert "memory.required.kv" in error_texts((0, 12, 10))["offload_attributes"]


def test_processor_text():
    assert processor_text(100, 100) == "100% GPU"
    assert processor_text(100, 0) == "100% CPU"
    assert processor_text(100, 52) == "48%/52% CPU/GPU"


def test_answer_request():
    out = answer_ollama_request({
        "engine": "ollama", "hf_config": QWEN_CODER_32B, "num_ctx": 8192,
        "env": {"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_NUM_PARALLEL": "2"}, "gpu_memory_gib": 24, "weights_gib": 18.5,
    })
    assert out["kv_bytes"] == 2176 * MIB and out["num_parallel"] == 2 and out["fits"] is True
    assert answer_ollama_request({"hf_config": QWEN_CODER_32B})["error_input"].startswith("from Ollama 0.15.5")
    assert "error_input" in answer_ollama_request({"hf_config": QWEN_CODER_32B, "env": {"OLLAMA_NUM_PARALLEL": "x"}})
    assert "error_input" in answer_ollama_request({"hf_config": QWEN_CODER_32B, "num_ctx": -1})
    assert "error_input" in answer_ollama_request({"hf_config": QWEN_CODER_32B, "bogus": 1})
    for bad in (None, [], {"env": 3}):
        assert "error_input" in answer_ollama_request(bad)
