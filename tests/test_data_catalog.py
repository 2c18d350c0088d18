"""The shipped GPU and model catalog: complete, sourced, and right on the facts we can check by hand.

Spot values come from the sources named in data/gpus.yaml and data/models.yaml (their *_source
fields); each literal below says where it was read.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from generator.engine.geometry import FULL, SLIDING, geometry_from_hf_config
from generator.load import Dataset, load_dataset
from generator.schema import Gpu, Model, ModelVariant

from .conftest import REPO

GPU_IDS = (
    "rtx-3060-12gb rtx-3090 rtx-4060-ti-16gb rtx-4070-ti-super rtx-4080 rtx-4090 rtx-5090 rtx-a4000 rtx-a5000 "
    "rtx-a6000 rtx-6000-ada rtx-pro-6000-blackwell l4 l40s a10g t4 v100-16gb v100-32gb a100-40gb a100-80gb "
    "h100-sxm h100-pcie h200 b200 mi300x"
).split()

# Words that mark a fact someone meant to fill in later.
PLACEHOLDERS = ("FILL IN", "TODO", "TBD", "XXX", "???")


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load_dataset(REPO)


@pytest.fixture(scope="module")
def raw_models() -> list[dict[str, Any]]:
    return yaml.safe_load((REPO / "data" / "models.yaml").read_text(encoding="utf-8"))["models"]


@pytest.fixture(scope="module")
def raw_gpus() -> list[dict[str, Any]]:
    return yaml.safe_load((REPO / "data" / "gpus.yaml").read_text(encoding="utf-8"))["gpus"]


def _sourced(text: str | None) -> bool:
    return bool(text and text.strip()) and not any(p in text for p in PLACEHOLDERS)


def _variants(dataset: Dataset) -> list[tuple[Model, ModelVariant]]:
    return [(model, variant) for model in dataset.models.values() for variant in model.variants]


# --------------------------------------------------------------------------- coverage


def test_every_reference_gpu_is_in_the_catalog(dataset: Dataset) -> None:
    assert len(dataset.gpus) >= 25
    assert sorted(GPU_IDS) == sorted(set(GPU_IDS) & set(dataset.gpus))


def test_at_least_forty_models_each_with_two_variants(dataset: Dataset) -> None:
    assert len(dataset.models) >= 40
    thin = {m.id: [v.id for v in m.variants] for m in dataset.models.values() if len(m.variants) < 2}
    assert thin == {}


def test_ids_are_unique_in_the_files(raw_gpus: list[dict], raw_models: list[dict]) -> None:
    # Dataset maps by id, so duplicates are checked on the YAML itself.
    assert [k for k, n in Counter(g["id"] for g in raw_gpus).items() if n > 1] == []
    assert [k for k, n in Counter(m["id"] for m in raw_models).items() if n > 1] == []
    for model in raw_models:
        ids = [v["id"] for v in model["variants"]]
        assert len(ids) == len(set(ids)), model["id"]


def test_popular_models_have_a_vllm_4bit_variant_and_both_ggufs(dataset: Dataset) -> None:
    popular = [
        "llama-3.1-8b-instruct",
        "qwen2.5-7b-instruct",
        "qwen2.5-14b-instruct",
        "qwen2.5-coder-7b-instruct",
        "qwen2.5-coder-32b-instruct",
        "qwen3-8b",
        "qwen3-32b",
        "mistral-7b-instruct-v0.3",
        "gemma-3-27b-it",
        "deepseek-r1-distill-qwen-14b",
        "deepseek-r1-distill-llama-8b",
    ]
    for model_id in popular:
        formats = {v.format for v in dataset.models[model_id].variants}
        ids = {v.id for v in dataset.models[model_id].variants}
        assert formats & {"awq", "gptq"}, model_id
        assert {"bf16", "q4-k-m", "q8-0"} <= ids, model_id


# --------------------------------------------------------------------------- every fact has a source


def test_every_gpu_fact_has_its_source(dataset: Dataset) -> None:
    for gpu in dataset.gpus.values():
        assert _sourced(gpu.source), gpu.id
        assert gpu.cuda_total_bytes is not None or gpu.nvidia_smi_total_mib is not None, gpu.id
        assert _sourced(gpu.memory_source), gpu.id
        if gpu.bandwidth_gb_s is not None:
            assert _sourced(gpu.bandwidth_source), gpu.id
        if gpu.compute_capability is not None:
            assert _sourced(gpu.compute_capability_source), gpu.id


def test_every_model_fact_has_its_source(dataset: Dataset) -> None:
    for model in dataset.models.values():
        assert _sourced(model.config_source), model.id
        if model.total_params is not None or model.active_params is not None:
            assert _sourced(model.params_source), model.id
        if model.long_context is not None:
            assert _sourced(model.long_context.source), model.id


def _source_fields(node: Any, where: str) -> list[tuple[str, str]]:
    """Every `source` / `*_source` string under node, with a path saying where it sits."""
    if isinstance(node, dict):
        found = []
        for key, value in node.items():
            at = f"{where}.{node.get('id', '')}.{key}" if "id" in node else f"{where}.{key}"
            if isinstance(value, str) and (key == "source" or key.endswith("_source")):
                found.append((at, value))
            else:
                found += _source_fields(value, at)
        return found
    if isinstance(node, list):
        return [pair for item in node for pair in _source_fields(item, where)]
    return []


@pytest.mark.parametrize("name", ["gpus.yaml", "models.yaml"])
def test_every_source_names_a_url_a_reader_can_open(name: str) -> None:
    # A source is something a reader can open: an upstream file at a commit, an issue, a model card.
    data = yaml.safe_load((REPO / "data" / name).read_text(encoding="utf-8"))
    sources = _source_fields(data, name)
    assert len(sources) > 100
    assert [where for where, text in sources if "https://" not in text] == []
    assert [where for where, text in sources if "exact-text search" in text or "search does not name" in text] == []


def test_every_variant_has_a_source(dataset: Dataset) -> None:
    unsourced = [(m.id, v.id) for m, v in _variants(dataset) if not _sourced(v.source)]
    assert unsourced == []


# --------------------------------------------------------------------------- invariants


def test_cuda_total_is_below_the_nvidia_smi_total(dataset: Dataset) -> None:
    # nvidia-smi counts memory the driver reserves; cudaDeviceProp.totalGlobalMem does not.
    for gpu in dataset.gpus.values():
        if gpu.cuda_total_bytes is not None and gpu.nvidia_smi_total_mib is not None:
            assert gpu.cuda_total_bytes < gpu.nvidia_smi_total_mib * 2**20, gpu.id


def test_memory_is_close_to_the_marketed_size(dataset: Dataset) -> None:
    # A unit slip (MiB vs bytes, GB vs GiB) would land far outside this band.
    for gpu in dataset.gpus.values():
        total = gpu.cuda_total_bytes if gpu.cuda_total_bytes is not None else gpu.nvidia_smi_total_mib * 2**20
        assert 0.85 <= total / (gpu.marketed_gb * 10**9) <= 1.1, gpu.id


def _cc(gpu: Gpu) -> tuple[int, int]:
    major, minor = gpu.compute_capability.split(".")
    return int(major), int(minor)


def test_fp8_compute_follows_compute_capability(dataset: Dataset) -> None:
    # vLLM FP8 W8A8 needs compute capability 8.9 or newer (reference: vllm_fp8_w8a8_compute).
    for gpu in dataset.gpus.values():
        if gpu.vendor == "nvidia" and gpu.compute_capability is not None:
            assert gpu.fp8_compute == (_cc(gpu) >= (8, 9)), gpu.id


def test_consumer_cards_have_a_buy_query(dataset: Dataset) -> None:
    for gpu_id in ("rtx-3060-12gb", "rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "rtx-6000-ada"):
        assert dataset.gpus[gpu_id].buy_query, gpu_id


def test_gguf_variants_name_their_quantization(dataset: Dataset) -> None:
    # Microsoft's file is "-q4.gguf"; its Q4_K_M type is stated by the sources cited on the variant.
    # Google's gemma-7b.gguf names no type: its card states the weights are float32; gemma-2b.gguf, the
    # 2B's export in the same form, is listed at 9.3 GB, four bytes a parameter.
    unnamed = {("phi-3-mini-4k-instruct", "q4-k-m"), ("gemma-7b", "f32"), ("gemma-2b", "f32")}
    for model, variant in _variants(dataset):
        if variant.format != "gguf":
            continue
        if variant.id in ("q4-k-m", "q8-0"):
            assert variant.gguf_type == {"q4-k-m": "Q4_K_M", "q8-0": "Q8_0"}[variant.id], (model.id, variant.id)
        if (model.id, variant.id) not in unnamed:
            assert variant.gguf_type.lower() in variant.gguf_file.lower(), (model.id, variant.id)


def test_split_ggufs_name_their_first_part(dataset: Dataset) -> None:
    for model, variant in _variants(dataset):
        if variant.gguf_file and "-of-" in variant.gguf_file:
            assert "-00001-of-" in variant.gguf_file, (model.id, variant.id)


def test_checkpoint_bytes_per_parameter_fit_the_format(dataset: Dataset) -> None:
    # Bytes / parameter for a whole checkpoint: BF16 is 2, Q8_0 ~1.06, Q4_K_M ~0.6. A GB/GiB or
    # MB/bytes slip would fall well outside these bands. gpt-oss keeps its MoE experts in MXFP4
    # whatever the GGUF label, so it is left out.
    bands = {"bf16": (1.99, 2.01), "q8-0": (1.0, 1.15), "q4-k-m": (0.53, 0.68)}
    checked = 0
    for model, variant in _variants(dataset):
        if model.config.model_type == "gpt_oss" or model.total_params is None or variant.checkpoint_bytes is None:
            continue
        if variant.id in bands:
            low, high = bands[variant.id]
            assert low <= variant.checkpoint_bytes / model.total_params <= high, (model.id, variant.id)
            checked += 1
    assert checked >= 20


def test_every_config_gives_a_geometry(dataset: Dataset) -> None:
    for model in dataset.models.values():
        geometry = geometry_from_hf_config(model.config.as_config_json())
        assert geometry.num_layers == model.config.num_hidden_layers, model.id


# --------------------------------------------------------------------------- spot checks


def test_rtx_4090_memory_is_the_cuda_total() -> None:
    gpus = load_dataset(REPO).gpus
    # repo thamada/nvidia-smi gls/RTX4090_deviceQuery.py and RTX4090_smi.py @c4c8a463a61e
    assert gpus["rtx-4090"].cuda_total_bytes == 25386352640
    assert gpus["rtx-4090"].nvidia_smi_total_mib == 24564
    # repo thamada/nvidia-smi gls/H100SXMx8_deviceQuery.py: 81106 MBytes
    assert gpus["h100-sxm"].cuda_total_bytes == 85045477376
    # repo thamada/nvidia-smi nvsim/MI300X_x4_deviceQuery.py: 196592 MB (HIP totalGlobalMem)
    assert gpus["mi300x"].cuda_total_bytes == 196592 * 2**20
    assert gpus["mi300x"].fp8_compute is True
    # nvidia-smi only: no CUDA total was found for these
    assert gpus["h200"].cuda_total_bytes is None and gpus["h200"].nvidia_smi_total_mib == 143771


def test_qwen25_coder_32b_ships_32k_with_yarn_only_on_the_card(dataset: Dataset) -> None:
    model = dataset.models["qwen2.5-coder-32b-instruct"]
    assert model.config.max_position_embeddings == 32768
    assert model.config.rope_scaling is None
    assert "rope_scaling" not in model.config.as_config_json()
    assert model.config.use_sliding_window is False
    assert model.long_context is not None
    assert model.long_context.max_model_len == 131072
    assert model.long_context.rope_scaling == {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    # The seed AWQ variant: 3.94+3.98+3.95+3.98+3.48 GB as listed on the official repo
    awq = next(v for v in model.variants if v.id == "awq")
    assert awq.checkpoint_bytes == 19_330_000_000


def test_deepseek_v3_is_mla(dataset: Dataset) -> None:
    config = dataset.models["deepseek-v3"].config
    assert (config.kv_lora_rank, config.qk_rope_head_dim) == (512, 64)
    assert (config.q_lora_rank, config.qk_nope_head_dim, config.v_head_dim) == (1536, 128, 128)
    assert config.num_hidden_layers == 61
    # Official weights are FP8 only: no BF16 variant pretends otherwise.
    assert {v.format for v in dataset.models["deepseek-v3"].variants} >= {"fp8"}
    assert "bf16" not in {v.format for v in dataset.models["deepseek-v3"].variants}


def test_gemma3_27b_has_62_layers_10_global(dataset: Dataset) -> None:
    geometry = geometry_from_hf_config(dataset.models["gemma-3-27b-it"].config.as_config_json())
    assert geometry.num_layers == 62
    assert geometry.count(FULL) == 10
    assert geometry.count(SLIDING) == 52
    assert geometry.sliding_window == 1024
    assert geometry.head_dim == 128  # explicit; 5376 / 32 would be 168


def test_gpt_oss_layer_types_are_written_out(dataset: Dataset) -> None:
    for model_id, layers in (("gpt-oss-20b", 24), ("gpt-oss-120b", 36)):
        config = dataset.models[model_id].config
        assert config.layer_types is not None and len(config.layer_types) == layers
        assert config.layer_types[0] == "sliding_attention" and config.layer_types[1] == "full_attention"
        assert config.layer_types.count("full_attention") == layers // 2
        assert config.torch_dtype is None  # config.json carries none
        assert any(v.format == "mxfp4" and v.hf_repo == f"openai/{model_id}" for v in dataset.models[model_id].variants)


def test_mistral_v03_keeps_its_explicit_null_window(dataset: Dataset) -> None:
    # config.json says "sliding_window": null; MistralConfig would default an absent key to 4096.
    config = dataset.models["mistral-7b-instruct-v0.3"].config
    assert "sliding_window" in config.model_fields_set
    assert config.sliding_window is None


def test_llama31_8b_variants(dataset: Dataset) -> None:
    variants = {v.id: v for v in dataset.models["llama-3.1-8b-instruct"].variants}
    # safetensors index total_size of the 8B Llama 3 / 3.1 checkpoint
    assert variants["bf16"].checkpoint_bytes == 16060522496
    assert dataset.models["llama-3.1-8b-instruct"].total_params == 16060522496 // 2
    # bartowski/Meta-Llama-3.1-8B-Instruct-GGUF @bf5b95e9
    assert variants["q4-k-m"].gguf_file == "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
    assert variants["q4-k-m"].checkpoint_bytes == 4920739232
    assert variants["awq"].hf_repo == "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"


def test_ollama_tags_sit_on_the_matching_quantization(dataset: Dataset) -> None:
    # Ollama's llama3.2:1b is a Q8_0 build and llama3.2:3b a Q4_K_M one (captured `ollama list` output).
    one = {v.id: v for v in dataset.models["llama-3.2-1b-instruct"].variants}
    three = {v.id: v for v in dataset.models["llama-3.2-3b-instruct"].variants}
    assert one["q8-0"].ollama_tag == "llama3.2:1b" and one["q4-k-m"].ollama_tag is None
    assert three["q4-k-m"].ollama_tag == "llama3.2:3b"
    tagged = [v for _, v in _variants(dataset) if v.ollama_tag]
    assert len({v.ollama_tag for v in tagged}) == len(tagged)  # one variant per tag
