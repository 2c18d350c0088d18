"""`kvtriage kv`: the KV-capacity calculator on the command line.

    kvtriage kv vllm --model ID | --hf-config config.json [--gpu ID | --gpu-memory-gib X] ...
    kvtriage kv sglang --model ID | --hf-config config.json [--gpu ID | --gpu-memory-gib X | --kv-cache-memory-bytes N] ...
    kvtriage kv --input requests.json            # a JSON list in, a JSON list out, in order

The caller (cli.py) hands `run_kv` a catalog lookup, any object with two methods:

    model(model_id: str) -> ModelEntry | Mapping | None
        ModelEntry(hf_config=<config.json object>, weights_bytes=<checkpoint bytes or None>, name=...)
    gpu(gpu_id: str) -> GpuEntry | Mapping | None
        GpuEntry(total_bytes=<total memory as CUDA reports it>, name=...)

None means "not in the catalog". Entries may be the dataclasses from
generator.engine.requests or plain mappings with the same keys.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol

from generator.engine.requests import answer_request, answer_requests
from generator.engine.vllm import format_gib
from generator.units import gib as _gib

EXIT_OK = 0
EXIT_DOES_NOT_FIT = 1
EXIT_USAGE = 2
# A --input file is read whole: 1,000 requests (engine.requests.MAX_REQUESTS) fit in far less.
MAX_INPUT_BYTES = 64 * 1024 * 1024


class CatalogLookup(Protocol):
    def model(self, model_id: str) -> Any: ...
    def gpu(self, gpu_id: str) -> Any: ...


class _LookupMapping(Mapping[str, Any]):
    """Presents one lookup method as the read-only mapping the batch API expects."""

    def __init__(self, lookup: Any) -> None:
        self._lookup = lookup

    def __getitem__(self, key: str) -> Any:
        entry = self._lookup(key)
        if entry is None:
            raise KeyError(key)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _add_model_and_gpu(parser: Any) -> None:
    """What every engine's `kv` command is asked about: one model, and the GPU it runs on."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="model id from data/models.yaml")
    source.add_argument("--hf-config", metavar="config.json", help="a Hugging Face config.json file")
    gpu = parser.add_mutually_exclusive_group()
    gpu.add_argument("--gpu", help="GPU id from data/gpus.yaml")
    gpu.add_argument("--gpu-memory-gib", type=float, metavar="X", help="total GPU memory as CUDA reports it, in GiB")


def add_kv_parser(subparsers: Any) -> None:
    kv = subparsers.add_parser("kv", help="how many tokens fit in the KV cache (vLLM, SGLang), and what fixes it")
    kv.add_argument("--input", metavar="REQUESTS.json", help="answer a JSON list of requests; prints a JSON list")
    engines = kv.add_subparsers(dest="kv_engine", metavar="ENGINE")
    vllm = engines.add_parser("vllm", help="what `vllm serve` computes at startup")
    _add_model_and_gpu(vllm)
    vllm.add_argument("--gpu-count", type=int, metavar="N")
    vllm.add_argument("--tensor-parallel-size", "-tp", type=int, metavar="N")
    vllm.add_argument("--pipeline-parallel-size", "-pp", type=int, metavar="N")
    vllm.add_argument("--max-model-len", metavar="N", help="tokens, 32k / 32K, or auto (-1)")
    vllm.add_argument("--kv-cache-dtype", metavar="D", help="auto (default), fp8, fp8_e4m3, fp8_e5m2, ...")
    vllm.add_argument("--block-size", type=int, metavar="N")
    vllm.add_argument("--gpu-memory-utilization", type=float, metavar="U")
    vllm.add_argument("--kv-cache-memory-bytes", metavar="N", help="bytes each GPU gives the KV cache (8G = 8 GiB)")
    vllm.add_argument("--weights-gib", type=float, metavar="W", help="checkpoint size in GiB (default: catalog, else parameters x bits)")
    vllm.add_argument("--max-num-batched-tokens", metavar="N")
    vllm.add_argument("--max-num-seqs", type=int, metavar="N")
    vllm.add_argument("--enforce-eager", action="store_true", default=None)
    vllm.add_argument("--vllm-version", metavar="V", help="release to emulate (default 0.33.0)")
    vllm.add_argument("--json", action="store_true", help="print the answer as JSON")

    sg = engines.add_parser("sglang", help="the KV pool `python -m sglang.launch_server` sizes at startup")
    _add_model_and_gpu(sg)
    sg.add_argument("--tensor-parallel-size", "--tp-size", "-tp", dest="tensor_parallel_size", type=int, metavar="N")
    sg.add_argument("--context-length", metavar="N", help="tokens (default: the model's, from config.json)")
    sg.add_argument("--kv-cache-dtype", metavar="D", help="auto (default), fp8_e4m3, fp8_e5m2, bf16")
    sg.add_argument("--page-size", type=int, metavar="N")
    sg.add_argument("--mem-fraction-static", type=float, metavar="F", help="default: SGLang 0.5.23's own for this GPU")
    sg.add_argument("--kv-cache-memory-bytes", metavar="N", help="bytes one rank's pool gets (8G = 8 GiB); skips the GPU estimate")
    sg.add_argument("--weights-gib", type=float, metavar="W", help="checkpoint size in GiB (default: catalog, else parameters x bits)")
    sg.add_argument("--max-total-tokens", type=int, metavar="N")
    sg.add_argument("--max-running-requests", type=int, metavar="N", help="caps the decode CUDA graphs, so the default fraction")
    sg.add_argument("--swa-full-tokens-ratio", type=float, metavar="R")
    sg.add_argument("--sglang-version", metavar="V", help="release whose log lines to print (default 0.5.23)")
    sg.add_argument("--json", action="store_true", help="print the answer as JSON")


