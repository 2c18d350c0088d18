"""Command line: argparse, exit codes, progress, and `path:line: field: problem. fix` errors."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence, TextIO

from generator.errors import SiteError

EXIT_OK = 0
EXIT_CONTENT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _report(error: SiteError) -> None:
    for issue in error.issues:
        print(issue.format(), file=sys.stderr)
    count = len(error.issues)
    print(f"{count} problem{'s' if count != 1 else ''} found.", file=sys.stderr)


class _ProgressLine:
    """`rendered 120/480 pages (85/s)` on one stderr line, redrawn at most ten times a second."""

    def __init__(self, stream: TextIO):
        self.stream, self.start, self.drawn = stream, time.monotonic(), 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.drawn < 0.1:
            return
        self.drawn = now
        rate = done / max(now - self.start, 1e-6)
        self.stream.write(f"\r\x1b[Krendered {done}/{total} pages ({rate:,.0f}/s)" + ("\n" if done >= total else ""))
        self.stream.flush()


def progress_reporter(quiet: bool = False, stream: TextIO | None = None) -> Callable[[int, int], None] | None:
    """A progress callback for a person at a terminal; None when quiet, piped, or in CI."""
    stream = stream or sys.stderr
    if quiet or not stream.isatty() or os.environ.get("CI", "").lower() in ("true", "1"):
        return None
    return _ProgressLine(stream)


def _cmd_check(args: argparse.Namespace) -> int:
    from generator.build.pipeline import check_site

    summary = check_site(Path(args.root))
    print(summary)
    return EXIT_OK


def _cmd_build(args: argparse.Namespace) -> int:
    from generator.write.fingerprint import input_fingerprint, search_wanted
    from generator.write.guard import check_out
    from generator.write.manifest import read_published, up_to_date
    from generator.write.state import build_lock

    root = Path(args.root)
    given = Path(args.out) if args.out else root / "site"
    out = check_out(root, given, force=args.force)
    search = search_wanted(args.search)
    # Builds of one folder take turns. Under the lock out is read once (its manifest and a stat of every
    # output) and the build goes on from that reading; nothing changed: answer before importing the
    # pipeline (a third of a second).
    with build_lock(out, lambda text: print(text, file=sys.stderr)):
        published = read_published(out)
        if up_to_date(out, input_fingerprint(root, search=search), search=search, published=published) is not None:
            print(f"nothing changed: {given} is up to date")
            return EXIT_OK

        from generator.build.incremental import build_locked

        report = build_locked(root, out, jobs=args.jobs, progress=progress_reporter(args.quiet), search=args.search,
                              published=published, force=args.force)
    print(report)
    return EXIT_OK


def _cmd_stamp(args: argparse.Namespace) -> int:
    """Write data/lastmod.yaml: each record keeps its date while its content hash holds."""
    import yaml

    from generator.build.pipeline import today_for_build
    from generator.dates import current_ledger, stale_keys
    from generator.load import load_dataset

    root = Path(args.root)
    dataset = load_dataset(root)
    changed = stale_keys(dataset)
    ledger = current_ledger(dataset, today_for_build())
    records = {key: {"sha": entry.sha, "date": entry.date} for key, entry in sorted(ledger.records.items())}
    text = (
        "# yaml-language-server: $schema=../data/schemas/lastmod.schema.json\n"
        "# When each record's content last changed: pages take dateModified and sitemap lastmod from here.\n"
        "# Written by `kvtriage stamp`; commit it with the content change.\n"
        + yaml.safe_dump({"records": records}, sort_keys=True, allow_unicode=True)
    )
    from generator.tools.schema_export import writable_path

    path = writable_path(root, "data/lastmod.yaml")
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    print(f"{path}: {len(changed)} record{'s' if len(changed) != 1 else ''} dated anew" + "".join(f"\n  {key}" for key in changed))
    return EXIT_OK


def _cmd_kv(args: argparse.Namespace) -> int:
    from generator.kv.catalog import catalog_lookup
    from generator.kv.command import run_kv

    return run_kv(args, catalog_lookup(Path(args.root)))


def _cmd_triage(args: argparse.Namespace) -> int:
    from generator.load import load_dataset
    from generator.plan.routes import error_url
    from generator.triage import records_from_errors, triage
    from generator.triage.report import result_data, result_text

    if args.file == "-":
        text = sys.stdin.read()
    else:
        text = Path(args.file).read_text(encoding="utf-8", errors="replace")
    from generator.engine.from_log import recompute_llamacpp, recompute_vllm
    from generator.engine.llamacpp import CTX_PAD
    from generator.kv.hf_ids import hf_id_index, vllm_build

    dataset = load_dataset(Path(args.root))
    errors = dataset.errors
    result = triage(text, records_from_errors(errors.values()))
    urls = {error_id: error_url(error_id) for error_id in errors}
    named = result.numbers.get("model")
    found = hf_id_index(dataset.models).resolve(named) if isinstance(named, str) and named else None
    model_facts = _triage_model(text, found)
    recompute = None
    if result.engine in ("vllm", None):
        model = vllm_build(dataset.models, found)
        recompute = recompute_vllm(result.numbers, result.release if result.engine == "vllm" else None, model)
    if result.engine in ("llamacpp", "ollama") and recompute is None:
        recompute = recompute_llamacpp(result.numbers, CTX_PAD)
    from generator.triage.command import reader_fix, reader_fix_lines
    from generator.triage.report import recompute_data

    fixed = reader_fix(text, result.engine, recompute_data(recompute))
    if fixed is not None:
        model_facts["reader_command"] = fixed
    if args.json:
        import json

        print(json.dumps(result_data(result, urls, recompute) | model_facts, indent=2, ensure_ascii=False))
    else:
        print(result_text(result, urls, limit=args.limit, recompute=recompute))
        for line in reader_fix_lines(fixed) if fixed is not None else ():
            print(line)
        model_facts.pop("reader_command", None)
        for key, value in model_facts.items():
            print(f"{key}: {value if not isinstance(value, dict) else ', '.join(f'{k} {v}' for k, v in value.items())}")
    return EXIT_OK


def _triage_model(text: str, found) -> dict[str, object]:
    """The model behind a paste: the catalog record its log names, and a pasted config.json's KV cost."""
    from generator.engine.geometry import geometry_from_hf_config, kv_bytes_per_token
    from generator.tools.import_model import hf_config_fields
    from generator.triage.pasted import config_in_paste

    out: dict[str, object] = {}
    if found is not None:
        out["catalog_model"] = found.key
    pasted = config_in_paste(text)
    if pasted is not None:
        try:
            fields, _ = hf_config_fields(pasted)
            geometry = geometry_from_hf_config(fields)
        except (ValueError, KeyError, TypeError) as exc:
            out["pasted_config"] = {"not read": str(exc)[:120]}
        else:
            out["pasted_config"] = {"model_type": fields.get("model_type"), "layers": fields.get("num_hidden_layers"),
                                    "kv_heads": fields.get("num_key_value_heads"),
                                    "kv_bytes_per_token_bf16": kv_bytes_per_token(geometry, 2)}
    return out


