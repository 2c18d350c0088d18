"""templates/static/recompute.js against generator/engine/from_log.py, under Node.

Both get the numbers the triage extracts from every paste of the corpus (and a log of a catalog
model), the catalog's vLLM builds and the in-page engine (kvcalc.js, the same JSON constants the
site ships), with the release the log names (kvcalc-release.js) where the calculator has its rules
(0.6.0 to the newest); Python is given the same release, or none outside that span.
Skipped where there is no `node`.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from generator.engine.from_log import recompute_llamacpp, recompute_vllm
from generator.engine.llamacpp import CTX_PAD
from generator.engine.vllm import VllmInputError, parse_version
from generator.kv.calculator import calculator_catalog
from generator.load import load_dataset
from generator.triage import telling_line, triage
from generator.triage.command import reader_command, reader_fix
from generator.triage.report import recompute_data

from ..kv.test_calculator_parity import differences
from .test_corpus import PASTES, ROOT
from .test_recompute import LLAMA_LOG, LOG

NODE = shutil.which("node")


def _parses(release: str) -> bool:
    try:
        parse_version(release)
    except VllmInputError:
        return False
    return True
# A command line pasted with its log, continued over lines the way shells take it.
COMMAND_LOG = ("$ vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --max-model-len=32768 --enforce-eager \\\n  -tp 2 --gpu-memory-utilization 0.9\n"
               + LOG.split("\n", 1)[1])
STATIC = ROOT / "templates" / "static"
SCRIPT = """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
(async () => {
  const K = await import(input.kvcalc), R = await import(input.recompute), Rel = await import(input.release);
  (await import(input.hybrid)).install(K);
  Rel.install(K);
  const triage = require(input.triage);
  const out = input.cases.map((c) => {
    const model = R.matchModel(c.numbers.model, input.catalog);
    return { model: model ? model.repo : null, figures: R.recomputeVllm(c.numbers, model, K, (c.release && Rel.releaseFor(c.release, input.catalog)) || input.catalog.vllm),
             llama: R.recomputeLlamacpp(c.numbers, input.catalog.llamacpp.ctx_pad), telling: triage.tellingLine(c.text, input.rules),
             command: R.readerCommand(c.text) };
  });
  out.forEach((o, i) => {
    o.fix = R.readerFix(input.cases[i].text, o.figures);
    o.llama_fix = R.readerFix(input.cases[i].text, o.llama);
  });
  process.stdout.write(JSON.stringify(out));
})();
"""


@pytest.mark.skipif(NODE is None, reason="needs node to run templates/static/recompute.js")
def test_recompute_js_gives_the_figures_python_gives(tmp_path) -> None:
    from generator.kv.hf_ids import hf_id_index, vllm_build
    from generator.triage import RULES

    dataset = load_dataset(ROOT)
    catalog = calculator_catalog(dataset)
    index = hf_id_index(dataset.models)
    # ES modules as .mjs, so Node loads them as the browser does.
    for name in ("kvcalc.js", "recompute.js", "kvcalc-hybrid.js", "kvcalc-release.js"):
        shutil.copy(STATIC / name, tmp_path / name.replace(".js", ".mjs"))
    texts = [paste["text"] for paste in PASTES] + [LOG, LLAMA_LOG, COMMAND_LOG]
    # LOG as older releases print it: the figures follow each release's rules (V0, the V2 runner, the null block).
    texts += [f"INFO 01-20 10:13:01 api_server.py:712] vLLM API server version {release}\n" + LOG
              for release in ("0.6.3", "0.9.2", "0.10.1.1", "0.27.1", "0.28.0")]
    results_py = [triage(text, []) for text in texts]
    oldest, newest = parse_version(catalog["vllm"]["releases"][-1]["first"]), parse_version(catalog["vllm"]["version"])
    releases = [r.release if r.engine == "vllm" and r.release and _parses(r.release) and oldest <= parse_version(r.release) <= newest else None
                for r in results_py]
    cases = [{"text": text, "numbers": r.numbers, "release": release} for text, r, release in zip(texts, results_py, releases)]
    assert sum(1 for release in releases if release) >= 3  # the corpus has logs that name their release
    payload = {"kvcalc": str(tmp_path / "kvcalc.mjs"), "recompute": str(tmp_path / "recompute.mjs"), "hybrid": str(tmp_path / "kvcalc-hybrid.mjs"), "release": str(tmp_path / "kvcalc-release.mjs"),
               "triage": str(STATIC / "triage.js"), "catalog": json.loads(json.dumps(catalog)), "rules": RULES, "cases": cases}
    run = subprocess.run([NODE, "-e", SCRIPT], input=json.dumps(payload), capture_output=True, text=True, timeout=300, check=True)
    results = json.loads(run.stdout)
    shown = commands = 0
    for text, case, js in zip(texts, cases, results):
        named = case["numbers"].get("model")
        model = vllm_build(dataset.models, index.resolve(named)) if named else None
        assert js["model"] == (model.repo if model else None), text[:80]
        py = json.loads(json.dumps(recompute_data(recompute_vllm(case["numbers"], case["release"], model))))
        assert not differences(py, js["figures"]), (text[:80], differences(py, js["figures"]))
        assert js["telling"] == telling_line(text), text[:80]
        llama = json.loads(json.dumps(recompute_data(recompute_llamacpp(case["numbers"], CTX_PAD))))
        assert not differences(llama, js["llama"]), (text[:80], differences(llama, js["llama"]))
        command = reader_command(text)
        assert js["command"] == (None if command is None else json.loads(json.dumps(command.__dict__))), text[:80]
        assert js["fix"] == reader_fix(text, None, py), text[:80]
        assert js["llama_fix"] == reader_fix(text, None, llama), text[:80]
        commands += command is not None
        shown += py is not None
    assert shown >= 5  # the corpus has pastes that print vLLM's KV memory, and LOG names a catalog model
    assert commands >= 5  # and pastes that hold the reader's command (LOG's non-default args, COMMAND_LOG's command line)
