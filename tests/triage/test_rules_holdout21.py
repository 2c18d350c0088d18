"""Classes drawn from the spent holdout21 split, each on the real texts of tests/data/pasted_errors.yaml:
SGLang's capture failure whose cause is not memory.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_sglangs_capture_failure_without_a_memory_cause_gets_no_page() -> None:
    # sglang-0175: "Capture cuda graph failed: " with no message, then SGLang's list of remedies, which
    # it prints after any capture failure.
    result = triage_paste("sglang-0175")
    assert result.candidates == () and "Capture cuda graph failed" in result.lookalike
    # torch's out-of-memory as the cause keeps the page.
    text = BY_ID["sglang-0175"]["text"].replace(
        "Capture cuda graph failed: ", "Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB.")
    assert triage_paste("sglang-0175", text).best.id == "sglang-cuda-oom"
    # So does a memory line elsewhere in the paste.
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + BY_ID["sglang-0175"]["text"]
    assert triage_paste("sglang-0175", text).best.id == "sglang-cuda-oom"
