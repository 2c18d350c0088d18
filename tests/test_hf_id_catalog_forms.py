"""Every catalog record answers to the ids a reader writes for it, and no record answers to another model's.

Table-driven over the whole catalog: for each record's own repository `owner/name` and its other names (hf_aliases), the
forms a log, a command or a download names it by (its hub id in any case and as a URL, a re-packer's GGUF repository, a
GGUF file, a local folder, a hub cache path, a ModelScope download, MLX and quantized re-packs, a version's dot written as
`_`) must resolve to that record; a fine-tune's name and a size the family does not have must resolve to nothing. The Ollama names each record lists
(`ollama_names` and its variants' `ollama_tag`) must resolve to it too, bare, with `:latest` where the name has no
tag, and through Ollama's registry path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.kv.hf_ids import HfIdIndex, hf_id_index
from generator.load import load_dataset
from generator.schema import Model

REPO = Path(__file__).resolve().parent.parent
MODELS = load_dataset(REPO).models
_HASH = "0123456789abcdef0123456789abcdef01234567"

# How readers write a catalog model's own repository, owner/name (o, n), each form one template.
FORMS = {
    "hub id": "{o}/{n}",
    "lower case": "{ol}/{nl}",
    "hub URL": "https://huggingface.co/{o}/{n}/tree/main",
    "bare name": "{n}",
    "official GGUF repository": "{o}/{n}-GGUF",
    "re-packer's GGUF repository": "bartowski/{n}-GGUF",
    "re-packer's GGUF repository with the owner": "bartowski/{o}_{n}-GGUF",
    "GGUF repository with a quantization": "hf.co/unsloth/{n}-GGUF:Q4_K_M",
    "GGUF file": "{n}-Q4_K_M.gguf",
    "GGUF file, lower case, dot": "{nl}.q8_0.gguf",
    "sharded GGUF file in a folder": "/models/{n}-GGUF/{n}-Q4_K_M-00001-of-00003.gguf",
    "local folder": "/models/{n}",
    "local folder under the owner": "/data/models/{o}/{n}/",
    "Windows folder": "C:\\models\\{n}",
    "hub cache": "~/.cache/huggingface/hub/models--{o}--{n}/snapshots/" + _HASH,
    "ModelScope download": "/root/.cache/modelscope/hub/{o}/{ms}",
    "ModelScope URL": "https://modelscope.cn/models/{o}/{n}",
    "MLX re-pack": "mlx-community/{n}-4bit",
    "AWQ re-pack": "someone/{n}-AWQ",
    "FP8 re-pack": "RedHatAI/{n}-FP8-dynamic",
    "GPTQ re-pack": "someone/{n}-GPTQ-Int4",
    "version's dot as _": "/models/{us}",
    "version's dot as _, GGUF file": "{us}-Q4_K_M.gguf",
}
# Names of other models built on a catalog model: a fine-tune's own name must not reach the record.
FINE_TUNES = ("someone/{n}-abliterated", "{n}-abliterated-Q4_K_M.gguf", "/models/{n}-finetuned", "someone/{n}-Uncensored-GGUF")
_SIZE = re.compile(r"(?<=-)(\d+(?:\.\d+)?)([BbMmTt])(?=-|$)")


def _fill(template: str, repo: str) -> str:
    owner, name = repo.split("/")
    # us: a version's dot as `_` (Qwen2_5-7B-Instruct), never a decimal size's (0.6B).
    us = re.sub(r"(?<=[A-Za-z-]\d)\.(?=\d(?:-|$))", "_", name)
    return template.format(o=owner, n=name, ol=owner.lower(), nl=name.lower(), ms=name.replace(".", "___"), us=us)


@pytest.fixture(scope="module")
def index() -> HfIdIndex:
    return hf_id_index(MODELS)


def _record_ids(model: Model) -> str:
    return model.id


@pytest.mark.parametrize("model", MODELS.values(), ids=_record_ids)
def test_every_form_of_a_records_repository_resolves_to_it(index: HfIdIndex, model: Model) -> None:
    missed = {f"{form} ({repo})": _fill(template, repo) for repo in (model.hf_repo, *model.hf_aliases) for form, template in FORMS.items()}
    missed = {form: named for form, named in missed.items()
              if (found := index.resolve(named)) is None or found.model_id != model.id}
    assert not missed, f"{model.id}: {missed}"
    own = index.resolve(model.hf_repo)
    assert own is not None and not own.same_architecture_only


@pytest.mark.parametrize("model", [m for m in MODELS.values() if m.ollama_names or any(v.ollama_tag for v in m.variants)],
                         ids=_record_ids)
def test_every_ollama_name_a_record_lists_resolves_to_it(index: HfIdIndex, model: Model) -> None:
    names = [*model.ollama_names, *(v.ollama_tag for v in model.variants if v.ollama_tag)]
    forms = [form for name in names for form in (name, f"registry.ollama.ai/library/{name}", f"ollama/{name}",
                                                  *((f"{name}:latest",) if ":" not in name else ()))]
    missed = [named for named in forms if (found := index.resolve(named)) is None or found.model_id != model.id]
    assert not missed, f"{model.id}: {missed}"
    # A tag past a listed name with a release version no record has is another checkpoint, not this record.
    versioned = {f"{name}-v9.9-q4_0" if ":" in name else f"{name}:latest-v9.9" for name in names}
    assert not {named: found for named in versioned if (found := index.resolve(named)) is not None}


@pytest.mark.parametrize("model", MODELS.values(), ids=_record_ids)
def test_no_record_answers_to_a_fine_tunes_name_or_another_size(index: HfIdIndex, model: Model) -> None:
    owner, name = model.hf_repo.split("/")
    others = [_fill(template, model.hf_repo) for template in FINE_TUNES]
    if (size := _SIZE.search(name)) is not None:
        # A size no record has (8B as 81B): the family's other size, never this record.
        other = f"{name[: size.start()]}{size.group(1)}1{size.group(2)}{name[size.end():]}"
        others += [f"{owner}/{other}", other, f"{other}-Q4_K_M.gguf", f"someone/{other}-GGUF", f"/models/{other}"]
    wrong = {named: found for named in others if (found := index.resolve(named)) is not None}
    assert not wrong, f"{model.id}: {wrong}"
