"""A pasted vLLM log's printed KV memory, recomputed by the engine into the reader's own figures."""

from __future__ import annotations

import json

from generator.cli import main
from generator.engine.from_log import GIB, PRINTED_HALF_STEP_GIB, ModelConfig, recompute_llamacpp, recompute_vllm
from generator.engine.llamacpp import CTX_PAD
from generator.engine.vllm import VllmInputs, plan_vllm
from generator.kv.hf_ids import hf_id_index, vllm_build
from generator.load import load_dataset
from generator.triage import triage

from .test_corpus import PASTES, ROOT

CONFIG = {  # Llama 3.1 8B's config.json, the keys the engine reads
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "vocab_size": 128256,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
MODEL = ModelConfig("meta-llama/Llama-3.1-8B-Instruct", "Llama 3.1 8B Instruct", CONFIG)
LOG = (
    "(APIServer pid=1) INFO 10-02 09:00:00 [utils.py:233] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 131072}\n"
    "(EngineCore_DP0 pid=2) INFO 10-02 09:00:30 [gpu_worker.py:298] Available KV cache memory: 5.59 GiB\n"
)


def _longest(available_gib: float, dtype: str = "auto") -> int:
    inputs = VllmInputs(hf_config=CONFIG, available_kv_cache_bytes=int(available_gib * GIB), kv_cache_dtype=dtype)
    return plan_vllm(inputs).estimated_max_model_len


def test_the_longest_length_is_the_engines_at_both_ends_of_the_printed_rounding() -> None:
    result = triage(LOG, [])
    assert result.numbers["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    figures = recompute_vllm(result.numbers, result.release, MODEL)
    assert figures is not None and figures.available_gib == 5.59
    assert (figures.longest.low, figures.longest.high) == (_longest(5.59 - PRINTED_HALF_STEP_GIB), _longest(5.59 + PRINTED_HALF_STEP_GIB))
    assert figures.longest.low < figures.longest.high < 131072
    assert figures.longest_fp8.low == _longest(5.59 - PRINTED_HALF_STEP_GIB, "fp8") > figures.longest.high
    assert figures.concurrency.high < 1  # a 131072-token request does not fit: the reason it failed
    assert f"--max-model-len {figures.longest.low}" in figures.command
    assert any("Available KV cache memory 5.59 GiB" in item for item in figures.from_log)
    assert any("config.json" in item for item in figures.modelled)


def test_the_estimate_vllm_printed_is_taken_as_exact() -> None:
    paste = next(p for p in PASTES if p["id"] == "vllm-0003")
    result = triage(paste["text"], [])
    figures = recompute_vllm(result.numbers, result.release, None)
    assert (figures.longest.low, figures.longest.high) == (122080, 122080)
    # Without it, the error's own needed/available figures bracket the same length.
    numbers = {key: value for key, value in result.numbers.items() if key != "derived_max_len"}
    bracket = recompute_vllm(numbers, result.release, None)
    assert bracket.longest.low <= 122080 <= bracket.longest.high


def test_a_model_is_matched_by_repo_or_by_the_folder_it_was_downloaded_to() -> None:
    models = load_dataset(ROOT).models
    index = hf_id_index(models)

    def build(named: str) -> ModelConfig | None:
        return vllm_build(models, index.resolve(named))

    assert build("meta-llama/llama-3.1-8b-instruct").repo == "meta-llama/Llama-3.1-8B-Instruct"
    assert build("/models/Llama-3.1-8B-Instruct/").hf_config["num_hidden_layers"] == CONFIG["num_hidden_layers"]
    assert build("Qwen/Qwen2.5-7B-Instruct-AWQ").hf_config["quantization_config"]["quant_method"] == "awq"
    assert build("someone/Qwen3-8B-W4A16") is None  # the architecture is known, the weights are not
    assert build("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf") is None  # a GGUF build does not run on vLLM


def test_kvtriage_triage_prints_the_recomputed_figures(tmp_path, capsys) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(LOG, encoding="utf-8")
    assert main(["triage", str(paste), "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "longest --max-model-len that starts" in out and "from your log:" in out and "modelled:" in out
    assert main(["triage", str(paste), "--root", str(ROOT), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recompute"]["longest"]["low"] > 0


# llama.cpp's own log lines (src/llama.cpp, llama-model.cpp, llama-kv-cache.cpp, llama-context.cpp).
LLAMA_LOG = (
    "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) (0000:01:00.0) - 23733 MiB free\n"
    "load_tensors:        CUDA0 model buffer size = 18500.00 MiB\n"
    "llama_kv_cache:      CUDA0 KV buffer size =  8192.00 MiB\n"
    "llama_kv_cache: size = 8192.00 MiB ( 65536 cells,  64 layers,  1/1 seqs), K (f16): 4096.00 MiB, V (f16): 4096.00 MiB\n"
    "llama_context:      CUDA0 compute buffer size =   916.00 MiB\n"
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n"
)


def test_llamacpp_buffers_give_the_context_that_fits() -> None:
    numbers = triage(LLAMA_LOG, []).numbers
    figures = recompute_llamacpp(numbers, CTX_PAD)
    assert figures.n_ctx == 65536 and figures.mib_per_1k == 128.0
    # (23733 - 18500 - 916) MiB of room at 128 KiB a token, down to a multiple of the context padding
    assert figures.fitting_ctx == (23733 - 18500 - 916) * 8 // CTX_PAD * CTX_PAD
    assert figures.command == f"-c {figures.fitting_ctx}"
    several = dict(numbers, second_device="CUDA1")
    assert recompute_llamacpp(several, CTX_PAD).fitting_ctx is None


def test_kvtriage_triage_prints_the_context_that_fits(tmp_path, capsys) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(LLAMA_LOG, encoding="utf-8")
    assert main(["triage", str(paste), "--root", str(ROOT)]) == 0
    assert "largest -c that fits the device's free memory: 34,304" in capsys.readouterr().out
