"""Which flags and variables take a value, and which values each one accepts, per engine: the
value half of the check of printed commands against each CLI's surface (surface.py)."""

from __future__ import annotations

import re
from typing import Iterable

# llama-server --help for -ctk/-ctv: "allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1"
# (common/arg.cpp, read at master 3f545be; https://github.com/ggml-org/llama.cpp/blob/b10573/common/arg.cpp).
# This module imports nothing of ours (tests/test_layering.py), so the list is repeated here;
# tests/launch/test_surface.py checks it equals the engine's.
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")

# ---------------------------------------------------------------------------------------------
# Values. Flags listed here take a value; a flag not listed takes the next token as its value only
# when that token does not look like a flag (the surface files do not record arity).

_INT = re.compile(r"^-?\d+$")


def _is_int(text: str, minimum: int | None = None) -> bool:
    return bool(_INT.match(text)) and (minimum is None or int(text) >= minimum)


def _looks_like_flag(token: str) -> bool:
    return token.startswith("-") and not _INT.match(token) and not re.match(r"^-\d+(\.\d+)?$", token)


# llama-server: the --flash-attn values common/arg.cpp accepts (read at master 3f545be).
FLASH_ATTN_VALUES = ("on", "enabled", "true", "1", "off", "disabled", "false", "0", "auto", "-1")


def _llama_int(minimum: int):
    return lambda v: None if _is_int(v, minimum) else f"must be an integer >= {minimum}"


def _llama_ngl(v: str) -> str | None:
    return None if v in ("auto", "all") or _is_int(v, -1) else "must be a number of layers, 'auto' or 'all'"


def _llama_parallel(v: str) -> str | None:
    if not _is_int(v):
        return "must be an integer"
    n = int(v)
    return None if n >= 1 or n == -1 else "must be >= 1 (or -1 for auto); llama-server rejects 0"


def _choice(values: Iterable[str], *, lower: bool = False):
    allowed = tuple(values)

    def check(v: str) -> str | None:
        return None if (v.lower() if lower else v) in allowed else f"must be one of {', '.join(allowed)}"

    return check


def _fit_target(v: str) -> str | None:
    return None if all(_is_int(p.strip(), 0) for p in v.split(",")) else "must be MiB per device, comma-separated"


LLAMA_SERVER_VALUES = {
    "--ctx-size": _llama_int(0),
    "--batch-size": _llama_int(1),
    "--ubatch-size": _llama_int(1),
    "--flash-attn": _choice(FLASH_ATTN_VALUES),
    "--cache-type-k": _choice(CACHE_TYPES),
    "--cache-type-v": _choice(CACHE_TYPES),
    "--cache-type-k-draft": _choice(CACHE_TYPES),
    "--cache-type-v-draft": _choice(CACHE_TYPES),
    "--spec-draft-type-k": _choice(CACHE_TYPES),
    "--spec-draft-type-v": _choice(CACHE_TYPES),
    "--n-gpu-layers": _llama_ngl,
    "--gpu-layers": _llama_ngl,
    "--parallel": _llama_parallel,
    "--fit": _choice(("on", "off")),
    "--fit-target": _fit_target,
    "--fit-ctx": _llama_int(0),
    "--n-cpu-moe": _llama_int(0),
    "--cache-ram": _llama_int(-1),
    "--split-mode": _choice(("none", "layer", "row", "tensor")),
    "--main-gpu": _llama_int(0),
    "--log-verbosity": _llama_int(0),
    "--threads": _llama_int(-1),
    "--port": _llama_int(0),
}
LLAMA_SERVER_TAKES_VALUE = frozenset(LLAMA_SERVER_VALUES) | {
    "--model", "--override-tensor", "--tensor-split", "--device", "--host", "--alias", "--mmproj", "--hf-repo",
    "--hf-file", "--chat-template", "--chat-template-file", "--api-key", "--lora", "--seed", "--temp",
    "--top-k", "--top-p", "--min-p", "--n-predict", "--predict", "--keep", "--threads-batch", "--verbosity",
}

