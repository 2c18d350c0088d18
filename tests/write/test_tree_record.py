"""A tree's folder stamps stand in for listing the folders that did not change, and for nothing else:
whatever was done to a tree after its stamps were taken, list_tree with the record finds what a full
listing finds. Builds record the published tree's stamps (and the spare's) in the manifest; a file
added deep in a built site is still refused, and a spare changed by hand still settles exactly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import generator.write.tree_record as tree_record
from generator.build.incremental import build_and_write
from generator.cli import main as cli_main
from generator.write.manifest import read_manifest
from generator.write.staging import SPARE_NAME, folders_of
from generator.write.state import state_dir
from generator.write.tree_record import list_tree, stamps

from .test_staging import _edit_pair_intro, tree


@pytest.fixture(autouse=True)
def _no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders changed within the last second are not stamped (their change time could still move
    unseen); these tests stamp what they made a moment ago."""
    monkeypatch.setattr(tree_record, "_RACY_NS", 0)


FILES = ("index.html", "a/index.html", "a/b/index.html", "a/b/index.md", "a/c/index.html", "d/e/f/index.html")


def _make(root: Path) -> dict:
    for path in FILES:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path)
    return stamps(root, folders_of(FILES))


def _same_as_full_listing(root: Path, recorded: dict) -> None:
    fast, full = list_tree(root, recorded, FILES), list_tree(root)
    assert (fast.files, fast.links, fast.folders) == (full.files, full.links, full.folders)


def _add_deep(root: Path) -> None:
    (root / "a/b/foreign.html").write_text("x")


def _add_folder(root: Path) -> None:
    (root / "d/e/new/deeper").mkdir(parents=True)
    (root / "d/e/new/deeper/x.html").write_text("x")


def _remove(root: Path) -> None:
    (root / "a/c/index.html").unlink()


def _folder_to_link(root: Path) -> None:
    # The folder moved elsewhere, unchanged (its own stamp as recorded), and a link put in its place.
    shutil.move(root / "a/b", root.parent / "moved-b")
    (root / "a/b").symlink_to(root.parent / "moved-b")


def _file_to_link(root: Path) -> None:
    (root / "a/index.html").unlink()
    (root / "a/index.html").symlink_to("/etc/hostname")


def _rename(root: Path) -> None:
    os.rename(root / "d/e/f/index.html", root / "d/e/f/other.html")


def _pipe(root: Path) -> None:
    os.mkfifo(root / "d/pipe")


@pytest.mark.parametrize("change", [lambda root: None, _add_deep, _add_folder, _remove, _folder_to_link, _file_to_link, _rename, _pipe],
                         ids=["nothing", "file-added-deep", "folder-added", "file-removed", "folder-to-link", "file-to-link",
                              "renamed", "pipe"])
def test_a_recorded_tree_lists_as_a_full_listing_does_whatever_changed(tmp_path: Path, change) -> None:
    root = tmp_path / "tree"
    recorded = _make(root)
    change(root)
    _same_as_full_listing(root, recorded)


@pytest.mark.parametrize("unstamped", [{"a/b"}, {"d", "d/e"}, {""}, {"a", "a/b", "a/c", "d/e/f"}])
def test_folders_the_record_has_no_stamp_for_are_listed(tmp_path: Path, unstamped: set[str]) -> None:
    root = tmp_path / "tree"
    recorded = {folder: stamp for folder, stamp in _make(root).items() if folder not in unstamped}
    trusted = list_tree(root, recorded, FILES).trusted
    assert trusted <= set(recorded) and (trusted == set(recorded) or "" in unstamped)
    _same_as_full_listing(root, recorded)
    _add_deep(root)
    _same_as_full_listing(root, recorded)


def test_unchanged_folders_are_taken_from_the_record_and_another_trees_record_is_not(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    recorded = _make(root)
    assert list_tree(root, recorded, FILES).trusted == set(recorded)
    _add_deep(root)
    assert list_tree(root, recorded, FILES).trusted == set(recorded) - {"a/b"}
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)  # the same names, other folders: nothing is trusted
    assert list_tree(copy, recorded, FILES).trusted == set()
    _same_as_full_listing(copy, recorded)


