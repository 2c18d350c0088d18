"""The only writer of site/: build every file in memory or in a temp dir, then swap it in whole.

A build that fails at any stage, or is interrupted, leaves the published site/ byte for
byte as it was and no temporary directory behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator

from generator.dates import record_dates
from generator.engine.pairs import compute_results
from generator.calculator import CATALOG_PATH, catalog_json
from generator.commands import parse_surfaces, verify_commands
from generator.errors import BuildError, Issue, RenderError
from generator.load import load_dataset
from generator.pages import Page, Plan, plan_pages
from generator.publish import affiliate_rules, asset_urls, check_html, index_search, pagefind_executable, publish_files
from generator.render import RenderedFile, render_page, template_environment
from generator.schema import Dataset


def safe_relative(path: str) -> str:
    """Refuse any output path that could land outside the site directory."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or "\x00" in path
        or "%" in path
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise BuildError([Issue("site", 1, 0, "path", f"refusing to write {path!r} outside the site directory")])
    return path


class _Interrupts:
    """While a build writes, SIGINT and SIGTERM both become KeyboardInterrupt, so one cleanup path
    serves both. Inside the swap they wait: site/ is never caught between the old tree and the new."""

    def __init__(self) -> None:
        self.deferring = False
        self.pending: int | None = None

    def _handle(self, signum, frame):  # noqa: ARG002
        if self.deferring:
            self.pending = signum
            return
        raise KeyboardInterrupt(f"signal {signum}")

    @contextmanager
    def installed(self) -> Iterator[None]:
        previous = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread: signals go to the main thread anyway
                pass
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.pending is not None:
            raise KeyboardInterrupt(f"signal {self.pending} (after the new site was in place)")


def write_site(files: Iterable[RenderedFile], out: Path, before_swap: Callable[[Path], None] | None = None) -> int:
    """Write files into a fresh directory next to out, then swap it in. Returns the file count.

    before_swap runs on the complete staging directory (the search indexer), so a site is never
    published half-indexed."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    retired = out.parent / f".{out.name}.old-{staging.name.rsplit('-', 1)[-1]}"
    count = 0
    interrupts = _Interrupts()
    try:
        with interrupts.installed():
            for rendered in files:
                target = staging / safe_relative(rendered.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(rendered.content)
                count += 1
            if before_swap is not None:
                before_swap(staging)
            os.chmod(staging, 0o755)
            with interrupts.deferred():
                if out.exists():
                    os.replace(out, retired)
                os.replace(staging, out)
                shutil.rmtree(retired, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if retired.exists() and not out.exists():
            os.replace(retired, out)
        shutil.rmtree(retired, ignore_errors=True)
        raise
    return count


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class SiteBuild:
    files: tuple[RenderedFile, ...]
    plan: Plan


def today_for_build() -> str:
    """Date for records the ledger has not seen; SOURCE_DATE_EPOCH pins it for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
    return datetime.now(tz=timezone.utc).date().isoformat()


def site_context(dataset: Dataset, assets: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "title": dataset.site.title,
        "tagline": dataset.site.tagline,
        "language": dataset.site.language,
        "base_url": str(dataset.site.base_url).rstrip("/"),
        # static file name -> /static/name?v=<content hash>, so /static/* can be cached for a year
        "assets": assets or {},
    }


def static_files(root: Path) -> list[RenderedFile]:
    static = root / "templates" / "static"
    if not static.is_dir():
        return []
    return [
        RenderedFile(f"static/{path.relative_to(static).as_posix()}", path.read_bytes())
        for path in sorted(static.rglob("*"))
        if path.is_file()
    ]


def forget_templates() -> None:
    """Drop cached Jinja environments, so a long-running `serve` sees edited templates."""
    template_environment.cache_clear()


def build_site(root: Path, today: str | None = None, progress: Callable[[int, int], None] | None = None) -> SiteBuild:
    """Everything a build writes, in memory: load, compute, plan, render.

    progress(done, total) is called after each page renders (the CLI's progress line)."""
    root = Path(root)
    dataset = load_dataset(root)
    results = compute_results(dataset)
    dates = record_dates(dataset, today or today_for_build())
    plan = plan_pages(dataset, results, dates)
    problems = verify_commands(
        ((page.url, (block for section in page.view.get("commands", ()) for block in section["blocks"])) for page in plan.pages),
        parse_surfaces(dataset.surfaces),
    )
    if problems:
        raise RenderError(problems)
    env = template_environment(str((root / "templates").resolve()))
    static = [*static_files(root), RenderedFile(CATALOG_PATH, catalog_json(dataset))]  # the in-page calculator's data
    site = site_context(dataset, asset_urls(static))
    files: list[RenderedFile] = []
    for done, page in enumerate(plan.pages, 1):
        files.extend(render_page(env, page, site))
        if progress is not None:
            progress(done, len(plan.pages))
    files.extend(static)
    files.extend(publish_files(dataset, plan, env, site))
    files.sort(key=lambda f: f.path)
    check_html(files, site["base_url"], affiliate_rules(dataset))
    return SiteBuild(files=tuple(files), plan=plan)


def _summary(build: SiteBuild) -> str:
    pages = build.plan.pages
    indexable = sum(1 for p in pages if p.indexable)
    pairs = sum(1 for p in pages if p.kind == "pair" and p.indexable)
    lines = [f"{len(pages)} pages ({indexable} indexable, {pairs} indexable pair pages), {len(build.files)} files"]
    for rule, count in build.plan.thin_report.items():
        lines.append(f"  thin-page guard: {count} candidate pages {'not generated' if rule.startswith('pair does not') else 'marked noindex'} ({rule})")
    return "\n".join(lines)


def check_site(root: Path) -> str:
    build = build_site(root)
    return "ok: " + _summary(build)


def build_and_write(root: Path, out: Path, jobs: int = 0, progress: Callable[[int, int], None] | None = None, search: bool | None = None) -> str:
    """Build, index for search (by default whenever Pagefind is installed), then swap into out."""
    build = build_site(root, progress=progress)
    pagefind = pagefind_executable() if search is not False else None
    if search and pagefind is None:
        raise BuildError([Issue("site", 1, 0, "search", "Pagefind is not installed", "pip install 'pagefind[bin]'")])
    indexer = (lambda staging: index_search(staging, pagefind)) if pagefind else None
    count = write_site(build.files, out, before_swap=indexer)
    note = "search index: Pagefind" if pagefind else f"search index: skipped ({'--no-search' if search is False else 'Pagefind not installed'})"
    return f"wrote {count} files to {out}\n" + _summary(build) + "\n" + note
