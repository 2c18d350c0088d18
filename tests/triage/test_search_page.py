"""The search page's contract with triage.js, under Node with a stub DOM: `/search/?q=<text>`
either goes to the best page or lists the ranked matches in #matches, best first."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from generator.render.site_files import search_index_file

from .test_corpus import ROOT, _errors

NODE = shutil.which("node")
STATIC = ROOT / "templates" / "static"
SCRIPT = """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = {navigated: null, items: [], said: []};
function node(tag) {
  return {tag: tag, children: [], textContent: "", href: "", appendChild(child) { this.children.push(child); }};
}
const elements = {pagefind: Object.assign(node("div"), {getAttribute: () => "/search/errors.json"}), matches: node("div"), q: node("textarea")};
global.document = {getElementById: (id) => elements[id], createElement: node, createTextNode: (text) => ({textContent: text}),
                   head: node("head"), body: node("body")};
global.window = {location: {search: "?q=" + encodeURIComponent(input.q), replace: (url) => { out.navigated = url; }}};
global.window.kvTriage = require(input.triage);
global.fetch = () => Promise.resolve({json: () => Promise.resolve(input.index)});
require(input.search);
setTimeout(() => {
  for (const child of elements.matches.children) {
    if (child.tag === "p") out.said.push(child.textContent);
    if (child.tag !== "ul") continue;
    for (const li of child.children) out.items.push(li.children[0].href);
  }
  process.stdout.write(JSON.stringify(out));
}, 50);
"""


def _search_page(query: str) -> dict:
    class Dataset:  # search_index_file reads only .errors
        errors = _errors()

    index = json.loads(search_index_file(Dataset).content)
    payload = {"q": query, "index": index, "triage": str(STATIC / "triage.js"), "search": str(STATIC / "search.js")}
    run = subprocess.run([NODE, "-e", SCRIPT], input=json.dumps(payload), capture_output=True, text=True, timeout=60, check=True)
    return json.loads(run.stdout)


@pytest.mark.skipif(NODE is None, reason="needs node to run templates/static/search.js")
def test_a_clear_paste_goes_to_its_page() -> None:
    paste = ("(EngineCore_DP0 pid=6880) ERROR 05-12 10:11:12 [core.py:718] Traceback (most recent call last):\n"
             "(EngineCore_DP0 pid=6880)   File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 1, in _dummy_sampler_run\n"
             "(EngineCore_DP0 pid=6880) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB.\n"
             "(EngineCore_DP0 pid=6880) RuntimeError: Engine core initialization failed. See root cause above.\n")
    assert _search_page(paste) == {"navigated": "/oom/vllm-sampler-warmup-oom/", "items": [], "said": []}


@pytest.mark.skipif(NODE is None, reason="needs node to run templates/static/search.js")
def test_an_unclear_paste_lists_ranked_pages_best_first() -> None:
    paste = ("ValueError: No available memory for the cache blocks.\n"
             "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664).")
    result = _search_page(paste)
    assert result["navigated"] is None
    assert result["items"] == ["/oom/vllm-max-model-len-error/", "/oom/vllm-no-cache-blocks/"]


@pytest.mark.skipif(NODE is None, reason="needs node to run the search page's scripts")
def test_a_bare_torch_oom_is_listed_not_gone_to() -> None:
    # A torch OOM with no engine line names no step, so no page is certain: the pages whose
    # signatures hold its words are listed, not navigated to.
    # https://github.com/studio-dots-ai/dots.ocr/issues/196
    paste = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 74.16 GiB. GPU 0 has a total capacity of "
             "44.40 GiB of which 29.89 GiB is free. Process 2684311 has 14.51 GiB memory in use.")
    result = _search_page(paste)
    assert result["navigated"] is None
    assert "/oom/vllm-weights-oom/" in result["items"]


@pytest.mark.skipif(NODE is None, reason="needs node to run the search page's scripts")
def test_a_wrapper_line_alone_is_listed_not_gone_to() -> None:
    # A weak match (a wrapper that only says something else failed) is a choice, not a destination.
    result = _search_page("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
    assert result["navigated"] is None
    assert result["items"][0] == "/oom/vllm-engine-core-init-failed/"


@pytest.mark.skipif(NODE is None, reason="needs node to run the search page's scripts")
def test_a_look_alike_gets_no_memory_page() -> None:
    # https://github.com/oobabooga/textgen/issues/6223: the architecture is unknown, the line after
    # it only reports that loading stopped.
    paste = ("llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'chatglm'\n"
             "llama_load_model_from_file: failed to load model")
    result = _search_page(paste)
    assert result["navigated"] is None and result["items"] == []
    assert any("not about memory" in said for said in result["said"])
