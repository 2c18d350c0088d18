"""Triage a pasted log: normalise it, match every error record's patterns, rank, extract numbers.

Pure: takes the text and the records' triage data, returns a TriageResult; no I/O. The steps are
kept plain (loops over lines and rules, no Python-only regex features) so that
templates/static/triage.js can follow them line for line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Iterable, Mapping, Sequence

from generator.triage.rules import RULES

ANSI_ESCAPE = r"\x1b\[[0-9;?]*[A-Za-z]"
# Windows line endings shown as text ("^M") by some terminals and log viewers.
CARET_M = r"\^M$"
# Readers retype errors, or copy them from rich text (a chat, a document, a rendered issue), which
# turns quotes into typographic ones and spaces into non-breaking ones: the engines print ASCII.
TYPOGRAPHIC = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u200b": "",
}


@dataclass(frozen=True)
class Wording:
    """One release's wording of an error, from the record's `texts`."""

    versions: str
    text: str


@dataclass(frozen=True)
class TriageRecord:
    """What the triage needs of an error record."""

    id: str
    engine: str
    title: str
    patterns: tuple[str, ...]
    weight: int = 0
    wordings: tuple[Wording, ...] = ()


@dataclass(frozen=True)
class Reason:
    line: str  # the normalised line that matched
    line_number: int  # 1-based, in the normalised paste
    pattern: str  # the regex that matched, or the generic out-of-memory rule
    wording: str | None  # versions of the record's text the line is closest to
    step: str | None  # for a generic out-of-memory line: the step it happened in
    notes: tuple[str, ...] = ()  # why the score moved: "wrapper line", "engine vllm", ...


@dataclass(frozen=True)
class Candidate:
    id: str
    engine: str
    title: str
    score: float
    reason: Reason


@dataclass(frozen=True)
class TriageResult:
    engine: str | None
    release: str | None
    step: str | None
    candidates: tuple[Candidate, ...]
    numbers: dict[str, Any] = field(default_factory=dict)
    # The best candidate is one to go straight to: a strong match with a clear lead (SCORES
    # "confident" and "navigate_margin"). Otherwise the matches are a list to choose from.
    confident: bool = False
    # The line that states a failure of another kind (a look-alike) when no memory failure is
    # stated: the reason the paste has no candidates.
    lookalike: str | None = None

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    # ASCII classes, as JavaScript's RegExp without the u flag has them: \w, \d and \b see only
    # ASCII letters and digits, so "使用vllm进行" has a word boundary around "vllm" in both.
    return re.compile(pattern, re.ASCII)


def _search(pattern: str, text: str) -> re.Match[str] | None:
    return _regex(pattern).search(text)


def _matches(pattern: str, text: str) -> list[re.Match[str]]:
    return [match for match in _regex(pattern).finditer(text) if match.end() > match.start()]


# --------------------------------------------------------------------------- normalise


def _clean(raw: str) -> str:
    line = re.sub(ANSI_ESCAPE, "", raw)
    line = line.replace("\r", "")
    for typographic, plain in TYPOGRAPHIC.items():
        line = line.replace(typographic, plain)
    return re.sub(CARET_M, "", line)


def _strip_prefixes(line: str, rules: Mapping[str, Any]) -> tuple[str, bool]:
    """The line without its log prefixes, and whether it had any."""
    had_prefix = False
    changed = True
    while changed:
        changed = False
        for prefix in rules["prefixes"]:
            match = _search(prefix, line)
            if match and match.end() > 0:
                line = line[match.end():]
                had_prefix = changed = True
    slog = _search(rules["slog_line"], line)
    if slog:
        message = slog.group(3) if slog.group(3) is not None else (slog.group(4) or "")
        line = (message.replace('\\"', '"') + " " + slog.group(5)).strip()
        had_prefix = True
    return line, had_prefix


def normalise(text: str, rules: Mapping[str, Any] = RULES) -> list[str]:
    """The paste's lines without ANSI codes, carriage returns and log prefixes, hard wraps joined."""
    lines: list[str] = []
    for raw in text.split("\n"):
        cleaned = _clean(raw)
        line, had_prefix = _strip_prefixes(cleaned, rules)
        # A terminal or an issue form cut the previous line: this one carries on from it.
        if (lines and not had_prefix and len(lines[-1]) >= rules["wrap_width"]
                and _search(rules["continuation"], cleaned) and not _search(rules["not_continuation"], cleaned)):
            lines[-1] = lines[-1] + line
            continue
        lines.append(line)
    # Trailing spaces go only now: a cut after "with 1024 " joins the next line with its space.
    return [line.rstrip() for line in lines if line.strip()]


