"""Incremental builds: the same bytes as a cold build, nothing else touched (mtimes included),
pages of deleted records gone, and a failed or interrupted build leaves site/ as it was."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from generator.build import facts as build_facts
from generator.build import incremental, search_stage
from generator.build import resident as resident_module
from generator.build.incremental import build_and_write
from generator.build.resident import Resident
from generator.check.affiliates import AffiliateRule
from generator.check.site_checks import check_pages, slim_facts
from generator.errors import ContentError, Issue, RenderError
from generator.render import site_files
from generator.render.page_links import page_links
from generator.render.site_files import pagefind_executable
from generator.write import manifest as manifest_module
from generator.write import staging as staging_module
from generator.write.guard import SEARCH_FOLDERS
from generator.write.manifest import manifest_path, read_manifest, write_manifest
from generator.write.search_index import kept_names
from generator.write.staging import Staging
from generator.write.state import state_dir

from .test_build_parallel import grown_site, tree


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795910400")
    return grown_site(tmp_path / "root")


SEARCH_PREFIXES = tuple(folder + "/" for folder in SEARCH_FOLDERS)


def mtimes(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    """Staging or old trees a build left beside its sites or in their state folders."""
    beside = [p.name for p in parent.iterdir() if p.name.startswith((".site.", ".cold."))]
    staged = [p.name for p in parent.glob(".kvtriage-cache/*/stage-*")]
    return sorted(beside + staged)


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def cold(root: Path, tmp_path: Path) -> dict[str, bytes]:
    out = tmp_path / "cold"
    assert not out.exists()
    build_and_write(root, out, jobs=1, search=False)
    return tree(out)


def test_a_rebuild_with_nothing_changed_touches_nothing(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    before, stamps = tree(site), mtimes(site)
    report = build_and_write(root, site, jobs=2, search=False)
    assert report.startswith("nothing changed")
    assert tree(site) == before and mtimes(site) == stamps


def test_the_cli_reads_the_site_once_under_the_lock(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kvtriage build` reads out (its manifest and a stat of every output) once, holding the lock, and
    builds on from that reading: the edit comes out as a cold build has it."""
    from generator import cli
    from generator.write import state as state_module

    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    _edit_pair_intro(root)
    held, reads = [], []
    real_lock, real_read = state_module.build_lock, manifest_module.read_published

    def lock(*args, **kwargs):
        with real_lock(*args, **kwargs) as state:
            held.append(True)
            yield state
            held.pop()

    def read(out):
        reads.append(bool(held))
        return real_read(out)

    monkeypatch.setattr(state_module, "build_lock", contextlib.contextmanager(lock))
    monkeypatch.setattr(manifest_module, "read_published", read)
    monkeypatch.setattr(resident_module, "read_published", read)
    assert cli.main(["build", "--root", str(root), "--out", str(site), "--quiet", "--no-search", "--jobs", "1"]) == 0
    assert reads == [True]
    assert tree(site) == cold(root, tmp_path)


def _edit_pair_intro(root: Path) -> None:
    pair = next((root / "content/pairs").glob("*.yaml"))
    edit_yaml(pair, lambda d: d.update(intro=d["intro"].rstrip() + " One more sentence from the editor."))


def _edit_error_prose(root: Path, sentence: str = "An added sentence.") -> None:
    edit_yaml(root / "content/errors/vllm-max-model-len-error.yaml", lambda d: d.update(cause=d["cause"].rstrip() + f"\n{sentence}\n"))


def _edit_gpu_memory(root: Path) -> None:
    def change(d):
        card = next(g for g in d["gpus"] if g["id"] == "test-card-24gb")
        card["cuda_total_bytes"] += 3 * 2**30
        card["name"] = "Test Card 24GB Refresh"

    edit_yaml(root / "data/gpus.yaml", change)


def _edit_template(root: Path) -> None:
    path = root / "templates/pair.html"
    path.write_text(path.read_text(encoding="utf-8").replace("<article>", "<article class=\"pair\">", 1), encoding="utf-8")


def _edit_gpu_buy_link(root: Path) -> None:
    # Shows on that GPU's pages and in the "GPUs that fit" lists of other GPUs' pair pages.
    edit_yaml(root / "data/gpus.yaml", lambda d: next(g for g in d["gpus"] if g["id"] == "test-card-80gb").update(buy_query="Test Card 80GB PCIe"))


