"""The in-page calculator against the Python engine, in a real headless Chromium.

Parity: the shipped catalog's pairs and seeded random requests go through kvcalc.js in the browser
and through the batch API in Python; every field must match (integers and texts exactly).
UI: a built pair page, driven like a reader (GPU, utilization, KV dtype), shows the Python engine's
figures and vLLM command, keeps them in the URL, and leaves a screenshot in tests/artifacts/.

Needs Debian's chromium (tests/tools/install-ci-deps.sh) and the `playwright` package (the `test` extra);
no browser download. Outside CI a missing browser skips with the reason; under CI=true it fails.
"""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import random
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from generator.build.pipeline import build_site, write_site
from generator.engine.geometry import geometry_from_hf_config
from generator.engine.vllm import format_gib, serve_command
from generator.kv.calculator import calculator_catalog
from generator.load import load_dataset
from generator.render.templates import gib, kib, mib, tokens

from ..calculator_cases import catalog_requests, python_answer, python_catalog, random_requests, release_requests
from ..conftest import FIXED_TODAY, FIXTURE_SITE, REPO

CHROMIUM = os.environ.get("KVTRIAGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
# Enough seeded requests that the sample reaches every SGLang pool kind with the shipped catalog
# (its model list is what the seeded picks index into).
RANDOM_REQUESTS = 1400
PAIR_URL = "/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/"
PAIR_MODEL = "qwen2.5-coder-32b-instruct-awq"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (tests/tools/install-ci-deps.sh, pip install '.[test]')")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """The fixture site, built and served on 127.0.0.1 for the length of this module."""
    out = Path(tempfile.mkdtemp(prefix="kvcalc-site-"))
    write_site(build_site(FIXTURE_SITE, today=FIXED_TODAY).files, out / "site")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(out / "site")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def browser_context():
    if not Path(CHROMIUM).exists():
        _unavailable(f"no Chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    profile = tempfile.mkdtemp(prefix="kvcalc-profile-")  # a fresh --user-data-dir every run
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1000, "height": 900}, service_workers="block",
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context, site_url):
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type in ("error", "warning") else None)
    yield page
    page.close()
    assert not errors, f"the page logged errors: {errors}"


def run_js(page, site_url: str, expression: str, arg: Any) -> Any:
    """Evaluate `expression` (a function of (kvcalc module, arg)) in the page; results travel as JSON text."""
    if not page.url.startswith(site_url):
        page.goto(site_url + "/")
    text = page.evaluate(
        "async (arg) => { const K = await import('/static/kvcalc.js'); (await import('/static/kvcalc-llama.js')).install(K);"
        " (await import('/static/kvcalc-sglang.js')).install(K); (await import('/static/kvcalc-hybrid.js')).install(K); (await import('/static/kvcalc-release.js')).install(K);"
        " return JSON.stringify((" + expression + ")(K, arg)); }",
        arg,
    )
    return json.loads(text)


def differences(py: Any, js: Any, path: str = "") -> list[str]:
    """Exact comparison of two JSON values; bools and None never equal numbers."""
    if isinstance(py, dict) and isinstance(js, dict):
        out = [f"{path}.{k}: only in {'js' if k in js else 'python'}" for k in sorted(set(py) ^ set(js))]
        for key in sorted(set(py) & set(js)):
            out += differences(py[key], js[key], f"{path}.{key}")
        return out
    if isinstance(py, list) and isinstance(js, list):
        if len(py) != len(js):
            return [f"{path}: {len(py)} items in python, {len(js)} in js"]
        return [d for i, (a, b) in enumerate(zip(py, js)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(py, bool) or isinstance(js, bool) or py is None or js is None:
        return [] if type(py) is type(js) and py == js else [f"{path}: python {py!r}, js {js!r}"]
    if isinstance(py, (int, float)) and isinstance(js, (int, float)):
        # JSON carries 4 and 4.0 alike; integers must still be equal exactly.
        return [] if py == js else [f"{path}: python {py!r}, js {js!r}"]
    return [] if py == js else [f"{path}: python {py!r:.300}, js {js!r:.300}"]


# --------------------------------------------------------------------------- engine parity


@pytest.fixture(scope="module")
def shipped():
    dataset = load_dataset(REPO)
    calc = calculator_catalog(dataset)
    models, gpus = python_catalog(dataset)
    return dataset, calc, models, gpus


PARITY_CHUNK = 2000


def _parity(page, site_url: str, shipped, requests: list[dict[str, Any]]) -> tuple[int, list[str]]:
    _dataset, calc, models, gpus = shipped
    # In chunks: the whole catalog's answers in one message outgrow the memory of Playwright's driver.
    js = []
    for start in range(0, len(requests), PARITY_CHUNK):
        js += run_js(page, site_url, "(K, [reqs, cat]) => { const c = K.index(cat); return reqs.map((r) => K.answer(r, c)); }",
                     [requests[start:start + PARITY_CHUNK], calc])
    failures = []
    for request, answer in zip(requests, js, strict=True):
        diff = differences(python_answer(request, models, gpus), answer)
        if diff:
            failures.append(f"{json.dumps(request)[:300]}\n    " + "\n    ".join(diff[:5]))
    return len(requests), failures


def test_catalog_pairs_match_the_python_engine(page, site_url, shipped) -> None:
    dataset, calc, _models, _gpus = shipped
    requests = catalog_requests(dataset, calc)
    assert len(requests) >= len(calc["gpus"]) * sum(len(m["variants"]) for m in calc["models"])
    count, failures = _parity(page, site_url, shipped, requests)
    assert not failures, f"{len(failures)} of {count} catalog requests differ:\n" + "\n".join(failures[:10])


def test_random_requests_match_the_python_engine(page, site_url, shipped) -> None:
    _dataset, calc, models, gpus = shipped
    requests = random_requests(calc, RANDOM_REQUESTS)
    answers = [python_answer(r, models, gpus) for r in requests]
    # The sample must reach every branch that matters, not just the easy ones.
    kinds = {(r["engine"], "error_input" if "error_input" in a else "startup_error" if "startup_error" in a else a.get("fits")) for r, a in zip(requests, answers)}
    for expected in [("vllm", True), ("vllm", False), ("vllm", "error_input"), ("llamacpp", True), ("llamacpp", False),
                     ("llamacpp", "startup_error"), ("ollama", True), ("ollama", False)]:
        assert expected in kinds, f"no random request lands in {expected}"
    sglang = {("error_input" if "error_input" in a else a["starts"], a.get("pool_kind")) for r, a in zip(requests, answers) if r["engine"] == "sglang"}
    for expected in [(True, "mha"), (True, "mla"), (True, "dsa"), (True, "hybrid_swa"), (False, None), ("error_input", None)]:
        assert expected in sglang, f"no random SGLang request lands in {expected}"
    assert sum(1 for a in answers if a.get("remediation")) > 100
    count, failures = _parity(page, site_url, shipped, requests)
    assert not failures, f"{len(failures)} of {count} random requests differ:\n" + "\n".join(failures[:10])


def test_vllm_releases_match_the_python_engine(page, site_url, shipped) -> None:
    """kvcalc-release.js in the browser: every release range, and releases as logs print them."""
    _dataset, calc, _models, _gpus = shipped
    hybrids = [f"{m['id']}-{v['id']}" for m in calc["models"] if m.get("state") and geometry_from_hf_config(m["config"]).has_state for v in m["variants"]][:1]
    count, failures = _parity(page, site_url, shipped, release_requests(calc, hybrids))
    assert not failures, f"{len(failures)} of {count} release requests differ:\n" + "\n".join(failures[:10])


def _float_samples() -> list[float]:
    rng = random.Random(7)
    special = [0.0, -0.0, 0.125, 0.375, 2.675, 1.005, 0.005, 0.015, -0.001, -0.125, 8.0, 1.75, 12.35, 1e-05, 0.0001,
               1e16, 1.5e16, 1e22, 123456789.125, 0.5, 1.5, 2.5, 3.5, 0.92, 0.9, 0.95, 1 / 3, 2 / 3, 23.99999]
    special += [n / 8 for n in range(-40, 41)] + [n / 16 for n in range(1, 64)]
    special += [rng.randint(-2**34, 2**37) / 2**30 for _ in range(400)]
    special += [rng.uniform(0, 1) for _ in range(200)] + [rng.uniform(-1e6, 1e6) for _ in range(100)]
    return special


def test_python_number_formatting_in_js(page, site_url) -> None:
    """round(x, n), f"{x:.nf}", repr(float) and round(x): the formats vLLM's messages use."""
    values = _float_samples()
    js = run_js(page, site_url, "(K, xs) => xs.map((x) => [K.fixed(x, 2), K.fixed(x, 4), K.reprFloat(K.roundTo(x, 2)), K.reprFloat(x), K.roundInt(x * 100)])", values)
    # -0.0 does not survive the trip into the page as JSON; check it on its own.
    for x, got in zip(values, js, strict=True):
        if x == 0 and math.copysign(1, x) < 0:
            continue
        assert got == [f"{x:.2f}", f"{x:.4f}", str(round(x, 2)), repr(x), round(x * 100)], x
    negative_zero = page.evaluate("async () => { const K = await import('/static/kvcalc.js'); return [K.fixed(-0, 2), K.reprFloat(-0), K.reprFloat(K.roundTo(-0.001, 2))]; }")
    assert negative_zero == [f"{-0.0:.2f}", repr(-0.0), str(round(-0.001, 2))]
    sizes = [0, 1, 1023, 1024, 262144, 1124352, 4194304, 1084227584, 8 * 2**30, 25386352640, 85100068864]
    js = run_js(page, site_url, "(K, xs) => xs.map((x) => [K.gib(x), K.mib(x), K.kib(x), K.tokens(x)])", sizes)
    assert js == [[gib(n), mib(n), kib(n), tokens(n)] for n in sizes]
    assert run_js(page, site_url, "(K, xs) => xs.map((x) => K.reprFloat(K.roundTo(x / 2 ** 30, 2)))", sizes) == [format_gib(n) for n in sizes]


# --------------------------------------------------------------------------- the page, driven like a reader


def _shown(page) -> dict[str, str]:
    return page.evaluate("() => Object.fromEntries([...document.querySelectorAll('#calculator [data-out]')].map((e) => [e.dataset.out, e.textContent]))")


def _expected_figures(answer: dict[str, Any], total_bytes: int) -> dict[str, str]:
    b = answer["breakdown"]
    longest = min(answer["estimated_max_model_len"], answer["derived_max_model_len"]) if answer["check_bytes"] > 0 else 0
    return {
        "total": gib(total_bytes),
        "requested": gib(b["requested_bytes"]),
        "weights": gib(b["weights_bytes"]),
        "non_torch": gib(b["non_torch_bytes"]),
        "activation": gib(b["activation_peak_bytes"]),
        "cudagraph": gib(b["cudagraph_bytes"]),
        "available": gib(answer["available_kv_cache_bytes"]),
        "per_token": kib(answer["kv_bytes_per_token"]),
        "block": mib(answer["bytes_per_block"]),
        "blocks": tokens(answer["num_blocks"]),
        "kv_tokens": f"{tokens(answer['kv_cache_tokens'])} tokens",
        "needed": gib(answer["needed_bytes"]),
        "max_len": tokens(longest),
    }


def _wait_for(page, expected_command: str) -> None:
    page.wait_for_function("(cmd) => { const e = document.querySelector('#calculator [data-out=command]'); return e && e.textContent === cmd; }",
                           arg=expected_command, timeout=10_000)


def test_pair_page_calculator_follows_the_reader(page, site_url) -> None:
    dataset = load_dataset(FIXTURE_SITE)
    models, gpus = python_catalog(dataset)
    repo = models[PAIR_MODEL].repo
    page.goto(site_url + PAIR_URL)
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")

    # Accessible: every control has a label, results are announced politely.
    unlabelled = page.evaluate("() => [...document.querySelectorAll('#calculator input, #calculator select')].filter((c) => !document.querySelector(`label[for='${c.id}']`)).map((c) => c.id)")
    assert unlabelled == []
    assert page.get_attribute("#calculator .kc-out", "aria-live") == "polite"

    # As the page opens: the pair's own settings (utilization 0.90 from the pair record).
    request = {"engine": "vllm", "model": PAIR_MODEL, "gpu": "rtx-4090", "gpu_count": 2, "gpu_memory_utilization": 0.9}
    answer = python_answer(request, models, gpus)
    own = (("--gpu-memory-utilization", "0.9"),)
    _wait_for(page, serve_command(repo, own))
    shown = _shown(page)
    assert {k: shown[k] for k in _expected_figures(answer, gpus["rtx-4090"].total_bytes)} == _expected_figures(answer, gpus["rtx-4090"].total_bytes)
    assert not answer["fits"] and shown["error"] == answer["error"]
    # The static page says the same as the calculator.
    static_numbers = page.inner_text("table.numbers >> nth=0")
    assert shown["kv_tokens"].split()[0] in static_numbers and shown["max_len"] in static_numbers
    from generator.engine.vllm import Lever
    best = answer["remediation"][0]
    lever = Lever(best["kind"], best["label"], tuple(tuple(f) for f in best["flags"]), best["fits_requested"],
                  best["max_model_len_that_fits"], best["num_blocks"], best["available_kv_cache_bytes"], best["note"])
    assert page.inner_text("#calculator [data-out=lever-command] >> nth=0") == serve_command(repo, lever.serve_flags(own))

    # The reader's own GPU (48 GiB), utilization typed with the keyboard, and an fp8 KV cache.
    page.select_option("#kc-g", "custom")
    page.fill("#kc-mem", "48")
    page.focus("#kc-u")
    page.keyboard.press("Control+A")
    page.keyboard.type("0.95")
    page.select_option("#kc-kv", "fp8")
    request = {"engine": "vllm", "model": PAIR_MODEL, "gpu_memory_gib": 48, "gpu_count": 2, "gpu_memory_utilization": 0.95, "kv_cache_dtype": "fp8"}
    answer = python_answer(request, models, gpus)
    command = serve_command(repo, (("--gpu-memory-utilization", "0.95"), ("--kv-cache-dtype", "fp8")))
    _wait_for(page, command)
    shown = _shown(page)
    expected = _expected_figures(answer, 48 * 2**30)
    assert {k: shown[k] for k in expected} == expected
    assert answer["fits"] and shown["verdict"] == (
        f"vLLM 0.33.0 starts: {tokens(answer['kv_cache_tokens'])} tokens of KV cache, "
        f"{answer['max_concurrency']:.2f}x concurrency at {tokens(answer['max_model_len'])} tokens."
    )

    # The memory bar is redrawn from these figures, with the page's segments in the page's order.
    from generator.plan.budget_bar import VLLM_SEGMENTS
    bar = page.text_content("#calculator [data-out=bar] svg title")
    assert f"KV cache {answer['available_kv_cache_bytes'] / 2**30:.2f} GiB" in bar
    assert [bar.index(label + " ") for _, label in VLLM_SEGMENTS] == sorted(bar.index(label + " ") for _, label in VLLM_SEGMENTS)

    # The settings are in the URL: opening it again shows the same result.
    assert "g=custom" in page.url and "mem=48" in page.url and "u=0.95" in page.url and "kv=fp8" in page.url
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#calculator").screenshot(path=str(ARTIFACTS / "calculator-pair.png"))
    shared = page.url
    page.goto(site_url + "/")
    page.goto(shared)
    _wait_for(page, command)
    assert _shown(page)["available"] == expected["available"]
    page.screenshot(path=str(ARTIFACTS / "calculator-pair-full.png"), full_page=True)

    # Raw numbers instead of the catalog model, on llama.cpp (its module loads on demand).
    page.select_option("#kc-m", "custom")
    page.select_option("#kc-e", "llamacpp")
    page.select_option("#kc-ctk", "q8_0")
    config = {"model_type": "custom", "torch_dtype": "bfloat16", "num_hidden_layers": 64, "num_attention_heads": 40,
              "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120, "intermediate_size": 27648,
              "vocab_size": 152064, "max_position_embeddings": 32768}
    request = {"engine": "llamacpp", "hf_config": config, "gpu_memory_gib": 48, "weights_gib": 18.0, "ctx_size": 32768,
               "parallel": 1, "cache_type_k": "q8_0", "cache_type_v": "q8_0"}
    answer = python_answer(request, models, gpus)
    _wait_for(page, "llama-server -m model.gguf -c 32768 -np 1 -ctk q8_0 -ctv q8_0")
    shown = _shown(page)
    assert (shown["n_ctx"], shown["kv"], shown["compute"], shown["total"], shown["max_ctx"]) == (
        tokens(answer["n_ctx"]), mib(answer["kv_bytes"]), mib(answer["compute_buffer_bytes"]), gib(answer["gpu_bytes"]),
        tokens(answer["max_ctx_that_fits"]))
    page.locator("#calculator").screenshot(path=str(ARTIFACTS / "calculator-llamacpp.png"))


def test_pair_page_calculator_follows_the_readers_release(page, site_url) -> None:
    """The release select: an older range recomputes with its rules (kvcalc-release.js, fetched only then),
    its utilization default replaces the newest's, and the address keeps it."""
    dataset = load_dataset(FIXTURE_SITE)
    models, gpus = python_catalog(dataset)
    calc = calculator_catalog(dataset)
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url.split("?")[0].rsplit("/", 1)[-1]))
    page.goto(site_url + PAIR_URL)
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    options = page.eval_on_selector_all("#kc-vr option", "os => os.map((o) => [o.value, o.textContent])")
    assert options == [[r["version"], r["label"]] for r in calc["vllm"]["releases"]] and page.input_value("#kc-vr") == "0.33.0"
    assert "kvcalc-release.js" not in fetched
    repo = models[PAIR_MODEL].repo
    for release in ("0.10.2", "0.6.5", "0.24.0"):
        page.select_option("#kc-vr", release)
        label = next(r["label"] for r in calc["vllm"]["releases"] if r["version"] == release)
        page.wait_for_function("(label) => (document.querySelector('#calculator [data-out=release]') || {}).textContent?.includes(label + \"'s rules\")",
                               arg=label, timeout=10_000)
        # The page's own utilization (0.9) is 0.10.2's default too: the request leaves it out.
        answer = python_answer({"engine": "vllm", "model": PAIR_MODEL, "gpu": "rtx-4090", "gpu_count": 2, "vllm_version": release}, models, gpus)
        _wait_for(page, serve_command(repo, ()))
        shown = _shown(page)
        expected = _expected_figures(answer, gpus["rtx-4090"].total_bytes)
        assert {k: shown[k] for k in expected} == expected, release
        assert f"vr={release}" in page.url
    assert "kvcalc-release.js" in fetched
    page.locator("#calculator").screenshot(path=str(ARTIFACTS / "calculator-release.png"))


