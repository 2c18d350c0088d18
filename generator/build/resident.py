"""What a long-running builder (`kvtriage serve`) keeps between builds of one site."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.engine.pairs import PairNumbers
from generator.plan.memo import PlanMemo
from generator.plan.pages import Page
from generator.write.manifest import Published, read_published


@dataclass(eq=False)
class Resident:
    """What a long-running builder (`kvtriage serve`) keeps in memory between builds of one site into
    a folder only it writes: parses, engine numbers, planned pair pages, page keys and the manifest it
    last wrote. A build then redoes only what an edit reaches, without reading caches back from disk.

    Everything here is a pure function of the inputs it was made from, except `published`, which is
    replaced only once a build's output is in place: a failed build leaves the folder, and so this
    record of it, as they were."""

    parsed: dict[str, bytes] = field(default_factory=dict)
    numbers: dict[str, PairNumbers] = field(default_factory=dict)  # by the hash of what they were computed from
    plans: PlanMemo = field(default_factory=PlanMemo)
    render_key: str = ""
    page_keys: dict[int, tuple[Page, str]] = field(default_factory=dict)  # id(page) -> (page, key) under render_key
    published: Published | None = None


def published_now(out: Path, resident: Resident | None) -> Published:
    """out as it is now: as the resident builder last wrote it (only it writes there), else as read from disk."""
    if resident is not None and resident.published is not None and Path(out).is_dir():
        return resident.published
    return read_published(out)
