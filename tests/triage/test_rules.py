"""The triage's parts on small inputs, and the rules' portability to JavaScript."""

from __future__ import annotations

import json
import re
from pathlib import Path

from generator.cli import main
from generator.load import load_dataset
from generator.triage import RULES, TriageRecord, Wording, detect_engine, normalise, records_from_errors, triage

# Python-only regex syntax: lookbehind, named groups, atomic groups, inline flags, possessives.
NOT_IN_JAVASCRIPT = re.compile(r"\(\?<[=!]|\(\?P|\(\?<\w|\(\?>|\(\?[aiLmsux]|[*+?}]\+|\\[AZz]")


def _regexes(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _regexes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _regexes(item)


def test_rules_are_json_and_portable_regexes() -> None:
    assert json.loads(json.dumps(RULES)) == RULES
    for pattern in _regexes({k: v for k, v in RULES.items() if k not in ("scores", "step_pages")}):
        re.compile(pattern)
        assert not NOT_IN_JAVASCRIPT.search(pattern), pattern


def test_normalise_strips_prefixes_and_joins_hard_wraps() -> None:
    text = "\n".join([
        "(APIServer pid=1) (EngineCore_DP0 pid=123) ERROR 05-12 10:11:12 [core.py:718] ValueError: boom",
        "INFO 03-01 12:00:00 [file.py:12] started",
        "vllm-1  | docker line",
        "Dec 01 10:00:00 host ollama[123]: journald line",
        'time=2025-01-01T00:00:00.000Z level=ERROR source=server.go:1 msg="llama runner terminated" error="exit status 2"',
        "\x1b[31mred\x1b[0m\r",
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 ",
        "dummy requests. Please try lowering `max_num_seqs`",
    ])
    assert normalise(text) == [
        "ValueError: boom",
        "started",
        "docker line",
        "journald line",
        'llama runner terminated error="exit status 2"',
        "red",
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs`",
    ]


def _record(id_: str, engine: str, pattern: str, weight: int = 0) -> TriageRecord:
    return TriageRecord(id_, engine, id_, (pattern,), weight, (Wording("1.0", "boom {n} here"),))


RECORDS = [
    _record("vllm-weights-oom", "vllm", r"Failed to load model - not enough GPU memory|CUDA out of memory\. Tried to allocate"),
    _record("vllm-request-cuda-oom", "vllm", r"^$never"),
    _record("vllm-cudagraph-capture-oom", "vllm", r"Capturing CUDA graphs"),
    _record("vllm-engine-core-init-failed", "vllm", r"Engine core initialization failed"),
    _record("vllm-no-cache-blocks", "vllm", r"No available memory for the cache blocks"),
]
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 44.53 GiB"


def test_generic_oom_is_routed_by_its_step() -> None:
    loading = "ERROR 01-01 00:00:00 [core.py:1]   File \"x.py\", line 1, in load_model\n" + OOM
    serving = "ERROR 01-01 00:00:00 [core.py:1]   File \"x.py\", line 1, in engine_step\n" + OOM
    capture = "File \"x.py\", line 1, in capture_model\nFile \"x.py\", line 2, in _dummy_run\n" + OOM + "\nvllm"
    assert triage(loading, RECORDS).best.id == "vllm-weights-oom"
    result = triage(serving, RECORDS)
    assert (result.best.id, result.step, result.best.reason.step) == ("vllm-request-cuda-oom", "request", "request")
    assert result.numbers["tried_to_allocate_mib"] == 1536.0 and result.numbers["gpu_total_gib"] == 44.53
    assert triage(capture, RECORDS).best.id == "vllm-cudagraph-capture-oom"


def test_a_specific_error_beats_the_wrapper_that_reports_it() -> None:
    text = "ValueError: No available memory for the cache blocks.\nRuntimeError: Engine core initialization failed. See root cause above."
    ids = [c.id for c in triage(text, RECORDS).candidates]
    assert ids == ["vllm-no-cache-blocks", "vllm-engine-core-init-failed"]
    assert triage("RuntimeError: Engine core initialization failed. See root cause above.", RECORDS).best.id == "vllm-engine-core-init-failed"


def test_typographic_quotes_and_spaces_read_as_the_engine_printed_them() -> None:
    retyped = "The model\u2019s max seq len (4096) is larger\u00a0than \u2018this\u2019 and \u201cthat\u201d"
    assert normalise(retyped) == ["The model's max seq len (4096) is larger than 'this' and \"that\""]


def test_an_outer_engines_page_needs_a_marker_of_that_engine() -> None:
    records = [_record("ollama-cuda-oom", "ollama", r"CUDA error: out of memory"),
               _record("llamacpp-compute-buffer-failed", "llamacpp", r"^$never")]
    koboldcpp = "CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm at ggml-cuda.cu:7184"
    assert triage(koboldcpp, records).best.id == "llamacpp-compute-buffer-failed"
    assert triage(koboldcpp + "\nDec 01 10:00:00 host ollama[123]: x", records).best.id == "ollama-cuda-oom"


def test_engine_comes_from_the_log_format() -> None:
    assert detect_engine("Dec 01 10:00:00 host ollama[123]: llama_new_context_with_model: n_ctx = 2048\nggml_backend_cuda_buffer_type_alloc_buffer") == "ollama"
    assert detect_engine("llama_new_context_with_model: n_ctx = 2048") == "llamacpp"
    assert detect_engine("[2026-07-10 03:27:18 TP0] Load weight begin. avail mem=22.71 GB") == "sglang"
    assert detect_engine("(EngineCore_DP0 pid=1) ERROR 05-12 10:11:12 [core.py:718] x") == "vllm"


def test_cli_prints_ranked_pages_and_json(tmp_path, capsys) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`\n", encoding="utf-8")
    assert main(["triage", str(paste)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("1. vllm-no-cache-blocks") and "/oom/vllm-no-cache-blocks/" in out
    assert main(["triage", str(paste), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["candidates"][0]["id"] == "vllm-no-cache-blocks"
    assert data["candidates"][0]["reason"]["line_number"] == 1


def test_a_look_alike_silences_the_pages_unless_memory_ran_out() -> None:
    records = [_record("llamacpp-model-load-failed", "llamacpp", r"failed to load model")]
    lookalike = ("llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'x'\n"
                 "llama_model_load_from_file_impl: failed to load model")
    result = triage(lookalike, records)
    assert result.candidates == () and "unknown model architecture" in (result.lookalike or "")
    # The same follow-up line after a load that ran out of memory is that page's.
    oom = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory\n"
           "llama_model_load_from_file_impl: failed to load model")
    assert [c.id for c in triage(oom, records).candidates] == ["llamacpp-model-load-failed"]


def test_only_a_strong_match_with_a_clear_lead_is_confident() -> None:
    records = [_record("wrapper-page", "vllm", r"Engine core initialization failed"),
               _record("specific-page", "vllm", r"No available memory for the cache blocks")]
    weak = triage("RuntimeError: Engine core initialization failed. See root cause above.", records)
    assert [c.id for c in weak.candidates] == ["wrapper-page"] and not weak.confident
    strong = triage("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", records)
    assert strong.candidates[0].id == "specific-page" and strong.confident


def test_an_inner_failure_offers_the_outer_page_only_at_its_step() -> None:
    records = [_record("llamacpp-metal-oom", "llamacpp", r"failed to allocate Metal buffer of size \d+|command buffer \d+ failed with status"),
               _record("ollama-llama-server-terminated", "ollama", r"^$never")]
    marker = "Dec 01 10:00:00 host ollama[123]: "
    loading = marker + "ggml_gallocr_reserve_n: failed to allocate Metal buffer of size 17376872352"
    assert triage(loading, records).best.id == "ollama-llama-server-terminated"
    running = marker + "ggml_metal_graph_compute: command buffer 3 failed with status 5"
    assert [c.id for c in triage(running, records).candidates] == ["llamacpp-metal-oom"]


STEP_RECORDS = [_record(id_, engine, r"^$never") for id_, engine in [
    ("vllm-sampler-warmup-oom", "vllm"), ("vllm-request-cuda-oom", "vllm"), ("vllm-sleep-wake-oom", "vllm"),
    ("vllm-max-model-len-error", "vllm"), ("vllm-cudagraph-capture-oom", "vllm"),
    ("sglang-cuda-oom", "sglang"), ("sglang-kv-pool-full", "sglang"),
    ("ollama-llama-server-terminated", "ollama"), ("ollama-cuda-oom", "ollama")]]


def _frame(path: str, function: str) -> str:
    return f'  File "/venv/lib/python3.12/site-packages/{path}", line 10, in {function}'


def _best(text: str) -> str | None:
    best = triage(text, STEP_RECORDS).best
    return best.id if best else None


def test_the_frames_of_a_traceback_name_the_step_of_its_oom() -> None:
    sampler = "\n".join([_frame("vllm/v1/sample/ops/topk_topp_sampler.py", "forward_cuda"),
                         _frame("flashinfer/sampling.py", "top_k_top_p_sampling_from_logits"), OOM])
    # Graphs were captured by then (torch counts their private pools), but the sampler ran last.
    assert _best(sampler + ", with 39.88 MiB allocated in private pools (e.g., CUDA Graphs)") == "vllm-sampler-warmup-oom"
    # The same sampler frames under a request's step are that request's.
    assert _best(_frame("vllm/v1/engine/core.py", "run_busy_loop") + "\n" + sampler) == "vllm-request-cuda-oom"
    assert _best(_frame("vllm/v1/worker/gpu_worker.py", "execute_model") + "\n" + sampler) == "vllm-request-cuda-oom"
    assert _best(_frame("vllm/engine/async_llm_engine.py", "step_async") + "\n" + OOM) == "vllm-request-cuda-oom"
    assert _best(_frame("vllm/entrypoints/llm.py", "wake_up") + "\n" + OOM) == "vllm-sleep-wake-oom"
    assert _best('vLLM: POST /wake_up fails with "CUDA Error: out of memory"') == "vllm-sleep-wake-oom"
    # A wake-up that succeeded before a request ran out of memory is not where it ran out.
    woke = 'INFO:     127.0.0.1:50356 - "POST /wake_up HTTP/1.1" 200 OK\n'
    assert _best(woke + _frame("vllm/v1/engine/core.py", "run_busy_loop") + "\n" + OOM) == "vllm-request-cuda-oom"


def test_an_sglang_batch_that_finds_no_kv_slots_is_a_full_pool() -> None:
    cut = "\n".join(["Traceback (most recent call last):", _frame("sglang/srt/managers/scheduler.py", "run_batch"),
                     _frame("sglang/srt/mem_cache/allocation.py", "alloc_token_slots")])
    assert _best(cut) == "sglang-kv-pool-full"
    forward = "\n".join([_frame("sglang/srt/managers/scheduler.py", "run_batch"), OOM])
    assert _best(forward) == "sglang-cuda-oom"


def test_a_traceback_cut_at_its_first_line_is_placed_by_the_log_before_it() -> None:
    head = "(EngineCore_DP0 pid=1) INFO 11-25 18:39:23 [gpu_worker.py:348] Available KV cache memory: 0.44 GiB\n"
    assert _best(head + "ERROR [core.py:842] EngineCore failed to start.\nTraceback (most recent call last):") == "vllm-max-model-len-error"
    # Frames that name no step do not fall back on the log: where it failed after that line is unknown.
    framed = head + "Traceback (most recent call last):\n" + _frame("vllm/v1/engine/core.py", "__init__")
    assert _best(framed) is None
    # That check raises a ValueError; an out-of-memory after the line came later (here in capture,
    # whose graphs already hold memory).
    assert _best(head + OOM + ", with 46.00 MiB allocated in private pools (e.g., CUDA Graphs)") == "vllm-cudagraph-capture-oom"


def test_a_size_no_machine_has_is_a_look_alike() -> None:
    records = [_record("llamacpp-model-load-failed", "llamacpp", r"failed to allocate CPU buffer")]
    wrapped = ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 18446744073709549568\n"
               "alloc_tensor_range: failed to allocate CPU buffer of size 18446744073709549568")
    result = triage(wrapped, records)
    assert result.candidates == () and "18446744073709549568" in (result.lookalike or "")
    assert triage("ggml_aligned_malloc: insufficient memory (attempted to allocate 17592186044416.00 MB)", records).lookalike
    real = wrapped.replace("18446744073709549568", "63374323968")
    assert [c.id for c in triage(real, records).candidates] == ["llamacpp-model-load-failed"]


def test_ollama_lines_logged_at_load_do_not_say_the_model_was_running() -> None:
    slog = 'time=2026-04-03T12:44:58.444Z level=INFO source={} msg="{}" {}\n'
    load = (slog.format("model.go:138", "vision: decode", "elapsed=702.599us")
            + slog.format("ggml.go:1", "compute graph", "backend=CUDA0 buffer_type=CUDA0 size=\"1.1 GiB\"")
            + "ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 20052907008")
    assert _best(load) == "ollama-llama-server-terminated"
    serving = slog.format("routes.go:1", "POST \\\"/api/chat\\\"", "") + "CUDA error: out of memory"
    assert _best(load.replace("ggml_gallocr", serving + "\nggml_gallocr")) == "ollama-cuda-oom"


def test_the_config_line_names_graph_settings_not_a_step() -> None:
    config = ('INFO 05-01 10:00:00 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model=\'m\', '
              'compilation_config={"level":3,"use_cudagraph":true,"cudagraph_num_of_warmups":1,"cudagraph_capture_sizes":[4,2,1]}\n')
    records = STEP_RECORDS + [_record("vllm-weights-oom", "vllm", r"^$never")]
    loading = config + _frame("vllm/model_executor/model_loader/loader.py", "load_model") + "\n" + OOM
    assert triage(loading, records).best.id == "vllm-weights-oom"
    capturing = config + _frame("vllm/v1/worker/gpu_model_runner.py", "capture_model") + "\n" + OOM
    assert triage(capturing, records).best.id == "vllm-cudagraph-capture-oom"


def test_a_metal_command_buffer_fails_for_memory_only_when_macos_says_so() -> None:
    records = [_record("llamacpp-metal-oom", "llamacpp", r"command buffer \d+ failed with status")]
    failed = "ggml_metal_graph_compute: command buffer 0 failed with status 5\n"
    ignored = failed + "error: Ignored (for causing prior/excessive GPU errors) (00000004:kIOAccelCommandBufferCallbackErrorSubmissionsIgnored)"
    assert triage(ignored, records).candidates == ()
    oom = failed + "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"
    assert triage(oom, records).best.id == "llamacpp-metal-oom"
    assert triage(failed, records).best.id == "llamacpp-metal-oom"


def test_word_boundaries_are_ascii_as_in_javascript() -> None:
    assert detect_engine("使用vllm进行推理时报错") == "vllm"
    assert detect_engine("vllmx") is None


def test_npu_and_device_context_out_of_memory_are_routed_by_step() -> None:
    records = STEP_RECORDS + [_record("vllm-weights-oom", "vllm", r"^$never")]
    npu = "RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity)"
    loading = _frame("vllm/model_executor/model_loader/loader.py", "load_model") + "\n" + npu
    assert triage(loading, records).best.id == "vllm-weights-oom"
    building = ("(EngineCore_DP0 pid=1) " + _frame("torch/utils/_device.py", "__torch_function__")
                + "\n(EngineCore_DP0 pid=1) torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.08 GiB.")
    assert triage(building, records).best.id == "vllm-weights-oom"


def test_rays_out_of_memory_error_is_not_a_generic_gpu_one() -> None:
    records = STEP_RECORDS + [_record("vllm-host-memory", "vllm", r"ray\.exceptions\.OutOfMe(moryError)?")]
    loop = _frame("vllm/engine/async_llm_engine.py", "run_engine_loop") + "\n"
    ray = loop + "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."
    assert triage(ray, records).best.id == "vllm-host-memory"
    torch = loop + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
    assert triage(torch, records).best.id == "vllm-request-cuda-oom"


def test_ggmls_source_tree_names_llamacpp_and_its_cuda_pool_a_running_batch() -> None:
    records = [_record("llamacpp-compute-buffer-failed", "llamacpp", r"^$never"),
               _record("llamacpp-model-load-failed", "llamacpp", r"^$never")]
    pool = ("CUDA error: out of memory\n"
            "  current device: 0, in function alloc at D:\\a\\koboldcpp\\koboldcpp\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:457\n"
            "  cuMemSetAccess((CUdeviceptr)((char *)(pool_addr) + pool_size), reserve_size, &access, 1)")
    result = triage(pool, records)
    assert (result.engine, result.step) == ("llamacpp", "running")
    assert result.best.id == "llamacpp-compute-buffer-failed"


def test_llama_servers_context_shift_error_is_a_context_exceeded_but_cli_s_stop_is_not() -> None:
    # llama-server's send_error when a generating slot reaches n_ctx with context shift off
    # (tools/server/server.cpp, update_slots); llama-cli's debug line when it stops there is not an error.
    records = records_from_errors(load_dataset(Path(__file__).resolve().parents[2]).errors.values())
    for paste in ('"context shift is disabled."', '{"error":{"code":500,"message":"context shift is disabled","type":"server_error"}}'):
        assert triage(paste, records).best.id == "llamacpp-context-exceeded", paste
    stop = triage("main: context full and context shift is disabled => stopping", records)
    assert stop.best is None or stop.best.id != "llamacpp-context-exceeded"


def test_vllm_serve_flags_in_a_pasted_command_name_vllm() -> None:
    oom = "\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
    assert detect_engine("python api_server.py --model m --gpu-memory-utilization 0.9" + oom) == "vllm"
    assert detect_engine("python serve.py --model m --max-model-len 8192 --enforce-eager" + oom) == "vllm"
    assert detect_engine("python -m x.launch_server --model-path m --mem-fraction-static 0.8 --context-length 8192" + oom) != "vllm"


def test_a_reserve_llamacpp_retried_without_pipeline_parallelism_is_not_the_outcome() -> None:
    # sched_reserve in src/llama-context.cpp: the first reserve fails, the retry decides.
    records = [_record("llamacpp-context-create-failed", "llamacpp", r"^$never")]
    first = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: out of memory\n"
             "graph_reserve: failed to allocate compute buffers\n"
             "sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism\n")
    assert triage(first + "srv    load_model: initializing, n_slots = 1", records).best is None
    again = first + "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 12000.00 MiB on device 1: cudaMalloc failed: out of memory"
    assert triage(again, records).best.id == "llamacpp-context-create-failed"


def test_the_vision_projectors_warm_up_is_a_step_with_no_page() -> None:
    records = [_record("llamacpp-context-create-failed", "llamacpp", r"^$never")]
    warmup = ("llama_init_from_model: n_ctx = 8192\nwarmup: warmup with image size = 1472 x 1472\n"
              "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 372.08 MiB on device 0: cudaMalloc failed: out of memory")
    result = triage(warmup, records)
    assert (result.step, result.best) == ("vision", None)


def test_a_cut_traceback_after_v0s_weights_line_is_the_profile_run() -> None:
    # After "Loading model weights took" only the profile run can fail before it logs its own result.
    head = "INFO 06-26 07:48:15 model_runner.py:160] Loading model weights took 15.2075 GB\n"
    framed = head + "[rank0]: Traceback (most recent call last):\n" + _frame("vllm/engine/async_llm_engine.py", "__init__")
    result = triage(framed, STEP_RECORDS + [_record("vllm-profile-run-oom", "vllm", r"^$never")])
    assert (result.step, result.best.id) == ("profile_run", "vllm-profile-run-oom")


def test_rocm_and_sycl_out_of_memory_lines_are_routed_by_step_like_cudas() -> None:
    records = [_record("llamacpp-model-load-failed", "llamacpp", r"^$never"),
               _record("llamacpp-compute-buffer-failed", "llamacpp", r"^$never")]
    rocm = ("ROCm error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc at "
            "/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:457")
    assert triage(rocm, records).best.id == "llamacpp-compute-buffer-failed"
    sycl = ("load_tensors: offloading 32 repeating layers to GPU\n"
            "ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 3503030272 Bytes of memory on device\n"
            "Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)")
    assert triage(sycl, records).best.id == "llamacpp-model-load-failed"


def test_a_partial_offload_in_llamacpps_lines_alone_lists_ollamas_page_without_going_there() -> None:
    records = records_from_errors(load_dataset(Path(__file__).resolve().parents[2]).errors.values())
    offload = "llm_load_tensors: offloading 31 repeating layers to GPU\nllm_load_tensors: offloaded 31/33 layers to GPU"
    result = triage(offload, records)
    assert (result.engine, result.best.id, result.confident) == ("llamacpp", "ollama-partial-offload", False)
    failed = offload + "\nllama_model_load: error loading model: unable to allocate CUDA0 buffer"
    assert triage(failed, records).best.id == "llamacpp-model-load-failed"


def test_llamacpp_servers_json_log_names_no_ollama() -> None:
    # {"level":"ERR", ...}: the log line of llama.cpp's server, which Ollama's runner also printed up to v0.1.34.
    line = '{"function":"load_model","level":"ERR","line":450,"model":"/m.gguf","msg":"unable to load model","tid":"1","timestamp":1}'
    assert detect_engine("llama_new_context_with_model: failed to allocate compute buffers\n" + line) == "llamacpp"
    assert detect_engine("Jun 30 10:00:00 host ollama[123]: " + line) == "ollama"