# --------------------------------------------------------------------------- engine, release, step


def detect_engine(text: str, rules: Mapping[str, Any] = RULES) -> str | None:
    """The engine whose log this is, by the markers its lines carry (prefixes included)."""
    totals: dict[str, int] = {}
    for raw in text.split("\n"):
        line = _clean(raw)
        for engine, markers in rules["engine_markers"].items():
            for weight, pattern in markers:
                if _search(pattern, line):
                    totals[engine] = totals.get(engine, 0) + weight
    best = None
    for engine in sorted(totals):  # by name, so a tie goes the same way in triage.js
        if best is None or totals[engine] > totals[best]:
            best = engine
    # An Ollama log carries many llama.cpp lines; one line of Ollama's own makes it Ollama's.
    for outer, embedded in rules["engine_embeds"].items():
        if best == embedded["engine"] and totals.get(outer):
            best = outer
    return best


def detect_release(lines: Sequence[str], engine: str | None, rules: Mapping[str, Any] = RULES) -> str | None:
    engines = [engine] if engine else sorted(rules["release_markers"])
    for name in engines:
        for pattern in rules["release_markers"].get(name, ()):
            for line in lines:
                match = _search(pattern, line)
                if match:
                    return match.group(1)
    return None


def detect_step(lines: Sequence[str], engine: str | None, rules: Mapping[str, Any] = RULES) -> str | None:
    """The furthest step of startup (or serving) the paste shows the engine had reached."""
    if engine is None:
        return None
    best_step, best_order = None, -1
    for step, order, pattern in rules["step_markers"].get(engine, ()):
        if order > best_order and any(_search(pattern, line) for line in lines):
            best_step, best_order = step, order
    return best_step


# --------------------------------------------------------------------------- ranking


def _wording(record: TriageRecord, line: str) -> str | None:
    """The versions of the record's text whose literal parts the line shares most of."""
    best, best_share = None, 0.0
    for wording in record.wordings:
        parts = [part.strip() for part in re.split(r"\{[^}]*\}", wording.text) if len(part.strip()) >= 4]
        if not parts:
            continue
        share = sum(len(part) for part in parts if part in line) / sum(len(part) for part in parts)
        if share > best_share:
            best, best_share = wording.versions, share
    return best


def _equal_groups(pattern: str, line: str) -> bool:
    match = _search(pattern, line)
    return bool(match) and match.group(1) == match.group(2)


def _spans(patterns: Sequence[str], line: str) -> list[tuple[int, int]]:
    """Where each pattern first matches the line."""
    return [(match.start(), match.end()) for pattern in patterns if (match := _search(pattern, line))]


def _overlaps(spans: Sequence[tuple[int, int]], match: re.Match[str]) -> bool:
    return any(start < match.end() and match.start() < end for start, end in spans)


def _line_facts(lines: Sequence[str], rules: Mapping[str, Any]) -> list[dict[str, Any]]:
    facts = []
    for line in lines:
        spans = _spans(rules["generic_oom"], line)
        wrappers = _spans(rules["wrapper_lines"], line)
        facts.append({
            "lookalike": bool(_search(rules["absurd_size"], line))
            or (not spans and any(_search(pattern, line) for pattern in rules["lookalike_lines"])),
            "failure": bool(_search(rules["failure_line"], line)),
            "reply": bool(_search(rules["reply_line"], line)),
            "wrapper": bool(wrappers),
            "wrappers": wrappers,
            "expected": any(_search(pattern, line) for pattern in rules["expected_lines"])
            or any(_equal_groups(pattern, line) for pattern in rules["expected_when_equal"]),
            "generic": spans,
        })
    _mark_retried(lines, facts, rules)
    return facts


