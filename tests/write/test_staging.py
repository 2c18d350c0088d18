"""A build publishes by one rename: whatever kills it, the site folder holds the old site or the new
one, byte for byte. Builds of one folder take turns, and what a killed build left is cleaned up."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from generator.build.incremental import build_and_write
from generator.write.guard import MARKER_NAME
from generator.write.staging import SPARE_NAME, Staging
from generator.write.state import state_dir

from ..conftest import REPO


def tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _build_command(root: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "generator", "build", "--root", str(root), "--out", str(out), "--quiet", "--no-search", "--jobs", "2"]


def _set_version(root: Path, version: str) -> None:
    """Two versions of the site that differ on many pages: one error's prose, which every one of its pages shows."""
    path = root / "content/errors/vllm-max-model-len-error.yaml"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    record["cause"] = re.sub(r"^Version \w+ of this text\. ", "", record["cause"])
    record["cause"] = f"Version {version} of this text. " + record["cause"]
    path.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def synthetic_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic site of about a thousand pair pages (bench/make_synthetic.py)."""
    root = tmp_path_factory.mktemp("synthetic") / "root"
    subprocess.run([sys.executable, str(REPO / "bench/make_synthetic.py"), "1000", str(root)], check=True, capture_output=True,
                   cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    return root


def _build_must_pass(root: Path, site: Path, when: str = "") -> None:
    done = subprocess.run(_build_command(root, site), capture_output=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, f"build {when} failed: {done.stderr.decode()[-3000:]}"


def test_a_build_killed_at_any_point_leaves_the_old_site_or_the_new_one(synthetic_root: Path, tmp_path: Path) -> None:
    root, site = synthetic_root, tmp_path / "site"
    versions: dict[str, dict[str, bytes]] = {}
    durations = []
    for version in ("a", "b"):
        _set_version(root, version)
        started = time.monotonic()
        _build_must_pass(root, site)
        durations.append(time.monotonic() - started)
        versions[version] = tree(site)
    assert len(versions["a"]) > 1500 and versions["a"] != versions["b"]
    changed = sum(1 for path in versions["a"] if versions["a"][path] != versions["b"].get(path))
    assert changed > 100
    current, seen = "b", set()
    # Kill points spread over an incremental build, early to late (its length measured just above).
    for fraction in (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 1.1):
        target = "a" if current == "b" else "b"
        _set_version(root, target)
        child = subprocess.Popen(_build_command(root, site), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        try:
            child.wait(timeout=fraction * durations[1])
        except subprocess.TimeoutExpired:
            child.kill()
        child.wait(timeout=600)
        now = tree(site)
        assert now in (versions["a"], versions["b"]), f"killed at {fraction:.0%}: the site is neither version"
        seen.add("old" if now == versions[current] else "new")
        _build_must_pass(root, site, f"after a kill at {fraction:.0%}")  # finishes, cleans up
        assert tree(site) == versions[target]
        left = [sorted(p.relative_to(state_dir(site)).as_posix() for p in stage.rglob("*"))[:5] for stage in state_dir(site).glob("stage-*")]
        assert not left, f"killed at {fraction:.0%}: the build after it left {left}"
        current = target
    assert "old" in seen
    time.sleep(1)  # a worker sees its parent gone within moments
    left = subprocess.run(["pgrep", "-f", "--", f"--out {site} "], capture_output=True, text=True).stdout.split()
    assert left == [], "render workers of a killed build outlived it"


def test_three_builds_at_once_take_turns(site_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    children = [subprocess.Popen(_build_command(site_root, site), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
                for _ in range(3)]
    results = [child.communicate(timeout=600) for child in children]
    assert [child.returncode for child in children] == [0, 0, 0], [err.decode() for _, err in results]
    assert not any(b"Traceback" in err for _, err in results)
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)


def test_what_a_killed_build_left_is_removed_by_the_next(site_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    stale = state_dir(site) / "stage-abcd1234"
    (stale / "oom").mkdir(parents=True)
    (stale / "oom/index.html").write_text("half a site")
    older = tmp_path / ".site.old-k2j4h5g6"  # what an older kvtriage left beside the site
    older.mkdir()
    unrelated = tmp_path / ".site.notes"
    unrelated.mkdir()
    (site_root / "data/site.yaml").write_text((site_root / "data/site.yaml").read_text() + "\n")
    build_and_write(site_root, site, jobs=1, search=False)
    assert not stale.exists() and not older.exists()
    assert unrelated.is_dir()
    assert (site / MARKER_NAME).is_file()


def test_a_full_disk_stops_the_build_with_a_message_and_leaves_nothing_half_written(site_root: Path, tmp_path: Path,
                                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from generator.cli import main

    disk = tmp_path / "tiny"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        assert main(["build", "--root", str(site_root), "--out", str(disk / "site"), "--quiet", "--no-search"]) == 1
        err = capsys.readouterr().err
        assert "No space left on device" in err and "Traceback" not in err
        assert not (disk / "site").exists()
        assert not list(disk.glob(".kvtriage-cache/*/stage-*"))
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def _edit_pair_intro(root: Path, sentence: str) -> None:
    """One page's text: a featured pair's intro."""
    path = sorted((root / "content/pairs").glob("*.yaml"))[0]
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    record["intro"] = re.sub(r" Round \w+\.$", "", record["intro"].rstrip()) + f" {sentence}"
    path.write_text(yaml.safe_dump(record, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_the_spare_tree_in_any_state_gives_the_tree_a_cold_build_gives(site_root: Path, tmp_path: Path) -> None:
    site, spare = tmp_path / "site", state_dir(tmp_path / "site") / SPARE_NAME
    build_and_write(site_root, site, jobs=1, search=False)
    _edit_pair_intro(site_root, "Round a.")
    build_and_write(site_root, site, jobs=1, search=False)
    assert spare.is_dir(), "the tree the publish replaced is kept"
    shared = next(p for p in sorted(spare.rglob("*.html")) if p.stat().st_ino == (site / p.relative_to(spare)).stat().st_ino)
    # What a hand, or a build killed while settling the spare, may leave there.
    (spare / "foreign.html").write_text("not the site's")
    (spare / "oom/extra").mkdir(parents=True, exist_ok=True)
    (spare / "oom/extra/index.html").write_text("not the site's either")
    (spare / "gpus/index.html").unlink(missing_ok=True)
    (spare / "models/index.md").unlink(missing_ok=True)
    (spare / "models/index.md").write_text("replaced by hand")
    (spare / "robots.txt").unlink(missing_ok=True)
    (spare / "robots.txt").symlink_to("/etc/hostname")
    published = tree(site)
    _edit_pair_intro(site_root, "Round b.")
    build_and_write(site_root, site, jobs=1, search=False)
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)
    assert not any(p.is_symlink() for p in site.rglob("*"))
    assert tree(spare) == published, "the spare is now the tree this build replaced, and the settling wrote into no file"
    assert shared.read_bytes() == published[shared.relative_to(spare).as_posix()]


def test_a_one_record_edit_settles_the_spare_without_restaging_the_site(site_root: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_and_write(site_root, site, jobs=1, search=False)
    for round_ in ("a", "b"):
        _edit_pair_intro(site_root, f"Round {round_}.")
        build_and_write(site_root, site, jobs=1, search=False)
    links = []
    real_link = Staging.link
    monkeypatch.setattr(Staging, "link", lambda self, relative, source: (links.append(relative), real_link(self, relative, source)))
    _edit_pair_intro(site_root, "Round c.")
    build_and_write(site_root, site, jobs=1, search=False)
    files = len(tree(site))
    assert len(links) < files // 4, f"{len(links)} of {files} files linked anew"
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False)
    assert tree(site) == tree(cold)
