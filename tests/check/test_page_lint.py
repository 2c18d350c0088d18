"""The page lint (generator/check/page_lint.py): each rule has an invalid fixture, `stage: lint` in
tests/fixtures/invalid/<case>/expect.yaml, that loads cleanly and fails `kvtriage check`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.build.pipeline import build_site
from generator.errors import RenderError
from generator.plan.advice import DIRECTIONS, LEVER_EFFECTS, QUANTITIES, moves_right
from generator.schema import Lever, Quantity, Scenario

from ..conftest import TESTS, copy_site
from ..test_load import apply_case

INVALID = TESTS / "fixtures" / "invalid"
CASES = sorted(p.name for p in INVALID.iterdir() if p.is_dir() and yaml.safe_load((p / "expect.yaml").read_text()).get("stage") == "lint")


def test_there_is_a_fixture_per_rule() -> None:
    assert len(CASES) >= 8, CASES


@pytest.mark.parametrize("case", CASES)
def test_lint_case_reports_file_line_and_message(case: str, tmp_path: Path) -> None:
    root = copy_site(tmp_path / "root")
    expect = apply_case(case, root)
    with pytest.raises(RenderError) as raised:
        build_site(root, today="2026-11-29")
    lines = [issue.format() for issue in raised.value.issues]
    for wanted in expect["errors"]:
        assert any(line.startswith(wanted["at"] + ":") for line in lines if wanted["message"] in line), (
            f"expected {wanted['at']}: ...{wanted['message']}... in:\n" + "\n".join(lines)
        )
    if "count" in expect:
        assert len(lines) == expect["count"], "\n".join(lines)


def test_the_fixture_site_passes_the_lint(site_root: Path) -> None:
    build_site(site_root, today="2026-11-29")


def test_every_scenario_has_a_direction_and_every_lever_its_effects() -> None:
    assert set(DIRECTIONS) == set(Scenario.__args__)
    assert set(LEVER_EFFECTS) == set(Lever.__args__)
    assert set(QUANTITIES) == set(Quantity.__args__)
    for direction in DIRECTIONS.values():
        assert direction.too_big in QUANTITIES and direction.too_small in QUANTITIES


@pytest.mark.parametrize("scenario, right, wrong", [
    ("vllm-startup-free-memory", {"lower-utilization", "free-gpu-memory", "bigger-gpu"}, {"raise-utilization", "smaller-quant", "fp8-kv"}),
    ("vllm-kv-too-small", {"clamp-context", "fp8-kv", "raise-utilization", "enforce-eager"}, {"lower-utilization"}),
    ("vllm-sampler-warmup-oom", {"fewer-seqs", "lower-utilization"}, {"raise-utilization", "smaller-quant"}),
    ("ollama-system-memory", {"clamp-context", "quantized-kv", "smaller-quant"}, {"kv-on-cpu", "fewer-gpu-layers"}),
    ("llamacpp-kv-alloc", {"kv-on-cpu", "clamp-context", "fewer-gpu-layers"}, {"raise-utilization"}),
    ("ollama-partial-offload", {"clamp-context", "quantized-kv", "fewer-slots", "smaller-quant", "bigger-gpu", "tensor-parallel"},
     {"fewer-gpu-layers", "kv-on-cpu", "cpu-offload-weights"}),
])
def test_levers_move_the_failing_quantity_the_right_way(scenario: str, right: set[str], wrong: set[str]) -> None:
    direction = DIRECTIONS[scenario]
    assert all(moves_right(direction, lever) for lever in right)
    assert not any(moves_right(direction, lever) for lever in wrong)


def _view(block, numbers, error):
    return {"error": error, "numbers": numbers, "levers": [],
            "commands": [{"engine": block.engine, "other_build": False, "numbers": numbers, "blocks": [block]}]}


def _coder_on_4090(site_root: Path, variant_id: str):
    """The fixture site's dataset, and its RTX 4090 / Qwen2.5-Coder-32B-Instruct pair at one variant: numbers, model, variant."""
    from generator.engine.pairs import compute_results
    from generator.load import load_dataset

    dataset = load_dataset(site_root)
    numbers = compute_results(dataset)[("rtx-4090", "qwen2.5-coder-32b-instruct", variant_id)]
    model = dataset.models["qwen2.5-coder-32b-instruct"]
    return dataset, numbers, model, next(v for v in model.variants if v.id == variant_id)


def _vllm_block(model, variant, numbers, lever: str):
    """The vLLM command block of one lever on the pair's page."""
    from generator.plan.views import command_sections

    return next(b for s in command_sections(model, variant, [("vllm", variant, numbers)]) for b in s["blocks"] if b.lever == lever)