def test_a_build_records_its_tree_and_a_file_added_deep_in_the_site_is_still_refused(site_root: Path, tmp_path: Path,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    _edit_pair_intro(site_root, "Round a.")
    build_and_write(site_root, site, jobs=1, search=False)
    manifest = read_manifest(site)
    assert manifest.tree is not None and manifest.spare is not None
    assert list_tree(site, manifest.tree.folders, manifest.files, skip=("pagefind", "pagefind-pairs")).trusted == set(manifest.tree.folders)
    deep = next(p for p in sorted(site.rglob("*")) if p.is_dir() and len(p.relative_to(site).parts) >= 3)
    (deep / "notes.txt").write_text("mine")
    _edit_pair_intro(site_root, "Round b.")
    args = ["build", "--root", str(site_root), "--out", str(site), "--quiet", "--no-search", "--jobs", "1"]
    assert cli_main(args) == 1
    assert "notes.txt" in capsys.readouterr().err
    assert cli_main([*args, "--force"]) == 0
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)


def test_a_spare_changed_deep_by_hand_settles_to_the_cold_tree(site_root: Path, tmp_path: Path) -> None:
    site, spare = tmp_path / "site", state_dir(tmp_path / "site") / SPARE_NAME
    build_and_write(site_root, site, jobs=1, search=False)
    for round_ in ("a", "b"):
        _edit_pair_intro(site_root, f"Round {round_}.")
        build_and_write(site_root, site, jobs=1, search=False)
    folders = sorted((p for p in spare.rglob("*") if p.is_dir() and not p.is_symlink()), key=lambda p: -len(p.parts))
    (folders[0] / "foreign.html").write_text("not the site's")
    victim = next(p for p in folders[1:] if len(p.parts) == len(folders[0].parts))
    shutil.move(victim, tmp_path / "elsewhere")
    victim.symlink_to(tmp_path / "elsewhere")
    next(p for p in folders[2:] if any(p.glob("*.md"))).joinpath("index.md").unlink(missing_ok=True)
    _edit_pair_intro(site_root, "Round c.")
    build_and_write(site_root, site, jobs=1, search=False)
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)
    assert not any(p.is_symlink() for p in site.rglob("*"))


def test_the_spare_record_names_every_file_out_holds_other_bytes_under(site_root: Path, tmp_path: Path) -> None:
    # settle() keeps, without a look, a file in an unchanged folder of the spare that the record does
    # not name as differing: it must be out's very file.
    site, spare = tmp_path / "site", state_dir(tmp_path / "site") / SPARE_NAME
    build_and_write(site_root, site, jobs=1, search=False)
    for round_ in ("a", "b", "c"):
        _edit_pair_intro(site_root, f"Round {round_}.")
        build_and_write(site_root, site, jobs=1, search=False)
        manifest = read_manifest(site)
        record = manifest.spare
        assert record is not None and record.differing
        held = record.files(manifest.files)
        assert held == {p.relative_to(spare).as_posix() for p in spare.rglob("*") if p.is_file()} - {".kvtriage-site"}
        for path in held & manifest.files.keys() - record.differing:
            assert os.path.samefile(spare / path, site / path), path
        for path in record.differing:
            assert not os.path.samefile(spare / path, site / path), path


def test_a_folder_changed_within_the_last_second_is_not_stamped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tree"
    _make(root)
    monkeypatch.setattr(tree_record, "_RACY_NS", 60 * 10**9)
    assert stamps(root, folders_of(FILES)) == {}


def test_the_folders_an_edit_just_wrote_are_listed_next_time_and_nothing_renders_again(site_root: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_record, "_RACY_NS", 60 * 10**9)  # every folder too fresh to stamp but the ones a minute old: none
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    monkeypatch.setattr(tree_record, "_RACY_NS", 0)
    _edit_pair_intro(site_root, "Round a.")
    build_and_write(site_root, site, jobs=1, search=False)  # stamps every folder
    monkeypatch.setattr(tree_record, "_RACY_NS", 60 * 10**9)
    _edit_pair_intro(site_root, "Round b.")
    assert "rendered 1 of" in build_and_write(site_root, site, jobs=1, search=False)  # stamps none
    manifest = read_manifest(site)
    assert manifest.tree is not None and manifest.tree.folders == {}
    _edit_pair_intro(site_root, "Round c.")
    assert "rendered 1 of" in build_and_write(site_root, site, jobs=1, search=False)
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)
