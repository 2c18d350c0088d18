"""dateModified comes from when a record's content changed, kept in data/lastmod.yaml."""

from __future__ import annotations

from dataclasses import replace

from generator.dates import current_ledger, record_dates, stale_keys
from generator.load import load_dataset

from .conftest import FIXTURE_SITE, REPO


def test_shipped_ledger_is_current() -> None:
    stale = stale_keys(load_dataset(REPO))
    assert stale == [], f"records changed without a new date: {stale}; run `kvtriage stamp` and commit data/lastmod.yaml"


def test_unchanged_records_keep_their_date_and_changed_ones_move() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    first = current_ledger(dataset, "2026-01-01")
    dataset = replace(dataset, ledger=first.records)
    gpu = dataset.gpus["rtx-4090"]
    changed = replace(dataset, gpus={**dataset.gpus, "rtx-4090": gpu.model_copy(update={"buy_query": "RTX 4090"})})
    later = record_dates(changed, "2026-06-01")
    assert later["gpu:rtx-4090"] == "2026-06-01"
    assert later["model:qwen2.5-coder-32b-instruct"] == "2026-01-01"
    assert later["gpus"] == "2026-06-01" and later["*"] == "2026-06-01"
    assert record_dates(dataset, "2026-06-01")["*"] == "2026-01-01"