def _mark_retried(lines: Sequence[str], facts: list[dict[str, Any]], rules: Mapping[str, Any]) -> None:
    """A line saying the engine retried a failed step another way makes the generic out-of-memory lines
    right before it expected: the retry decides, and a failure of the retry comes after it. A line in the
    engine's own words (a back end's size limit) still says why it failed, and so may the retry line itself
    (Ollama backing off to fewer GPU layers is a partial offload)."""
    for index, line in enumerate(lines):
        if not any(_search(pattern, line) for pattern in rules["retried_lines"]):
            continue
        before = index - 1
        while before >= 0 and facts[before]["generic"]:
            facts[before]["expected"] = True
            facts[before]["generic"] = []
            before -= 1


def _lookalike_only(lines: Sequence[str], facts: Sequence[dict[str, Any]], rules: Mapping[str, Any]) -> str | None:
    """The look-alike line, when the paste states a failure of another kind and no memory failure."""
    found = next((line for line, fact in zip(lines, facts) if fact["lookalike"]), None)
    if found is None:
        return None
    for line, fact in zip(lines, facts):
        if not fact["lookalike"] and (fact["generic"] or _search(rules["memory_statement"], line)):
            return None
    return found


def _confident(ranked: Sequence[Candidate], scores: Mapping[str, float]) -> bool:
    if not ranked or ranked[0].score < scores["confident"]:
        return False
    return len(ranked) == 1 or ranked[0].score - ranked[1].score >= scores["navigate_margin"]


def _position(index: int, count: int, scores: Mapping[str, float]) -> float:
    return scores["position_max"] * (index / (count - 1) if count > 1 else 1.0)


def _engine_adjustment(record_engine: str, engine: str | None, rules: Mapping[str, Any]) -> tuple[float, str | None]:
    scores = rules["scores"]
    if engine is None:
        return 0.0, None
    if record_engine == engine:
        return scores["engine_match"], f"{engine} log"
    if rules["engine_embeds"].get(engine, {}).get("engine") == record_engine:
        return 0.0, f"{record_engine} inside {engine}"
    return scores["engine_mismatch"], f"{engine} log, {record_engine} error"


def _step_page(rules: Mapping[str, Any], engine: str, step: str, line: str) -> str | None:
    """The page of a step: the first of its conditional pages whose regex matches the out-of-memory
    line, else the step's own page."""
    for pattern, page in rules["step_pages_when"].get(engine, {}).get(step, ()):
        if _search(pattern, line):
            return page
    return rules["step_pages"].get(engine, {}).get(step)


