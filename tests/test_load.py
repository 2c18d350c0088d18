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
    if expect.get("stage") in ("render", "lint"):
        load_dataset(root)  # loads cleanly: test_cli.py sees the template error, test_page_lint.py the lint's
        return
    with pytest.raises(ContentError) as raised:
        load_dataset(root)
    lines = [issue.format() for issue in raised.value.issues]
    for wanted in expect["errors"]:
        assert any(line.startswith(wanted["at"] + ":") or line.startswith(wanted["at"] + " ") for line in lines if wanted["message"] in line), (
            f"expected {wanted['at']}: ...{wanted['message']}... in:\n" + "\n".join(lines)
        )
    assert len(lines) == expect.get("count", len(lines))


@pytest.mark.parametrize("case", CASES)
def test_a_load_through_the_parse_cache_reports_the_same(case: str, tmp_path: Path) -> None:
    # The cache is first filled from the valid site, then from the broken one, then read back.
    root = copy_site(tmp_path / "root")
    cache: dict[str, bytes] = {}
    assert load_dataset(root, cache) == load_dataset(root) == load_dataset(root, cache)
    expect = apply_case(case, root)

    def outcome(parse_cache):
        try:
            return load_dataset(root, parse_cache)
        except ContentError as error:
            return error.issues

    first = outcome(None)
    assert outcome(cache) == first and outcome(cache) == first
    assert cache, "parses are kept"
    assert expect is not None


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
    from generator.load import YamlProblem

    with pytest.raises(YamlProblem) as raised:
        parse_yaml("x.yaml", bomb)
    assert "anchors" in raised.value.message or "aliases" in raised.value.message
    assert raised.value.line == 1


def test_object_tags_are_refused() -> None:
    from generator.load import YamlProblem

    with pytest.raises(YamlProblem) as raised:
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


# --------------------------------------------------------------------------- property tests
# Whatever an editor (or an attacker) writes, load answers with the project's own errors:
# never a raw yaml, pydantic, Unicode or Recursion error.

import copy  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from generator.errors import SiteError  # noqa: E402

_YAML_BITS = [
    ":", ": ", "- ", "-", "&a ", "*a", "!!int ", "!!bool ", "!!float ", "!!python/name:os.system ", "!x ", "!!binary ",
    "[", "]", "{", "}", ",", "\n", "  ", "    ", "\t", '"', "'", "|", ">", "|-", "? ", "#", "%YAML 1.1\n", "---\n", "...\n",
    "\\u", "\\ud800", "\\x00", "\\", "<<: ", "~", "null", "true", "1e999", "0x1F", "0o17", ".nan", "-.inf", "2026-13-45",
    "id", "gpus", "models", "variants", "config", "é", "\u2028", "\x85", "\ufeff", "\x01", "a", "1",
]
_yaml_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(_YAML_BITS), max_size=60).map("".join),
)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["rtx-4090", "qwen2.5-coder-32b-instruct", "awq", "vllm", "../x", "FILL IN: x", "[a](javascript:1)", "{{ nope }}", "(?P<x>a)", "(" ]),
)
_FIELDS = ["id", "name", "gpus", "models", "variants", "config", "errors", "gpu", "model", "variant", "engine", "texts", "pattern",
           "fixes", "lever", "example", "settings", "aliases", "related", "num_hidden_layers", "layer_types", "rope_scaling", "x"]
_value = st.recursive(
    _scalar,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(_FIELDS), children, max_size=5)),
    max_leaves=20,
)
_TARGETS = [
    "data/site.yaml",
    "data/gpus.yaml",
    "data/models.yaml",
    "content/errors/vllm-max-model-len-error.yaml",
    "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-awq.yaml",
]


@settings(max_examples=300, deadline=None)
@given(text=_yaml_text)
def test_parse_yaml_raises_only_content_errors_on_text(text: str) -> None:
    try:
        parse_yaml("x.yaml", text.encode("utf-8", "surrogatepass"))
    except ContentError:
        pass


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_parse_yaml_raises_only_content_errors_on_bytes(data: bytes) -> None:
    try:
        parse_yaml("x.yaml", data)
    except ContentError:
        pass


def _load_with(root: Path, relative: str, content: bytes) -> None:
    path = root / relative
    original = path.read_bytes()
    path.write_bytes(content)
    try:
        load_dataset(root)
    except SiteError:
        pass
    finally:
        path.write_bytes(original)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(relative=st.sampled_from(_TARGETS), text=_yaml_text)