def test_pair_page_calculator_offers_sglang(page, site_url) -> None:
    """SGLang in the engine select of a vLLM pair page: its own settings, the pool, the log line and the command."""
    dataset = load_dataset(FIXTURE_SITE)
    models, gpus = python_catalog(dataset)
    repo = models[PAIR_MODEL].repo
    page.goto(site_url + PAIR_URL)
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    page.select_option("#kc-e", "sglang")
    page.select_option("#kc-skv", "fp8_e4m3")
    page.select_option("#kc-stp", "2")
    page.fill("#kc-sctx", "32768")
    request = {"engine": "sglang", "model": PAIR_MODEL, "gpu": "rtx-4090", "kv_cache_dtype": "fp8_e4m3", "tensor_parallel_size": 2, "context_length": 32768}
    answer = python_answer(request, models, gpus)
    assert answer["starts"]
    command = (f"python -m sglang.launch_server \\\n  --model-path {repo} \\\n  --tp-size 2 \\\n  --mem-fraction-static {answer['mem_fraction_static']!r} "
               "\\\n  --context-length 32768 \\\n  --kv-cache-dtype fp8_e4m3")
    _wait_for(page, command)
    shown = _shown(page)
    assert shown["kv_tokens"] == f"{tokens(answer['kv_cache_tokens'])} tokens"
    assert shown["log_line"] == "\n".join(answer["log_lines"])
    assert shown["max_input"] == f"{tokens(answer['max_req_input_len'])} tokens"
    assert shown["available"] == gib(answer["kv_cache_memory_bytes"])
    # Every SGLang control has a label, and the vLLM fieldset is hidden while SGLang is chosen.
    assert page.is_visible("#kc-sf") and not page.is_visible("#kc-u")
    assert "e=sglang" in page.url and "skv=fp8_e4m3" in page.url
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#calculator").screenshot(path=str(ARTIFACTS / "calculator-sglang.png"))


