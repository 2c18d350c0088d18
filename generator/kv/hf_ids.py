"""Hugging Face model ids, as logs and pastes name them, resolved to catalog records.

A log names a model the way the reader started it: `Qwen/Qwen2.5-7B-Instruct-AWQ`, a local
copy (`/models/Qwen2-7B-Instruct`, `C:\\models\\Qwen3-8B`), a hub URL, a hub cache folder
(`models--Qwen--Qwen3-8B`), a GGUF file (sharded or not) or an Ollama tag. Matching is exact but
forgiving of the wrapping: case, a URL or path prefix and a trailing slash are ignored; a bare
name (no owner) matches only when exactly one catalog repository carries that name. Nothing is
matched by similarity, so a fine-tune or a different size never lands on the wrong record.

Rules past exact names, each setting `same_architecture_only` (the config.json is the base
model's, so the KV bytes per token are the same; the weights are not):
- a re-packer's repository (any owner) named like a catalog model's own repository plus
  quantization or packaging words (`RedHatAI/Qwen3-32B-FP8-dynamic`, `unsloth/gemma-3-27b-it-bnb-4bit`,
  `mlx-community/Qwen3-8B-4bit`, `inferencerlabs/GLM-5-MLX-4.8bit`, `bartowski/Qwen3-8B-GGUF`, `DeepSeek-V3.2-w8a8-QuaRot`, `glm-4.5-air-hf`);
- a GGUF file named like a catalog model plus a quantization (`Qwen3-8B-UD-Q6_K_XL.gguf`), and a GGUF-my-repo
  repository, which holds one such file (`someone/Qwen3-0.6B-Q8_0-GGUF`, read as `Qwen3-0.6B-Q8_0.gguf`);
- a name carrying its owner before an underscore, as bartowski's re-packs do (`Qwen_Qwen3-8B-Q4_K_M.gguf`,
  `bartowski/Qwen_Qwen3-8B-GGUF`): only the catalog repository's own owner counts;
- a local copy ModelScope downloaded, whose folder spells each `.` of the name as `___` (`Qwen2___5-7B-Instruct`);
- an Ollama library name the catalog lists for a model (`gemma3`, `llama3.1:70b`, sourced per
  record in `ollama_names`), and an Ollama tag whose `name:size` is a catalog variant's tag or a
  listed library name, with another quantization or flavour after it (`qwen3:30b-a3b-q8_0` for the
  catalog's `qwen3:30b`), or a library name listed without a size at the size its record's name
  carries (`mistral-small3.2:24b-instruct-2506-q8_0` for Mistral-Small-3.2-24B-Instruct-2506); any of
  these pulled through its registry path (`registry.ollama.ai/library/gpt-oss:20b`: the default host and
  namespace of an Ollama name, https://github.com/ollama/ollama/blob/fb30760996871fa9460115c753afd2c60d4ab0f7/types/model/name.go);
- a family and size without the variant word (`Qwen3-VL-235B`, `qwen3-next-80B`, `Qwen3-VL-30B-A3B`): the
  records whose name is that name plus only an MoE active size and variant words (Instruct, it, Chat,
  Thinking) and no release date; one record, or several with the same config.json of which exactly one
  is the default (not Thinking). A hub id under a catalog repository's own owner is that owner's other
  checkpoint (google/gemma-4-26B-A4B is the pretrained one), so this rule does not read it;
- an Ollama tag `name:size` the catalog does not list, read as the Hugging Face name it abbreviates
  (library tags are `name:size`, as the model library table of
  https://github.com/ollama/ollama/blob/379fd64fa837e51eddeda6c32f5c812d912a6751/README.md shows:
  `gemma3:27b` for Gemma 3 27B, `llama3.1:405b` for Llama 3.1 405B): `qwen3.6:27b-q4_K_M` reads as
  Qwen3.6-27B, `Qwen3.5:35b-a3b` as Qwen3.5-35B-A3B, only when that name is a record's own or a family
  and size as above. A tag without a size is not read (the same table serves a 7B distill as
  `deepseek-r1`). Only a size, an MoE active size, Instruct and quantization words may follow; a name
  that lands on a base checkpoint of a family whose other records carry Instruct (qwen2.5:1.5b, whose
  library model is the instruct one) does not resolve;
- a LiteLLM provider route before the name (`ollama/gemma3`, `ollama_chat/llama3.2:latest`,
  `hosted_vllm/Qwen/Qwen3-8B`, `openai/Qwen/Qwen3-8B`): LiteLLM's `ollama/` and `ollama_chat/` routes take an
  Ollama name (https://docs.litellm.ai/docs/providers/ollama, which recommends ollama_chat; `ollama/llama2:13b` in
  https://github.com/BerriAI/litellm/blob/02d7bc44e340c06fd39ae742a8a654a14f7667de/docs/my-website/docs/providers/ollama.md),
  `hosted_vllm/` the served Hugging Face id (https://docs.litellm.ai/docs/providers/vllm), and `openai/` any
  OpenAI-compatible server's, e.g. `openai/facebook/opt-125m` for a hosted vLLM in
  https://github.com/BerriAI/litellm/blob/058813da76bbf7daf627a16b7645cc5422634c5a/docs/my-website/docs/providers/vllm.md.
  The route is dropped and the rest read as above; `openai/` only before `owner/name`, since `openai/gpt-oss-20b`
  is itself a Hugging Face id. Ollama's `:latest` stays what it was: a listed library name (its default, sourced
  per record in `ollama_names`), and nothing else;
- a family numeral written onto the family word, as Ollama's library spells families (`gemma4`, `llama3.2`,
  `qwen2.5vl`, the gemma4 tags of the records' `ollama_names`) and apps reuse for a model's name
  (`gemma4-26b-a4b-it`, `llama3.2-3b-instruct`): read with the hyphen Hugging Face puts there (gemma-4-26B-A4B-it),
  only when the name as written matches nothing, and then only through the rules above that name one record (a
  record's own name, a re-pack of it, or a family and size only one record, or one default, fits). A name read
  this way is a spelling, not a repository, so it resolves to the architecture alone;
- a catalog repository's owner written onto the name with nothing between (`QwenQwen3-14B-AWQ`), as a Windows
  path `\\Qwen\\Qwen3-14B-AWQ` reads once a shell has taken its backslashes for escapes: read as owner/name by the
  rules above, only when the name as written matches nothing and exactly one record answers; a spelling, so the architecture alone;
- downloads and exports named after what they hold: llama.cpp's cache file `owner_repo_file.gguf` (the file, else
  the repository), an Ollama tag saved as a file (`qwen3:8b.gguf`, read as the tag), an `owner--name` folder without
  the hub cache's `models--` prefix, and a catalog repository's `owner/name` folder with a release or checkpoint
  folder below it (`/models/Qwen/Qwen3-8B/v1.0`, the architecture alone);
- Qwen's own GGUF file names, which write the family and VL as one word (`Qwen3VL-8B-Instruct-Q4_K_M.gguf` for
  Qwen3-VL-8B-Instruct), read with the hyphen, as the architecture alone;
- a catalog repository named with a packaging word (`nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16`) answers to its
  name without it (`NVIDIA-Nemotron-3-Nano-30B-A3B`) and re-packs of that name, as the architecture alone;
- a name pushed under a user's namespace, `namespace/name:size…` (`maryasov/qwen2.5-coder:32b-instruct-q8_0` on Ollama,
  `ai/llama3.2:3B-Q4_K_M` for Docker Model Runner), read as the tag `name:size…` by the rules above, as the architecture
  alone; RamaLama's `ollama://` transport before an Ollama name, and LiteLLM's `docker_model_runner/` route, are dropped;
- a version's dot written as a hyphen, as a name that must be a DNS label spells it (`kimi-k2-5`, `GLM-4-7-Flash`,
  `llama-3-1-8b-instruct`): only a one-digit part after a version number and before `-` or the end, only when the name as
  written matches nothing, and not when reading the hyphen as a decimal size's point (`qwen3-1-7b` as Qwen3-1.7B) names
  a record too; a spelling, so the architecture alone;
- Meta-Llama-3's names without Meta- (`Llama-3-8B-Instruct`, `llama3-8b`), as Meta names Llama 3.1 on and re-packers
  write Llama 3: a spelling, so the architecture alone;
- mradermacher's imatrix quants (`Qwen3-8B.i1-Q4_K_M.gguf`, `mradermacher/Qwen3-8B-i1-GGUF`) and a GGUF file's split
  parts after `.gguf` (`.gguf.part1of2`), read as the file;
- `owner/repo:QUANT` (llama.cpp's `-hf`, Ollama's `hf.co/`) for a GGUF repository the catalog lists:
  the variant of that quantization, or when the catalog has no file of it, the base architecture (never another quantization's build).
- a version's dot written as `_` (`Qwen2_5-7B-Instruct`, `Qwen3_6-35B-A3B`), read as the hyphen above, and a repository that
  writes it so (`internlm2_5-7b-chat`) answering to the dot; a GGUF file named by a catalog name's other spelling
  (`Llama-3-8B-Instruct-Q4_K_M.gguf`); unsloth's `-128K` GGUF builds (`unsloth/Qwen3-30B-A3B-128K-GGUF`): the architecture alone;
- a name run together where the catalog's has a hyphen between two letters (`DeepSeekV3`, `KimiK2.5`): one record, the architecture alone;
- a variant's Ollama tag without a tag (`phi4`) also as `phi4:latest`, the tag Ollama gives it; an Ollama library name saved
  as a file (`command-r-plus.gguf`), read as the name, as the architecture alone; a tag past a listed name whose words name a
  record themselves (`mistral:7b-instruct-v0.1-q4_0`) is that record, and one with a version no record has is none;
- a Kaggle Models mount, `/kaggle/input/<model_slug>/<framework>/<variation_slug>/<version>` (`${PATH}` in
  https://github.com/Kaggle/kaggle-api/blob/1744cda19d358299f86f219f7e0cdd702ca8f10d/docs/models_metadata.md), in notebooks under `models/<owner>/`
  too (`…/models/danielhanchen/gpt-oss-120b/transformers/default/1`, https://github.com/jxm020202/aimo3/blob/e72794e9d108610470db8e7bbe7925bedab88742/vllm_server.txt);
- a listed library name with a tag that is only a quantization (`qwen3-coder-next:q4_K_M`; library tags mix sizes and quantizations, "`3b`,
  `q4_K_M`, `3b-instruct-q4_K_M`, `q8_0`", https://github.com/atomantic/PortOS/issues/1539): the library's default, the architecture alone.

This module is the one place the rule lives: the triage CLI and `kvtriage kv` call it, and the search
page's recompute.js (`resolveModel`) follows it step for step, held to it by tests/triage/test_resolve_js.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from generator.engine.from_log import ModelConfig
from generator.engine.pairs import variant_config
from generator.schema import Model

# The hub's host before owner/name. modelscope.cn/owner/name is ModelScope's hub and the host Ollama pulls its GGUF
# repositories from, `ollama run modelscope.cn/Qwen/Qwen2.5-3B-Instruct-GGUF:Q3_K_M`
# (https://blog.csdn.net/2509_92058858/article/details/148007601, a copy of ModelScope's guide; an Ollama name
# is host/namespace/model:tag, https://github.com/ollama/ollama/blob/fb30760996871fa9460115c753afd2c60d4ab0f7/types/model/name.go):
# read as the owner/name it hosts, so a catalog owner's other checkpoint stays out as it does on the Hugging Face hub.
_URL_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co|modelscope\.cn)/(?:models/)?", re.I)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHARD = re.compile(r"-\d{5}-of-\d{5}(?=\.gguf$)", re.I)
_SHARD_BARE = re.compile(r"-\d{5}-of-\d{5}$")
_GGUF_PART = re.compile(r"(?<=\.gguf)\.part\d+of\d+$", re.I)
# GGUF-my-repo uploads one quantization of a model to `{username}/{MODEL_NAME}-{q_method}-GGUF`
# (https://github.com/pcuenca/gguf-my-repo/blob/4a9cc9a7d4cbfb625d84d89234bfd5e036ceb7a3/app.py): without -GGUF, a GGUF file's name.
_GGUF_MY_REPO = re.compile(r"(?<=[A-Za-z0-9_])-GGUF$", re.I)
# The quantization a GGUF file name ends with (Model-Q4_K_M.gguf, model.Q8_0.gguf, model-UD-IQ1_S.gguf), llama-quantize's
# type names (MXFP4_MOE among them: https://github.com/ggml-org/llama.cpp/blob/03161a4eb9a2ec66ef97789f347c5a28279f06ea/tools/quantize/quantize.cpp).
# mradermacher's weighted (imatrix) quants write i1 before the type and split a large file into parts after .gguf:
# DeepSeek-V2-Chat-0628.i1-Q2_K.gguf.part1of2 in mradermacher/DeepSeek-V2-Chat-0628-i1-GGUF
# (https://huggingface.co/mradermacher/DeepSeek-V2-Chat-0628-i1-GGUF/raw/8fec412c3e03a8f00bcc3bc0215fc2afa01797a2/README.md).
_QUANT_SUFFIX = re.compile(r"[-._](?:UD-|i1-)?(?:I?Q\d[A-Z0-9_]*|TQ\d_\d|F16|BF16|F32|FP16|MXFP4(?:_MOE)?)$", re.I)
# One word re-packers append to the base repository's name, e.g. the parts of -GPTQ-Int4,
# -FP8-dynamic, -W4A16-G128, -unsloth-bnb-4bit, -MLX-4bit, -GGUF, -AWQ-INT4, .quantized.w8a8,
# -int4-AutoRound, -int4-mixed-AutoRound, -int4-AutoRound-awq-sym (Intel, OPEA), -int8-ov (OpenVINO), -w8a8-QuaRot
# (Ascend's msModelSlim rotates the weights before quantizing them, its `quarot` step: "MiniMax-M2.7-w8a8-QuaRot | W8A8
# quantized version" of MiniMax-M2.7 in https://github.com/vllm-project/vllm-ascend/blob/916af79f7992aadf2e307b252df60038f42adc4c/docs/source/tutorials/models/MiniMax-M2.7.md),
# -i1 (mradermacher's imatrix quants, below), -DWQ (mlx-lm's distilled weight quantization, "mlx_lm.dwq --model Qwen/Qwen3-0.6B",
# https://github.com/ml-explore/mlx-lm/blob/5b00d5b087fa1bec22ecf3fc56f6fd54efd6026e/mlx_lm/LEARNED_QUANTS.md; catalystsec/MiniMax-M2-4bit-DWQ),
# -hf (the same weights in the Transformers format: meta-llama/Llama-2-7b-hf is "the base 7B model in HF transformers
# format" beside meta-llama/Llama-2-7b, "in original Llama format", https://huggingface.co/collections/meta-llama/llama-2-family).
# -128K (unsloth's GGUF builds with YaRN turned on for a longer context, "YaRN 128K native versions" of Qwen 2.5 Coder, "just GGUF
# with no finetuning done", https://huggingface.co/unsloth/Qwen2.5-Coder-32B-Instruct-128K-GGUF/discussions/1; unsloth/Qwen3-235B-A22B-128K-GGUF
# beside unsloth/Qwen3-235B-A22B-GGUF, https://huggingface.co/danielhanchen): the base model's layers and heads, so its KV bytes per
# token. Read only on a GGUF build (-128K-GGUF, a file Qwen3-235B-A22B-128K-Q4_K_M.gguf): a name such as Llama-3-8B-64k is a model
# trained for the longer context, and a Qwen -1M repository (Qwen/Qwen2.5-7B-Instruct-1M) a model of its own.
# Stripped from the end one at a time. A mixed-precision MLX quant names its average bits per weight with a decimal
# (-MLX-3.3bit: "3-bit baseline with important layers at 8-bit", bpw 3.331, https://huggingface.co/spicyneuron/Kimi-K2.6-MLX-3.3bit;
# inferencerlabs/GLM-5.1-MLX-4.8bit in https://github.com/jundot/omlx/issues/694): the same config.json, other weights.
_PACKAGING_WORD = re.compile(
    r"[-_.](?:awq|gptq|int[248]|fp[48]|nvfp4|mxfp4|fp16|bf16|dynamic|static|w[48]a(?:8|16)|g\d+|bnb|\d+(?:\.\d+)?bit|unsloth"
    r"|gguf|mlx|quantized|autoround|exl2|mixed|a?sym|ov|mtp|qat|q4_0|unquantized|kv|quarot|hf|i1|dwq|\d+k-gguf)$", re.I)
# -MTP (unsloth/Qwen3.6-35B-A3B-MTP-GGUF, GLM-5-NVFP4-MTP) marks a re-pack that keeps the multi-token
# prediction layer the base repository already ships (https://unsloth.ai/docs/models/mtp.md; DeepSeek-V3's
# upload includes its MTP module, https://github.com/deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3/README.md): the same
# config.json, and the draft layer's cache only when a run turns MTP drafting on, as with the base repository.
# -qat (gemma-3-12b-it-qat-q4_0.gguf; google/gemma-3-4b-it-qat-q4_0-gguf and the -qat-q4_0-unquantized checkpoints)
# marks Google's quantization-aware-trained weights of the same model, "Quantization Aware Trained (QAT) Gemma 3
# checkpoints" that keep the model and change how its weights were trained for 4-bit
# (https://huggingface.co/collections/google/gemma-3-qat): the base record's config.json, other weights.
# -KV (amd/Llama-3.1-405B-Instruct-FP8-KV in https://github.com/vllm-project/recipes/blob/be7e1c5db0cdd126fbde248b04058d1ffc33d309/Llama/Llama3.1-405B-ROCm.md)
# marks an FP8 checkpoint that also ships scales for an FP8 KV cache: the base model's config.json, other weights.
# ModelScope's snapshot_download names the local folder after the repository with each `.` as `___`.
_MODELSCOPE_DOT = "___"
# llama.cpp's -hf download keeps `owner/repo` and the file as one cache file name, owner_repo_file, every `/` as `_`
# (common_params_handle_model: https://github.com/ollama/ollama/blob/414a0973721d47505cdbe15741fdc2e924cc9cb6/llama/llama.cpp/common/arg.cpp#L789,
# llama.cpp's common/arg.cpp as Ollama vendors it): ggml-org_gemma-3-4b-it-qat-GGUF_gemma-3-4b-it-qat-Q4_0.gguf.
_LLAMACPP_CACHE_FILE = re.compile(r"^([A-Za-z0-9.-]+)_([A-Za-z0-9._-]+?-GGUF)_(.+\.gguf)$", re.I)
# A hub cache folder (models--owner--name), or the same owner--name without the prefix, as desktop apps keep downloads.
_CACHE_DIR = re.compile(r"(?:models--)?([A-Za-z0-9_.-]+?)--([A-Za-z0-9_.-]+)")
# An Ollama library tag: name, then `:`, then a size or flavour and optional -parts (qwen3:30b-a3b-q4_K_M).
_OLLAMA_TAG = re.compile(r"^([a-z0-9][a-z0-9._-]*):([a-z0-9._]+)(?:-([a-z0-9._-]+))?$", re.I)
_OLLAMA_REGISTRY = re.compile(r"^(?:https?://)?(?:registry\.ollama\.ai|ollama\.com)/library/", re.I)
# A LiteLLM provider route (see the module docstring): `openai/` only before owner/name. RamaLama's `ollama://` transport
# takes an Ollama name (https://github.com/containers/ramalama/blob/f3b51cfb6074e18de1e99f12f22e4224bd6bc24a/docs/options/model-transports.md).
_LITELLM_ROUTE = re.compile(r"^(?:ollama|ollama_chat|hosted_vllm|docker_model_runner)/|^ollama://|^openai/(?=[^/]+/[^/]+$)", re.I)
# An Ollama name under a user's namespace, host/namespace/model:tag (name.go, cited above; `library` is Ollama's own):
# maryasov/qwen2.5-coder:32b-instruct-q8_0 is that user's push of a model named like the library's qwen2.5-coder:32b. Docker
# Model Runner's models on Docker Hub are named the same way, ai/llama3.2:3B-Q4_K_M (https://www.promptfoo.dev/docs/providers/docker;
# its LiteLLM route is docker_model_runner/, https://docs.litellm.ai/docs/providers/docker_model_runner).
_OLLAMA_NAMESPACED = re.compile(
    r"^(?:(?:https?://)?(?:registry\.ollama\.ai|ollama\.com|docker\.io)/)?[a-z0-9][a-z0-9._-]*/([a-z0-9][a-z0-9._-]*:[a-z0-9._-]+)$", re.I)
# A version's dot written as a hyphen (kimi-k2-5, GLM-4-7-Flash, llama-3-1-8b), as names that must be DNS labels spell it:
# a Kubernetes object name holds only lowercase letters, digits and `-` (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names),
# and vLLM Ascend names its test of zai-org/GLM-4.7-Flash GLM-4-7-Flash.yaml
# (https://github.com/vllm-project/vllm-ascend/blob/09c2fbe36aca062dfcf399df954bc95d2adcd119/tests/e2e/models/configs/GLM-4-7-Flash.yaml).
# Only a one-digit part after a version number and before `-` or the end (never a size: GLM-4-9B, SmolLM3-3B stay).
_HYPHEN_DOT = re.compile(r"(?<=[A-Za-z-]\d)-(?=\d(?:-|$))")
# A version's dot written as `_` (Qwen3_6-35B-A3B-…-IQ2_M for a build of Qwen3.6-35B-A3B in https://github.com/janhq/jan/issues/8181), as
# vendors name repositories too (internlm/internlm2_5-7b-chat for InternLM2.5, https://huggingface.co/internlm/internlm2_5-7b-chat;
# nvidia/Llama-3_3-Nemotron-Super-49B-v1, built on Llama 3.3, https://huggingface.co/nvidia/Llama-3_3-Nemotron-Super-49B-v1): read as
# the hyphen above, under the same conditions (never a decimal size: AFM-4_5B stays).
_UNDERSCORE_DOT = re.compile(r"(?<=[A-Za-z-]\d)_(?=\d(?:-|$))")
# The other reading of the same spelling, a decimal size (qwen3-1-7b as Qwen3-1.7B): when it resolves too, neither is read.
_HYPHEN_SIZE_DOT = re.compile(r"(?<=-\d)-(?=\d+[bmt](?:-|$))", re.I)
# A Kaggle Models mount (see the module docstring): the model slug and the variation slug.
_KAGGLE_INPUT = re.compile(r"(?:^|/)kaggle/input/(?:models/[^/]+/)?([^/]+)/[^/]+/([^/]+)/\d+$", re.I)
# A family word with its numeral written on (gemma4-26b-a4b-it, llama3.2-3b-instruct): family, numeral, the rest.
_FAMILY_NUMERAL = re.compile(r"^([a-z]+)(\d+(?:\.\d+)?)(-.+)$", re.I)
# Qwen's own GGUF files write the family and VL as one word: Qwen3VL-8B-Instruct-Q4_K_M.gguf in Qwen/Qwen3-VL-8B-Instruct-GGUF
# (https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct-GGUF/resolve/main/Qwen3VL-8B-Instruct-Q4_K_M.gguf).
_GLUED_VL = re.compile(r"^(qwen\d+(?:\.\d+)?)(vl)(-.+)$", re.I)
# Name words: a size (8b, 0.6b, 135m, 2.4t, 8x7b, Gemma's e2b), an MoE active size (a3b), a variant word.
_SIZE = re.compile(r"(?:\d+x)?\d+(?:\.\d+)?[bmt]|e\d+b", re.I)
_ACTIVE = re.compile(r"a\d+(?:\.\d+)?b", re.I)
_CHAT_WORDS = frozenset({"instruct", "it", "chat"})
# A release version among an Ollama tag's words (v0.1 in mistral:7b-instruct-v0.1-q4_0, v1.6 in llava:7b-v1.6).
_VERSION = re.compile(r"v\d+(?:\.\d+)*", re.I)
# Words after an Ollama tag's size that name a quantization (q4_K_M, iq3_xxs, fp16, qat).
_OLLAMA_QUANT = re.compile(r"i?q\d[a-z0-9_]*|fp\d+|bf16|int\d|mxfp4|nvfp4|qat", re.I)


@dataclass(frozen=True)
class Resolved:
    model_id: str
    variant_id: str | None  # None: the model's own repository (its first variant loads from it)
    # True for a re-packaged repository the catalog does not list: same config, so the same KV
    # bytes per token, but different weights (their size and dtype are not the record's).
    same_architecture_only: bool = False

    @property
    def key(self) -> str:
        """The `MODEL` or `MODEL-VARIANT` key of the catalog entry this names."""
        return f"{self.model_id}-{self.variant_id}" if self.variant_id else self.model_id


def _key(text: str) -> str:
    return text.strip().lower()


def _unique(pairs: Iterable[tuple[str, Resolved]]) -> dict[str, Resolved]:
    """Keys that name exactly one target; a key two records claim names neither."""
    seen: dict[str, set[Resolved]] = {}
    for key, target in pairs:
        seen.setdefault(key, set()).add(target)
    return {key: next(iter(targets)) for key, targets in seen.items() if len(targets) == 1}


class HfIdIndex:
    """Every repository, GGUF file and Ollama tag the catalog names, keyed case-insensitively."""

    def __init__(self, models: Iterable[Model]) -> None:
        self.repos: dict[str, Resolved] = {}
        self.files: dict[str, Resolved] = {}
        self.tags: dict[str, Resolved] = {}
        names: list[tuple[str, Resolved]] = []
        base_names: list[tuple[str, Resolved]] = []
        models_seen = list(models)
        for model in models_seen:
            owned = [(model.hf_repo, Resolved(model.id, None)), *((alias, Resolved(model.id, None)) for alias in model.hf_aliases)]
            owned += [(v.hf_repo, Resolved(model.id, v.id)) for v in model.variants if v.hf_repo and v.format != "gguf"]
            owned += [(v.hf_repo, Resolved(model.id, v.id)) for v in model.variants if v.hf_repo and v.format == "gguf"]
            for repo, target in owned:
                # The first claim wins: a model's own repository before a variant that reuses it.
                self.repos.setdefault(_key(repo), target)
                names.append((_key(repo.split("/")[1]), self.repos[_key(repo)]))
            for repo in (model.hf_repo, *model.hf_aliases):
                # The name alone, and the name after its owner and `_` (bartowski's Qwen_Qwen3-8B).
                names.append((_key(repo.replace("/", "_", 1)), Resolved(model.id, None)))
                base_names += [(_key(form), Resolved(model.id, None, True)) for form in (repo.split("/")[1], repo.replace("/", "_", 1))]
            for variant in model.variants:
                if variant.gguf_file:
                    self.files.setdefault(_key(variant.gguf_file), Resolved(model.id, variant.id))
                for tag in _ollama_tags(variant.ollama_tag):
                    self.tags.setdefault(_key(tag), Resolved(model.id, variant.id))
        # A catalog repository named with a packaging word (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16) also answers
        # to its name without it (NVIDIA-Nemotron-3-Nano-30B-A3B), and re-packs of that name, as the architecture; so does
        # Meta-Llama-3-8B-Instruct without Meta- (_without_meta).
        stripped = [(_key(form), Resolved(model.id, None, True)) for model in models_seen
                    for repo in (model.hf_repo, *model.hf_aliases)
                    for form in (*_unpackaged(repo.split("/")[1]), *_without_meta(repo.split("/")[1]), *_dotted(repo.split("/")[1]))]
        self.names = _unique(names)
        self.stripped = _unique(stripped)
        self.base_names = _unique(base_names + stripped)
        self.joined = _unique((_joined(name), Resolved(found.model_id, None, True)) for name, found in self.base_names.items())
        self.library = _unique((_key(name), Resolved(model.id, None, True)) for model in models_seen for name in model.ollama_names)
        # A library name listed without a size, at the size its record's name carries (mistral-small3.2:24b).
        self.library_sizes = _unique((_key(f"{name}:{word}"), Resolved(model.id, None, True)) for model in models_seen
                                     for name in model.ollama_names if ":" not in name
                                     for repo in (model.hf_repo, *model.hf_aliases) for word in _words(repo.split("/")[1])
                                     if _SIZE.fullmatch(word))
        # Each model's own names as words, with its config.json: what a family-and-size name is matched on.
        self.families = [(_words(name), Resolved(model.id, None, True), model.config.as_config_json())
                         for model in models_seen for repo in (model.hf_repo, *model.hf_aliases)
                         for name in (repo.split("/")[1], *_without_meta(repo.split("/")[1]))]
        self.owners = {_key(repo.split("/")[0]) for model in models_seen for repo in (model.hf_repo, *model.hf_aliases)}
        self.bases = _base_checkpoints(models_seen)
        # GGUF repositories a variant loads from: their quantizations, as `repo:QUANT` names them.
        self.gguf_builds: dict[str, tuple[str, dict[str, Resolved]]] = {}
        for model in models_seen:
            own = {_key(repo) for repo in (model.hf_repo, *model.hf_aliases)}
            for v in model.variants:
                if v.format == "gguf" and v.hf_repo and _key(v.hf_repo) not in own:
                    builds = self.gguf_builds.setdefault(_key(v.hf_repo), (model.id, {}))[1]
                    quant = _QUANT_SUFFIX.search(_SHARD.sub("", v.gguf_file or "")[: -len(".gguf")]) if v.gguf_file else None
                    if quant is not None:
                        builds.setdefault(_key(quant.group(0)[1:]), Resolved(model.id, v.id))

    def resolve(self, named: str) -> Resolved | None:
        """The record a log's model id names, or None when the catalog has no match by these rules."""
        found = self._resolve(named)
        path = re.fullmatch(r"(.*[/\\])?([^/\\:]+)", named.strip().strip("'\"`").rstrip("/\\"))
        leaf = _UNDERSCORE_DOT.sub("-", path.group(2)) if path is not None else ""  # Qwen3_6-35B as Qwen3-6-35B, then as below
        if found is not None or path is None or (dotted := _HYPHEN_DOT.sub(".", leaf)) == leaf:
            return found
        # kimi-k2-5 as kimi-k2.5: a spelling of the name, so the architecture alone, when the decimal-size reading names nothing.
        head = path.group(1) or ""
        found = self._resolve(head + dotted)
        if found is None or self._resolve(head + _HYPHEN_SIZE_DOT.sub(".", leaf)) is not None:
            return None
        return Resolved(found.model_id, None, True)

    def _resolve(self, named: str) -> Resolved | None:
        text = _URL_PREFIX.sub("", named.strip().strip("'\"`")).rstrip("/\\").replace(_MODELSCOPE_DOT, ".")
        ollama = re.match(r"ollama", text, re.I) is not None and _LITELLM_ROUTE.match(text) is not None or _OLLAMA_REGISTRY.match(text)
        text = _GGUF_PART.sub("", _OLLAMA_REGISTRY.sub("", _LITELLM_ROUTE.sub("", text)))
        if ollama and not re.search(r"[:/\\]", text):
            text += ":latest"  # an Ollama name without a tag is tagged latest (name.go): deepseek-r1 is no Hugging Face name here
        if (found := self.tags.get(_key(text))) is not None:
            return found  # an Ollama tag, e.g. qwen2.5-coder:7b
        if (found := self.library.get(_key(re.sub(r":latest$", "", text, flags=re.I)))) is not None and (":" in text or _key(text) not in self.names):
            return found  # an Ollama library name, e.g. gemma3 (its default size); bare, a catalog repository's own name is that repository
        if (tag := _OLLAMA_TAG.match(re.sub(r"\.gguf$", "", text, flags=re.I))) is not None:
            if (found := self._tag(tag)) is not None or not _created_name(tag):
                return found  # qwen3:8b, or the tag saved as a file (qwen3:8b.gguf)
            text = tag.group(1)  # a full checkpoint name with Ollama's default tag: the name
        if (pushed := _OLLAMA_NAMESPACED.match(text)) is not None and (tag := _OLLAMA_TAG.match(pushed.group(1))) is not None \
                and _pushed_words(tag) and (found := self._tag(tag)) is not None:
            return Resolved(found.model_id, None, True)  # a user's push of a name at a size: the architecture alone
        text = re.sub(r"/(?:tree|blob|resolve)/[^/]+(?:/.*)?$", "", text)
        quant = None
        if "/" in text and (tail := re.search(r":([A-Za-z0-9_.-]+)$", text)) is not None and not _key(text).endswith(".gguf"):
            text, quant = text[: tail.start()], tail.group(1)  # hf.co/owner/repo:Q4_K_M (Ollama, llama.cpp -hf)
        parts = [p for p in re.split(r"[/\\]", text) if p]
        if parts and parts[-1].lower().endswith(".gguf"):
            found = self._gguf(parts.pop())
            if found is not None:
                return found
        if not parts:
            return None
        if quant is not None and (builds := self.gguf_builds.get(_key("/".join(parts[-2:])))) is not None:
            # The build of that quantization, or the architecture alone: never another quantization's build.
            return builds[1].get(_key(quant)) or Resolved(builds[0], None, True)
        found = self._repository(parts)
        leaf = _GGUF_MY_REPO.sub("", parts[-1])  # someone/Qwen3-0.6B-Q8_0-GGUF (GGUF-my-repo): one file, Qwen3-0.6B-Q8_0
        if found is None and quant is None and _QUANT_SUFFIX.search(_SHARD_BARE.sub("", leaf)):
            # A GGUF file's name without .gguf (a llama-server alias or an app's model name, Qwen3.5-27B-Q4_K_M): read
            # as that file, so only a catalog model's own name before the quantization counts.
            found = self._gguf(leaf + ".gguf")
        if quant is not None and found is not None:
            # Another owner's repository named like one GGUF repository the catalog lists (bartowski/Qwen3-32B-GGUF
            # for Qwen/Qwen3-32B-GGUF) reads as that one, as it does without a quantization; its build of that
            # quantization, or the architecture alone, never the first build the name alone would give.
            alike = [builds for repo, builds in self.gguf_builds.items() if repo.split("/")[1] == _key(parts[-1])]
            builds = alike[0] if len(alike) == 1 else (found.model_id, {})
            return builds[1].get(_key(quant)) or Resolved(builds[0], None, True)
        return found

    def _tag(self, tag: re.Match[str]) -> Resolved | None:
        flavour = [w for w in (tag.group(3).split("-") if tag.group(3) else []) if not _OLLAMA_QUANT.fullmatch(w)]
        if flavour:
            # The flavour may name a record itself (mistral:7b-instruct-v0.1-q4_0 is Mistral-7B-Instruct-v0.1, not the v0.3 that
            # `mistral` lists), never a base checkpoint the library does not serve; a version no record of that name has
            # (mistral:7b-text-v0.2) is another checkpoint.
            exact = self.base_names.get(_key("-".join((tag.group(1), tag.group(2), *flavour))))
            if exact is not None and exact.model_id not in self.bases:
                return exact
            if any(_VERSION.fullmatch(w) for w in flavour):
                return None
        name_size = _key(f"{tag.group(1)}:{tag.group(2)}")
        found = self.tags.get(name_size) or self.library.get(name_size) or self.library_sizes.get(name_size)
        if found is None and tag.group(3) is None and _OLLAMA_QUANT.fullmatch(tag.group(2)):
            found = self.library.get(_key(tag.group(1)))  # qwen3-coder-next:q4_K_M: a listed name's default at that quantization
        return Resolved(found.model_id, None, True) if found is not None else self._ollama(*tag.groups())

    def _gguf(self, leaf: str) -> Resolved | None:
        found = self.files.get(_key(leaf)) or self.files.get(_key(_SHARD.sub("", leaf)))
        if found is not None:
            return found
        if (cached := _LLAMACPP_CACHE_FILE.match(leaf)) is not None:
            # owner_repo_file from llama.cpp's cache: the file, else the repository it came from.
            return self._gguf(cached.group(3)) or self._repository([cached.group(1), cached.group(2)])
        name = leaf[: -len(".gguf")]
        if (tag := _OLLAMA_TAG.match(name)) is not None:
            return self._tag(tag)  # an Ollama tag saved as a file (llama3.2:3b.gguf): the tag
        if (found := self.library.get(_key(name)) or self.tags.get(_key(name))) is not None:
            # An Ollama library name saved as a file (../ollama_gguf/gguf/command-r-plus.gguf in the paste corpus): the name's
            # architecture, as the name alone reads.
            return Resolved(found.model_id, None, True)
        # A file this catalog does not list: its name without the quantization may still be the model's.
        stem = _QUANT_SUFFIX.sub("", _SHARD.sub("", leaf)[: -len(".gguf")])
        if stem and (found := self.names.get(_key(stem))) is not None:
            return Resolved(found.model_id, None)
        if stem and (found := self.stripped.get(_key(stem))) is not None:
            return found  # a catalog name's other spelling (Llama-3-8B-Instruct-Q4_K_M.gguf): the architecture alone
        # A -128K build's file (Qwen3-235B-A22B-128K-Q4_K_M.gguf) read as its repository's name, -128K-GGUF (see _PACKAGING_WORD).
        found = self._repackaged(re.sub(r"(?<=.)(-\d+k)$", r"\1-GGUF", stem, flags=re.I), True) if stem else None
        if found is None and stem and (glued := _GLUED_VL.match(stem)) is not None:
            # Qwen3VL-8B-Instruct (Qwen's file name) as Qwen3-VL-8B-Instruct: a spelling, so the architecture alone.
            respelled = "-".join(glued.groups()[:2]) + glued.group(3)
            if (found := self.names.get(_key(respelled)) or self._repackaged(respelled, True)) is not None:
                return Resolved(found.model_id, None, True)
        return found

    def _repository(self, parts: list[str]) -> Resolved | None:
        text = "/".join(parts)
        if (kaggle := _KAGGLE_INPUT.search(text)) is not None and (found := self._kaggle(*kaggle.groups())) is not None:
            return found
        if _REPO.match(text) and (found := self.repos.get(_key(text))) is not None:
            return found
        if len(parts) >= 2 and (found := self.repos.get(_key("/".join(parts[-2:])))) is not None:
            return found  # a local copy kept under owner/name, e.g. ~/models/Qwen/Qwen3-8B
        # Hub cache folders are models--owner--name (then snapshots/<commit>).
        for part in reversed(parts):
            cache = _CACHE_DIR.fullmatch(part)
            if cache:
                found = self.repos.get(_key(f"{cache.group(1)}/{cache.group(2)}"))
                return found or self._owned(cache.group(1), cache.group(2))
        found = self._owned(parts[0] if len(parts) == 2 else None, parts[-1]) or self._glued(parts[-1])
        if found is None:
            # A catalog repository's owner/name folder with more below it (…/moonshotai/Kimi-K2.5/v1.0, a release or
            # checkpoint folder): the architecture of the nearest one.
            inner = (self.repos.get(_key(f"{a}/{b}")) for a, b in reversed(list(zip(parts, parts[1:-1]))))
            found = next((Resolved(hit.model_id, None, True) for hit in inner if hit is not None), None)
        return found

    def _kaggle(self, slug: str, variation: str) -> Resolved | None:
        """A Kaggle model's files: the variation (gemma-2/…/gemma-2-9b-it), the slug and variation as one name (qwen2.5/…/7b-instruct),
        or the slug (gpt-oss-120b/…/default); an upload named like a catalog model, so the architecture alone."""
        for name in (variation, f"{slug}-{variation}", slug):
            if (found := self._owned(None, name)) is not None:
                return Resolved(found.model_id, None, True)
        return None

    def _glued(self, leaf: str) -> Resolved | None:
        """A catalog owner written onto the name, as a Windows path reads once a shell has taken its backslashes
        for escapes (\\Qwen\\Qwen3-14B-AWQ as QwenQwen3-14B-AWQ): read as owner/name, the architecture alone, when
        exactly one record answers."""
        hits = set()
        for owner in self.owners:
            rest = leaf[len(owner):]
            if _key(leaf).startswith(owner) and re.match(r"[A-Za-z0-9]", rest):
                found = self.repos.get(_key(f"{owner}/{rest}")) or self._owned(owner, rest)
                if found is not None:
                    hits.add(found.model_id)
        return Resolved(hits.pop(), None, True) if len(hits) == 1 else None

    def _owned(self, owner: str | None, leaf: str) -> Resolved | None:
        """owner/name under a catalog repository's owner is that owner's checkpoint, named in full; its
        pretrained checkpoint of a chat record's family and size (google/gemma-4-26B-A4B beside
        google/gemma-4-26B-A4B-it) shares that record's config.json, so it resolves to the architecture alone."""
        owned = owner is not None and _key(owner) in self.owners
        found = self._named(leaf, not owned)
        if found is None and owned and (sibling := self._shorthand(leaf)) is not None:
            return Resolved(sibling.model_id, None, True)
        return found

    def _named(self, leaf: str, short: bool) -> Resolved | None:
        found = self.names.get(_key(leaf)) or self.stripped.get(_key(leaf)) or self._repackaged(leaf, short)
        if found is None and (numeral := _FAMILY_NUMERAL.match(leaf)) is not None:
            # gemma4-26b-a4b-it as gemma-4-26b-a4b-it: a spelling of the name, so the architecture alone.
            hyphened = "-".join(numeral.groups()[:2]) + numeral.group(3)
            if (found := self.base_names.get(_key(hyphened)) or self._repackaged(hyphened, short)) is not None:
                return Resolved(found.model_id, None, True)
        # DeepSeekV3 as DeepSeek-V3 (/home/models/DeepSeekV3 in https://github.com/kvcache-ai/ktransformers/issues/1804): words
        # run together where the name has a hyphen between two letters; one record's name, the architecture alone.
        return found or self.joined.get(_joined(leaf))

    def _repackaged(self, leaf: str, short: bool) -> Resolved | None:
        """A base model's repository name plus packaging words, e.g. Qwen3-8B-AWQ, Qwen3-8B-GPTQ-Int4,
        or (`short`) a family and size without the variant word, e.g. Qwen3-VL-8B, Qwen3-VL-8B-AWQ."""
        if short and (found := self._shorthand(leaf)) is not None:
            return found
        for stripped in _unpackaged(leaf):
            if (found := self.base_names.get(_key(stripped)) or (self._shorthand(stripped) if short else None)) is not None:
                return found
        return None

    def _shorthand(self, leaf: str) -> Resolved | None:
        """Qwen3-VL-235B for Qwen3-VL-235B-A22B-Instruct: the one record (or the one default among records
        with the same config.json) named like it plus an active size and variant words."""
        words = _words(leaf)
        if len(words) < 2 or not any(_SIZE.fullmatch(w) for w in words[1:]) or not _SIZE.fullmatch(words[-1]) and not _ACTIVE.fullmatch(words[-1]):
            return None
        hits: dict[str, tuple[Resolved, dict, bool]] = {}
        for name, found, config in self.families:
            rest = name[len(words):]
            if rest and name[: len(words)] == words and all(_ACTIVE.fullmatch(w) or w in _CHAT_WORDS or w == "thinking" for w in rest):
                hits[found.model_id] = (found, config, "thinking" not in rest)
        configs = [config for _, config, _ in hits.values()]
        if not hits or any(config != configs[0] for config in configs):
            return None  # none, or records of different KV geometry
        defaults = [found for found, _, default in hits.values() if default or len(hits) == 1]
        return defaults[0] if len(defaults) == 1 else None

    def _ollama(self, name: str, size: str, rest: str | None) -> Resolved | None:
        """An Ollama tag the catalog does not list, read as the Hugging Face name it abbreviates."""
        if not _SIZE.fullmatch(size):
            return None  # deepseek-r1:iq1_s, glm-4.7-flash:latest: the size is the library default's
        words = [name, size]
        for word in rest.split("-") if rest else ():
            if _ACTIVE.fullmatch(word) or word.lower() in _CHAT_WORDS:
                words.append(word)
            elif not _OLLAMA_QUANT.fullmatch(word):
                return None  # base, vision, a date: another checkpoint than the name alone
        hf_name = "-".join(words)
        found = self.base_names.get(_key(hf_name)) or self._shorthand(hf_name)
        return None if found is None or found.model_id in self.bases else found


