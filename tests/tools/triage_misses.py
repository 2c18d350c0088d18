"""Per split of tests/data/pasted_errors.yaml: right first, wrong page, no page; then every miss.

    PYTHONPATH=$PWD python tests/tools/triage_misses.py [--train]

A miss is a paste whose first page (or none) is not the page it is filed under; train misses are
listed only with --train. For a look-alike the triage's look-alike line is shown, so a paste that
gets no page for a stated reason can be told from one that matched nothing.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from generator.load import load_dataset
from generator.triage import records_from_errors, triage

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> None:
    pastes = yaml.safe_load((ROOT / "tests/data/pasted_errors.yaml").read_text(encoding="utf-8"))["pastes"]
    errors = load_dataset(ROOT).errors
    records = records_from_errors(errors.values())
    stats: dict[str, Counter] = {}
    misses = []
    for paste in pastes:
        counts = stats.setdefault(paste["split"], Counter())
        page = paste["page"]
        if page is not None and page not in errors:
            counts["skipped"] += 1
            continue
        result = triage(paste["text"], records)
        got = result.best.id if result.best else None
        kind = "right" if got == page else "none" if got is None else "wrong"
        counts["counted"] += 1
        counts[kind] += 1
        if kind != "right" and (paste["split"] != "train" or "--train" in argv):
            misses.append((paste, got, result))
    for split, c in stats.items():
        n = c["counted"] or 1
        print(f"{split:9} counted {c['counted']:3}  right {c['right'] / n:6.1%}  wrong {c['wrong'] / n:6.1%}"
              f"  none {c['none']}  skipped {c['skipped']}")
    for paste, got, result in misses:
        print(f"\n{paste['split']} {paste['id']} expected={paste['page']} got={got} engine={result.engine}"
              f" step={result.step} lookalike={result.lookalike!r}\n  {paste['url']}\n  {paste['why']}")
        for candidate in result.candidates[:3]:
            print(f"  {candidate.id} {candidate.score}: {candidate.reason.line[:140]}")


if __name__ == "__main__":
    main(sys.argv[1:])