_VLLM_FLAGS = (
    "model", "gpu", "gpu_memory_gib", "gpu_count", "tensor_parallel_size", "pipeline_parallel_size",
    "max_model_len", "kv_cache_dtype", "block_size", "gpu_memory_utilization", "kv_cache_memory_bytes",
    "weights_gib", "max_num_batched_tokens", "max_num_seqs", "enforce_eager", "vllm_version",
)


_SGLANG_FLAGS = (
    "model", "gpu", "gpu_memory_gib", "tensor_parallel_size", "context_length", "kv_cache_dtype", "page_size",
    "mem_fraction_static", "kv_cache_memory_bytes", "weights_gib", "max_total_tokens", "swa_full_tokens_ratio",
    "sglang_version", "max_running_requests",
)


def request_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The batch-API request the flags describe (reads --hf-config from disk)."""
    engine = getattr(args, "kv_engine", None) or "vllm"
    request: dict[str, Any] = {"engine": engine}
    for name in _SGLANG_FLAGS if engine == "sglang" else _VLLM_FLAGS:
        value = getattr(args, name, None)
        if value is not None:
            request[name] = value
    if getattr(args, "hf_config", None):
        request["hf_config"] = json.loads(Path(args.hf_config).read_text(encoding="utf-8"))
    for key in ("max_model_len", "context_length"):
        if isinstance(request.get(key), str) and request[key].lstrip("-").isdigit():
            request[key] = int(request[key])
    return request


def format_vllm_answer(answer: Mapping[str, Any]) -> str:
    """The human-readable report: breakdown, result, vLLM's error, fixing commands."""
    if "error_input" in answer:
        return f"error: {answer['error_input']}"
    lines = [f"vLLM {answer['vllm_version']}: max_model_len {answer['max_model_len']:,}, "
             f"kv-cache-dtype {answer['kv_cache_dtype']}, TP {answer['tensor_parallel_size']}, PP {answer['pipeline_parallel_size']}"]
    breakdown = answer.get("breakdown")
    if breakdown:
        lines += [
            "",
            "Memory budget per GPU (estimated; see assumptions in --json):",
            f"  requested  ceil(total x {answer['gpu_memory_utilization']})  {_gib(breakdown['requested_bytes']):>11}",
            f"  - weights                                {_gib(breakdown['weights_bytes']):>11}",
            f"  - non-torch memory                       {_gib(breakdown['non_torch_bytes']):>11}",
            f"  - activation peak ({answer['max_num_batched_tokens']:,} tokens)".ljust(43) + f"{_gib(breakdown['activation_peak_bytes']):>11}",
            f"  - CUDA graphs                            {_gib(breakdown['cudagraph_bytes']):>11}",
        ]
    lines += [
        f"  = available for KV cache                 {_gib(answer['available_kv_cache_bytes']):>11}",
        "",
        f"KV cache: {answer['kv_bytes_per_token']:,} bytes per token, {answer['bytes_per_block']:,} bytes per block "
        f"of {answer['block_size']} tokens, {answer['num_kv_cache_groups']} group(s)",
        f"Blocks: {answer['num_blocks']:,}; one {answer['max_model_len']:,}-token request needs {answer['blocks_per_request']:,} "
        f"({format_gib(answer['needed_bytes'])} GiB)",
        f"Largest max_model_len that starts: {answer['estimated_max_model_len']:,}",
    ]
    if answer["fits"]:
        lines += ["", "Starts. vLLM logs:"] + [f"  {line}" for line in answer["log_lines"]]
    else:
        lines += ["", "Does not start. vLLM raises:", f"  ValueError: {answer['error']}"]
        commands = [lever for lever in answer.get("remediation", []) if lever.get("command")]
        others = [lever for lever in answer.get("remediation", []) if not lever.get("command")]
        if commands or others:
            lines += ["", "Fixes, best first (largest max_model_len that starts):"]
        for lever in commands:
            verdict = "starts at the requested length" if lever["fits_requested"] else f"up to {lever['max_model_len_that_fits']:,} tokens"
            lines.append(f"  {lever['command']}    # {verdict}")
        for lever in others:
            lines.append(f"  {lever['kind']}: {lever['label']}    # up to {lever['max_model_len_that_fits']:,} tokens")
    return "\n".join(lines)