def _ollama_tags(tag: str | None) -> list[str]:
    """A variant's Ollama tag, and a library name without a tag (phi4) also as `:latest`, the tag Ollama gives a name without
    one (FillDefault registry.ollama.ai/library/?:latest, name.go, cited in _created_name): the same pull."""
    if tag is None:
        return []
    return [tag] if ":" in tag else [tag, f"{tag}:latest"]


def _created_name(tag: re.Match[str]) -> bool:
    """name:latest where the name carries its own size (gemma-3-27b-it-q4_0-QAT:latest): a model a user named with
    `ollama create` from a GGUF file or folder, which Ollama tags `latest` when no tag is given (FillDefault
    registry.ollama.ai/library/?:latest in https://github.com/ollama/ollama/blob/12734c108a2745e063f61765e2dc22fa6d9c902c/types/model/name.go).
    A library name alone (glm-4.7-flash:latest, gemma4:latest) means the library's default size, which it does not say."""
    return tag.group(2).lower() == "latest" and tag.group(3) is None and any(_SIZE.fullmatch(w) for w in _words(tag.group(1)))


def _without_meta(name: str) -> list[str]:
    """Meta-Llama-3-8B-Instruct as Llama-3-8B-Instruct: Meta dropped the word from its repositories' names from Llama 3.1 on
    ("renamed to meta-llama/Llama-3.1-8B-Instruct, which is how the models have been named in Llama 3.2 and after",
    https://github.com/oumi-ai/oumi/pull/1357), and re-packers write Llama 3 so too (turboderp/Llama-3-8B-Instruct-exl2,
    https://huggingface.co/turboderp/Llama-3-8B-Instruct-exl2). A spelling, so the architecture alone."""
    return [name[len("Meta-"):]] if _key(name).startswith("meta-llama-") else []


