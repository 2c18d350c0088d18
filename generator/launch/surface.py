"""Check a command line (vLLM, SGLang, llama-server) or an Ollama server environment against the real CLI
surface: unknown flags and variables, and bad values for the ones kvtriage prints.

Pure functions. The caller reads the surface files (data/surfaces/*.txt, each read from the upstream
release its header names) and passes their text in. check_command_at also takes the release a page
names and the parsed data/surfaces/removed-flags.txt.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Mapping, NamedTuple, Sequence

from generator.launch.surface_values import (
    _INT,
    LLAMA_SERVER_TAKES_VALUE,
    LLAMA_SERVER_VALUES,
    OLLAMA_CLIENT_VARS,
    OLLAMA_PARAMETERS,
    OLLAMA_VALUES,
    SGLANG_DEPRECATED,
    SGLANG_PROGRAM,
    SGLANG_REMOVED,
    SGLANG_TAKES_VALUE,
    SGLANG_VALUES,
    VLLM_DEPRECATED_QUANTIZATION,
    VLLM_GHOST,
    VLLM_REMOVED,
    VLLM_TAKES_VALUE,
    VLLM_VALUES,
    _is_int,
    _looks_like_flag,
)

# ---------------------------------------------------------------------------------------------
# Parsing the surface files


def _flag_lines(text: str) -> frozenset[str]:
    flags = set()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        token = line.split()[0]
        if token.startswith("--"):
            flags.add(token)
    return frozenset(flags)


def parse_vllm_flags(text: str) -> frozenset[str]:
    """Long flags of `vllm serve`, one per line (vllm-serve-flags.txt)."""
    return _flag_lines(text)


def parse_llama_server_flags(text: str) -> frozenset[str]:
    """Long flags of `llama-server`, one per line (llama-server-flags.txt)."""
    return _flag_lines(text)


def parse_sglang_args(text: str) -> frozenset[str]:
    """Long flags of `python -m sglang.launch_server`, one per line (sglang-server-args.txt)."""
    return _flag_lines(text)


def surface_release(text: str) -> str | None:
    """The release a surface file's header names ("... SGLang v0.5.23 ..." -> "0.5.23")."""
    for raw in text.splitlines():
        if not raw.startswith("#"):
            break
        match = re.search(r"\b(?:SGLang|vLLM) v(\d+(?:\.\d+)*(?:\.post\d+)?)\b", raw)
        if match:
            return match.group(1)
    return None


def parse_ollama_env(text: str) -> frozenset[str]:
    """Variable names from ollama-env.txt (NAME<TAB>DEFAULT<TAB>notes)."""
    names = set()
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        names.add(raw.split("\t")[0].strip())
    return frozenset(names)


# ---------------------------------------------------------------------------------------------
# Short aliases. Sources: llama.cpp common/arg.cpp read at master 3f545be
# (https://github.com/ggml-org/llama.cpp/blob/b10573/common/arg.cpp); vLLM 0.33.0's parser
# (https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/engine/arg_utils.py: -tp, -pp, -dp, -dcp, -q, -cc)
# and -O<n> as the optimization level (https://github.com/vllm-project/vllm/pull/26847).

LLAMA_SERVER_SHORT = {
    "-m": "--model",
    "-c": "--ctx-size",
    "-b": "--batch-size",
    "-ub": "--ubatch-size",
    "-fa": "--flash-attn",
    "-ctk": "--cache-type-k",
    "-ctv": "--cache-type-v",
    "-ngl": "--n-gpu-layers",
    "-np": "--parallel",
    "-kvu": "--kv-unified",
    "-no-kvu": "--no-kv-unified",
    "-kvo": "--kv-offload",
    "-nkvo": "--no-kv-offload",
    "-fit": "--fit",
    "-fitt": "--fit-target",
    "-fitc": "--fit-ctx",
    "-ot": "--override-tensor",
    "-cmoe": "--cpu-moe",
    "-ncmoe": "--n-cpu-moe",
    "-cram": "--cache-ram",
    "-sm": "--split-mode",
    "-ts": "--tensor-split",
    "-mg": "--main-gpu",
    "-dev": "--device",
    "-lv": "--log-verbosity",
}

