"""The full-text search index, made with Pagefind inside the staged tree before it is published."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from generator.errors import Issue, RenderError
from generator.write.staging import clear_path, folders_of, prune, same_file


def index_search(site_dir: Path, executable: str, sources: Iterable[tuple[str, bytes | None]], kept: Path | None = None) -> None:
    """Index site_dir into site_dir/pagefind. sources names what Pagefind reads, by site path: the
    page itself (None) or a stand-in's bytes. Pagefind reads a folder of its own holding just those,
    so it never parses pages the index leaves out: `kept` (a folder kept between builds and brought
    in step here, at the cost of what changed), else one made beside site_dir and removed after."""
    source = kept if kept is not None else Path(tempfile.mkdtemp(prefix="stage-index-", dir=site_dir.parent))
    try:
        _settle_sources(source, site_dir, list(sources))
        done = subprocess.run([executable, "--site", str(source), "--output-path", str(site_dir / "pagefind"), "--silent"],
                              capture_output=True, text=True, check=False, env=_pagefind_env())
    finally:
        if kept is None:
            shutil.rmtree(source, ignore_errors=True)
    if done.returncode != 0:
        raise RenderError([Issue("site", 1, 0, "search", f"pagefind exited with {done.returncode}: {(done.stderr or done.stdout).strip()[:500]}")])


# Pagefind is the build's largest process, so its peak is the build's. Its jemalloc (whose variable
# carries the _RJEM_ prefix) keeps freed pages for seconds by default; returning them at once lowers
# that peak by about a fifth, costs no time and leaves the index bytes as they were.
_JEMALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"


def _pagefind_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("_RJEM_MALLOC_CONF", _JEMALLOC_CONF)
    return env


def _settle_sources(source: Path, site_dir: Path, sources: list[tuple[str, bytes | None]]) -> None:
    """Make source hold exactly the sources, whatever it held: a page is kept when it is site_dir's
    very file, a stand-in when its bytes are equal; anything else is removed or written anew, never
    written into."""
    if not source.is_dir() or source.is_symlink():
        clear_path(source)
        source.mkdir(parents=True)
    wanted = {relative for relative, _ in sources}
    prune(str(source), "", wanted, folders_of(wanted), keep=())
    made: set[str] = set()
    for relative, stand_in in sources:
        target = os.path.join(source, relative)
        if stand_in is None:
            if same_file(target, site_dir / relative):
                continue
        elif _holds(target, stand_in):
            continue
        clear_path(target)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        if stand_in is None:
            os.link(site_dir / relative, target)
        else:
            with open(target, "wb") as handle:
                handle.write(stand_in)


def _holds(path: str, content: bytes) -> bool:
    """Whether path is a plain file (not a link) of exactly these bytes."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(len(content) + 1) == content
    except FileNotFoundError:
        return False


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
