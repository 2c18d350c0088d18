"""Command blocks: built from the engine's levers, and every flag, variable and value exists in the real CLIs."""

from __future__ import annotations

import html
import re
import shlex

import pytest

from generator.build.pipeline import build_site
from generator.engine.pairs import compute_pair
from generator.launch.commands import CommandBlock, command_problems, parse_surfaces, verify_commands
from generator.launch.surface import check_command, parse_llama_server_flags, parse_ollama_env, parse_sglang_args, parse_vllm_flags
from generator.load import load_dataset
from generator.schema import ModelVariant

from ..conftest import FIXED_TODAY, FIXTURE_SITE, REPO

SURFACES = {
    "vllm": parse_vllm_flags((REPO / "data/surfaces/vllm-serve-flags.txt").read_text()),
    "llamacpp": parse_llama_server_flags((REPO / "data/surfaces/llama-server-flags.txt").read_text()),
    "ollama": parse_ollama_env((REPO / "data/surfaces/ollama-env.txt").read_text()),
    "sglang": parse_sglang_args((REPO / "data/surfaces/sglang-server-args.txt").read_text()),
}
CODE = re.compile(r'<code class="language-bash">(.*?)</code>', re.S)


def extract_invocations(page_html: str) -> list[tuple[str, list[str] | dict[str, str]]]:
    """Every engine invocation or server setting in a page's bash blocks, as (engine, argv or env)."""
    found: list[tuple[str, list[str] | dict[str, str]]] = []
    for block in CODE.findall(page_html):
        text = html.unescape(block).replace("\\\n", " ")
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("Environment="):
                name, value = line.removeprefix("Environment=").strip('"').split("=", 1)
                found.append(("ollama", {name: value}))
                continue
            tokens = shlex.split(line)
            if tokens[:2] == ["launchctl", "setenv"]:
                found.append(("ollama", {tokens[2]: tokens[3]}))
            elif tokens[:3] == ["python", "-m", "sglang.launch_server"]:
                found.append(("sglang", tokens))
            elif tokens[:2] == ["vllm", "serve"]:
                found.append(("vllm", tokens[3:]))
            elif tokens and tokens[0] == "llama-server":
                found.append(("llamacpp", tokens))
            elif "ollama" in tokens and any("=" in t for t in tokens[: tokens.index("ollama")]):
                found.append(("ollama", tokens))
    return found


def _problems(pages: dict[str, str]) -> tuple[int, list[str]]:
    count, problems = 0, []
    for url, text in pages.items():
        for engine, argv in extract_invocations(text):
            count += 1
            problems += [f"{url}: {p}" for p in check_command(engine, argv, SURFACES[engine])]
    return count, problems


def test_fixture_site_commands_are_all_known() -> None:
    build = build_site(FIXTURE_SITE, today=FIXED_TODAY)
    pages = {f.path: f.content.decode() for f in build.files if f.path.endswith(".html")}
    count, problems = _problems(pages)
    assert count >= 5
    assert problems == []


def test_gguf_pair_blocks_for_llamacpp_and_ollama_are_known() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    model = dataset.models["qwen2.5-coder-32b-instruct"]
    variant = ModelVariant(id="q4-k-m", name="Q4_K_M", format="gguf", gguf_file="Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf",
                           gguf_type="Q4_K_M", ollama_tag="qwen2.5-coder:32b", source="test fixture variant")
    numbers = compute_pair(dataset.gpus["rtx-4090"], model, variant)
    from generator.launch.commands import llamacpp_blocks, ollama_blocks

    blocks = llamacpp_blocks(model, variant, numbers.llamacpp) + ollama_blocks(model, variant, numbers.ollama)
    assert {b.engine for b in blocks} == {"llamacpp", "ollama"}
    assert verify_commands([("/x/", blocks)], SURFACES) == []
    # Numbers in commands come from the engine, and the server settings sit on `ollama serve`.
    assert any(f"-c {numbers.llamacpp.max_ctx_q8_0}" in b.text for b in blocks)
    serve = [b for b in blocks if b.title.startswith("Set it on the server")][0]
    assert "ollama serve" in serve.text.splitlines()[0] and "export" not in serve.text