def _dotted(name: str) -> list[str]:
    """internlm2_5-7b-chat as internlm2.5-7b-chat: a repository that writes its version's dot as `_` (_UNDERSCORE_DOT), as readers
    write the version. A spelling, so the architecture alone."""
    dotted = _UNDERSCORE_DOT.sub(".", name)
    return [dotted] if dotted != name else []


def _pushed_words(tag: re.Match[str]) -> bool:
    """A pushed name's tag: a size, then only active-size, variant and quantization words (not -abliterated, a fine-tune)."""
    rest = tag.group(3).split("-") if tag.group(3) else []
    return bool(_SIZE.fullmatch(tag.group(2))) and all(
        _ACTIVE.fullmatch(w) or w.lower() in _CHAT_WORDS or _OLLAMA_QUANT.fullmatch(w) for w in rest)


def _unpackaged(name: str) -> list[str]:
    """A repository name without each packaging word at its end, one at a time (X-FP8-dynamic: X-FP8, X)."""
    forms = []
    while (word := _PACKAGING_WORD.search(name)) is not None and word.start() > 0:
        if word.group().lower().endswith("k-gguf"):  # a name of its own may end in a context (Nemotron-H-47B-Reasoning-128K)
            forms.append(name[: -len("-gguf")])
        name = name[: word.start()]
        forms.append(name)
    return forms


