"""A build's new site, staged in the state folder and swapped in by one rename.

Files a build rendered are written to a fresh stage. The tree it publishes is either that stage
completed (every unchanged file hard-linked from the published site: same bytes, same mtime, no
copy), or the spare: the tree the last publish replaced, kept in the state folder and brought in
step by settle(), which costs in proportion to what changed and what the spare lacks. One atomic
exchange of the tree and the site folder then publishes it, so the site folder holds the old tree or
the new one and nothing in between, whatever kills the build. The replaced tree becomes the next
build's spare.

A spare is never trusted: settle() keeps a file only when it is the very file the published site
has (the same inode), removes whatever the new tree does not name, and never writes into a file
(it renames or links over it), so a spare in any state, one a killed build left half settled or
one edited by hand, gives the same tree."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from generator.write.guard import MARKER_NAME, MARKER_TEXT, SEARCH_FOLDERS
from generator.write.tree_record import Listing, Stamp, list_tree

_SIGNALS = {signal.SIGINT, signal.SIGTERM}
SPARE_NAME = "spare"  # in the state folder
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


# A spare's record: its folder stamps, the files it held then, and those of them out holds other
# files under (written since by the build that published out).
SpareRecord = tuple[Mapping[str, Stamp], Iterable[str], frozenset[str]]


class Staging:
    """The new tree: state/stage-XXXXXXXX, or the spare once take_spare() chose it, until publish()."""

    def __init__(self, state: Path):
        state.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="stage-", dir=state))
        self.tree = self.dir  # what publish() swaps in
        self._made: set[str] = {str(self.dir)}

    def path_of(self, relative: str) -> str:
        return os.path.join(self.tree, relative)

    def _parent(self, target: str) -> None:
        parent = os.path.dirname(target)
        if parent not in self._made:
            # One mkdir for the usual case, a page's new folder under one that exists; makedirs
            # (a stat of the parent first) only when that is missing too.
            try:
                os.mkdir(parent)
            except FileNotFoundError:
                os.makedirs(parent, exist_ok=True)
            except FileExistsError:
                if not os.path.isdir(parent):
                    raise
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
        """Link every file of the published folder source (a search bundle) into relative."""
        for folder, _, names in os.walk(source):
            for name in names:
                path = Path(folder) / name
                self.link(os.path.join(relative, path.relative_to(source).as_posix()), path)

    def mark(self, out: Path | None = None) -> None:
        """Give the tree the marker that says kvtriage wrote it: out's own, unchanged, when it has one."""
        published = None if out is None else out / MARKER_NAME
        target = self.path_of(MARKER_NAME)
        if published is not None and published.is_file() and not published.is_symlink() and published.read_bytes() == MARKER_TEXT:
            if same_file(target, published):
                return
            clear_path(target)
            self.link(MARKER_NAME, published)
        else:
            clear_path(target)
            self.write(MARKER_NAME, MARKER_TEXT)

    def take_spare(self, wait: float = 120.0) -> bool:
        """Publish the spare, once settle() brought it in step, instead of this stage; False when there
        is none. One still being made (after a first build) is waited for, up to `wait` seconds: the
        rest of its making is less than staging the whole tree here."""
        _wait_for_spare_maker(self.dir.parent, wait)
        spare = self.dir.parent / SPARE_NAME
        if not spare.is_dir() or spare.is_symlink():
            return False
        self.tree = spare
        return True

    def settle(self, files: Iterable[str], written: set[str], out: Path, recorded: SpareRecord | None = None,
               folders: set[str] | None = None) -> None:
        """Make the tree hold exactly `files`, besides the search bundles and the marker (keep_tree()
        and mark() see to those): the ones in `written` moved in from this stage, every other one
        out's file, kept when the tree has that very file and hard-linked from out when not.
        recorded: what the spare held as the build that published it left it (write/tree_record.py),
        so only its folders changed since are listed, and in the others a file that out took from it
        unchanged is known to be out's very file without a look. folders: folders_of(files), when the
        caller has it."""
        files = set(files)
        stamps, recorded_files, differing = recorded if recorded is not None else (None, (), frozenset())
        listing = list_tree(self.tree, stamps, recorded_files, skip=(MARKER_NAME, *SEARCH_FOLDERS))
        _remove_unwanted(str(self.tree), listing, files, folders if folders is not None else folders_of(files))
        trusted = listing.trusted
        for path in files:
            if path in written:
                target = self.path_of(path)
                self._parent(target)
                os.replace(os.path.join(self.dir, path), target)
                continue
            if path not in differing and path.rpartition("/")[0] in trusted and path in listing.files:
                continue  # named in an unchanged folder of the spare, and out's file is the spare's
            target = self.path_of(path)
            source = os.path.join(out, path)
            if same_file(target, source):
                continue
            clear_path(target)
            self.link(path, Path(source))

    def keep_tree(self, relative: str, source: Path) -> None:
        """Give the tree the published folder source (a search bundle): kept when the tree's is made
        of the very same files, else linked anew."""
        target = Path(self.path_of(relative))
        if _tree_files(target) != _tree_files(source):
            clear_path(str(target))
            self.link_tree(relative, source)

    def clear(self, relative: str) -> None:
        clear_path(self.path_of(relative))

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def same_file(a: str | Path, b: str | Path) -> bool:
    try:
        first = os.lstat(a)
        return stat.S_ISREG(first.st_mode) and os.path.samestat(first, os.lstat(b))
    except FileNotFoundError:
        return False


