"""build: deterministic bytes, and a failed or interrupted build never touches the published site."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.build import build_site, safe_relative, write_site
from generator.cli import main
from generator.errors import BuildError
from generator.render import RenderedFile

from .conftest import FIXED_TODAY


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


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
    assert not [p for p in site_root.iterdir() if p.name.startswith(".site.")]


def test_write_interrupted_midway_keeps_old_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    write_site([RenderedFile("index.html", b"old")], out)

    def files():
        yield RenderedFile("index.html", b"new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_site(files(), out)
    assert _tree(out) == {"index.html": b"old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a\\b", "a/%2e%2e/b", "a/\x00", "", "a//b", "./a"])
def test_paths_outside_the_site_are_refused(path: str) -> None:
    with pytest.raises(BuildError):
        safe_relative(path)


def test_check_writes_nothing(site_root: Path) -> None:
    assert main(["check", "--root", str(site_root)]) == 0
    assert not (site_root / "site").exists()
