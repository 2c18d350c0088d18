"""The repository stands alone: no tracked file points at notes kept outside it.

Records, comments and messages once cited a folder next to the checkout that users of the repo do not
have; every fact must instead name an upstream source a reader can open (a file at a tag or commit, an
issue or PR, a model card). tests/tools/ is left out: it holds third-party tooling.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Spelled in pieces so that this file does not match itself.
FORBIDDEN = ("shared/" + "reference", "shared/" + "seed", "../" + "shared")


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"not a git checkout: {exc}")
    return [name for name in out.decode("utf-8").split("\0") if name and not name.startswith("tests/tools/")]


def test_no_tracked_file_points_outside_the_repository() -> None:
    offenders = []
    for name in _tracked_files():
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree, or a submodule
        text = path.read_bytes().decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(token in line for token in FORBIDDEN):
                offenders.append(f"{name}:{lineno}: {line.strip()[:120]}")
    assert not offenders, "cite the upstream source instead:\n" + "\n".join(offenders)