def test_load_raises_only_site_errors_on_random_text(site_root: Path, relative: str, text: str) -> None:
    _load_with(site_root, relative, text.encode("utf-8", "surrogatepass"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(relative=st.sampled_from(_TARGETS), record=_value)
def test_load_raises_only_site_errors_on_random_records(site_root: Path, relative: str, record: object) -> None:
    _load_with(site_root, relative, yaml.safe_dump(record, allow_unicode=True).encode("utf-8"))


def _paths(value: object, loc: tuple = ()) -> list[tuple]:
    found = [loc]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, loc + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, loc + (i,))
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(relative=st.sampled_from(_TARGETS), data=st.data())
def test_load_raises_only_site_errors_on_mutated_records(site_root: Path, relative: str, data: st.DataObject) -> None:
    """One valid record with one value replaced (or one key added): reaches cross-reference code."""
    record = yaml.safe_load((site_root / relative).read_text(encoding="utf-8"))
    mutated = copy.deepcopy(record)
    loc = data.draw(st.sampled_from(_paths(mutated)[1:]))
    parent = mutated
    for part in loc[:-1]:
        parent = parent[part]
    if data.draw(st.booleans()):
        parent[loc[-1]] = data.draw(_value)
    elif isinstance(parent, dict):
        parent[data.draw(st.sampled_from(_FIELDS))] = data.draw(_value)
    _load_with(site_root, relative, yaml.safe_dump(mutated, allow_unicode=True, sort_keys=False).encode("utf-8"))


def test_a_link_to_a_file_outside_the_root_is_not_read(site_root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("id: secret\n")
    (site_root / "content/errors/leak.yaml").symlink_to(secret)
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert [i.format() for i in raised.value.issues] == [
        "content/errors/leak.yaml:1: is a link to a file outside the site root. Copy the file in instead."
    ]


@pytest.mark.parametrize("link, target_is_dir", [
    ("templates/static/passwd.txt", False),  # would be published as /static/passwd.txt
    ("templates/about.html", False),  # a template would render whatever it points at
    ("templates/partials", True),
    ("data/surfaces", True),
])
def test_an_input_linked_outside_the_root_is_refused_by_check_and_build(site_root: Path, tmp_path: Path, link: str,
                                                                       target_is_dir: bool) -> None:
    from generator.cli import main

    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "folder" if target_is_dir else outside / "secret.txt"
    if target_is_dir:
        shutil.copytree(site_root / link, target)
    else:
        target.write_text("root:x:0:0:secret\n")
    path = site_root / link
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.symlink_to(target, target_is_directory=target_is_dir)
    kind = "folder" if target_is_dir else "file"
    expected = f"{link}:1: is a link to a {kind} outside the site root. Copy the {kind} in instead."
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    assert [i.format() for i in raised.value.issues] == [expected]
    out = tmp_path / "site"
    assert main(["build", "--root", str(site_root), "--out", str(out), "--quiet", "--no-search"]) == 1
    assert not out.exists()


def test_a_link_inside_the_root_is_read(site_root: Path) -> None:
    (site_root / "templates/static/copy.svg").symlink_to(site_root / "templates/static/favicon.svg")
    load_dataset(site_root)


# Patterns that passed the nested-quantifier guard and then made `check` (or a reader's browser)
# run for a minute or more on a near miss. Each must be refused outright: no timing, just the refusal.
BACKTRACKING_PATTERNS = [
    "(a|ab)+c",  # overlapping alternation under a quantifier
    "(a|aa)+$",
    "(?:\\w|\\d)+x",  # Python folds this into one class; JavaScript keeps the alternation
    "(?:[ab]|b)*c",
    "(x|)*y",  # an alternative that matches nothing
    ".*.*.*x",  # adjacent unbounded repeats over overlapping classes
    "\\d+\\d*x",
    "\\s*\\s+x",
    "a.*\\s*b",
    "(a)\\1+b",  # backreference
    "x(?=a+b)",  # lookaround holding a quantifier
    "x(?!.*y)",
    "a" * 1001,  # longer than any error line
]


@pytest.mark.parametrize("pattern", BACKTRACKING_PATTERNS, ids=lambda p: p[:20])
def test_patterns_that_backtrack_are_refused(pattern: str) -> None:
    from generator.schema import pattern_backtracking_problem

    assert pattern_backtracking_problem(pattern) is not None


@pytest.mark.parametrize(
    "pattern",
    [".*foo.*bar", "\\d+%/\\d+% CPU", "(llama runner|llama-server) process", "(?:foo|bar)+", "[0-9.]+ MiB on device [0-9.]+:",
     "models?'s max", "(?:ab|cd)*ef", "failed to initialize the context: (?!failed to allocate)"],
)
def test_ordinary_patterns_pass(pattern: str) -> None:
    from generator.schema import pattern_backtracking_problem

    assert pattern_backtracking_problem(pattern) is None


def test_a_bad_rope_scaling_names_the_fix(site_root: Path) -> None:
    models = site_root / "data/models.yaml"
    models.write_text(models.read_text().replace("    tie_word_embeddings: false\n", "    tie_word_embeddings: false\n    rope_scaling: {type: linear, factor: .nan}\n", 1))
    with pytest.raises(ContentError) as raised:
        load_dataset(site_root)
    (issue,) = raised.value.issues
    assert issue.field == "models[0].config.rope_scaling" and "finite" in issue.message and "config.json" in issue.fix