def _route_by_step(lines: list[str], raw_lines: list[str], facts: list[dict[str, Any]], engine: str | None,
                   rules: Mapping[str, Any], by_id: Mapping[str, TriageRecord],
                   offer: Callable[[Candidate], None], titled: bool = False) -> str | None:
    """Offer the page of the step a generic out-of-memory line (or a cut traceback) was reached at;
    returns that step. `raw_lines` keep their log prefixes, which name the module that logged.
    `titled`: the paste is a title in the reader's words that says memory ran out, its one line generic."""
    scores = rules["scores"]
    # A generic out-of-memory line names no page; the step the run had reached does. So does the
    # step of a traceback cut before its exception line.
    generic_lines = [index for index, fact in enumerate(facts) if fact["generic"]] or ([0] if titled else [])
    cut_traceback = (not generic_lines and any(_search(rules["traceback_line"], line) for line in lines)
                     and not any(_search(rules["exception_line"], line) for line in lines))
    # A cut traceback is placed by its frames alone: a log line before it says how far the run
    # had got, not where the exception was raised.
    if cut_traceback:
        first_frame = next(i for i, line in enumerate(lines) if _search(rules["traceback_line"], line))
        if first_frame > 0 and _search(rules["traceback_header"], lines[first_frame - 1]):
            first_frame -= 1
        step = detect_step(lines[first_frame:], engine, rules)
        # A paste that stops at "Traceback (most recent call last):" has no frames to place it:
        # then the log before it says how far the run had got (frames that name no step do not).
        # Frames that name no step leave it to a log line after which only one step can come.
        if step is None and engine:
            framed = rules["steps_next_framed"].get(engine, [])
            if sum(1 for line in lines[first_frame:] if _search(rules["traceback_line"], line)) == 1:
                framed = rules["step_markers"].get(engine, []) + rules["steps_next"].get(engine, []) + framed
            step = detect_step(lines[:first_frame], engine, {"step_markers": {engine: framed}})
    else:
        step = detect_step(lines + raw_lines, engine, rules) if generic_lines else None
    if (generic_lines or cut_traceback) and engine is not None:
        index = generic_lines[-1] if generic_lines else len(lines) - 1
        pages = rules["step_pages"].get(engine, {})
        routed = []
        if step:
            base = scores["step_routed"] if generic_lines else scores["step_traceback"]
            routed.append((_step_page(rules, engine, step, lines[index]), base, f"step {step}" + ("" if generic_lines else " (traceback cut before its error)")))
        if generic_lines:
            routed.append((pages.get("default"), scores["step_default"], "out of memory at an unknown step"))
        for page, base, note in routed:
            record = by_id.get(page) if page else None
            if record is None:
                continue
            score = base + (scores["failure_line"] if facts[index]["failure"] else 0) + _position(index, len(lines), scores)
            offer(Candidate(record.id, record.engine, record.title, round(score, 2),
                            Reason(lines[index], index + 1, "generic out of memory", _wording(record, lines[index]),
                                   step, (note,))))
            break
    return step


def triage(text: str, records: Iterable[TriageRecord], rules: Mapping[str, Any] = RULES) -> TriageResult:
    """Rank the records whose patterns match the paste, best first, each with its reason."""
    records = list(records)
    by_id = {record.id: record for record in records}
    scores = rules["scores"]
    lines = normalise(text, rules)
    engine = detect_engine(text, rules)
    release = detect_release(lines, engine, rules)
    facts = _line_facts(lines, rules)
    lookalike = _lookalike_only(lines, facts, rules)
    if lookalike is not None:
        return TriageResult(engine, release, None, (), extract_numbers(lines, rules), False, lookalike)
    best: dict[str, Candidate] = {}
    embeds = rules["engine_embeds"].get(engine or "", {})
    # The step the paste shows the outer engine had reached, for pages offered only at one step.
    reached = detect_step(lines, engine, rules) if embeds.get("pages_at_step") else None

    def offer(candidate: Candidate) -> None:
        held = best.get(candidate.id)
        if held is None or candidate.score > held.score:
            best[candidate.id] = candidate

    for record in records:
        # A log of the inner engine alone (llama.cpp's lines from KoboldCpp or llama-cpp-python) has
        # no marker of the outer one, or it would be the outer engine's: not the outer engine's pages,
        # but for those listed_inside, scored as another engine's.
        outer_of = rules["engine_embeds"].get(record.engine, {})
        if engine is not None and outer_of.get("engine") == engine and record.id not in outer_of.get("listed_inside", ()):
            continue
        engine_score, engine_note = _engine_adjustment(record.engine, engine, rules)
        for pattern in record.patterns:
            for index, line in enumerate(lines):
                fact = facts[index]
                if fact["expected"] or fact["lookalike"]:
                    continue
                # Every match, not only the leftmost: on a line that joins several messages the
                # first alternative to match may be the generic one.
                for match in _matches(pattern, line):
                    score = scores["hit"] + record.weight + engine_score + _position(index, len(lines), scores)
                    score += scores["specific_per_char"] * min(len(match.group(0)), scores["specific_chars_max"])
                    notes = [engine_note] if engine_note else []
                    score += scores["failure_line"] if fact["failure"] else scores["not_failure_line"]
                    if fact["reply"]:
                        score += scores["reply_line"]
                        notes.append("the error the server replied with")
                    # Only the wrapper's own words: a line can carry the cause beside it ("terminated:
                    # <cause>", or log lines a terminal joined into one).
                    if _overlaps(fact["wrappers"], match):
                        score += scores["wrapper_line"]
                        notes.append("wrapper line: the failure it reports is elsewhere")
                    if _overlaps(fact["generic"], match):
                        # Generic text says memory ran out, not where: it names no page by itself;
                        # the step it happened in does (below).
                        continue
                    if record.weight:
                        notes.append(f"weight {record.weight:+d}")
                    offer(Candidate(record.id, record.engine, record.title, round(score, 2),
                                    Reason(line, index + 1, pattern, _wording(record, line), None, tuple(notes))))
                    # llama.cpp failing inside Ollama: Ollama's page for it, scored as a hit of Ollama's.
                    outer_page = (embeds.get("pages", {}).get(record.id)
                                  or embeds.get("pages_at_step", {}).get(record.id, {}).get(reached or ""))
                    outer = by_id.get(outer_page) if outer_page else None
                    if outer is not None:
                        outer_score = score - engine_score + scores["engine_match"] + scores["embedded"]
                        offer(Candidate(outer.id, outer.engine, outer.title, round(outer_score, 2),
                                        Reason(line, index + 1, pattern, _wording(outer, line), None,
                                               (f"{record.engine} failure inside {engine}: {record.id}",))))

    raw_lines = [_clean(raw) for raw in text.split("\n")]
    # A title that no signature matched says memory ran out in the reader's words ("Serve Qwen3-GPTQ
    # with OOM issue"): with the engine it names, a generic out-of-memory line of that engine.
    titled = not best and len(lines) == 1 and bool(_search(rules["title_oom"], lines[0]))
    step = _route_by_step(lines, raw_lines, facts, engine, rules, by_id, offer, titled)

    ranked = sorted((c for c in best.values() if c.score >= scores["minimum"]), key=lambda c: (-c.score, c.id))
    return TriageResult(engine, release, step, tuple(ranked), extract_numbers(lines, rules), _confident(ranked, scores))


