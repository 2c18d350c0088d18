"""Download and export forms of a model id (llama.cpp's cache, Ollama exports, app folders) resolve as tests/test_hf_ids.py's do."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.kv.hf_ids import HfIdIndex, Resolved, hf_id_index
from generator.load import load_dataset

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def index() -> HfIdIndex:
    return hf_id_index(load_dataset(REPO).models)


# Download and export forms (issue 20, ids8; seen among the misses of holdout…holdout6, so not blind there): llama.cpp's
# owner_repo_file cache name, an Ollama tag saved as a .gguf file, owner--name folders without models--, an owner/name
# folder with a release or checkpoint folder below it, -KV, and a catalog name without its packaging word.
@pytest.mark.parametrize(("named", "model", "variant", "same_architecture_only"), [
    ("Qwen_Qwen3-8B-GGUF_Qwen3-8B-Q4_K_M.gguf", "qwen3-8b", "q4-k-m", False),
    ("/home/u/.cache/llama.cpp/unsloth_gemma-3-27b-it-GGUF_gemma-3-27b-it-Q5_K_M.gguf", "gemma-3-27b-it", None, False),
    ("qwen3:8b.gguf", "qwen3-8b", None, True),
    ("/home/u/models/qwen3:30b-a3b-q8_0.gguf", "qwen3-30b-a3b", None, True),
    (r"C:\Users\u\models\google--gemma-3-27b-it", "gemma-3-27b-it", None, False),
    ("lmstudio/Qwen--Qwen3-8B-GGUF/Qwen3-8B-Q8_0.gguf", "qwen3-8b", "q8-0", False),
    ("/models/meta-llama/Llama-3.1-8B-Instruct/checkpoint-500", "llama-3.1-8b-instruct", None, True),
    ("/srv/Qwen/Qwen3-8B/main", "qwen3-8b", None, True),
    ("amd/Llama-3.1-8B-Instruct-FP8-KV", "llama-3.1-8b-instruct", None, True),
    ("NVIDIA-Nemotron-3-Nano-30B-A3B", "nemotron-3-nano-30b-a3b", None, True),
    ("someone/NVIDIA-Nemotron-3-Nano-30B-A3B-AWQ", "nemotron-3-nano-30b-a3b", None, True),
    # Qwen's GGUF files write Qwen3VL for Qwen3-VL (Qwen/Qwen3-VL-8B-Instruct-GGUF/Qwen3VL-8B-Instruct-Q4_K_M.gguf).
    ("Qwen3VL-30B-A3B-Thinking-Q8_0.gguf", "qwen3-vl-30b-a3b-thinking", None, True),
    ("/models/Qwen2.5VL-7B-Instruct-Q4_K_M.gguf", "qwen2.5-vl-7b-instruct", None, True),
    # unsloth's -128K builds: YaRN on, the base model's layers and heads.
    ("unsloth/Qwen3-30B-A3B-128K-GGUF", "qwen3-30b-a3b", None, True),
    ("/models/Qwen3-235B-A22B-128K-GGUF/Q4_K_M/Qwen3-235B-A22B-128K-Q4_K_M-00001-of-00003.gguf", "qwen3-235b-a22b", None, True),
    ("hf.co/unsloth/Qwen3-8B-128K-GGUF:UD-Q4_K_XL", "qwen3-8b", None, True),
    # A version's dot written as `_`, by readers (Qwen2_5-7B-Instruct) and by repositories (internlm2_5-7b-chat), both ways.
    ("/nas/hf_models/qwen2_5-7b-instruct", "qwen2.5-7b-instruct", None, True),
    ("models/qwen2_5-7b-instruct-q4_k_m.gguf", "qwen2.5-7b-instruct", None, True),
    ("Qwen3_6-35B-A3B", "qwen3.6-35b-a3b", None, True),
    ("Llama-3_3-70B-Instruct", "llama-3.3-70b-instruct", None, True),
    ("internlm2.5-7b-chat", "internlm2.5-7b-chat", None, True),
    ("someone/internlm2.5-7b-chat-AWQ", "internlm2.5-7b-chat", None, True),
    # A GGUF file named by a catalog name's other spelling (without its packaging word, without Meta-, dotted).
    ("internlm2.5-7b-chat-Q4_K_M.gguf", "internlm2.5-7b-chat", None, True),
    ("Llama-3-8B-Instruct-Q4_K_M.gguf", "llama-3-8b-instruct", None, True),
    ("/models/NVIDIA-Nemotron-3-Nano-30B-A3B-Q4_K_M.gguf", "nemotron-3-nano-30b-a3b", None, True),
    # An Ollama tag past a listed name whose flavour names a record itself: that record, not the one the name lists.
    ("mistral:7b-instruct-v0.1-q4_0", "mistral-7b-instruct-v0.1", None, True),
    ("mixtral:8x7b-instruct-v0.1-q4_K_M", "mixtral-8x7b-instruct-v0.1", None, True),
    ("qwen3:30b-a3b-instruct-2507-q4_K_M", "qwen3-30b-a3b-instruct-2507", None, True),
    ("mistral:7b-instruct-q8_0", "mistral-7b-instruct-v0.3", None, True),
    ("qwen2.5:7b-q4_K_M", "qwen2.5-7b-instruct", None, True),  # the library's instruct model, not the Qwen2.5-7B base record
    ("qwen2.5:7b-instruct-q4_K_M", "qwen2.5-7b-instruct", None, True),
    # An Ollama library name saved as a file, read as the name.
    ("../../ollama_gguf/gguf/command-r-plus.gguf", "c4ai-command-r-plus", None, True),
    ("gemma3.gguf", "gemma-3-4b-it", None, True),
    ("phi4.gguf", "phi-4", None, True),
    # A name run together where the catalog's has a hyphen between two letters.
    ("/home/models/DeepSeekV3", "deepseek-v3", None, True),
    ("KimiK2.5", "kimi-k2.5", None, True),
    ("/models/MiniMaxM2.7", "minimax-m2.7", None, True),
])
def test_download_and_export_forms_resolve(index: HfIdIndex, named: str, model: str, variant: str | None, same_architecture_only: bool) -> None:
    assert index.resolve(named) == Resolved(model, variant, same_architecture_only)


@pytest.mark.parametrize("named", [
    "/models/Qwen/Qwen3-8B-finetune/checkpoint-100",  # the folder is not a catalog repository
    "someone_Qwen3-8B-abliterated-GGUF_Qwen3-8B-abliterated-Q4_K_M.gguf",
    "qwen3:31b.gguf",  # a size the catalog has no tag or record for
    "someone--Qwen3-8B-abliterated",
    "/data/Qwen/Qwen3-33B/v1.0",
    "NVIDIA-Nemotron-3-Nano-30B",  # the active size is part of the name
    "Qwen3VL-8B-Thinking-Q4_K_M.gguf",  # the catalog has no 8B Thinking record
    "Qwen3VL-8B-Instruct-abliterated-Q4_K_M.gguf",
    "Qwen/Qwen2.5-7B-Instruct-1M",  # Qwen's own 1M-context model, not a build of Qwen2.5-7B-Instruct
    "Phi-3-mini-128k",  # the 128k is part of the name (Phi-3-mini-128k-instruct)
    "mistral:7b-text-v0.2", "mistral:7b-instruct-v0.4-q4_0",  # a version the listed record is not, and no record is
    "gemma4.gguf", "model.gguf",  # a library name no record lists; no name
    "DeepSeekV4", "KimiK2.5-abliterated", "deepseek_v3",  # another version; a fine-tune; an architecture's model_type
    "AFM-4_5B", "Qwen2_5-1_5B-Instruct",  # `_` in a decimal size is not read
    "Qwen3_6-35B-A3B-Uncensored-IQ2_M", "Llama-3_3-Nemotron-Super-49B-v1",  # a fine-tune; a model the catalog lacks
])
def test_download_and_export_forms_reach_no_other_checkpoint(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# A GGUF file's name without .gguf, as llama-server aliases and apps name a model (model=Qwen3.5-27B-Q4_K_M in the paste
# corpus; llama-quantize's type names, MXFP4_MOE among them): read as that file.
@pytest.mark.parametrize(("named", "model", "variant", "same_architecture_only"), [
    ("Qwen3.5-27B-Q4_K_M", "qwen3.5-27b", None, False),
    ("Qwen3-8B-UD-Q4_K_XL", "qwen3-8b", None, False),
    ("Qwen3-8B-IQ3_XXS", "qwen3-8b", None, False),
    ("gpt-oss-20b-MXFP4_MOE", "gpt-oss-20b", None, False),
    ("Qwen3-Coder-30B-A3B-Instruct-BF16-00001-of-00002", "qwen3-coder-30b-a3b-instruct", None, False),
    ("Qwen3-Coder-30B-A3B-Q4_K_M", "qwen3-coder-30b-a3b-instruct", None, True),
])
def test_a_gguf_name_without_its_extension_resolves(index: HfIdIndex, named: str, model: str, variant: str | None,
                                                     same_architecture_only: bool) -> None:
    assert index.resolve(named) == Resolved(model, variant, same_architecture_only)


@pytest.mark.parametrize("named", [
    "Qwen3-8B-Base-Q4_K_M", "Qwen3-8B-abliterated-Q4_K_M", "gemma-3-27b-pt-Q4_K_M", "Qwen3-33B-Q4_K_M",
    "Qwen3VL-8B-Thinking-Q4_K_M", "someone/Qwen3-8B-abliterated-IQ3_XXS", "gpt-oss-21b-MXFP4_MOE",
])
def test_a_gguf_name_without_its_extension_reaches_no_other_checkpoint(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# A model a user named with `ollama create` from a file or folder carries Ollama's default tag, latest
# (gemma-3-27b-it-q4_0-QAT:latest): read as the name when that carries a size, as any bare name is read.
@pytest.mark.parametrize(("named", "model", "variant", "same_architecture_only"), [
    ("gemma-3-27b-it-q4_0-QAT:latest", "gemma-3-27b-it", None, True),
    ("Qwen3-8B-Q4_K_M:latest", "qwen3-8b", "q4-k-m", False),
    ("Qwen3-8B:latest", "qwen3-8b", None, False),
])
def test_a_created_name_with_the_default_tag_resolves(index: HfIdIndex, named: str, model: str, variant: str | None,
                                                      same_architecture_only: bool) -> None:
    assert index.resolve(named) == Resolved(model, variant, same_architecture_only)


@pytest.mark.parametrize("named", [
    "glm-4.7-flash:latest", "gemma4:latest", "qwen3:latest",  # a library name alone: its default size is not said
    "Qwen3-8B-abliterated:latest", "Qwen3-33B:latest", "gemma-3-27b-pt-qat:latest", "Qwen3-8B:q4_0",
])
def test_a_created_name_with_the_default_tag_reaches_no_other_checkpoint(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# GGUF-my-repo's `{username}/{MODEL_NAME}-{q_method}-GGUF` holds one file of that quantization: read as that file's name.
# A mixed-precision MLX quant names its average bits with a decimal (-MLX-4.8bit): a re-pack, the architecture alone.
@pytest.mark.parametrize(("named", "model", "variant", "same_architecture_only"), [
    ("someone/Qwen3-0.6B-Q8_0-GGUF", "qwen3-0.6b", "q8-0", False),
    ("/var/cache/huggingface/someone/Qwen3-8B-Q4_K_M-GGUF", "qwen3-8b", "q4-k-m", False),
    ("inferencerlabs/GLM-5-MLX-4.8bit", "glm-5", None, True),
    ("/models/Qwen3-8B-MLX-6.5bit", "qwen3-8b", None, True),
])
def test_a_single_quant_repack_resolves(index: HfIdIndex, named: str, model: str, variant: str | None,
                                        same_architecture_only: bool) -> None:
    assert index.resolve(named) == Resolved(model, variant, same_architecture_only)


@pytest.mark.parametrize("named", [
    "someone/Qwen3-8B-abliterated-Q4_K_M-GGUF", "someone/Qwen3-33B-Q8_0-GGUF", "someone/Qwen3-8B-Base-Q4_K_M-GGUF",
    "someone/Qwen3-8B-abliterated-MLX-4.5bit", "Qwen3-33B-MLX-6.5bit",
])
def test_a_single_quant_repack_reaches_no_other_checkpoint(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# Forms read after holdout9's and holdout10's misses (ids13; those two files are not blind to them): -QuaRot (msModelSlim's
# rotated quants) and -hf (Transformers-format copies) as packaging words, mradermacher's -i1 imatrix quants and .partNofM
# splits, mlx-lm's -DWQ, a user's namespace before an Ollama-style name:size tag (Ollama pushes, Docker Model Runner's ai/),
# RamaLama's ollama:// transport, and a version's dot written as a hyphen (DNS-label names).
@pytest.mark.parametrize(("named", "model", "variant", "same_architecture_only"), [
    ("/path/to/weight/Qwen3-8B-w8a8-QuaRot", "qwen3-8b", None, True),
    ("someone/Qwen3-8B-hf", "qwen3-8b", None, True),
    ("OpenGVLab/InternVL3-8B", "internvl3-8b-hf", None, True),
    ("mradermacher/Qwen3-8B-i1-GGUF", "qwen3-8b", None, True),
    ("/models/Qwen3-8B.i1-Q4_K_M.gguf", "qwen3-8b", None, False),
    ("/models/Qwen3-8B.Q4_K_M.gguf.part1of2", "qwen3-8b", None, False),
    ("mlx-community/Qwen3-8B-4bit-DWQ", "qwen3-8b", None, True),
    ("pdevine/qwen3.6:35b-a3b-q8_0", "qwen3.6-35b-a3b", None, True),
    ("registry.ollama.ai/someone/qwen2.5-coder:32b-instruct-q8_0", "qwen2.5-coder-32b-instruct", None, True),
    ("docker.io/ai/qwen3:8B-Q4_K_M", "qwen3-8b", None, True),
    ("docker_model_runner/ai/llama3.2:3B-Q4_K_M", "llama-3.2-3b-instruct", None, True),
    ("ollama://qwen3:8b", "qwen3-8b", "q4-k-m", False),
    ("kimi-k2-5", "kimi-k2.5", None, True),
    ("/models/GLM-4-7-Flash", "glm-4.7-flash", None, True),
    ("llama-3-1-8b-instruct", "llama-3.1-8b-instruct", None, True),
    ("deepseek-v3-2-exp", "deepseek-v3.2-exp", None, True),
    ("mistral-small-3-1-24b-instruct-2503", "mistral-small-3.1-24b-instruct-2503", None, True),
    # Meta-Llama-3 without Meta-, as Meta names Llama 3.1 on and re-packers write Llama 3 (turboderp/Llama-3-8B-Instruct-exl2).
    ("Llama-3-8B-Instruct", "llama-3-8b-instruct", None, True),
    ("someone/Llama-3-8B-Instruct-GPTQ-Int4", "llama-3-8b-instruct", None, True),
    ("Llama-3-70B", "llama-3-70b-instruct", None, True),
    ("/models/llama-3-8b", "llama-3-8b-instruct", None, True),
])
def test_ids13_forms_resolve(index: HfIdIndex, named: str, model: str, variant: str | None, same_architecture_only: bool) -> None:
    assert index.resolve(named) == Resolved(model, variant, same_architecture_only)


@pytest.mark.parametrize("named", [
    "someone/Qwen3-8B-abliterated-i1-GGUF", "Qwen3-33B.i1-Q4_K_M.gguf", "someone/Qwen3-8B-abliterated-hf", "Qwen3-8B-Base-hf",
    "someone/qwen3:8b-abliterated", "huihui_ai/qwen3-abliterated:8b", "ai/gemma3", "ollama://deepseek-r1",
    "ollama/deepseek-r1", "registry.ollama.ai/library/deepseek-r1", "kimi-k2-5-abliterated", "kimi-k2-7-coder", "qwen3-1-7b", "SmolLM3-3B", "qwen3-33b-2-5",
    "Llama-3-8B-Instruct-Gradient-1048k", "Llama-3-8B-64k", "Llama-3-33B", "Llama-3-8B-Instruct-abliterated",
])
def test_ids13_forms_reach_no_other_checkpoint(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# A Kaggle Models mount (kaggle-api's docs/models_metadata.md, ${PATH}; and under models/<owner>/ in a notebook's vLLM log): the
# variation, the slug and variation as one name, or the slug, as the architecture alone; a slug or variation naming no record, none.
@pytest.mark.parametrize(("named", "model"), [
    ("/kaggle/input/models/danielhanchen/gpt-oss-120b/transformers/default/1", "gpt-oss-120b"),
    ("/kaggle/input/qwen2.5/transformers/7b-instruct/1", "qwen2.5-7b-instruct"),
    ("/kaggle/input/models/google/gemma-2/transformers/gemma-2-9b-it/2", "gemma-2-9b-it"),
    ("/kaggle/input/models/metaresearch/llama-3.1/transformers/8b-instruct/2", "llama-3.1-8b-instruct"),
])
def test_a_kaggle_models_mount_reads_as_its_names(index: HfIdIndex, named: str, model: str) -> None:
    assert index.resolve(named) == Resolved(model, None, True)


@pytest.mark.parametrize("named", [
    "/kaggle/input/models/someone/qwen3-8b-abliterated/transformers/default/1", "/kaggle/input/gemma/transformers/2b-it/3",
    "/kaggle/input/models/someone/gpt-oss-120b/transformers/default",
])
def test_a_kaggle_models_mount_naming_no_record_resolves_to_none(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


# A listed Ollama library name with a tag that is only a quantization (library tags mix sizes and quantizations: `3b`, `q4_K_M`,
# `q8_0`): the library's default, as the architecture alone. An unlisted name's default is not said, and a name that is no library
# name is not read as one.
@pytest.mark.parametrize(("named", "model"), [
    ("qwen3-coder-next:q4_K_M", "qwen3-coder-next"), ("gemma3:q4_K_M", "gemma-3-4b-it"), ("mistral:q4_0", "mistral-7b-instruct-v0.3"),
    ("devstral-small-2:q8_0", "devstral-small-2-24b-instruct-2512"), ("ollama/nemotron-3-super:latest", "nemotron-3-super-120b-a12b"),
])
def test_a_listed_library_name_with_a_quantization_tag_is_its_default(index: HfIdIndex, named: str, model: str) -> None:
    assert index.resolve(named) == Resolved(model, None, True)


@pytest.mark.parametrize("named", ["deepseek-r1:iq1_s", "qwen3:q4_K_M", "Qwen3-8B:q4_0", "qwen3-coder-next:ud-q4_k_xl"])
def test_a_quantization_tag_on_an_unlisted_name_resolves_to_none(index: HfIdIndex, named: str) -> None:
    assert index.resolve(named) is None


def test_a_bare_catalog_repository_name_that_is_also_a_library_name_is_the_repository(index: HfIdIndex) -> None:
    # qwen3-coder-next is Ollama's library name and Qwen/Qwen3-Coder-Next's own name: bare, the repository; as a tag, the library.
    assert index.resolve("Qwen3-Coder-Next") == Resolved("qwen3-coder-next", None, False)
    assert index.resolve("qwen3-coder-next:latest") == Resolved("qwen3-coder-next", None, True)
