"""llama.cpp error pages get a llama-server command of their own (generator/launch/commands.py
_llamacpp_more_options), and each page keeps only the blocks its error's record and direction allow."""

from __future__ import annotations

import pytest

from generator.engine.pairs import compute_pair
from generator.launch.commands import dataset_surfaces, llamacpp_blocks, verify_commands
from generator.load import load_dataset
from generator.plan.advice import offered_sections

from ..conftest import REPO


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(REPO)


def _pair(dataset, gpu: str, model: str, variant: str):
    m = dataset.models[model]
    v = next(x for x in m.variants if x.id == variant)
    numbers = compute_pair(dataset.gpus[gpu], m, v)
    return m, v, numbers.llamacpp


def _section(blocks):
    return [{"engine": "llamacpp", "blocks": blocks}]


def test_a_context_that_fits_gets_one_slot_and_a_q8_cache_at_the_same_context(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-3090", "llama-3.1-8b-instruct", "q4-k-m")
    assert numbers.fits and 0 < numbers.kv_bytes_q8_0 < numbers.kv_bytes
    blocks = llamacpp_blocks(model, variant, numbers)
    assert verify_commands([("/x/", blocks)], dataset_surfaces(dataset)) == []
    slots = [b for b in blocks if b.lever == "fewer-slots"]
    assert [b.argv[3:] for b in slots] == [("-c", str(numbers.max_ctx_f16), "-np", "1")]
    same = [b for b in blocks if b.lever == "quantized-kv-same-context"]
    assert same and same[0].argv[3:] == ("-c", str(numbers.ctx_size), "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")


def test_each_error_keeps_the_blocks_that_answer_it(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-3090", "llama-3.1-8b-instruct", "q4-k-m")
    blocks = llamacpp_blocks(model, variant, numbers)
    exceeded = offered_sections(dataset.errors["llamacpp-context-exceeded"], _section(blocks))
    assert {b.lever for b in exceeded[0]["blocks"]} == {"fewer-slots"}  # a q8_0 cache at the same -c adds no token
    compute = offered_sections(dataset.errors["llamacpp-compute-buffer-failed"], _section(blocks))
    assert {b.lever for b in compute[0]["blocks"]} == {"quantized-kv-same-context", "smaller-ubatch"}


def test_the_compute_buffer_page_offers_a_smaller_ubatch_with_what_it_buys(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-4090", "qwen2.5-coder-14b-instruct", "q4-k-m")
    assert numbers.fits and numbers.small_ubatch == 128 < numbers.ubatch_size == 512
    # Every term of the estimated compute buffer is linear in min(n_ctx, n_ubatch): a quarter of the micro-batch, a quarter of the buffer.
    assert numbers.compute_buffer_bytes_small_ubatch * 4 == numbers.compute_buffer_bytes
    assert numbers.total_bytes - numbers.total_bytes_small_ubatch == numbers.compute_buffer_bytes - numbers.compute_buffer_bytes_small_ubatch
    kept = offered_sections(dataset.errors["llamacpp-compute-buffer-failed"], _section(llamacpp_blocks(model, variant, numbers)))
    block = next(b for b in kept[0]["blocks"] if b.lever == "smaller-ubatch")
    assert block.argv[3:] == ("-c", str(numbers.ctx_size), "-np", "1", "-ub", "128")
    assert "317.00 MiB to 79.25 MiB" in block.why
    assert verify_commands([("/x/", [block])], dataset_surfaces(dataset)) == []


@pytest.mark.parametrize("error_id, lever, flags", [
    ("llamacpp-mla-kv-type-mismatch", "matching-kv-types", ("-ctk", "q8_0", "-ctv", "q8_0")),
    ("llamacpp-quantized-v-needs-flash-attn", "enable-flash-attn", ("-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")),
    ("llamacpp-removed-flag", "drop-removed-flag", ("--load-mode", "none")),
])
def test_the_setting_pages_get_a_llama_server_command_of_their_own(dataset, error_id: str, lever: str, flags: tuple) -> None:
    error = dataset.errors[error_id]
    ex = error.example
    model, variant, numbers = _pair(dataset, ex.gpu, ex.model, ex.variant)
    kept = offered_sections(error, _section(llamacpp_blocks(model, variant, numbers)))
    assert [b.lever for b in kept[0]["blocks"]] == [lever]
    block = kept[0]["blocks"][0]
    assert block.argv[-len(flags):] == flags
    assert verify_commands([("/x/", [block])], dataset_surfaces(dataset)) == []


def test_one_command_line_shows_once_when_two_levers_are_offered(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-3090", "llama-3.1-8b-instruct", "q4-k-m")
    blocks = llamacpp_blocks(model, variant, numbers)
    assert len({b.text for b in blocks}) < len(blocks)  # clamp-context and fewer-slots: the same `-c N -np 1`
    # On an Ollama page llama.cpp is another engine, where every lever the direction allows is offered.
    kept = offered_sections(dataset.errors["ollama-partial-offload"], [{"engine": "ollama", "blocks": []}, *_section(blocks)])
    texts = [b.text for s in kept for b in s["blocks"]]
    assert len(texts) == len(set(texts))


def test_weights_that_leave_no_layer_beside_the_full_cache_offload_at_a_short_context(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-a4000", "llama-4-scout-17b-16e-instruct", "q4-k-m")
    assert numbers.gpu_layers_that_fit == 0 and numbers.offload_ctx == 4096 and numbers.offload_gpu_layers > 0
    blocks = offered_sections(dataset.errors["llamacpp-model-load-failed"], _section(llamacpp_blocks(model, variant, numbers)))
    argvs = [b.argv[3:] for b in blocks[0]["blocks"]]
    assert argvs == [("-c", "4096", "-np", "1", "-ngl", str(numbers.offload_gpu_layers))]


def test_weights_with_no_layer_that_fits_load_into_system_ram(dataset) -> None:
    model, variant, numbers = _pair(dataset, "rtx-a4000", "kimi-k2.5", "q3-k-s")
    assert numbers.gpu_layers_that_fit == 0 and numbers.offload_gpu_layers == 0 and numbers.offload_ctx == 4096
    blocks = offered_sections(dataset.errors["llamacpp-model-load-failed"], _section(llamacpp_blocks(model, variant, numbers)))
    assert [b.argv[3:] for b in blocks[0]["blocks"]] == [("-c", "4096", "-np", "1", "-ngl", "0")]
