"""Classes drawn from the spent holdout20 split, each on the real texts of tests/data/pasted_errors.yaml and on
variants of them: Ollama's runner that exited with no error, Metal that did not start, a title calling the
failure a regression, "OOM during sampler warmup", llama.cpp's "CUDA error: out of memory" while running,
2023 Metal and main-example wordings, a title naming Metal and out of memory, `ollama ps` showing 100% CPU,
and an SGLang traceback cut in the model runner's constructor.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_a_runner_that_exited_with_no_error_names_no_page() -> None:
    # ollama-0271: Go's "%!w(<nil>)" for the nil error of a runner that exited with status 0.
    result = triage_paste("ollama-0271")
    assert result.best is None
    # The same wrapper with the runner's last error after it keeps its page.
    text = "Error: llama runner process has terminated: error:failed to allocate buffer, size = 16571.89 MiB"
    assert triage_paste("ollama-0271", text).best is not None
    # A memory line elsewhere in the paste still names its page.
    text = ("ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 17376872352\n"
            "Error: 500 Internal Server Error: llama runner process has terminated: %!w(<nil>)")
    assert triage_paste("ollama-0271", text).best.id == "ollama-llama-server-terminated"


def test_metal_that_did_not_start_is_a_lookalike() -> None:
    # ollama-0272: the Metal library failed to compile; "failed to allocate context" is the Metal context.
    result = triage_paste("ollama-0272")
    assert result.best is None and "Metal" in result.lookalike
    # llama.cpp's own form, the device named MTL0.
    text = ("ggml_metal_init: error: failed to initialize the Metal library\n"
            "llama_init_from_model: failed to initialize the context: failed to initialize MTL0 backend")
    assert triage_paste("ollama-0272", text).best is None
    # A Metal buffer refused for its size is memory: the Metal page.
    text = ("ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 16571.89 MiB\n"
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache")
    assert triage_paste("ollama-0272", text).best.id in ("llamacpp-metal-oom", "llamacpp-kv-cache-alloc-failed")


def test_a_title_calling_the_failure_a_regression_is_a_lookalike_unless_it_names_memory() -> None:
    # llamacpp-0283: the reader bisected a server regression; the quoted error is not their context.
    assert triage_paste("llamacpp-0283").best is None
    assert triage_paste("llamacpp-0283", '[Bug]: Regression: "context shift is disabled" with b7000').best is None
    # A regression that is memory running out, or a context too small, is not set aside.
    assert triage_paste("llamacpp-0283", "Regression: CUDA out of memory in llama-server since b6000").lookalike is None
    text = "Regression: the request exceeds the available context size with -np 4"
    assert triage_paste("llamacpp-0283", text).best.id == "llamacpp-context-exceeded"
    # The word inside a sentence is not a title's.
    assert triage_paste("llamacpp-0283", 'no regression here: "context shift is disabled"').best.id == "llamacpp-context-exceeded"


def test_oom_during_the_sampler_warmup_is_vllms_sampler_page() -> None:
    # vllm-0359: a title with no engine name; the sampler warm-up is vLLM's step.
    result = triage_paste("vllm-0359")
    assert (result.engine, result.step, result.best.id) == ("vllm", "sampler_warmup", "vllm-sampler-warmup-oom")
    result = triage_paste("vllm-0359", "OOM when warming up sampler with 256 dummy requests")
    assert result.best.id == "vllm-sampler-warmup-oom"
    # "OOM" beside another step is not made a GPU out-of-memory line.
    assert triage_paste("vllm-0359", "OOM during model download").best is None


def test_llamacpps_cuda_error_out_of_memory_is_the_running_step() -> None:
    # llamacpp-0287: ggml_cuda_error's line (a pool growing while a graph runs) in a llama-server title.
    result = triage_paste("llamacpp-0287")
    assert (result.step, result.best.id) == ("running", "llamacpp-compute-buffer-failed")
    # The ROCm build's name for the same line.
    text = "llama-server: ROCm error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:457"
    assert triage_paste("llamacpp-0287", text).best.id == "llamacpp-compute-buffer-failed"
    # A buffer refused at load keeps the loader's page: that is "cudaMalloc failed", not "CUDA error".
    text = ("load_tensors: offloaded 33/33 layers to GPU\n"
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9220.57 MiB on device 0: cudaMalloc failed: out of memory\n"
            "alloc_tensor_range: failed to allocate CUDA0 buffer of size 9668469760")
    assert triage_paste("llamacpp-0287", text).best.id == "llamacpp-model-load-failed"


def test_older_wordings_of_llamacpp_pages() -> None:
    # llamacpp-0280: 2023's ggml_metal_add_buffer, the buffer's name padded inside quotes.
    assert triage_paste("llamacpp-0280").best.id == "llamacpp-metal-oom"
    text = "ggml_metal_add_buffer: error: failed to allocate 'kv              ' buffer, size =  4096.00 MB"
    assert triage_paste("llamacpp-0280", text).best.id == "llamacpp-metal-oom"
    # llamacpp-0292: the main example's prompt check, cut before its parenthesis; and whole.
    assert triage_paste("llamacpp-0292").best.id == "llamacpp-context-exceeded"
    text = "main: prompt is too long (5000 tokens, max 4092)"
    assert triage_paste("llamacpp-0292", text).best.id == "llamacpp-context-exceeded"


def test_a_title_naming_metal_and_out_of_memory_is_the_metal_page() -> None:
    # llamacpp-0286, and the other order.
    assert triage_paste("llamacpp-0286").best.id == "llamacpp-metal-oom"
    assert triage_paste("llamacpp-0286", "Out of memory on Metal with a 70B model").best.id == "llamacpp-metal-oom"
    # Metal named beside another failure is not this page.
    assert triage_paste("llamacpp-0286", "Metal shader compilation failed on macOS 26").best is None


def test_ollama_ps_showing_100_percent_cpu_is_the_offload_page() -> None:
    # ollama-0248 (holdout17): the PROCESSOR column of `ollama ps`.
    assert triage_paste("ollama-0248").best.id == "ollama-partial-offload"
    text = "NAME              ID              SIZE      PROCESSOR    CONTEXT    UNTIL\nqwen3:8b    500a1f067a9f    6.0 GB    100% CPU     40960      4 minutes from now"
    assert triage_paste("ollama-0248", text).best.id == "ollama-partial-offload"
    # The words alone, as readers write about a process that spins, are not the table's.
    assert triage_paste("ollama-0248", "llama-server uses 100% CPU while idle").best is None
    # 100% GPU is no offload at all.
    text = "qwen3:4b    359d7dd4bcda    3.6 GB    100% GPU     4096       4 minutes from now"
    assert triage_paste("ollama-0248", text).best is None


def test_an_sglang_traceback_cut_in_the_model_runners_constructor_is_startup() -> None:
    # sglang-0172: Scheduler.__init__ -> TpModelWorker.__init__ -> ModelRunner.__init__ -> initialize, cut.
    result = triage_paste("sglang-0172")
    assert (result.engine, result.step, result.best.id) == ("sglang", "startup", "sglang-cuda-oom")
    # A later frame of the same traceback names its own step (the KV pool is sized in init_memory_pool).
    text = BY_ID["sglang-0172"]["text"] + (
        '\n  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 300, in initialize\n'
        "    self.init_memory_pool(\n")
    assert triage_paste("sglang-0172", text).step == "kv_pool"


def test_pastes_left_without_a_page_name_no_engine_or_step() -> None:
    # vllm-0361, vllm-0362, sglang-0170: torch's message alone. vllm-0368: the kernel killed LMCache's server,
    # which runs beside SGLang as well as vLLM. sglang-0166: a log cut before its error. sglang-0167: "KV-pool"
    # in a title with no engine. ollama-0264: "100% CPU" in a title, as often a GPU never detected (ollama-0265).
    for paste_id in ("vllm-0361", "vllm-0362", "sglang-0170", "vllm-0368", "sglang-0166", "sglang-0167", "ollama-0264"):
        best = triage_paste(paste_id).best
        assert best is None or best.id == BY_ID[paste_id]["page"], paste_id