# vLLM 0.33.0: CacheDType in vllm/config/cache.py and QUANTIZATION_METHODS in
# vllm/model_executor/layers/quantization/__init__.py (https://github.com/vllm-project/vllm/tree/v0.33.0).
VLLM_KV_CACHE_DTYPES = (
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "octave_k3v4",
    "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit", "int4_per_token_head", "int8_per_token_head",
    "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
)
VLLM_QUANTIZATION = (
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8",
    "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors",
    "experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8",
    "online", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only",
    "nvfp4_per_token", "mxfp8",
)
VLLM_DEPRECATED_QUANTIZATION = frozenset({"fbgemm_fp8", "fp_quant"})
_HUMAN_INT = re.compile(r"^(\d+|\d+(\.\d+)?[kmgt]|\d+[KMGT])$")


def _human_int(v: str) -> str | None:
    return None if _HUMAN_INT.match(v) else "must be an integer, optionally with k/m/g/t (decimal) or K/M/G/T (binary) suffix"


def _max_model_len(v: str) -> str | None:
    return None if v in ("auto", "-1") or _HUMAN_INT.match(v) else "must be an integer (1k, 1K, 25.6k ...), 'auto' or -1"


def _utilization(v: str) -> str | None:
    try:
        value = float(v)
    except ValueError:
        return "must be a fraction in (0, 1]"
    return None if 0 < value <= 1 else "must be a fraction in (0, 1]"


def _vllm_int(minimum: int):
    return lambda v: None if _is_int(v, minimum) else f"must be an integer >= {minimum}"


VLLM_VALUES = {
    "--kv-cache-dtype": _choice(VLLM_KV_CACHE_DTYPES),
    "--max-model-len": _max_model_len,
    "--gpu-memory-utilization": _utilization,
    "--device-memory-utilization": _utilization,
    "--kv-cache-memory-bytes": _human_int,
    "--max-num-batched-tokens": _human_int,
    "--max-num-seqs": _vllm_int(1),
    "--tensor-parallel-size": _vllm_int(1),
    "--pipeline-parallel-size": _vllm_int(1),
    "--data-parallel-size": _vllm_int(1),
    "--decode-context-parallel-size": _vllm_int(1),
    "--block-size": _vllm_int(1),
    "--optimization-level": _choice(("0", "1", "2", "3")),
    "--dtype": _choice(("auto", "bfloat16", "float", "float16", "float32", "half")),
    "--quantization": _choice(VLLM_QUANTIZATION),
    "--performance-mode": _choice(("balanced", "interactivity", "throughput")),
    "--cpu-offload-gb": lambda v: None if re.match(r"^\d+(\.\d+)?$", v) else "must be a number of GiB",
}
VLLM_TAKES_VALUE = frozenset(VLLM_VALUES) | {
    "--compilation-config", "--served-model-name", "--host", "--port", "--kv-offloading-size",
    "--kv-offloading-backend", "--mamba-cache-dtype", "--mamba-ssm-cache-dtype", "--kv-cache-dtype-skip-layers",
    "--limit-mm-per-prompt", "--chat-template", "--api-key", "--seed", "--revision", "--tokenizer",
    "--download-dir", "--max-cudagraph-capture-size", "--attention-backend",
}
VLLM_REMOVED = {
    "--swap-space": "--swap-space was removed in vLLM 0.18.0",
    "--calculate-kv-scales": "--calculate-kv-scales was removed in vLLM 0.28.0",
}

# Flags vLLM's own docs or logs name that `vllm serve` does not register. argparse would take a
# prefix of a real flag, so a ghost may even run, as another flag: kvtriage never prints one.
# --kv-cache-memory: the v0.33.0 parser registers only --kv-cache-memory-bytes (arg_utils.py), and the
# value vLLM's log suggests for it double-counts CUDA-graph memory
# (https://github.com/vllm-project/vllm/issues/57936).
VLLM_GHOST = {
    "--kv-cache-memory": "--kv-cache-memory is not a vllm serve flag (vLLM's docs and logs name it); "
                         "the flag is --kv-cache-memory-bytes, and the size vLLM's log suggests double-counts CUDA-graph memory",
}

