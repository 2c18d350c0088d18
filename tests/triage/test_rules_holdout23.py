"""Classes drawn from the spent holdout23 split, each on the real texts of tests/data/pasted_errors.yaml:
vLLM's engine and workers timing out on each other (the shared-memory queue's bare TimeoutError, the
executor's "RPC call to ... timed out"), and the executor's "Worker failed with error" naming an error
that is not memory, which a shell's "Killed" afterwards does not make a host-memory kill.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste

PREFIX = "(EngineCore pid=222) ERROR 08-15 11:20:19 [core.py:1361] "


def test_vllms_shared_memory_and_rpc_timeouts_are_lookalikes() -> None:
    # vllm-0402: shm_broadcast's acquire_read raised TimeoutError; the busy loop's frames report it.
    result = triage_paste("vllm-0402")
    assert (result.best, result.lookalike) == (None, "TimeoutError")
    # The executor's re-raise names the RPC that timed out (vllm-0399's title, here as its exception line).
    text = PREFIX + "TimeoutError: RPC call to sample_tokens timed out."
    assert triage_paste("vllm-0402", text).lookalike is not None
    # A timeout beside an out-of-memory line keeps the pages: memory did run out.
    text = BY_ID["vllm-0402"]["text"] + "\n" + PREFIX + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.10 GiB")
    assert triage_paste("vllm-0402", text).best is not None
    # "TimeoutError" inside a sentence, or another exception's name, is no timeout line.
    assert triage_paste("vllm-0402", "raised a TimeoutError while waiting").lookalike is None


def test_a_workers_error_that_is_not_memory_is_a_lookalike_before_killed() -> None:
    # vllm-0407: "Worker failed with error ... 'tuple' object has no attribute 'ndim'", then "Killed".
    result = triage_paste("vllm-0407")
    assert result.best is None and "Worker failed with error" in result.lookalike
    # The worker's error saying memory ran out is no look-alike: it is the step's out-of-memory.
    oom = ("RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
           "capacity of 23.64 GiB of which 512.00 MiB is free.', please check the stack trace above for the root cause")
    assert triage_paste("vllm-0407", oom).lookalike is None
    # The shell's "Killed" after vLLM's loading lines, with no worker error, is still host memory (vllm-0212).
    assert triage_paste("vllm-0212").best.id == "vllm-host-memory"


def test_sglangs_not_enough_memory_quoted_to_its_first_sentence_is_its_page() -> None:
    # sglang-0191: "RuntimeError: Not enough memory", SGLang's KV-pool refusal without its remedy sentence.
    assert triage_paste("sglang-0191").best.id == "sglang-not-enough-memory"
    assert triage_paste("sglang-0191", "[2026-05-20 10:00:00] RuntimeError: Not enough memory.").best.id == (
        "sglang-not-enough-memory")
    # Other tools' "Not enough memory to ..." sentences, or the words without the exception, name no page.
    assert triage_paste("sglang-0191", "RuntimeError: Not enough memory to convert image to array").best is None
    assert triage_paste("sglang-0191", "Not enough memory").best is None


def test_ggmls_cublas_allocation_failure_is_a_generic_out_of_memory() -> None:
    # ollama-0299: "CUDA error: the resource allocation failed" (CUDA 12's words for CUBLAS_STATUS_ALLOC_FAILED)
    # in a title naming an Ollama model tag: Ollama's page for an out-of-memory of unknown step.
    result = triage_paste("ollama-0299")
    assert (result.engine, result.best.id) == ("ollama", "ollama-cuda-oom")
    # The status's name, as builds before CUDA 12 print it, is the same failure; inside Ollama's runner
    # terminated message the runner's page keeps its place (ollama-0178).
    assert triage_paste("ollama-0299", "qwen3:8b - CUDA error: CUBLAS_STATUS_ALLOC_FAILED").best.id == "ollama-cuda-oom"
    assert triage_paste("ollama-0178").best.id == "ollama-llama-server-terminated"
    # In a llama.cpp log while a batch runs, the step decides: a compute buffer while running.
    text = ("slot update_slots: id  0 | task 0 | prompt processing progress, n_past = 512\n"
            "CUDA error: the resource allocation failed\n"
            "  current device: 0, in function cublas_handle at ggml/src/ggml-cuda/common.cuh:1500")
    assert triage_paste("ollama-0299", text).best.id == "llamacpp-compute-buffer-failed"
    # Another cuBLAS status is no allocation failure.
    assert triage_paste("ollama-0299", "qwen3:8b - CUDA error: CUBLAS_STATUS_EXECUTION_FAILED").best is None
