"""`kvtriage serve`: build, serve the last good build on 127.0.0.1, rebuild on save, reload the browser.

Pages are served from the last build that succeeded, a snapshot swapped whole, so a reader never
sees a half-built site. A snapshot names each file by content hash; the bytes are immutable
copies on disk (hard links to what the builder wrote), so a 100k-page site does not sit in
memory. Each rebuild is an incremental build into a private folder (the same code as `kvtriage
build`, so an edit re-renders only the pages that show it), run by a builder process that keeps
what it planned in memory between saves (build.Resident) and renders across cores; only the
files that changed are linked into the store. A build that fails keeps the last good pages and
shows its problems on every page and in the terminal. Change detection polls file mtimes (stdlib
only); the browser polls /__kvtriage/version and reloads when it changes.
"""

from __future__ import annotations

import argparse
import html
import json
import mimetypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TextIO
from urllib.parse import unquote, urlsplit

from generator.errors import SiteError

WATCHED = ("content", "data", "templates")
DEV_PREFIX = "/__kvtriage/"

# Served as files, not inline, so a page's Content-Security-Policy cannot block them.
RELOAD_JS = b"""(function () {
  var me = document.currentScript, version = me && me.dataset.version;
  function poll() {
    fetch("/__kvtriage/version", {cache: "no-store"})
      .then(function (r) { return r.json(); })
      .then(function (d) { if (String(d.version) !== version) { location.reload(); } else { setTimeout(poll, 700); } })
      .catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 700);
})();
"""
DEV_CSS = b"""#kvtriage-problems{position:fixed;inset:auto 0 0 0;max-height:60vh;overflow:auto;margin:0;padding:1em;
background:#2b0000;color:#ffd7d7;font:13px/1.5 ui-monospace,monospace;z-index:2147483647;border-top:3px solid #ff5c5c}
#kvtriage-problems pre{white-space:pre-wrap;margin:.5em 0 0}
"""


@dataclass(frozen=True)
class Snapshot:
    """What the server shows: the last good files, and the problems of the latest attempt."""

    files: Mapping[str, bytes] = field(default_factory=dict)  # read from the blob store when asked for
    version: int = 0
    problems: tuple[str, ...] = ()
    built: bool = False


def _mtimes(root: Path) -> dict[str, int]:
    stamps: dict[str, int] = {}
    for folder in WATCHED:
        base = root / folder
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            try:
                if path.is_file():
                    stat = path.stat()
                    stamps[path.relative_to(root).as_posix()] = stat.st_mtime_ns ^ stat.st_size
            except OSError:
                continue  # vanished between listing and stat: the next poll sees it
    return stamps