def test_a_command_number_the_engine_did_not_compute_is_refused(site_root: Path) -> None:
    """Commands are built from the engine's numbers; a changed number (or builder) fails the lint."""
    from dataclasses import replace

    from generator.check.page_lint import advice_problems

    dataset, numbers, model, variant = _coder_on_4090(site_root, "awq")
    error = dataset.errors["vllm-max-model-len-error"]
    block = _vllm_block(model, variant, numbers, "clamp-context")
    assert advice_problems("/x/", _view(block, numbers, error)) == []
    length = int(block.argv[block.argv.index("--max-model-len") + 1])
    bad = replace(block, argv=tuple(str(length + 16) if a == str(length) else a for a in block.argv))
    assert any("not an engine outcome" in i.message for i in advice_problems("/x/", _view(bad, numbers, error)))
    wrong_way = replace(block, lever="lower-utilization")
    assert any("moves the wrong way" in i.message for i in advice_problems("/x/", _view(wrong_way, numbers, error)))


def test_a_page_with_commands_only_for_other_engines_is_refused(site_root: Path) -> None:
    """A reader who pasted an Ollama error gets Ollama commands; another engine's section is an alternative, never the only advice."""
    from generator.check.page_lint import advice_problems
    from generator.plan.advice import offered_sections
    from generator.plan.views import command_sections

    dataset, numbers, model, variant = _coder_on_4090(site_root, "q4-k-m")
    error = dataset.errors["ollama-partial-offload"]
    llama_only = command_sections(model, variant, [("llamacpp", variant, numbers)])
    assert llama_only and offered_sections(error, llama_only) == []
    view = {"error": error, "numbers": numbers, "levers": [], "commands": llama_only}
    assert any("none for ollama" in i.message for i in advice_problems("/x/", view))


def test_a_utilization_command_must_move_below_what_failed_and_fit_what_is_free(site_root: Path) -> None:
    from dataclasses import replace

    from generator.check.page_lint import _number_problems
    from generator.engine.pairs import compute_results
    from generator.launch.commands import CommandBlock
    from generator.load import load_dataset
    from generator.plan.advice import DIRECTIONS

    numbers = compute_results(load_dataset(site_root))[("rtx-4090", "qwen2.5-coder-32b-instruct", "awq")].vllm
    flags = ("--gpu-memory-utilization", f"{numbers.utilization + 0.05:.2f}")
    v = replace(numbers, levers=(*numbers.levers, replace(numbers.levers[0], lever="lower-utilization", flags=flags)),
                free_bytes=round(numbers.total_memory_bytes * numbers.utilization) - 1)
    block = CommandBlock("vllm", "t", "w", "x", argv=("vllm", "serve", "m", *flags), lever="lower-utilization")
    messages = [i.message for i in _number_problems("/x/", "t", block, "lower-utilization", "vllm", v, DIRECTIONS["vllm-startup-free-memory"])]
    assert any("not below the" in m for m in messages), messages
    assert any("requests more than the" in m for m in messages), messages


def test_a_micro_batch_the_engine_did_not_price_is_refused(site_root: Path) -> None:
    """A -ub on a page is the engine's small_ubatch, and a smaller-ubatch block lowers it."""
    from dataclasses import replace

    from generator.check.page_lint import _llamacpp_problems
    from generator.engine.pairs import compute_results
    from generator.load import load_dataset

    numbers = compute_results(load_dataset(site_root))[("rtx-4090", "qwen2.5-coder-32b-instruct", "q4-k-m")].llamacpp
    numbers = replace(numbers, small_ubatch=128)
    argv = ("llama-server", "-m", "x.gguf", "-c", str(numbers.ctx_size), "-np", "1", "-ub")
    assert _llamacpp_problems((*argv, "128"), "smaller-ubatch", numbers) == []
    assert any("differs from the engine's 128" in m for m in _llamacpp_problems((*argv, "256"), "smaller-ubatch", numbers))
    same = replace(numbers, small_ubatch=numbers.ubatch_size)
    assert any("not below the 512 that failed" in m for m in _llamacpp_problems((*argv, "512"), "smaller-ubatch", same))


@pytest.mark.parametrize("text", ["Notes in GENERATOR/pairs.py", "a \u017feed case", "the f\u0131le id", "the f\u0130le id",
                                  "\u212aeep: found by search", "nothing internal here", "gener\u00e4tor/ is not it"])
def test_the_quick_scan_for_internal_notes_misses_nothing_the_pattern_finds(text: str) -> None:
    from generator.check.page_lint import _FORBIDDEN, text_problems

    assert bool(text_problems("p/index.html", text)) == bool(_FORBIDDEN.search(text))


