"""The manifest of a built site: every output path with its content hash, size, mtime and the key of
what it was rendered from, and the fingerprint of every input. It lives in the state folder beside
the site, never in the published folder. When the next build's inputs fingerprint the same and every
output still stats as recorded, there is nothing to do."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from generator.write.search_index import bundles_in_place
from generator.write.state import replace_file, state_dir
from generator.write.tree_record import Stamp

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 2


@dataclass(frozen=True, slots=True)  # one per output: 200k at 100k pages
class Entry:
    sha: str  # of the bytes written
    size: int
    mtime_ns: int
    key: str | None = None  # what the file was rendered from (a page key); None for other files


@dataclass(frozen=True)
class TreeStamps:
    """A tree's folders as a build left it (write/tree_record.py), and which files it held: `files`
    when this is the published tree, else files differing from the manifest's by `added` and `removed`."""

    folders: Mapping[str, Stamp]
    added: frozenset[str] = frozenset()  # in the manifest, not in this tree
    removed: frozenset[str] = frozenset()  # in this tree, not in the manifest
    differing: frozenset[str] = frozenset()  # in both, but the manifest's is another file (written since)

    def files(self, manifest_files: Iterable[str]) -> set[str]:
        return (set(manifest_files) - self.added) | self.removed

    def to_json(self) -> dict:
        return {"folders": self.folders, "added": sorted(self.added), "removed": sorted(self.removed), "differing": sorted(self.differing)}

    @staticmethod
    def from_json(data: dict | None) -> TreeStamps | None:
        if not data:
            return None
        folders = {path: (int(ino), int(ctime)) for path, (ino, ctime) in data["folders"].items()}
        return TreeStamps(folders, *(frozenset(data.get(name, ())) for name in ("added", "removed", "differing")))


@dataclass(frozen=True)
class Manifest:
    inputs: str  # fingerprint of every input and option; equal means the same site
    files: Mapping[str, Entry]
    render: str = ""  # digest of templates, code and site context every page key includes
    tree: TreeStamps | None = None  # the published tree's folders, stamped once it was in place
    spare: TreeStamps | None = None  # the spare's (write/staging.py): the tree the publish replaced

    def to_bytes(self) -> bytes:
        return b"".join(self.parts())

    def parts(self, size: int = 4096) -> Iterator[bytes]:
        """The manifest's JSON in pieces of `size` files: at 100k pages the whole text, its bytes and
        the lists it is made from took about 100 MB at once, at the end of the build."""
        head = {"format": MANIFEST_FORMAT, "inputs": self.inputs, "render": self.render}
        head.update((name, stamped.to_json()) for name, stamped in (("tree", self.tree), ("spare", self.spare)) if stamped is not None)
        yield json.dumps(head, separators=(",", ":"))[:-1].encode() + b',"files":{'
        paths = sorted(self.files)
        for start in range(0, len(paths), size):
            chunk = {path: [e.sha, e.size, e.mtime_ns, e.key] for path in paths[start : start + size] for e in (self.files[path],)}
            yield (b"," if start else b"") + json.dumps(chunk, separators=(",", ":"))[1:-1].encode()
        yield b"}}"


def manifest_path(out: Path) -> Path:
    return state_dir(out) / MANIFEST_NAME


def read_manifest(out: Path) -> Manifest | None:
    """The manifest of the site in out, or None when there is none we can trust."""
    try:
        data = json.loads(manifest_path(out).read_bytes())
        if data.get("format") != MANIFEST_FORMAT:
            return None
        files = {path: Entry(v[0], int(v[1]), int(v[2]), v[3]) for path, v in data["files"].items()}
        return Manifest(inputs=str(data["inputs"]), files=files, render=str(data.get("render", "")),
                        tree=TreeStamps.from_json(data.get("tree")), spare=TreeStamps.from_json(data.get("spare")))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def stat_entry(path: Path, digest: str, key: str | None) -> Entry:
    st = path.stat()
    return Entry(digest, st.st_size, st.st_mtime_ns, key)


def changed_on_disk(out: Path, manifest: Manifest) -> set[str]:
    """Outputs that are missing, or whose size or mtime is not what the manifest recorded (edited by hand)."""
    bad = set()
    for path, entry in manifest.files.items():
        try:
            st = os.lstat(os.path.join(out, path))
        except OSError:
            bad.add(path)
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns:
            bad.add(path)
    return bad


def write_manifest(out: Path, manifest: Manifest) -> None:
    replace_file(manifest_path(out), lambda handle: handle.writelines(manifest.parts()))


@dataclass(frozen=True)
class Published:
    """What is in out now: its manifest (None: none we can trust) and the outputs edited since."""

    manifest: Manifest | None
    damaged: frozenset[str]


def read_published(out: Path) -> Published:
    """Read once per build: at 100k pages the manifest and a stat of every output take a second."""
    out = Path(out)
    manifest = read_manifest(out) if out.is_dir() else None
    return Published(manifest, frozenset(changed_on_disk(out, manifest)) if manifest is not None else frozenset())


def up_to_date(out: Path, inputs: str, search: bool, published: Published | None = None) -> Manifest | None:
    """The manifest of out when it was built from exactly these inputs and nothing in it was touched since."""
    out = Path(out)
    published = published if published is not None else read_published(out)
    manifest = published.manifest
    if manifest is None or manifest.inputs != inputs or published.damaged:
        return None
    if search and not bundles_in_place(out, state_dir(out)):
        return None
    return manifest
