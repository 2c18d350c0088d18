"""What a build keeps beside its site, in .kvtriage-cache/<site folder name>/ (never published):
the manifest of what it wrote, caches, the lock, the staging tree of a build under way, and the
spare: the tree the last publish replaced, which the next build brings in step instead of staging anew.

Caches are read with value_pickle, so a tampered or corrupt cache costs a rebuild and nothing more."""

from __future__ import annotations

import errno
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import generator.value_pickle as value_pickle
from generator.write.guard import STATE_FOLDER
from generator.write.staging import remove_in_background, spare_maker_running

# Names an older kvtriage gave its staging, old-copy and undo folders beside the site (tempfile's 8 characters).
_OLD_LEFTOVER = r"\.{name}\.(new|old|undo)-[a-z0-9_]{{8}}"


def state_dir(out: Path) -> Path:
    out = Path(out).resolve()
    return out.parent / STATE_FOLDER / out.name


def load_cache(path: Path) -> dict:
    """A cache file's dict, or {} when it is missing, corrupt or names anything but plain values."""
    try:
        with open(path, "rb") as handle:
            data = value_pickle.load(handle)
        return data if isinstance(data, dict) else {}
    except value_pickle.CACHE_ERRORS:
        return {}


def replace_file(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write path through write(handle) into a file beside it, then rename it into place: a reader
    (or a build killed halfway) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        write(handle)
    os.replace(temporary, path)


def save_cache(path: Path, data: dict) -> None:
    replace_file(path, lambda handle: value_pickle.dump(data, handle))


@contextmanager
def build_lock(out: Path, wait_note=None) -> Iterator[Path]:
    """Hold the site's lock for one build; a second build of the same folder waits for it.
    Yields the state folder. wait_note(text) is told once when the build has to wait."""
    state = state_dir(out)
    state.mkdir(parents=True, exist_ok=True)
    handle = open(state / "lock", "a+b")
    try:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock, as before
            yield state
            return
        # A POSIX record lock belongs to this process alone: render workers forked while it is held do
        # not hold it, so a build killed outright releases it even while its workers wind down.
        try:
            fcntl.lockf(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            if wait_note is not None:
                wait_note(f"another kvtriage build is writing {Path(out).resolve()}; waiting for it to finish")
            fcntl.lockf(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield state
        finally:
            fcntl.lockf(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


def remove_leftovers(out: Path, state: Path) -> list[str]:
    """Remove what earlier builds left behind: staging trees of killed builds and replaced trees not
    yet removed, in the state folder, and the staging, old-copy and undo folders an older kvtriage
    kept beside the site. Call with the lock held."""
    removed = []
    for path in sorted(state.glob("stage-*")):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    if not spare_maker_running(state):  # else the spare under way is its
        for path in sorted(state.glob("spare-new-*")):
            if path.is_dir() and not path.is_symlink():
                remove_in_background(path)
                removed.append(str(path))
    for path in sorted(state.glob("trash-*")):  # may be under way in the background already: never waited for
        if path.is_dir() and not path.is_symlink():
            remove_in_background(path)
            removed.append(str(path))
    out = Path(out).resolve()
    pattern = re.compile(_OLD_LEFTOVER.format(name=re.escape(out.name)))
    if out.parent.is_dir():
        for entry in os.scandir(out.parent):
            if pattern.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


def discard_caches(state: Path) -> None:
    """Forget every cache in the state folder (not the lock, nor the manifest of what is published)."""
    for path in state.iterdir():
        if path.is_file() and path.name.endswith((".pickle", ".bin")):
            path.unlink(missing_ok=True)