# SGLang v0.5.23 (docs/research/sglang-kv-pool.md; arg_groups/fields/model.py --kv-cache-dtype choices).
# Repeated from generator/engine/sglang.py (this module imports nothing of ours); tests check they agree.
SGLANG_KV_CACHE_DTYPES = ("auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16")
SGLANG_PROGRAM = ("python", "-m", "sglang.launch_server")


def _fraction(v: str) -> str | None:
    try:
        value = float(v)
    except ValueError:
        return "must be a fraction in (0, 1]"
    return None if 0 < value <= 1 else "must be a fraction in (0, 1]"


SGLANG_VALUES = {
    "--kv-cache-dtype": _choice(SGLANG_KV_CACHE_DTYPES),
    "--mem-fraction-static": _fraction,
    "--context-length": _vllm_int(1),
    "--tp-size": _vllm_int(1),
    "--tensor-parallel-size": _vllm_int(1),
    "--pp-size": _vllm_int(1),
    "--page-size": _vllm_int(1),
    "--max-total-tokens": _vllm_int(1),
    "--max-running-requests": _vllm_int(1),
    "--chunked-prefill-size": _vllm_int(-1),
    "--cuda-graph-max-bs-decode": _vllm_int(1),
    "--swa-full-tokens-ratio": _fraction,
}
SGLANG_TAKES_VALUE = frozenset(SGLANG_VALUES) | {
    "--model-path", "--host", "--port", "--served-model-name", "--quantization", "--dtype", "--attention-backend", "--api-key",
}
SGLANG_REMOVED = {"--cuda-graph-max-bs": "--cuda-graph-max-bs is gone at SGLang v0.5.23; use --cuda-graph-max-bs-decode"}
SGLANG_DEPRECATED = {
    "--disable-cuda-graph": "deprecated at SGLang v0.5.23; use --cuda-graph-backend-decode=disabled",
    "--enable-dp-attention": "deprecated at SGLang v0.5.23",
}

# Ollama: envconfig readers (Bool uses strconv.ParseBool), https://github.com/ollama/ollama/blob/v0.33.0-rc2/envconfig/config.go.
_PARSE_BOOL = ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False")


def _uint(v: str) -> str | None:
    return None if v.isdigit() else "must be an unsigned integer"


def _duration(v: str) -> str | None:
    return None if re.match(r"^-?(\d+|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$", v) else "must be a duration (5m, 1h30m) or seconds"


OLLAMA_VALUES = {
    "OLLAMA_KV_CACHE_TYPE": lambda v: None if v.lower() in CACHE_TYPES else f"must be one of {', '.join(CACHE_TYPES)} (llama-server: Unsupported cache type)",
    "OLLAMA_FLASH_ATTENTION": _choice(_PARSE_BOOL),
    "OLLAMA_NUM_PARALLEL": _uint,
    "OLLAMA_CONTEXT_LENGTH": _uint,
    "OLLAMA_GPU_OVERHEAD": _uint,
    "OLLAMA_MAX_LOADED_MODELS": _uint,
    "OLLAMA_MAX_QUEUE": _uint,
    "OLLAMA_KEEP_ALIVE": _duration,
    "OLLAMA_LOAD_TIMEOUT": _duration,
    "OLLAMA_SCHED_SPREAD": _choice(_PARSE_BOOL),
    "LLAMA_ARG_FIT": _choice(("on", "off")),
    "LLAMA_ARG_FIT_TARGET": _fit_target,
}
# Read by the client (`ollama run`) as well as the server (cmd/cmd.go runCmd env docs).
OLLAMA_CLIENT_VARS = frozenset({"OLLAMA_HOST", "OLLAMA_NOHISTORY", "OLLAMA_EDITOR"})
# Per-model / per-request parameters that change memory (startLlamaServer in Ollama v0.33.0-rc2 llm/llama_server.go).
OLLAMA_PARAMETERS = {"num_ctx": 1, "num_gpu": -1, "num_batch": 1, "main_gpu": 0}
