"""A model's config.json pasted along with the error, for a model the catalog does not have."""

from __future__ import annotations

import json
from typing import Any


def config_in_paste(text: str, tries: int = 20) -> dict[str, Any] | None:
    """The first JSON object in the paste that is a model config (it names its layers), or None.

    Mirrors static/search.js: a few opening braces, each against the last few closing ones, so a
    config between log lines is found without parsing every span."""
    ends = [i for i, ch in enumerate(text) if ch == "}"][-tries:][::-1]
    starts = [i for i, ch in enumerate(text) if ch == "{"][:tries]
    for start in starts:
        for end in ends:
            if end <= start:
                break
            try:
                found = json.loads(text[start : end + 1])
            except ValueError:
                continue
            if isinstance(found, dict) and any(k in found for k in ("num_hidden_layers", "num_layers", "text_config")):
                return found
    return None
