"""Classes drawn from the spent holdout18 split, each on the real texts of tests/data/pasted_errors.yaml:
a runner ended by an uncaught C++ exception, Triton's out-of-memory, ggml's buffer of any back end,
llama.cpp's weight-placement line, a wrapped vLLM free-memory check, a title naming vLLM's capture_model,
llama-cpp-python's request check without its numbers.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_a_runner_ended_by_an_uncaught_cpp_exception_gets_no_memory_page() -> None:
    # ollama-0255: Windows' code of a Visual C++ throw after Ollama's llama-server wrapper.
    result = triage_paste("ollama-0255")
    assert result.candidates == () and result.lookalike
    # With a memory line in the paste the page stays.
    text = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory\n"
            + BY_ID["ollama-0255"]["text"])
    assert triage_paste("ollama-0255", text).best is not None
    # Another exit status is not this crash.
    assert triage_paste("ollama-0255", "Error: llama-server process has terminated: exit status 0xe06d7364").best is not None


def test_tritons_out_of_memory_is_routed_by_its_step() -> None:
    # vllm-0338: a Triton kernel ran out inside the worker's execute_model, called for a scheduled step.
    result = triage_paste("vllm-0338")
    assert (result.engine, result.step, result.best.id) == ("vllm", "request", "vllm-request-cuda-oom")
    # The same error under graph capture's frames is capture's.
    text = ('File "/usr/lib/python3/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 3000, in capture_model\n'
            "RuntimeError: Triton Error [CUDA]: out of memory")
    assert triage_paste("vllm-0338", text).best.id == "vllm-cudagraph-capture-oom"
    # Another CUDA error from Triton's launcher is not memory.
    text = BY_ID["vllm-0338"]["text"].replace("out of memory", "invalid argument")
    assert triage_paste("vllm-0338", text).best is None


def test_a_cpu_buffer_ggml_could_not_reserve_is_routed_by_its_step() -> None:
    # llamacpp-0271: ggml_gallocr_reserve_n, the compute buffer reserved when the context is created.
    result = triage_paste("llamacpp-0271")
    assert (result.engine, result.step, result.best.id) == ("llamacpp", "context", "llamacpp-context-create-failed")
    # The same allocator while the weights load is the model's load (alloc_tensor_range).
    text = "llm_load_tensors: ggml ctx size = 0.27 MiB\nalloc_tensor_range: failed to allocate CPU buffer of size 43794432000"
    assert triage_paste("llamacpp-0271", text).best.id == "llamacpp-model-load-failed"
    # A size no machine has stays a look-alike.
    text = "ggml_gallocr_reserve_n: failed to allocate CPU buffer of size 18446744073709549568"
    assert triage_paste("llamacpp-0271", text).best is None


def test_llamacpps_weight_placement_line_marks_the_models_load() -> None:
    # llamacpp-0270: done_getting_tensors ran, then the weights' CUDA buffer could not be allocated.
    result = triage_paste("llamacpp-0270")
    assert (result.engine, result.step, result.best.id) == ("llamacpp", "weights", "llamacpp-model-load-failed")
    # A later step's line after it wins, as the furthest step does.
    text = BY_ID["llamacpp-0270"]["text"] + "\nllama_kv_cache_init: failed to allocate buffer for kv cache"
    assert triage_paste("llamacpp-0270", text).best.id == "llamacpp-kv-cache-alloc-failed"


def test_llama_cpp_pythons_request_check_without_its_numbers_is_its_page() -> None:
    # llamacpp-0275: an issue title quoting llama-cpp-python's check with no token counts.
    assert triage_paste("llamacpp-0275").best.id == "llamacpp-context-exceeded"
    # The check's full wording still gives its page; other words about a context window do not.
    text = "ValueError: Requested tokens (4120) exceed context window of 3904"
    assert triage_paste("llamacpp-0275", text).best.id == "llamacpp-context-exceeded"
    assert triage_paste("llamacpp-0275", "How many requested tokens fit the context window?").best is None


def test_vllms_free_memory_check_wrapped_at_its_is_keeps_its_page() -> None:
    # vllm-0340: the line was wrapped after "on startup is"; joined, the space at the break is gone.
    assert triage_paste("vllm-0340").best.id == "vllm-startup-free-memory"
    # On one line, as vLLM prints it.
    text = " ".join(BY_ID["vllm-0340"]["text"].split("\n"))
    assert triage_paste("vllm-0340", text).best.id == "vllm-startup-free-memory"
    # The free memory alone, with no check refused, is no failure.
    assert triage_paste("vllm-0340", "Free memory on device cuda:0 (30.12/31.84 GiB) on startup").best is None


def test_a_title_naming_oom_in_vllms_capture_model_is_graph_capture() -> None:
    # vllm-0339: the title names vLLM's capture_model() and the OOM during it.
    result = triage_paste("vllm-0339")
    assert (result.engine, result.step, result.best.id) == ("vllm", "graph_capture", "vllm-cudagraph-capture-oom")
    # Without the out-of-memory the function's name is no failure.
    assert triage_paste("vllm-0339", "How long does `capture_model()` take on an H100?").best is None
    # An OOM during another engine's capture is not vLLM's.
    assert triage_paste("vllm-0339", "OOM during CUDA Graph capture").best is None
