"""Triage patterns that compile, mean the same in Python and in browsers, and cannot backtrack
catastrophically: refused by their parse tree before they run."""

from __future__ import annotations

import re
from typing import Any

from generator.schema.fields import NESTED_QUANTIFIER


def portable_regex(value: str) -> str:
    """A regex that compiles, means the same in Python and in readers' browsers, and cannot backtrack
    for minutes on a near miss."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"pattern does not compile: {exc}") from None
    if re.search(r"\(\?[<P]", value):
        raise ValueError("named groups differ between Python and JavaScript; use plain groups")
    problem = pattern_backtracking_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# --------------------------------------------------------------------------- pattern backtracking

# Patterns run in `check` (against every text) and in readers' browsers (against whatever they paste),
# so a pattern that backtracks catastrophically is refused before it runs, by its parse tree.
MAX_PATTERN_LENGTH = 1_000
_ALPHABET = [chr(c) for c in range(128)] + ["\u00e9", "\u2014", "\u4e2d"]  # what the overlap test samples


def _parse_tree(pattern: str) -> Any:
    try:
        from re import _parser as sre_parse  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_parse  # type: ignore[no-redef]
    return sre_parse.parse(pattern)


def _constants() -> Any:
    try:
        from re import _constants as c  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_constants as c  # type: ignore[no-redef]
    return c


_CATEGORY_RE = {
    "CATEGORY_DIGIT": re.compile(r"\d"), "CATEGORY_NOT_DIGIT": re.compile(r"\D"),
    "CATEGORY_SPACE": re.compile(r"\s"), "CATEGORY_NOT_SPACE": re.compile(r"\S"),
    "CATEGORY_WORD": re.compile(r"\w"), "CATEGORY_NOT_WORD": re.compile(r"\W"),
}


def _first_chars(items: Any, c: Any) -> frozenset[str] | None:
    """Characters the sequence `items` can start with (sampled from _ALPHABET); None when unknown."""
    for op, av in items:
        if op == c.LITERAL:
            return frozenset({chr(av)})
        if op == c.NOT_LITERAL:
            return frozenset(ch for ch in _ALPHABET if ch != chr(av))
        if op == c.ANY:
            return frozenset(ch for ch in _ALPHABET if ch != "\n")
        if op == c.IN:
            negate = any(o == c.NEGATE for o, _ in av)
            found = set()
            for o, v in av:
                if o == c.LITERAL:
                    found.add(chr(v))
                elif o == c.RANGE:
                    found.update(ch for ch in _ALPHABET if v[0] <= ord(ch) <= v[1])
                elif o == c.CATEGORY:
                    pattern = _CATEGORY_RE.get(str(v))
                    found.update(ch for ch in _ALPHABET if pattern is None or pattern.match(ch))
            return frozenset(ch for ch in _ALPHABET if ch not in found) if negate else frozenset(found)
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT if hasattr(c, "POSSESSIVE_REPEAT") else c.MAX_REPEAT):
            return _first_chars(av[2], c)
        if op == c.SUBPATTERN:
            return _first_chars(av[-1], c)
        if op == c.BRANCH:
            sets = [_first_chars(branch, c) for branch in av[1]]
            return None if any(s is None for s in sets) else frozenset().union(*sets)
        if op == c.AT:
            continue  # ^, $, \b: zero width
        return None
    return frozenset()


def _can_be_empty(op: Any, av: Any, c: Any) -> bool:
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return av[0] == 0
    return op in (c.AT, c.ASSERT, c.ASSERT_NOT)


def _unbounded(op: Any, av: Any, c: Any) -> bool:
    return op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[1] == c.MAXREPEAT


def _has_repeat(items: Any, c: Any) -> bool:
    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[1] > 1:
            return True
        for sub in _children(op, av, c):
            if _has_repeat(sub, c):
                return True
    return False


def _children(op: Any, av: Any, c: Any) -> list[Any]:
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return [av[2]]
    if op == c.SUBPATTERN:
        return [av[-1]]
    if op == c.BRANCH:
        return list(av[1])
    if op in (c.ASSERT, c.ASSERT_NOT):
        return [av[1]]
    if op == getattr(c, "ATOMIC_GROUP", None):
        return [av]
    return []


def _backtracking_problem(items: Any, c: Any) -> str | None:
    """Why this parsed sequence can backtrack catastrophically, or None."""
    seq = list(items)
    for i, (op, av) in enumerate(seq):
        if op in (c.GROUPREF, getattr(c, "GROUPREF_EXISTS", None)):
            return "a backreference (\\1) can backtrack for minutes and differs between Python and JavaScript; match the text itself"
        if op in (c.ASSERT, c.ASSERT_NOT) and _has_repeat(av[1], c):
            return "a lookaround with a quantifier inside it re-scans the text at every position; use a lookaround of plain text"
        if _unbounded(op, av, c):
            # The next item that must consume something; two unbounded repeats that can match the
            # same characters side by side (.*.*, \d+\d*) split a run every possible way.
            mine = _first_chars([(op, av)], c)
            for op2, av2 in seq[i + 1 :]:
                if _unbounded(op2, av2, c):
                    theirs = _first_chars([(op2, av2)], c)
                    if mine is None or theirs is None or mine & theirs:
                        return "two unbounded repeats that can match the same characters side by side (like .*.* or \\d+\\d*) can backtrack for minutes; put literal text between them or merge them"
                if not _can_be_empty(op2, av2, c):
                    break
        for sub in _children(op, av, c):
            problem = _backtracking_problem(sub, c)
            if problem:
                return problem
    return None


def _quantified_groups(pattern: str) -> list[str]:
    """The bodies of groups followed by *, + or {n,} in the pattern's source. Read from the source,
    not Python's parse tree: Python folds (?:\\w|\\d) into one class, JavaScript keeps the alternation."""
    bodies, stack, i, n = [], [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            start = stack.pop()
            if re.match(r"[*+]|\{\d*,", pattern[i + 1 : i + 4]):
                body = pattern[start + 1 : i]
                if body.startswith("?"):
                    body = re.sub(r"^\?(?:[:=!>]|<[=!]|[aiLmsux-]+:)", "", body)
                bodies.append(body)
        i += 1
    return bodies


def _top_level_branches(body: str) -> list[str]:
    branches, depth, last, i, in_class = [], 0, 0, 0, False
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            branches.append(body[last:i])
            last = i + 1
        i += 1
    return branches + [body[last:]]


def _alternation_problem(pattern: str, c: Any) -> str | None:
    """(a|ab)+, (\\w|\\d)+, (x|)*: a repeated group whose alternatives can match the same start (or
    nothing) tries every split of a run on a near miss: exponential in a browser's regex engine."""
    for body in _quantified_groups(pattern):
        branches = _top_level_branches(body)
        if len(branches) < 2:
            continue
        firsts = []
        for branch in branches:
            try:
                if re.compile(branch).fullmatch("") is not None:
                    return "a repeated group with an alternative that matches nothing, like (a|)+, can backtrack for minutes; make every alternative match text"
                firsts.append(_first_chars(list(_parse_tree(branch)), c))
            except (re.error, RecursionError):
                firsts.append(None)
        for x in range(len(firsts)):
            for y in range(x + 1, len(firsts)):
                if firsts[x] is None or firsts[y] is None or firsts[x] & firsts[y]:
                    return ("a repeated group whose alternatives can start with the same character, like (a|ab)+ or (\\w|\\d)+, "
                            "can backtrack for minutes; make the alternatives start differently or drop the repeat")
    return None


def pattern_backtracking_problem(pattern: str) -> str | None:
    """Why `pattern` could take exponential or high-polynomial time on a near miss, or None."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"pattern is {len(pattern):,} characters, more than {MAX_PATTERN_LENGTH:,}; match one distinctive line"
    if NESTED_QUANTIFIER.search(pattern):
        # (a+)+ and the like backtrack exponentially on a near miss, in check and in readers' browsers.
        return "a quantified group contains a quantifier, which can backtrack for minutes; quantify one level only"
    c = _constants()
    try:
        tree = _parse_tree(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"pattern does not compile: {exc}"
    return _alternation_problem(pattern, c) or _backtracking_problem(list(tree), c)