VLLM_SHORT = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-dcp": "--decode-context-parallel-size",
    "-q": "--quantization",
    "-O": "--optimization-level",
    "-cc": "--compilation-config",
}

# ---------------------------------------------------------------------------------------------
# Checking


def _flag_tokens(argv: Sequence[str], engine: str) -> tuple[list[str], str | None]:
    """The flags after the leading program words (`vllm serve <model>` / `llama-server`), or a
    problem when the program is not the one expected."""
    tokens = list(argv)
    if engine == "vllm":
        if tokens[:1] == ["vllm"]:
            tokens = tokens[1:]
        if tokens[:1] == ["serve"]:
            tokens = tokens[1:]
        if tokens and not tokens[0].startswith("-"):
            tokens = tokens[1:]  # the positional model_tag
    elif engine == "sglang":
        if tuple(tokens[:3]) == SGLANG_PROGRAM:
            tokens = tokens[3:]
        elif tokens[:1] and tokens[0].startswith("python"):
            return tokens, f"expected `{' '.join(SGLANG_PROGRAM)}`, got {' '.join(tokens[:3])!r}"
    elif tokens and tokens[0].endswith("llama-server"):
        tokens = tokens[1:]
    return tokens, None


def _flag_name(token: str, engine: str, short: Mapping[str, str], problems: list[str]) -> tuple[str, str | None, bool]:
    """(long flag name, value given with it, done): done when the token is fully handled (a problem
    noted, or a dotted config key that needs no further check)."""
    value: str | None = None
    name = token
    if engine == "sglang":
        if "=" in token:
            name, value = token.split("=", 1)
    elif engine == "vllm":
        if token.startswith("-O") and not token.startswith("--"):
            rest = token[2:].lstrip("=")
            name = "--optimization-level"
            if rest:
                value = rest
        elif token.startswith("-cc."):
            name, value = "--compilation-config", token.split("=", 1)[1] if "=" in token else None
            if value is None:
                problems.append(f"{token}: dotted -cc keys need '=value'")
            return name, value, True
        elif "=" in token:
            name, value = token.split("=", 1)
        name = short.get(name, name)
        if name.startswith("--compilation-config."):
            if "=" not in token:
                problems.append(f"{token}: dotted --compilation-config keys need '=value'")
            return name, value, True
    else:
        if "=" in token:
            problems.append(f"{token}: llama-server takes the value as the next argument, not after '='")
            return name, value, True
        name = short.get(token, token)
        if name.startswith("--"):
            name = name.replace("_", "-")  # common/arg.cpp rewrites '_' to '-' in long args
    return name, value, False


def _check_flag_argv(
    argv: Sequence[str],
    surface: frozenset[str],
    short: Mapping[str, str],
    values: Mapping[str, object],
    takes_value: frozenset[str],
    *,
    engine: str,
) -> list[str]:
    problems: list[str] = []
    tokens, wrong_program = _flag_tokens(argv, engine)
    if wrong_program:
        return [wrong_program]

    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-") or _INT.match(token):
            problems.append(f"unexpected argument {token!r}")
            continue
        name, value, done = _flag_name(token, engine, short, problems)
        if done:
            continue

        if engine == "vllm" and name in VLLM_REMOVED:
            problems.append(f"{name}: {VLLM_REMOVED[name]}")
            if i < len(tokens) and not _looks_like_flag(tokens[i]):
                i += 1
            continue
        if engine == "vllm" and name in VLLM_GHOST:
            problems.append(f"{token}: {VLLM_GHOST[name]}")
            if i < len(tokens) and not _looks_like_flag(tokens[i]):
                i += 1
            continue
        if engine == "sglang" and name in SGLANG_REMOVED:
            problems.append(f"{name}: {SGLANG_REMOVED[name]}")
            if i < len(tokens) and not _looks_like_flag(tokens[i]):
                i += 1
            continue
        if engine == "sglang" and name in SGLANG_DEPRECATED:
            problems.append(f"{name}: {SGLANG_DEPRECATED[name]}")
        if name not in surface:
            where = {"vllm": "vllm serve", "sglang": "python -m sglang.launch_server"}.get(engine, "llama-server")
            problems.append(f"unknown flag {token} for {where}")
            if i < len(tokens) and not _looks_like_flag(tokens[i]):
                i += 1
            continue
        if value is None and (name in takes_value or (i < len(tokens) and not _looks_like_flag(tokens[i]))):
            if i < len(tokens) and not _looks_like_flag(tokens[i]):
                value = tokens[i]
                i += 1
            elif name in takes_value:
                problems.append(f"{token} needs a value")
                continue
        check = values.get(name)
        if check is not None and value is not None:
            message = check(value)
            if message:
                problems.append(f"{token} {value}: {message}")
        if engine == "vllm" and name == "--quantization" and value in VLLM_DEPRECATED_QUANTIZATION:
            if "--allow-deprecated-quantization" not in tokens:
                problems.append(f"{token} {value}: deprecated, needs --allow-deprecated-quantization")
    return problems