def test_a_split_over_two_gpus_is_refused_on_a_unified_memory_module(site_root: Path) -> None:
    """A Jetson or a DGX Spark is the only GPU of its host: a `--tensor-parallel-size 2` block or lever row
    on its page is a command that cannot start. The same block on a discrete card passes."""
    from generator.check.page_lint import advice_problems

    dataset, numbers, model, variant = _coder_on_4090(site_root, "awq")
    error = dataset.errors["vllm-max-model-len-error"]
    block = _vllm_block(model, variant, numbers, "tensor-parallel")
    card = dataset.gpus["rtx-4090"]
    module = card.model_copy(update={"name": "NVIDIA Jetson AGX Orin 64GB"})
    levers = [o for o in numbers.vllm.levers if o.lever == "tensor-parallel"]
    assert advice_problems("/x/", {**_view(block, numbers, error), "gpu": card, "levers": levers}) == []
    messages = [i.message for i in advice_problems("/x/", {**_view(block, numbers, error), "gpu": module, "levers": levers})]
    assert any("splits the model over 2 GPUs" in m for m in messages), messages
    assert any("lever row on 2 GPUs" in m for m in messages), messages


def test_the_partial_offload_page_does_not_offer_the_partial_offload_it_is_about(site_root: Path) -> None:
    """Ollama is slow because layers sit in system RAM; llama-server's `-ngl N` (fewer layers on the GPU)
    is that same split, so the page's llama.cpp alternative keeps only what puts the whole model on the GPU."""
    from generator.plan.advice import offered_sections
    from generator.plan.views import command_sections

    dataset, numbers, model, variant = _coder_on_4090(site_root, "q4-k-m")
    sections = command_sections(model, variant, [("ollama", variant, numbers), ("llamacpp", variant, numbers)])
    assert any(b.lever == "fewer-gpu-layers" for s in sections for b in s["blocks"])
    offered = offered_sections(dataset.errors["ollama-partial-offload"], sections)
    kept = [b for s in offered for b in s["blocks"]]
    assert any(b.engine == "llamacpp" for b in kept) and any(b.engine == "ollama" for b in kept)
    assert not any("-ngl" in b.argv for b in kept), [b.title for b in kept]


@pytest.mark.parametrize("text, twice", [
    ("the logs print them.; Activation peak", True), ("the pool holds.. How close", True), ("holds (a note)..\nNext", True),
    ("allocating ... MiB: cudaMalloc failed", False), ("it waits... then", False), ("a list; of items. Next", False),
    ("see ../models/ and v0.5..v0.6", False),
])
def test_a_sentence_that_ends_twice_is_refused(text: str, twice: bool) -> None:
    """Sentences that end in a full stop, joined with '; ' or followed by another stop, read '.;' and '..'."""
    from generator.check.page_lint import rendered_problems, text_problems
    from generator.render.templates import RenderedFile

    assert any("ends twice" in i.message for i in text_problems("p/index.md", text)) == twice
    assert any("ends twice" in i.message for i in rendered_problems([RenderedFile("p/index.md", text.encode())])) == twice


def test_a_page_shows_its_own_error_as_its_signature(site_root: Path) -> None:
    """The engine prints the failure its scenario models (here llama.cpp's CUDA allocation of the KV
    cache). A record that shares the scenario but fails otherwise (Metal, Vulkan, a K/V type check)
    shows its own signature instead, and the lint refuses a page whose signature its pattern misses."""
    from generator.check.page_lint import advice_problems
    from generator.engine.pairs import compute_results
    from generator.load import load_dataset
    from generator.plan.views import error_text

    dataset = load_dataset(site_root)
    key = ("rtx-4090", "qwen2.5-coder-32b-instruct", "q4-k-m")
    numbers = compute_results(dataset)[key]
    records = (dataset.gpus[key[0]], dataset.models[key[1]], next(v for v in dataset.models[key[1]].variants if v.id == key[2]))
    cuda = dataset.errors["llamacpp-kv-cache-alloc-failed"]
    assert error_text(cuda, records, numbers) == numbers.llamacpp.error and "cudaMalloc failed" in numbers.llamacpp.error
    metal = cuda.model_copy(update={"id": "llamacpp-metal-oom", "pattern": r"error: failed to allocate buffer, size = *[\d.]+ MiB",
                                    "signature": "ggml_metal_graph_compute: error: failed to allocate buffer, size = 512.00 MiB"})
    assert error_text(metal, records, numbers) == metal.signature
    view = {"error": metal, "numbers": numbers, "levers": [], "commands": []}
    assert advice_problems("/x/", {**view, "error_text": metal.signature}) == []
    messages = [i.message for i in advice_problems("/x/", {**view, "error_text": numbers.llamacpp.error})]
    assert any("shows another error as its signature" in m for m in messages), messages


def test_a_signature_slot_the_pair_cannot_fill_still_reads_as_its_own_error() -> None:
    """llama.cpp's MLA K/V message names the two types; a page without them shows <type_k>, which a
    reader's paste carries as a value."""
    from types import SimpleNamespace

    from generator.plan.views import shows_own_error

    error = SimpleNamespace(pattern=r"does not support different K \([a-z0-9_]+\) and V \([a-z0-9_]+\) cache types")
    assert shows_own_error(error, "llama_init_from_model: model does not support different K (<type_k>) and V (<type_v>) cache types")
    assert not shows_own_error(error, "llama_model_load: error loading model: unable to allocate CUDA0 buffer")
