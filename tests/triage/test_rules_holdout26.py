"""Classes drawn from the spent holdout26 split, each on the real texts of tests/data/pasted_errors.yaml:
node-llama-cpp refusing a context its estimate says will not fit ("A context size of N is too large for the
available VRAM") is the context page; llama.cpp's timestamped log line ("0.02.396.005 E ") quoted inside a front
end's line names llama.cpp; Ollama's runner ending on a bare abort ("signal: aborted (core dumped)") names no cause;
lm-eval's request types (loglikelihood, generate_until) beside a generic out-of-memory are the request step.
"""

from __future__ import annotations

from .test_corpus import triage_paste


def test_node_llama_cpps_context_size_refusal_is_the_context_page() -> None:
    # llamacpp-0344: the binding's InsufficientMemoryError quoted in an issue title, with sequences.
    assert triage_paste("llamacpp-0344").best.id == "llamacpp-context-create-failed"
    # Its other forms: one sequence, and the RAM, "VRAM and RAM" and "resources" refusals.
    for text in (
        "InsufficientMemoryError: A context size of 2048 is too large for the available VRAM",
        "A context size of 8192 is too large for the available RAM (including swap)",
        "A context size of 512 with 2 sequences is too large for the available VRAM and RAM",
        "A context size of 1024 is too large for the available resources",
    ):
        assert triage_paste("llamacpp-0344", text).best.id == "llamacpp-context-create-failed", text
    # Not other software saying a model is too large for the VRAM, with no context size.
    assert triage_paste("llamacpp-0344", "The model is too large for the available VRAM").best is None


def test_llama_cpps_timestamped_log_line_names_llama_cpp_anywhere_in_a_line() -> None:
    # llamacpp-0338: Jan quotes llama-server's "0.02.396.005 E CUDA error: out of memory" after its own words;
    # ggml's CUDA pool failing while a graph runs is the compute-buffer page.
    result = triage_paste("llamacpp-0338")
    assert result.engine == "llamacpp" and result.best.id == "llamacpp-compute-buffer-failed"
    # Without the timestamp nothing names the engine, and a bare "CUDA error: out of memory" has no page.
    assert triage_paste("llamacpp-0338", "bug: GGML backend encountered an error CUDA error: out of memory").best is None
    # A version number or a dotted date is no timestamp of llama.cpp's.
    assert triage_paste("llamacpp-0338", "v1.02.396.005 E CUDA error: out of memory").engine is None
    # Inside an Ollama log, Ollama's own marker still wins.
    ollama = "ollama[12]: 0.02.396.005 E CUDA error: out of memory\n"
    assert triage_paste("llamacpp-0338", ollama).engine == "ollama"


def test_a_bare_abort_of_ollamas_runner_names_no_cause() -> None:
    # ollama-0330: an unsupported projector's assert aborted the runner; the status alone says nothing of memory.
    assert triage_paste("ollama-0330").best is None
    assert triage_paste("ollama-0330", "Error: llama runner process has terminated: signal: abort trap").best is None
    # A status followed by the runner's captured error keeps its page (ollama-0059, ollama-0237), and so does a
    # runner the kernel killed (ollama-0329).
    for paste_id in ("ollama-0059", "ollama-0237", "ollama-0329"):
        assert triage_paste(paste_id).best.id == "ollama-llama-server-terminated", paste_id
    # A memory line elsewhere in the paste still names the page.
    oom = "CUDA error: out of memory\nError: llama runner process has terminated: signal: aborted (core dumped)\n"
    assert triage_paste("ollama-0330", oom).best is not None


def test_lm_evals_request_types_are_the_request_step() -> None:
    # vllm-0433: a title naming lm-eval's loglikelihood requests and a CUDA OOM.
    result = triage_paste("vllm-0433")
    assert result.step == "request" and result.best.id == "vllm-request-cuda-oom"
    # lm-eval's progress line before a torch out-of-memory.
    log = ("Running generate_until requests:  12%|#         | 120/1000\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB"
           " of which 1.02 GiB is free.\nvllm\n")
    assert triage_paste("vllm-0433", log).best.id == "vllm-request-cuda-oom"
    # With no out-of-memory line, the request type alone names no page.
    assert triage_paste("vllm-0433", "vLLM gives wrong results for `loglikelihood`").best is None
    # A later step's frames still win: sleep mode's wake-up follows serving.
    assert triage_paste("vllm-0433", "vLLM CUDA OOM in wake_up after loglikelihood").step == "sleep_wake"
