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
