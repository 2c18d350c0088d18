"""Classes drawn from the spent holdout21 split, each on the real texts of tests/data/pasted_errors.yaml:
SGLang's capture failure whose cause is not memory, vLLM's early V1 input check and a cut one,
a free-memory check wrapped at any space,
Ollama's name in a title, the kernel's OOM killer ending Ollama, SGLang's bug-report title,
a title naming an engine and an OOM in the reader's words.
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


def test_vllms_early_v1_input_check_and_a_cut_decoder_prompt_check_are_the_request_page() -> None:
    # vllm-0369: V1's check from January to April 2025, "Prompt length of N is longer than ...".
    assert triage_paste("vllm-0369").best.id == "vllm-request-too-long"
    # vllm-0371: the later wording cut after "is longer than" in an issue title.
    assert triage_paste("vllm-0371").best.id == "vllm-request-too-long"
    # A prompt length in other words names no page.
    assert triage_paste("vllm-0369", "Prompt length is longer than expected").best is None


def test_vllms_free_memory_check_wrapped_at_any_space_is_its_page() -> None:
    # vllm-0377: the check wrapped between "less" and "than"; joined, the space is gone.
    assert triage_paste("vllm-0377").best.id == "vllm-startup-free-memory"
    text = ("ValueError: Free memory on device cuda:0 (1.33/23.98 GiB) on startup is less than\n"
            "desired GPU memory utilization (0.95, 22.79 GiB).")
    assert triage_paste("vllm-0377", text).best.id == "vllm-startup-free-memory"
    # vLLM's INFO line with the same numbers is no failure.
    text = "INFO 07-14 09:50:23 [gpu_worker.py:855] Free memory on device (77.57/79.11 GiB) on startup. Desired GPU memory utilization is (0.9, 71.2 GiB)."
    assert triage_paste("vllm-0377", text).best is None


def test_a_title_naming_ollama_is_ollamas() -> None:
    # ollama-0281: "ollama crashed at 0.1.31 - CUDA out of memory": a runner out of GPU memory, step unknown.
    result = triage_paste("ollama-0281")
    assert (result.engine, result.best.id) == ("ollama", "ollama-cuda-oom")
    # A host named ollama in journald's column is any program's line, not Ollama's.
    text = "Dec 03 17:30:50 ollama llama-swap[3704265]: ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory"
    assert triage_paste("ollama-0281", text).engine == "llamacpp"


def test_the_kernels_oom_killer_ending_ollama_is_the_system_memory_page() -> None:
    # ollama-0274: a title naming Ollama and quoting the kernel's line as "OOM: Killed process".
    assert triage_paste("ollama-0274").best.id == "ollama-system-memory"
    # The kernel's line itself names the process it killed.
    text = "[ 8812.123456] Out of memory: Killed process 4242 (ollama) total-vm:81234567kB, anon-rss:60123456kB"
    assert triage_paste("ollama-0274", text).best.id == "ollama-system-memory"
    # Another process killed is not Ollama's.
    text = "[ 8812.123456] Out of memory: Killed process 4242 (python3) total-vm:81234567kB, anon-rss:60123456kB"
    assert triage_paste("ollama-0274", text).best is None


def test_sglangs_bug_title_marks_sglang() -> None:
    # sglang-0173: "[Bug] CUDA OOM when DP attention enabled ...": SGLang's form, a CUDA OOM of unknown step.
    result = triage_paste("sglang-0173")
    assert (result.engine, result.best.id) == ("sglang", "sglang-cuda-oom")
    # vLLM's form has a colon, and marks vLLM's title; a vLLM line outweighs the title's prefix.
    assert triage_paste("sglang-0173", "[Bug]: CUDA OOM when loading").engine == "vllm"
    text = "[Bug] CUDA OOM\n(EngineCore_DP0 pid=1) ERROR 05-12 10:11:12 [core.py:718] EngineCore failed to start."
    assert triage_paste("sglang-0173", text).engine == "vllm"


def test_a_title_naming_the_engine_and_an_oom_in_its_own_words_is_a_generic_line() -> None:
    # sglang-0178: "[Bug] Serve Qwen3-GPTQ with OOM issue" (SGLang's form); sglang-0179: "Sglang ... out of memory".
    assert triage_paste("sglang-0178").best.id == "sglang-cuda-oom"
    result = triage_paste("sglang-0179")
    assert (result.engine, result.best.id) == ("sglang", "sglang-cuda-oom")
    # The step a title names still decides: Ollama loading the model.
    assert triage_paste("sglang-0179", "ollama OOM when loading gemma3").best.id == "ollama-llama-server-terminated"
    # A title naming no engine, or naming no shortage, gets no page.
    assert triage_paste("sglang-0179", "Serve Qwen3-GPTQ with OOM issue").best is None
    assert triage_paste("sglang-0179", "[Bug] Serve Qwen3-GPTQ crashes").best is None
    assert triage_paste("sglang-0179", "[Bug] Serve Qwen3-GPTQ crashes, but not OOM").best is None
    # SGLang's own "Decode out of memory" keeps its signature's page (the KV pool), not the generic one.
    assert triage_paste("sglang-0179", "[Bug] Decode out of memory. Try to lower your batch size.").best.id == "sglang-kv-pool-full"
    # A log line is not a title: lines of a log that say "OOM" in passing are left to the log.
    assert triage_paste("sglang-0179", "[Bug] Serve with OOM issue\nsomething else").best is None
