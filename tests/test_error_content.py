"""The error signatures in content/errors/: coverage, exact texts, and patterns that route a paste
to exactly one page.

Each record is read on its own (YAML -> ErrorSignature), so these tests do not depend on the GPU
and model catalogs; cross references to them are load_dataset's job.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from generator.load import parse_yaml
from generator.schema import ENGINES, PLACEHOLDER, QUANTITY_NAMES, ErrorSignature

ROOT = Path(__file__).resolve().parents[1]
ERROR_DIR = ROOT / "content" / "errors"

# A {slot} in a text is where the engine prints a value. Readers paste integers, and for sizes
# and fractions also two-decimal and Python-rounded figures; the pattern must cope with all of them.
SLOT = re.compile(r"\{([a-z_]+)(?::[^}]*)?\}")
SIZE_SLOT = re.compile(r"(gib|gb|mib|utilization)$")
INTEGER_FILLS = ("123", "8176", "0", "7", "123", "8176")
SIZE_FILLS = ("123", "8176", "0", "7", "21.59", "4096.00")

# Digits followed by a unit: what prose must never state, because the page computes it.
NUMBER_WITH_UNIT = re.compile(r"\b\d+(\.\d+)?\s?(GiB|GB|MiB|MB|KiB|tokens|blocks|%)", re.IGNORECASE)
# Regex features that differ between Python's re and JavaScript's RegExp.
NOT_PORTABLE = re.compile(r"\(\?P|\(\?<[=!]?[A-Za-z]|\(\?[aiLmsux]|\(\?>|\\[AZz]|[*+?}]\+")


def _load_records() -> list[tuple[Path, ErrorSignature]]:
    records = []
    for path in sorted(ERROR_DIR.glob("*.yaml")):
        data, _ = parse_yaml(str(path), path.read_bytes())
        records.append((path, ErrorSignature.model_validate(data)))
    return records


RECORDS = _load_records()
BY_ID = {record.id: record for _, record in RECORDS}


def _samples(template: str) -> list[str]:
    """The template with every slot filled, once per kind of value readers paste."""

    def filled(i: int) -> str:
        return SLOT.sub(lambda m: (SIZE_FILLS if SIZE_SLOT.search(m.group(1)) else INTEGER_FILLS)[i], template)

    return sorted({filled(i) for i in range(len(SIZE_FILLS))})


def _prose(record: ErrorSignature) -> list[tuple[str, str]]:
    parts = [("triage", record.triage), ("cause", record.cause)]
    parts += [(f"fixes[{i}].note", fix.note) for i, fix in enumerate(record.fixes)]
    parts += [(f"faq[{i}].answer", item.answer) for i, item in enumerate(record.faq)]
    parts += [(f"faq[{i}].question", item.question) for i, item in enumerate(record.faq)]
    return parts


# --------------------------------------------------------------------------- coverage


def test_at_least_twelve_errors_and_three_per_engine():
    engines = Counter(record.engine for _, record in RECORDS)
    assert len(RECORDS) >= 12
    for engine in ENGINES:
        assert engines[engine] >= 3, f"{engine} has only {engines[engine]} error records"


def test_required_signatures_are_covered():
    """Every error the catalog brief names has a record whose pattern catches its key words."""
    required = {
        "vllm": [
            "The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664).",
            "To serve at least one request with the model's max seq len (32768), (8.0 GiB KV cache is needed",
            "No available memory for the cache blocks.",
            "Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU memory utilization (0.92, 21.67 GiB).",
            "Failed to load model - not enough GPU memory.",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 768.00 MiB.",
            "CUDA out of memory occurred when warming up sampler with 256 dummy requests.",
            "Capturing CUDA graphs (decode, FULL):  12%",
            "User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=32768 or model_max_length=None in model's config.json).",
            "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token.",
        ],
        "llamacpp": [
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory",
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
            "llama_kv_cache_init: failed to allocate buffer for kv cache",
            "cmn  common_init_: failed to create context with model 'qwen2.5-coder-32b-q4_k_m.gguf'",
            "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers",
            "llama_init_from_model: quantized V cache requires flash_attn to be enabled",
            "llama_init_from_model: V cache quantization requires flash_attn",
            "llama_init_from_model: model does not support different K (q8_0) and V (f16) cache types",
            "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        ],
        "ollama": [
            "Error: model requires more system memory (35.9 GiB) than is available (27.1 GiB)",
            "qwen2.5-coder:32b    b92d6a0bd47e    25 GB    48%/52% CPU/GPU    32768    4 minutes from now",
            "llama-server process has terminated: exit status 1: cudaMalloc failed: out of memory",
            "Error: llama runner process has terminated: %!w(<nil>)",
            "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details",
        ],
    }
    for engine, pastes in required.items():
        for paste in pastes:
            hits = [r.id for _, r in RECORDS if re.search(r.pattern, paste)]
            assert hits, f"no record catches {paste!r}"
            assert all(BY_ID[h].engine == engine for h in hits), f"{paste!r} lands on {hits}"


# --------------------------------------------------------------------------- record shape


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_file_name_is_the_engine_prefixed_id(path, record):
    assert path.stem == record.id
    assert record.id.startswith(record.engine + "-")
    assert record.scenario.startswith(record.engine + "-"), "a record's scenario belongs to its own engine"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_every_text_has_versions_and_a_source(path, record):
    for i, text in enumerate(record.texts):
        assert re.search(r"\d", text.versions), f"texts[{i}].versions names no release: {text.versions!r}"
        assert len(text.source) >= 20, f"texts[{i}].source is too thin: {text.source!r}"
        assert "/" in text.source or "#" in text.source, f"texts[{i}].source names no file, commit or thread"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_texts_are_distinct_within_a_record(path, record):
    texts = [t.text for t in record.texts]
    assert len(texts) == len(set(texts))


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_triage_is_two_to_four_sentences(path, record):
    # Sentences end in '.', '?' or '!' followed by space or end; dotted names like config.json don't.
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", record.triage.strip()) if s]
    assert 2 <= len(sentences) <= 4, f"triage has {len(sentences)} sentences"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_faq_has_two_to_four_questions(path, record):
    assert 2 <= len(record.faq) <= 4
    for item in record.faq:
        assert item.question.rstrip().endswith("?")


# --------------------------------------------------------------------------- patterns


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_pattern_matches_every_own_text_and_the_signature(path, record):
    pattern = re.compile(record.pattern)
    for i, text in enumerate(record.texts):
        for sample in _samples(text.text):
            assert pattern.search(sample), f"texts[{i}] not matched when pasted as {sample[:90]!r}"
    for sample in _samples(record.signature):
        assert pattern.search(sample), f"signature not matched: {sample[:90]!r}"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_pattern_matches_no_other_records_texts(path, record):
    pattern = re.compile(record.pattern)
    for _, other in RECORDS:
        if other.id == record.id:
            continue
        for i, text in enumerate(other.texts):
            for sample in _samples(text.text):
                assert not pattern.search(sample), f"{record.id} also catches {other.id} texts[{i}]"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_pattern_uses_only_features_python_and_javascript_share(path, record):
    assert not NOT_PORTABLE.search(record.pattern), record.pattern


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_patterns_route_the_same_in_javascript():
    """The in-page paste matcher runs these patterns with RegExp: it must agree with Python."""
    samples = [sample for _, r in RECORDS for t in r.texts for sample in _samples(t.text)]
    patterns = {r.id: r.pattern for _, r in RECORDS}
    script = (
        "const d=JSON.parse(require('fs').readFileSync(0,'utf8'));const out={};"
        "for(const [id,p] of Object.entries(d.patterns)){const re=new RegExp(p);"
        "out[id]=d.samples.map(s=>re.test(s));}process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        ["node", "-e", script], input=json.dumps({"patterns": patterns, "samples": samples}),
        capture_output=True, text=True, timeout=60, check=True,
    )
    in_js = json.loads(result.stdout)
    for record_id, pattern in patterns.items():
        in_python = [re.search(pattern, s) is not None for s in samples]
        assert in_js[record_id] == in_python, f"{record_id}: JavaScript and Python disagree"


# --------------------------------------------------------------------------- prose


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_prose_states_no_numbers_with_units(path, record):
    for field, text in _prose(record):
        match = NUMBER_WITH_UNIT.search(text)
        assert match is None, f"{field} states {match.group(0)!r}; name the quantity instead"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_prose_names_only_quantities_the_engine_provides(path, record):
    for field, text in _prose(record):
        for match in PLACEHOLDER.finditer(text):
            assert match.group(1) in QUANTITY_NAMES, f"{field}: {match.group(0)}"


@pytest.mark.parametrize("path,record", RECORDS, ids=[r.id for _, r in RECORDS])
def test_triage_and_cause_name_the_pair(path, record):
    """The page is about one GPU and model; its opening must say so through quantities."""
    names = {m.group(1) for m in PLACEHOLDER.finditer(record.triage)}
    assert names & {"gpu.name", "model.name"}, "triage names neither the GPU nor the model"
    assert PLACEHOLDER.search(record.cause), "cause names no quantity"


def test_ollama_settings_are_never_exported_in_the_client_shell():
    # Ollama reads these on the server; `export X=...; ollama run` changes nothing.
    server_vars = ("OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH", "OLLAMA_NUM_PARALLEL")
    for _, record in RECORDS:
        for field, text in _prose(record):
            for var in server_vars:
                assert f"export {var}" not in text, f"{record.id} {field} exports {var} in the client shell"


# --------------------------------------------------------------------------- site-wide uniqueness and links


def test_titles_and_descriptions_are_unique():
    titles = Counter(record.title for _, record in RECORDS)
    descriptions = Counter(record.description for _, record in RECORDS)
    assert [t for t, n in titles.items() if n > 1] == []
    assert [d for d, n in descriptions.items() if n > 1] == []


def test_related_links_exist_and_go_both_ways():
    for _, record in RECORDS:
        assert record.id not in record.related
        for other in record.related:
            assert other in BY_ID, f"{record.id} links to missing {other}"
            assert record.id in BY_ID[other].related, f"{other} does not link back to {record.id}"


# --------------------------------------------------------------------------- agreement with the engine


def _normalise(template: str) -> str:
    return SLOT.sub("{}", template)


def test_vllm_kv_texts_agree_with_the_engine_templates():
    """content/ and generator/engine/vllm/ transcribe the same spec table; they must agree."""
    from generator.engine import vllm

    estimated = "Based on the available memory, the estimated maximum model length is {}. "
    engine_texts = set()
    for row in vllm.VLLM_ERROR_TEMPLATES:
        text = row.template
        if (0, 8, 4) <= row.first and row.last <= (0, 9, 0):
            text = text.replace("{estimated_msg}", " Based on the available memory, ")
        else:
            text = text.replace("{estimated_msg}", estimated)
        engine_texts.add(_normalise(text))
    engine_texts.add(_normalise(vllm.CANNOT_AUTO_FIT_TEXT))

    content_texts = {
        _normalise(t.text)
        for record_id in ("vllm-max-model-len-error", "vllm-no-cache-blocks", "vllm-auto-fit-failed")
        for t in BY_ID[record_id].texts
    }
    assert content_texts == engine_texts


# --------------------------------------------------------------------------- pair pages


# The scenarios generator/engine/pairs.py assigns to catalog pairs; each needs one record that
# generates its pair pages, or those pages silently disappear.
SCENARIOS_THE_PAIR_ENGINE_ASSIGNS = {
    "vllm-kv-too-small", "vllm-no-cache-blocks", "vllm-weights-oom",
    "llamacpp-kv-alloc", "llamacpp-context-fail",
    "ollama-partial-offload",
    "sglang-no-kv-pool", "sglang-pool-short",  # pairs.sglang_scenario, beside vLLM
}
# The engine assigns vllm-sampler-warmup-oom too (a few large-vocabulary pairs at 1,024 sequences)
# and vllm-startup-free-memory to an example that gives its free memory; no record generates
# pair pages for them. ollama-system-memory needs host RAM figures the catalog does not have, so
# its record generates none either (the page lint refuses pair_pages for a scenario no pair reaches).
# The catalog has no system RAM figure, so the engine cannot tell when RAM runs out.
SCENARIOS_THE_ENGINE_CANNOT_CONFIRM = {"ollama-system-memory"}


def test_every_assigned_scenario_has_exactly_one_record_generating_pair_pages():
    generating = Counter(record.scenario for _, record in RECORDS if record.pair_pages)
    assert set(generating) == SCENARIOS_THE_PAIR_ENGINE_ASSIGNS
    assert all(n == 1 for n in generating.values()), generating


def test_worked_examples_of_page_generating_records_hit_their_scenario():
    """The example pair of a page-generating error is one of its own pair pages."""
    from generator.engine.pairs import compute_pair
    from generator.load import load_dataset

    dataset = load_dataset(ROOT)
    for _, record in RECORDS:
        if not record.pair_pages or record.scenario in SCENARIOS_THE_ENGINE_CANNOT_CONFIRM:
            continue
        ex = record.example
        model = dataset.models[ex.model]
        variant = next(v for v in model.variants if v.id == ex.variant)
        assert ex.gpu_memory_utilization is None or record.engine == "vllm"
        settings = None
        if ex.gpu_memory_utilization is not None:
            from generator.schema import PairSettings

            settings = PairSettings(gpu_memory_utilization=ex.gpu_memory_utilization)
        numbers = compute_pair(dataset.gpus[ex.gpu], model, variant, settings)
        assert record.scenario in numbers.scenarios, f"{record.id}: example hits {numbers.scenarios}"
