"""`kvtriage kv` answers from the catalog shipped in the package when the folder it runs in has no data/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main
from generator.kv.catalog import SHIPPED_CATALOG, CatalogLookup, catalog_lookup, shipped_catalog_bytes, shipped_lookup
from generator.load import load_dataset

from ..conftest import FIXTURE_SITE, REPO


def test_the_shipped_catalog_is_the_repositorys_data() -> None:
    assert SHIPPED_CATALOG.read_bytes() == shipped_catalog_bytes(load_dataset(REPO)), "run `kvtriage schema`"


def test_the_shipped_catalog_resolves_ids_as_the_data_does() -> None:
    shipped, live = shipped_lookup(), CatalogLookup(load_dataset(REPO))
    for key in ("qwen2.5-coder-32b-instruct-awq", "qwen2.5-coder-32b-instruct", "llama-3.1-8b-instruct-bf16"):
        assert shipped.model(key) == live.model(key)
    assert shipped.gpu("rtx-4090") == live.gpu("rtx-4090")
    assert shipped.model("no-such-model") is None


def test_kv_works_from_any_folder_and_root_still_names_another_sites_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(catalog_lookup(tmp_path), type(shipped_lookup()))
    assert main(["kv", "vllm", "--model", "qwen2.5-coder-32b-instruct-awq", "--gpu", "rtx-4090", "--json"]) in (0, 1)  # 1: does not fit
    answer = json.loads(capsys.readouterr().out)
    assert answer["kv_bytes_per_token"] > 0
    assert isinstance(catalog_lookup(FIXTURE_SITE), CatalogLookup)
