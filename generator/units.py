"""Byte units and the integer rounding every engine uses, spelled in one place.

Pure: the engine imports this module too. GiB and MiB are binary (2**30, 2**20): the engines' logs
print binary units whatever they call them.
"""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


def cdiv(a: int, b: int) -> int:
    """Ceiling division of integers, as vLLM's `cdiv`."""
    return -(-a // b)


def pad(value: int, to: int) -> int:
    """`value` rounded up to a multiple of `to`, as llama.cpp's GGML_PAD."""
    return cdiv(value, to) * to


def gib(num_bytes: int | float, digits: int = 2) -> str:
    """Bytes as GiB the way readers compare them with the engines' logs: `12.34 GiB`."""
    return f"{num_bytes / GIB:.{digits}f} GiB"


def mib(num_bytes: int | float) -> str:
    """Bytes as MiB with thousands separators: `1,234.56 MiB`."""
    return f"{num_bytes / MIB:,.2f} MiB"