class DevSite:
    """Rebuilds root on demand and keeps the last good build; thread-safe for the HTTP handler."""

    def __init__(self, root: Path, log: TextIO | None = None, today: str | None = None):
        self.root = Path(root)
        self.log = log or sys.stderr
        self.today = today
        self._lock = threading.Lock()
        self._snapshot = Snapshot()
        self._stamps: dict[str, int] = {}
        self._work = Path(tempfile.mkdtemp(prefix="kvtriage-serve-"))  # the private build and its caches
        self._shas: dict[str, str] = {}  # path -> content hash of the bytes in the snapshot
        self._builder: _Builder | None = None
        self._store = _BlobStore(self._work / "blobs")
        self._template_stamps: dict[str, int] | None = None

    @property
    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot

    def changed(self, settle: float = 0.05) -> bool:
        stamps = _mtimes(self.root)
        if stamps == self._stamps:
            return False
        # Editors may save in more than one write (truncate, then write): building from the first
        # would report an empty file. Wait, a little at a time, until the files stop changing.
        for _ in range(40):
            time.sleep(settle)
            again = _mtimes(self.root)
            if again == stamps:
                break
            stamps = again
        self._stamps = stamps
        return True

    def close(self) -> None:
        if self._builder is not None:
            self._builder.close()
            self._builder = None
        shutil.rmtree(self._work, ignore_errors=True)

    def _build(self, templates_changed: bool) -> tuple[str, Any]:
        """One build in the builder process, started (or restarted, if it died) as needed."""
        for _ in range(2):
            if self._builder is None:
                self._builder = _Builder()
                templates_changed = True
            try:
                return self._builder.build((self.root, self._work / "site", self.today, templates_changed))
            except (EOFError, OSError):  # it died: a new one starts from the caches on disk
                self._builder.close()
                self._builder = None
        raise RuntimeError("the kvtriage serve builder process exited twice in a row")

    def rebuild(self) -> bool:
        """Build once; keep the result if it succeeded. Returns True on success."""
        self._stamps = _mtimes(self.root)
        templates = {path: stamp for path, stamp in self._stamps.items() if path.startswith("templates/")}
        templates_changed = templates != self._template_stamps  # compiled templates are kept until then
        self._template_stamps = templates
        started = time.monotonic()
        out = self._work / "site"
        try:
            outcome, detail = self._build(templates_changed)
        except RuntimeError as exc:  # the builder process died twice
            outcome, detail = "crashed", f"RuntimeError: {exc}"
        if outcome == "crashed":
            # A bug, not the editor's: keep serving the last good build, say so in one line, and
            # keep the traceback in a file for the bug report rather than on the terminal.
            report = self._work / "last-crash.txt"
            report.write_text(detail, encoding="utf-8")
            last = (detail.strip().splitlines() or ["unknown error"])[-1][:300]
            outcome, detail = "failed", (f"kvtriage crashed while building ({last}); this is a bug in kvtriage, "
                                         f"not in the content. Details: {report}",)
        if outcome == "failed":
            problems = detail
            with self._lock:
                old = self._snapshot
                self._snapshot = Snapshot(old.files, old.version + 1, problems, old.built)
            print(f"build failed, still serving the last good build ({len(problems)} problem{'s' if len(problems) != 1 else ''}):", file=self.log)
            for line in problems:
                print("  " + line, file=self.log)
            self.log.flush()
            return False
        changed, removed, whole = detail
        shas = {} if whole else dict(self._shas)
        shas.update(changed)
        for path in removed:
            shas.pop(path, None)
        for path, digest in changed.items():
            self._store.keep(out / path, digest)
        self._shas = shas
        with self._lock:
            before = self._snapshot
            self._snapshot = Snapshot(_StoredFiles(shas, self._store), before.version + 1, (), True)
        # Blobs only the snapshot before last named go: a request still reading the last one finds its files.
        self._store.forget_all_but(shas, getattr(before.files, "shas", {}))
        pages = sum(1 for path in shas if path.endswith(".html"))
        print(f"built {pages} pages in {time.monotonic() - started:.1f}s ({len(changed)} files changed)", file=self.log)
        self.log.flush()
        return True

    # ---- responses

    def lookup(self, raw_path: str) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, extra headers) for a request path."""
        while True:
            snap = self.snapshot
            try:
                return self._lookup(snap, raw_path)
            except FileNotFoundError:  # two builds went by since snap was taken: its blobs are gone
                if self.snapshot is snap:
                    raise

    def _lookup(self, snap: Snapshot, raw_path: str) -> tuple[int, str, bytes, dict[str, str]]:
        path = unquote(urlsplit(raw_path).path)
        if path == DEV_PREFIX + "version":
            body = json.dumps({"version": snap.version, "problems": list(snap.problems)}).encode()
            return HTTPStatus.OK, "application/json", body, {}
        if path == DEV_PREFIX + "reload.js":
            return HTTPStatus.OK, "text/javascript; charset=utf-8", RELOAD_JS, {}
        if path == DEV_PREFIX + "dev.css":
            return HTTPStatus.OK, "text/css; charset=utf-8", DEV_CSS, {}
        if not snap.built:
            return HTTPStatus.SERVICE_UNAVAILABLE, "text/html; charset=utf-8", self._inject(b"<!doctype html><title>kvtriage: build failed</title><h1>The site does not build yet</h1>", snap), {}
        key = path.lstrip("/")
        if key == "" or key.endswith("/"):
            key += "index.html"
        body = snap.files.get(key)
        if body is None and f"{key}/index.html" in snap.files:
            return HTTPStatus.MOVED_PERMANENTLY, "text/plain", b"", {"Location": path + "/"}
        status = HTTPStatus.OK
        if body is None:
            status, key = HTTPStatus.NOT_FOUND, "404.html"
            body = snap.files.get(key, b"<!doctype html><title>Not found</title><h1>Not found</h1>")
        content_type = _content_type(key)
        if content_type.startswith("text/html"):
            body = self._inject(body, snap)
        return status, content_type, body, {}

    @staticmethod
    def _inject(body: bytes, snap: Snapshot) -> bytes:
        tags = f'<link rel="stylesheet" href="{DEV_PREFIX}dev.css"><script src="{DEV_PREFIX}reload.js" data-version="{snap.version}"></script>'
        if snap.problems:
            listing = html.escape("\n".join(snap.problems))
            tags += (
                f'<div id="kvtriage-problems" role="alert"><strong>kvtriage: the last build failed; '
                f"this is the last good build.</strong><pre>{listing}</pre></div>"
            )
        text = body.decode("utf-8", "replace")
        index = text.lower().rfind("</body>")
        text = text[:index] + tags + text[index:] if index >= 0 else text + tags
        return text.encode("utf-8")


class _BlobStore:
    """Immutable copies of built files, named by content hash: hard links to what the builder wrote
    (which it replaces, never rewrites, on the next build), so serving a build costs a name per
    file in memory rather than its bytes (about 3 GiB at 100k pages)."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.held: set[str] = set()

    def keep(self, source: Path, digest: str) -> None:
        if digest in self.held:
            return
        target = self.folder / digest
        try:
            os.link(source, target)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            shutil.copyfile(source, target)
        self.held.add(digest)

    def read(self, digest: str) -> bytes:
        return (self.folder / digest).read_bytes()

    def forget_all_but(self, *named: Mapping[str, str]) -> None:
        """Delete every blob the given path -> hash maps do not name."""
        live: set[str] = set()
        for shas in named:
            live.update(shas.values())
        for digest in self.held - live:
            (self.folder / digest).unlink(missing_ok=True)
        self.held &= live


