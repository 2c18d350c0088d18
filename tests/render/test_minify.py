"""Static JavaScript is published minified: the same bytes for the same source, still valid ES modules,
and the calculator a vLLM pair page loads within its gzipped budget."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.build.pipeline import build_site
from generator.render.minify import published_static

from ..conftest import FIXED_TODAY, FIXTURE_SITE, REPO

STATIC = REPO / "templates" / "static"
VLLM_PAIR_PAGE = "oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/index.html"
# What a reader's browser fetches as JavaScript on first view of a vLLM pair page, gzipped: about 16.0 KiB with the
# V2 model runner's sampler and penalty terms; the budget leaves room for one more release's rules, no more.
VLLM_PAIR_JS_BUDGET = 17 * 1024


def gzipped_size(content: bytes) -> int:
    return len(gzip.compress(content, compresslevel=9, mtime=0))


@pytest.fixture(scope="module")
def site_files() -> dict[str, bytes]:
    return {f.path: f.content for f in build_site(FIXTURE_SITE, today=FIXED_TODAY).files}


def test_javascript_is_minified_deterministically_and_other_files_pass_through() -> None:
    source = (STATIC / "kvcalc.js").read_bytes()
    once = published_static("kvcalc.js", source)
    assert once == published_static("kvcalc.js", source)
    assert len(once) < len(source) and b"/**" not in once
    css = (STATIC / "site.css").read_bytes()
    assert published_static("site.css", css) == css


def test_minified_modules_keep_exports_and_template_literals() -> None:
    for path in sorted(STATIC.glob("*.js")):
        source = path.read_text()
        published = published_static(path.name, path.read_bytes()).decode()
        for literal in re.findall(r"(?<![\w*])`[^`]*\$\{[^`]*`", source):  # template literals with substitutions
            assert literal in published, (path.name, literal)
        assert bool(re.search(r"^export\b", source, re.M)) == bool(re.search(r"\bexport\s*(\{|const|function|class)", published)), path.name


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_every_minified_module_parses(tmp_path: Path) -> None:
    for path in sorted(STATIC.glob("*.js")):
        module = tmp_path / f"{path.stem}.mjs"
        module.write_bytes(published_static(path.name, path.read_bytes()))
        result = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
        assert result.returncode == 0, (path.name, result.stderr)


def vllm_pair_page_scripts(files: dict[str, bytes]) -> list[str]:
    """Static paths of the JavaScript a vLLM pair page loads before the reader picks another engine:
    its <script src>s and the engine module the calculator imports (data-engine-src)."""
    html = files[VLLM_PAIR_PAGE].decode()
    urls = re.findall(r'<script[^>]*\bsrc="(/static/[^"?]+\.js)', html) + re.findall(r'data-engine-src="(/static/[^"?]+\.js)', html)
    return sorted({url.lstrip("/") for url in urls})


def test_a_vllm_pair_page_loads_at_most_17_kib_of_gzipped_javascript(site_files: dict[str, bytes]) -> None:
    scripts = vllm_pair_page_scripts(site_files)
    assert {"static/kvcalc.js", "static/kvcalc-ui.js"} <= set(scripts)
    total = sum(gzipped_size(site_files[path]) for path in scripts)
    assert total <= VLLM_PAIR_JS_BUDGET, f"{total} bytes gzipped over {scripts}"


def test_the_fingerprint_follows_the_published_bytes(site_files: dict[str, bytes]) -> None:
    import hashlib

    html = site_files[VLLM_PAIR_PAGE].decode()
    version = re.search(r'data-engine-src="/static/kvcalc\.js\?v=([0-9a-f]{10})"', html).group(1)
    assert hashlib.sha256(site_files["static/kvcalc.js"]).hexdigest()[:10] == version
    assert site_files["static/kvcalc.js"] == published_static("kvcalc.js", (STATIC / "kvcalc.js").read_bytes())


def _template_literals(source: str) -> list[tuple[int, str, bool]]:
    """Each template literal in a JavaScript source: (line, text between its backticks, nested in
    another's ${...}). A scanner, not a parser: enough for the calculator's own files."""
    found: list[tuple[int, str, bool]] = []
    stack: list[list] = []  # ["T", start] inside a template, ["E", depth] inside its ${...}
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        top = stack[-1] if stack else None
        if top is not None and top[0] == "T":
            if c == "\\":
                i += 2
                continue
            if c == "`":
                stack.pop()
                found.append((source.count("\n", 0, top[1]) + 1, source[top[1] + 1:i], any(s[0] == "E" for s in stack)))
            elif source.startswith("${", i):
                stack.append(["E", 0])
                i += 1
            i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and source[j] not in (c, "\n"):
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            continue
        if source.startswith("//", i) and (i == 0 or source[i - 1] in " \n\t;{}()"):
            i = source.find("\n", i) if "\n" in source[i:] else n
            continue
        if source.startswith("/*", i):
            i = source.find("*/", i) + 2
            continue
        if c == "/" and source[:i].rstrip()[-1:] in tuple("(,=:[!&|?{};"):
            j, in_class = i + 1, False  # a regular expression literal
            while j < n and (in_class or source[j] != "/"):
                in_class = (in_class or source[j] == "[") and source[j] != "]"
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            continue
        if c == "`":
            stack.append(["T", i])
        elif top is not None and top[0] == "E" and c == "{":
            top[1] += 1
        elif top is not None and top[0] == "E" and c == "}":
            if top[1] == 0:
                stack.pop()
            else:
                top[1] -= 1
        i += 1
    return found


@pytest.mark.parametrize("path", sorted(STATIC.glob("*.js")), ids=lambda p: p.name)
def test_minifying_keeps_every_template_literal(path: Path) -> None:
    """rjsmin treats a template literal inside another's ${...} as code and drops its spaces
    (`${a} ${b}` became `${a}${b}` in the memory bar's title), so the sources nest none, and the
    text of every template literal must survive minification unchanged."""
    source = path.read_text(encoding="utf-8")
    literals = _template_literals(source)
    assert not [line for line, _, nested in literals if nested], f"{path.name}: nested template literals at lines {[line for line, _, nested in literals if nested]}"
    minified = published_static(path.name, source.encode()).decode()
    for line, text, _ in literals:
        assert f"`{text}`" in minified, f"{path.name}:{line}: template literal changed by minification"