def test_every_llamacpp_lever_a_block_applies_is_one_the_page_lint_knows() -> None:
    # The lint's first-fix rule reads LLAMACPP_COMMAND_LEVERS: a lever missing there would go unchecked.
    from generator.launch.commands import LLAMACPP_COMMAND_LEVERS, llamacpp_blocks

    dataset = load_dataset(REPO)
    applied = set()
    for pair in dataset.pairs:
        model = dataset.models[pair.model]
        for variant in model.variants:
            if variant.format != "gguf":
                continue
            numbers = compute_pair(dataset.gpus[pair.gpu], model, variant)
            applied |= {block.lever for block in llamacpp_blocks(model, variant, numbers.llamacpp)}
    assert applied and applied <= LLAMACPP_COMMAND_LEVERS


def test_shipped_site_commands_are_all_known() -> None:
    """Every command block of every page the shipped catalog builds."""
    build = build_site(REPO, today=FIXED_TODAY)
    pages = {f.path: f.content.decode() for f in build.files if f.path.endswith("index.html") and f.path.startswith("oom/")}
    count, problems = _problems(pages)
    assert count > 100
    assert problems == [], "\n".join(problems[:20])


@pytest.mark.parametrize(
    "block, fragment",
    [
        (CommandBlock("vllm", "t", "w", "", argv=("vllm", "serve", "m", "--swap-space", "4")), "--swap-space"),
        (CommandBlock("vllm", "t", "w", "", argv=("vllm", "serve", "m", "--kv-cache-dtype", "fp9")), "fp9"),
        (CommandBlock("llamacpp", "t", "w", "", argv=("llama-server", "-m", "x.gguf", "-ctk", "q3_0")), "q3_0"),
        (CommandBlock("llamacpp", "t", "w", "", argv=("llama-server", "-m", "x.gguf", "-fa", "maybe")), "maybe"),
        (CommandBlock("ollama", "t", "w", "", argv=("ollama", "serve"), env=(("OLLAMA_NEW_ENGINE", "1"),)), "OLLAMA_NEW_ENGINE"),
        (CommandBlock("sglang", "t", "w", "", argv=("python", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", "fp8")), "fp8"),
        (CommandBlock("sglang", "t", "w", "", argv=("python", "-m", "sglang.launch_server", "--model-path", "m", "--cuda-graph-max-bs", "8")), "--cuda-graph-max-bs"),
        (CommandBlock("sglang", "t", "w", "", argv=("python", "-m", "sglang.launch_server", "--model-path", "m", "--max-model-len", "8192")), "--max-model-len"),
        (CommandBlock("sglang", "t", "w", "", argv=("python", "-m", "sglang.launch_server", "--model-path", "m", "--mem-fraction-static", "1.2")), "1.2"),
    ],
)
def test_unknown_flags_and_values_are_caught(block: CommandBlock, fragment: str) -> None:
    problems = command_problems(block, SURFACES)
    assert problems and any(fragment in p for p in problems)
    issues = verify_commands([("/oom/x/", [block])], SURFACES)
    assert issues[0].path == "site/oom/x/"


def test_surfaces_parse_from_dataset() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    assert parse_surfaces(dataset.surfaces)["vllm"] == SURFACES["vllm"]


def test_sglang_blocks_follow_vllm_on_vllm_pair_pages() -> None:
    """SGLang's section comes right after vLLM's, its numbers are the engine's, and every flag is on the v0.5.23 surface."""
    build = build_site(FIXTURE_SITE, today=FIXED_TODAY)
    page = next(f.content.decode() for f in build.files if f.path == "oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/index.html")
    assert page.index('id="cmd-vllm"') < page.index('id="cmd-sglang"') < page.index('id="cmd-llamacpp"')
    sglang = [argv for engine, argv in extract_invocations(page) if engine == "sglang"]
    assert sglang and all("--tp-size" in argv and "--mem-fraction-static" in argv and "--context-length" in argv for argv in sglang)
    assert "Estimates: SGLang sizes its KV pool" in page

    dataset = load_dataset(FIXTURE_SITE)
    model = dataset.models["qwen2.5-coder-32b-instruct"]
    variant = next(v for v in model.variants if v.id == "awq")
    numbers = compute_pair(dataset.gpus["rtx-4090"], model, variant).sglang
    assert numbers is not None and numbers.error and numbers.error.startswith("Loaded weights leave no GPU memory")
    from generator.launch.commands import sglang_blocks

    blocks = sglang_blocks(model, variant, numbers)
    assert verify_commands([("/x/", blocks)], SURFACES) == []
    for option, block in zip(numbers.options, blocks):
        assert f"--context-length {option.context_length}" in block.text
        assert option.context_length == min(option.tokens, numbers.config_context_len)


def test_sglang_surface_header_names_the_modelled_release() -> None:
    from generator.engine import sglang
    from generator.launch.surface import surface_release

    text = (REPO / "data/surfaces/sglang-server-args.txt").read_text()
    engines = {e.id: e for e in load_dataset(REPO).engines.values()}
    assert surface_release(text) == sglang.RELEASE == engines["sglang"].version


@pytest.mark.parametrize("f16, q8, name", [(256, 512, "qwen2.5-coder-256"), (15616, 29440, "qwen2.5-coder-15k"), (4096, 4096, "qwen2.5-coder-4k")])
def test_the_modelfile_names_its_model_by_the_context_it_sets(f16: int, q8: int, name: str) -> None:
    """The model `ollama create` makes is named by its num_ctx: a context under 1,024 tokens is not "0k"."""
    from dataclasses import replace

    from generator.launch.commands import ollama_blocks

    dataset = load_dataset(FIXTURE_SITE)
    model = dataset.models["qwen2.5-coder-32b-instruct"]
    variant = ModelVariant(id="q4-k-m", name="Q4_K_M", format="gguf", gguf_file="Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf",
                           gguf_type="Q4_K_M", ollama_tag="qwen2.5-coder:32b", source="test fixture variant")
    numbers = replace(compute_pair(dataset.gpus["rtx-4090"], model, variant).ollama, max_num_ctx_f16=f16, max_num_ctx_q8_0=q8)
    modelfile = next(b for b in ollama_blocks(model, variant, numbers) if b.argv[:2] == ("ollama", "create"))
    assert f"PARAMETER num_ctx {f16}\n" in modelfile.text
    assert f"ollama create {name} -f Modelfile" in modelfile.text and modelfile.text.endswith(f"ollama run {name}")


def test_a_fix_name_names_only_flags_of_the_engine_whose_page_lists_it() -> None:
    """A fix is titled by its lever's name on every engine's page: a flag in that name (vLLM's
    --max-num-seqs on SGLang's pages) must be one the page's engine registers."""
    from generator.plan.views import LEVER_NAMES

    dataset = load_dataset(REPO)
    wrong = set()
    for error in dataset.errors.values():
        for fix in error.fixes:
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", LEVER_NAMES[fix.lever]):
                if flag not in SURFACES[error.engine]:
                    wrong.add((error.id, fix.lever, flag))
    assert not wrong, sorted(wrong)


def test_a_fix_note_names_flags_its_engine_registers() -> None:
    """A fix note's flag is one the record's engine registers at the release the pages name, or one a
    note names as an older release's spelling (a flag a later build removed, SGLang's --cuda-graph-max-bs):
    `--tp 2` on SGLang's pages works only as argparse's abbreviation of --tp-size."""
    from generator.launch.surface import parse_removed_flags

    removed = {flag for (engine, flag) in parse_removed_flags((REPO / "data/surfaces/removed-flags.txt").read_text())}
    older = removed | {"--cuda-graph-max-bs"}  # sglang-server-args.txt's header: gone at v0.5.23, named as the older spelling
    wrong = [(error.id, fix.lever, flag) for error in load_dataset(REPO).errors.values() if error.engine in ("vllm", "llamacpp", "sglang")
             for fix in error.fixes for flag in re.findall(r"`(--[a-z][a-z0-9-]*)", fix.note)
             if flag not in SURFACES[error.engine] and flag not in older]
    assert not wrong, wrong
