"""vLLM running out of memory while it allocates the KV cache, after the profile run and the check.

Real texts from tests/data/pasted_errors.yaml (vllm-0286, vllm-0197), and the same frames with the
process list torch prints changed, to show what the page turns on.
"""

from __future__ import annotations

from generator.triage import detect_engine, triage

from .test_corpus import BY_ID, _records

# torch's message lists each process on the device: "Process <pid> has ..." for every other one,
# "Including non-PyTorch memory, this process has ..." for the running one (CUDACachingAllocator.cpp).
OTHERS = "Process 1254 has 730.00 MiB memory in use. Process 2167142 has 14.90 GiB memory in use. "
SELF_ONLY = "Including non-PyTorch memory, this process has 14.90 GiB memory in use. "
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 418.00 MiB. GPU 0 has a total capacity of "
       "23.69 GiB of which 193.25 MiB is free. {procs}Of the allocated memory 14.61 GiB is allocated by PyTorch, "
       "and 73.53 MiB is reserved by PyTorch but unallocated.")
V0_FRAMES = "\n".join([
    'ERROR 05-21 13:04:20 engine.py:389]   File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 165, in initialize_cache',
    'ERROR 05-21 13:04:20 engine.py:389]   File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 311, in _init_cache_engine',
    'ERROR 05-21 13:04:20 engine.py:389]   File "/usr/local/lib/python3.10/dist-packages/vllm/worker/cache_engine.py", line 103, in _allocate_kv_cache',
])


def _triage(text: str):
    return triage(text, _records())


def test_other_processes_on_the_card_when_the_kv_cache_is_allocated_send_to_the_free_memory_page() -> None:
    result = _triage(BY_ID["vllm-0286"]["text"])
    assert (result.engine, result.step, result.best.id) == ("vllm", "kv_cache_alloc", "vllm-startup-free-memory")
    # This process listed after another one, as NVML may order them.
    mixed = V0_FRAMES + "\nERROR 05-21 13:04:20 engine.py:389] " + OOM.format(procs="Process 9 has 2.00 GiB memory in use. " + SELF_ONLY)
    assert _triage(mixed).best.id == "vllm-startup-free-memory"


def test_an_oom_allocating_the_kv_cache_with_no_other_process_listed_names_no_page() -> None:
    # The allocation comes after V0's initialize_cache ran the max-model-len check: not that check's page.
    for procs in (SELF_ONLY, "Process 2167142 has 14.90 GiB memory in use. ", ""):
        result = _triage(V0_FRAMES + "\nERROR 05-21 13:04:20 engine.py:389] " + OOM.format(procs=procs))
        assert (result.step, result.best) == ("kv_cache_alloc", None), procs
    with_others = _triage(V0_FRAMES + "\nERROR 05-21 13:04:20 engine.py:389] " + OOM.format(procs=OTHERS))
    assert with_others.best.id == "vllm-startup-free-memory"


def test_vllm_ascends_frames_name_vllm_and_its_kv_cache_allocation() -> None:
    # torch_npu's message lists no processes: the step has no page for it.
    text = BY_ID["vllm-0197"]["text"]
    assert detect_engine(text) == "vllm"
    result = _triage(text)
    assert (result.step, result.best) == ("kv_cache_alloc", None)
