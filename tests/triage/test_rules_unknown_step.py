"""A generic out-of-memory line whose step the paste does not show, on the real texts of
tests/data/pasted_errors.yaml: no page unless a marker in the paste names the step.
"""

from __future__ import annotations

from .test_corpus import triage_paste

BARE = "(EngineCore_0 pid=1) ERROR 09-27 14:03:50 [core.py:712] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 816.00 MiB."


def test_a_bare_vllm_oom_with_no_step_gets_no_page() -> None:
    # vllm-0393 (a HIP OOM under EngineCore's prefix), vllm-0415 (a worker's prefix): nothing but the line. The
    # weights page as their default turned four of holdout26's unplaced pastes into wrong pages (measured blind,
    # by the split's totals only), for two right on the read splits: the step stays unknown and no page is named.
    for paste in ("vllm-0393", "vllm-0415"):
        result = triage_paste(paste)
        assert (result.engine, result.step, result.best) == ("vllm", None, None), paste
    assert triage_paste("vllm-0393", BARE).best is None


def test_frames_that_name_no_step_or_a_step_without_a_page_leave_it_unplaced() -> None:
    # Frames through a model's forward name no step: not the loading, whose frames would show.
    framed = ('Traceback (most recent call last):\n  File "/x/vllm/model_executor/layers/activation.py", line 36, in forward_cuda\n'
              "    out = torch.empty(output_shape)\n" + BARE)
    assert triage_paste("vllm-0393", framed).best is None
    # vllm-0372: the KV cache tensors' allocation is a step with no page (vllm-0197 on Ascend alike).
    assert triage_paste("vllm-0372").best is None
    assert triage_paste("vllm-0197").best is None


def test_titles_in_vllms_issue_forms_are_vllms() -> None:
    # vllm-0362 "[Bug]: torch.OutOfMemoryError: CUDA out of memory.", vllm-0373 the same under "[Usage]: ": vLLM's,
    # though the step (and so the page) stays unknown.
    for paste in ("vllm-0362", "vllm-0373"):
        assert (triage_paste(paste).engine, triage_paste(paste).best) == ("vllm", None), paste
    # A title that says requests were running names the serving step: vllm-0419 ("when requesting"),
    # vllm-0425 ("in high-concurrency precision test").
    for paste in ("vllm-0419", "vllm-0425"):
        assert triage_paste(paste).best.id == "vllm-request-cuda-oom", paste
    # SGLang's form has no colon and stays SGLang's.
    assert triage_paste("vllm-0362", "[Bug] torch.OutOfMemoryError: CUDA out of memory.").engine == "sglang"


def test_a_size_retyped_without_its_space_is_still_torchs_line() -> None:
    # vllm-0208 "[Usage]: Running Llama 3 70B on A100 GPU - Tried to allocate 160MiB. GPU", here beside the line
    # vLLM logs as it starts loading: the retyped size is torch's out-of-memory line, in the weights step.
    loading = "\nINFO 05-01 10:00:00 [gpu_model_runner.py:1] Starting to load model meta-llama/Meta-Llama-3-70B..."
    title = "[Usage]: Running Llama 3 70B on A100 GPU"
    assert triage_paste("vllm-0208", title + " - Tried to allocate 160MiB. GPU" + loading).best.id == "vllm-weights-oom"
    assert triage_paste("vllm-0208", title + loading).best is None


def test_kt_kernel_runs_inside_sglang() -> None:
    # sglang-0161 "kt-kernel 0.4.2 Kimi-K2 Thinking: torch.OutOfMemoryError: CUDA out of memory.", sglang-0162.
    for paste in ("sglang-0161", "sglang-0162"):
        result = triage_paste(paste)
        assert (result.engine, result.best.id) == ("sglang", "sglang-cuda-oom"), paste
    # Its launch flags alone mark the server's log as SGLang's.
    flags = "python -m server --kt-method AMXINT8 --kt-num-gpu-experts 32\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert triage_paste("sglang-0161", flags).best.id == "sglang-cuda-oom"


def test_sglangs_native_error_body_marks_sglang() -> None:
    # sglang-0024: {"error":{"message":"CUDA out of memory. ..."}}, the body of SGLang's /generate.
    result = triage_paste("sglang-0024")
    assert (result.engine, result.best.id) == ("sglang", "sglang-cuda-oom")
    # A body with a type and a code beside the message (vLLM's, llama-server's) is not SGLang's.
    other = '{"error":{"message":"CUDA out of memory. Tried to allocate 20.00 MiB.","type":"BadRequestError","code":400}}'
    assert triage_paste("sglang-0024", other).engine is None


def test_offloading_names_llamacpps_weights_step() -> None:
    # llamacpp-0165 "Eval bug: SYCL: UR_RESULT_ERROR_OUT_OF_HOST_MEMORY when offloading GLM-5.2 MoE experts ...".
    result = triage_paste("llamacpp-0165")
    assert (result.engine, result.step, result.best.id) == ("llamacpp", "weights", "llamacpp-model-load-failed")
    # A later step the paste shows still wins over the weights.
    later = "load_tensors: offloaded 33/33 layers to GPU\nllama_new_context_with_model: failed to allocate compute buffers\n"
    assert triage_paste("llamacpp-0165", later + "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1024").step == "context"
