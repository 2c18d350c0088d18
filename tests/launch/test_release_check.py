"""Command blocks checked at the release the site's pages name (data/engines.yaml), with the flags
later releases removed or added (data/surfaces/removed-flags.txt, added-flags.txt)."""

from __future__ import annotations

import pytest

from generator.launch.commands import CommandBlock, command_problems, dataset_surfaces, parse_surfaces
from generator.load import load_dataset

from ..conftest import REPO


@pytest.fixture(scope="module")
def surfaces():
    return dataset_surfaces(load_dataset(REPO))


def problems(surfaces, engine: str, *argv: str) -> list[str]:
    return command_problems(CommandBlock(engine, "t", "w", " ".join(argv), argv=argv), surfaces)


def test_the_releases_are_the_ones_the_pages_name(surfaces) -> None:
    dataset = load_dataset(REPO)
    assert surfaces.releases == {engine_id: engine.version for engine_id, engine in dataset.engines.items()}
    assert surfaces.removed and surfaces.added


def test_a_flag_removed_after_the_release_is_refused_with_its_replacement(surfaces) -> None:
    assert problems(surfaces, "llamacpp", "llama-server", "-m", "m.gguf", "--no-mmap") == [
        f"--no-mmap still works in {surfaces.releases['llamacpp']} but was removed in b10878; use --load-mode none"]
    assert any("-dio" in p and "--load-mode dio" in p for p in problems(surfaces, "llamacpp", "llama-server", "-m", "m.gguf", "-dio"))


def test_a_flag_added_after_the_release_is_refused(surfaces) -> None:
    found = problems(surfaces, "llamacpp", "llama-server", "-m", "m.gguf", "--kv-unified-per-slot", "2")
    assert found == [f"--kv-unified-per-slot is not in {surfaces.releases['llamacpp']}: first seen in b10662 (not in b10644)"]


def test_flags_of_the_release_pass(surfaces) -> None:
    assert problems(surfaces, "llamacpp", "llama-server", "-m", "m.gguf", "-c", "8192", "-np", "1", "-ctk", "q8_0", "-ctv", "q8_0", "--load-mode", "mmap") == []
    assert problems(surfaces, "vllm", "vllm", "serve", "m", "--max-model-len", "8192", "--kv-cache-memory-bytes", "4G") == []


def test_vllm_ghost_and_removed_flags_are_refused(surfaces) -> None:
    assert any("not a vllm serve flag" in p for p in problems(surfaces, "vllm", "vllm", "serve", "m", "--kv-cache-memory", "4G"))
    assert problems(surfaces, "vllm", "vllm", "serve", "m", "--swap-space", "4") == ["--swap-space was removed in v0.18.0 (last in v0.17.1)"]


def test_without_releases_the_newest_surface_alone_is_used() -> None:
    texts = {"llamacpp": (REPO / "data/surfaces/llama-server-flags.txt").read_text()}
    plain = parse_surfaces(texts)
    assert command_problems(CommandBlock("llamacpp", "t", "w", "x", argv=("llama-server", "--kv-unified-per-slot", "2")), plain) == []
