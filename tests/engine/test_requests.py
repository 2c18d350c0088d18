"""The batch API: one answer per request, in order; bad requests get error_input, never raise."""

from __future__ import annotations

import json

from generator.engine.requests import GpuEntry, ModelEntry, answer_request, answer_requests, parse_human_int
from generator.units import GIB

CONFIG = {
    "model_type": "qwen2", "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
    "hidden_size": 5120, "intermediate_size": 27648, "vocab_size": 152064, "max_position_embeddings": 32768,
    "torch_dtype": "float16", "rope_theta": 1000000.0,
}
MODELS = {"qwen2.5-coder-32b-awq": ModelEntry(hf_config=CONFIG, weights_bytes=18 * GIB)}
GPUS = {"rtx-4090": GpuEntry(total_bytes=25_386_352_640, name="GeForce RTX 4090"), "a100-80gb": {"total_bytes": 85_100_068_864, "name": "A100 80GB"}}

REQUIRED = {"fits", "num_blocks", "bytes_per_block", "kv_cache_tokens", "max_concurrency", "estimated_max_model_len",
            "error", "available_kv_cache_bytes", "breakdown"}


def test_vllm_answer_has_the_issue_fields_and_is_json():
    answer = answer_request({"engine": "vllm", "model": "qwen2.5-coder-32b-awq", "gpu": "rtx-4090"}, MODELS, GPUS)
    assert REQUIRED <= set(answer)
    assert set(answer["breakdown"]) == {"requested_bytes", "weights_bytes", "non_torch_bytes", "activation_peak_bytes", "cudagraph_bytes"}
    assert answer["breakdown"]["weights_bytes"] == 18 * GIB
    assert answer["fits"] is False and answer["error"].startswith("To serve at least one request")
    assert answer["remediation"] and answer["remediation"][0]["command"].startswith("vllm serve qwen2.5-coder-32b-awq")
    json.dumps(answer)


def test_kv_cache_memory_bytes_human_and_no_budget():
    answer = answer_request({"engine": "vllm", "hf_config": CONFIG, "kv_cache_memory_bytes": "8G", "max_model_len": "16K"})
    assert answer["available_kv_cache_bytes"] == 8 * GIB
    assert answer["max_model_len"] == 16384 and answer["breakdown"] is None and answer["fits"]


def test_available_override_reproduces_spec_7():
    answer = answer_request({"engine": "vllm", "hf_config": CONFIG, "available_kv_cache_bytes": 2 * GIB + 1})
    assert (answer["num_blocks"], answer["estimated_max_model_len"]) == (512, 8176)


