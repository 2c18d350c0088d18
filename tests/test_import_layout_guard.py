"""import-model refuses config.json keys that lay attention out per layer in a way the model record cannot carry
(MiMo-V2-Flash `hybrid_layer_pattern`, MiniMax-M1 `attn_type_list`), instead of dropping them and overstating KV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import EXIT_CONTENT, EXIT_OK, main
from generator.errors import ContentError
from generator.tools.import_model import hf_config_fields

BASE = {
    "model_type": "llama",
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "hidden_size": 512,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}
# MiMo-V2-Flash: 0 = full attention, 1 = sliding window with swa_num_key_value_heads (vLLM mimo_v2_flash.py).
MIMO = dict(BASE, model_type="mimo_v2_flash", hybrid_layer_pattern=[0, 1, 1, 1], swa_num_key_value_heads=8, sliding_window_size=128)
# MiniMax-M1: 0 = lightning (linear) attention, 1 = full attention (vLLM minimax_text_01.py).
MINIMAX_M1 = dict(BASE, model_type="minimax_m1", attn_type_list=[0, 0, 0, 1])


@pytest.mark.parametrize(("config", "key", "count"), [
    (MIMO, "hybrid_layer_pattern", "3 of 4 layers are sliding-window layers"),
    (MINIMAX_M1, "attn_type_list", "3 of 4 layers are lightning (linear) attention layers"),
    (dict(BASE, decoder_attention_types=[1, 0, 1, 0]), "decoder_attention_types", "2 of 4 layers are lightning"),
    (dict(BASE, hybrid_layer_pattern="0111"), "hybrid_layer_pattern", "it sets sliding-window layers"),
])
def test_a_layout_the_engine_does_not_model_is_refused(config: dict, key: str, count: str) -> None:
    with pytest.raises(ContentError) as caught:
        hf_config_fields(config)
    text = str(caught.value)
    assert text.startswith(f"config.json:1: {key}: {count}")
    assert "the KV cache overstated. Leave this model out of the catalog" in text


def test_a_layout_inside_text_config_is_refused_too() -> None:
    text = {k: v for k, v in MINIMAX_M1.items() if k != "model_type"}
    with pytest.raises(ContentError, match="attn_type_list: 3 of 4 layers"):
        hf_config_fields({"model_type": "minimax_vl", "text_config": text, "vision_config": {}})


def test_all_full_attention_layouts_still_import() -> None:
    # MiniMax-M2 writes attn_type_list with every layer 1 (full attention): the record is exact without it.
    fields, notes = hf_config_fields(dict(BASE, model_type="minimax_m2", attn_type_list=[1, 1, 1, 1]))
    assert "attn_type_list" not in fields and fields["num_key_value_heads"] == 4
    assert "left out attn_type_list: every layer is full attention (1)" in notes
    fields, _ = hf_config_fields(dict(BASE, hybrid_layer_pattern=[0, 0, 0, 0]))
    assert "hybrid_layer_pattern" not in fields
    fields, notes = hf_config_fields(BASE)
    assert fields == BASE and not any("every layer is full attention" in note for note in notes)


def test_import_model_cli_refuses_and_leaves_the_catalog_alone(site_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(MIMO, _name_or_path="XiaomiMiMo/MiMo-V2-Flash")))
    before = (site_root / "data/models.yaml").read_bytes()
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root), "--write"]) == EXIT_CONTENT
    err = capsys.readouterr().err
    assert "hybrid_layer_pattern: 3 of 4 layers are sliding-window layers" in err and "Traceback" not in err
    assert (site_root / "data/models.yaml").read_bytes() == before
    config.write_text(json.dumps(dict(BASE, _name_or_path="acme/Plain-4L")))
    assert main(["import-model", "--hf-config", str(config), "--root", str(site_root)]) == EXIT_OK
