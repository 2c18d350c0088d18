"""Writing site/: a fresh tree swapped in whole, or a few changed files applied as one transaction.

Both ways keep the guarantee build.py makes: a build that fails or is interrupted leaves the
published site byte for byte as it was. New bytes are first written to a staging directory
next to site/ (same file system, so every move below is a rename):

- a fresh tree (the first build, or no usable manifest): staging becomes site/ by one swap;
- an incremental build: staging holds only the changed files. A Transaction moves each one
  into site/ and the file it replaces (or deletes) into an undo directory, logging what it is
  about to do before it does it. Any exception, Ctrl-C or SIGTERM on the way rolls every step
  back; only commit() throws the old files away. Files that did not change are never touched,
  so they keep their bytes and their mtimes.

The manifest (site/.kvtriage-manifest.json, applied last and in the same transaction) maps each
output path to its content hash, size, mtime and the key of what it was rendered from, and
holds the fingerprint of every input of the build: when the next build's inputs fingerprint
the same and every output still stats as recorded, there is nothing to do.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from types import FunctionType
from typing import Iterable, Iterator, Mapping

MANIFEST_NAME = ".kvtriage-manifest.json"
MANIFEST_FORMAT = 1
# What a build reads under its root. Anything else there (site/, tests/, .git) is not an input.
INPUT_FOLDERS = ("content", "data", "templates")
PACKAGE = Path(__file__).resolve().parent
# Libraries whose version can change the bytes of a page or of the search index.
_LIBRARIES = ("jinja2", "markupsafe", "markdown-it-py", "pydantic", "pydantic-core", "pyyaml", "pagefind", "pagefind-bin")
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


# --------------------------------------------------------------------------- the manifest


@dataclass(frozen=True, slots=True)  # one per output: 200k at 100k pages
class Entry:
    sha: str  # of the bytes written
    size: int
    mtime_ns: int
    key: str | None = None  # what the file was rendered from (a page key); None for other files


@dataclass(frozen=True)
class Manifest:
    inputs: str  # fingerprint of every input and option; equal means the same site
    files: Mapping[str, Entry]
    render: str = ""  # digest of templates, code and site context every page key includes

    def to_bytes(self) -> bytes:
        return b"".join(self.parts())

    def parts(self, size: int = 4096) -> Iterator[bytes]:
        """The manifest's JSON in pieces of `size` files: at 100k pages the whole text, its bytes and
        the lists it is made from took about 100 MB at once, at the end of the build."""
        head = {"format": MANIFEST_FORMAT, "inputs": self.inputs, "render": self.render}
        yield json.dumps(head, separators=(",", ":"))[:-1].encode() + b',"files":{'
        paths = sorted(self.files)
        for start in range(0, len(paths), size):
            chunk = {path: [e.sha, e.size, e.mtime_ns, e.key] for path in paths[start : start + size] for e in (self.files[path],)}
            yield (b"," if start else b"") + json.dumps(chunk, separators=(",", ":"))[1:-1].encode()
        yield b"}}"


def read_manifest(out: Path) -> Manifest | None:
    """The manifest of the site in out, or None when there is none we can trust."""
    try:
        data = json.loads((Path(out) / MANIFEST_NAME).read_bytes())
        if data.get("format") != MANIFEST_FORMAT:
            return None
        files = {path: Entry(v[0], int(v[1]), int(v[2]), v[3]) for path, v in data["files"].items()}
        return Manifest(inputs=str(data["inputs"]), files=files, render=str(data.get("render", "")))
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
            st = os.stat(os.path.join(out, path))
        except OSError:
            bad.add(path)
            continue
        if st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns:
            bad.add(path)
    return bad


def fingerprint_files(root: Path, folders: Iterable[str], extra: Iterable[str] = ()) -> str:
    """One hash over the relative path and bytes of every file under root/<folder>, plus extra strings."""
    digest = hashlib.sha256()
    root = Path(root)
    for folder in sorted(folders):
        base = root / folder
        if base.is_file():
            names = [base]
        elif base.is_dir():
            names = sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            names = []
        for path in names:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    for item in extra:
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()[:32]


def _stand_in(digest: str) -> str:
    """What a shared object pickles as inside a key: a call to this with its hash."""
    return digest


class _KeyPickler(pickle.Pickler):
    """Pickles a value for hashing. Objects many pages share stand in by their hash, computed once
    per object: records (pydantic models: the hash of their JSON) and frozen dataclasses (the
    engine's numbers: the hash of their own pickle). reducer_override sees only objects that are
    not plain str/int/list/dict/tuple, so plain data pickles at C speed."""

    def __init__(self, buffer: io.BytesIO, records: dict[int, tuple[object, str]], fixed: Mapping[int, tuple[object, str]]):
        super().__init__(buffer, protocol=5)
        self.records = records
        self.fixed = fixed
        self.top: object = None  # the shared object being hashed itself, which must be pickled, not stood in for

    def reducer_override(self, obj: object):  # noqa: ANN201
        cls = type(obj)
        kind = _SHARED_KINDS.get(cls)
        if kind is None:
            kind = _SHARED_KINDS[cls] = _shared_kind(cls)
        # Inside a shared dataclass its parts pickle inline: only records stand in there.
        if not kind or obj is self.top or (self.top is not None and kind == "frozen"):
            return NotImplemented
        known = self.fixed.get(id(obj)) or self.records.get(id(obj))
        if known is None or known[0] is not obj:
            if kind == "record":
                digest = sha(obj.model_dump_json().encode())  # type: ignore[attr-defined]
            else:  # a frozen dataclass: pickled once, then stood in for by its hash
                buffer = io.BytesIO()
                inner = _KeyPickler(buffer, self.records, self.fixed)
                inner.top = obj
                inner.dump(obj)
                digest = sha(buffer.getvalue())
            known = (obj, f"{cls.__module__}.{cls.__qualname__}:{digest}")
            self.records[id(obj)] = known
        return (_stand_in, (known[1],))


def _shared_kind(cls: type) -> str:
    """'record' for pydantic records, 'frozen' for frozen dataclasses (engine numbers, shared by many
    pages, hashed once each), '' for everything else (pickled inline)."""
    if cls is type or cls is FunctionType:
        return ""
    if hasattr(cls, "model_dump_json") and hasattr(cls, "model_fields"):
        return "record"
    params = getattr(cls, "__dataclass_params__", None)
    return "frozen" if params is not None and params.frozen else ""


_SHARED_KINDS: dict[type, str] = {}


class ValueDigest:
    """Hash of what a page is rendered from. Equal digests mean equal inputs to the renderer;
    a value that cannot be pickled gets no digest (None), so its page is always rendered."""

    def __init__(self) -> None:
        self.records: dict[int, tuple[object, str]] = {}  # id -> (the record, kept alive; its hash)
        self.fixed: dict[int, tuple[object, str]] = {}  # id -> (a value, its stand-in), given by remember()

    def __call__(self, *values: object) -> str | None:
        if len(self.records) > 100_000:  # it keeps what it hashed alive: start over rather than grow with the site
            self.records.clear()
        buffer = io.BytesIO()
        try:
            _KeyPickler(buffer, self.records, self.fixed).dump(values)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return None
        return sha(buffer.getvalue())

    def remember(self, value: object, digest: str) -> None:
        """Let value stand in by digest inside every hash, e.g. engine numbers by the hash of what
        they were computed from (equal inputs, equal numbers), so they need not be hashed again."""
        self.fixed[id(value)] = (value, digest)


@lru_cache(maxsize=16)
def code_digest(*paths: Path) -> str:
    """Hash of the source files under each path (a file or a folder)."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        digest.update(fingerprint_files(path.parent, [path.name]).encode())
    return digest.hexdigest()[:32]


@lru_cache(maxsize=1)
def library_versions() -> str:
    found = []
    for name in _LIBRARIES:
        try:
            found.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return f"python={sys.version_info[:3]};" + ";".join(found)


def search_wanted(search: bool | None) -> bool:
    """Whether a build indexes for search: when asked, or by default when Pagefind is installed."""
    if search is not None:
        return search
    return importlib.util.find_spec("pagefind_bin") is not None


def input_fingerprint(root: Path, search: bool, today: str | None = None) -> str:
    """Everything a build's output depends on: the files under the input folders, the generator's
    code, library versions, the date undated records take, and whether the site is indexed."""
    today = today or os.environ.get("SOURCE_DATE_EPOCH") or datetime.now(tz=timezone.utc).date().isoformat()
    return fingerprint_files(
        Path(root), INPUT_FOLDERS, (code_digest(PACKAGE), library_versions(), f"today={today}", f"search={search}")
    )


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
    if search and not (out / "pagefind").is_dir():
        return None
    return manifest


# --------------------------------------------------------------------------- staging


def _flat_name(relative: str) -> str:
    """One file name per site path: staged and kept files need no folders of their own (making and
    removing a folder per page was a fifth of an incremental build's time)."""
    return hashlib.blake2b(relative.encode("utf-8"), digest_size=16).hexdigest()


class Staging:
    """A directory next to out where a build writes its new bytes before anything in out changes.

    As a tree (the default) it becomes the site whole (swap_in); flat, each file sits under one
    name in one folder until a transaction moves it to its place in out."""

    def __init__(self, out: Path, flat: bool = False):
        self.out = Path(out).resolve()
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.new-", dir=self.out.parent))
        self.flat = flat
        self._made: set[str] = set()

    def path_of(self, relative: str) -> str:
        return os.path.join(self.dir, _flat_name(relative) if self.flat else relative)

    def write(self, relative: str, content: bytes | Iterable[bytes]) -> None:
        """Write content (bytes, or pieces of them in order) to relative."""
        target = self.path_of(relative)
        if not self.flat:
            parent = os.path.dirname(target)
            if parent not in self._made:
                os.makedirs(parent, exist_ok=True)
                self._made.add(parent)
        with open(target, "wb") as handle:
            if isinstance(content, bytes):
                handle.write(content)
            else:
                handle.writelines(content)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM while a rollback or a swap runs; they are delivered right after."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, ValueError):  # not POSIX, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def swap_in(staging: Staging, out: Path) -> None:
    """Make the staging tree the site: out moves aside, staging takes its name, the old tree goes."""
    out = Path(out).resolve()
    retired = out.parent / f".{out.name}.old-{staging.dir.name.rsplit('-', 1)[-1]}"
    with _signals_blocked():
        os.chmod(staging.dir, 0o755)
        try:
            if out.exists():
                os.replace(out, retired)
            os.replace(staging.dir, out)
        except BaseException:
            if retired.exists() and not out.exists():
                os.replace(retired, out)
            raise
    shutil.rmtree(retired, ignore_errors=True)


# --------------------------------------------------------------------------- the transaction


@dataclass
class Transaction:
    """Changes to out, each logged before it happens, undone together unless commit() is reached."""

    out: Path
    staging: Staging
    undo: Path = field(init=False)
    log: list[tuple[str, str, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out = Path(self.out).resolve()
        self.undo = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.undo-", dir=self.out.parent))

    def _kept(self, relative: str) -> Path:
        return self.undo / _flat_name(relative)

    def _keep(self, relative: str) -> None:
        """Move out/relative into the undo directory."""
        os.replace(self.out / relative, self._kept(relative))

    def put(self, relative: str) -> None:
        """Move staging/relative to out/relative, keeping what was there."""
        self._make_parents(relative)  # logged first, so a rollback removes the file before its new folders
        existed = os.path.lexists(self.out / relative)
        self.log.append(("put", relative, existed))
        if existed:
            self._keep(relative)
        os.replace(self.staging.path_of(relative), self.out / relative)

    def _make_parents(self, relative: str) -> None:
        missing = []
        parent = (self.out / relative).parent
        while parent != self.out and not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for directory in reversed(missing):
            self.log.append(("mkdir", directory.relative_to(self.out).as_posix(), False))
            directory.mkdir()

    def delete(self, relative: str) -> None:
        self.log.append(("delete", relative, True))
        self._keep(relative)
        parent = (self.out / relative).parent
        while parent != self.out and not any(parent.iterdir()):
            self.log.append(("rmdir", parent.relative_to(self.out).as_posix(), True))
            parent.rmdir()
            parent = parent.parent

    def remove_dir(self, relative: str) -> None:
        self.log.append(("dir", relative, True))
        self._keep(relative)

    def replace_dir(self, relative: str, new: Path) -> None:
        """Swap a whole subtree (the search index) for a freshly made one."""
        existed = (self.out / relative).exists()
        self.log.append(("dir", relative, existed))
        if existed:
            self._keep(relative)
        os.replace(new, self.out / relative)

    def rollback(self) -> None:
        with _signals_blocked():
            for kind, relative, existed in reversed(self.log):
                current, kept = self.out / relative, self._kept(relative)
                if kind == "rmdir":
                    current.mkdir(parents=True, exist_ok=True)
                    continue
                if kind == "mkdir":
                    try:
                        current.rmdir()
                    except OSError:
                        pass
                    continue
                if kind in ("put", "dir") and not existed:
                    # Whatever sits there now is new; an old one never existed.
                    if current.is_dir() and not current.is_symlink():
                        shutil.rmtree(current, ignore_errors=True)
                    elif os.path.lexists(current):
                        current.unlink()
                    continue
                if os.path.lexists(kept):
                    if kind == "dir" and current.exists():
                        shutil.rmtree(current, ignore_errors=True)
                    current.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(kept, current)
            self.log.clear()
            shutil.rmtree(self.undo, ignore_errors=True)

    def commit(self) -> None:
        with _signals_blocked():
            self.log.clear()
        shutil.rmtree(self.undo, ignore_errors=True)


@contextmanager
def transaction(out: Path, staging: Staging) -> Iterator[Transaction]:
    """Changes made inside the block all happen, or (on any exception, interrupt included) none do."""
    txn = Transaction(out, staging)
    try:
        yield txn
    except BaseException:
        txn.rollback()
        raise
    txn.commit()