def telling_line(text: str, rules: Mapping[str, Any] = RULES) -> str:
    """What a full-text search should look for in a paste no signature matched: the last line that
    states a failure of its own (not a wrapper, not an expected probe), else the last failure line,
    else the first line; cut to what the search takes."""
    lines = normalise(text, rules)
    if not lines:
        return ""
    facts = _line_facts(lines, rules)
    pick = next((i for i in range(len(lines) - 1, -1, -1)
                 if facts[i]["failure"] and not facts[i]["wrapper"] and not facts[i]["expected"]), None)
    if pick is None:
        pick = next((i for i in range(len(lines) - 1, -1, -1) if facts[i]["failure"]), 0)
    return lines[pick][: rules["telling_chars"]]


# --------------------------------------------------------------------------- numbers


def _value(match: re.Match[str], kind: str) -> Any:
    raw = match.group(1)
    if kind == "str":
        return raw.strip()
    if kind == "ratio":
        return f"{raw}/{match.group(2)}"
    if kind == "int":
        return int(raw.replace(",", ""))
    number = float(raw)
    if kind == "mib":
        unit = match.group(2)
        number = number * 1024 if unit == "GiB" else number / 1024 if unit == "KiB" else number
        return round(number, 2)
    return number


def extract_numbers(lines: Sequence[str], rules: Mapping[str, Any] = RULES) -> dict[str, Any]:
    """The numbers the paste prints, by the first rule of each key that matches a line."""
    numbers: dict[str, Any] = {}
    for key, pattern, kind in rules["extract"]:
        if key in numbers:
            continue
        for line in lines:
            match = _search(pattern, line)
            if match:
                try:
                    numbers[key] = _value(match, kind)
                except ValueError:  # "1.2.3" caught by [\d.]+: not a number, try the next line
                    continue
                break
    return numbers
