"""Look-alikes and steps drawn from the spent holdout16 split, each on the real texts of
tests/data/pasted_errors.yaml: runner crashes that are no memory failure, Ray's out-of-memory killer,
LM Studio's keep-tokens check, SGLang's prefill out of memory.
"""

from __future__ import annotations

from .test_corpus import triage_paste


def _best(paste_id: str, text: str | None = None) -> str | None:
    best = triage_paste(paste_id, text).best
    return best.id if best else None


def test_an_ollama_runner_killed_by_a_crash_signal_gets_no_memory_page() -> None:
    # ollama-0235: the runner's exit logged alone ("signal: illegal instruction"), then the bare wrapper.
    # ollama-0236: "terminated: signal: segmentation fault (core dumped)".
    for paste_id in ("ollama-0235", "ollama-0236"):
        result = triage_paste(paste_id)
        assert result.candidates == () and result.lookalike, paste_id
    # Windows spells the same crashes as NTSTATUS codes.
    for status in ("0xc0000005", "0xc000001d"):
        result = triage_paste("ollama-0236", f"Error: llama runner process has terminated: exit status {status}")
        assert result.candidates == () and result.lookalike, status
    # A segmentation fault beside CUDA running out of memory is no look-alike (ollama-0234).
    assert triage_paste("ollama-0234").lookalike is None
    # Killed by the kernel (the OOM killer's SIGKILL) is no crash of the runner's own.
    assert _best("ollama-0056") == "ollama-llama-server-terminated"


def test_lm_studios_keep_tokens_reply_with_its_counts_is_the_overflow_page() -> None:
    # llamacpp-0258: LM Studio 0.4's HTTP 400 reply, as Continue shows it.
    assert _best("llamacpp-0258") == "llamacpp-lmstudio-context-overflow"
    # The number-free wording reads the same whether the run stopped (llamacpp-0125) or LM Studio
    # logged it and generated anyway (llamacpp-0259): the text cannot tell, so both get the page.
    assert _best("llamacpp-0125") == _best("llamacpp-0259") == "llamacpp-lmstudio-context-overflow"


def test_rays_memory_monitor_killing_a_worker_is_host_memory() -> None:
    # vllm-0312: the Top 10 table and Ray's advice line; vllm-0317: the exception's message alone.
    assert _best("vllm-0312") == _best("vllm-0317") == "vllm-host-memory"
    # Ray wrapping a torch out-of-memory of its task is not its memory monitor (sglang-0053).
    assert _best("sglang-0053") != "vllm-host-memory"


def test_an_sglang_traceback_cut_in_the_scheduler_loop_names_no_step() -> None:
    # sglang-0150: cut at the event loop's frame, before get_next_batch_to_run or run_batch; the
    # failure could be taking KV slots for a prefill as well as the forward pass.
    result = triage_paste("sglang-0150")
    assert result.step is None and result.best is None
    # Cut inside the forward pass (run_batch, forward_batch_generation): running (sglang-0146).
    assert _best("sglang-0146") == "sglang-cuda-oom"
