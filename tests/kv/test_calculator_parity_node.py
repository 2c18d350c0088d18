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

from generator.kv.calculator import calculator_catalog
from generator.load import load_dataset

from ..calculator_cases import catalog_requests, python_answer, python_catalog, random_requests, sglang_bound_requests
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
