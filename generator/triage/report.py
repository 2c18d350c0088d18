"""A triage result as text for a terminal, or as plain data for JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from generator.triage.core import TriageResult


def recompute_data(recompute: Any) -> dict[str, Any] | None:
    """A recompute of generator/engine/from_log.py (a dataclass) as plain data."""
    return None if recompute is None else asdict(recompute)


def result_data(result: TriageResult, urls: dict[str, str] | None = None,
                recompute: Any = None) -> dict[str, Any]:
    """Plain data: engine, release, step, numbers and the ranked candidates with their reasons."""
    candidates = []
    for candidate in result.candidates:
        row = asdict(candidate)
        row["reason"]["notes"] = list(candidate.reason.notes)
        if urls and candidate.id in urls:
            row["url"] = urls[candidate.id]
        candidates.append(row)
    return {
        "engine": result.engine,
        "release": result.release,
        "step": result.step,
        "numbers": dict(result.numbers),
        "candidates": candidates,
        "confident": result.confident,
        "lookalike": result.lookalike,
        **({"recompute": recompute_data(recompute)} if recompute is not None else {}),
    }


def result_text(result: TriageResult, urls: dict[str, str] | None = None, limit: int = 5,
                recompute: Any = None) -> str:
    """Ranked candidates, each with the line that matched and why, then the numbers found."""
    out = [f"engine: {result.engine or 'unknown'}    release: {result.release or 'unknown'}"
           + (f"    step: {result.step}" if result.step else "")]
    if result.lookalike:
        line = result.lookalike if len(result.lookalike) <= 160 else result.lookalike[:157] + "..."
        out.append(f"not a memory failure, and no error page covers it: {line}")
    elif not result.candidates:
        out.append("no error page matches this paste")
    elif not result.confident:
        out.append("no match is certain: the pages below are a list to choose from")
    for rank, candidate in enumerate(result.candidates[:limit], 1):
        reason = candidate.reason
        url = f"  {urls[candidate.id]}" if urls and candidate.id in urls else ""
        out.append(f"{rank}. {candidate.id}  (score {candidate.score:g}){url}")
        out.append(f"   {candidate.title}")
        line = reason.line if len(reason.line) <= 160 else reason.line[:157] + "..."
        out.append(f"   line {reason.line_number}: {line}")
        if reason.wording:
            out.append(f"   wording of: {reason.wording}")
        if reason.step:
            out.append(f"   step: {reason.step}")
        for note in reason.notes:
            out.append(f"   - {note}")
    if result.numbers:
        out.append("numbers:")
        width = max(len(key) for key in result.numbers)
        out.extend(f"  {key.ljust(width)}  {value}" for key, value in result.numbers.items())
    if recompute is not None:
        out.extend(recompute.lines())
    return "\n".join(out)
