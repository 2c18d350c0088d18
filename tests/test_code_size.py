"""Size limits that keep every module readable in one sitting: at most 600 lines a file outside the
engine (whose modules follow upstream's structure), and at most 80 lines a function anywhere."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "generator"
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

# Functions known to be longer, each to be split into named helpers; the list only shrinks.
LONG_FUNCTIONS: set[str] = set()


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _long_functions() -> dict[str, int]:
    found = {}
    for path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = node.end_lineno - start + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = length
    return found


def test_files_outside_the_engine_are_short() -> None:
    long = {}
    for path in _files():
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "engine":
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_FILE_LINES:
            long[rel.as_posix()] = lines
    assert not long, f"files over {MAX_FILE_LINES} lines (split them by job): {long}"


def test_functions_are_short() -> None:
    found = _long_functions()
    new = {name: n for name, n in found.items() if name not in LONG_FUNCTIONS}
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines (split them into named helpers): {new}"


def test_the_allow_list_only_names_long_functions() -> None:
    gone = LONG_FUNCTIONS - set(_long_functions())
    assert not gone, f"these are short now (or renamed): remove them from LONG_FUNCTIONS: {sorted(gone)}"
