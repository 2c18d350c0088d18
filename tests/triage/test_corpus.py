"""Triage against tests/data/pasted_errors.yaml: the first page for every train paste, the numbers.

Pastes filed under a page that has no record in content/errors yet are skipped and counted; the
holdout splits are reported (printed), never asserted, and never used to tune the rules.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from generator.load import load_dataset
from generator.triage import records_from_errors, triage

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "pasted_errors.yaml"

with CORPUS.open(encoding="utf-8") as handle:
    PASTES = yaml.safe_load(handle)["pastes"]
TRAIN = [paste for paste in PASTES if paste["split"] == "train"]
WITH_NUMBERS = [paste for paste in PASTES if paste.get("numbers")]

# Train pastes the triage gets wrong on purpose rather than by a rule fitted to one paste.
KNOWN_MISSES = {
    "vllm-0077": "the paste stops before its error line; only 'Model loading took' is left, which says the profile run was next, not that it found no cache blocks",
    "vllm-0035": "a bare torch OOM with nothing about engine or step: vLLM and SGLang print it alike, so it names no engine and gets no page",
    "vllm-0074": "the paste ends at 'Processed prompts: 0%' before the OOM it is about; no error line is left",
    "llamacpp-0043": "the log stops at 'pipeline parallelism enabled' with no error line; nothing in it says that anything failed",
    "ollama-0039": "an Ollama thread, but the paste is llama.cpp's own lines with no Ollama marker; it lands on a llama.cpp page",
}


@lru_cache(maxsize=1)
def _errors():
    return load_dataset(ROOT).errors


@lru_cache(maxsize=1)
def _records():
    return records_from_errors(_errors().values())


def _first(paste: dict) -> str | None:
    best = triage(paste["text"], _records()).best
    return best.id if best else None


@pytest.mark.parametrize("paste", TRAIN, ids=[paste["id"] for paste in TRAIN])
def test_train_paste_lands_on_its_page_first(paste: dict) -> None:
    page = paste["page"]
    if page is not None and page not in _errors():
        pytest.skip(f"{page} has no record in content/errors yet")
    if paste["id"] in KNOWN_MISSES:
        pytest.xfail(KNOWN_MISSES[paste["id"]])
    assert _first(paste) == page, paste["why"]


def _same(expected, got) -> bool:
    if isinstance(expected, float) and isinstance(got, (int, float)):
        return abs(expected - got) < 1e-6
    return expected == got


@pytest.mark.parametrize("paste", WITH_NUMBERS, ids=[paste["id"] for paste in WITH_NUMBERS])
def test_numbers_are_extracted(paste: dict) -> None:
    numbers = triage(paste["text"], _records()).numbers
    wrong = {key: (value, numbers.get(key)) for key, value in paste["numbers"].items() if not _same(value, numbers.get(key))}
    assert not wrong, f"expected, got: {wrong}"


def _rates(pastes: list[dict]) -> dict[str, Counter]:
    """Per engine: pastes, skipped (page not written yet), right first, wrong page, no page."""
    by_engine: dict[str, Counter] = {}
    for paste in pastes:
        counts = by_engine.setdefault(paste["engine"], Counter())
        counts["pastes"] += 1
        page = paste["page"]
        if page is not None and page not in _errors():
            counts["skipped"] += 1
            continue
        first = _first(paste)
        counts["counted"] += 1
        counts["right" if first == page else "none" if first is None else "wrong"] += 1
    total = Counter()
    for counts in by_engine.values():
        total.update(counts)
    by_engine["all"] = total
    return by_engine


def _report(split: str, rates: dict[str, Counter]) -> str:
    rows = [f"{split}: engine  counted  right-first  wrong-page  no-page  skipped (page not written)"]
    for engine, c in sorted(rates.items()):
        n = c["counted"] or 1
        rows.append(f"  {engine:9} {c['counted']:7}  {c['right'] / n:10.1%}  {c['wrong'] / n:10.1%}  {c['none']:7}  {c['skipped']:7}")
    return "\n".join(rows)


def test_train_rates() -> None:
    """Right first for 95% of the train pastes, and a wrong page for at most 2% of those that are not
    a documented known miss (the raw rate is printed with the rest)."""
    rates = _rates(TRAIN)
    print("\n" + _report("train", rates))
    total = rates["all"]
    assert total["right"] / total["counted"] >= 0.95, _report("train", rates)
    known_wrong = sum(1 for paste in TRAIN if paste["id"] in KNOWN_MISSES and _first(paste) not in (paste["page"], None))
    assert (total["wrong"] - known_wrong) / total["counted"] <= 0.02, _report("train", rates)


# The first measurement of a split, taken before any rule was changed for it (the blind figure);
# the header of tests/data/pasted_errors.yaml holds the earlier splits' blind figures.
BLIND = {
    "holdout10": "70.3% right first, 13.5% wrong page, 6 with none (37 counted; 4 awaited two pages then in another branch)",
    "holdout11": "80.0% right first, 10.0% wrong page, 3 with none (30 counted)",
    "holdout12": "45.0% right first, 17.5% wrong page, 15 with none (40 counted)",
    "holdout13": "60.9% right first, 4.3% wrong page, 8 with none (23 counted)",
    "holdout14": "64.7% right first, 5.9% wrong page, 5 with none (17 counted)",
    "holdout15": "84.8% right first, 3.0% wrong page, 4 with none (33 counted)",
    "holdout16": "74.3% right first, 11.4% wrong page, 5 with none (35 counted)",
    "holdout17": "68.6% right first, 5.7% wrong page, 9 with none (35 counted)",
    "holdout18": "71.9% right first, 3.1% wrong page, 8 with none (32 counted)",
    "holdout19": "64.0% right first, 0.0% wrong page, 9 with none (25 counted)",
    "holdout20": "58.5% right first, 9.8% wrong page, 13 with none (41 counted)",
    "holdout21": "50.0% right first, 5.0% wrong page, 18 with none (40 counted)",
    "holdout22": "61.5% right first, 0.0% wrong page, 15 with none (39 counted)",
    "holdout23": "80.6% right first, 8.3% wrong page, 4 with none (36 counted)",
    "holdout24": "75.0% right first, 9.4% wrong page, 5 with none (32 counted)",
    "holdout25": "62.5% right first, 10.0% wrong page, 11 with none (40 counted)",
    "holdout26": "50.0% right first, 2.5% wrong page, 19 with none (40 counted)",
    "holdout27": "73.3% right first, 0.0% wrong page, 8 with none (30 counted)",
}


# Pastes of holdout10 to holdout12, holdout19 and holdout20 (and one of holdout5 in a class fixed for holdout12) that their
# blind figures counted as misses, each standing for a class the rules now handle by structure
# (frames, steps, an engine's own wording), not by the paste: after those figures were taken the
# splits became training evidence. Each must keep its page.
CLASS_CASES = {
    "vllm-0201": "V1's top-k/top-p sampler frames (FlashInfer) with no request frame: the sampler warm-up",
    "vllm-0202": "a title naming the sampler warm-up and a CUDA OOM",
    "vllm-0190": "V0 AsyncLLMEngine's run_engine_loop callback (_log_task_completion): a request, not graph capture",
    "vllm-0188": "an OOM at POST /wake_up: sleep mode",
    "vllm-0191": "a traceback cut at its first line after 'Available KV cache memory': the KV-cache check",
    "sglang-0063": "a traceback cut inside alloc_token_slots (speculative verify): the KV pool is full",
    "ollama-0129": "a compute buffer reserved at load after Ollama decoded an image ('vision: decode'): the runner's load",
    "llamacpp-0151": "LM Studio's 'when context overflows' wording",
    "llamacpp-0152": "LM Studio's 'when context overflows' wording",
    "llamacpp-0153": "Metal's alloc_buffer error without its size",
    "llamacpp-0157": "a 2^64-byte request: a wrapped size, a look-alike with no page",
    "vllm-0210": "a HIP OOM under torch's DeviceContext (__torch_function__): the model built inside `with target_device:`",
    "vllm-0212": "a vLLM log ending in the shell's 'Killed' (SIGKILL, the OOM killer): host memory",
    "vllm-0123": "a vLLM log ending in the shell's 'Killed' (SIGKILL, the OOM killer): host memory",
    "vllm-0215": "Ray's ray.exceptions.OutOfMemoryError (cut short): the node's host memory, not a request's GPU OOM",
    "llamacpp-0166": "the loader's 'unable to allocate Vulkan0 buffer': the Vulkan page",
    "llamacpp-0168": "the loader's 'unable to allocate Vulkan0 buffer': the Vulkan page",
    "llamacpp-0169": "KoboldCpp's CUDA pool growth (cuMemSetAccess in ggml's source tree) during prompt processing",
    "ollama-0149": "a runner terminated with 'error:fault' (Go's fatal error: fault): a crash, no page",
    "llamacpp-0194": "llama-server's 'context shift is disabled' (a slot reached its n_ctx): the context is exceeded",
    # holdout19, after its blind figure: 80.0% right first, 0.0% wrong page, 5 with none (25 counted).
    "vllm-0354": "a traceback cut inside mllama's self.vision_model(...): the profile run's dummy images",
    "vllm-0356": "a traceback cut at the vision model's self.patch_embedding(...): the profile run",
    "ollama-0261": "Ollama's 'model request too large for system' warning: the system-memory check",
    "ollama-0262": "a title shortening that warning to 'model request too large'",
    # holdout20, after its blind figure: 80.5% right first, 2.4% wrong page, 7 with none (41 counted).
    "ollama-0271": "a runner terminated with '%!w(<nil>)' (it exited with no error): no page",
    "ollama-0272": "Metal that did not start (its library, 'failed to allocate context' of Metal): a look-alike",
    "llamacpp-0283": "a title calling the failure a regression, with no memory named: a look-alike",
    "vllm-0359": "'OOM during sampler warmup': vLLM's sampler warm-up, named by its step",
    "llamacpp-0287": "llama.cpp's 'CUDA error: out of memory' (ggml_cuda_error, a pool while running): the running step",
    "llamacpp-0280": "2023's ggml_metal_add_buffer \"failed to allocate '<name>' buffer\": the Metal page",
    "llamacpp-0286": "a title naming Metal and out of memory: the Metal page",
    "llamacpp-0292": "the main example's 'prompt is too long (N tokens, max M)': the context is exceeded",
    "sglang-0172": "a traceback cut in ModelRunner.__init__ (SGLang's startup): the CUDA OOM page",
    "ollama-0248": "`ollama ps` showing '100% CPU' for the model (holdout17): the offload page",
    # holdout21, after its blind figure: 72.5% right first, 2.5% wrong page, 10 with none (40 counted).
    "sglang-0175": "SGLang's capture failure with no memory cause, only its list of remedies: a look-alike",
    "vllm-0369": "vLLM V1's input check of early 2025, 'Prompt length of N is longer than the maximum model length'",
    "vllm-0371": "vLLM's decoder-prompt check cut after 'is longer than' in a title",
    "vllm-0377": "vLLM's free-memory check wrapped at a space ('lessthan' once joined)",
    "ollama-0281": "a title naming ollama in lower case with a CUDA out-of-memory: Ollama's default page",
    "ollama-0274": "the kernel's OOM killer ending Ollama ('OOM: Killed process' in a title naming it): system memory",
    "sglang-0173": "a title opening with SGLang's '[Bug] ' form and a CUDA OOM: SGLang's default page",
    "sglang-0051": "a title opening with SGLang's '[Bug] ' form and torch's out-of-memory",
    "sglang-0178": "a title in SGLang's form saying 'OOM' in the reader's words: a generic out-of-memory of SGLang",
    "sglang-0179": "a title naming 'Sglang' and 'out of memory' in the reader's words",
    # holdout22, after its blind figure: 82.1% right first, 0.0% wrong page, 7 with none (39 counted).
    "sglang-0181": "SGLang's retract_decode abort, 'Out of memory even after retracting all other requests'",
    "llamacpp-0306": "Mesa RADV's 'radv/amdgpu: Failed to allocate a buffer:' (VK_ERROR_OUT_OF_DEVICE_MEMORY)",
    "llamacpp-0304": "a title in llama.cpp's 'Eval bug: ' form that 'OOMs' on decode: a compute buffer while running",
    "ollama-0292": "a title quoting ggml's ROCm out-of-memory and Ollama's runner terminated in the reader's words",
    "vllm-0380": "a worker's traceback cut after the API server answered a request (200): the request page",
    # holdout23, after its blind figure: 91.7% right first, 2.8% wrong page, 2 with none (36 counted).
    "vllm-0402": "vLLM's shared-memory queue timing out (a bare TimeoutError) under a fatal busy loop: a look-alike",
    "vllm-0407": "'Worker failed with error' naming a code error, then the shell's 'Killed': a look-alike, not host memory",
    "sglang-0191": "SGLang's 'RuntimeError: Not enough memory' quoted without its remedy sentence: the KV-pool page",
    "ollama-0299": "ggml's cuBLAS allocation failure ('CUDA error: the resource allocation failed'): a generic OOM",
    # holdout24, after its blind figure: 90.6% right first, 3.1% wrong page, 2 with none (32 counted).
    "sglang-0201": "a traceback cut in an SGLang model's forward (not its __init__): no step, no page",
    "sglang-0196": "a title naming 'mem-fraction' (SGLang's option shortened) and OOMs: SGLang's default page",
    "vllm-0409": "vLLM's max_model_len error shortened to 'greater than max_position=N' in a title",
    "llamacpp-0319": "libllama's 'failed to allocate compute pp buffers' quoted alone: the context page",
    "ollama-0311": "cudaMalloc and ROCm0 buffer failures, then Ollama's 'applying backoff': a partial offload",
    "llamacpp-0249": "llama-cpp-python's multimodal chat handler, 'Prompt exceeds n_ctx' (holdout15): the context page",
    # holdout25, after its blind figure: 80.0% right first, 0.0% wrong page, 8 with none (40 counted).
    "llamacpp-0329": "libllama's 'error loading model vocabulary' before a failed load: a look-alike",
    "sglang-0204": "'[Bug] Prefill OOM!', SGLang's 'Prefill out of memory' shortened in a title: the KV-pool page",
    "sglang-0143": "'Decode OOM due to ...' (holdout15), SGLang's 'Decode out of memory' shortened: the KV-pool page",
    "sglang-0207": "'[Bug] hierarchical_cache oom', OOM in lower case in a title: SGLang's default page",
    "vllm-0424": "NPU OOM under vllm_ascend's NPUWorker.execute_model: a scheduled batch, the request page",
    "llamacpp-0330": "Metal's 'greater than the recommended max working set size' warnings, cut before a failure",
    # holdout26, after its blind figure: 50.0% right first, 2.5% wrong page, 19 with none (40 counted).
    "llamacpp-0344": "node-llama-cpp's 'A context size of N ... is too large for the available VRAM': the context page",
    "llamacpp-0338": "llama.cpp's timestamped log line ('0.02.396.005 E CUDA error: out of memory') inside a front end's",
    "ollama-0330": "Ollama's runner ending on a bare 'signal: aborted (core dumped)': no cause, no page",
    "vllm-0433": "a title naming lm-eval's loglikelihood requests and a CUDA OOM: the request page",
}
BY_ID = {paste["id"]: paste for paste in PASTES}


def triage_paste(paste_id: str, text: str | None = None):
    """The triage of a corpus paste, or of `text` (a variant of it) when given."""
    return triage(BY_ID[paste_id]["text"] if text is None else text, _records())


@pytest.mark.parametrize("paste_id", sorted(CLASS_CASES))
def test_a_fixed_miss_class_keeps_its_page(paste_id: str) -> None:
    paste = BY_ID[paste_id]
    assert _first(paste) == paste["page"], CLASS_CASES[paste_id]


@pytest.mark.parametrize("split", ["holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7", "holdout8", "holdout9", "holdout10", "holdout11", "holdout12", "holdout13", "holdout14", "holdout15", "holdout16", "holdout17", "holdout18", "holdout19", "holdout20", "holdout21", "holdout22", "holdout23", "holdout24", "holdout25", "holdout26", "holdout27"])
def test_holdout_rates_are_reported(split: str) -> None:
    rates = _rates([paste for paste in PASTES if paste["split"] == split])
    blind = f"\n  blind: {BLIND[split]}" if split in BLIND else ""
    print("\n" + _report(split, rates) + blind)