def _check_ollama(argv_or_env: Mapping[str, str] | Sequence[str], surface: frozenset[str]) -> list[str]:
    problems: list[str] = []
    env: list[tuple[str, str]] = []
    command: list[str] = []
    exported = False
    if isinstance(argv_or_env, Mapping):
        env = [(str(k), str(v)) for k, v in argv_or_env.items()]
    else:
        tokens = list(argv_or_env)
        if tokens[:2] in (["/set", "parameter"],) or tokens[:1] == ["PARAMETER"]:
            params = tokens[2:] if tokens[0] == "/set" else tokens[1:]
            if len(params) != 2:
                return [f"{' '.join(tokens)}: expected a parameter name and one value"]
            name, value = params
            if name not in OLLAMA_PARAMETERS:
                return [f"{name}: not a memory parameter Ollama takes per model ({', '.join(OLLAMA_PARAMETERS)})"]
            if not _is_int(value, OLLAMA_PARAMETERS[name]):
                return [f"{name} {value}: must be an integer >= {OLLAMA_PARAMETERS[name]}"]
            return []
        for token in tokens:
            if token == "export":
                exported = True
                continue
            if not command and re.match(r"^[A-Z_][A-Z0-9_]*=", token):
                name, value = token.split("=", 1)
                env.append((name, value.strip("\"'")))
            else:
                command.append(token)
    for name, value in env:
        if name not in surface:
            problems.append(f"unknown environment variable {name} for the Ollama server")
            continue
        check = OLLAMA_VALUES.get(name)
        if check is not None:
            message = check(value)
            if message:
                problems.append(f"{name}={value}: {message}")
    server_vars = [name for name, _ in env if name in surface and name not in OLLAMA_CLIENT_VARS]
    if command:
        if command[0] != "ollama":
            problems.append(f"unexpected command {command[0]!r}; expected `ollama serve`")
        elif len(command) < 2 or command[1] != "serve":
            if server_vars:
                sub = command[1] if len(command) > 1 else ""
                problems.append(
                    f"{', '.join(server_vars)} set on `ollama {sub}`: the client ignores them; set them on `ollama serve`, "
                    "the systemd unit or `launchctl setenv`"
                )
    elif exported and server_vars:
        problems.append("`export` in a shell only reaches a server started from that shell; restart `ollama serve` there or set the service environment")
    return problems


