"""Pydantic errors turned into `path:line:col: field: problem. fix` issues, pointed at the YAML
position of the value that failed."""

from __future__ import annotations

import difflib
from typing import Any, Mapping

from pydantic import BaseModel, ValidationError

from generator.errors import Issue
from generator.load.yaml_marks import Loc, Source
from generator.schema import (
    FILL_IN,
)

# --------------------------------------------------------------------------- validation


def _field_name(loc: Loc) -> str:
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name


def _fix_for(error: Mapping[str, Any], model: type[BaseModel], loc: Loc) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        if owner is not None:
            close = difflib.get_close_matches(str(loc[-1]), list(owner.model_fields), n=1, cutoff=0.6)
            if close:
                return f"Did you mean {close[0]!r}?"
            return f"Allowed keys: {', '.join(owner.model_fields)}"
        return "Remove the key"
    if kind == "missing":
        return "Add it"
    if kind == "literal_error":
        return "Use one of the listed values"
    if kind == "value_error" and str(error.get("msg", "")).startswith("Value error, fill this in"):
        return f"Replace the {FILL_IN} placeholder"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "Write a whole number without quotes or units"
    if kind in ("float_parsing", "float_type"):
        return "Write a number without quotes or units"
    if kind == "value_error" and "rope_scaling" in str(error.get("msg", "")):
        return "Copy rope_scaling from the model's config.json; factor is a number such as 4.0"
    if kind == "finite_number":
        return "Write a finite number (not .inf or .nan)"
    if kind in ("less_than", "less_than_equal"):
        return "Check the value against its source; no GPU or model comes near this bound"
    if kind in ("greater_than", "greater_than_equal"):
        return "Check the value against its source"
    return ""


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """Follow a pydantic loc through nested models to the model that owns its last key."""
    import typing

    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        annotation = current.model_fields[part].annotation
        current = _inner_model(annotation, typing)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: Any, typing: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg, typing)
        if found is not None:
            return found
    return None


def _data_loc(data: Any, loc: Loc) -> Loc:
    """The part of a pydantic loc that names keys and indexes of the data; pydantic also puts
    union members and validator names ('function-after[...]', 'tuple[...]') there, which editors
    never wrote. Walking the data tells the two apart even for a key like ':[' ."""
    out: list[Any] = []
    current = data
    for part in loc:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and "[" not in part and not part.startswith("function-"):
            current = None  # a missing key: nothing below it
        else:
            continue
        out.append(part)
    return tuple(out)


def validate(model: type[BaseModel], data: Any, source: Source) -> tuple[BaseModel | None, list[Issue]]:
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        issues = []
        errors = exc.errors(include_url=False)
        failed_locs = [tuple(e["loc"]) for e in errors if e["type"] != "too_short"]
        for error in errors:
            if error["type"] == "too_short" and any(l[: len(error["loc"])] == tuple(error["loc"]) and len(l) > len(error["loc"]) for l in failed_locs):
                continue  # the list is short only because its items failed, which are reported
            loc = _data_loc(data, error["loc"])
            message = error["msg"]
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            if error["type"] == "extra_forbidden":
                message = f"unknown key {loc[-1]!r}"
            elif error["type"] == "missing":
                message = "is required"
            issues.append(
                source.issue(loc, _field_name(loc) or model.__name__, message, _fix_for(error, model, loc), at_key=error["type"] == "extra_forbidden")
            )
        # A misspelt key is also a missing one; "Did you mean 'x'?" on the unknown key says both.
        meant = {(i.path, i.field.rsplit(".", 1)[0] if "." in i.field else "", i.fix[len("Did you mean '") : -2]) for i in issues if i.message.startswith("unknown key") and i.fix.startswith("Did you mean '")}  # noqa: E501
        issues = [
            i for i in issues
            if not (i.message == "is required" and (i.path, i.field.rsplit(".", 1)[0] if "." in i.field else "", i.field.rsplit(".", 1)[-1]) in meant)
        ]
        return None, issues
