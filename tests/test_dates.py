"""dateModified comes from when a record's content changed, kept in data/lastmod.yaml."""

from __future__ import annotations

from dataclasses import replace

from generator.dates import content_sha, current_ledger, record_dates, stale_keys
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


def test_a_new_optional_field_moves_no_date() -> None:
    # A schema that gains an optional field must not re-date every record already written.
    gpu = load_dataset(FIXTURE_SITE).gpus["rtx-4090"]

    class LaterGpu(type(gpu)):  # type: ignore[misc,valid-type]
        later_field: int | None = None

    later = LaterGpu.model_validate(gpu.model_dump())
    assert content_sha(later) == content_sha(gpu)
    assert content_sha(later.model_copy(update={"later_field": 1})) != content_sha(gpu)
