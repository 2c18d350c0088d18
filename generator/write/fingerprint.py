"""What a build's output depends on, hashed: the input files, the generator's code and library
versions (input_fingerprint), and the values each page is rendered from (ValueDigest)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import io
import os
import pickle
import sys
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from types import FunctionType
from typing import Iterable, Mapping

# What a build reads under its root. Anything else there (site/, tests/, .git) is not an input.
INPUT_FOLDERS = ("content", "data", "templates")
PACKAGE = Path(__file__).resolve().parents[1]  # generator/
# Libraries whose version can change the bytes of a page or of the search index.
_LIBRARIES = ("jinja2", "markupsafe", "markdown-it-py", "pydantic", "pydantic-core", "pyyaml", "pagefind", "pagefind-bin")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


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
    today = today or os.environ.get("SOURCE_DATE_EPOCH") or datetime.now(tz=UTC).date().isoformat()
    return fingerprint_files(
        Path(root), INPUT_FOLDERS, (code_digest(PACKAGE), library_versions(), f"today={today}", f"search={search}")
    )
