"""The full-text search index, made with Pagefind inside the staged tree before it is published."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from generator.errors import Issue, RenderError


def index_search(site_dir: Path, executable: str, sources: Iterable[tuple[str, bytes | None]]) -> None:
    """Index site_dir into site_dir/pagefind. sources names what Pagefind reads, by site path: the
    page itself (None) or a stand-in's bytes. Pagefind reads a folder of its own, made beside
    site_dir and removed after, holding just those: it never parses pages the index leaves out."""
    source = Path(tempfile.mkdtemp(prefix="stage-index-", dir=site_dir.parent))
    try:
        for relative, stand_in in sources:
            target = source / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if stand_in is None:
                os.link(site_dir / relative, target)
            else:
                with open(target, "wb") as handle:
                    handle.write(stand_in)
        done = subprocess.run([executable, "--site", str(source), "--output-path", str(site_dir / "pagefind"), "--silent"],
                              capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(source, ignore_errors=True)
    if done.returncode != 0:
        raise RenderError([Issue("site", 1, 0, "search", f"pagefind exited with {done.returncode}: {(done.stderr or done.stdout).strip()[:500]}")])
