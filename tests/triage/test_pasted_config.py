"""A config.json pasted with the error: found in the paste, and costed by `kvtriage triage`."""

from __future__ import annotations

import json

from generator.cli import main
from generator.triage.pasted import config_in_paste

CONFIG = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_hidden_layers": 28, "num_attention_heads": 28,
          "num_key_value_heads": 4, "hidden_size": 3584, "intermediate_size": 18944, "vocab_size": 152064,
          "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "rope_scaling": None}
ERROR = ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache "
         "(23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")


def test_the_config_is_found_between_log_lines() -> None:
    text = "INFO {not json} starting\n" + json.dumps(CONFIG, indent=2) + "\n" + ERROR + "\nbatch={'a': 1}\n"
    assert config_in_paste(text) == CONFIG


def test_json_that_is_not_a_model_config_is_not_taken_for_one() -> None:
    assert config_in_paste('{"object": "error", "message": "out of memory"}') is None
    assert config_in_paste(ERROR) is None


def test_triage_costs_the_pasted_config_and_resolves_the_logged_model(tmp_path, capsys) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text("Initializing an LLM engine with config: model='Qwen/Qwen2.5-7B-Instruct-AWQ', tokenizer='x'\n"
                     + ERROR + "\n" + json.dumps(CONFIG) + "\n", encoding="utf-8")
    assert main(["triage", str(paste), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["catalog_model"] == "qwen2.5-7b-instruct-awq"
    # 28 layers x (K + V) x 4 KV heads x 128 dims x 2 bytes
    assert data["pasted_config"] == {"model_type": "qwen2", "layers": 28, "kv_heads": 4, "kv_bytes_per_token_bf16": 28 * 2 * 4 * 128 * 2}
    assert main(["triage", str(paste)]) == 0
    assert "pasted_config: model_type qwen2" in capsys.readouterr().out
