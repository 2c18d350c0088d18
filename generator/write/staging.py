"""A build's new site, staged whole in the state folder and swapped in by one rename.

Every build stages the complete tree: files it rendered are written, files that did not change are
hard-linked from the published site (same bytes, same mtime, no copy). One atomic exchange of the
two folders then publishes it, so the site folder holds the old tree or the new one and nothing in
between, whatever kills the build. The old tree, now in the staging place, is removed afterwards;
a build killed before that leaves it for the next build's remove_leftovers."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from generator.write.guard import MARKER_NAME, MARKER_TEXT

_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class Staging:
    """The new tree, in state/stage-XXXXXXXX until exchange() publishes it."""

    def __init__(self, state: Path):
        state.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="stage-", dir=state))
        self._made: set[str] = {str(self.dir)}

    def path_of(self, relative: str) -> str:
        return os.path.join(self.dir, relative)

    def _parent(self, target: str) -> None:
        parent = os.path.dirname(target)
        if parent not in self._made:
            os.makedirs(parent, exist_ok=True)
            self._made.add(parent)

    def write(self, relative: str, content: bytes | Iterable[bytes]) -> None:
        """Write content (bytes, or pieces of them in order) to relative."""
        target = self.path_of(relative)
        self._parent(target)
        with open(target, "wb") as handle:
            if isinstance(content, bytes):
                handle.write(content)
            else:
                handle.writelines(content)

    def link(self, relative: str, source: Path) -> None:
        """Give the staged tree the published file at source, unchanged (a hard link, or a copy where
        the file system has none)."""
        target = self.path_of(relative)
        self._parent(target)
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP):
                raise
            shutil.copy2(source, target, follow_symlinks=False)

    def link_tree(self, relative: str, source: Path) -> None:
        """Link every file of the published folder source (the search index) into relative."""
        for folder, _, names in os.walk(source):
            for name in names:
                path = Path(folder) / name
                self.link(os.path.join(relative, path.relative_to(source).as_posix()), path)

    def mark(self, out: Path | None = None) -> None:
        """Give the tree the marker that says kvtriage wrote it: out's own, unchanged, when it has one."""
        published = None if out is None else out / MARKER_NAME
        if published is not None and published.is_file() and not published.is_symlink() and published.read_bytes() == MARKER_TEXT:
            self.link(MARKER_NAME, published)
        else:
            self.write(MARKER_NAME, MARKER_TEXT)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM while the swap runs; they are delivered right after."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, ValueError):  # not POSIX, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _libc_renameat2():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_renameat2 = _libc_renameat2()


def _exchange_atomically(a: Path, b: Path) -> bool:
    """Swap the names of two folders in one step (Linux renameat2); False where that is not possible."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(b))


def publish(staging: Staging, out: Path) -> None:
    """Make the staged tree the site at out and remove the tree it replaces."""
    out = Path(out)
    os.chmod(staging.dir, 0o755)
    with signals_held():
        if not os.path.lexists(out):
            os.rename(staging.dir, out)
            return
        if not _exchange_atomically(staging.dir, out):
            # No atomic exchange here: two renames, the second right after the first.
            retired = staging.dir.with_name(staging.dir.name + "-old")
            os.rename(out, retired)
            try:
                os.rename(staging.dir, out)
            except BaseException:
                os.rename(retired, out)
                raise
            os.rename(retired, staging.dir)
    _remove_in_background(staging)  # the old tree now sits where the new one was staged


def _remove_in_background(staging: Staging) -> None:
    """Remove the replaced tree without making the build wait. It is renamed out of the staging name
    first; a removal that does not finish (the machine stops) is taken up by a later build."""
    trash = staging.dir.with_name("trash-" + staging.dir.name.removeprefix("stage-"))
    try:
        os.rename(staging.dir, trash)
    except OSError:
        shutil.rmtree(staging.dir, ignore_errors=True)
        return
    remove_in_background(trash)


def remove_in_background(folder: Path) -> None:
    """Delete folder in a detached process: at 10k pages, deleting 10k folders took seconds on a busy disk."""
    try:
        subprocess.Popen([sys.executable, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)", str(folder)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
