"""serve: the last good build on 127.0.0.1, rebuilt on change, with problems shown in page and terminal."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from generator.devserver.serve import DevServer, DevSite

from ..conftest import FIXED_TODAY

ERROR_PAGE = "oom/vllm-max-model-len-error/"


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
        return None


def _page(body: bytes) -> bytes:
    """A served page without what serve injects before </body>."""
    return body.split(b'<link rel="stylesheet" href="/__kvtriage/dev.css">')[0]


def _version(server: DevServer) -> dict:
    return json.loads(_get(server.url + "__kvtriage/version")[2])


def _wait_for_version(server: DevServer, above: int, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = _version(server)
        if state["version"] > above:
            return state
        time.sleep(0.05)
    raise AssertionError(f"no rebuild within {seconds}s")


@pytest.fixture
def running(site_root: Path) -> Iterator[tuple[DevServer, io.StringIO]]:
    log = io.StringIO()
    server = DevServer(site_root, port=0, log=log, today=FIXED_TODAY)  # port 0: a free port
    stop = threading.Event()
    watcher = threading.Thread(target=server.watch, args=(stop, 0.05), daemon=True)
    try:
        server.site.rebuild()
        server.start()
        watcher.start()
        yield server, log
    finally:
        stop.set()
        if watcher.is_alive():
            watcher.join(timeout=60)
        server.close()


def test_serves_pages_with_the_reload_script(running: tuple[DevServer, io.StringIO]) -> None:
    server, _ = running
    assert server.url.startswith("http://127.0.0.1:")
    status, headers, body = _get(server.url + ERROR_PAGE)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b'<script src="/__kvtriage/reload.js" data-version="1"></script>' in body
    assert b"kvtriage-problems" not in body
    status, headers, body = _get(server.url + ERROR_PAGE + "index.md")
    assert status == 200 and headers["Content-Type"].startswith("text/markdown") and b"reload.js" not in body
    status, headers, _ = _get(server.url + ERROR_PAGE.rstrip("/"))
    assert status == 301 and headers["Location"] == "/" + ERROR_PAGE
    assert _get(server.url + "__kvtriage/reload.js")[0] == 200
    assert _version(server) == {"version": 1, "problems": []}


@pytest.mark.parametrize("path", ["../../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "..%2f..%2fdata/gpus.yaml", "data/gpus.yaml"])
def test_nothing_outside_the_build_is_served(running: tuple[DevServer, io.StringIO], path: str) -> None:
    server, _ = running
    status, _, body = _get(server.url + path)
    assert status == 404
    assert b"root:" not in body and b"cuda_total_bytes" not in body


def test_a_bad_record_keeps_the_last_good_build_and_shows_its_problems(running: tuple[DevServer, io.StringIO], site_root: Path) -> None:
    server, log = running
    good = _get(server.url + ERROR_PAGE)[2]
    gpus = site_root / "data/gpus.yaml"
    original = gpus.read_text(encoding="utf-8")
    gpus.write_text(original.replace("marketed_gb: 24", "marketed_gb: -24", 1), encoding="utf-8")
    state = _wait_for_version(server, 1)
    assert any(p.startswith("data/gpus.yaml:") and "marketed_gb" in p for p in state["problems"]), state
    status, _, body = _get(server.url + ERROR_PAGE)
    assert status == 200
    assert b'id="kvtriage-problems"' in body and b"data/gpus.yaml:" in body
    assert _page(body) == _page(good)  # the last good build, plus the overlay
    assert "build failed, still serving the last good build" in log.getvalue()
    assert "data/gpus.yaml:" in log.getvalue()

    gpus.write_text(original, encoding="utf-8")
    state = _wait_for_version(server, state["version"])
    assert state["problems"] == []
    assert b"kvtriage-problems" not in _get(server.url + ERROR_PAGE)[2]


def test_edited_templates_are_picked_up(running: tuple[DevServer, io.StringIO], site_root: Path) -> None:
    server, _ = running
    template = site_root / "templates/base.html"
    template.write_text(template.read_text(encoding="utf-8").replace("</body>", "<p>edited-template-marker</p></body>"), encoding="utf-8")
    _wait_for_version(server, 1)
    assert b"edited-template-marker" in _get(server.url + ERROR_PAGE)[2]


def test_a_site_that_never_built_shows_the_problems(site_root: Path) -> None:
    gpus = site_root / "data/gpus.yaml"
    gpus.write_text(gpus.read_text(encoding="utf-8").replace("marketed_gb: 24", "marketed_gb: -24", 1), encoding="utf-8")
    server = DevServer(site_root, port=0, log=io.StringIO(), today=FIXED_TODAY)
    try:
        assert server.site.rebuild() is False
        server.start()
        status, _, body = _get(server.url)
        assert status == 503
        assert b"data/gpus.yaml:" in body and b"reload.js" in body
    finally:
        server.close()


def test_the_serve_command_stops_cleanly_on_sigterm(site_root: Path) -> None:
    import re
    import signal
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, "-m", "generator", "serve", "--root", str(site_root), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "serving" not in line:
            line = child.stderr.readline()
            if not line and child.poll() is not None:
                break
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        assert _get(url.group(0))[0] == 200
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0
    assert "stopped" in err


def test_an_edit_rebuilds_incrementally_and_serves_the_change(running: tuple[DevServer, io.StringIO], site_root: Path) -> None:
    server, log = running
    pair = site_root / "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-awq.yaml"
    text = pair.read_text(encoding="utf-8")
    pair.write_text(text.replace("intro: |\n", "intro: |\n  Served-edit-marker.\n\n", 1), encoding="utf-8")
    _wait_for_version(server, 1)
    last = log.getvalue().strip().splitlines()[-1]
    changed = int(last.rsplit("(", 1)[1].split()[0])
    assert 0 < changed <= 4, last  # that pair's page and its Markdown twin, not the site
    page = next(path for path in server.site.snapshot.files if b"Served-edit-marker" in server.site.snapshot.files[path])
    assert page.endswith(".html") or page.endswith(".md")
    assert b"Served-edit-marker" in _get(server.url + page.removesuffix("index.html"))[2]


def test_a_save_in_several_writes_is_built_once_the_files_settle(site_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.devserver import serve

    site = DevSite(site_root, log=io.StringIO(), today=FIXED_TODAY)
    truncated, written = {"data/gpus.yaml": 0}, {"data/gpus.yaml": 7}
    reads = iter([truncated, written, written])  # the editor truncates, then writes
    monkeypatch.setattr(serve, "_mtimes", lambda root: next(reads))
    assert site.changed(settle=0)
    assert site._stamps == written  # the rebuild that follows sees the finished file
    monkeypatch.setattr(serve, "_mtimes", lambda root: written)
    assert not site.changed(settle=0)
    site.close()


def test_a_builder_that_dies_is_replaced_and_the_pages_stay_right(site_root: Path, tmp_path: Path) -> None:
    from generator.build.incremental import build_and_write
    from generator.write.guard import MARKER_NAME

    site = DevSite(site_root, log=io.StringIO(), today=FIXED_TODAY)
    try:
        assert site.rebuild()
        site._builder.process.kill()  # its memory is gone; the next build starts from the caches on disk
        site._builder.process.join()
        (site_root / "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-awq.yaml").unlink()
        models = site_root / "data/models.yaml"  # and a variant whose pair page goes with it
        data = yaml.safe_load(models.read_text(encoding="utf-8"))
        data["models"][0]["variants"] = [v for v in data["models"][0]["variants"] if v["id"] != "gptq-int4"]
        models.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        gone = "oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-gptq-int4/index.html"
        assert gone in site.snapshot.files
        assert site.rebuild()
        assert gone not in site.snapshot.files
        assert site._builder.process.is_alive()
        served = dict(site.snapshot.files)
    finally:
        site.close()
    cold = tmp_path / "cold"
    build_and_write(site_root, cold, jobs=1, search=False, today=FIXED_TODAY)
    expected = {p.relative_to(cold).as_posix(): p.read_bytes() for p in cold.rglob("*") if p.is_file() and p.name != MARKER_NAME}
    assert served == expected


def test_served_files_live_on_disk_by_content_and_old_ones_go(site_root: Path) -> None:
    site = DevSite(site_root, log=io.StringIO(), today=FIXED_TODAY)
    pair = site_root / "content/pairs/rtx-4090--qwen2.5-coder-32b-instruct-awq.yaml"
    text = pair.read_text(encoding="utf-8")
    try:
        assert site.rebuild()
        snapshots = [site.snapshot]
        for round_ in range(3):
            pair.write_text(text.replace("intro: |\n", f"intro: |\n  Round {round_}.\n\n", 1), encoding="utf-8")
            assert site.rebuild()
            snapshots.append(site.snapshot)
        last, before = snapshots[-1].files, snapshots[-2].files
        blobs = {p.name for p in (site._work / "blobs").iterdir()}
        assert blobs == set(last.shas.values()) | set(before.shas.values())  # not a byte of the site in memory
        page = "oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/index.html"
        assert b"Round 2." in last[page] and b"Round 1." in before[page]
        assert _page(site.lookup("/" + page)[2]).count(b"Round 2.") == 1
    finally:
        site.close()


# --------------------------------------------------------------------------- what serve answers (issue 18)


def _raw(server: DevServer, data: bytes, timeout: float = 10) -> bytes:
    """Send data on a fresh connection and read until the server closes it (bounded by timeout)."""
    import socket

    host, port = server.httpd.server_address[:2]
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


@pytest.fixture
def unbuilt(site_root: Path) -> Iterator[DevServer]:
    # No build needed to check what the server answers: /__kvtriage/version is served regardless.
    server = DevServer(site_root, port=0, log=io.StringIO(), today=FIXED_TODAY, max_connections=4, idle_timeout=0.5)
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_only_loopback_host_names_with_the_port_are_answered(unbuilt: DevServer) -> None:
    port = unbuilt.httpd.server_address[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        reply = _raw(unbuilt, f"GET /__kvtriage/version HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        assert _status(reply) == 200, host
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", "localhost", f"127.0.0.1:{port + 1}", f"127.0.0.1.evil.example:{port}"):
        reply = _raw(unbuilt, f"GET /__kvtriage/version HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        assert _status(reply) == 421 and b'"version"' not in reply, host
    assert _status(_raw(unbuilt, b"GET /__kvtriage/version HTTP/1.0\r\n\r\n")) == 400
    two = f"GET / HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\n\r\n".encode()
    assert _status(_raw(unbuilt, two)) == 400


def test_an_idle_connection_is_closed(unbuilt: DevServer) -> None:
    started = time.monotonic()
    assert _raw(unbuilt, b"", timeout=10) == b""  # the server hangs up after idle_timeout, not never
    assert time.monotonic() - started < 10


def test_idle_connections_do_not_start_a_thread_each(unbuilt: DevServer) -> None:
    import socket

    host, port = unbuilt.httpd.server_address[:2]
    socks = [socket.create_connection((host, port), timeout=5) for _ in range(7)]  # 4 served, 3 in the backlog
    try:
        busiest = 0
        for _ in range(20):
            handlers = [t for t in threading.enumerate() if "process_request_thread" in t.name]
            busiest = max(busiest, len(handlers))
            time.sleep(0.01)
        assert busiest <= 4
    finally:
        for sock in socks:
            sock.close()
    for _ in range(100):  # the slots come back: a normal request is answered again
        try:
            reply = _raw(unbuilt, f"GET /__kvtriage/version HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode(), timeout=5)
            break
        except OSError:
            time.sleep(0.05)
    assert _status(reply) == 200


def test_a_crashing_build_keeps_serving_and_prints_no_traceback(site_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = io.StringIO()
    server = DevServer(site_root, port=0, log=log, today=FIXED_TODAY)
    monkeypatch.setattr(server.site, "_build", lambda templates_changed: ("crashed", "Traceback (most recent call last):\n  ...\nZeroDivisionError: integer division or modulo by zero\n"))
    server.start()  # close() shuts down a running server
    try:
        assert server.site.rebuild() is False
        assert "ZeroDivisionError" in log.getvalue() and "Traceback" not in log.getvalue() and "a bug in kvtriage" in log.getvalue()
        assert server.site.snapshot.problems
    finally:
        server.close()