def _joined(name: str) -> str:
    """A name without its hyphens between two letters (deepseek-v3 as deepseekv3), as a name run together reads."""
    return re.sub(r"(?<=[a-z])-(?=[a-z])", "", _key(name))


def _words(name: str) -> list[str]:
    return _key(name).split("-")


def _base_checkpoints(models: list[Model]) -> set[str]:
    """Records named family-size (and active size) alone in a family whose chat records add only
    Instruct, it or Chat (Qwen2.5-1.5B beside Qwen2.5-7B-Instruct): pretrained checkpoints, not what a
    chat library serves. A dated release (Qwen3-8B beside Qwen3-4B-Instruct-2507) does not make one."""
    bare: dict[str, set[str]] = {}
    chat: set[str] = set()
    for model in models:
        for repo in (model.hf_repo, *model.hf_aliases):
            words = _words(repo.split("/")[1])
            at = next((i for i, w in enumerate(words) if i and _SIZE.fullmatch(w)), None)
            if at is None or not all(_ACTIVE.fullmatch(w) or w in _CHAT_WORDS for w in words[at + 1:]):
                continue
            family = "-".join(words[:at])
            if any(w in _CHAT_WORDS for w in words[at + 1:]):
                chat.add(family)
            else:
                bare.setdefault(family, set()).add(model.id)
    return {mid for family, members in bare.items() if family in chat for mid in members}


def hf_id_index(models: Mapping[str, Model] | Iterable[Model]) -> HfIdIndex:
    return HfIdIndex(models.values() if isinstance(models, Mapping) else models)


def vllm_build(models: Mapping[str, Model], found: Resolved | None) -> ModelConfig | None:
    """The catalog build a resolved id names, as the vLLM recompute takes it; None when nothing
    resolved, when only the architecture is known (a re-pack's weights are not the record's), or
    when that build does not run on vLLM. recompute.js `vllmBuild` follows it step for step."""
    if found is None or found.same_architecture_only:
        return None
    model = models[found.model_id]
    # No variant named: the model's own repository, which its first variant loads from.
    variant = next((v for v in model.variants if v.id == found.variant_id), model.variants[0])
    if "vllm" not in variant.engines:
        return None
    return ModelConfig(repo=variant.hf_repo or model.hf_repo, name=f"{model.name} {variant.name}", hf_config=variant_config(model, variant))
