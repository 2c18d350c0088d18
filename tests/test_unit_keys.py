"""build/unit_keys.py: a command-line rebuild takes the stored keys of the pair pages of errors planned
from what an earlier build planned them from, instead of keying them; the keys it takes, and the site
it writes, are those a cold build makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.build import render_stage
from generator.build.incremental import build_and_write
from generator.write.manifest import read_manifest
from generator.write.state import state_dir

from .test_build_incremental import (
    _add_featured_pair,
    _edit_error_prose,
    _edit_gpu_buy_link,
    _edit_gpu_memory,
    _edit_pair_errors,
    _edit_pair_intro,
    _remove_featured_pair,
    cold,
    root,  # noqa: F401  (the fixture)
)
from .test_build_parallel import tree


def _keys(site: Path) -> dict[str, str | None]:
    manifest = read_manifest(site)
    assert manifest is not None
    return {path: entry.key for path, entry in manifest.files.items()}


def _keyed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages page_key() hashes (not those whose stored key stands in)."""
    hashed: list[str] = []
    real = render_stage.page_key

    def spy(job, page):
        if id(page) not in job.known_keys:
            hashed.append(page.url)
        return real(job, page)

    monkeypatch.setattr(render_stage, "page_key", spy)
    import generator.build.incremental as incremental

    monkeypatch.setattr(incremental, "page_key", spy, raising=False)
    return hashed


def test_an_error_edit_keys_only_that_errors_pair_pages_and_the_other_pages(root: Path, tmp_path: Path,  # noqa: F811
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    assert (state_dir(site) / "unit-keys.pickle").is_file()
    hashed = _keyed(monkeypatch)
    _edit_error_prose(root)
    build_and_write(root, site, jobs=1, search=False)
    pair_pages = {url for url in hashed if url.count("/") == 5}  # /oom/<error>/<gpu>/<build>/
    assert pair_pages and {url.split("/")[2] for url in pair_pages} == {"vllm-max-model-len-error"}
    assert tree(site) == cold(root, tmp_path)
    assert _keys(site) == _keys(tmp_path / "cold")


@pytest.mark.parametrize("edits", [
    (_edit_pair_intro, _edit_error_prose, _edit_gpu_buy_link),
    (_add_featured_pair, _edit_pair_errors, _remove_featured_pair),
    (_edit_gpu_memory, _edit_pair_intro),
], ids=["pair-error-gpu", "featured-pairs", "gpu-memory"])
def test_rebuilds_taking_stored_keys_equal_cold_builds_key_for_key(root: Path, tmp_path: Path, edits) -> None:  # noqa: F811
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    for step, edit in enumerate(edits):
        edit(root)
        build_and_write(root, site, jobs=2, search=False)
        reference = tmp_path / f"cold-{step}"
        assert tree(site) == cold(root, reference), f"after {edit.__name__}"
        assert _keys(site) == _keys(reference / "cold"), f"after {edit.__name__}"


def test_a_damaged_record_costs_keying_only(root: Path, tmp_path: Path) -> None:  # noqa: F811
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    (state_dir(site) / "unit-keys.pickle").write_bytes(b"\x80\x05not a pickle")
    _edit_error_prose(root)
    build_and_write(root, site, jobs=1, search=False)
    assert tree(site) == cold(root, tmp_path)