def build_parser(only_build: bool = False) -> argparse.ArgumentParser:
    """The whole command line; only_build leaves out the commands whose modules are slow to import,
    so `kvtriage build` on an unchanged site answers in a fraction of a second."""
    parser = argparse.ArgumentParser(prog="kvtriage", description="Build the kvtriage site and answer KV-capacity questions.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = sub.add_parser("build", help="validate, compute and write the site")
    build.add_argument("--root", default=".", help="folder holding content/, data/ and templates/ (default: .)")
    build.add_argument("--out", default=None, help="output folder (default: ROOT/site)")
    build.add_argument("--jobs", type=int, default=0, help="worker processes for rendering (default: one per core; 1 = serial)")
    build.add_argument("--quiet", action="store_true", help="no progress line")
    build.add_argument("--force", action="store_true",
                       help="replace an output folder kvtriage did not write (never the root or its source folders)")
    build.add_argument("--search", action=argparse.BooleanOptionalAction, default=None,
                       help="index the site with Pagefind (default: when the pagefind package is installed)")
    build.set_defaults(handler=_cmd_build)

    stamp = sub.add_parser("stamp", help="date changed records in data/lastmod.yaml (dateModified, sitemap lastmod)")
    stamp.add_argument("--root", default=".", help="folder holding content/, data/ and templates/ (default: .)")
    stamp.set_defaults(handler=_cmd_stamp)

    check = sub.add_parser("check", help="validate everything a build would, without writing")
    check.add_argument("--root", default=".", help="folder holding content/, data/ and templates/ (default: .)")
    check.set_defaults(handler=_cmd_check)
    if only_build:
        return parser

    triage = sub.add_parser("triage", help="rank the error pages for a pasted log, with reasons and the numbers it prints")
    triage.add_argument("file", nargs="?", default="-", help="the pasted log (default: - for standard input)")
    triage.add_argument("--json", action="store_true", help="print the result as JSON")
    triage.add_argument("--limit", type=int, default=5, help="candidates to print (default: 5; JSON has all)")
    triage.add_argument("--root", default=".", help="folder holding content/ and data/ (default: .)")
    triage.set_defaults(handler=_cmd_triage)

    from generator.devserver import serve
    from generator.tools import editor

    editor.add_parsers(sub)  # new, schema, import-model
    serve.add_parser(sub)

    try:
        from generator.kv.command import add_kv_parser
    except ImportError:  # the calculator lands separately; the site builds without it
        add_kv_parser = None
    if add_kv_parser is not None:
        add_kv_parser(sub)
        kv = sub.choices["kv"]
        kv.add_argument("--root", default=".", help="site root whose data/ names GPUs and models (default: .)")
        kv.set_defaults(handler=_cmd_kv)
        # `kv vllm --root X` reads better than `kv --root X vllm`; accept both.
        for action in kv._subparsers._group_actions if kv._subparsers else ():
            for engine_parser in getattr(action, "choices", {}).values():
                engine_parser.add_argument("--root", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only_build=words[:1] == ["build"])
    args = parser.parse_args(words)
    code = _run(args)
    if argv is None and args.command == "build":
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process once its output is out, without the interpreter's teardown: after a build it
    frees the plan object by object (a quarter of a second at 10k pages), which nothing needs. The
    build has released its lock, stopped its workers and Pagefind, and removed its stage by now."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except SiteError as error:
        _report(error)
        return EXIT_CONTENT
    except KeyboardInterrupt:
        print("interrupted; site/ holds the last complete build", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of our output went away (`| head`): nothing left to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as error:  # a full disk, a read-only or vanished folder: say which, without a traceback
        where = error.filename or getattr(args, "out", None) or getattr(args, "root", None) or "kvtriage"
        after = "; a build that stops here leaves the published site as it was" if args.command == "build" else ""
        print(f"{where}: {error.strerror or error}. Check that the folder exists, is writable and has room{after}.", file=sys.stderr)
        return EXIT_CONTENT
