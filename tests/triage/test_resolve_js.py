"""recompute.js `resolveModel` / `vllmBuild` against generator/kv/hf_ids.py, under Node: one rule for
which catalog record a log's model id names, on every id the corpora and the holdouts name and on the
hand-made cases of tests/test_hf_ids.py. Skipped where there is no `node`."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from generator.kv.calculator import calculator_catalog
from generator.kv.hf_ids import hf_id_index, vllm_build
from generator.load import load_dataset
from tests.hf_named import named_model_ids

from .test_corpus import ROOT

NODE = shutil.which("node")
SCRIPT = """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
(async () => {
  const R = await import(input.recompute);
  const out = input.ids.map((named) => {
    const found = R.resolveModel(named, input.catalog);
    const build = R.vllmBuild(input.catalog, found);
    return { found, repo: build ? build.repo : null, config: build ? build.hf_config : null };
  });
  process.stdout.write(JSON.stringify(out));
})();
"""
# Forms the corpora may not hold: Windows paths, hub cache folders, hf.co URLs with a quantization,
# shards, re-packs, Ollama tags past a catalog tag, and names that must not resolve.
CASES = [
    "Qwen/Qwen2.5-7B-Instruct", "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-AWQ/tree/main", "RedHatAI/Qwen3-8B-FP8-dynamic",
    "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/abc", "/data/models/Qwen/Qwen3-8B/", "Qwen3-235B-A22B-FP8",
    "/models/Llama-3.3-70B-Instruct-Q8_0-00001-of-00002.gguf", "qwen2.5-coder:7b", "qwen3:30b-a3b-q8_0", "gemma3:27b-it-qat",
    "qwen3:31b-q8_0", "gemma3", "gemma3:latest", "llama3.1:70b-instruct-q4_K_M", "gemma3:2b", r"D:\\models\\Qwen3-8B-AWQ", "hf.co/bartowski/Qwen3-32B-GGUF:Q4_K_M", "Qwen3-32B-UD-Q6_K_XL.gguf",
    "mlx-community/Qwen3-8B-4bit", "Intel/Qwen3-8B-int4-AutoRound", "someone/Qwen3-8B-abliterated-4bit", "Qwen/Qwen3-8B-Base-AWQ",
    "someone/-AWQ", "'meta-llama/Meta-Llama-3.1-8B-Instruct'", "Qwen/Qwen2.5-7B-Instruct-1M", "",
    "/root/.cache/modelscope/hub/Qwen/Qwen2___5-7B-Instruct", "Meta-Llama-3___1-70B-Instruct-AWQ-INT4", "Meta-Llama-3___1-8B-Instruct-GPTQ-Int4", "OpenVINO/Qwen3-8B-int4-ov",
    r"C:\\models\\Qwen3-32B-int8-ov", "Intel/Qwen3-8B-int4-mixed-AutoRound", "OPEA/Qwen3-32B-int4-AutoRound-awq-asym",
    "Qwen_Qwen3-1.7B-Q4_K_M.gguf", "hf.co/bartowski/Qwen_Qwen3-32B-GGUF:Q4_K_M", "someone_Qwen3-8B-Q4_K_M.gguf",
    "bartowski/meta-llama_Qwen3-8B-GGUF", "Qwen/Qwen2___5-7B-Instruct-1M",
    "mistral-small3.1:24b-instruct-2503-q4_K_M", "llama3", "llama3:70b", "llama3.1:405b", "deepseek-r1:iq1_s",
    # A family and size without the variant word, Ollama tags read as Hugging Face names, -MTP, repo:QUANT.
    "Qwen3-VL-235B", "qwen3-next-80B", "Qwen3-VL-30b", "Qwen3-30B", "Qwen/Qwen3-VL-8B", "google/gemma-4-26B-A4B",
    "/models/gemma-4-26B-A4B", "Mistral-Small-24B", "Qwen3-VL-33B", "Qwen3-VL-30B-A3B-AWQ", "Qwen3-VL-235B-A22B-Q4_K_M.gguf",
    "qwen3.6:27b-q4_K_M", "Qwen3.5:35b-a3b", "qwen2.5:1.5b", "qwen2.5-coder:14b-base-q2_K", "qwen3:235b", "qwen3-next:80b",
    "registry.ollama.ai/library/gpt-oss:20b", "https://ollama.com/library/qwen3.5:9b", "huihui_ai/glm-4.7-flash-abliterated:latest",
    "unsloth/Qwen3.6-35B-A3B-MTP-GGUF:UD-IQ3_XXS", "unsloth/MiniMax-M2.7-GGUF:UD-Q6_K_XL", "hf.co/unsloth/MiniMax-M2.7-GGUF:UD-Q4_K_M",
    "unsloth/gemma-3-27b-it-GGUF:Q8_0", "unsloth/gemma-3-27b-it-GGUF:Q5_K_M", "models/GLM-5-NVFP4-MTP", "someone/Qwen3-VL-8B-abliterated",
    "qwen3:0.6b-q8_0", "llama3.1:8b-text", "mistral-small3.2:24b", "llama3.1:8b-instruct-q8_0", "qwq:14b", "llama3:7b",
    "/root/.cache/huggingface/hub/models--Qwen--Qwen3-VL-8B/snapshots/abc", "/root/.cache/huggingface/hub/models--someone--Qwen3-VL-8B",
    # A variant's Ollama tag without a tag of its own (phi4), with the :latest Ollama gives it.
    "phi4:latest", "ollama/phi4", "registry.ollama.ai/library/deepseek-v3",
    "unsloth/Qwen3-30B-A3B-128K-GGUF", "Qwen3-235B-A22B-128K-Q4_K_M-00001-of-00003.gguf", "Phi-3-mini-128k",
    "/nas/qwen2_5-7b-instruct", "models/qwen2_5-7b-instruct-q4_k_m.gguf", "Qwen3_6-35B-A3B", "internlm2.5-7b-chat", "AFM-4_5B",
    "qwen2.5:7b-q4_K_M", "qwen2.5:7b-instruct-q4_K_M", "mistral:7b-instruct-v0.1-q4_0", "mistral:7b-text-v0.2", "qwen3:30b-a3b-instruct-2507-q4_K_M", "mistral:7b-instruct-q8_0",
    "command-r-plus.gguf", "gemma3.gguf", "phi4.gguf", "gemma4.gguf", "/home/models/DeepSeekV3", "KimiK2.5", "DeepSeekV4", "deepseek_v3", "gemma4-26b-a4b-it", "someone/internlm2.5-7b-chat-AWQ", "internlm2.5-7b-chat-Q4_K_M.gguf", "Llama-3-8B-Instruct-Q4_K_M.gguf", "Qwen2_5-1_5B-Instruct",
    # LiteLLM routes.
    "ollama_chat/llama3.2:latest", "ollama/gemma3", "ollama/gemma4:latest", "ollama/PetrosStav/gemma3-tools:4b", "hosted_vllm/Qwen/Qwen3-8B",
    "openai/Qwen/Qwen3-8B", "openai/gpt-oss-20b", "hosted_vllm/google/gemma-4-26B-A4B", "openai/google/gemma-4-26B-A4B",
    # Family numerals without their hyphen.
    "gemma4-26b-a4b-it", "/models/gemma4-31b-it", "llama3.2-3b-instruct", "gemma3-27b-it-AWQ", "gemma4-26b", "gemma4-12b-it",
    "gemma3-27b-it-abliterated", "qwen2-0.5b", "google/gemma4-26b-a4b-it", "glm4-9b",
    # GGUF-my-repo's single-quantization repositories and decimal-bit MLX quants.
    "someone/Qwen3-0.6B-Q8_0-GGUF", "/cache/someone/Qwen3-8B-Q4_K_M-GGUF", "someone/Qwen3-8B-abliterated-Q4_K_M-GGUF",
    "inferencerlabs/GLM-5-MLX-4.8bit", "/models/Qwen3-8B-MLX-6.5bit", "Qwen3-33B-MLX-6.5bit",
    # A name `ollama create` tagged latest: the name when it carries its size, never a library name alone.
    "gemma-3-27b-it-q4_0-QAT:latest", "Qwen3-8B-Q4_K_M:latest", "qwen3-8b:latest", "Qwen3-8B-abliterated:latest",
    "Qwen3-33B:latest", "glm-4.7-flash:latest", "qwen3:latest", "gemma-3-27b-it:q4_0",
    # Google's QAT builds.
    "/home/user/models/ggml-org/gemma-3-12b-it-qat-q4_0.gguf", "google/gemma-3-4b-it-qat-q4_0-gguf", "google/gemma-3-27b-it-qat-q4_0-unquantized",
    "unsloth/gemma-3-12b-it-qat-GGUF", "gemma-4-12b-it-qat-q4_0", "someone/gemma-3-12b-it-abliterated-qat-GGUF", "google/gemma-3-12b-pt-qat-q4_0-gguf",
    # ModelScope's host.
    "https://www.modelscope.cn/models/Qwen/Qwen3-8B", "modelscope.cn/Qwen/Qwen3-8B-GGUF:Q8_0", "modelscope.cn/google/gemma-4-26B-A4B",
    "modelscope.cn/Qwen/Qwen3-VL-8B", "modelscope.cn/OpenBMB/MiniCPM-V-4-gguf:Q6_K",
    "hf.co/unsloth/Qwen3-8B-GGUF:Q6_K", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "unsloth/Qwen3-8B-GGUF:Q8_0", "Qwen/Qwen3-8B-GGUF:Q4_K_M",
    "hf.co/bartowski/Qwen3-32B-GGUF:Q6_K",
    # A catalog owner written onto the name.
    "/QwenQwen3-14B-AWQ", "QwenQwen3-8B", "meta-llamaLlama-3.1-8B-Instruct", "googlegemma-3-27b-it", "QwenLong-L1-32B",
    "QwenQwen3-33B", "C:modelsQwenQwen3-8B", "nvidiaLlama-3.1-8B-Instruct",
    # Records added for issue 20.
    "ollama/granite3.3", "granite3.3:2b", "command-a", "CohereForAI/c4ai-command-a-03-2025", "Qwen2.5-Omni-7B",
    # Download and export forms: llama.cpp's cache file, a tag saved as a file, owner--name, folders below a repository, -KV.
    "Qwen_Qwen3-8B-GGUF_Qwen3-8B-Q4_K_M.gguf", "/home/u/.cache/llama.cpp/unsloth_gemma-3-27b-it-GGUF_gemma-3-27b-it-Q5_K_M.gguf",
    "qwen3:8b.gguf", "/home/u/models/qwen3:30b-a3b-q8_0.gguf", r"C:\\Users\\u\\models\\google--gemma-3-27b-it",
    "lmstudio/Qwen--Qwen3-8B-GGUF/Qwen3-8B-Q8_0.gguf", "/models/meta-llama/Llama-3.1-8B-Instruct/checkpoint-500", "/srv/Qwen/Qwen3-8B/main",
    "amd/Llama-3.1-8B-Instruct-FP8-KV", "NVIDIA-Nemotron-3-Nano-30B-A3B", "someone/NVIDIA-Nemotron-3-Nano-30B-A3B-AWQ",
    "/models/Qwen/Qwen3-8B-finetune/checkpoint-100", "someone_Qwen3-8B-abliterated-GGUF_Qwen3-8B-abliterated-Q4_K_M.gguf",
    "qwen3:31b.gguf", "someone--Qwen3-8B-abliterated", "/data/Qwen/Qwen3-33B/v1.0", "NVIDIA-Nemotron-3-Nano-30B",
    "Qwen3VL-30B-A3B-Thinking-Q8_0.gguf", "/models/Qwen2.5VL-7B-Instruct-Q4_K_M.gguf", "Qwen3VL-8B-Thinking-Q4_K_M.gguf",
    "Qwen3VL-8B-Instruct-abliterated-Q4_K_M.gguf", "Qwen3VL-8B-Instruct-Q4_K_M.gguf",
    # GGUF names without .gguf.
    "Qwen3.5-27B-Q4_K_M", "Qwen3-8B-UD-Q4_K_XL", "Qwen3-8B-IQ3_XXS", "gpt-oss-20b-MXFP4_MOE", "Qwen3-Coder-30B-A3B-Q4_K_M",
    "Qwen3-Coder-30B-A3B-Instruct-BF16-00001-of-00002", "Qwen3-8B-Base-Q4_K_M", "Qwen3-8B-abliterated-Q4_K_M", "gemma-3-27b-pt-Q4_K_M",
    "Qwen3-33B-Q4_K_M", "Qwen3VL-8B-Thinking-Q4_K_M", "someone/Qwen3-8B-abliterated-IQ3_XXS", "gpt-oss-21b-MXFP4_MOE",
    # -QuaRot, -hf, -i1, .partNofM, -DWQ, user namespaces, ollama://, docker_model_runner/, a version's dot as a hyphen.
    "/path/to/weight/Qwen3-8B-w8a8-QuaRot", "someone/Qwen3-8B-hf", "OpenGVLab/InternVL3-8B", "mradermacher/Qwen3-8B-i1-GGUF",
    "/models/Qwen3-8B.i1-Q4_K_M.gguf", "/models/Qwen3-8B.Q4_K_M.gguf.part1of2", "mlx-community/Qwen3-8B-4bit-DWQ",
    "pdevine/qwen3.6:35b-a3b-q8_0", "registry.ollama.ai/someone/qwen2.5-coder:32b-instruct-q8_0", "docker.io/ai/qwen3:8B-Q4_K_M",
    "docker_model_runner/ai/llama3.2:3B-Q4_K_M", "ollama://qwen3:8b", "kimi-k2-5", "/models/GLM-4-7-Flash", "llama-3-1-8b-instruct",
    "deepseek-v3-2-exp", "mistral-small-3-1-24b-instruct-2503", "someone/Qwen3-8B-abliterated-i1-GGUF", "Qwen3-33B.i1-Q4_K_M.gguf",
    "someone/Qwen3-8B-abliterated-hf", "Qwen3-8B-Base-hf", "someone/qwen3:8b-abliterated", "ai/gemma3", "ollama://deepseek-r1",
    "ollama/deepseek-r1", "ollama_chat/deepseek-r1", "kimi-k2-5-abliterated", "kimi-k2-7-coder", "qwen3-1-7b", "SmolLM3-3B", "qwen3-33b-2-5",
    r"C:\\models\\kimi-k2-5", "'kimi-k2-5'", "/srv/llama-3-2-3b-instruct/",
    "Llama-3-8B-Instruct", "someone/Llama-3-70B-Instruct-AWQ", "/models/llama-3-8b", "Llama-3-8B-Instruct-Gradient-1048k",
    "Llama-3-8B-64k", "Llama-3-33B", "Llama-3-8B-Instruct-abliterated", "meta-llama/Llama-3-8B-Instruct",
    # Kaggle Models mounts.
    "/kaggle/input/models/danielhanchen/gpt-oss-120b/transformers/default/1", "/kaggle/input/qwen2.5/transformers/7b-instruct/1",
    "/kaggle/input/models/google/gemma-2/transformers/gemma-2-9b-it/2", "/kaggle/input/models/someone/qwen3-8b-abliterated/transformers/default/1",
    "/kaggle/input/gemma/transformers/2b-it/3", r"C:\\kaggle\\input\\qwen2.5\\transformers\\7b-instruct\\1",
    # A listed library name with a quantization tag; a bare name both a repository's and a library's.
    "qwen3-coder-next:q4_K_M", "gemma3:q4_K_M", "mistral:q4_0", "qwen3:q4_K_M", "Qwen3-Coder-Next", "qwen3-coder-next", "qwen3-coder-next:latest",
    "devstral-small-2", "ollama/nemotron-3-super:latest",
]


def _ids() -> list[str]:
    holdout = [entry["id"] for name in ("model_ids_holdout.yaml", "model_ids_holdout2.yaml", "model_ids_holdout3.yaml",
                                                       "model_ids_holdout4.yaml", "model_ids_holdout5.yaml", "model_ids_holdout6.yaml",
                                                       "model_ids_holdout7.yaml", "model_ids_holdout8.yaml", "model_ids_holdout9.yaml",
                                                       "model_ids_holdout10.yaml")
               for entry in yaml.safe_load((ROOT / "tests/data" / name).read_text(encoding="utf-8"))["ids"]]
    return list(dict.fromkeys([*named_model_ids(ROOT), *holdout, *CASES]))


@pytest.mark.skipif(NODE is None, reason="needs node to run templates/static/recompute.js")
def test_the_page_resolves_every_model_id_as_python_does(tmp_path) -> None:
    dataset = load_dataset(ROOT)
    index = hf_id_index(dataset.models)
    shutil.copy(ROOT / "templates/static/recompute.js", tmp_path / "recompute.mjs")
    ids = _ids()
    payload = {"recompute": str(tmp_path / "recompute.mjs"), "catalog": calculator_catalog(dataset), "ids": ids}
    run = subprocess.run([NODE, "-e", SCRIPT], input=json.dumps(payload), capture_output=True, text=True, timeout=300, check=True)
    resolved = 0
    for named, js in zip(ids, json.loads(run.stdout), strict=True):
        found = index.resolve(named) if named else None
        expected = None if found is None else {"model_id": found.model_id, "variant_id": found.variant_id,
                                               "same_architecture_only": found.same_architecture_only}
        assert js["found"] == expected, named
        build = vllm_build(dataset.models, found)
        assert js["repo"] == (build.repo if build else None), named
        assert js["config"] == (json.loads(json.dumps(build.hf_config)) if build else None), named
        resolved += found is not None
    assert resolved >= 30
