"""Where a build may write. A build replaces its output folder whole, so the folder must be one it
may replace: absent, empty, or a site kvtriage wrote, and never the site root, a source folder, a
folder that holds either, or the state kept beside the site."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping

from generator.errors import BuildError, Issue
from generator.write.tree_record import Stamp, list_tree

# The file every built site carries, so a later build knows the folder is a site it may replace.
MARKER_NAME = ".kvtriage-site"
MARKER_TEXT = b"This folder is written by `kvtriage build`; every build replaces it whole.\n"
# The folders under the site root that a build reads, or that hold the project itself.
SOURCE_FOLDERS = ("content", "data", "templates", "generator", "tests", "bench", "docs", ".git")
STATE_FOLDER = ".kvtriage-cache"
# The folders Pagefind writes at the top of the site (write/search_index.py): the whole pages' bundle,
# which the search page loads, and the pair pages' stubs, merged into it in the browser. They are the
# build's own, though the manifest does not list their files.
SEARCH_FOLDERS = ("pagefind", "pagefind-pairs")


def build_owned(path: str) -> bool:
    """Whether path (in the site) is the build's own without a manifest entry: the marker, a search bundle's file."""
    return path == MARKER_NAME or path.split("/", 1)[0] in SEARCH_FOLDERS and "/" in path


def _refuse(out: Path, problem: str, fix: str) -> BuildError:
    return BuildError([Issue(str(out), 0, 0, "--out", problem, fix)])


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# What sites built before the marker carried instead: their manifest.
_LEGACY_MARKER = ".kvtriage-manifest.json"


def owned_by_kvtriage(out: Path) -> bool:
    """True when out is a folder a kvtriage build wrote (it carries the marker as a plain file)."""
    return any((out / name).is_file() and not (out / name).is_symlink() for name in (MARKER_NAME, _LEGACY_MARKER))


def check_out(root: Path | None, out: Path, force: bool = False) -> Path:
    """The resolved output folder, or a BuildError saying why a build may not replace it.

    force lets a build replace a folder it did not write; it never lets it touch the site root, the
    source folders or the state folder, nor anything that holds them."""
    given = Path(out)
    if given.is_symlink():
        raise _refuse(given, "is a symbolic link; a build replaces its output folder and will not follow a link",
                      "pass the real folder as --out")
    out = given.resolve()
    home = Path(os.path.expanduser("~")).resolve()
    if out == Path(out.anchor) or out == home:
        raise _refuse(out, "is the file-system root or your home folder", "pass a folder of its own, such as site/")
    if _inside(Path.cwd().resolve(), out):
        raise _refuse(out, "holds the current folder", "pass a folder of its own, such as site/")
    if root is not None:
        root = Path(root).resolve()
        if _inside(root, out):
            raise _refuse(out, f"holds the site root {root}; building there would replace the sources",
                          "pass a folder of its own inside or beside the root, such as site/")
        for name in SOURCE_FOLDERS:
            source = root / name
            if _inside(out, source.resolve() if source.exists() else source):
                raise _refuse(out, f"is inside the source folder {name}/", "pass a folder outside content/, data/ and templates/, such as site/")
    if any(part == STATE_FOLDER for part in out.parts):
        raise _refuse(out, f"is inside a {STATE_FOLDER}/ folder, where builds keep their state", "pass a folder such as site/")
    if os.path.lexists(out) and not out.is_dir():
        raise _refuse(out, "is a file, not a folder", "pass a folder, or remove the file yourself")
    if out.is_dir() and not force and not owned_by_kvtriage(out) and any(os.scandir(out)):
        raise _refuse(out, f"is a folder kvtriage did not write (it has files and no {MARKER_NAME}); a build replaces its output whole",
                      "pass an empty or new folder, or --force to replace this one")
    return out


def files_on_disk(out: Path, recorded: Mapping[str, Stamp] | None = None, files: Iterable[str] = ()) -> tuple[set[str], set[str]]:
    """The files under out and the symbolic links there (whose targets are not followed), as site
    paths, besides the search bundles' folders. recorded: the stamps of out's folders when it held
    exactly `files` (write/tree_record.py); only the folders changed since are listed."""
    listing = list_tree(out, recorded, files, skip=SEARCH_FOLDERS)
    return listing.files, listing.links
