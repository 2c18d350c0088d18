"""YAML with line marks: a strict loader (no aliases, no custom tags, bounded depth) that keeps the
line and column of every value and key, and the `Source` every problem points into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from generator.errors import ContentError, Issue

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 40
_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)

Location = tuple[int, int]  # 1-based line, column
Loc = tuple[Any, ...]


@dataclass(frozen=True)
class Positions:
    """Where each value of one YAML file starts, keyed by its path of keys and indexes."""

    path: str
    marks: Mapping[Loc, Location]
    key_marks: Mapping[Loc, Location] = field(default_factory=dict)

    def key_at(self, loc: Loc) -> Location:
        """Where the key of loc is written (for unknown keys), else where its value starts."""
        return self.key_marks.get(tuple(loc)) or self.at(loc)

    def at(self, loc: Loc) -> Location:
        # Missing keys point at their parent mapping: the closest thing an editor can open.
        loc = tuple(loc)
        while loc and loc not in self.marks:
            loc = loc[:-1]
        return self.marks.get(loc, (1, 1))


@dataclass(frozen=True)
class Source:
    """A record and where it came from, for messages that point back into the file."""

    path: str
    positions: Positions
    loc: Loc = ()

    def issue(self, sub_loc: Loc, field_name: str, message: str, fix: str = "", *, at_key: bool = False) -> Issue:
        loc = self.loc + tuple(sub_loc)
        line, col = self.positions.key_at(loc) if at_key else self.positions.at(loc)
        return Issue(self.path, line, col, field_name, message, fix)


# --------------------------------------------------------------------------- YAML


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases and custom tags: content needs none of them,
    and aliases are how a small file expands into gigabytes."""

    _depth = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        # The composer recurses once per level: stop at MAX_DEPTH, long before Python's stack does.
        if self._depth > MAX_DEPTH:
            raise yaml.MarkedYAMLError(
                "while reading content", None, f"nesting deeper than {MAX_DEPTH} levels; flatten the structure", self.peek_event().start_mark
            )
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(
                "while reading content", None, "YAML aliases (*name) are not allowed; write the value out", event.start_mark
            )
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise yaml.MarkedYAMLError(
                "while reading content", None, f"YAML anchors (&{anchor}) are not allowed; write the value out", event.start_mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class YamlProblem(ContentError):
    """One file that is not YAML kvtriage accepts; a ContentError, so callers need no other type."""

    def __init__(self, line: int, col: int, message: str, fix: str = "", path: str = "<yaml>"):
        super().__init__([Issue(path, line, col, "", message, fix)])
        self.line, self.col, self.message, self.fix, self.path = line, col, message, fix, path


def _scalar(node: yaml.ScalarNode, loader: _StrictLoader) -> Any:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    try:
        value = loader.construct_object(node, deep=True)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError):
        # e.g. `!!int abc`, `!!bool maybe` or an empty `!!float`: the standard tag names a type the text is not.
        raise YamlProblem(line, col, f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[-1]}", "Remove the tag or fix the value") from None
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            # "\ud800" escapes decode to lone surrogates, which no page can be written in.
            raise YamlProblem(line, col, f"contains an unpaired surrogate {value[exc.start]!r}", "Remove the escape") from None
    return value


def _to_python(node: yaml.Node, loader: _StrictLoader, loc: Loc, marks: dict[Loc, Location], depth: int, key_marks: dict[Loc, Location]) -> Any:
    if depth > MAX_DEPTH:
        raise YamlProblem(node.start_mark.line + 1, node.start_mark.column + 1, f"nesting deeper than {MAX_DEPTH} levels")
    marks[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if node.tag not in _STANDARD_TAGS:
        raise YamlProblem(
            node.start_mark.line + 1, node.start_mark.column + 1, f"tag {node.tag!r} is not allowed", "Remove the tag"
        )
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem(key_node.start_mark.line + 1, key_node.start_mark.column + 1, "keys must be plain text")
            key = _scalar(key_node, loader) if key_node.tag == "tag:yaml.org,2002:str" else str(key_node.value)
            if key in result:
                raise YamlProblem(
                    key_node.start_mark.line + 1, key_node.start_mark.column + 1, f"key {key!r} appears twice", "Keep one"
                )
            key_marks[loc + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _to_python(value_node, loader, loc + (key,), marks, depth + 1, key_marks)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, loader, loc + (i,), marks, depth + 1, key_marks) for i, item in enumerate(node.value)]
    if node.tag == "tag:yaml.org,2002:timestamp":
        # Dates stay text: pydantic and templates should see what the editor typed.
        return node.value
    return _scalar(node, loader)


def parse_yaml(path: str, data: bytes) -> tuple[Any, Positions]:
    """Parse one YAML document into plain Python values and their line marks.

    Raises YamlProblem (a ContentError naming path) for anything kvtriage does not accept.
    """
    try:
        return _parse_yaml(path, data)
    except YamlProblem as problem:
        if problem.path == path:
            raise
        raise YamlProblem(problem.line, problem.col, problem.message, problem.fix, path) from None


def _parse_yaml(path: str, data: bytes) -> tuple[Any, Positions]:
    if len(data) > MAX_FILE_BYTES:
        raise YamlProblem(1, 1, f"file is {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} allowed", "Split it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlProblem(line, col, f"not UTF-8 (byte {exc.start} is 0x{data[exc.start]:02x})", "Save the file as UTF-8") from None
    if "\x00" in text:
        index = text.index("\x00")
        raise YamlProblem(text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1, "contains a NUL character", "Remove it")
    loader = None
    try:
        loader = _StrictLoader(text)  # the reader checks every character here
        node = loader.get_single_node()
        marks: dict[Loc, Location] = {}
        key_marks: dict[Loc, Location] = {}
        value = _to_python(node, loader, (), marks, 0, key_marks) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlProblem(line, col, f"YAML: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:
        index = min(max(exc.position, 0), len(text))
        line, col = text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\x00")
        raise YamlProblem(line, col, f"YAML: control character U+{code:04X} is not allowed", "Remove it") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, 1, f"YAML: {exc}") from None
    except RecursionError:
        raise YamlProblem(1, 1, f"nesting deeper than {MAX_DEPTH} levels", "Flatten the structure") from None
    finally:
        if loader is not None:
            loader.dispose()
    return value, Positions(path, marks, key_marks)