def test_other_engines_and_the_config_field_load_only_when_the_reader_needs_them(page, site_url) -> None:
    """A vLLM pair page fetches neither the other engines' code nor the config.json field at first view;
    a shared address that names another engine's settings still opens with them."""
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url.split("?")[0].rsplit("/", 1)[-1]))
    page.goto(site_url + PAIR_URL + "?skv=fp8_e4m3")
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    on_demand = {"kvcalc-llama.js", "kvcalc-sglang.js", "kvcalc-ui-engines.js", "kvcalc-paste.js", "kvcalc-hybrid.js", "kvcalc-release.js"}
    assert "kvcalc.js" in fetched and not on_demand & set(fetched)
    assert "skv=fp8_e4m3" in page.url  # kept for when the reader picks SGLang
    page.select_option("#kc-e", "sglang")
    page.wait_for_selector("#kc-skv:visible")
    assert page.input_value("#kc-skv") == "fp8_e4m3" and "e=sglang" in page.url and "skv=fp8_e4m3" in page.url
    assert "kvcalc-paste.js" not in fetched
    page.select_option("#kc-m", "custom")
    page.wait_for_selector("#kc-cfg:visible")
    page.goto(site_url + PAIR_URL + "?e=llamacpp&m=custom&ctk=q4_0")
    page.wait_for_selector("#kc-cfg:visible")
    assert page.input_value("#kc-ctk") == "q4_0" and page.input_value("#kc-e") == "llamacpp"


