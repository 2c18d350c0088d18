"""load(): every problem in one pass, each at its file and line, for each kind of mistake."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from generator.errors import ContentError
from generator.load import load_dataset, parse_yaml

from .conftest import TESTS, copy_site

INVALID = TESTS / "fixtures" / "invalid"
CASES = sorted(p.name for p in INVALID.iterdir() if p.is_dir())


def apply_case(case: str, root: Path) -> dict:
    """Overlay the case's files on the fixture site; `expect.yaml` says what must be reported.

    `delete` lists files to remove; `pad: {path, bytes}` grows a file with comment lines
    (so the huge-file case needs no 2 MiB fixture); `stage: render` marks cases that load
    cleanly and fail later, in templates."""
    folder = INVALID / case
    expect = yaml.safe_load((folder / "expect.yaml").read_text())
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_dir() or rel.name == "expect.yaml":
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    for rel in expect.get("delete", []):
        (root / rel).unlink()
    if "pad" in expect:
        target = root / expect["pad"]["path"]
        text = target.read_bytes()
        line = b"# " + b"x" * 77 + b"\n"
        target.write_bytes(text + line * (expect["pad"]["bytes"] // len(line) + 1))
    return expect


def test_fixture_site_loads(site_root: Path) -> None:
    dataset = load_dataset(site_root)
    assert "rtx-4090" in dataset.gpus
    assert dataset.errors["vllm-max-model-len-error"].engine == "vllm"


@pytest.mark.parametrize("case", CASES)
def test_invalid_case_reports_file_line_and_message(case: str, tmp_path: Path) -> None:
    root = copy_site(tmp_path / "root")
    expect = apply_case(case, root)
    if expect.get("stage") == "render":
        load_dataset(root)  # loads cleanly: the CLI test (test_cli.py) sees the template error
        return
    with pytest.raises(ContentError) as raised:
        load_dataset(root)
    lines = [issue.format() for issue in raised.value.issues]
    for wanted in expect["errors"]:
        assert any(line.startswith(wanted["at"] + ":") or line.startswith(wanted["at"] + " ") for line in lines if wanted["message"] in line), (
            f"expected {wanted['at']}: ...{wanted['message']}... in:\n" + "\n".join(lines)
        )
    assert len(lines) == expect.get("count", len(lines))


def test_every_problem_in_one_pass(site_root: Path) -> None:
    gpus = site_root / "data/gpus.yaml"
    gpus.write_text(gpus.read_text().replace("marketed_gb: 24", "marketed_gb: -24").replace("vendor: nvidia", "vendor: nvidea"))
    error = site_root / "content/errors/vllm-max-model-len-error.yaml"
    error.write_text(error.read_text().replace("engine: vllm", "engine: vllm\nbogus_key: 1"))
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    fields = {issue.field for issue in raised.value.issues}
    assert {"gpus[0].marketed_gb", "gpus[0].vendor", "bogus_key"} <= fields


def test_yaml_aliases_are_refused_quickly() -> None:
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b]\n"
    from generator.load import _YamlProblem

    with pytest.raises(_YamlProblem) as raised:
        parse_yaml("x.yaml", bomb)
    assert "anchors" in raised.value.message or "aliases" in raised.value.message
    assert raised.value.line == 1


def test_object_tags_are_refused() -> None:
    from generator.load import _YamlProblem

    with pytest.raises(_YamlProblem) as raised:
        parse_yaml("x.yaml", b"a: !!python/object/apply:os.system ['echo hi']\n")
    assert "tag" in raised.value.message


def test_non_utf8_names_the_file(site_root: Path) -> None:
    (site_root / "data/gpus.yaml").write_bytes(b"gpus:\n  - id: caf\xe9\n")
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert any(i.path == "data/gpus.yaml" and "UTF-8" in i.message for i in raised.value.issues)


def test_positions_point_at_the_value() -> None:
    data, positions = parse_yaml("x.yaml", b"top:\n  items:\n    - id: a\n    - id: b\n      size: 3\n")
    assert data == {"top": {"items": [{"id": "a"}, {"id": "b", "size": 3}]}}
    assert positions.at(("top", "items", 1, "size")) == (5, 13)
    # A missing key points at its parent.
    assert positions.at(("top", "items", 1, "missing"))[0] == 4
