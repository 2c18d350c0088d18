"""What a build keeps beside its site cannot make it delete, run or publish anything it should not:
the manifest lives outside the published folder, and caches load as plain values or not at all."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from generator.build.incremental import build_and_write
from generator.write.guard import MARKER_NAME
from generator.write.manifest import manifest_path
from generator.write.state import state_dir

from ..test_build_parallel import tree


def edit(root: Path) -> None:
    path = root / "content/errors/vllm-max-model-len-error.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("{{ vllm.max_len }}", "{{ vllm.max_len }} (edited)", 1), encoding="utf-8")


def test_the_published_folder_holds_no_build_state_and_two_builds_are_byte_identical(site_root: Path, tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795910400")
    for name in ("a", "b"):
        build_and_write(site_root, tmp_path / name, jobs=1)
    names = {p.name for p in (tmp_path / "a").rglob("*")}
    assert "manifest.json" not in names and ".kvtriage-manifest.json" not in names
    assert MARKER_NAME in names
    files = lambda site: {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}  # noqa: E731
    assert files(tmp_path / "a") == files(tmp_path / "b")


def test_paths_added_to_the_manifest_are_never_deleted(site_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    victims = [tmp_path / "victim.txt", site_root / "data" / "victim.yaml"]
    for victim in victims:
        victim.write_text("mine")
    manifest = json.loads(manifest_path(site).read_bytes())
    entry = next(iter(manifest["files"].values()))
    for path in ("../victim.txt", str(victims[0]), "../root/data/victim.yaml", "/etc/hostname"):
        manifest["files"][path] = entry
    manifest_path(site).write_text(json.dumps(manifest))
    edit(site_root)
    build_and_write(site_root, site, jobs=1, search=False)
    assert all(victim.read_text() == "mine" for victim in victims)
    assert Path("/etc/hostname").exists() or not Path("/etc").exists()
    assert tree(site) == tree(_cold(site_root, tmp_path))


def _cold(root: Path, tmp_path: Path) -> Path:
    out = tmp_path / "cold"
    build_and_write(root, out, jobs=1, search=False)
    return out


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("cache", ["results.pickle", "parsed.pickle", "facts.pickle", "facts-0.bin"])
def test_a_crafted_cache_runs_nothing_and_costs_only_a_rebuild(site_root: Path, tmp_path: Path, cache: str) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    ran = tmp_path / "payload-ran"
    (state_dir(site) / cache).write_bytes(pickle.dumps({"version": "x", "files": _Payload(ran), "index": _Payload(ran)}))
    edit(site_root)
    build_and_write(site_root, site, jobs=1, search=False)
    assert not ran.exists()
    assert tree(site) == tree(_cold(site_root, tmp_path))


@pytest.mark.parametrize("damage", [b"", b"\x80\x05garbage", b"{not json", b'{"format": 2, "inputs": 1, "files": {"a": [1]}}'])
def test_a_corrupt_manifest_or_cache_costs_a_rebuild(site_root: Path, tmp_path: Path, damage: bytes) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    for name in ("manifest.json", "results.pickle", "parsed.pickle", "facts.pickle", "facts-0.bin"):
        (state_dir(site) / name).write_bytes(damage)
    edit(site_root)
    build_and_write(site_root, site, jobs=1, search=False)
    assert tree(site) == tree(_cold(site_root, tmp_path))


def test_a_published_file_replaced_by_a_link_is_rebuilt_not_followed(site_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    page = site / "about/index.html"
    recorded = page.stat()
    page.unlink()
    page.symlink_to(secret)
    os.utime(page, ns=(recorded.st_atime_ns, recorded.st_mtime_ns), follow_symlinks=False)
    edit(site_root)
    build_and_write(site_root, site, jobs=1, search=False, force=True)
    assert not page.is_symlink() and b"private" not in page.read_bytes()
    assert tree(site) == tree(_cold(site_root, tmp_path))


def test_damaged_facts_data_alone_costs_a_rebuild(site_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    data = state_dir(site) / "facts-0.bin"
    data.write_bytes(bytes(len(data.read_bytes())))
    error = site_root / "content/errors/vllm-max-model-len-error.yaml"
    text = error.read_text(encoding="utf-8")
    start = text.index("cause: |\n") + len("cause: |\n")
    error.write_text(text[:start] + "  See [the GPUs](/gpus/) first.\n" + text[start:], encoding="utf-8")  # checks links into unchanged pages
    assert "fresh tree" in build_and_write(site_root, site, jobs=1, search=False)
    assert tree(site) == tree(_cold(site_root, tmp_path))
