"""The reader's own command, read from the paste, and the same command with only the fix flags changed.

Pure and plain (regexes JavaScript shares, loops over lines), so that templates/static/recompute.js
can follow it line for line; tests/triage/test_recompute_js.py holds the two to the same output.
Where the command comes from, best first:
- vLLM V1's start-up line "non-default args: {'model_tag': ..., 'max_model_len': 32768, ...}": every
  argument the reader set, by its Python name (a flag is the name with dashes);
- a command line pasted with the log: `vllm serve MODEL --flag value`, `python -m
  vllm.entrypoints.openai.api_server --model MODEL ...`, `llama-server -m FILE -c 8192 ...`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

NON_DEFAULT = r"non-default args: \{(.*)\}"
# One scalar argument of that dict; lists and dicts are left out (they are not one flag value).
ARG_PAIR = r"'(\w+)': ('[^']*'|\"[^\"]*\"|-?[0-9][0-9.e+-]*|True|False|None)(?=,|$)"
PROGRAMS = [
    ["vllm serve", r"\bvllm serve\s+(.*)$"],
    ["vllm serve", r"\bvllm\.entrypoints\.openai\.api_server\s+(-.*)$"],
    ["llama-server", r"\bllama-server(?:\.exe)?\s+(-.*)$"],
]
# The flag that names the model file or repository, per program, when it is not positional.
MODEL_FLAGS = ["--model", "-m", "--model-path"]
MODEL_KEYS = ["model_tag", "model"]


@dataclass(frozen=True)
class ReaderCommand:
    program: str
    model: str | None
    flags: tuple[tuple[str, str | None], ...]  # in the reader's order; None: a flag without a value
    source: str  # where it was read


def _from_non_default(line: str) -> ReaderCommand | None:
    found = re.search(NON_DEFAULT, line)
    if not found:
        return None
    model = None
    flags: list[tuple[str, str | None]] = []
    for key, raw in re.findall(ARG_PAIR, found.group(1)):
        if raw in ("False", "None"):
            continue
        value = None if raw == "True" else raw.strip("'\"")
        if key in MODEL_KEYS:
            model = model or value
            continue
        flags.append(("--" + key.replace("_", "-"), value))
    return ReaderCommand("vllm serve", model, tuple(flags), "the non-default args line")


def _from_command_line(line: str) -> ReaderCommand | None:
    for program, pattern in PROGRAMS:
        found = re.search(pattern, line)
        if not found:
            continue
        words = found.group(1).split()
        model = None
        flags: list[tuple[str, str | None]] = []
        i = 0
        while i < len(words):
            word = words[i]
            if word.startswith("-"):
                name, eq, inline = word.partition("=")
                if eq:
                    value: str | None = inline
                elif i + 1 < len(words) and not words[i + 1].startswith("-"):
                    value = words[i + 1]
                    i += 1
                else:
                    value = None
                if name in MODEL_FLAGS and model is None:
                    model = value
                else:
                    flags.append((name, value))
            elif model is None and not flags and program == "vllm serve":
                model = word
            i += 1
        return ReaderCommand(program, model, tuple(flags), "the command line in the paste")
    return None


def _joined_lines(text: str) -> list[str]:
    """The paste's lines, with shell continuations (a trailing backslash) joined."""
    out: list[str] = []
    carry = ""
    for raw in text.split("\n"):
        line = raw.rstrip()
        if line.endswith("\\"):
            carry += line[:-1] + " "
            continue
        out.append(carry + line)
        carry = ""
    if carry:
        out.append(carry)
    return out


def reader_command(text: str) -> ReaderCommand | None:
    """The reader's command: vLLM's non-default args line if the paste has one, else the first
    command line it holds."""
    lines = _joined_lines(text)
    for line in lines:
        found = _from_non_default(line)
        if found is not None:
            return found
    for line in lines:
        found = _from_command_line(line)
        if found is not None:
            return found
    return None


def changed_command(command: ReaderCommand, changes: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The reader's command with only `changes` applied: each [flag, new value, what it buys, and
    any other spelling of the flag]. Returns the command line and, per change, what it was and what
    the change buys."""
    flags = [list(pair) for pair in command.flags]
    notes = []
    for flag, value, buys, *aliases in changes:
        names = [flag, *aliases]
        held = next((pair for pair in flags if pair[0] in names), None)
        if held is None:
            flags.append([flag, value])
            notes.append(f"{flag} {value} (added): {buys}")
        else:
            notes.append(f"{held[0]} {held[1]} -> {value}: {buys}")
            held[1] = value
    words = [command.program] + ([command.model] if command.model else [])
    for name, value in flags:
        words.append(name if value is None else f"{name} {value}")
    return {"command": " ".join(words), "changes": notes, "source": command.source}


def fix_changes(engine: str | None, recompute: Mapping[str, Any] | None) -> list[list[str]]:
    """The flags a recompute (generator/engine/from_log.py, as plain data) says to change, each with
    what it buys. Empty when it gives no figure to set."""
    if not recompute:
        return []
    longest = recompute.get("longest")
    if longest:
        return [["--max-model-len", str(longest["low"]),
                 "the longest context whose KV cache fits the memory your log prints"]]
    if recompute.get("fitting_ctx"):
        return [["-c", str(recompute["fitting_ctx"]),
                 "the largest context whose KV cache fits the device's free memory beside the weights and compute buffer",
                 "--ctx-size"]]
    return []


def fp8_changes(recompute: Mapping[str, Any] | None) -> list[list[str]]:
    """The alternative a vLLM recompute offers: an fp8 KV cache and the longer context it holds."""
    fp8 = (recompute or {}).get("longest_fp8")
    longest = (recompute or {}).get("longest")
    if not fp8 or not longest or fp8["low"] <= longest["low"]:
        return []
    return [["--kv-cache-dtype", "fp8", "half the KV bytes per token"],
            ["--max-model-len", str(fp8["low"]), "the longest context an fp8 cache fits in the same memory"]]


def reader_fix(text: str, engine: str | None, recompute: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The reader's own command with the recompute's fix, and the fp8 alternative where there is
    one; None when the paste holds no command of the reader's or the recompute gives nothing to set."""
    command = reader_command(text)
    changes = fix_changes(engine, recompute)
    if command is None or not changes:
        return None
    fixed = changed_command(command, changes)
    alternative = fp8_changes(recompute)
    if alternative:
        fixed["alternative"] = changed_command(command, alternative)
    return fixed


def reader_fix_lines(fixed: Mapping[str, Any]) -> list[str]:
    out = [f"Your command, with only the fix changed (model and flags from {fixed['source']}):", f"  {fixed['command']}"]
    out.extend(f"  {note}" for note in fixed["changes"])
    alternative = fixed.get("alternative")
    if alternative:
        out.append(f"  or: {alternative['command']}")
        out.extend(f"    {note}" for note in alternative["changes"])
    return out
