"""YAML written by hand the way editors write it: plain scalars where YAML reads them back unchanged,
flow lists for short values, blocks for the rest."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

# --------------------------------------------------------------------------- YAML out

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        mantissa, e, exponent = repr(value).partition("e")
        # PyYAML (YAML 1.1) reads a float only with a '.' in it: 1e+20 would be a string.
        return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return yaml_scalar(value)


def is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple))


def yaml_block(value: Mapping[str, Any], indent: int, width: int = 100) -> list[str]:
    """A mapping as block YAML: nested mappings as blocks, short ones and scalar lists in flow style."""
    pad = " " * indent
    lines: list[str] = []
    for key, item in value.items():
        head = f"{pad}{yaml_scalar(key)}:"
        if isinstance(item, dict) and item and not all(is_scalar(v) for v in item.values()):
            lines.append(head)
            lines += yaml_block(item, indent + 2, width)
        elif isinstance(item, (list, tuple)) and item and all(isinstance(v, dict) for v in item):
            lines.append(head)
            for entry in item:
                body = yaml_block(entry, indent + 4, width)
                lines.append(f"{pad}  - " + body[0].lstrip())
                lines += body[1:]
        elif isinstance(item, (list, tuple)) and len(head) + 2 + len(_flow(item)) > width:
            lines.append(head + " [")
            row = pad + "  "
            for i, entry in enumerate(item):
                piece = _flow(entry) + ("," if i < len(item) - 1 else "")
                if len(row) + len(piece) + 1 > width and row.strip():
                    lines.append(row.rstrip())
                    row = pad + "  "
                row += piece + " "
            lines.append(row.rstrip())
            lines.append(pad + "]")
        else:
            lines.append(f"{head} {_flow(item)}")
    return lines
