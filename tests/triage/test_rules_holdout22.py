"""Classes drawn from the spent holdout22 split, each on the real texts of tests/data/pasted_errors.yaml:
SGLang's decode abort after every other request was retracted, RADV's buffer allocation failure,
llama.cpp's bug-report titles and "OOM" as a verb, Ollama's runner-terminated message in a reader's
words, and a worker's traceback cut after the API server had answered a request.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_sglangs_abort_after_retracting_every_other_request_is_the_kv_pool_page() -> None:
    # sglang-0181: retract_decode's FINISH_ABORT message, quoted in part by a PR.
    assert triage_paste("sglang-0181").best.id == "sglang-kv-pool-full"
    text = ("[2026-03-04 10:11:12 TP0] Out of memory even after retracting all other requests in the decode batch. "
            "Aborting the last request.")
    result = triage_paste("sglang-0181", text)
    assert (result.engine, result.best.id) == ("sglang", "sglang-kv-pool-full")


def test_radvs_failed_buffer_allocation_is_the_vulkan_page() -> None:
    # llamacpp-0306: Mesa's RADV prints the failed allocation before returning VK_ERROR_OUT_OF_DEVICE_MEMORY.
    assert triage_paste("llamacpp-0306").best.id == "llamacpp-vulkan-oom"
    # Its other messages are not an allocation that failed.
    assert triage_paste("llamacpp-0306", "radv/amdgpu: Failed to reserve a PRT VA region (-12).").best is None


def test_llamacpps_bug_titles_mark_llamacpp_and_oom_as_a_verb_says_memory_ran_out() -> None:
    # llamacpp-0304: "Eval bug: MTP draft path OOMs reserving compute buffer on first decode (b9410+), ...":
    # llama.cpp's form, memory running out while decoding: a compute buffer while running.
    result = triage_paste("llamacpp-0304")
    assert (result.engine, result.release, result.best.id) == ("llamacpp", "b9410", "llamacpp-compute-buffer-failed")
    # "Misc. bug: " is llama.cpp's form as well; a title without an engine's form or name gets no page.
    assert triage_paste("llamacpp-0304", "Misc. bug: llama-server OOMed while decoding").engine == "llamacpp"
    assert triage_paste("llamacpp-0304", "MTP draft path OOMs reserving compute buffer on first decode").best is None
    # A title that says memory did not run out is no out-of-memory.
    assert triage_paste("llamacpp-0304", "Eval bug: decode crashes, but not OOM").best is None
    # "Eval bug:" inside a line is not the title's form.
    assert triage_paste("llamacpp-0304", "see Eval bug: in the tracker, OOMs on decode").engine is None


def test_ollamas_runner_terminated_in_a_readers_words_marks_ollama() -> None:
    # ollama-0292: "[ ROCm error: out of memory ] Runner Terminated: ...": ggml's ROCm error of unknown step.
    result = triage_paste("ollama-0292")
    assert (result.engine, result.best.id) == ("ollama", "ollama-cuda-oom")
    # Without the runner's words the ROCm line alone names no engine here.
    assert triage_paste("ollama-0292", "[ ROCm error: out of memory ] num_ctx reliably crashes").best is None


def test_a_worker_traceback_cut_after_an_answered_request_is_a_request() -> None:
    # vllm-0380: POST ... 200 OK, then "WorkerProc hit an exception" and a traceback cut at worker_busy_loop.
    result = triage_paste("vllm-0380")
    assert (result.step, result.best.id) == ("request", "vllm-request-cuda-oom")
    # A request refused (400) says nothing of the step the worker was in.
    text = BY_ID["vllm-0380"]["text"].replace('HTTP/1.1" 200 OK', 'HTTP/1.1" 400 Bad Request')
    assert triage_paste("vllm-0380", text).best is None
    # Frames that name a step still win over the access log before them.
    text = BY_ID["vllm-0380"]["text"] + (
        '\n(Worker_TP3 pid=1037) ERROR 08-11 04:29:42 [multiproc_executor.py:1020]   File "/x/vllm/v1/worker/'
        'gpu_model_runner.py", line 1, in capture_model')
    assert triage_paste("vllm-0380", text).step == "graph_capture"
