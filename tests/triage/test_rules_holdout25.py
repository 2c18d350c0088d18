"""Classes drawn from the spent holdout25 split, each on the real texts of tests/data/pasted_errors.yaml:
libllama failing on a file's vocabulary or hyperparameters is a look-alike, whatever load failure follows;
SGLang's "Prefill/Decode out of memory" shortened to "OOM" in a title, with or without SGLang's "[Bug] ";
"oom" in lower case in a title.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste

LOAD_FAILED = "llama_model_load_from_file_impl: failed to load model\n"


def test_a_vocabulary_or_hyperparameter_error_is_a_look_alike() -> None:
    # llamacpp-0329: KoboldCpp 1.119 could not read the file's tokenizer scores; the failed load reports that.
    result = triage_paste("llamacpp-0329")
    assert result.best is None and "error loading model vocabulary" in result.lookalike
    # Ollama's 2025 logs print the same loader's words for an unknown pre-tokenizer.
    pre = "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'qwen2'\n"
    assert triage_paste("llamacpp-0329", pre + LOAD_FAILED).best is None
    hparams = "llama_model_load: error loading model: error loading model hyperparameters: key not found in model: x\n"
    assert triage_paste("llamacpp-0329", hparams + LOAD_FAILED).best is None
    # The architecture look-alike is unchanged (llamacpp-0127); a load that ran out of memory keeps its page.
    assert triage_paste("llamacpp-0127").best is None
    oom = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory\n"
    assert triage_paste("llamacpp-0329", pre + oom + LOAD_FAILED).best is not None


def test_sglangs_prefill_or_decode_oom_in_a_title_is_the_kv_pool_page() -> None:
    # sglang-0204 "[Bug] Prefill OOM!", sglang-0143 "Decode OOM due to wrong new page estimation" (holdout15).
    assert triage_paste("sglang-0204").best.id == "sglang-kv-pool-full"
    assert triage_paste("sglang-0143").best.id == "sglang-kv-pool-full"
    assert triage_paste("sglang-0204", "[Bug] Prefill out of memory with long prompts").best.id == "sglang-kv-pool-full"
    # SGLang's own message keeps its page (sglang-0030), and a CUDA OOM in a title stays SGLang's default page.
    assert triage_paste("sglang-0030").best.id == "sglang-kv-pool-full"
    assert triage_paste("sglang-0204", "[Bug] CUDA OOM at startup").best.id != "sglang-kv-pool-full"


def test_oom_in_lower_case_in_a_title_is_an_out_of_memory() -> None:
    # sglang-0207 "[Bug] hierarchical_cache oom": SGLang's form, memory ran out, step unknown.
    assert triage_paste("sglang-0207").best.id == "sglang-cuda-oom"
    # Not a title that says memory did not run out, and not a word that only contains the letters.
    assert triage_paste("sglang-0207", "[Bug] crash with hierarchical_cache, not oom").best is None
    assert triage_paste("sglang-0207", "[Bug] zoom into the room").best is None
    # The oom-kill and ray oom lines keep their host-memory pages (ollama-0087, vllm-0317).
    assert triage_paste("ollama-0087").best.id == BY_ID["ollama-0087"]["page"]
    assert triage_paste("vllm-0317").best.id == BY_ID["vllm-0317"]["page"]


def test_the_ascend_workers_execute_model_is_a_scheduled_batch() -> None:
    # vllm-0424: NPU out of memory under worker_busy_loop and vllm_ascend's NPUWorker.execute_model.
    result = triage_paste("vllm-0424")
    assert (result.step, result.best.id) == ("request", "vllm-request-cuda-oom")
    npu = "RuntimeError: NPU out of memory. Tried to allocate 11.50 GiB (NPU 0; 60.97 GiB total capacity)\n"
    frame = '  File "/usr/lib/python3.11/site-packages/vllm_ascend/worker/worker_v1.py", line 200, in {}\n    x = y()\n'
    # Its memory profiling at startup is no request.
    assert triage_paste("vllm-0424", npu + frame.format("determine_available_memory")).step != "request"
    assert triage_paste("vllm-0424", npu + frame.format("execute_model")).step == "request"


def test_metals_working_set_warning_is_the_metal_page() -> None:
    # llamacpp-0330: buffers allocated past the recommended working set, the log cut before any failure.
    assert triage_paste("llamacpp-0330").best.id == "llamacpp-metal-oom"
    warning = "ggml_backend_metal_log_allocated_size: warning: current allocated size is greater than the recommended max working set size\n"
    # The 2023 wording, on ggml_metal_add_buffer's line, is the same lead.
    old = "ggml_metal_add_buffer: allocated 'kv' buffer, size = 1602.00 MB, (38480.94 / 21845.34), " + warning.split(": ", 1)[1]
    assert triage_paste("llamacpp-0330", old).best.id == "llamacpp-metal-oom"
    # A failure of another kind after it is still a look-alike; the failures it leads to keep the page.
    arch = "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'x'\n"
    assert triage_paste("llamacpp-0330", warning + arch).best is None
    assert triage_paste("llamacpp-0057").best.id == "llamacpp-metal-oom"
    assert triage_paste("ollama-0240").best.id == "llamacpp-metal-oom"
