"""Pickles of plain values, for the caches builds keep between runs.

Loading builds only plain data and kvtriage's own value classes (dataclasses without a
__post_init__, named tuples), so a tampered cache file can cost a rebuild but never run code:
pickle.load on its own would call whatever a crafted file names."""

from __future__ import annotations

import dataclasses
import io
import pickle
import sys
from typing import BinaryIO

_PLAIN = {
    ("builtins", name)
    for name in ("set", "frozenset", "dict", "list", "tuple", "bytes", "bytearray", "str", "int", "float", "complex", "bool")
}
# A cache that cannot be read, whatever the reason (damaged, truncated, refused, from another version),
# is no cache: the caller starts over without it.
CACHE_ERRORS = (Exception,)


def _value_class(obj: object, module: str) -> bool:
    """A class of kvtriage's own whose construction does nothing but make a value."""
    if not isinstance(obj, type) or obj.__module__ != module:
        return False
    if dataclasses.is_dataclass(obj):
        return not hasattr(obj, "__post_init__")  # its generated __init__ only assigns fields
    return issubclass(obj, tuple) and hasattr(obj, "_fields")


class _ValueUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        if (module, name) in _PLAIN:
            return super().find_class(module, name)
        if module.startswith("generator.") and name.isidentifier() and module in sys.modules:
            found = getattr(sys.modules[module], name, None)
            if _value_class(found, module):
                return found
        raise pickle.UnpicklingError(f"a cache may not name {module}.{name}")


def dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def dump(value: object, handle: BinaryIO) -> None:
    pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> object:
    return _ValueUnpickler(io.BytesIO(data)).load()


def load(handle: BinaryIO) -> object:
    return _ValueUnpickler(handle).load()