def format_sglang_answer(answer: Mapping[str, Any]) -> str:
    """The human-readable SGLang report: the pool, the log line, the context it serves."""
    if "error_input" in answer:
        return f"error: {answer['error_input']}"
    lines = [f"SGLang {answer['sglang_version']}: context-length {answer['context_length']:,}, "
             f"kv-cache-dtype {answer['kv_cache_dtype']}, TP {answer['tensor_parallel_size']}"
             + (f", mem-fraction-static {answer['mem_fraction_static']}" if answer.get("mem_fraction_static") is not None else "")]
    if answer.get("weights_bytes_per_rank") is not None:
        lines.append(f"Weights per rank: {_gib(answer['weights_bytes_per_rank'])}")
    if not answer["starts"]:
        lines += ["", "Does not start. SGLang raises:", f"  {answer['error']}"]
        return "\n".join(lines)
    estimated = " (estimated from the GPU total less a measured startup overhead)" if answer["budget_estimated"] else ""
    lines += [
        f"KV budget per rank: {_gib(answer['kv_cache_memory_bytes'])}{estimated}",
        f"KV cache: {answer['kv_bytes_per_token']:,g} bytes per token per rank; max_total_num_tokens {answer['kv_cache_tokens']:,}",
        f"Longest input the scheduler admits: {answer['max_req_input_len']:,} tokens"
        + ("" if answer["context_fits"] else f" (the pool, not the {answer['context_length']:,}-token context, is the limit)"),
        "",
        "SGLang logs:",
    ] + [f"  {line}" for line in answer["log_lines"]]
    return "\n".join(lines)


def run_kv(args: argparse.Namespace, catalog_lookup: CatalogLookup) -> int:
    models = _LookupMapping(catalog_lookup.model)
    gpus = _LookupMapping(catalog_lookup.gpu)
    if getattr(args, "input", None):
        try:
            size = Path(args.input).stat().st_size
            if size > MAX_INPUT_BYTES:
                raise ValueError(f"{size:,} bytes, more than the {MAX_INPUT_BYTES:,} one batch may be; split the list")
            requests = json.loads(Path(args.input).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            print(f"kvtriage kv: cannot read {args.input}: {str(exc)[:300]}", file=sys.stderr)
            return EXIT_USAGE
        print(json.dumps(answer_requests(requests, models, gpus), indent=2))
        return EXIT_OK
    engine = getattr(args, "kv_engine", None)
    if engine not in ("vllm", "sglang"):
        print("kvtriage kv: give an engine (vllm, sglang) or --input requests.json", file=sys.stderr)
        return EXIT_USAGE
    try:
        request = request_from_args(args)
    except (OSError, ValueError, RecursionError) as exc:
        print(f"kvtriage kv {engine}: cannot read --hf-config: {str(exc)[:300]}", file=sys.stderr)
        return EXIT_USAGE
    answer = answer_request(request, models, gpus)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print(format_sglang_answer(answer) if engine == "sglang" else format_vllm_answer(answer))
    if "error_input" in answer:
        return EXIT_USAGE
    return EXIT_OK if answer["fits" if engine == "vllm" else "starts"] else EXIT_DOES_NOT_FIT
