"""Affiliate programs as the checks see them: per host, the rel a link needs and the disclosure text
its page must show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping
from urllib.parse import urlsplit

from generator.schema import Dataset

# --------------------------------------------------------------------------- the HTML check


@dataclass(frozen=True)
class AffiliateRule:
    host: str
    disclosures: tuple[str, ...]


def affiliate_rules(dataset: Dataset) -> dict[str, AffiliateRule]:
    """Affiliate host -> the disclosures that may accompany its links, from data/affiliates.yaml."""
    found: dict[str, list[str]] = {}
    for program in dataset.affiliates.values():
        host = _host(program.url_template.replace("{query}", "x"))
        if host:
            found.setdefault(host, []).append(_squash(program.disclosure))
    return {host: AffiliateRule(host, tuple(texts)) for host, texts in found.items()}


def _host(url: str) -> str:
    """The host of url as a browser resolves it: lowercase, without the root's trailing dot
    (www.amazon.com. is www.amazon.com) and without www."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # an unbalanced [ in the host part
        return ""
    return host.rstrip(".").removeprefix("www.")


def affiliate_rule(host: str, rules: Mapping[str, AffiliateRule]) -> AffiliateRule | None:
    """The rule for host or for the program domain it is a subdomain of (smile.amazon.com -> amazon.com)."""
    while host:
        rule = rules.get(host)
        if rule is not None:
            return rule
        host = host.partition(".")[2]
    return None


def _squash(text: str) -> str:
    return " ".join(text.split())