# --------------------------------------------------------------------------- a pasted config.json

PASTED_CONFIGS = [
    # Mistral-style: sliding_window null is kept (no window), the other nulls and unread keys go.
    {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 40, "num_attention_heads": 32,
     "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768, "vocab_size": 131072,
     "max_position_embeddings": 32768, "sliding_window": None, "rope_theta": 100000000.0, "torch_dtype": "bfloat16", "rope_scaling": None},
    # A multimodal checkpoint: the language model is in text_config, dtype under transformers 4.56+'s name.
    {"model_type": "gemma3", "dtype": "bfloat16", "vision_config": {"hidden_size": 1152},
     "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                     "hidden_size": 2560, "intermediate_size": 10240, "vocab_size": 262208, "max_position_embeddings": 131072,
                     "sliding_window": 1024, "layer_types": ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 5 + ["full_attention"]
                     + ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 5
                     + ["full_attention"] + ["sliding_attention"] * 4}},
    # Remote code: the layer count under its own name, and no num_key_value_heads (every head keeps its own KV).
    {"model_type": "exaone", "num_layers": 32, "num_attention_heads": 32, "hidden_size": 4096, "intermediate_size": 14336,
     "vocab_size": 102400, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"},
    # MLA keys reach the engine.
    {"model_type": "deepseek_v2", "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_size": 2048,
     "intermediate_size": 10944, "vocab_size": 102400, "max_position_embeddings": 163840, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
     "q_lora_rank": None, "qk_nope_head_dim": 128, "v_head_dim": 128, "torch_dtype": "bfloat16", "n_routed_experts": 64,
     "n_shared_experts": 2, "moe_intermediate_size": 1408, "first_k_dense_replace": 1, "num_experts_per_tok": 6},
]


