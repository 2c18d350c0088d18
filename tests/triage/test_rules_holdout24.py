"""Classes drawn from the spent holdout24 split, each on the real texts of tests/data/pasted_errors.yaml:
a frame of an SGLang model file places a cut traceback only when it builds the model (its __init__), not in its
forward; SGLang's --mem-fraction-static shortened in a title; vLLM's max_model_len error shortened to the config
key it names; libllama's "failed to allocate compute pp buffers" quoted alone; ROCm's buffer failures as the CUDA
back end's, and Ollama backing its layout off to fewer GPU layers.
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 79.10 GiB"
SITE = "/usr/local/lib/python3.11/site-packages/"


def _frame(path: str, function: str) -> str:
    return f'  File "{SITE}{path}", line 100, in {function}\n    x = y('


def test_an_sglang_model_frame_places_a_cut_traceback_only_when_it_builds_the_model() -> None:
    # sglang-0201: a traceback cut in a model's forward (torch module frames, deepseek_v2.py forward) says
    # nothing of what failed, nor of the step.
    assert triage_paste("sglang-0201").best is None
    # A model's __init__ builds its weights: a traceback cut there, or an OOM raised there, is the loading step.
    cut = "Traceback (most recent call last):\n" + _frame("sglang/srt/models/llama.py", "__init__")
    result = triage_paste("sglang-0201", cut)
    assert (result.step, result.best.id) == ("load_weights", "sglang-cuda-oom")
    assert triage_paste("sglang-0201", cut + "\n" + OOM).step == "load_weights"
    # The forward under the scheduler's batch is still a running batch's out-of-memory (sglang-0074).
    assert triage_paste("sglang-0074").best.id == "sglang-cuda-oom"
    forward = _frame("sglang/srt/managers/scheduler.py", "run_batch") + "\n" + _frame("sglang/srt/models/llama.py", "forward")
    assert triage_paste("sglang-0201", forward + "\n" + OOM).step == "running"
    # Loading frames from 2024's router keep their page (sglang-0015, sglang-0016).
    assert triage_paste("sglang-0015").best.id == "sglang-cuda-oom"
    assert triage_paste("sglang-0016").best.id == "sglang-cuda-oom"


def test_sglangs_mem_fraction_shortened_in_a_title_names_sglang() -> None:
    # sglang-0196: "cookbook mem-fraction OOMs at decode-graph capture": SGLang's option, memory running out.
    result = triage_paste("sglang-0196")
    assert (result.engine, result.best.id) == ("sglang", "sglang-cuda-oom")
    assert triage_paste("sglang-0196", "OOM with mem_fraction 0.9 on an H100").engine == "sglang"
    # A longer name that holds the words is no SGLang option (TensorRT-LLM's kv_cache_free_gpu_mem_fraction).
    assert triage_paste("sglang-0196", "OOM with kv_cache_free_gpu_mem_fraction=0.9").engine is None


def test_vllms_max_model_len_error_shortened_to_the_config_key_is_its_page() -> None:
    # vllm-0409: "max_model_len is greater than max_position=40960", a title.
    result = triage_paste("vllm-0409")
    assert (result.best.id, result.numbers.get("derived_max_len")) == ("vllm-max-len-above-derived", 40960)
    text = "max_model_len (131072) is greater than max_position_embeddings in config.json"
    assert triage_paste("vllm-0409", text).best.id == "vllm-max-len-above-derived"
    # The full error keeps its page (vllm-0406); other "greater than" lines do not take it.
    assert triage_paste("vllm-0406").best.id == "vllm-max-len-above-derived"
    assert triage_paste("vllm-0409", "max_model_len is greater than the KV cache can hold").best is None


def test_libllamas_compute_pp_buffers_quoted_alone_is_the_context_page_and_no_more() -> None:
    # llamacpp-0319: KoboldCpp's reader quotes the cause alone.
    result = triage_paste("llamacpp-0319")
    assert result.best.id == "llamacpp-context-create-failed" and not result.confident
    assert triage_paste("llamacpp-0319", "failed to allocate compute tg buffers").best.id == "llamacpp-context-create-failed"
    # In a log, the lines before it say which buffer failed: the Vulkan back end's limit keeps its page (llamacpp-0083).
    assert triage_paste("llamacpp-0083").best.id == "llamacpp-vulkan-oom"
    assert BY_ID["llamacpp-0083"]["text"].count("failed to allocate compute pp buffers") == 1


def test_rocm_buffers_are_the_cuda_back_ends_and_ollamas_backoff_is_a_partial_offload() -> None:
    # ollama-0311: cudaMalloc and ROCm0 buffer failures, then "model layout did not fit, applying backoff": the
    # load went on with fewer layers on the GPU.
    result = triage_paste("ollama-0311")
    assert (result.engine, result.best.id) == ("ollama", "ollama-partial-offload")
    # Without the backoff line the same failure ends the load: the runner's page (as ollama-0129's CUDA0 buffer).
    cut = "\n".join(line for line in BY_ID["ollama-0311"]["text"].splitlines() if "backoff" not in line)
    assert triage_paste("ollama-0311", cut).best.id == "ollama-llama-server-terminated"
    assert triage_paste("ollama-0129").best.id == "ollama-llama-server-terminated"
    # A backoff that ends with "memory layout cannot be allocated" is that page.
    text = BY_ID["ollama-0311"]["text"] + (
        '\ntime=2025-10-29T17:09:04.993+08:00 level=INFO source=server.go:777 msg="model layout did not fit, '
        'applying backoff" backoff=1.10\nError: 500 Internal Server Error: memory layout cannot be allocated')
    assert triage_paste("ollama-0311", text).best.id == "ollama-memory-layout"
    # A back end's own failure beside the backoff keeps its page (ollama-0296, Vulkan's buffer size limit).
    assert triage_paste("ollama-0296").best.id == "llamacpp-vulkan-oom"


def test_v0s_dumped_model_execution_error_is_a_wrapper_whose_step_decides() -> None:
    # vllm-0290: "Error in model execution (input dumped to ...): CUDA out of memory": V0's profile run calls the
    # same execute_model as serving, so the wrapper's words name no step. Alone it keeps the request page it
    # documents (vllm-0065, serving); under the profile run's frames it is that step's out-of-memory.
    assert triage_paste("vllm-0065").best.id == "vllm-request-cuda-oom"
    frames = ("Traceback (most recent call last):\n" + _frame("vllm/worker/worker.py", "determine_num_available_blocks")
              + "\n" + _frame("vllm/worker/model_runner_base.py", "_wrapper") + "\n")
    result = triage_paste("vllm-0290", frames + BY_ID["vllm-0290"]["text"])
    assert (result.step, result.best.id) == ("profile_run", "vllm-profile-run-oom")


def test_llama_cpp_pythons_multimodal_chat_handler_check_is_the_context_page() -> None:
    # llamacpp-0249: llama-cpp-python's LLaVA handler raised ValueError("Prompt exceeds n_ctx") (v0.2.66 to v0.2.76);
    # later releases print the two counts.
    assert triage_paste("llamacpp-0249").best.id == "llamacpp-context-exceeded"
    assert triage_paste("llamacpp-0249", "ValueError: Prompt exceeds n_ctx: 4103 > 4096").best.id == (
        "llamacpp-context-exceeded")


def test_a_draft_model_context_created_without_its_target_is_a_lookalike() -> None:
    # llamacpp-0006: LM Studio created a DFlash draft's context alone: "dflash requires ctx_other to be set", then
    # the front end's "failed to create context with model" lines report it.
    result = triage_paste("llamacpp-0006")
    assert result.best is None and "ctx_other" in result.lookalike
    # Beside an allocation that failed, memory ran out: the pages stay.
    text = BY_ID["llamacpp-0006"]["text"] + (
        "\n0.00.951.600 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1412.77 MiB on device 0: cudaMalloc"
        " failed: out of memory\n0.00.951.601 E llama_init_from_model: failed to initialize the context: failed to"
        " allocate compute pp buffers")
    assert triage_paste("llamacpp-0006", text).best.id == "llamacpp-context-create-failed"
