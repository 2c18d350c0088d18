"""Compiled templates kept between build processes: each of them (and each of its render workers)
otherwise compiles every template it renders with from source, a quarter of a second apiece, most of
it spent again on every one-record edit. They are kept as Python keeps compiled modules, in the
package's own __pycache__ (code is trusted no more than the .pyc files beside it; never beside the
site, whose caches load as plain values only), under a folder named by this code's and the
libraries' versions: Jinja's check, a hash of the template's source, covers neither the
environment's options nor its code generator. A template is kept by its name: any root's
templates/pair.html is one entry, used while its source matches. Where the package cannot be written
nothing is kept and every template compiles, as before."""

from __future__ import annotations

import hashlib
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import jinja2
import jinja2.bccache

from generator.write.fingerprint import code_digest, library_versions, sha

_PACKAGE = Path(__file__).resolve().parents[1]
_PREFIX = "kvtriage-templates-"


class _Compiled(jinja2.FileSystemBytecodeCache):
    """A cache that never fails a build: one it cannot read or write is as if it were empty."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:  # noqa: ARG002
        return hashlib.sha1(name.encode("utf-8")).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _folder() -> Path | None:
    """This version's folder, made if need be (older versions' dropped then), or None when the
    package's __pycache__ cannot be written."""
    cache = _PACKAGE / "__pycache__"
    folder = cache / (_PREFIX + sha(f"{code_digest(_PACKAGE)}|{library_versions()}".encode())[:16])
    if folder.is_dir():
        return folder
    try:
        cache.mkdir(exist_ok=True)
        for other in cache.glob(_PREFIX + "*"):
            shutil.rmtree(other, ignore_errors=True)
        folder.mkdir()
    except FileExistsError:
        pass  # another build made it meanwhile
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


@contextmanager
def compiled_templates(env: jinja2.Environment) -> Iterator[None]:
    """While the block runs, env loads templates through the kept compiled code (the environment is
    shared by every build in this process: it is left as it was found)."""
    folder = _folder()
    before = env.bytecode_cache
    if folder is not None:
        env.bytecode_cache = _Compiled(str(folder))
    try:
        yield
    finally:
        env.bytecode_cache = before
