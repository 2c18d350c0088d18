"""write/search_index.py with a stand-in for Pagefind: the bundles are made side by side, each from
its own sources, and one that fails fails the build, naming its folder."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from generator.errors import RenderError
from generator.write.search_index import Bundle, kept_names, start_search

# Stands in for Pagefind: notes its start, waits (up to 20 s) until every other bundle's process has
# started too, then writes the bundle (read.txt: the pages it read, one a line) or fails where FAIL
# names its folder. From a folder (--site) it starts at once; as the service (--service) it answers each
# message and starts at WriteFiles, when it knows the folder.
FAKE = """#!{python}
import base64, json, os, sys, time

def bundle(output, read):
    name = os.path.basename(output)
    open(os.path.join(os.environ["LOG"], "started-" + name), "w").close()
    for _ in range(200):
        if sum(n.startswith("started-") for n in os.listdir(os.environ["LOG"])) >= int(os.environ["EXPECT"]):
            break
        time.sleep(0.1)
    else:
        sys.exit("ran alone")
    if name == os.environ["FAIL"]:
        print("no index for " + name, file=sys.stderr)
        sys.exit(3)
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, "read.txt"), "w") as handle:
        handle.write("".join(path + "\\n" for path in sorted(read)))

if sys.argv[1] == "--site":
    site, output = sys.argv[2], sys.argv[4]
    bundle(output, [os.path.join(folder, name) for folder, _, names in os.walk(site) for name in names if name.endswith(".html")])
    sys.exit(0)
read, pending = [], b""
while chunk := sys.stdin.buffer.read1(1 << 16):
    *messages, pending = (pending + chunk).split(b",")
    for message in messages:
        message = json.loads(base64.b64decode(message))
        payload = message["payload"]
        if payload["type"] == "AddFile":
            read.append(payload["file_path"])
        elif payload["type"] == "WriteFiles":
            bundle(payload["output_path"], read)
        answer = json.dumps({{"message_id": message["message_id"], "payload": {{"type": payload["type"]}}}})
        sys.stdout.buffer.write(base64.b64encode(answer.encode()) + b",")
        sys.stdout.buffer.flush()
"""


@pytest.fixture
def pagefind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "pagefind"
    script.write_text(FAKE.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "log").mkdir()
    monkeypatch.setenv("LOG", str(tmp_path / "log"))
    monkeypatch.setenv("EXPECT", "2")
    monkeypatch.setenv("FAIL", "")
    return script


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "stage" / "tree"
    for path in ("gpus/a/index.html", "oom/e/a/m/index.html", "oom/e/b/m/index.html"):
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(f"<html><body><main data-pagefind-body>{path}</main></body></html>")
    return site


def _bundles(tmp_path: Path) -> list[Bundle]:
    stub = b"<html><body><main data-pagefind-body><h1>stub</h1></main></body></html>"
    return [Bundle("pagefind", (("gpus/a/index.html", None),), tmp_path / "state" / kept_names("pagefind")[1]),
            Bundle("pagefind-pairs", (("oom/e/a/m/index.html", stub), ("oom/e/b/m/index.html", stub)), None)]


def test_the_bundles_are_made_side_by_side_each_from_its_own_sources(tmp_path: Path, pagefind: Path) -> None:
    site = _site(tmp_path)
    start_search(site, str(pagefind), _bundles(tmp_path)).wait()
    whole = (site / "pagefind/read.txt").read_text().split()
    pairs = (site / "pagefind-pairs/read.txt").read_text().split()
    assert [Path(p).relative_to(tmp_path / "state/search-sources").as_posix() for p in whole] == ["gpus/a/index.html"]
    assert pairs == ["oom/e/a/m/index.html", "oom/e/b/m/index.html"]  # the stubs, through the service: no folder
    assert sorted(p.name for p in (tmp_path / "log").iterdir()) == ["started-pagefind", "started-pagefind-pairs"]
    # the kept folder stays for the next build; the stubs leave no folder
    assert (tmp_path / "state/search-sources/gpus/a/index.html").is_file()
    assert not list((tmp_path / "stage").glob("stage-index-*"))


def test_a_bundle_that_fails_fails_the_build_by_its_folder(tmp_path: Path, pagefind: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIL", "pagefind-pairs")
    site = _site(tmp_path)
    with pytest.raises(RenderError) as failed:
        start_search(site, str(pagefind), _bundles(tmp_path)).wait()
    assert [issue.message for issue in failed.value.issues] == ["pagefind (pagefind-pairs/) exited with 3: no index for pagefind-pairs"]
    assert not list((tmp_path / "stage").glob("stage-index-*"))


def test_the_state_names_of_each_bundle() -> None:
    assert kept_names("pagefind") == ("search-index.sha", "search-sources")
    assert kept_names("pagefind-pairs") == ("search-index-pairs.sha", "search-sources-pairs")
