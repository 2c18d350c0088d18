"""The editor tools' command line: `kvtriage new` (new.py), `schema` (schema_export.py) and
`import-model` (import_model.py).

Everything these write is YAML that `load` then judges; nothing here decides what is valid.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from generator.errors import ContentError
from generator.load import parse_yaml
from generator.tools.import_model import MODELS, _problem, merge_model, model_from_gguf, model_from_hf_config, models_issues, unified_diff
from generator.tools.new import NEW_KINDS, _ids, write_new
from generator.tools.schema_export import fix_modelines, modeline_problems, stale_schemas, writable_path, write_schemas


def _cmd_new(args: argparse.Namespace) -> int:
    made, to_fill, other = write_new(Path(args.root), args.kind, args.slug)
    verb = "added to" if made.appended else "wrote"
    print(f"{verb} {made.path}")
    if to_fill:
        print(f"Fill in these {len(to_fill)} fields, then run `kvtriage check`:")
        for issue in to_fill:
            print("  " + issue.format())
    for issue in other:
        print("  " + issue.format(), file=sys.stderr)
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if args.check:
        stale = stale_schemas(root)
        problems = modeline_problems(root)
        for rel in stale:
            print(f"{rel}: out of date; run `kvtriage schema`", file=sys.stderr)
        for issue in problems:
            print(issue.format(), file=sys.stderr)
        return 1 if stale or problems else 0
    for rel in write_schemas(root):
        print(f"wrote {rel}")
    if args.fix_modelines:
        for rel in fix_modelines(root):
            print(f"set the schema line of {rel}")
    for issue in modeline_problems(root):
        print(issue.format(), file=sys.stderr)
    return 0


def _cmd_import_model(args: argparse.Namespace) -> int:
    root = Path(args.root)
    variant = None
    if args.hf_config:
        try:
            config = json.loads(Path(args.hf_config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: JSON syntax, or an integer of 4,300+ digits
            raise _problem(args.hf_config, f"cannot read config.json: {str(exc)[:200]}", "Download config.json from the model repository") from None
        record, notes = model_from_hf_config(config, args.id, args.repo, args.source)
    else:
        record, variant, notes = model_from_gguf(Path(args.gguf), args.id, args.repo, args.source)
    path = writable_path(root, MODELS)
    old = path.read_text(encoding="utf-8") if path.is_file() else "# yaml-language-server: $schema=../data/schemas/models.schema.json\nmodels:\n"
    known = _ids((parse_yaml(MODELS, old.encode("utf-8"))[0] or {}).get("models") or [])
    if variant is not None and record["id"] in known:
        existing = (parse_yaml(MODELS, old.encode("utf-8"))[0]["models"][known.index(record["id"])] or {}).get("config") or {}
        for key in ("num_hidden_layers", "num_key_value_heads", "hidden_size", "kv_lora_rank"):
            if key in record["config"] and key in existing and existing[key] != record["config"][key]:
                notes.append(f"this GGUF has {key}={record['config'][key]} but model {record['id']!r} has {existing[key]}: is --id right?")
    elif args.hf_config and record["id"] in known and not args.source:
        notes.append(f"model {record['id']!r} keeps its config_source; pass --source if this config.json comes from elsewhere")
    new, what = merge_model(old, record, variant if record["id"] in known else None)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    diff = unified_diff(old, new, MODELS)
    print(diff, end="")
    to_fill, other = models_issues(new)
    if other:
        raise ContentError(other)
    if to_fill:
        print(f"{len(to_fill)} field{'s' if len(to_fill) != 1 else ''} to fill in after writing:", file=sys.stderr)
        for issue in to_fill:
            print("  " + issue.format(), file=sys.stderr)
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
        print(f"{what} in {MODELS}", file=sys.stderr)
    else:
        print(f"(not written: {what}; pass --write to apply)", file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    """Register `new`, `schema` and `import-model` on the kvtriage subcommand parser."""
    new = sub.add_parser("new", help="write a commented skeleton for a new error, GPU, model or pair")
    new.add_argument("kind", choices=NEW_KINDS)
    new.add_argument("slug", help="the new record's id (a pair: GPU--MODEL-VARIANT)")
    new.add_argument("--root", default=".", help="site root (default: .)")
    new.set_defaults(handler=_cmd_new)

    schema = sub.add_parser("schema", help="write JSON Schemas for the YAML records to data/schemas/ (and kvtriage kv's shipped catalog)")
    schema.add_argument("--root", default=".", help="site root (default: .)")
    schema.add_argument("--check", action="store_true", help="exit 1 when a schema is stale or a YAML file lacks its schema line")
    schema.add_argument("--fix-modelines", action="store_true", help="add or correct the `# yaml-language-server` line of each YAML file")
    schema.set_defaults(handler=_cmd_schema)

    imp = sub.add_parser("import-model", help="make a model record from a config.json or a GGUF header, shown as a diff")
    source = imp.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="CONFIG_JSON", help="a Hugging Face config.json")
    source.add_argument("--gguf", metavar="FILE", help="a GGUF file (only its header is read)")
    imp.add_argument("--id", help="model id (default: from the repository name)")
    imp.add_argument("--repo", help="Hugging Face repository, owner/name")
    imp.add_argument("--source", help="where the config or file comes from (URL or repo path@commit)")
    imp.add_argument("--write", action="store_true", help="write data/models.yaml (default: only show the diff)")
    imp.add_argument("--root", default=".", help="site root (default: .)")
    imp.set_defaults(handler=_cmd_import_model)

