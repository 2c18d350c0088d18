"""What a build remembers of a tree it wrote, so the next one reads only the folders that changed
instead of listing all of them (at 10k pages, some 8,000).

A folder's stamp is its inode and change time. Adding, removing, renaming or replacing an entry in a
folder moves its change time, which no program can set back, so a folder whose stamp is as recorded
holds the entries it held then: the recorded files and subfolders, nothing else. Every other folder
is listed from disk. A stamp is taken only of a tree whose entries are the recorded ones (right
after the build that wrote it published it); a stale or foreign record costs listings, never a
wrong answer."""

from __future__ import annotations

import os
import stat
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping

Stamp = tuple[int, int]  # (st_ino, st_ctime_ns) of a folder


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_ctime_ns)


# A folder changed this recently when stamped is not stamped: file systems keep change times at a
# coarse tick (milliseconds), so an entry added right after the stamp could leave it as it was.
_RACY_NS = 1_000_000_000


def stamps(tree: str | os.PathLike, folders: Iterable[str]) -> dict[str, Stamp]:
    """The stamps of tree ("") and of each of its folders (site paths) that is a real folder now and
    was not changed within the last second (those are listed next time, as unrecorded ones are)."""
    found = {}
    settled = time.time_ns() - _RACY_NS
    for folder in ("", *folders):
        try:
            st = os.lstat(os.path.join(tree, folder) if folder else tree)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_ctime_ns < settled:
            found[folder] = stamp_of(st)
    return found


@dataclass
class Listing:
    """A tree's entries as site paths: files (anything but a folder or a symbolic link), symbolic
    links (not followed), and real folders."""

    files: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)
    trusted: set[str] = field(default_factory=set)  # folders known from their stamp, not listed
    skip: tuple[str, ...] = ()


def list_tree(tree: str | os.PathLike, recorded: Mapping[str, Stamp] | None = None, files: Iterable[str] = (),
              skip: tuple[str, ...] = ()) -> Listing:
    """Every entry under tree but the top-level names in skip. recorded: the stamps of its folders (all
    or some) when it held exactly `files`, their folders and the names in skip; a folder whose stamp is unchanged,
    under folders that are real, is taken from that record instead of being listed. A tree that is
    not a folder has no entries; a folder that cannot be listed is skipped, as os.walk skips it."""
    listing = Listing(skip=skip)
    recorded = recorded or {}
    children: dict[str, list[str]] = defaultdict(list)
    if recorded:  # (rpartition: os.path.dirname took most of the time for 16k files)
        for path in files:
            children[path.rpartition("/")[0]].append(path)
    subfolders: dict[str, list[str]] = defaultdict(list)  # the folders the recorded files make, by parent
    seen = {""}
    for folder in list(children):
        while folder not in seen:
            seen.add(folder)
            parent = folder.rpartition("/")[0]
            subfolders[parent].append(folder)
            folder = parent
    try:
        top = os.lstat(tree)
    except OSError:
        return listing
    if stat.S_ISDIR(top.st_mode):
        _visit(os.fspath(tree), "", top, recorded, children, subfolders, listing)
    return listing


def _visit(path: str, folder: str, st: os.stat_result, recorded: Mapping[str, Stamp], children: Mapping[str, list[str]],
           subfolders: Mapping[str, list[str]], listing: Listing) -> None:
    """One real folder (st: its lstat), from its stamp when that is as recorded, else listed."""
    if recorded.get(folder) == stamp_of(st):
        listing.trusted.add(folder)
        listing.files.update(children.get(folder, ()))
        for sub in subfolders.get(folder, ()):
            sub_path = path + "/" + sub.rpartition("/")[2]
            try:
                sub_st = os.lstat(sub_path)
            except OSError:  # cannot be, the folder being unchanged
                continue
            if not stat.S_ISDIR(sub_st.st_mode):  # nor this
                listing.links.add(sub)
                continue
            listing.folders.add(sub)
            _visit(sub_path, sub, sub_st, recorded, children, subfolders, listing)
        return
    try:
        with os.scandir(path) as entries:
            found = list(entries)
    except OSError:  # a folder that cannot be listed is skipped, as os.walk skips it
        return
    prefix = folder + "/" if folder else ""
    for entry in found:
        relative = prefix + entry.name
        if not folder and entry.name in listing.skip:
            continue
        if entry.is_dir(follow_symlinks=False):  # not a link: is_symlink() is the one test that looks at the entry itself
            listing.folders.add(relative)
            try:
                sub_st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            _visit(entry.path, relative, sub_st, recorded, children, subfolders, listing)
        elif entry.is_symlink():
            listing.links.add(relative)
        else:
            listing.files.add(relative)
