from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
FIXTURE_SITE = TESTS / "fixtures" / "site"
REPO = TESTS.parent
FIXED_TODAY = "2026-11-29"


def copy_site(destination: Path, source: Path = FIXTURE_SITE) -> Path:
    """A writable copy of a site root; templates are copied from the repo, not linked."""
    shutil.copytree(source, destination, symlinks=False, ignore=shutil.ignore_patterns("templates"))
    shutil.copytree(REPO / "templates", destination / "templates")
    return destination


@pytest.fixture
def site_root(tmp_path: Path) -> Path:
    return copy_site(tmp_path / "root")
