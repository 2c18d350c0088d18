"""The full-text search index, made with Pagefind inside the staged tree before it is published: one
bundle per folder in guard.SEARCH_FOLDERS, each made from its own sources. A bundle of pages reads
them from a folder (Pagefind's command line); a bundle of stand-ins only (the pair pages' stubs) is
handed to Pagefind's service through a pipe, so its thousands of small files are never written."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
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


class _Run:
    """One Pagefind process making one bundle: from a folder (the command line), or fed its stand-ins
    through Pagefind's service protocol (--service: base64 JSON messages each ended by ',', answered
    in order on stdout) by a thread, so the caller goes on while Pagefind reads them."""

    def __init__(self, bundle: Bundle, command: list[str], served: bool) -> None:
        self.bundle = bundle
        self.feeder: threading.Thread | None = None
        self.last = -1  # the id of the last message fed
        self.err = tempfile.TemporaryFile()
        self.out = None if served else tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE if served else subprocess.DEVNULL,
                                            stdout=subprocess.PIPE if served else self.out, stderr=self.err, env=_pagefind_env())
        except BaseException:
            self.err.close()
            if self.out is not None:
                self.out.close()
            raise

    def feed(self, messages: list[dict]) -> None:
        stdin = self.process.stdin
        assert stdin is not None

        def write() -> None:
            try:
                for number, payload in enumerate(messages):
                    stdin.write(base64.b64encode(json.dumps({"message_id": number, "payload": payload}).encode()) + b",")
                stdin.flush()
            except (BrokenPipeError, ValueError):  # Pagefind exited, or was stopped: finish() says why
                pass

        self.last = len(messages) - 1
        self.feeder = threading.Thread(target=write, daemon=True)
        self.feeder.start()

    def finish(self) -> str | None:
        """Wait for the bundle: None when it was made, else what went wrong."""
        errors: list[str] = []
        if self.feeder is not None:
            errors = self._answers()
            self.feeder.join()
            _close(self.process.stdin)  # the service exits at the end of its input
        if self.process.wait() != 0:
            text = _read(self.err) or (_read(self.out) if self.out is not None else "")
            return f"exited with {self.process.returncode}: {text.strip()[:500]}"
        return f"failed: {'; '.join(errors)[:500]}" if errors else None

    def _answers(self) -> list[str]:
        """Read the service's answers up to the last message's: the errors among them (or that
        Pagefind's output ended first)."""
        stdout = self.process.stdout
        assert stdout is not None
        errors: list[str] = []
        pending = b""
        while chunk := stdout.read1(1 << 16):
            *answers, pending = (pending + chunk).split(b",")
            for answer in answers:
                message = json.loads(base64.b64decode(answer))
                if message["payload"]["type"] == "Error":
                    errors.append(str(message["payload"].get("message", "")))
                if message.get("message_id") == self.last:
                    return errors
        return [*errors, "its output ended before the bundle was written"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.feeder is not None:
            self.feeder.join()
        for handle in (self.process.stdin, self.process.stdout, self.out, self.err):
            _close(handle)


def _close(handle: IO[bytes] | None) -> None:
    if handle is not None:
        try:
            handle.close()
        except OSError:  # what was left to flush to a process that exited
            pass


class Indexing:
    """Pagefind processes under way, one per bundle (start_search): wait() for them all, or stop()
    them, which a failed or interrupted build does, so no Pagefind outlives it."""

    def __init__(self) -> None:
        self.running: list[_Run] = []
        self.made: list[Path] = []  # source folders made for this run, removed after

    def wait(self) -> None:
        failed: list[Issue] = []
        try:
            for run in self.running:
                problem = run.finish()
                if problem is not None:
                    failed.append(Issue("site", 1, 0, "search", f"pagefind ({run.bundle.folder}/) {problem}"))
        finally:
            self.stop()
        if failed:
            raise RenderError(failed)

    def stop(self) -> None:
        for run in self.running:
            run.close()
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
    reads a folder of its own holding just a bundle's pages, so it never parses pages the index
    leaves out; a kept folder is brought in step here, at the cost of what changed. A bundle of
    stand-ins only goes to Pagefind's service in the order given, no folder written (a kept one
    an earlier build left is removed). A bundle's bytes do not depend on the folder it is made in.
    where(path): the file a page source is read from (default: site_dir/path), for a tree not yet
    complete: the files a build wrote, and the rest published."""
    indexing = Indexing()
    try:
        for bundle in bundles:
            destination = str((output or site_dir) / bundle.folder)
            if bundle.sources and all(stand_in is not None for _, stand_in in bundle.sources):
                if bundle.kept is not None:
                    clear_path(bundle.kept)
                run = _Run(bundle, [executable, "--service"], served=True)
                indexing.running.append(run)
                run.feed([{"type": "NewIndex", "config": None},
                          *({"type": "AddFile", "index_id": 0, "file_path": relative, "url": None,
                             "file_contents": stand_in.decode("utf-8")} for relative, stand_in in bundle.sources),
                          {"type": "WriteFiles", "index_id": 0, "output_path": os.path.abspath(destination)}])
                continue
            source = bundle.kept
            if source is None:
                source = Path(tempfile.mkdtemp(prefix="stage-index-", dir=site_dir.parent))
                indexing.made.append(source)
            _settle_sources(source, where or (lambda relative: site_dir / relative), list(bundle.sources))
            indexing.running.append(_Run(bundle, [executable, "--site", str(source), "--output-path", destination, "--silent"], served=False))
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
