"""The full-text search index, made with Pagefind inside the staged tree before it is published."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterable

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


def sources_digest(executable: str, sources: Iterable[tuple[str, bytes | None]], sha_of: Callable[[str], str]) -> str:
    """What an index is made from: the Pagefind binary and, per source, its path and its bytes (a
    stand-in's) or the hash of the page it reads. Equal digests give the same index, so a build
    whose digest matches the published index's reuses it instead of running Pagefind again."""
    binary = os.stat(executable)
    digest = hashlib.sha256(f"{os.path.realpath(executable)}\0{binary.st_size}\0{binary.st_mtime_ns}".encode())
    for relative, stand_in in sources:
        digest.update(b"\0" + relative.encode() + b"\0")
        digest.update(hashlib.sha256(stand_in).digest() if stand_in is not None else sha_of(relative).encode())
    return digest.hexdigest()