def check_command(engine: str, argv_or_env: Sequence[str] | Mapping[str, str], surface: frozenset[str]) -> list[str]:
    """Problems with one command block, empty when it is valid.

    engine: "vllm" (argv of `vllm serve`), "sglang" (argv of `python -m sglang.launch_server`), "llamacpp" (argv of `llama-server`), or "ollama" (a mapping of
    server environment, or tokens like ["OLLAMA_KV_CACHE_TYPE=q8_0", "ollama", "serve"], or a Modelfile /
    REPL parameter line like ["PARAMETER", "num_ctx", "16384"])."""
    if engine == "vllm":
        return _check_flag_argv(argv_or_env, surface, VLLM_SHORT, VLLM_VALUES, VLLM_TAKES_VALUE, engine="vllm")
    if engine == "sglang":
        return _check_flag_argv(argv_or_env, surface, {}, SGLANG_VALUES, SGLANG_TAKES_VALUE, engine="sglang")
    if engine in ("llamacpp", "llama.cpp", "llama-server"):
        return _check_flag_argv(argv_or_env, surface, LLAMA_SERVER_SHORT, LLAMA_SERVER_VALUES, LLAMA_SERVER_TAKES_VALUE, engine="llamacpp")
    if engine == "ollama":
        return _check_ollama(argv_or_env, surface)
    raise ValueError(f"unknown engine {engine!r}; expected vllm, sglang, llamacpp or ollama")


# ---------------------------------------------------------------------------------------------
# Releases. The surface files hold the newest release read (their headers name it). A page that
# names an older release needs the flags of that release: data/surfaces/removed-flags.txt lists
# flags that later releases dropped (FLAG, ENGINE, LAST_SEEN, REMOVED_IN, REPLACED_BY, SOURCE,
# EVIDENCE; aliases as "aliases A B;" at the start of EVIDENCE) and data/surfaces/added-flags.txt
# the flags later releases added (FLAG, ENGINE, LAST_WITHOUT, FIRST_SEEN, SOURCE; llama-server from
# b9093 on only, none for vLLM), so a flag added after the page's release is refused too.


class RemovedFlag(NamedTuple):
    flag: str
    engine: str
    last_seen: str  # newest release checked that has it
    removed_in: str  # oldest release checked that does not
    replaced_by: str | None
    aliases: tuple[str, ...] = ()


def parse_removed_flags(text: str) -> dict[tuple[str, str], RemovedFlag]:
    """(engine, spelling) -> RemovedFlag, for the long flag and each alias, from removed-flags.txt."""
    found: dict[tuple[str, str], RemovedFlag] = {}
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cols = raw.split("\t")
        if len(cols) < 5:
            raise ValueError(f"removed-flags line needs at least 5 tab-separated columns: {raw!r}")
        flag, engine, last_seen, removed_in, replaced_by = (c.strip() for c in cols[:5])
        evidence = cols[6].strip() if len(cols) > 6 else ""
        aliases: tuple[str, ...] = ()
        if evidence.startswith("aliases "):
            aliases = tuple(evidence[len("aliases ") :].split(";", 1)[0].split())
        entry = RemovedFlag(flag, engine, last_seen, removed_in, None if replaced_by in ("", "-") else replaced_by, aliases)
        for spelling in (flag, *aliases):
            found[(engine, spelling)] = entry
    return found


class AddedFlag(NamedTuple):
    flag: str
    engine: str
    last_without: str  # newest release checked that does not have it
    first_seen: str  # oldest release checked that has it


def parse_added_flags(text: str) -> dict[tuple[str, str], AddedFlag]:
    """(engine, flag) -> AddedFlag, from added-flags.txt."""
    found: dict[tuple[str, str], AddedFlag] = {}
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in raw.split("\t")]
        if len(cols) < 4:
            raise ValueError(f"added-flags line needs at least 4 tab-separated columns: {raw!r}")
        found[(cols[1], cols[0])] = AddedFlag(*cols[:4])
    return found


@lru_cache(maxsize=1024)  # a build compares the same few release names some 100k times
def release_key(release: str) -> tuple[int, ...]:
    """Order releases of one engine: 'b10878' -> (10878,), 'v0.28.0' / '0.9.0.1' -> (0, 28, 0) / (0, 9, 0, 1)."""
    text = release.strip()
    if re.fullmatch(r"b\d+", text):
        return (int(text[1:]),)
    text = text.removeprefix("v")
    if not re.fullmatch(r"\d+(\.\d+)*", text):
        raise ValueError(f"not a release like b10878 or 0.28.0: {release!r}")
    return tuple(int(p) for p in text.split("."))


