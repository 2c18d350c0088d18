"""Classes drawn from the spent holdout17 split, each on the real texts of tests/data/pasted_errors.yaml:
a runner killed by a division by zero, Ollama's retried allocation, Aphrodite's profile run.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_a_runner_killed_by_a_division_by_zero_gets_no_memory_page() -> None:
    # ollama-0247: Windows' STATUS_INTEGER_DIVIDE_BY_ZERO after Ollama's llama-server wrapper.
    result = triage_paste("ollama-0247")
    assert result.candidates == () and result.lookalike
    # The same crash on Unix, as Go's exec names the signal.
    result = triage_paste("ollama-0247", "Error: llama runner process has terminated: signal: floating point exception")
    assert result.candidates == () and result.lookalike


def test_an_allocation_ollama_retried_with_fewer_gpu_layers_did_not_end_the_runner() -> None:
    # ollama-0248: cudaMalloc failed, then the runner logged the next "load" request (Operation:alloc,
    # GPULayers:2): Ollama's fit loop went on with fewer layers, so it is not the page of a runner
    # that terminated while loading; the `ollama ps` row after it ("100% CPU") names the outcome.
    assert triage_paste("ollama-0248").best.id == "ollama-partial-offload"
    # A back end's own words before the retry still name their page (ollama-0098: Vulkan's size limit).
    assert triage_paste("ollama-0098").best.id == "llamacpp-vulkan-oom"
    # Without the retry line the same lines are a load that failed.
    text = "\n".join(line for line in BY_ID["ollama-0248"]["text"].splitlines() if "Operation:alloc" not in line)
    assert triage_paste("ollama-0248", text).best.id == "ollama-llama-server-terminated"


def test_aphrodites_profile_run_is_vllms_profile_run() -> None:
    # vllm-0327: Aphrodite's V0 runner logged the weights' memory, then the profile run, then torch's OOM.
    result = triage_paste("vllm-0327")
    assert (result.engine, result.step, result.best.id) == ("vllm", "profile_run", "vllm-profile-run-oom")
    # The profile run's own line alone, before the out-of-memory line.
    text = "INFO:     Profiling peak memory usage...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1024.00 MiB."
    assert triage_paste("vllm-0327", text).best.id == "vllm-profile-run-oom"


def test_titles_in_sglangs_words_for_a_full_kv_pool_get_its_page() -> None:
    # sglang-0153: the head of SGLang's "Prefill out of memory. Try to lower your batch size." in a title.
    # sglang-0154: the retraction SGLang does when the pool fills, beside a failed allocation.
    assert triage_paste("sglang-0153").best.id == triage_paste("sglang-0154").best.id == "sglang-kv-pool-full"
    # The head must start the line, and a retraction alone is no failure.
    assert triage_paste("sglang-0153", "vLLM: decode out of memory with long prompts").best is None
    assert triage_paste("sglang-0154", "How does the scheduler retract requests?").best is None


def test_journald_lines_of_a_chinese_or_japanese_locale_lose_their_prefix() -> None:
    # ollama-0248 was printed by journalctl under a locale whose %b is "12月": the columns go, and the
    # slog line inside is read like any other.
    from generator.triage.core import normalise

    lines = normalise(BY_ID["ollama-0248"]["text"])
    assert lines[0] == "NvMapMemAllocInternalTagged: 1075072515 error 12"
    assert lines[6].startswith('load request="{Operation:alloc ')
