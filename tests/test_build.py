"""build: deterministic bytes, and a failed or interrupted build never touches the published site."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.build.pipeline import build_site, safe_relative, write_site
from generator.cli import main
from generator.errors import BuildError
from generator.render.templates import RenderedFile
from generator.write import staging as staging_module
from generator.write.guard import MARKER_NAME
from generator.write.manifest import manifest_path

from .conftest import FIXED_TODAY


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name != MARKER_NAME}


def test_two_builds_give_identical_bytes(site_root: Path, tmp_path: Path) -> None:
    first = build_site(site_root, today=FIXED_TODAY)
    second = build_site(site_root, today=FIXED_TODAY)
    assert [(f.path, f.content) for f in first.files] == [(f.path, f.content) for f in second.files]
    write_site(first.files, tmp_path / "a")
    write_site(second.files, tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_build_writes_pages_and_twins(site_root: Path) -> None:
    assert main(["build", "--root", str(site_root), "--quiet"]) == 0
    page = site_root / "site/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq"
    assert (page / "index.html").is_file() and (page / "index.md").is_file()
    assert (site_root / "site/oom/vllm-max-model-len-error/index.md").is_file()


def test_failed_build_leaves_site_untouched(site_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--root", str(site_root), "--quiet"]) == 0
    before = _tree(site_root / "site")
    gpus = site_root / "data/gpus.yaml"
    gpus.write_text(gpus.read_text().replace("marketed_gb: 24", "marketed_gb: -1"))
    assert main(["build", "--root", str(site_root), "--quiet"]) == 1
    assert "data/gpus.yaml:" in capsys.readouterr().err
    assert _tree(site_root / "site") == before
    assert _temp_dirs(site_root) == []


def test_write_interrupted_midway_keeps_old_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    write_site([RenderedFile("index.html", b"old")], out)

    def files():
        yield RenderedFile("index.html", b"new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_site(files(), out)
    assert _tree(out) == {"index.html": b"old"}
    assert _temp_dirs(tmp_path) == []


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a\\b", "a/%2e%2e/b", "a/\x00", "", "a//b", "./a"])
def test_paths_outside_the_site_are_refused(path: str) -> None:
    with pytest.raises(BuildError):
        safe_relative(path)


def test_check_writes_nothing(site_root: Path) -> None:
    assert main(["check", "--root", str(site_root)]) == 0
    assert not (site_root / "site").exists()


# --------------------------------------------------------------------------- signals
# SIGINT (Ctrl-C) and SIGTERM (a supervisor) mid-write must leave the published site and
# no temporary directory behind; one that lands inside the swap waits for it to finish.

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from generator.build import render_stage  # noqa: E402


def _temp_dirs(parent: Path) -> list[str]:
    """Staging or old trees left beside the site or in its state folder."""
    beside = [p.name for p in parent.iterdir() if p.name.startswith(".site.")]
    return sorted(beside + [p.name for p in parent.glob(".kvtriage-cache/*/stage-*")])


def _forget_manifest(site: Path) -> None:
    """Without its manifest the next build writes a whole fresh tree (an unchanged site would write nothing)."""
    manifest_path(site).unlink()


def test_sigint_mid_write_keeps_the_old_site(site_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--root", str(site_root), "--quiet", "--no-search"]) == 0
    _forget_manifest(site_root / "site")
    before = _tree(site_root / "site")
    real = render_stage.safe_relative
    calls = []

    def interrupting(path: str) -> str:
        calls.append(path)
        if len(calls) == 5:
            os.kill(os.getpid(), signal.SIGINT)  # a real signal, handled as Ctrl-C would be
        return real(path)

    monkeypatch.setattr(render_stage, "safe_relative", interrupting)
    # --jobs 1: the counting wrapper and the signal stay in this process.
    assert main(["build", "--root", str(site_root), "--quiet", "--no-search", "--jobs", "1"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert 5 <= len(calls) < len(before)
    assert _tree(site_root / "site") == before
    assert _temp_dirs(site_root) == []


def test_sigterm_mid_write_in_a_subprocess_keeps_the_old_site(site_root: Path) -> None:
    assert main(["build", "--root", str(site_root), "--quiet", "--no-search"]) == 0
    _forget_manifest(site_root / "site")
    before = _tree(site_root / "site")
    # Slow each write down in the child only, so the parent can catch it mid-write.
    script = (
        "import sys, time\n"
        "import generator.build.render_stage as b\n"
        "real = b.safe_relative\n"
        "def slow(path):\n"
        "    time.sleep(0.05)\n"
        "    return real(path)\n"
        "b.safe_relative = slow\n"
        "from generator.cli import main\n"
        "sys.exit(main(['build', '--root', sys.argv[1], '--quiet', '--no-search']))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(site_root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        staging = None
        while time.monotonic() < deadline and child.poll() is None:
            staging = next((p for p in site_root.glob(".kvtriage-cache/site/stage-*") if any(p.rglob("*.html"))), None)
            if staging is not None:
                break
            time.sleep(0.01)
        assert staging is not None, "the child never started writing"
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err.decode()
    assert b"interrupted" in err
    assert _tree(site_root / "site") == before
    assert _temp_dirs(site_root) == []


def test_a_signal_during_the_swap_waits_for_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    write_site([RenderedFile("index.html", b"old")], out)
    real_exchange = staging_module._exchange_atomically
    sent = []

    def exchange(a, b):  # noqa: ANN001
        if not sent:
            sent.append(b)
            os.kill(os.getpid(), signal.SIGTERM)  # just as the new tree takes the site's name
        return real_exchange(a, b)

    monkeypatch.setattr(staging_module, "_exchange_atomically", exchange)
    with pytest.raises(KeyboardInterrupt):
        write_site([RenderedFile("index.html", b"new")], out)
    assert sent
    assert _tree(out) == {"index.html": b"new"}  # the swap finished before the signal was honoured
    assert _temp_dirs(tmp_path) == []


# --------------------------------------------------------------------------- hostile content

from html.parser import HTMLParser  # noqa: E402

import yaml  # noqa: E402

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


class _Dangers(HTMLParser):
    """Elements a browser would execute: inline scripts, on* handlers, javascript: URLs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._script: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(("javascript:", "data:", "vbscript:")):
                self.found.append(f"<{tag} {name}={value}>")
        if tag == "img" and dict(attrs).get("src") == "x":
            self.found.append("<img src=x>")
        if tag == "script":
            self._script = dict(attrs).get("type") or ""

    def handle_data(self, data: str) -> None:
        if self._script is None:
            return
        if self._script in ("application/ld+json", "application/json"):
            if "<" in data:
                self.found.append("raw '<' inside a JSON script")
        elif "alert(" in data:
            self.found.append("executable script with content from a record")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None