class _StoredFiles(Mapping[str, bytes]):
    """A build's files by path, read from the blob store when asked for."""

    def __init__(self, shas: Mapping[str, str], store: _BlobStore):
        self.shas, self.store = shas, store

    def __getitem__(self, path: str) -> bytes:
        return self.store.read(self.shas[path])

    def __contains__(self, path: object) -> bool:
        return path in self.shas

    def __iter__(self) -> Iterator[str]:
        return iter(self.shas)

    def __len__(self) -> int:
        return len(self.shas)


class _Builder:
    """The process that builds for `kvtriage serve`. It keeps a build.Resident between builds, and,
    having no threads of its own, can fork render workers (this process runs the HTTP threads, and
    forking a threaded process is unsafe). It is spawned, not forked, for the same reason."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_builder_main, args=(theirs,), name="kvtriage-serve-builder")
        self.process.start()
        theirs.close()

    def build(self, request: tuple) -> tuple[str, Any]:
        self.conn.send(request)
        return self.conn.recv()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.conn.close()
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()


def _builder_main(conn: Any) -> None:
    """Serve build requests (root, out, today, templates changed) until None or the pipe closes.
    Replies ("ok", (changed {path: sha}, removed [path], whole)) against the previous reply's files
    (whole: there was none, so these are all the files), ("failed", formatted problems) or
    ("crashed", traceback)."""
    import traceback

    from generator.build.incremental import build_and_write
    from generator.build.pipeline import forget_templates
    from generator.build.resident import Resident

    os.setpgrp()  # Ctrl-C in the terminal is for the server, which then stops this process between builds
    resident, sent = Resident(), {}
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        root, out, today, templates_changed = request
        if templates_changed:
            forget_templates()
        try:
            build_and_write(root, out, jobs=0, search=False, today=today, resident=resident)
        except SiteError as error:
            conn.send(("failed", tuple(issue.format() for issue in error.issues)))
            continue
        except Exception:  # a bug: say so, and start the next build from what is on disk
            resident, sent = Resident(), {}
            conn.send(("crashed", traceback.format_exc()))
            continue
        shas = {path: entry.sha for path, entry in resident.published.manifest.files.items()}
        changed = {path: digest for path, digest in shas.items() if sent.get(path) != digest}
        conn.send(("ok", (changed, [path for path in sent if path not in shas], not sent)))
        sent = shas


def _content_type(key: str) -> str:
    if key.endswith(".md"):
        return "text/markdown; charset=utf-8"
    guessed = mimetypes.guess_type(key)[0] or "application/octet-stream"
    return guessed + "; charset=utf-8" if guessed.startswith("text/") or guessed in ("application/json", "application/javascript", "application/xml") else guessed


# A connection that sends nothing for this long is closed: each open connection holds a thread.
IDLE_TIMEOUT = 10.0
# Connections served at once; more wait in the listen backlog instead of each starting a thread.
MAX_CONNECTIONS = 32
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _handler(site: DevSite, port: Callable[[], int], idle_timeout: float = IDLE_TIMEOUT) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "kvtriage-serve"
        timeout = idle_timeout  # socketserver sets it on the connection: a silent client is dropped

        def do_GET(self) -> None:  # noqa: N802
            self._respond(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._respond(head=True)

        def _host_problem(self) -> tuple[int, bytes] | None:
            """Only requests addressed to this server by a loopback name: a web page elsewhere that
            points a DNS name at 127.0.0.1 (DNS rebinding) gets no answer it could read."""
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1:
                return HTTPStatus.BAD_REQUEST, b"kvtriage serve: a request needs exactly one Host header\n"
            wanted = {f"{name}:{port()}" for name in LOCAL_HOSTS}
            if hosts[0].strip().lower() not in wanted:
                return HTTPStatus.MISDIRECTED_REQUEST, f"kvtriage serve answers only {', '.join(sorted(wanted))}\n".encode()
            return None

        def _respond(self, head: bool) -> None:
            refused = self._host_problem()
            if refused is not None:
                status, body = refused
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                if not head:
                    self.wfile.write(body)
                return
            status, content_type, body, headers = site.lookup(self.path)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the terminal is for build results, not one line per request

    return Handler


class _BoundedHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with at most max_connections handler threads: the accept loop waits for
    a free slot, so a flood of idle connections queues in the kernel's backlog instead of starting
    a thread each."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int):
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Wait for a slot, a little at a time, so shutdown() is never stuck behind a full server.
        while not self.slots.acquire(timeout=0.2):
            if getattr(self, "_BaseServer__shutdown_request", False):
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class DevServer:
    """An HTTP server bound to 127.0.0.1 in a background thread, plus the rebuild loop."""

    def __init__(self, root: Path, port: int = 8000, log: TextIO | None = None, today: str | None = None,
                 max_connections: int = MAX_CONNECTIONS, idle_timeout: float = IDLE_TIMEOUT):
        self.site = DevSite(root, log=log, today=today)
        handler = _handler(self.site, lambda: self.httpd.server_address[1], idle_timeout)
        self.httpd = _BoundedHTTPServer(("127.0.0.1", port), handler, max_connections)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> None:
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self.thread.start()

    def watch(self, stop: threading.Event, interval: float = 0.5, on_poll: Callable[[], None] | None = None) -> None:
        """Rebuild whenever a watched file changes, until stop is set."""
        while not stop.wait(interval):
            if self.site.changed():
                self.site.rebuild()
            if on_poll is not None:
                on_poll()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread is not None:
            self.thread.join(timeout=5)
        self.site.close()


def _cmd_serve(args: argparse.Namespace) -> int:
    server = DevServer(Path(args.root), port=args.port)
    server.site.rebuild()
    server.start()
    print(f"serving {server.url} (Ctrl-C to stop); watching {', '.join(WATCHED)}/", file=sys.stderr)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Stop between polls: a rebuild in progress finishes, then the server closes cleanly.
        signal.signal(signum, lambda *_: stop.set())
    try:
        server.watch(stop, interval=args.interval)
    finally:
        server.close()
    print("stopped", file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    serve = sub.add_parser("serve", help="build, serve on 127.0.0.1, rebuild on change and reload the browser")
    serve.add_argument("--root", default=".", help="site root (default: .)")
    serve.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default: 8000; 0 picks a free one)")
    serve.add_argument("--interval", type=float, default=0.5, help=argparse.SUPPRESS)
    serve.set_defaults(handler=_cmd_serve)