def _edit_gpu_name(root: Path) -> None:
    # Shows on that GPU's pages, in the GPU and model tables, and in the "GPUs that fit" lists of other GPUs' pair pages.
    edit_yaml(root / "data/gpus.yaml", lambda d: next(g for g in d["gpus"] if g["id"] == "test-card-80gb").update(name="Test Card 80GB SXM"))


def _edit_model_name(root: Path) -> None:
    # Shows on that model's pages and in the GPU tables; no engine reads it.
    edit_yaml(root / "data/models.yaml", lambda d: d["models"][-1].update(name=d["models"][-1]["name"] + " Renamed"))


def _edit_affiliate_program(root: Path) -> None:
    edit_yaml(root / "data/affiliates.yaml", lambda d: d["programs"][1].update(name="RunPod Cloud"))


def _edit_site_author(root: Path) -> None:
    # Read only by the structured data of every page.
    path = root / "data/site.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("default_author: kvtriage editors", "default_author: kvtriage staff"), encoding="utf-8")


def _edit_model_variant(root: Path) -> None:
    # A sibling build's name shows in the commands of the model's other pair pages.
    def change(d):
        variant = d["models"][0]["variants"][-1]
        variant["name"] = variant["name"] + " (renamed)"

    edit_yaml(root / "data/models.yaml", change)


@pytest.mark.parametrize("edit", [_edit_pair_intro, _edit_error_prose, _edit_gpu_memory, _edit_template, _edit_gpu_buy_link,
                                  _edit_affiliate_program, _edit_site_author, _edit_model_variant],
                         ids=["pair-intro", "error-prose", "gpu-memory", "template", "gpu-buy-link", "affiliate", "site-author",
                              "model-variant"])
def test_an_incremental_build_equals_a_cold_build_and_leaves_unchanged_files_alone(root: Path, tmp_path: Path, edit) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    before, stamps = tree(site), mtimes(site)
    edit(root)
    report = build_and_write(root, site, jobs=2, search=False)
    after = tree(site)
    assert after == cold(root, tmp_path)
    changed = {path for path in after if before.get(path) != after[path]}
    assert changed, "the edit should change some output"
    now = mtimes(site)
    untouched = [path for path in after if path in before and path not in changed]
    assert untouched
    assert [path for path in untouched if now[path] != stamps[path]] == []
    assert "incremental" in report
    assert leftovers(tmp_path) == []


_GGUF_PAIR = "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-q4-k-m.yaml"


def _add_featured_pair(root: Path) -> None:
    (root / _GGUF_PAIR).write_text("gpu: rtx-4090\nmodel: qwen2.5-coder-32b-instruct\nvariant: q4-k-m\n"
                                   "errors: [llamacpp-kv-cache-alloc-failed]\nintro: A GGUF build on the same card.\n", encoding="utf-8")


def _edit_pair_errors(root: Path) -> None:
    edit_yaml(root / _GGUF_PAIR, lambda d: d.update(errors=[*d["errors"], "ollama-partial-offload"]))


def _edit_error_short_name(root: Path) -> None:
    # Labels the error's links in every GPU and model table, and its pair pages' breadcrumbs.
    edit_yaml(root / "content/errors/ollama-partial-offload.yaml", lambda d: d.update(short_name="partial offload to the CPU"))


def _edit_error_pair_pages_off(root: Path) -> None:
    edit_yaml(root / "content/errors/llamacpp-kv-cache-alloc-failed.yaml", lambda d: d.update(pair_pages=False))


def _remove_featured_pair(root: Path) -> None:
    next((root / "content/pairs").glob("*.yaml")).unlink()