def clear_path(target: str | Path) -> None:
    """Remove whatever is at target (a file, a link, a folder), if anything."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(target)
    else:
        os.unlink(target)


def folders_of(files: Iterable[str]) -> set[str]:
    """Every folder that holds one of files (site paths), at any depth."""
    folders: set[str] = set()
    for path in files:
        parent = path.rpartition("/")[0]  # os.path.dirname, without its cost: site paths are plain a/b/c
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    return folders


def prune(folder: str, prefix: str, files: set[str], folders: set[str]) -> None:
    """Remove from folder every entry besides files and the folders that hold them."""
    with os.scandir(folder) as listing:
        entries = list(listing)
    for entry in entries:
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if relative in folders:
                prune(entry.path, relative + "/", files, folders)
            else:
                shutil.rmtree(entry.path)
        elif relative not in files or not entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)


def _remove_unwanted(tree: str, listing: Listing, files: set[str], folders: set[str]) -> None:
    """Remove from tree (as listed) every file, link and folder besides files and their folders."""
    gone = listing.folders - folders
    for folder in gone:
        if folder.rpartition("/")[0] not in gone:
            shutil.rmtree(os.path.join(tree, folder))
    for path in (listing.files | listing.links) - files:
        if path.rpartition("/")[0] not in gone:
            os.unlink(os.path.join(tree, path))


def _tree_files(folder: Path) -> dict[str, tuple[int, int]] | None:
    """Every entry under folder with its device and inode (None: no folder there)."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    found = {}
    base = len(str(folder)) + 1
    for parent, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = os.path.join(parent, name)
            st = os.lstat(path)
            found[path[base:]] = (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else (st.st_mode, 0)
    return found


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
    """Make the staged tree the site at out; the tree it replaces becomes the next build's spare."""
    out, tree = Path(out), staging.tree
    os.chmod(tree, 0o755)
    with signals_held():
        if not os.path.lexists(out):
            os.rename(tree, out)
            make_spare_in_background(out, staging.dir.parent)
            return
        if not _exchange_atomically(tree, out):
            # No atomic exchange here: two renames, the second right after the first.
            retired = tree.with_name(tree.name + "-old")
            os.rename(out, retired)
            try:
                os.rename(tree, out)
            except BaseException:
                os.rename(retired, out)
                raise
            os.rename(retired, tree)
    if tree == staging.dir:
        _keep_as_spare(staging)
    else:  # the replaced tree already sits where the spare is kept; the stage holds emptied folders
        _remove_in_background(staging.dir)


def _keep_as_spare(staging: Staging) -> None:
    """Keep the replaced tree, now where the new one was staged, as the spare; an older spare is
    removed without making the build wait. A removal that does not finish (the machine stops) is
    taken up by a later build."""
    spare = staging.dir.with_name(SPARE_NAME)
    trash = staging.dir.with_name("trash-" + staging.dir.name.removeprefix("stage-"))
    try:
        if os.path.lexists(spare):
            os.rename(spare, trash)
            remove_in_background(trash)
        os.rename(staging.dir, spare)
    except OSError:
        shutil.rmtree(staging.dir, ignore_errors=True)


def _remove_in_background(stage: Path) -> None:
    """Remove a stage at once from the names a build leaves (a build killed now, with its manifest
    written, is followed by one that finds nothing to do and cleans up nothing)."""
    trash = stage.with_name("trash-" + stage.name.removeprefix("stage-"))
    try:
        os.rename(stage, trash)
    except OSError:
        shutil.rmtree(stage, ignore_errors=True)
        return
    remove_in_background(trash)


def remove_in_background(folder: Path) -> None:
    """Delete folder in a detached process: at 10k pages, deleting 10k folders took seconds on a busy disk."""
    try:
        subprocess.Popen([sys.executable, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)", str(folder)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)


# The spare a first build leaves, made in a detached process: every file of the published site
# hard-linked into state/spare-new-*, renamed to state/spare when complete (never over a spare there
# already). What it links may change under it; a spare is never trusted, so that costs no more than
# links settle() makes anew. The lock (flock) is held for as long as the process runs.
_SPARE_LOCK = "spare.lock"
_MAKE_SPARE = """
import os, shutil, sys, tempfile
out, state = sys.argv[1], sys.argv[2]
new = tempfile.mkdtemp(prefix="spare-new-", dir=state)
try:
    for folder, dirs, names in os.walk(out):
        target = os.path.join(new, os.path.relpath(folder, out))
        for name in dirs:
            os.mkdir(os.path.join(target, name))
        for name in names:
            os.link(os.path.join(folder, name), os.path.join(target, name), follow_symlinks=False)
    if os.path.lexists(os.path.join(state, "spare")):
        raise FileExistsError
    os.rename(new, os.path.join(state, "spare"))
except OSError:
    shutil.rmtree(new, ignore_errors=True)
"""


def make_spare_in_background(out: Path, state: Path) -> None:
    """Start making the spare from out, unless one is there or being made."""
    if os.path.lexists(state / SPARE_NAME):
        return
    try:
        import fcntl

        handle = open(state / _SPARE_LOCK, "a+b")
    except (ImportError, OSError):
        return
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # being made already
        try:  # the child inherits the locked descriptor: the lock lasts as long as the child
            subprocess.Popen([sys.executable, "-c", _MAKE_SPARE, str(out), str(state)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                             pass_fds=(handle.fileno(),))
        except OSError:
            pass


def spare_maker_running(state: Path) -> bool:
    return not _wait_for_spare_maker(state, 0.0)


def _wait_for_spare_maker(state: Path, wait: float) -> bool:
    """True once no process is making a spare (at once when none is), False when `wait` ran out."""
    try:
        import fcntl

        handle = open(state / _SPARE_LOCK, "rb")
    except (ImportError, OSError):
        return True
    deadline = time.monotonic() + wait
    with handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)
                continue
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return True
