"""Imports point one way (ARCHITECTURE.md). An arrow the wrong way fails here, not in review."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator"

# Each top-level module or folder of generator/ -> the ones it may import (ARCHITECTURE.md). Anything not
# listed may import nothing of ours. Folders are stages (plan, render, write) or side tools (launch, kv,
# tools, devserver); modules inside one folder import each other freely.
ALLOWED = {
    "errors": set(),
    "units": set(),  # byte units and integer rounding: pure, imported by every stage
    "markdown": set(),
    "value_pickle": set(),  # caches that load as plain values: stdlib only
    "schema": {"errors", "units"},
    "load": {"errors", "schema", "markdown", "value_pickle"},  # markdown: check refuses links the renderer would drop
    "engine": {"schema", "engine"},
    "dates": {"schema", "engine"},
    "launch": {"schema", "engine", "errors"},
    "plan": {"schema", "engine", "launch", "errors", "markdown"},
    "render": {"plan", "markdown", "errors", "schema", "engine", "launch", "triage"},  # triage: its rules go into the search index
    "write": {"errors", "value_pickle"},  # guard, state, manifest, fingerprints, staging and the swap, the search index
    "parallel": set(),  # forked worker pool: stdlib only
    "triage": set(),  # pure: a pasted text and the records' triage data in, ranked pages out
    "kv": {"errors", "schema", "load", "engine", "launch", "plan"},
    "check": {"plan", "render", "errors", "engine", "schema", "launch"},  # the page lint, the checks of rendered pages
    "build": {"errors", "schema", "load", "engine", "dates", "launch", "plan", "markdown", "render", "kv", "write",
              "value_pickle", "parallel", "check"},
    "tools": {"errors", "schema", "load", "engine", "build", "dates", "kv"},
    "devserver": {"errors", "build", "load", "write"},  # write: reads back the manifest of its private build
    "cli": None,  # the top: may import anything
    "__main__": {"cli"},
    "__init__": set(),
}
# units.py (byte units, integer rounding) is pure and sits below everything: every module may import it.
for _allowed in ALLOWED.values():
    if _allowed is not None:
        _allowed.add("units")
ALLOWED["units"] = set()
# The engine does arithmetic only: no files, environment, logging, YAML or templates.
ENGINE_FORBIDDEN = {"os", "sys", "io", "pathlib", "logging", "subprocess", "yaml", "jinja2", "markdown_it", "shutil", "tempfile", "socket"}


def _top(module_path: Path) -> str:
    rel = module_path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(path.relative_to(PACKAGE).with_suffix("").parts[: -node.level])
                name = f"generator.{base}.{node.module}" if base else f"generator.{node.module}"
                found.add(name.replace("..", "."))
            elif node.module == "generator":
                found.update(f"generator.{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module)
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path: Path) -> None:
    top = _top(path)
    assert top in ALLOWED, f"{top} is a new module: give it a place in ALLOWED (and ARCHITECTURE.md)"
    allowed = ALLOWED[top]
    if allowed is None:
        return
    for name in _imports(path):
        if not name.startswith("generator"):
            continue
        parts = name.split(".")
        target = parts[1] if len(parts) > 1 else "__init__"
        if target == top:
            continue
        assert target in allowed, f"generator/{path.relative_to(PACKAGE)} imports {name}; {top} may import only {sorted(allowed)}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "engine").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE / "engine")))
def test_engine_is_pure(path: Path) -> None:
    for name in _imports(path):
        assert name.split(".")[0] not in ENGINE_FORBIDDEN, f"engine/{path.name} imports {name}: the engine does no I/O"
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"(?<![\w.])open\(|\benviron\b|\bgetenv\(", source), f"engine/{path.name} touches files or the environment"


def test_only_build_writes_and_only_load_reads_content() -> None:
    for path in MODULES:
        top = _top(path)
        source = path.read_text(encoding="utf-8")
        # write is build's writer (staging, manifest, the swap); it hashes input files to tell whether
        # anything changed, and never parses them.
        if top not in ("build", "write", "cli", "tools", "devserver"):
            assert "write_bytes(" not in source and "write_text(" not in source, f"{path.name} writes files"
        if top not in ("load", "cli", "tools", "build", "write", "kv", "devserver"):
            assert '"content' not in source and "'content" not in source or top in ("plan",), f"{path.name} reads content/"
