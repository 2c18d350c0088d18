"""A build replaces only a folder it may: never the root, a source folder, a folder holding either,
a file, or a folder it did not write (unless --force, which still spares the root and the sources)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from generator.cli import main
from generator.write.guard import MARKER_NAME, SEARCH_FOLDERS, build_owned


def fingerprint(folder: Path) -> str:
    """Every path, link target and file's bytes under folder (a deletion or change shows)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(path.relative_to(folder).as_posix().encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def build(*args: str) -> int:
    return main(["build", "--quiet", "--no-search", *args])


@pytest.mark.parametrize("out", [".", "content", "data", "templates", "content/errors", "..", "data/../."])
def test_a_build_refuses_the_root_its_sources_and_what_holds_them(site_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str], out: str) -> None:
    monkeypatch.chdir(site_root)
    (site_root / ".git").mkdir()
    (site_root / ".git/HEAD").write_text("ref: refs/heads/main\n")
    before = fingerprint(site_root.parent)
    for force in ([], ["--force"]):
        assert build("--out", out, *force) == 1
        assert "--out:" in capsys.readouterr().err
    assert fingerprint(site_root.parent) == before


def test_a_build_refuses_a_folder_it_did_not_write_unless_forced(site_root: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"\xff\xd8 not a site")
    assert build("--root", str(site_root), "--out", str(foreign)) == 1
    err = capsys.readouterr().err
    assert f"{foreign}:0: --out: is a folder kvtriage did not write" in err and "--force" in err
    assert (foreign / "holiday.jpg").read_bytes() == b"\xff\xd8 not a site"
    assert build("--root", str(site_root), "--out", str(foreign), "--force") == 0
    assert not (foreign / "holiday.jpg").exists() and (foreign / MARKER_NAME).is_file()


def test_a_build_refuses_a_file_a_link_and_an_unrelated_folders_parent(site_root: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    note = tmp_path / "notes.txt"
    note.write_text("keep me")
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    before = fingerprint(tmp_path)
    assert build("--root", str(site_root), "--out", str(note)) == 1
    assert "is a file" in capsys.readouterr().err
    assert build("--root", str(site_root), "--out", str(link), "--force") == 1
    assert "symbolic link" in capsys.readouterr().err
    assert build("--root", str(site_root), "--out", str(tmp_path), "--force") == 1  # holds the root
    assert fingerprint(tmp_path) == before


def test_a_build_replaces_an_empty_folder_and_its_own_site(site_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert build("--root", str(site_root), "--out", str(out)) == 0
    assert (out / "index.html").is_file() and (out / MARKER_NAME).is_file()
    (site_root / "data/site.yaml").write_text((site_root / "data/site.yaml").read_text() + "\n")
    assert build("--root", str(site_root), "--out", str(out)) == 0


def test_files_added_to_a_built_site_are_not_dropped_unless_forced(site_root: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert build("--root", str(site_root), "--out", str(out)) == 0
    (out / "CNAME").write_text("kvtriage.example\n")
    (site_root / "content/errors/vllm-max-model-len-error.yaml").write_text(
        (site_root / "content/errors/vllm-max-model-len-error.yaml").read_text() + "\n# edited\n")
    assert build("--root", str(site_root), "--out", str(out)) == 1
    assert "holds files no kvtriage build wrote (CNAME)" in capsys.readouterr().err
    assert (out / "CNAME").read_text() == "kvtriage.example\n"
    assert build("--root", str(site_root), "--out", str(out), "--force") == 0
    assert not (out / "CNAME").exists()


def test_a_site_built_before_the_marker_is_still_replaced(site_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("old")
    (out / ".kvtriage-manifest.json").write_text("{}")
    assert build("--root", str(site_root), "--out", str(out)) == 0
    assert not (out / ".kvtriage-manifest.json").exists()


def test_files_on_disk_tells_files_from_links_without_following_them(tmp_path: Path) -> None:
    from generator.write.guard import files_on_disk

    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/b/index.html").write_text("x")
    (tmp_path / "top.txt").write_text("y")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/hidden.html").write_text("z")
    os.symlink(tmp_path / "elsewhere", tmp_path / "a/linked-folder")
    os.symlink(tmp_path / "top.txt", tmp_path / "a/linked-file")
    os.symlink(tmp_path / "nowhere", tmp_path / "a/b/broken")
    os.mkfifo(tmp_path / "a/pipe")
    files, links = files_on_disk(tmp_path)
    assert files == {"a/b/index.html", "top.txt", "elsewhere/hidden.html", "a/pipe"}
    assert links == {"a/linked-folder", "a/linked-file", "a/b/broken"}
    assert files_on_disk(tmp_path / "missing") == (set(), set())


def test_the_marker_and_the_search_bundles_are_the_builds_own_without_a_manifest_entry() -> None:
    assert build_owned(MARKER_NAME) and build_owned("pagefind/pagefind.js")
    assert build_owned("pagefind-pairs/fragment/en_1a2b3c.pf_fragment")
    assert SEARCH_FOLDERS == ("pagefind", "pagefind-pairs")  # the primary bundle first: the search page loads it
    for foreign in ("pagefind", "pagefind-pairs", "pagefind-old/pagefind.js", "gpus/pagefind/x.js", "holiday.jpg"):
        assert not build_owned(foreign), foreign
