"""`kvtriage kv`: flags, human output, --json and --input, with a fake catalog lookup."""

from __future__ import annotations

import argparse
import json

from generator.engine.requests import GpuEntry, ModelEntry
from generator.kv.command import EXIT_DOES_NOT_FIT, EXIT_OK, EXIT_USAGE, add_kv_parser, run_kv
from generator.units import GIB

CONFIG = {
    "model_type": "qwen2", "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
    "hidden_size": 5120, "intermediate_size": 27648, "vocab_size": 152064, "max_position_embeddings": 32768,
    "torch_dtype": "float16", "rope_theta": 1000000.0,
}


class FakeCatalog:
    def model(self, model_id):
        return ModelEntry(hf_config=CONFIG, weights_bytes=18 * GIB) if model_id == "qwen-awq" else None

    def gpu(self, gpu_id):
        return {"rtx-4090": GpuEntry(total_bytes=25_386_352_640, name="GeForce RTX 4090")}.get(gpu_id)


def parse(argv):
    parser = argparse.ArgumentParser()
    add_kv_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_human_output_shows_error_and_fixing_commands(capsys):
    code = run_kv(parse(["kv", "vllm", "--model", "qwen-awq", "--gpu", "rtx-4090"]), FakeCatalog())
    out = capsys.readouterr().out
    assert code == EXIT_DOES_NOT_FIT
    assert "ValueError: To serve at least one request with the model's max seq len (32768)" in out
    assert "vllm serve qwen-awq --max-model-len " in out
    assert "vllm serve qwen-awq --kv-cache-dtype fp8" in out
    assert "- weights" in out and "18.00 GiB" in out


def test_json_output_fits(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    code = run_kv(parse(["kv", "vllm", "--hf-config", str(config), "--kv-cache-memory-bytes", "8G", "--max-model-len", "16k", "--json"]), FakeCatalog())
    answer = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK and answer["fits"] and answer["max_model_len"] == 16000


def test_all_issue_flags_parse():
    args = parse(["kv", "vllm", "--model", "m", "--gpu-memory-gib", "24", "--gpu-count", "2", "--tensor-parallel-size", "2",
                  "--pipeline-parallel-size", "1", "--max-model-len", "auto", "--kv-cache-dtype", "fp8", "--block-size", "16",
                  "--gpu-memory-utilization", "0.9", "--kv-cache-memory-bytes", "1G", "--weights-gib", "9",
                  "--max-num-batched-tokens", "2048", "--max-num-seqs", "64", "--enforce-eager", "--vllm-version", "0.30.0", "--json"])
    assert args.enforce_eager is True and args.max_model_len == "auto" and args.vllm_version == "0.30.0"


def test_bad_input_is_a_usage_error(capsys):
    assert run_kv(parse(["kv", "vllm", "--model", "missing", "--gpu", "rtx-4090"]), FakeCatalog()) == EXIT_USAGE
    assert "unknown model 'missing'" in capsys.readouterr().out


def test_batch_input(capsys, tmp_path):
    requests = tmp_path / "requests.json"
    requests.write_text(json.dumps([
        {"engine": "vllm", "model": "qwen-awq", "gpu": "rtx-4090", "max_model_len": 4096},
        {"engine": "vllm", "model": "qwen-awq"},
    ]))
    assert run_kv(parse(["kv", "--input", str(requests)]), FakeCatalog()) == EXIT_OK
    answers = json.loads(capsys.readouterr().out)
    assert len(answers) == 2 and answers[0]["fits"] is True and "error_input" in answers[1]


def test_no_engine_no_input(capsys):
    assert run_kv(parse(["kv"]), FakeCatalog()) == EXIT_USAGE


def test_sglang_human_output(capsys):
    code = run_kv(parse(["kv", "sglang", "--model", "qwen-awq", "--gpu", "rtx-4090", "--context-length", "8192", "--mem-fraction-static", "0.9"]), FakeCatalog())
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert out.startswith("SGLang 0.5.23: context-length 8,192, kv-cache-dtype auto, TP 1, mem-fraction-static 0.9\n")
    assert "(estimated from the GPU total" in out and "KV Cache is allocated. dtype: torch.float16, #tokens: " in out


def test_sglang_json_from_hf_config(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    code = run_kv(parse(["kv", "sglang", "--hf-config", str(config), "--kv-cache-memory-bytes", "8G", "--tp-size", "2",
                         "--kv-cache-dtype", "fp8_e4m3", "--json"]), FakeCatalog())
    answer = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK and answer["engine"] == "sglang"
    assert answer["kv_bytes_per_token"] == 4 * 128 * 2 * 64 and answer["kv_cache_tokens"] == 8 * GIB // (4 * 128 * 2 * 64)


def test_sglang_does_not_start(capsys):
    code = run_kv(parse(["kv", "sglang", "--model", "qwen-awq", "--gpu", "rtx-4090", "--mem-fraction-static", "0.5"]), FakeCatalog())
    assert code == EXIT_DOES_NOT_FIT
    assert "Does not start. SGLang raises:" in capsys.readouterr().out


def test_absurd_config_is_a_usage_error_naming_the_key(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(CONFIG, num_hidden_layers=10**9)))
    assert run_kv(parse(["kv", "vllm", "--hf-config", str(config), "--gpu-memory-gib", "24"]), FakeCatalog()) == EXIT_USAGE
    assert "`num_hidden_layers` must be at most 1,024" in capsys.readouterr().out
    config.write_text(json.dumps(CONFIG).replace("32768", "1" + "0" * 5000))
    assert run_kv(parse(["kv", "vllm", "--hf-config", str(config), "--gpu-memory-gib", "24"]), FakeCatalog()) == EXIT_USAGE
    assert "cannot read --hf-config" in capsys.readouterr().err


def test_batch_input_is_bounded_in_bytes(capsys, tmp_path, monkeypatch):
    import generator.kv.command as kv_command

    monkeypatch.setattr(kv_command, "MAX_INPUT_BYTES", 100)
    requests = tmp_path / "requests.json"
    requests.write_text(json.dumps([{"engine": "vllm", "model": "qwen-awq", "gpu": "rtx-4090"}] * 10))
    assert run_kv(parse(["kv", "--input", str(requests)]), FakeCatalog()) == EXIT_USAGE
    assert "split the list" in capsys.readouterr().err
