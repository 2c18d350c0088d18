"""The calculator's JavaScript engine against the Python one under Node, no browser needed.

The same modules the pages load (templates/static/kvcalc*.js) answer the catalog's SGLang pairs,
seeded random requests of every engine and SGLang requests at the batch API's bounds; every field must
equal the Python answer. tests/kv/test_calculator_parity.py runs the same comparison in Chromium.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.engine.geometry import geometry_from_hf_config
from generator.kv.calculator import calculator_catalog
from generator.load import load_dataset

from ..calculator_cases import (
    GEMMA4_CONFIGS,
    STATE_CONFIGS,
    catalog_requests,
    gemma4_llama_requests,
    python_answer,
    python_catalog,
    random_requests,
    release_requests,
    sglang_bound_requests,
    state_requests,
)
from ..conftest import REPO
from .test_calculator_parity import differences

NODE = shutil.which("node")
RUNNER = Path(__file__).with_name("kvcalc_node.mjs")
RANDOM_REQUESTS = 3000

pytestmark = pytest.mark.skipif(NODE is None, reason="no node on PATH")


@pytest.fixture(scope="module")
def shipped():
    dataset = load_dataset(REPO)
    calc = calculator_catalog(dataset)
    models, gpus = python_catalog(dataset)
    return dataset, calc, models, gpus


def js_answers(requests: list[dict[str, Any]], calc: dict[str, Any]) -> list[dict[str, Any]]:
    done = subprocess.run([NODE, str(RUNNER), str(REPO)], input=json.dumps([requests, calc]), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_parity(requests: list[dict[str, Any]], shipped) -> list[dict[str, Any]]:
    _dataset, calc, models, gpus = shipped
    failures, answers = [], []
    for request, js in zip(requests, js_answers(requests, calc), strict=True):
        py = python_answer(request, models, gpus)
        answers.append(py)
        diff = differences(py, js)
        if diff:
            failures.append(f"{json.dumps(request)[:300]}\n    " + "\n    ".join(diff[:5]))
    assert not failures, f"{len(failures)} of {len(requests)} requests differ:\n" + "\n".join(failures[:10])
    return answers


def test_sglang_catalog_pairs_match(shipped) -> None:
    dataset, calc, _models, _gpus = shipped
    requests = [r for r in catalog_requests(dataset, calc) if r["engine"] == "sglang"]
    assert len(requests) > 1000
    answers = assert_parity(requests, shipped)
    assert any(a.get("starts") for a in answers) and any(a.get("starts") is False for a in answers)


def test_random_requests_match(shipped) -> None:
    _dataset, calc, _models, _gpus = shipped
    requests = random_requests(calc, RANDOM_REQUESTS)
    answers = assert_parity(requests, shipped)
    sglang = {("error_input" if "error_input" in a else a["starts"], a.get("pool_kind")) for r, a in zip(requests, answers) if r["engine"] == "sglang"}
    for expected in [(True, "mha"), (True, "mla"), (True, "dsa"), (True, "hybrid_swa"), (False, None), ("error_input", None)]:
        assert expected in sglang, f"no random SGLang request lands in {expected}"


def test_sglang_request_bounds_match(shipped) -> None:
    _dataset, calc, models, _gpus = shipped
    dense = next(k for k, m in models.items() if "kv_lora_rank" not in m.hf_config)
    mla = next(k for k, m in models.items() if "kv_lora_rank" in m.hf_config)
    requests = sglang_bound_requests([dense, mla])
    answers = assert_parity(requests, shipped)
    bound_errors = [a["error_input"] for a in answers if "at most" in a.get("error_input", "")]
    # Every key with a bound is refused past it, in the bound's own words.
    for key in ("page_size", "tensor_parallel_size", "max_total_tokens", "context_length", "kv_cache_memory_bytes",
                "gpu_memory_gib", "weights_gib", "mem_fraction_static", "swa_full_tokens_ratio", "max_running_requests"):
        assert any(e.startswith(f"{key} must be at most") for e in bound_errors), key
    assert any("is not a size any GPU has" in a.get("error_input", "") for a in answers)


def test_state_layer_hybrids_match(shipped) -> None:
    """Gated-DeltaNet and Mamba hybrids (kvcalc-hybrid.js): vLLM's aligned block and state pages, the
    other engines' refusals, and the catalog's hybrid builds as their pair pages compute them."""
    dataset, calc, _models, _gpus = shipped
    hybrids = [f"{m['id']}-{v['id']}" for m in calc["models"] if m.get("state") and geometry_from_hf_config(m["config"]).has_state for v in m["variants"]]
    assert hybrids, "the catalog has no hybrid model"
    requests = state_requests(hybrids) + [r for r in catalog_requests(dataset, calc) if r["model"] in hybrids]
    answers = assert_parity(requests, shipped)
    vllm = [a for r, a in zip(requests, answers) if r["engine"] == "vllm"]
    assert any(a.get("fits") for a in vllm) and any(a.get("fits") is False for a in vllm)
    # The block is raised past the default 16 so one attention page holds a state page.
    assert all(a["block_size"] > 16 for a in vllm if "block_size" in a)
    assert all("error_input" in a for r, a in zip(requests, answers) if r["engine"] in ("llamacpp", "sglang"))


def test_gemma4_matches(shipped) -> None:
    """Gemma 4 (two page sizes, KV-shared layers): the E2B/E4B shapes the catalog lacks and the catalog's Gemma 4
    builds, over every engine; vLLM and llama.cpp / Ollama size them, SGLang refuses them."""
    dataset, calc, _models, _gpus = shipped
    builds = [f"{m['id']}-{v['id']}" for m in calc["models"] if m["id"].startswith("gemma-4-") for v in m["variants"]]
    assert builds, "the catalog has no Gemma 4 model"
    requests = state_requests(builds, GEMMA4_CONFIGS) + gemma4_llama_requests(builds, calc)
    answers = assert_parity(requests, shipped)
    vllm = [a for r, a in zip(requests, answers) if r["engine"] == "vllm"]
    assert any(a.get("fits") for a in vllm) and any(a.get("fits") is False for a in vllm)
    assert all("error_input" in a for r, a in zip(requests, answers) if r["engine"] == "sglang")
    llama = [a for r, a in zip(requests, answers) if r["engine"] in ("llamacpp", "ollama")]
    assert sum("kv_bytes" in a for a in llama) > len(llama) // 2, "llama.cpp / Ollama should size most Gemma 4 requests"


def test_a_pasted_hybrid_config_keeps_its_state_keys() -> None:
    """kvcalc-paste.js keeps the keys import-model keeps, the state layers' among them."""
    from generator.tools.import_model import hf_config_fields

    configs = [*STATE_CONFIGS.values(), {"model_type": "qwen3_5", "dtype": "bfloat16", "text_config": STATE_CONFIGS["qwen3.5-style"]},
               *GEMMA4_CONFIGS.values()]
    script = ("import { readFileSync } from 'node:fs'; import { pathToFileURL } from 'node:url';"
              f"const U = await import(pathToFileURL({json.dumps(str(REPO / 'templates/static/kvcalc-paste.js'))}));"
              "process.stdout.write(JSON.stringify(JSON.parse(readFileSync(0, 'utf8')).map((t) => U.pastedConfig(t))));")
    done = subprocess.run([NODE, "--input-type=module", "-e", script], input=json.dumps([json.dumps(c) for c in configs]),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for config, read in zip(configs, json.loads(done.stdout), strict=True):
        assert read == hf_config_fields(config)[0]


def test_every_vllm_release_matches(shipped) -> None:
    """kvcalc-release.js: each release range of the engine's table, and releases as logs print them, over
    GPUs (pre-Ampere, Hopper, Blackwell, ROCm), dense, MoE, MLA, sliding-window and hybrid models."""
    _dataset, calc, _models, _gpus = shipped
    hybrids = [f"{m['id']}-{v['id']}" for m in calc["models"] if m.get("state") and geometry_from_hf_config(m["config"]).has_state for v in m["variants"]][:2]
    requests = release_requests(calc, hybrids)
    answers = assert_parity(requests, shipped)
    vllm = [a for a in answers if "fits" in a]
    assert len(vllm) > len(requests) // 2
    versions = {a["vllm_version"] for a in vllm}
    assert {"0.6.0", "0.6.3", "0.8.0", "0.9.2", "0.10.1", "0.11.0", "0.22.0", "0.27.1", "0.33.0"} <= versions
    # The rules reach the figures: V0 and V1 errors, graphs subtracted and not, the V0 fallback's group.
    assert any(a["error"] and "maximum number of tokens that can be stored" in a["error"] for a in vllm)
    assert any(a["breakdown"] and a["breakdown"]["cudagraph_bytes"] == 0 and not a["enforce_eager"] for a in vllm)
    assert any(a["breakdown"] and a["breakdown"]["cudagraph_bytes"] > 0 for a in vllm)
    assert any("keeps Mamba / linear-attention state outside" in a.get("error_input", "") for a in answers)
