"""The fixture site's whole output, byte for byte. Regenerate with UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import os
import shutil

from generator.build.pipeline import build_site

from .conftest import FIXED_TODAY, FIXTURE_SITE, TESTS

GOLDEN = TESTS / "golden"


def test_fixture_site_matches_golden() -> None:
    files = {f.path: f.content for f in build_site(FIXTURE_SITE, today=FIXED_TODAY).files}
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for path, content in files.items():
            target = GOLDEN / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    expected = {p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in sorted(GOLDEN.rglob("*")) if p.is_file()}
    assert sorted(files) == sorted(expected), "the set of output files changed; rerun with UPDATE_GOLDEN=1 and review"
    changed = [path for path in files if files[path] != expected[path]]
    assert not changed, f"{len(changed)} files differ from tests/golden (first: {changed[:5]}); rerun with UPDATE_GOLDEN=1 and review the diff"
