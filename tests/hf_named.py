"""The model ids named in the real-log corpora (data/evidence, and the unlinked vLLM and SGLang startups in tests/data) and the paste
corpus (tests/data), as a reader's log names them."""

from __future__ import annotations

import re
from pathlib import Path

CORPORA = ("data/evidence/vllm_real_logs.yaml", "tests/data/vllm_real_logs_unlinked.yaml", "data/evidence/sglang_real_logs.yaml",
           "tests/data/sglang_real_logs_unlinked.yaml",
           "data/evidence/llamacpp_real_logs.yaml", "tests/data/pasted_errors.yaml")
# Owners whose names in these files are model repositories (GitHub projects share the owner/name shape).
HF_OWNERS = ("Qwen", "meta-llama", "google", "deepseek-ai", "openai", "RedHatAI", "neuralmagic", "nvidia", "mistralai",
             "microsoft", "moonshotai", "zai-org", "THUDM", "ibm-granite", "ibm-ai-platform", "hugging-quants", "TheBloke",
             "unsloth", "bartowski", "Intel", "swiss-ai", "CohereForAI", "CohereLabs", "TechxGenus", "cpatonn", "cyankiwi",
             "kaitchup", "llava-hf", "sakamakismile", "huihui-ai", "facebook", "lmstudio-community", "mlx-community")
_OWNERS = "|".join(map(re.escape, HF_OWNERS))
_HF_ID = re.compile(rf"(?<![\w./-])((?:{_OWNERS})/[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])")
_LAUNCH = re.compile(r"(?:vllm serve|ollama (?:run|pull)|--model(?:-path)?[ =]|\bmodel='|\bmodel=(?=[A-Za-z])|\bModel: )\s*'?([^\s',\"`)]+)")
# An Ollama tag with a size (qwen3:4b, llama3:70b-instruct-q8_0), wherever a paste names one.
_OLLAMA_SIZED = re.compile(r"(?<![\w./:-])([a-z][a-z0-9._-]*:\d+(?:\.\d+)?[bm](?:-[A-Za-z0-9._-]+)?)\b")
_GGUF = re.compile(r"[A-Za-z0-9_.:-]+\.gguf\b")
# Prose such as "vllm serve on four GPUs" or "vllm serve (model ...)" names no model, nor does an Ollama blob path
# (a content hash).
_ID_SHAPE = re.compile(r"[\w.~/\\:-]+")
_PROSE_WORDS = frozenset({"a", "an", "and", "as", "for", "in", "is", "it", "of", "on", "starts", "the", "to", "with", "ollama", "llama",
                          "vllm"})


def named_model_ids(repo: Path) -> list[str]:
    found: dict[str, None] = {}
    for name in CORPORA:
        text = (repo / name).read_text(encoding="utf-8")
        for pattern in (_HF_ID, _LAUNCH, _GGUF, _OLLAMA_SIZED):
            for match in pattern.finditer(text):
                value = match.group(match.lastindex or 0)
                if value.startswith("-") or not re.search(r"[A-Za-z]", value):
                    continue
                if not _ID_SHAPE.fullmatch(value) or value.lower() in _PROSE_WORDS or "/blobs/sha256" in value:
                    continue
                found.setdefault(value)
    return list(found)
