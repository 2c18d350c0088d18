"""Classes drawn from the spent holdout19 split, each on the real texts of tests/data/pasted_errors.yaml:
a vLLM traceback cut inside a model's vision encoder.
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


def test_pastes_that_name_no_engine_or_step_get_no_wrong_page() -> None:
    # vllm-0355: torch's message alone; the sampler warm-up is known only from the thread. vllm-0357: a title
    # with no engine. vllm-0348: a layer's forward (activation.py) with no caller frame, which every step runs.
    # sglang-0161, sglang-0162: kt-kernel, which LLaMA-Factory's fine-tuning runs as well as SGLang.
    for paste_id in ("vllm-0355", "vllm-0357", "vllm-0348", "sglang-0161", "sglang-0162"):
        best = triage_paste(paste_id).best
        assert best is None or best.id == BY_ID[paste_id]["page"], paste_id
