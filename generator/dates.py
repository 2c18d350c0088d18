"""dateModified from content, not from the clock: each record's date is when its content last changed.

The ledger (data/lastmod.yaml) pairs each record's content hash with a date. A record whose
hash still matches keeps its date, so rebuilding never moves a page's lastmod; a changed or
new record takes `today`, which the CLI fixes from SOURCE_DATE_EPOCH when set.
"""

from __future__ import annotations

import hashlib
import json
from typing import Mapping

from generator.engine.pairs import ENGINE_VERSION
from generator.schema import Dataset, DateLedger, LedgerEntry, Record


def content_sha(record: Record) -> str:
    # Fields no page shows (an error's triage patterns) are left out, so they move no date; so are
    # fields left at their default, so a new optional schema field does not re-date every record.
    undated = getattr(type(record), "UNDATED_FIELDS", frozenset())
    dumped = record.model_dump(mode="json", exclude=set(undated), exclude_defaults=True)
    payload = json.dumps(dumped, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:20]


def _engine_sha() -> str:
    return hashlib.sha256(f"engine-{ENGINE_VERSION}".encode()).hexdigest()[:20]


def current_ledger(dataset: Dataset, today: str) -> DateLedger:
    """The ledger as it should be now: unchanged records keep their dates."""
    entries: dict[str, LedgerEntry] = {}
    shas = {key: content_sha(record) for key, record in dataset.record_keys().items()}
    shas["engine"] = _engine_sha()
    for key, sha in sorted(shas.items()):
        old = dataset.ledger.get(key)
        entries[key] = old if old is not None and old.sha == sha else LedgerEntry(sha=sha, date=today)
    return DateLedger(records=entries)


def record_dates(dataset: Dataset, today: str) -> dict[str, str]:
    """Record key -> date, plus the aggregates pages depend on ('gpus', 'models', '*')."""
    dates = {key: entry.date for key, entry in current_ledger(dataset, today).records.items()}

    def newest(prefix: str) -> str:
        return max((d for k, d in dates.items() if k.startswith(prefix)), default=today)

    dates["gpus"] = newest("gpu:")
    dates["models"] = newest("model:")
    dates["*"] = max(dates.values(), default=today)
    return dates


def stale_keys(dataset: Dataset) -> list[str]:
    """Records whose ledger entry is missing or out of date (what `kvtriage stamp` would change)."""
    fresh: Mapping[str, LedgerEntry] = current_ledger(dataset, "0000-00-00").records
    return sorted(key for key, entry in fresh.items() if entry.date == "0000-00-00")
