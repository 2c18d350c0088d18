"""The search page in a real headless Chromium (Debian's chromium, driven by playwright).

The fixture site is built and served with the repository's own error index and calculator
catalog, so the page runs the shipped triage.js, recompute.js and kvcalc.js on what readers paste:
- the browser triage ranks and extracts like generator/triage on every paste of the corpus;
- `/search/?q=<text>` goes to the best page, or lists the ranked pages in #matches, best first;
- a paste that prints vLLM's KV memory stays on the page and shows the reader's own figures.
Skipped, with the reason, where Chromium or playwright is missing.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote, urlsplit

import pytest

from generator.build.incremental import build_and_write
from generator.build.pipeline import build_site, write_site
from generator.engine.from_log import recompute_vllm
from generator.kv.calculator import catalog_json
from generator.load import load_dataset
from generator.render.site_files import pagefind_executable, search_index_file
from generator.triage import record_from_error, triage
from generator.triage.report import result_data

from ..conftest import FIXED_TODAY, FIXTURE_SITE, copy_site
from ..kv.test_calculator_parity import browser_context  # noqa: F401  (a fixture)
from .test_corpus import PASTES, ROOT
from .test_recompute import LOG


@contextlib.contextmanager
def served(site: Path) -> Iterator[str]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    out = Path(tempfile.mkdtemp(prefix="kvtriage-search-"))
    write_site(build_site(FIXTURE_SITE, today=FIXED_TODAY).files, out / "site")
    dataset = load_dataset(ROOT)
    index = search_index_file(dataset)
    (out / "site" / index.path).write_bytes(index.content)
    (out / "site" / "static" / "kvcalc-catalog.json").write_bytes(catalog_json(dataset))
    try:
        with served(out / "site") as url:
            yield url
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture
def page(browser_context, site_url):  # noqa: F811
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # The fixture site has no Pagefind index (a full build writes it): its 404s are expected.
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "Failed to load resource" not in msg.text else None)
    yield page
    page.close()
    assert not errors, f"the page logged errors: {errors}"


def test_browser_triage_ranks_and_extracts_like_python_on_the_whole_corpus(page, site_url) -> None:
    page.goto(site_url + "/")
    page.add_script_tag(url="/static/triage.js")
    index = json.loads(search_index_file(load_dataset(ROOT)).content)
    texts = [paste["text"] for paste in PASTES]
    results = json.loads(page.evaluate(
        """([index, texts]) => {
          const records = index.errors.map((row) => Object.assign({id: row.id, title: row.title, url: row.url}, row.triage));
          return JSON.stringify(texts.map((text) => window.kvTriage.triage(text, records, index.triage_rules)));
        }""",
        [index, texts],
    ))
    records = [record_from_error(error) for error in load_dataset(ROOT).errors.values()]
    for paste, js in zip(PASTES, results):
        py = result_data(triage(paste["text"], records))
        where = paste["id"]
        assert (js["engine"], js["release"], js["step"]) == (py["engine"], py["release"], py["step"]), where
        assert [c["id"] for c in js["candidates"]] == [c["id"] for c in py["candidates"]], where
        assert (js["confident"], js["lookalike"]) == (py["confident"], py["lookalike"]), where
        for j, p in zip(js["candidates"], py["candidates"]):
            assert abs(j["score"] - p["score"]) < 0.011, where
            assert (j["reason"]["line"], j["reason"]["line_number"]) == (p["reason"]["line"], p["reason"]["line_number"]), where
        assert js["numbers"] == py["numbers"], where


def _search(page, site_url: str, text: str) -> None:
    page.goto(site_url + "/search/?q=" + quote(text))


MAX_LEN_ERROR = ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in "
                 "KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")


def test_a_clear_paste_goes_to_its_page(page, site_url) -> None:
    paste = ("INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n"
             + MAX_LEN_ERROR)
    _search(page, site_url, paste)
    # The numbers the paste prints go with it, in the fragment, and the page's calculator opens on them.
    page.wait_for_url(site_url + "/oom/vllm-max-model-len-error/#len=4096&e=vllm", timeout=15000)
    page.wait_for_selector("#kc-len", timeout=15000)
    assert page.input_value("#kc-len") == "4096"


def test_the_release_a_log_names_opens_the_calculator_on_that_release(page, site_url) -> None:
    paste = ("INFO 01-20 10:13:01 api_server.py:712] vLLM API server version 0.9.2\n"
             + MAX_LEN_ERROR)
    _search(page, site_url, paste)
    page.wait_for_url(site_url + "/oom/vllm-max-model-len-error/#vr=0.9.2&len=4096&e=vllm", timeout=15000)
    # kvcalc-release.js opens the range that holds 0.9.2, and the verdict names it.
    page.wait_for_function("() => document.querySelector('#kc-vr') && document.querySelector('#kc-vr').value === '0.9.1'", timeout=15000)
    page.wait_for_function("() => (document.querySelector('#calculator [data-out=release]') || {}).textContent?.includes('0.9.1-0.9.x')", timeout=15000)
    assert page.input_value("#kc-len") == "4096"


def test_a_confident_match_carries_the_readers_settings_to_the_calculator(page, site_url) -> None:
    paste = next(p["text"] for p in PASTES if p["id"] == "vllm-0001")
    _search(page, site_url, paste)
    page.wait_for_url("**/oom/vllm-max-model-len-error/#*", timeout=15000)
    assert page.url.endswith("#u=0.9&len=29000&mem=23.58&g=custom&e=vllm")
    page.wait_for_selector("#kc-mem", timeout=15000)
    fields = [page.input_value(f"#kc-{name}") for name in ("g", "mem", "u", "len")]
    assert fields == ["custom", "23.58", "0.9", "29000"]


def test_an_unclear_paste_lists_ranked_pages_in_matches_best_first(page, site_url) -> None:
    paste = ("ValueError: No available memory for the cache blocks.\n"
             "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664).")
    _search(page, site_url, paste)
    page.wait_for_selector("#matches li", timeout=15000)
    hrefs = page.eval_on_selector_all("#matches li > a", "links => links.map((a) => a.getAttribute('href'))")
    assert hrefs == ["/oom/vllm-max-model-len-error/", "/oom/vllm-no-cache-blocks/"]
    assert page.url.startswith(site_url + "/search/")


def test_a_log_that_prints_the_kv_memory_shows_the_readers_own_figures(page, site_url) -> None:
    from generator.kv.hf_ids import hf_id_index, vllm_build

    _search(page, site_url, LOG)
    page.wait_for_selector("#diagnosis:not([hidden])", timeout=20000)
    text = page.inner_text("#diagnosis")
    numbers = triage(LOG, []).numbers
    models = load_dataset(ROOT).models
    figures = recompute_vllm(numbers, None, vllm_build(models, hf_id_index(models).resolve(numbers["model"])))
    assert f"Longest --max-model-len that starts: {figures.longest.low:,} to {figures.longest.high:,} tokens" in text
    assert f"With --kv-cache-dtype fp8: {figures.longest_fp8.low:,} to {figures.longest_fp8.high:,} tokens" in text
    assert "5.585 to 5.595 GiB" in text and "From your log:" in text and "Modelled:" in text
    assert figures.command in text
    # The reader's own command (its model and flags from the log), with only the fix changed.
    assert "Your command, with only the fix changed (model and flags from the non-default args line):" in text
    assert f"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len {figures.longest.low}" in text
    assert f"--max-model-len 131072 -> {figures.longest.low}: the longest context whose KV cache fits the memory your log prints" in text
    assert page.url.startswith(site_url + "/search/")


def test_a_llamacpp_log_with_its_buffers_shows_the_context_that_fits(page, site_url) -> None:
    from .test_recompute import LLAMA_LOG

    _search(page, site_url, LLAMA_LOG)
    page.wait_for_selector("#diagnosis:not([hidden])", timeout=20000)
    text = page.inner_text("#diagnosis")
    assert "-c 34304" in text and "128.00 MiB per 1024 tokens" in text and "From your log:" in text


# --------------------------------------------------------------------------- full-text search, both bundles


@pytest.fixture(scope="module")
def indexed_url() -> Iterator[str]:
    """The fixture site as `kvtriage build` publishes it, Pagefind's two bundles included."""
    if pagefind_executable() is None:
        pytest.skip("Pagefind is not installed (pip install 'pagefind[bin]')")
    out = Path(tempfile.mkdtemp(prefix="kvtriage-indexed-"))
    try:
        build_and_write(copy_site(out / "root"), out / "site", search=True, today=FIXED_TODAY)
        with served(out / "site") as url:
            yield url
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_full_text_search_ranks_whole_pages_and_pair_pages_from_both_bundles_together(browser_context, indexed_url) -> None:  # noqa: F811
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        # No signature matches a GPU's name: the page runs the full-text search, in /pagefind/ (the GPU's
        # page) and /pagefind-pairs/ (its pair pages, by their title up to the verdict) at once.
        _search(page, indexed_url, "RTX 4090")
        page.wait_for_selector(".pagefind-ui__result-link", timeout=15000)
        more = page.locator(".pagefind-ui__button")  # "Load more results", while there are more
        while more.count() and more.first.is_visible():
            more.first.click()
            page.wait_for_timeout(300)
        found = [urlsplit(href).path for href in page.eval_on_selector_all(".pagefind-ui__result-link", "as => as.map((a) => a.href)")]
        assert "/gpus/rtx-4090/" in found
        assert "/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/" in found
    finally:
        page.close()
    assert not errors, f"the page logged errors: {errors}"

