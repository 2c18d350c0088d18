"""The full-text search index, made with Pagefind inside the staged tree before it is published: one
bundle per folder in guard.SEARCH_FOLDERS, each made from its own sources."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterable, Sequence

from generator.errors import Issue, RenderError
from generator.write.guard import SEARCH_FOLDERS
from generator.write.staging import clear_path, folders_of, prune, same_file


def kept_names(folder: str) -> tuple[str, str]:
    """A bundle's two entries in the state folder beside the site (write.state): the digest of what its
    published index was made from (sources_digest), and the folder Pagefind reads, kept between builds."""
    suffix = "" if folder == SEARCH_FOLDERS[0] else folder.removeprefix("pagefind")
    return f"search-index{suffix}.sha", f"search-sources{suffix}"


def bundles_in_place(out: Path, state: Path) -> bool:
    """Whether out holds its search bundles: the primary one, and each other one a build recorded."""
    return all((out / folder).is_dir() for folder in SEARCH_FOLDERS
               if folder == SEARCH_FOLDERS[0] or (state / kept_names(folder)[0]).is_file())


@dataclass(frozen=True)
class Bundle:
    """One Pagefind bundle to make: the site folder it is published as (guard.SEARCH_FOLDERS), what it
    reads by site path (the page itself, None, or a stand-in's bytes), and the folder Pagefind reads
    them from, kept between builds (None: one made beside the site and removed after)."""

    folder: str
    sources: tuple[tuple[str, bytes | None], ...]
    kept: Path | None = None


class Indexing:
    """Pagefind processes under way, one per bundle (start_search): wait() for them all, or stop()
    them, which a failed or interrupted build does, so no Pagefind outlives it."""

    def __init__(self) -> None:
        self.running: list[tuple[Bundle, subprocess.Popen[bytes], IO[bytes], IO[bytes]]] = []
        self.made: list[Path] = []  # source folders made for this run, removed after

    def wait(self) -> None:
        failed: list[Issue] = []
        try:
            for bundle, process, out, err in self.running:
                if process.wait() != 0:
                    text = _read(err) or _read(out)
                    failed.append(Issue("site", 1, 0, "search", f"pagefind ({bundle.folder}/) exited with {process.returncode}: "
                                                                 f"{text.strip()[:500]}"))
        finally:
            self.stop()
        if failed:
            raise RenderError(failed)

    def stop(self) -> None:
        for _, process, out, err in self.running:
            if process.poll() is None:
                process.kill()
                process.wait()
            out.close()
            err.close()
        self.running = []
        for source in self.made:
            shutil.rmtree(source, ignore_errors=True)
        self.made = []


def _read(handle: IO[bytes]) -> str:
    handle.seek(0)
    return handle.read().decode("utf-8", "replace")


def start_search(site_dir: Path, executable: str, bundles: Sequence[Bundle], output: Path | None = None,
                 where: Callable[[str], Path] | None = None) -> Indexing:
    """Start Pagefind for each bundle, making it into (output, else site_dir)/<its folder>, the
    processes side by side (each reads only its own sources, so none waits on another). Pagefind
    reads a folder of its own holding just a bundle's sources, so it never parses pages the index
    leaves out; a kept folder is brought in step here, at the cost of what changed. A bundle's bytes
    do not depend on the folder it is made in. where(path): the file a page source is read from
    (default: site_dir/path), for a tree not yet complete: the files a build wrote, and the rest
    published."""
    indexing = Indexing()
    try:
        for bundle in bundles:
            source = bundle.kept
            if source is None:
                source = Path(tempfile.mkdtemp(prefix="stage-index-", dir=site_dir.parent))
                indexing.made.append(source)
            _settle_sources(source, where or (lambda relative: site_dir / relative), list(bundle.sources))
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            try:
                process = subprocess.Popen(
                    [executable, "--site", str(source), "--output-path", str((output or site_dir) / bundle.folder), "--silent"],
                    stdout=out, stderr=err, env=_pagefind_env())
            except BaseException:
                out.close()
                err.close()
                raise
            indexing.running.append((bundle, process, out, err))
    except BaseException:
        indexing.stop()
        raise
    return indexing


# Pagefind's processes are the build's largest, so their peak is the build's. Its jemalloc (whose variable
# carries the _RJEM_ prefix) keeps freed pages for seconds by default; returning them at once lowers
# that peak by about a fifth, costs no time and leaves the index bytes as they were.
_JEMALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"


def _pagefind_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("_RJEM_MALLOC_CONF", _JEMALLOC_CONF)
    return env


def _settle_sources(source: Path, where: Callable[[str], Path], sources: list[tuple[str, bytes | None]]) -> None:
    """Make source hold exactly the sources, whatever it held: a page is kept when it is the very
    file it is read from (where), a stand-in when its bytes are equal; anything else is removed or
    written anew, never written into."""
    if not source.is_dir() or source.is_symlink():
        clear_path(source)
        source.mkdir(parents=True)
    wanted = {relative for relative, _ in sources}
    prune(str(source), "", wanted, folders_of(wanted))
    made: set[str] = set()
    for relative, stand_in in sources:
        target = os.path.join(source, relative)
        if stand_in is None:
            if same_file(target, where(relative)):
                continue
        elif _holds(target, stand_in):
            continue
        clear_path(target)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        if stand_in is None:
            os.link(where(relative), target)
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