def test_batch_keeps_order_and_answers_the_good_ones():
    answers = answer_requests([
        {"engine": "vllm", "hf_config": CONFIG, "kv_cache_memory_bytes": 4 * GIB, "id": "a"},
        {"engine": "vllm", "hf_config": CONFIG, "kv_cache_dtype": "fp9", "kv_cache_memory_bytes": 4 * GIB, "id": "b"},
        {"engine": "tensorrt", "id": "c"},
        "not an object",
        {"engine": "vllm", "model": "nope", "gpu": "rtx-4090"},
        {"engine": "vllm", "hf_config": CONFIG, "gpu": "a100-80gb", "max_model_len": 65536},
        {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": 24, "bogus": 1},
    ], MODELS, GPUS)
    assert [a.get("id") for a in answers[:3]] == ["a", "b", "c"]
    assert "error_input" not in answers[0]
    assert answers[1]["error_input"].startswith("Invalid kv_cache_dtype: 'fp9'. Valid values are: ['auto'")
    assert "unknown engine 'tensorrt'" in answers[2]["error_input"]
    assert answers[3] == {"error_input": "a request must be a JSON object"}
    assert answers[4]["error_input"] == "unknown model 'nope'"
    assert answers[5]["error_input"].startswith("User-specified max_model_len (65536) is greater than the derived max_model_len")
    assert "'bogus'" in answers[6]["error_input"]


def test_not_a_list():
    assert answer_requests({"engine": "vllm"}) == [{"error_input": "the input must be a JSON list of requests"}]


def test_bad_values_never_raise():
    for bad in ({"engine": "vllm"}, {"engine": "vllm", "hf_config": "x"}, {"engine": "vllm", "hf_config": {}, "gpu_memory_gib": 24},
                {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": -1}, {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": 24, "tensor_parallel_size": 3},
                {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": 24, "enforce_eager": "yes"},
                {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": 24, "gpu_memory_utilization": 1.5},
                {"engine": "vllm", "hf_config": CONFIG, "gpu_memory_gib": 24, "max_model_len": "1.5K"},
                {"engine": "vllm", "hf_config": CONFIG}):
        assert "error_input" in answer_request(bad, MODELS, GPUS), bad


def test_llamacpp_dispatch_reaches_its_engine():
    answer = answer_request({"engine": "llamacpp", "hf_config": CONFIG, "ctx_size": 4096})
    assert answer["engine"] == "llamacpp"
    assert "unknown engine" not in answer.get("error_input", "")


def test_human_ints_follow_vllm():
    assert parse_human_int("8k", "x") == 8000 and parse_human_int("8K", "x") == 8192
    assert parse_human_int("25.6k", "x") == 25600 and parse_human_int(32768, "x") == 32768


# --------------------------------------------------------------------------- SGLang

QWQ = {  # data/evidence/sglang_real_logs.yaml qwq-32b: the L4 TP4 log's pool
    "model_type": "qwen2", "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
    "hidden_size": 5120, "intermediate_size": 27648, "vocab_size": 152064, "torch_dtype": "bfloat16",
    "max_position_embeddings": 131072, "architectures": ["Qwen2ForCausalLM"],
}


def test_sglang_from_one_ranks_pool_reproduces_the_l4_log():
    answer = answer_request({"engine": "sglang", "hf_config": QWQ, "tensor_parallel_size": 4,
                             "kv_cache_memory_bytes": 46611 * 65536, "sglang_version": "0.4.3.post4"})
    assert answer["engine"] == "sglang" and answer["starts"] is True
    assert answer["kv_cache_tokens"] == 46611 and answer["kv_bytes_per_token"] == 65536
    assert answer["log_line"] == "KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB"
    assert answer["budget_estimated"] is False and answer["context_length"] == 131072
    assert answer["max_req_input_len"] == 46605 and answer["context_fits"] is False
    json.dumps(answer)


def test_sglang_log_line_names_the_pool_dtype_at_0_5_23():
    answer = answer_request({"engine": "sglang", "hf_config": QWQ, "tensor_parallel_size": 4, "kv_cache_dtype": "fp8_e4m3",
                             "kv_cache_memory_bytes": "4G"})
    assert answer["kv_bytes_per_token"] == 32768 and answer["kv_cache_tokens"] == 4 * GIB // 32768
    assert answer["log_line"].startswith(f"KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: {4 * GIB // 32768}, K size: ")


def test_sglang_from_a_gpu_is_an_estimate_with_sglangs_default_fraction():
    answer = answer_request({"engine": "sglang", "model": "qwen2.5-coder-32b-awq", "gpu": "a100-80gb"}, MODELS, GPUS)
    assert answer["starts"] and answer["budget_estimated"] is True
    assert answer["weights_bytes_per_rank"] == 18 * GIB
    assert 0.8 < answer["mem_fraction_static"] < 0.9
    assert answer["kv_cache_tokens"] == answer["kv_cache_memory_bytes"] // answer["kv_bytes_per_token"]
    assert answer["context_fits"] is True and answer["max_req_input_len"] == 32768 - 1 - 5


def test_sglang_weights_over_the_static_share_is_sglangs_error_not_a_bad_request():
    answer = answer_request({"engine": "sglang", "model": "qwen2.5-coder-32b-awq", "gpu": "rtx-4090", "mem_fraction_static": 0.5}, MODELS, GPUS)
    assert answer["starts"] is False and answer["kv_cache_tokens"] == 0
    assert answer["error"].startswith("Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.5.")


def test_sglang_bad_requests_get_error_input():
    for request in (
        {"engine": "sglang", "hf_config": QWQ},  # no budget at all
        {"engine": "sglang", "hf_config": QWQ, "kv_cache_memory_bytes": "1G", "kv_cache_dtype": "fp8"},  # vLLM's spelling
        {"engine": "sglang", "hf_config": QWQ, "kv_cache_memory_bytes": "1G", "block_size": 16},  # a vLLM-only key
        {"engine": "sglang", "hf_config": QWQ, "kv_cache_memory_bytes": -1},
        {"engine": "sglang", "hf_config": {"model_type": "x"}, "kv_cache_memory_bytes": "1G"},
    ):
        answer = answer_request(request)
        assert "error_input" in answer and answer["engine"] == "sglang", request


# --------------------------------------------------------------------------- bounds (issue 18)


def test_absurd_sizes_get_a_bounded_error_not_a_traceback_or_hours():
    # One request with 10**9 layers took 9.5 GB and a minute; every engine now refuses it up front.
    huge = dict(CONFIG, num_hidden_layers=10**9)
    for engine, extra in (("vllm", {"gpu_memory_gib": 24}), ("llamacpp", {"gpu_memory_gib": 24}), ("ollama", {"gpu_memory_gib": 24})):
        answer = answer_request({"engine": engine, "hf_config": huge, **extra})
        assert "num_hidden_layers" in answer["error_input"] and "at most 1,024" in answer["error_input"], (engine, answer)
    cases = {
        "heads": ({"hf_config": dict(CONFIG, num_attention_heads=10**12, num_key_value_heads=10**12), "gpu_memory_gib": 24}, "num_attention_heads"),
        "head_dim 0": ({"hf_config": dict(CONFIG, num_attention_heads=8192, num_key_value_heads=8), "gpu_memory_gib": 24}, "head_dim"),
        "rope text": ({"hf_config": dict(CONFIG, rope_scaling={"type": "linear", "factor": "abc"}), "gpu_memory_gib": 24}, "rope_scaling.factor must be a number"),
        "rope inf": ({"hf_config": dict(CONFIG, rope_scaling={"type": "linear", "factor": float("inf")}), "gpu_memory_gib": 24}, "finite"),
        "rope nan": ({"hf_config": dict(CONFIG, rope_scaling={"type": "linear", "factor": float("nan")}), "gpu_memory_gib": 24}, "finite"),
        "max len inf": ({"hf_config": dict(CONFIG, max_position_embeddings=float("inf")), "gpu_memory_gib": 24}, "max_position_embeddings"),
        "memory": ({"hf_config": CONFIG, "gpu_memory_gib": 1e300}, "gpu_memory_gib must be at most"),
        "bytes": ({"hf_config": CONFIG, "kv_cache_memory_bytes": 10**400}, "kv_cache_memory_bytes must be at most"),
        "digits": ({"hf_config": CONFIG, "gpu_memory_gib": 24, "max_model_len": "9" * 500}, "max_model_len"),
        "context": ({"hf_config": CONFIG, "gpu_memory_gib": 24, "max_model_len": 2**40}, "max_model_len must be at most"),
        "tp": ({"hf_config": CONFIG, "gpu_memory_gib": 24, "tensor_parallel_size": 10**12}, "tensor_parallel_size must be at most"),
    }
    for name, (request, wanted) in cases.items():
        answer = answer_request({"engine": "vllm", **request})
        assert wanted in answer.get("error_input", ""), (name, answer)
    for engine, key in (("llamacpp", "ctx_size"), ("ollama", "num_ctx")):
        answer = answer_request({"engine": engine, "hf_config": CONFIG, "gpu_memory_gib": 24, key: 10**12})
        assert f"`{key}` must be at most" in answer["error_input"], answer


def test_a_batch_has_a_bounded_number_of_requests():
    from generator.engine.requests import MAX_REQUESTS

    answers = answer_requests([{"engine": "vllm"}] * (MAX_REQUESTS + 1))
    assert len(answers) == 1 and "split the list" in answers[0]["error_input"]
    assert len(answer_requests([{"engine": "vllm"}] * MAX_REQUESTS)) == MAX_REQUESTS


def test_gguf_metadata_is_held_to_the_same_bounds():
    meta = {"general.architecture": "llama", "llama.block_count": 10**9, "llama.context_length": 8192, "llama.embedding_length": 4096,
            "llama.attention.head_count": 32, "llama.attention.head_count_kv": 8}
    for engine in ("llamacpp", "ollama"):
        answer = answer_request({"engine": engine, "gguf_metadata": meta, "gpu_memory_gib": 24})
        assert "`llama.block_count` must be at most 1,024" in answer["error_input"], answer
    answer = answer_request({"engine": "llamacpp", "gguf_metadata": dict(meta, **{"llama.block_count": 32, "llama.attention.head_count": 10**12}), "gpu_memory_gib": 24})
    assert "`llama.attention.head_count` must be at most" in answer["error_input"]
