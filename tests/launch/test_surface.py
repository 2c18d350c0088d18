"""Command blocks against the real CLI surfaces in data/surfaces/ (each read from an upstream release; the header names it)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from generator.engine.llamacpp import CACHE_TYPES as ENGINE_CACHE_TYPES
from generator.launch.surface import (
    LLAMA_SERVER_SHORT,
    VLLM_SHORT,
    check_command,
    check_command_at,
    parse_added_flags,
    parse_llama_server_flags,
    parse_ollama_env,
    parse_removed_flags,
    parse_sglang_args,
    parse_vllm_flags,
    release_key,
)
from generator.launch.surface_values import CACHE_TYPES

REPO = Path(__file__).resolve().parents[2]
SURFACES = REPO / "data" / "surfaces"

VLLM = parse_vllm_flags((SURFACES / "vllm-serve-flags.txt").read_text(encoding="utf-8"))
LLAMA = parse_llama_server_flags((SURFACES / "llama-server-flags.txt").read_text(encoding="utf-8"))
OLLAMA = parse_ollama_env((SURFACES / "ollama-env.txt").read_text(encoding="utf-8"))
SGLANG = parse_sglang_args((SURFACES / "sglang-server-args.txt").read_text(encoding="utf-8"))


def test_surface_files_parse_to_their_stated_sizes():
    assert len(VLLM) == 411  # the file header says 411 long flags
    assert len(LLAMA) == 329  # llama.cpp b11434 common/arg.cpp, the options registered for llama-server
    assert {"--kv-cache-dtype", "--max-model-len", "--gpu-memory-utilization", "--optimization-level"} <= VLLM
    assert {"--ctx-size", "--cache-type-k", "--parallel", "--kv-unified", "--swa-full", "--fit"} <= LLAMA
    assert {"OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL", "OLLAMA_CONTEXT_LENGTH",
            "LLAMA_ARG_FIT", "LLAMA_ARG_FIT_TARGET"} <= OLLAMA
    assert "OLLAMA_NEW_ENGINE" not in OLLAMA and "--swap-space" not in VLLM


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("vllm-serve-flags.txt", "https://github.com/vllm-project/vllm/blob/v0.33.0/"),
        ("llama-server-flags.txt", "https://github.com/ggml-org/llama.cpp/blob/b11434/"),
        ("ollama-env.txt", "https://github.com/ollama/ollama/blob/v0.33.0-rc2/"),
    ],
)
def test_surface_headers_name_the_release_and_its_upstream_source(name, url):
    header = [line for line in (SURFACES / name).read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert any(url in line for line in header)


def test_removed_flags_are_gone_from_the_surfaces():
    # removed-flags.txt: FLAG<TAB>ENGINE<TAB>LAST_SEEN<TAB>REMOVED_IN<TAB>REPLACED_BY<TAB>SOURCE<TAB>EVIDENCE
    surfaces = {"llamacpp": LLAMA, "vllm": VLLM}
    rows = [
        line.split("\t")
        for line in (SURFACES / "removed-flags.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rows
    for flag, engine, last_seen, removed_in, replaced_by, source, evidence in rows:
        assert flag.startswith("--") and last_seen and removed_in and replaced_by, flag
        assert flag not in surfaces[engine], flag
        assert source.startswith("https://github.com/") and "https://github.com/" in evidence, flag


def test_short_aliases_point_at_real_long_flags():
    for short, long in LLAMA_SERVER_SHORT.items():
        assert long in LLAMA, short
    for short, long in VLLM_SHORT.items():
        assert long in VLLM, short


def test_cache_types_agree_with_the_engine():
    assert CACHE_TYPES == ENGINE_CACHE_TYPES


# --- llama-server ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "line",
    [
        # typical remediation commands
        "llama-server -m model.gguf -c 16384 -ctk q8_0 -ctv q8_0",
        "llama-server -m model.gguf -c 16384 -fa on -ctk q8_0 -ctv q8_0",
        "llama-server -m model.gguf -c 16384 -np 1",
        "llama-server -m model.gguf -c 32768 -np 4 -kvu",
        "llama-server -m model.gguf -ngl 40",
        "llama-server -m model.gguf -nkvo",
        "llama-server -m model.gguf --n-cpu-moe 20",
        "llama-server -m model.gguf --cpu-moe",
        "llama-server -m model.gguf -ot 'ffn_.*_exps=CPU'",
        "llama-server -m model.gguf -fitt 2048 -fitc 8192",
        # long spellings and the '_' rewrite
        "llama-server --model m.gguf --ctx-size 0 --cache-type-k q4_0 --cache-type-v q4_0 --flash-attn auto --parallel -1",
        "llama-server --model m.gguf --ctx_size 8192 --n-gpu-layers all --swa-full --ubatch-size 1024 --no-kv-unified",
        "llama-server -m m.gguf -c 8192 -ngl auto -fit off -sm layer -ts 1,1 -lv 4",
    ],
)
def test_valid_llama_server_commands(line):
    assert check_command("llamacpp", shlex.split(line), LLAMA) == []


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("llama-server -m m.gguf -ctk fp8", "-ctk fp8: must be one of f32, f16, bf16, q8_0"),
        ("llama-server -m m.gguf -ctv q8", "-ctv q8: must be one of"),
        ("llama-server -m m.gguf -fa yes", "-fa yes: must be one of on, enabled"),
        ("llama-server -m m.gguf -fa -c 4096", "-fa needs a value"),
        ("llama-server -m m.gguf -np 0", "llama-server rejects 0"),
        ("llama-server -m m.gguf -c -5", "-c -5: must be an integer >= 0"),
        ("llama-server -m m.gguf --ctx-size=4096", "not after '='"),
        ("llama-server -m m.gguf --kv-cache-dtype fp8", "unknown flag --kv-cache-dtype for llama-server"),
        ("llama-server -m m.gguf -kvq", "unknown flag -kvq"),
        ("llama-server -m m.gguf -ngl many", "must be a number of layers, 'auto' or 'all'"),
        ("llama-server -m m.gguf -sm rows", "-sm rows: must be one of none, layer, row, tensor"),
        ("llama-server -m m.gguf stray", "unexpected argument 'stray'"),
    ],
)
def test_bad_llama_server_commands(line, fragment):
    problems = check_command("llamacpp", shlex.split(line), LLAMA)
    assert any(fragment in p for p in problems), problems


# --- vLLM ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "line",
    [
        "vllm serve Qwen/Qwen2.5-Coder-32B-Instruct-AWQ --max-model-len 8176 --gpu-memory-utilization 0.90",
        "vllm serve m --kv-cache-dtype fp8 --max-model-len 16k -tp 2 -pp 1",
        "vllm serve m --kv-cache-dtype=fp8_e5m2 --max-model-len=auto --kv-cache-memory-bytes 8G",
        "vllm serve m -O0 --enforce-eager",
        "vllm serve m -O 3",
        "vllm serve m -O=1 -cc.cudagraph_mode=PIECEWISE",
        "vllm serve m -cc '{\"cudagraph_mode\": \"NONE\"}' --max-num-seqs 64 --max-num-batched-tokens 2048",
        "vllm serve m --max-model-len 25.6k --dtype half --block-size 32 -q awq_marlin",
        "vllm serve m --no-enforce-eager --performance-mode throughput --cpu-offload-gb 4",
    ],
)
def test_valid_vllm_commands(line):
    assert check_command("vllm", shlex.split(line), VLLM) == []


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("vllm serve m --kv-cache-dtype fp9", "--kv-cache-dtype fp9: must be one of auto, float16"),
        ("vllm serve m --kv-cache-dtype q8_0", "must be one of auto"),
        ("vllm serve m --swap-space 4", "removed in vLLM 0.18.0"),
        ("vllm serve m --gpu-memory-utilization 95", "must be a fraction in (0, 1]"),
        ("vllm serve m --max-model-len 1.5K", "--max-model-len 1.5K"),
        ("vllm serve m -O 4", "-O 4: must be one of 0, 1, 2, 3"),
        ("vllm serve m --kv-cache-memory 8G", "--kv-cache-memory is not a vllm serve flag"),  # prefix abbreviation only
        ("vllm serve m -tp 0", "-tp 0: must be an integer >= 1"),
        ("vllm serve m -q fbgemm_fp8", "needs --allow-deprecated-quantization"),
        ("vllm serve m --quantization gguf", "--quantization gguf: must be one of"),
        ("vllm serve m -cc.cudagraph_mode", "dotted -cc keys need '=value'"),
        ("vllm serve m --max-model-len", "--max-model-len needs a value"),
    ],
)
def test_bad_vllm_commands(line, fragment):
    problems = check_command("vllm", shlex.split(line), VLLM)
    assert any(fragment in p for p in problems), problems


# --- Ollama ----------------------------------------------------------------------------------

def test_valid_ollama_server_environment():
    assert check_command("ollama", shlex.split("OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_CONTEXT_LENGTH=16384 OLLAMA_NUM_PARALLEL=1 ollama serve"), OLLAMA) == []
    assert check_command("ollama", shlex.split("OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 ollama serve"), OLLAMA) == []
    assert check_command("ollama", {"OLLAMA_KV_CACHE_TYPE": "q4_0", "OLLAMA_KEEP_ALIVE": "1h30m", "LLAMA_ARG_FIT_TARGET": "2048"}, OLLAMA) == []
    assert check_command("ollama", ["OLLAMA_HOST=0.0.0.0:11434", "ollama", "run", "qwen2.5"], OLLAMA) == []
    assert check_command("ollama", ["/set", "parameter", "num_ctx", "16384"], OLLAMA) == []
    assert check_command("ollama", ["PARAMETER", "num_ctx", "16384"], OLLAMA) == []


@pytest.mark.parametrize(
    "argv_or_env, fragment",
    [
        ({"OLLAMA_KV_CACHE_TYPE": "fp8"}, "OLLAMA_KV_CACHE_TYPE=fp8: must be one of"),
        ({"OLLAMA_FLASH_ATTENTION": "yes"}, "OLLAMA_FLASH_ATTENTION=yes"),
        ({"OLLAMA_NEW_ENGINE": "1"}, "unknown environment variable OLLAMA_NEW_ENGINE"),
        ({"OLLAMA_NUM_PARALLEL": "-1"}, "must be an unsigned integer"),
        ({"LLAMA_ARG_FIT": "true"}, "LLAMA_ARG_FIT=true: must be one of on, off"),
        (["OLLAMA_KV_CACHE_TYPE=q8_0", "ollama", "run", "qwen2.5"], "set on `ollama run`: the client ignores them"),
        (["export", "OLLAMA_KV_CACHE_TYPE=q8_0"], "`export` in a shell"),
        (["PARAMETER", "num_ctx", "large"], "num_ctx large: must be an integer"),
        (["PARAMETER", "kv_cache_type", "q8_0"], "not a memory parameter"),
    ],
)
def test_bad_ollama_settings(argv_or_env, fragment):
    problems = check_command("ollama", argv_or_env, OLLAMA)
    assert any(fragment in p for p in problems), problems


def test_unknown_engine():
    with pytest.raises(ValueError):
        check_command("tgi", [], frozenset())


# --- SGLang (python -m sglang.launch_server, v0.5.23) ----------------------------------------

def test_sglang_surface_and_dtypes_agree_with_the_engine():
    from generator.engine.sglang import KV_CACHE_DTYPES
    from generator.launch.surface_values import SGLANG_KV_CACHE_DTYPES

    assert len(SGLANG) == 547  # the file header says 547 long flags
    assert SGLANG_KV_CACHE_DTYPES == KV_CACHE_DTYPES
    assert {"--model-path", "--tp-size", "--mem-fraction-static", "--context-length", "--kv-cache-dtype"} <= SGLANG
    assert "--cuda-graph-max-bs" not in SGLANG


@pytest.mark.parametrize(
    "line",
    [
        "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp-size 2 --mem-fraction-static 0.85 --context-length 32768",
        "python -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3 --page-size 64 --max-total-tokens 100000",
        "python -m sglang.launch_server --model-path m --cuda-graph-max-bs-decode 16 --cuda-graph-backend-decode=disabled",
    ],
)
def test_valid_sglang_commands(line):
    assert check_command("sglang", shlex.split(line), SGLANG) == []


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("python -m sglang.launch_server --model-path m --kv-cache-dtype fp8", "fp8"),
        ("python -m sglang.launch_server --model-path m --mem-fraction-static 0", "fraction"),
        ("python -m sglang.launch_server --model-path m --cuda-graph-max-bs 16", "--cuda-graph-max-bs-decode"),
        ("python -m sglang.launch_server --model-path m --disable-cuda-graph", "deprecated"),
        ("python -m sglang.launch_server --model-path m --gpu-memory-utilization 0.9", "unknown flag"),
        ("python -m sglang.launch_server --model-path m --context-length 32k", "integer"),
        ("python -m sglang.serve --model-path m", "expected"),
    ],
)
def test_bad_sglang_commands(line, fragment):
    problems = check_command("sglang", shlex.split(line), SGLANG)
    assert problems and any(fragment in p for p in problems), problems


# --- release-aware check ---------------------------------------------------------------------

REMOVED = parse_removed_flags((SURFACES / "removed-flags.txt").read_text(encoding="utf-8"))
ADDED = parse_added_flags((SURFACES / "added-flags.txt").read_text(encoding="utf-8"))


def test_release_keys_order_builds_and_versions():
    assert release_key("b10867") < release_key("b10878") < release_key("b11434")
    assert release_key("v0.9.0") < release_key("0.9.0.1") < release_key("0.9.1") < release_key("v0.10.0")
    with pytest.raises(ValueError):
        release_key("latest")


def test_a_flag_removed_later_is_valid_for_an_older_release():
    line = shlex.split("llama-server -m m.gguf --no-mmap -dio --mlock -c 4096")
    assert check_command_at("llamacpp", line, LLAMA, "b10573", REMOVED) == []
    assert check_command_at("vllm", shlex.split("vllm serve m --swap-space 4"), VLLM, "0.17.1", REMOVED) == []


def test_a_flag_removed_by_the_release_names_the_release_and_the_replacement():
    problems = check_command_at("llamacpp", shlex.split("llama-server -m m.gguf --no-mmap -c 4096"), LLAMA, "b10878", REMOVED)
    assert problems == ["--no-mmap was removed in b10878 (last in b10867); use --load-mode none"]
    problems = check_command_at("vllm", shlex.split("vllm serve m --swap-space 4"), VLLM, "v0.33.0", REMOVED)
    assert problems == ["--swap-space was removed in v0.18.0 (last in v0.17.1)"]


def test_a_release_between_the_last_seen_and_the_first_without_is_flagged_as_unsure():
    problems = check_command_at("llamacpp", shlex.split("llama-server -m m.gguf -dio"), LLAMA, "b10870", REMOVED)
    assert problems == ["-dio may not exist in b10870: removed between b10867 and b10878; use --load-mode dio"]


def test_unknown_flags_stay_unknown_at_any_release():
    assert check_command_at("llamacpp", ["llama-server", "--bogus"], LLAMA, "b10573", REMOVED) == ["unknown flag --bogus for llama-server"]


def test_a_flag_added_after_the_release_is_refused():
    line = shlex.split("llama-server -m m.gguf -c 8192 --kv-unified-per-slot 4096")
    assert check_command_at("llamacpp", line, LLAMA, "b11434", REMOVED, ADDED) == []
    assert check_command_at("llamacpp", line, LLAMA, "b10644", REMOVED, ADDED) == [
        "--kv-unified-per-slot is not in b10644: first seen in b10662 (not in b10644)"
    ]
    assert check_command_at("llamacpp", line, LLAMA, "b10650", REMOVED, ADDED) == [
        "--kv-unified-per-slot may not exist in b10650: added between b10644 and b10662"
    ]


def test_added_flags_are_in_the_newest_surface_and_the_flags_kvtriage_emits_are_old():
    for (engine, flag), entry in ADDED.items():
        assert engine == "llamacpp" and flag in LLAMA, flag
        assert release_key(entry.last_without) < release_key(entry.first_seen), flag
    # every llama-server flag the checker knows values for exists at b10573, the build the pages name
    known = set(LLAMA_SERVER_SHORT.values())
    assert not {flag for flag in known if ("llamacpp", flag) in ADDED and release_key(ADDED[("llamacpp", flag)].first_seen) > release_key("b10573")}
