"""The thin-page guard's measure: a pair page's figures without the words that name things, as a
digest. Two pages of one error with equal fingerprints say the same, and only one is kept."""

from __future__ import annotations

import hashlib
from typing import Any

from generator.engine.pairs import PairNumbers

_WORDS = frozenset({"label", "note", "flags", "kv_log_lines", "error", "assumptions"})
_PLAIN = frozenset({int, float, str, bool, type(None)})
_FIGURE_FIELDS: dict[type, tuple[str, ...]] = {}


def _figures(value: Any) -> Any:
    """A value's figures as nested tuples, without the words (_WORDS) that name things: equal for two
    pairs whose pages would show the same numbers."""
    cls = type(value)
    if cls in _PLAIN:
        return value
    if cls is tuple or cls is list:
        return tuple(v if type(v) in _PLAIN else _figures(v) for v in value)
    if cls is dict:
        return tuple((k, _figures(v)) for k, v in sorted(value.items()) if k not in _WORDS)
    names = _FIGURE_FIELDS.get(cls)
    if names is None:
        fields = getattr(cls, "__dataclass_fields__", None)
        if fields is None:
            return value
        names = _FIGURE_FIELDS[cls] = tuple(name for name in sorted(fields) if name not in _WORDS)
    found = []
    for name in names:
        v = getattr(value, name)
        found.append((name, v if type(v) in _PLAIN else _figures(v)))
    return tuple(found)


def fingerprint(engine: str, numbers: PairNumbers) -> bytes:
    """The figures a reader compares, without names: equal fingerprints mean a page says nothing
    its sibling does not. A digest, not the figures: the guard keeps one per page of an error."""
    engine_numbers = {"vllm": numbers.vllm, "llamacpp": numbers.llamacpp, "ollama": numbers.ollama, "sglang": numbers.sglang}[engine]
    figures = (numbers.model, numbers.variant, _figures(engine_numbers) if engine_numbers is not None else None)
    return hashlib.blake2b(repr(figures).encode(), digest_size=16).digest()