def test_a_pasted_config_keeps_the_keys_import_model_keeps(page, site_url) -> None:
    from generator.tools.import_model import hf_config_fields

    if not page.url.startswith(site_url):
        page.goto(site_url + "/")
    texts = [json.dumps(c) for c in PASTED_CONFIGS]
    js = json.loads(page.evaluate("async (texts) => { const U = await import('/static/kvcalc-paste.js');"
                                  " return JSON.stringify(texts.map((t) => U.pastedConfig(t))); }", texts))
    for config, read in zip(PASTED_CONFIGS, js, strict=True):
        assert read == hf_config_fields(config)[0]
    refused = page.evaluate("async () => { const U = await import('/static/kvcalc-paste.js');"
                            " return ['[1, 2]', '{\"model_type\": \"x\"}', 'not json'].map((t) => { try { U.pastedConfig(t); return 'read'; } catch (e) { return 'refused'; } }); }")
    assert refused == ["refused"] * 3


def test_a_pasted_config_drives_the_calculator(page, site_url) -> None:
    dataset = load_dataset(FIXTURE_SITE)
    models, gpus = python_catalog(dataset)
    page.goto(site_url + PAIR_URL)
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    page.select_option("#kc-m", "custom")
    config = PASTED_CONFIGS[1]
    page.fill("#kc-cfg", json.dumps(config))
    assert page.input_value("#kc-L") == "34" and page.input_value("#kc-KV") == "4" and page.input_value("#kc-D") == "256"
    assert "gemma3_text" in page.inner_text("#kc-cfg-hint")
    from generator.tools.import_model import hf_config_fields

    weights = float(page.input_value("#kc-w"))
    request = {"engine": "vllm", "hf_config": hf_config_fields(config)[0], "gpu": "rtx-4090", "gpu_count": 2,
               "gpu_memory_utilization": 0.9, "weights_gib": weights}
    answer = python_answer(request, models, gpus)
    _wait_for(page, serve_command("MODEL", (("--gpu-memory-utilization", "0.9"),)))
    page.wait_for_function("(want) => { const e = document.querySelector('#calculator [data-out=per_token]'); return e && e.textContent === want; }",
                           arg=kib(answer["kv_bytes_per_token"]), timeout=10_000)
    shown = _shown(page)
    expected = _expected_figures(answer, gpus["rtx-4090"].total_bytes)
    assert {k: shown[k] for k in expected} == expected
    page.fill("#kc-cfg", "{not json")
    assert page.inner_text("#kc-cfg-hint").startswith("Not read:")


def test_a_config_pasted_with_the_error_reaches_the_calculator(page, site_url) -> None:
    from urllib.parse import quote

    log = ("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). "
           "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    paste = log + "\nmy config.json:\n" + json.dumps(PASTED_CONFIGS[2], indent=2) + "\n"
    page.goto(site_url + "/search/?q=" + quote(paste))
    page.wait_for_url("**/oom/vllm-max-model-len-error/**", timeout=10_000)
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    assert page.input_value("#kc-m") == "custom"
    assert page.input_value("#kc-L") == "32" and page.input_value("#kc-KV") == "32"
    assert "exaone" in page.inner_text("#kc-cfg-hint")
    # It is used once: opening the page again shows the page's own model.
    page.reload()
    page.wait_for_selector("#calculator:not([hidden]) [data-out=verdict]")
    assert page.input_value("#kc-cfg") == ""
