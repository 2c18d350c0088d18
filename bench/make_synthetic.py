"""Write a synthetic kvtriage site root whose build makes about N pair pages.

    python bench/make_synthetic.py N DIR [--models M] [--seed S]

The root is in the project's own format: data/ (site, engines, affiliates, surfaces copied from
the real root; GPUs and models invented), content/errors/ (the real error records, with their
worked example moved onto a synthetic pair and `pair_pages` set on the first error of each
scenario), a few featured content/pairs/, and a copy of the real templates/.

The GPUs and models are invented but valid: GPU totals are spread around realistic tiers
(8 to 192 GB, each card a few MiB apart so no two share a total), and models are llama-,
qwen2- and mistral-shaped configs from 1B to 120B with bf16, fp8, AWQ and two GGUF builds.
How many pair pages a GPU gets depends on its memory tier, so the script builds one sample
GPU per tier, counts its pair pages with the real pipeline, and picks how many cards of each
tier to write so the total lands near N.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
GIB = 1024**3
MIB = 1024**2

# (marketed GB, vendor, compute capability, architecture)
TIERS = (
    (8, "nvidia", "8.9", "Ada"),
    (12, "nvidia", "8.6", "Ampere"),
    (16, "nvidia", "8.9", "Ada"),
    (16, "amd", None, "RDNA3"),
    (20, "amd", None, "RDNA3"),
    (24, "nvidia", "8.6", "Ampere"),
    (24, "nvidia", "8.9", "Ada"),
    (32, "nvidia", "12.0", "Blackwell"),
    (40, "nvidia", "8.0", "Ampere"),
    (48, "nvidia", "8.9", "Ada"),
    (80, "nvidia", "9.0", "Hopper"),
    (96, "nvidia", "12.0", "Blackwell"),
    (141, "nvidia", "9.0", "Hopper"),
    (192, "amd", None, "CDNA3"),
)
RENT = {"runpod", "vast"}

# (layers, hidden, heads, kv heads, intermediate, vocab, max positions, model_type)
SHAPES = (
    (16, 2048, 32, 8, 8192, 128256, 131072, "llama"),
    (28, 3072, 24, 8, 8192, 128256, 131072, "llama"),
    (32, 4096, 32, 8, 14336, 128256, 131072, "llama"),
    (28, 3584, 28, 4, 18944, 152064, 32768, "qwen2"),
    (48, 5120, 40, 8, 13824, 152064, 32768, "qwen2"),
    (40, 5120, 32, 8, 14336, 131072, 131072, "mistral"),
    (64, 5120, 40, 8, 27648, 152064, 32768, "qwen2"),
    (56, 6144, 48, 8, 16384, 32768, 32768, "mistral"),
    (80, 8192, 64, 8, 28672, 128256, 131072, "llama"),
    (88, 12288, 96, 8, 28672, 32768, 131072, "mistral"),
)
SOURCE = "synthetic record written by bench/make_synthetic.py (invented, not a real product)"


def parameters(layers: int, hidden: int, heads: int, kv_heads: int, inter: int, vocab: int) -> int:
    head_dim = hidden // heads
    attention = hidden * hidden * 2 + 2 * hidden * kv_heads * head_dim
    return 2 * vocab * hidden + layers * (attention + 3 * hidden * inter)


def gpu_record(index: int, tier: tuple) -> dict:
    marketed, vendor, cc, arch = tier
    # CUDA reports a bit less than the marketed size; every card gets its own total.
    total = marketed * 10**9 - (600 + (index % 97) * 3) * MIB if marketed < 100 else marketed * GIB - (800 + index % 89) * MIB
    record = {
        "id": f"synth-{vendor}-{marketed}gb-{index:05d}",
        "name": f"Synth {'Radeon' if vendor == 'amd' else 'GeForce'} {arch} {marketed}GB No. {index}",
        "vendor": vendor,
        "architecture": arch,
        "marketed_gb": marketed,
        "cuda_total_bytes": total,
        "nvidia_smi_total_mib": marketed * 1024,
        "bandwidth_gb_s": float(300 + 40 * marketed),
        "bandwidth_source": SOURCE,
        "memory_source": SOURCE,
        "source": SOURCE,
        "fp8_compute": arch in ("Ada", "Hopper", "Blackwell"),
        "buy_query": f"Synth {arch} {marketed}GB graphics card",
        "rent": sorted(RENT) if index % 3 == 0 else (["runpod"] if index % 3 == 1 else []),
    }
    if cc is not None:
        record["compute_capability"] = cc
        record["compute_capability_source"] = SOURCE
    return record


def model_record(index: int) -> dict:
    layers, hidden, heads, kv_heads, inter, vocab, max_pos, model_type = SHAPES[index % len(SHAPES)]
    # Later models of one shape get a few more layers, so no two models share numbers.
    layers += 2 * (index // len(SHAPES))
    params = parameters(layers, hidden, heads, kv_heads, inter, vocab)
    size = f"{params / 1e9:.0f}b" if params >= 1e9 else f"{params / 1e6:.0f}m"
    slug = f"synth-{model_type}-{size}-{index:03d}"
    name = f"Synth-{model_type.capitalize()}-{size.upper()}-{index:03d}"
    config = {
        "model_type": model_type,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "hidden_size": hidden,
        "intermediate_size": inter,
        "vocab_size": vocab,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": max_pos,
        "tie_word_embeddings": False,
    }
    if model_type == "qwen2":
        config.update({"sliding_window": max_pos, "use_sliding_window": False})
    repo = f"synth/{name}"
    tag = slug.replace("synth-", "synth")
    variants = [
        # Every other bf16 build leaves checkpoint_bytes unknown, so the engine's estimate runs too.
        {"id": "bf16", "name": "BF16", "format": "bf16", "hf_repo": repo,
         **({"checkpoint_bytes": params * 2} if index % 2 == 0 else {}), "source": SOURCE},
        {"id": "fp8", "name": "FP8", "format": "fp8", "hf_repo": f"{repo}-FP8", "checkpoint_bytes": params + 2 * vocab * hidden, "source": SOURCE},
        {"id": "awq", "name": "AWQ int4", "format": "awq", "hf_repo": f"{repo}-AWQ", "checkpoint_bytes": params * 56 // 100 + 2 * vocab * hidden, "source": SOURCE},
        {"id": "q4-k-m", "name": "Q4_K_M", "format": "gguf", "gguf_file": f"{name}-Q4_K_M.gguf", "gguf_type": "Q4_K_M",
         "ollama_tag": f"{tag}:q4_K_M", "checkpoint_bytes": params * 49 // 80, "source": SOURCE},
        {"id": "q8-0", "name": "Q8_0", "format": "gguf", "gguf_file": f"{name}-Q8_0.gguf", "gguf_type": "Q8_0",
         "ollama_tag": f"{tag}:q8_0", "source": SOURCE},
    ]
    return {
        "id": slug,
        "name": name,
        "family": f"Synth {model_type}",
        "hf_repo": repo,
        "config": config,
        "config_source": SOURCE,
        "total_params": params,
        "params_source": SOURCE,
        "variants": variants,
    }


def error_records(source_root: Path, vllm_example: tuple[str, str, str], gguf_example: tuple[str, str, str]) -> dict[str, dict]:
    """The real error records; examples moved onto synthetic pairs, one pair_pages error per scenario."""
    records = {}
    primary: set[str] = set()
    for path in sorted((source_root / "content/errors").glob("*.yaml")):
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        gpu, model, variant = vllm_example if record["engine"] in ("vllm", "sglang") else gguf_example  # SGLang runs the same safetensors builds
        example = {"gpu": gpu, "model": model, "variant": variant}
        if record.get("example", {}).get("gpu_memory_utilization") is not None:
            example["gpu_memory_utilization"] = record["example"]["gpu_memory_utilization"]
        record["example"] = example
        record["pair_pages"] = record["scenario"] not in primary
        primary.add(record["scenario"])
        records[path.stem] = record
    return records


def dump(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")


def write_root(out: Path, gpus: list[dict], models: list[dict], source_root: Path, featured: int = 6) -> None:
    if out.exists():
        shutil.rmtree(out)
    (out / "data").mkdir(parents=True)
    for name in ("site.yaml", "engines.yaml", "affiliates.yaml"):
        shutil.copy2(source_root / "data" / name, out / "data" / name)
    shutil.copytree(source_root / "data/surfaces", out / "data/surfaces")
    shutil.copytree(REPO / "templates", out / "templates")
    dump(out / "data/gpus.yaml", {"gpus": gpus})
    dump(out / "data/models.yaml", {"models": models})
    # Worked examples: a mid-size card with a mid-size model, for each engine family.
    example_gpu = gpus[min(len(gpus) - 1, len(gpus) // 2)]["id"]
    example_model = models[min(len(models) - 1, 2)]["id"]
    errors = error_records(source_root, (example_gpu, example_model, "awq"), (example_gpu, example_model, "q4-k-m"))
    for stem, record in errors.items():
        dump(out / "content/errors" / f"{stem}.yaml", record)
    if featured:
        write_featured_pairs(out, gpus, models, errors, featured)


def write_featured_pairs(out: Path, gpus: list[dict], models: list[dict], errors: dict[str, dict], count: int) -> None:
    """A few content/pairs records, each featured on the error whose pair pages it already gets,
    so a featured pair never adds a second page with the same numbers (and description)."""
    sys.path.insert(0, str(REPO))
    from generator.engine.pairs import compute_pair
    from generator.schema import Gpu, Model, PairSettings

    generating = {r["scenario"]: stem for stem, r in errors.items() if r["pair_pages"]}
    written = 0
    for i in range(len(gpus) * len(models)):
        if written == count:
            break
        gpu, model = gpus[(i * 7) % len(gpus)], models[(i * 3) % len(models)]
        settings = PairSettings(gpu_memory_utilization=0.9)
        numbers = compute_pair(Gpu(**gpu), Model(**model), Model(**model).variants[2], settings)
        error = next((generating[s] for s in numbers.scenarios if s in generating), None)
        if error is None:
            continue
        pair = {"gpu": gpu["id"], "model": model["id"], "variant": "awq", "errors": [error],
                "settings": {"gpu_memory_utilization": 0.9},
                "intro": f"Featured synthetic pair {written}: a **{model['name']}** AWQ build on the `{gpu['name']}`, "
                         "introduced the way an editor would write it."}
        dump(out / "content/pairs" / f"{gpu['id']}--{model['id']}-awq.yaml", pair)
        written += 1


def _example_passes_lint(dataset, results, error, pick: tuple[str, str, str]) -> bool:
    """Whether the page lint accepts the error's first fix on `pick` (the other example rules are
    what the picks above see to; settings an example carries are applied only when the site builds)."""
    from dataclasses import replace

    from generator.check.page_lint import record_problems

    example = error.example.model_copy(update={"gpu": pick[0], "model": pick[1], "variant": pick[2]})
    moved = error.model_copy(update={"example": example})
    return not any(issue.field == "fixes[0]" for issue in record_problems(replace(dataset, errors={error.id: moved}), results))


def fit_examples(root: Path) -> None:
    """Move each error's worked example onto a synthetic pair that reaches its failure, as the page
    lint demands (generator/page_lint.py); keep pair_pages only where some pair reaches the
    scenario; drop an error no synthetic pair can show (and its mentions)."""
    sys.path.insert(0, str(REPO))
    from generator.check.page_lint import MODELLED
    from generator.engine.pairs import compute_results
    from generator.load import load_dataset
    from generator.plan.advice import direction_of

    dataset = load_dataset(root)
    results = compute_results(dataset)
    featured = {(p.gpu, p.model, p.variant) for p in dataset.pairs}
    engines_of = {(m.id, v.id): v.engines for m in dataset.models.values() for v in m.variants}
    reached = {s for n in results.values() for s in n.scenarios}
    keys = sorted(k for k in results if k not in featured)
    dropped: set[str] = set()
    generating: set[str] = set()
    records = {}
    for error in dataset.errors.values():
        path = root / "content/errors" / f"{error.id}.yaml"
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        runs = [k for k in keys if error.engine in engines_of[(k[1], k[2])]]
        direction = direction_of(error)
        if error.direction is not None and direction.too_big == "warmup-peak":
            pick = next((k for k in runs if not results[k].scenarios and results[k].vllm is not None), None)
        elif error.scenario in MODELLED and error.direction is None and error.example.free_gib is None:
            pick = next((k for k in runs if error.scenario in results[k].scenarios), None)
        else:
            pick = runs[len(runs) // 2] if runs else None
        if pick is not None and not _example_passes_lint(dataset, results, error, pick):
            middle = len(runs) // 2  # the nearest pair to the middle on which the page lint accepts the example
            pick = next((k for k in sorted(runs, key=lambda k: abs(runs.index(k) - middle))
                         if _example_passes_lint(dataset, results, error, k)), None)
        if pick is None:
            dropped.add(error.id)
            path.unlink()
            continue
        example = {"gpu": pick[0], "model": pick[1], "variant": pick[2]}
        if error.example.free_gib is not None:  # the startup check: half the card free
            gpu = dataset.gpus[pick[0]]
            total = gpu.cuda_total_bytes or (gpu.nvidia_smi_total_mib or 0) * 1024**2
            example["free_gib"] = round(total / 2 / 1024**3, 2)
        elif error.example.gpu_memory_utilization is not None and error.direction is None:
            example["gpu_memory_utilization"] = error.example.gpu_memory_utilization
        record["example"] = example
        record["pair_pages"] = error.scenario in reached and error.scenario not in generating and bool(error.pair_pages or error.scenario in MODELLED)
        if record["pair_pages"]:
            generating.add(error.scenario)
        records[path] = record
    for path, record in records.items():
        record["related"] = [r for r in record.get("related", []) if r not in dropped]
        dump(path, record)
    for path in sorted((root / "content/pairs").glob("*.yaml")):
        pair = yaml.safe_load(path.read_text(encoding="utf-8"))
        pair["errors"] = [e for e in pair["errors"] if e not in dropped]
        if pair["errors"]:
            dump(path, pair)
        else:
            path.unlink()


def count_pair_pages(root: Path) -> dict[str, int]:
    """Pair pages per GPU id, with the real pipeline."""
    sys.path.insert(0, str(REPO))
    from generator.dates import record_dates
    from generator.engine.pairs import compute_results
    from generator.load import load_dataset
    from generator.plan.planner import plan_pages

    dataset = load_dataset(root)
    plan = plan_pages(dataset, compute_results(dataset), record_dates(dataset, "2026-01-01"))
    counts = {gpu: 0 for gpu in dataset.gpus}
    for page in plan.pages:
        if page.kind == "pair":
            counts[page.url.split("/")[3]] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", type=int, help="pair pages to aim for (1000, 10000, 100000)")
    parser.add_argument("out", type=Path, help="site root to write (replaced if it exists)")
    parser.add_argument("--models", type=int, default=None, help="models to invent (default grows with N)")
    parser.add_argument("--source-root", type=Path, default=REPO, help="root whose errors, engines and surfaces are copied")
    args = parser.parse_args(argv)
    model_count = args.models or max(6, min(80, round(math.sqrt(args.pages) / 1.6)))
    models = [model_record(i) for i in range(model_count)]
    # One sample card per tier tells how many pair pages a card of that tier gets.
    sample = [gpu_record(i, tier) for i, tier in enumerate(TIERS)]
    write_root(args.out, sample, models, args.source_root, featured=0)
    per_gpu = count_pair_pages(args.out)
    per_tier = [per_gpu[g["id"]] for g in sample]
    per_round = sum(per_tier)
    if per_round == 0:
        raise SystemExit("no sample card produced a pair page; check the error records")
    gpus: list[dict] = []
    total = 0
    index = 0
    while total < args.pages:
        tier = index % len(TIERS)
        gpus.append(gpu_record(index, TIERS[tier]))
        total += per_tier[tier]
        index += 1
    write_root(args.out, gpus, models, args.source_root)
    fit_examples(args.out)
    print(f"{args.out}: {len(gpus)} GPUs x {len(models)} models ({5 * len(models)} variants), about {total} pair pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