def _poison(value: object) -> object:
    return f"{value} {HOSTILE}" if isinstance(value, str) else value


def test_html_in_every_prose_field_is_escaped(site_root: Path) -> None:
    path = site_root / "content/errors/vllm-max-model-len-error.yaml"
    error = yaml.safe_load(path.read_text(encoding="utf-8"))
    error["title"] = f"{HOSTILE} max seq len error"
    error["short_name"] = "<img src=x onerror=alert(2)>"
    error["description"] = (HOSTILE + " Why vLLM says max seq len is larger than the KV cache, and the fix for your GPU.")[:160]
    for key in ("signature", "triage", "cause"):
        error[key] = _poison(error[key])
    error["pattern"] = error["pattern"] + "|<script>alert\\(1\\)</script>"
    for text in error["texts"]:
        for key in ("versions", "text", "source"):
            text[key] = _poison(text[key])
    for fix in error["fixes"]:
        fix["note"] = _poison(fix["note"])
    for item in error.get("faq", []):
        item["question"], item["answer"] = _poison(item["question"]), _poison(item["answer"])
    path.write_text(yaml.safe_dump(error, allow_unicode=True, sort_keys=False), encoding="utf-8")
    pair = site_root / "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-awq.yaml"
    record = yaml.safe_load(pair.read_text(encoding="utf-8"))
    record["intro"] = _poison(record.get("intro") or "Intro.")
    pair.write_text(yaml.safe_dump(record, allow_unicode=True, sort_keys=False), encoding="utf-8")

    built = build_site(site_root, today=FIXED_TODAY)
    pages = [f for f in built.files if f.path.endswith(".html")]
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in f.content.decode() for f in pages)  # the text is there, inert
    for rendered in pages:
        parser = _Dangers()
        parser.feed(rendered.content.decode("utf-8"))
        assert parser.found == [], f"{rendered.path}: {parser.found}"