def test_a_resident_builder_equals_cold_builds_through_a_run_of_edits(root: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`kvtriage serve` keeps parses, numbers, planned pages and page keys between builds; after each
    edit of a run its site must still be what a cold build makes."""
    site = tmp_path / "site"
    resident = Resident()
    build_and_write(root, site, jobs=1, search=False, resident=resident)

    def next_day(root: Path) -> None:  # records edited from now on carry a later date
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1795910400 + 86400))
        _edit_error_prose(root)

    edits = [_edit_pair_intro, _edit_error_prose, _edit_gpu_buy_link, _add_featured_pair, _edit_pair_errors, _edit_error_short_name, next_day,
             _edit_pair_intro, _edit_gpu_memory, _edit_gpu_name, _edit_template, _edit_affiliate_program, _edit_site_author,
             _edit_model_variant, _edit_model_name, _edit_error_pair_pages_off, _remove_featured_pair]
    for step, edit in enumerate(edits):
        edit(root)
        report = build_and_write(root, site, jobs=1, search=False, resident=resident)
        assert tree(site) == cold(root, tmp_path / f"cold-{step}"), f"after {edit.__name__} (step {step})"
        if step == 0:  # the intro shows on its own page only (later, a newer date also reaches the home page)
            assert "rendered 1 of " in report
    assert read_manifest(site) == resident.published.manifest


def test_a_one_record_edit_renders_only_the_pages_that_show_it(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    _edit_pair_intro(root)
    scopes = []

    def spy(*args, scope=None):
        scopes.append(scope)
        return check_pages(*args, scope=scope)

    monkeypatch.setattr(build_facts, "check_pages", spy)
    report = build_and_write(root, site, jobs=2, search=False)
    assert "rendered 1 of " in report  # the featured pair's page: the intro shows nowhere else
    assert "0 pairs computed" in report
    assert len(scopes) == 1 and len(scopes[0]) == 1  # only that page's HTML is checked again


def test_a_rebuild_parses_only_the_files_that_changed(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator import load

    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    parsed = []
    real = load.parse_yaml
    monkeypatch.setattr(load, "parse_yaml", lambda path, data: parsed.append(path) or real(path, data))
    _edit_pair_intro(root)
    build_and_write(root, site, jobs=1, search=False)
    assert parsed == [next((root / "content/pairs").glob("*.yaml")).relative_to(root).as_posix()]


def test_a_gpu_edit_no_engine_reads_recomputes_no_pair(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    _edit_gpu_buy_link(root)
    assert "0 pairs computed" in build_and_write(root, site, jobs=1, search=False)
    _edit_gpu_memory(root)
    assert "0 pairs computed" not in build_and_write(root, site, jobs=1, search=False)


def test_a_flag_dropped_from_a_cli_surface_fails_the_rebuild_like_a_cold_build(root: Path, tmp_path: Path) -> None:
    # Unchanged pages are not re-checked page by page: the surfaces are part of every page's key.
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    before = tree(site)
    surface = root / "data/surfaces/vllm-serve-flags.txt"
    surface.write_text("\n".join(line for line in surface.read_text(encoding="utf-8").splitlines()
                                 if "--max-model-len" not in line) + "\n", encoding="utf-8")
    with pytest.raises(RenderError) as cold_failure:
        build_and_write(root, tmp_path / "cold", jobs=1, search=False)
    with pytest.raises(RenderError) as failure:
        build_and_write(root, site, jobs=1, search=False)
    assert "--max-model-len" in str(failure.value)
    assert len(failure.value.issues) == len(cold_failure.value.issues)
    assert tree(site) == before


def _failure(root: Path, out: Path) -> tuple[str, ...]:
    with pytest.raises(RenderError) as raised:
        build_and_write(root, out, jobs=1, search=False)
    return tuple(issue.format() for issue in raised.value.issues)


def test_a_broken_link_on_a_changed_page_fails_the_rebuild_like_a_cold_build(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    before = tree(site)
    edit_yaml(root / "content/errors/vllm-max-model-len-error.yaml",
              lambda d: d.update(cause=d["cause"].rstrip() + "\nSee [the guide](/no-such-guide/).\n"))
    incremental = _failure(root, site)
    assert any("/no-such-guide/" in line for line in incremental)
    assert incremental == _failure(root, tmp_path / "cold")
    assert tree(site) == before


def test_a_title_taken_from_an_unchanged_page_fails_the_rebuild_like_a_cold_build(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=1, search=False)
    other = yaml.safe_load((root / "content/errors/ollama-partial-offload.yaml").read_text(encoding="utf-8"))
    edit_yaml(root / "content/errors/llamacpp-kv-cache-alloc-failed.yaml", lambda d: d.update(title=other["title"]))
    incremental = _failure(root, site)
    assert any("is also the title of" in line for line in incremental)
    assert incremental == _failure(root, tmp_path / "cold")


def test_the_check_covers_the_whole_site_when_a_file_or_an_id_goes_away() -> None:
    old_ids, new_ids = {"a", "b"}, {"a"}

    class Facts:
        def __init__(self, ids):
            self.ids = ids

    class Blobs:
        def get(self, digest):
            return {"old": Facts(old_ids), "new": Facts(new_ids), "same": Facts(old_ids)}[digest]

    old = {"x/index.html": manifest_module.Entry("old", 1, 1, "k"), "y/index.html": manifest_module.Entry("same", 1, 1, "k")}
    kept = {"x/index.html": manifest_module.Entry("same", 1, 1, "k2"), "y/index.html": old["y/index.html"]}
    assert build_facts.check_scope(old, kept, ["x/index.html"], [], Blobs()) == {"/x/"}
    assert build_facts.check_scope(old, kept, ["x/index.html"], ["z/index.md"], Blobs()) is None
    lost = {"x/index.html": manifest_module.Entry("new", 1, 1, "k2"), "y/index.html": old["y/index.html"]}
    assert build_facts.check_scope(old, lost, ["x/index.html"], [], Blobs()) is None


def test_pages_of_a_deleted_record_disappear(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    assert (site / "gpus/test-card-8gb/index.html").is_file()
    gone = [p for p in tree(site) if "/test-card-8gb/" in f"/{p}"]
    assert any(p.startswith("oom/") for p in gone)
    edit_yaml(root / "data/gpus.yaml", lambda d: d.update(gpus=[g for g in d["gpus"] if g["id"] != "test-card-8gb"]))
    build_and_write(root, site, jobs=2, search=False)
    assert tree(site) == cold(root, tmp_path)
    assert not [p for p in site.rglob("*") if "test-card-8gb" in p.as_posix()], "files and their emptied folders go"


def test_outputs_edited_or_deleted_by_hand_are_restored(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    expected = tree(site)
    (site / "gpus/index.html").unlink()
    (site / "models/index.md").write_bytes(b"scribbled over")
    report = build_and_write(root, site, jobs=2, search=False)
    assert not report.startswith("nothing changed")
    assert tree(site) == expected


def test_a_failed_incremental_build_leaves_the_site_as_it_was(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    before, stamps = tree(site), mtimes(site)
    edit_yaml(root / "data/gpus.yaml", lambda d: d["gpus"][1].update(marketed_gb=-1))
    with pytest.raises(ContentError):
        build_and_write(root, site, jobs=2, search=False)
    assert tree(site) == before and mtimes(site) == stamps
    assert leftovers(tmp_path) == []


def test_an_interrupt_while_staging_leaves_the_site_as_it_was(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    before, stamps = tree(site), mtimes(site)
    recorded = manifest_path(site).read_bytes()
    _edit_gpu_memory(root)  # changes, adds and deletes pages
    real_link, real_same = Staging.link, staging_module.same_file
    calls = []

    def count(relative) -> None:
        calls.append(relative)
        if len(calls) == 7:
            raise KeyboardInterrupt("Ctrl-C mid-staging")

    # The whole tree staged (a link per unchanged file), or the spare settled (a look at each file).
    monkeypatch.setattr(Staging, "link", lambda self, relative, source: (count(relative), real_link(self, relative, source))[1])
    monkeypatch.setattr(staging_module, "same_file", lambda a, b: (count(str(a)), real_same(a, b))[1])
    with pytest.raises(KeyboardInterrupt):
        build_and_write(root, site, jobs=2, search=False)
    assert len(calls) == 7
    assert tree(site) == before and mtimes(site) == stamps
    assert manifest_path(site).read_bytes() == recorded
    assert leftovers(tmp_path) == []


def test_an_incremental_build_links_unchanged_files_and_publishes_by_one_rename(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=False)
    inodes = {p.relative_to(site).as_posix(): p.stat().st_ino for p in site.rglob("*") if p.is_file()}
    folder = site.stat().st_ino
    _edit_pair_intro(root)
    build_and_write(root, site, jobs=2, search=False)
    after = {p.relative_to(site).as_posix(): p.stat().st_ino for p in site.rglob("*") if p.is_file()}
    same = [path for path in after if inodes.get(path) == after[path]]
    assert len(same) > len(after) // 2  # unchanged files are the very same files, hard-linked
    assert site.stat().st_ino != folder  # the new tree took the folder's name whole
    assert tree(site) == cold(root, tmp_path)


def test_slim_facts_give_the_html_check_the_same_verdicts() -> None:
    rules = {"shop.example": AffiliateRule("shop.example", ("We earn a commission.",))}
    good = ('<html><head><title>t</title></head><body><section id="s"><h2>Buy</h2><p>We earn a\n commission.</p>'
            '<a href="https://shop.example/x" rel="sponsored noopener">x</a></section>'
            '<section id="other"><p>Long text that no check reads.</p></section></body></html>')
    bad = good.replace("We earn a\n commission.", "Nothing disclosed here.")
    for html, problems in ((good, 0), (bad, 1)):
        full, slim = page_links(html), slim_facts(page_links(html), rules)
        assert slim.sections[1] == []
        verdicts = []
        for facts in (full, slim):
            try:
                check_pages({"p/index.html"}, {"/p/": facts}, "https://site.example", rules)
                verdicts.append(())
            except RenderError as error:
                verdicts.append(tuple(i for i in error.issues if i.field == "disclosure"))
        assert verdicts[0] == verdicts[1]
        assert len(verdicts[0]) == problems


@pytest.mark.skipif(pagefind_executable() is None, reason="Pagefind is not installed")
def test_the_search_index_follows_incremental_builds_and_rolls_back_with_them(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=True)
    assert (site / "pagefind/pagefind.js").is_file() and (site / "pagefind-pairs/pagefind.js").is_file()
    _edit_error_prose(root)
    build_and_write(root, site, jobs=2, search=True)
    assert (site / "pagefind/pagefind.js").is_file()
    assert {p for p in tree(site) if not p.startswith(SEARCH_PREFIXES)} == set(cold(root, tmp_path))

    def broken(*args, **kwargs):
        raise RenderError([Issue("site", 1, 0, "search", "pagefind exited with 1")])

    monkeypatch.setattr(search_stage, "start_search", broken)
    # A pair page is indexed as its title up to the verdict: a new intro leaves what the index is
    # made from as it was, so the published index is kept and Pagefind does not run.
    index = {p: b for p, b in tree(site).items() if p.startswith(SEARCH_PREFIXES)}
    _edit_pair_intro(root)
    build_and_write(root, site, jobs=2, search=True)
    assert {p: b for p, b in tree(site).items() if p.startswith(SEARCH_PREFIXES)} == index
    # Indexed text that changes needs a new index; when Pagefind fails, the published site stays.
    before, stamps = tree(site), mtimes(site)
    _edit_error_prose(root, "Rewritten again for the index.")
    with pytest.raises(RenderError):
        build_and_write(root, site, jobs=2, search=True)
    assert tree(site) == before and mtimes(site) == stamps
    assert leftovers(tmp_path) == []


def _bundles_made(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Which search bundles each build runs Pagefind for (the pairs' one started while the pages
    render, the other once they are staged), in the order of the builds that run it."""
    made: list[list[str]] = []
    real_start, real_write = search_stage.start_search, incremental.write_incremental

    def recording(site_dir, executable, bundles, output=None, where=None):
        made[-1].extend(bundle.folder for bundle in bundles)
        return real_start(site_dir, executable, bundles, output, where)

    def one_build(*args, **kwargs):
        made.append([])
        try:
            return real_write(*args, **kwargs)
        finally:
            made[-1].sort()
            if not made[-1]:
                made.pop()

    monkeypatch.setattr(search_stage, "start_search", recording)
    monkeypatch.setattr(incremental, "write_incremental", one_build)
    return made


@pytest.mark.skipif(pagefind_executable() is None, reason="Pagefind is not installed")
def test_a_build_that_fails_while_the_pairs_bundle_is_made_stops_pagefind_and_leaves_the_site(root: Path, tmp_path: Path,
                                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=True)
    before, stamps = tree(site), mtimes(site)
    started = []
    real_start = search_stage.start_stubs

    def recording(*args, **kwargs):
        started.append(real_start(*args, **kwargs))
        return started[-1]

    def failing(*args, **kwargs):
        args[-1]()  # the workers have their tasks: the pairs' bundle starts
        raise RenderError([Issue("site", 1, 0, "render", "a page failed")])

    monkeypatch.setattr(incremental, "start_stubs", recording)
    monkeypatch.setattr(incremental, "render_pages", failing)
    # A pair's new title changes its stub: the pairs' bundle is made again, from the start of the render.
    monkeypatch.setattr(site_files, "search_stub", lambda page, stub=site_files.search_stub: stub(page).replace(b"</h1>", b" stub</h1>"))
    _edit_pair_intro(root)
    with pytest.raises(RenderError):
        build_and_write(root, site, jobs=2, search=True)
    assert len(started) == 1 and started[0] is not None and started[0].indexing.running == []
    assert not started[0].output.exists()
    assert tree(site) == before and mtimes(site) == stamps
    assert leftovers(tmp_path) == []


def _search_state(site: Path) -> tuple[dict[str, str], dict[str, dict[str, bytes]]]:
    """Each bundle's recorded sources digest, and its published files."""
    files = tree(site)
    digests = {folder: (state_dir(site) / kept_names(folder)[0]).read_text() for folder in SEARCH_FOLDERS}
    return digests, {folder: {p: b for p, b in files.items() if p.startswith(folder + "/")} for folder in SEARCH_FOLDERS}


@pytest.mark.skipif(pagefind_executable() is None, reason="Pagefind is not installed")
def test_each_search_bundle_is_made_again_only_when_its_own_sources_change(root: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    made = _bundles_made(monkeypatch)
    build_and_write(root, site, jobs=2, search=True)
    assert made == [["pagefind", "pagefind-pairs"]]  # a cold build makes both, side by side
    # An error's prose and a GPU's buy link change whole pages (the error's, the GPU's) and no pair
    # page's stub: only /pagefind/ is made again, and the pairs' bundle stays as published.
    for edit in (lambda: _edit_error_prose(root, "Only the whole pages' bundle follows."),
                 lambda: edit_yaml(root / "data/gpus.yaml", lambda d: d["gpus"][0].update(buy_query="RTX 4090 Founders Edition"))):
        digests, bundles = _search_state(site)
        edit()
        build_and_write(root, site, jobs=2, search=True)
        assert made[-1] == ["pagefind"]
        after, now = _search_state(site)
        assert after["pagefind"] != digests["pagefind"] and after["pagefind-pairs"] == digests["pagefind-pairs"]
        assert now["pagefind-pairs"] == bundles["pagefind-pairs"]
    assert len(made) == 3
    # Stubs that change (here their format; a pair's title in general) make only the pairs' bundle again.
    monkeypatch.setattr(site_files, "search_stub", lambda page, stub=site_files.search_stub: stub(page).replace(b"</h1>", b" stub</h1>"))
    digests, bundles = _search_state(site)
    _edit_pair_intro(root)
    build_and_write(root, site, jobs=2, search=True)
    assert made[-1] == ["pagefind-pairs"] and len(made) == 4
    after, now = _search_state(site)
    assert after["pagefind"] == digests["pagefind"] and now["pagefind"] == bundles["pagefind"]
    assert after["pagefind-pairs"] != digests["pagefind-pairs"]
    # A bundle gone from the site is made again, though no input changed.
    shutil.rmtree(site / "pagefind-pairs")
    build_and_write(root, site, jobs=2, search=True)
    assert made[-1] == ["pagefind-pairs"] and len(made) == 5
    cold = tmp_path / "cold"
    build_and_write(root, cold, jobs=2, search=True)
    assert tree(site) == tree(cold)


def test_the_facts_store_keeps_live_facts_and_compacts_its_file(tmp_path: Path) -> None:
    from generator.build.facts import FactsStore, pack_facts
    from generator.check.plan_meta import PageMeta

    rules = {}
    pages = {f"d{i}": pack_facts(f'<!doctype html><title>Page {i}</title><a id="x{i}" href="/p{i}/">x</a>'.encode(), rules,
                                  PageMeta(f"Page {i}", None, False, None, False, ()))
             for i in range(10)}
    store = FactsStore(tmp_path, "v1", reuse=False)
    for digest, (summary, blob) in pages.items():
        store.add(digest, summary, blob)
    store.save(set(pages))
    store.close()

    again = FactsStore(tmp_path, "v1", reuse=True)
    assert again.summary("d3")[0] == "Page 3" and again.get("d3").ids == {"x3"}
    again.save({"d1", "d2"})  # most of the file is dead now: rewritten under the next generation
    again.close()
    assert sorted(p.name for p in tmp_path.glob("facts-*.bin")) == ["facts-1.bin"]

    third = FactsStore(tmp_path, "v1", reuse=True)
    assert "d3" not in third and third.get("d2").ids == {"x2"}
    third.close()
    assert "d1" not in FactsStore(tmp_path, "v2", reuse=True)  # another code or rule version starts over


def test_the_manifest_written_in_pieces_is_one_json_document(tmp_path: Path) -> None:
    files = {f"p{i}/\u00e9\"{i}/index.html": manifest_module.Entry(f"{i:064x}", i * 7, i * 10**12, None if i % 3 else f"key{i}") for i in range(50)}
    manifest = manifest_module.Manifest("inputs", files, "render")
    whole = {"format": manifest_module.MANIFEST_FORMAT, "inputs": "inputs", "render": "render",
             "files": {path: [e.sha, e.size, e.mtime_ns, e.key] for path, e in sorted(files.items())}}
    for size in (1, 7, 50, 4096):
        assert b"".join(manifest.parts(size)) == json.dumps(whole, separators=(",", ":")).encode()
    state_dir(tmp_path / "site").mkdir(parents=True)
    write_manifest(tmp_path / "site", manifest)
    assert read_manifest(tmp_path / "site") == manifest
    assert b"".join(manifest_module.Manifest("i", {}, "r").parts()) == b'{"format":%d,"inputs":"i","render":"r","files":{}}' % manifest_module.MANIFEST_FORMAT


def test_a_whole_site_check_split_across_workers_reports_as_the_serial_check(root: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Every pair page links somewhere the build does not produce, and two pages share a description.
    template = root / "templates/pair.html"
    template.write_text(template.read_text(encoding="utf-8").replace("</article>", '<a href="/nowhere/#x">x</a></article>', 1),
                        encoding="utf-8")
    errors = root / "content/errors"
    taken = yaml.safe_load((errors / "llamacpp-kv-cache-alloc-failed.yaml").read_text(encoding="utf-8"))["description"]
    edit_yaml(errors / "ollama-partial-offload.yaml", lambda d: d.update(description=taken))
    monkeypatch.setattr(build_facts, "_PARALLEL_CHECK_PAGES", 0)
    found = {}
    for jobs in (1, 2):
        with pytest.raises(RenderError) as failure:
            build_and_write(root, tmp_path / f"site-{jobs}", jobs=jobs, search=False)
        found[jobs] = [issue.format() for issue in failure.value.issues]
    assert found[1] == found[2]
    assert sum("/nowhere/" in line for line in found[2]) > 10
    assert any(": title: " in line or ": description: " in line for line in found[2])  # the part checked once


@pytest.mark.skipif(pagefind_executable() is None, reason="Pagefind is not installed")
def test_the_folder_pagefind_reads_in_any_state_gives_the_index_a_cold_build_gives(root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(root, site, jobs=2, search=True)
    sources = state_dir(site) / kept_names("pagefind")[1]
    pages = sorted(sources.rglob("*.html"))
    assert len(pages) > 10
    (sources / "foreign/index.html").parent.mkdir(parents=True)
    (sources / "foreign/index.html").write_text("<html><body><main>Not a page of the site</main></body></html>")
    pages[0].unlink()
    pages[0].write_text("<html><body><main>scribbled over</main></body></html>")
    pages[1].unlink()
    pages[1].symlink_to("/etc/hostname")
    _edit_error_prose(root, "Indexed anew.")
    build_and_write(root, site, jobs=2, search=True)
    cold = tmp_path / "cold"
    build_and_write(root, cold, jobs=2, search=True)
    assert tree(site) == tree(cold)


class Inputs(NamedTuple):  # a view's inputs, as the planner's PairInputs: a record of fields, some of them shared lists
    name: str
    links: list


def test_a_page_key_follows_the_contents_of_the_lists_pages_share() -> None:
    """Keys hash each list a view's inputs share once per build: equal contents give equal keys,
    whatever list object holds them, and different contents different keys."""
    from generator.build.render_stage import _shared_lists_hashed
    from generator.write.fingerprint import ValueDigest

    digest = ValueDigest()
    shared = [{"label": "Buy", "url": "https://example.com/a"}]
    first = digest(_shared_lists_hashed(digest, (Inputs("a", shared), "meta")))
    assert first is not None
    assert digest(_shared_lists_hashed(digest, (Inputs("a", shared), "meta"))) == first
    assert digest(_shared_lists_hashed(ValueDigest(), (Inputs("a", [dict(shared[0])]), "meta"))) == first
    assert digest(_shared_lists_hashed(digest, (Inputs("a", [{"label": "Buy", "url": "https://example.com/b"}]), "meta"))) != first
    assert _shared_lists_hashed(digest, ("not a record", "meta")) == ("not a record", "meta")
