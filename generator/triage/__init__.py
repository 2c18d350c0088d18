"""Triage: from a pasted log to ranked error pages, with reasons and the numbers it prints.

`triage(text, records)` is pure; `records_from_errors` turns validated ErrorSignature records
into the little the triage needs (their patterns, weight and wordings), so a new error record
with good patterns is all it takes for the triage to find it.
"""

from __future__ import annotations

from typing import Any, Iterable

from generator.triage.core import (
    Candidate,
    Reason,
    TriageRecord,
    TriageResult,
    Wording,
    detect_engine,
    detect_release,
    detect_step,
    extract_numbers,
    normalise,
    telling_line,
    triage,
)
from generator.triage.rules import RULES


def record_from_error(error: Any) -> TriageRecord:
    """The triage data of one ErrorSignature: its `pattern` first, then its `triage_patterns`."""
    extra = tuple(getattr(error, "triage_patterns", ()) or ())
    return TriageRecord(
        id=error.id,
        engine=error.engine,
        title=error.title,
        patterns=(error.pattern, *extra),
        weight=int(getattr(error, "triage_weight", 0) or 0),
        wordings=tuple(Wording(text.versions, text.text) for text in error.texts),
    )


def records_from_errors(errors: Iterable[Any]) -> list[TriageRecord]:
    return [record_from_error(error) for error in errors]


__all__ = [
    "Candidate", "Reason", "RULES", "TriageRecord", "TriageResult", "Wording", "detect_engine",
    "detect_release", "detect_step", "extract_numbers", "normalise", "record_from_error",
    "records_from_errors", "telling_line", "triage",
]