def surface_at(
    engine: str,
    surface: frozenset[str],
    release: str,
    removed: Mapping[tuple[str, str], RemovedFlag],
    added: Mapping[tuple[str, str], AddedFlag] | None = None,
) -> frozenset[str]:
    """The long flags of `release`, as far as the records tell: the newest surface plus every flag
    removed after `release` (its LAST_SEEN is `release` or newer), less every flag added after it
    (its LAST_WITHOUT is `release` or newer)."""
    key = release_key(release)
    extra = {r.flag for (eng, _), r in removed.items() if eng == engine and key <= release_key(r.last_seen)}
    later = {a.flag for (eng, _), a in (added or {}).items() if eng == engine and key <= release_key(a.last_without)}
    return (surface | extra) - later


# surface_at by its arguments (the mappings by identity, kept alive here so an id is not reused): a
# build checks thousands of commands against the same few releases. The records are not changed once read.
_SURFACES_AT: dict[tuple, tuple] = {}


def _surface_at_memo(engine: str, surface: frozenset[str], release: str, removed: Mapping[tuple[str, str], RemovedFlag],
                     added: Mapping[tuple[str, str], AddedFlag] | None) -> frozenset[str]:
    key = (engine, release, surface, id(removed), id(added))
    found = _SURFACES_AT.get(key)
    if found is not None and found[0] is removed and found[1] is added:
        return found[2]
    at = surface_at(engine, surface, release, removed, added)
    if len(_SURFACES_AT) >= 64:
        _SURFACES_AT.clear()
    _SURFACES_AT[key] = (removed, added, at)
    return at


def check_command_at(
    engine: str,
    argv: Sequence[str],
    surface: frozenset[str],
    release: str,
    removed: Mapping[tuple[str, str], RemovedFlag],
    added: Mapping[tuple[str, str], AddedFlag] | None = None,
) -> list[str]:
    """check_command for a page that names `release`: a flag must exist in that release. A flag
    removed by then gets a message naming the release that dropped it and its replacement; a flag
    added after it, the release that added it."""
    if engine in ("llama.cpp", "llama-server"):
        engine = "llamacpp"
    key = release_key(release)
    short = VLLM_SHORT if engine == "vllm" else LLAMA_SERVER_SHORT
    # Spell aliases of removed flags (-dio, --ctx-size-draft ...) long; the alias tables hold today's only.
    spelled = [removed[(engine, t)].flag if (engine, t) in removed else t for t in argv]
    problems = check_command(engine, spelled, _surface_at_memo(engine, surface, release, removed, added))
    for token in argv:
        if not token.startswith("-"):
            continue
        name = token.split("=", 1)[0] if engine == "vllm" else token
        new = (added or {}).get((engine, short.get(name, name).replace("_", "-")))
        if new is not None and key < release_key(new.first_seen):
            problems = [p for p in problems if not p.startswith(f"unknown flag {token} ")]
            if key <= release_key(new.last_without):
                problems.append(f"{token} is not in {release}: first seen in {new.first_seen} (not in {new.last_without})")
            else:
                problems.append(f"{token} may not exist in {release}: added between {new.last_without} and {new.first_seen}")
            continue
        entry = removed.get((engine, name)) or removed.get((engine, short.get(name, name).replace("_", "-")))
        if entry is None or key <= release_key(entry.last_seen):
            if entry is not None and engine == "vllm" and entry.flag in VLLM_REMOVED:
                problems = [p for p in problems if not p.startswith(f"{entry.flag}: ")]  # it still existed then
            continue
        problems = [p for p in problems if not p.startswith((f"unknown flag {entry.flag} ", f"{entry.flag}: "))]
        use = f"; use {entry.replaced_by}" if entry.replaced_by else ""
        if key >= release_key(entry.removed_in):
            problems.append(f"{token} was removed in {entry.removed_in} (last in {entry.last_seen}){use}")
        else:
            problems.append(f"{token} may not exist in {release}: removed between {entry.last_seen} and {entry.removed_in}{use}")
    return problems
