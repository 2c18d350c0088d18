"""Classes drawn from the spent holdout19 split, each on the real texts of tests/data/pasted_errors.yaml:
a vLLM traceback cut inside a model's vision encoder, and Ollama's "model request too large for system".
"""

from __future__ import annotations

from .test_corpus import BY_ID, triage_paste


def test_a_traceback_cut_inside_vllms_vision_encoder_is_the_profile_run() -> None:
    # vllm-0354: mllama's get_cross_attention_states calling self.vision_model(...), cut before its error.
    result = triage_paste("vllm-0354")
    assert (result.engine, result.step, result.best.id) == ("vllm", "profile_run", "vllm-profile-run-oom")
    # vllm-0356: the vision model's first layer, self.patch_embedding(...), under a worker's log prefix.
    result = triage_paste("vllm-0356")
    assert (result.engine, result.step, result.best.id) == ("vllm", "profile_run", "vllm-profile-run-oom")
    # Qwen2-VL's encoder, self.visual(...), inside _process_image_input, with the torch error kept.
    text = ('  File "/usr/lib/python3/dist-packages/vllm/model_executor/models/qwen2_vl.py", line 1200, in _process_image_input\n'
            "    image_embeds = self.visual(pixel_values, grid_thw=grid_thw_list)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert triage_paste("vllm-0354", text).best.id == "vllm-profile-run-oom"
    # A serving step in the same traceback is the later step: a request.
    text = ('  File "/usr/lib/python3/dist-packages/vllm/v1/worker/gpu_worker.py", line 400, in execute_model\n' + text)
    assert triage_paste("vllm-0354", text).best.id == "vllm-request-cuda-oom"


def test_building_the_vision_encoder_is_the_weights_load() -> None:
    # The encoder's attribute assigned in __init__ creates its weights; it is no call of the encoder.
    text = ('  File "/usr/lib/python3/dist-packages/vllm/model_executor/models/mllama.py", line 1100, in __init__\n'
            "    self.vision_model = MllamaVisionModel(config.vision_config)\n"
            '  File "/usr/lib/python3/dist-packages/vllm/model_executor/models/mllama.py", line 300, in __init__\n'
            "    self.patch_embedding = ColumnParallelConv2dPatch(\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.")
    result = triage_paste("vllm-0356", text)
    assert (result.step, result.best.id) == ("load_weights", "vllm-weights-oom")


def test_ollamas_model_request_too_large_warning_is_the_system_memory_page() -> None:
    # ollama-0261: the warning's own words as an issue title; ollama-0262: a title shortening it.
    assert triage_paste("ollama-0261").best.id == "ollama-system-memory"
    assert triage_paste("ollama-0262").best.id == "ollama-system-memory"
    # As Ollama logs it (slog), with the refusal after it: the refusal's line ranks first.
    text = ('time=2025-10-19T15:17:57.097+08:00 level=WARN source=server.go:540 msg="model request too large for system"'
            ' requested="5.5 GiB" available="3.4 GiB" total="6.0 GiB" free="3.4 GiB" swap="0 B"\n'
            'time=2025-10-19T15:17:57.097+08:00 level=INFO source=sched.go:450 msg="Load failed" model=/x'
            ' error="model requires more system memory (5.5 GiB) than is available (3.4 GiB)"')
    result = triage_paste("ollama-0261", text)
    assert result.best.id == "ollama-system-memory" and "more system memory" in result.best.reason.line
    # Other words about a request being too large are not this check.
    assert triage_paste("ollama-0261", "413 Request Entity Too Large").best is None
    assert triage_paste("ollama-0261", "the model's request body is too large").best is None


def test_pastes_that_name_no_engine_or_step_get_no_wrong_page() -> None:
    # vllm-0355: torch's message alone; the sampler warm-up is known only from the thread. vllm-0357: a title
    # with no engine. vllm-0348: a layer's forward (activation.py) with no caller frame, which every step runs.
    # sglang-0161, sglang-0162: kt-kernel, which LLaMA-Factory's fine-tuning runs as well as SGLang.
    for paste_id in ("vllm-0355", "vllm-0357", "vllm-0348", "sglang-0161", "sglang-0162"):
        best = triage_paste(paste_id).best
        assert best is None or best.id == BY_ID[paste_id]["page"], paste_id
