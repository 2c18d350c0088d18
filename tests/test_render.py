from __future__ import annotations

import re

import jinja2
import pytest

from generator.render import gib, json_script, kib, template_environment, tokens

from .conftest import REPO


def test_filters_format_like_the_engines_logs() -> None:
    assert gib(2 * 1024**3) == "2.00 GiB"
    assert kib(262144) == "256 KiB"
    assert tokens(8176) == "8,176"


def test_json_script_cannot_close_the_script_element() -> None:
    text = str(json_script({"a": "</script><script>alert(1)</script>", "b": "<!--"}))
    assert "</script>" not in text and "<!--" not in text


def _sponsored(links: list[dict]) -> str:
    env = template_environment(str(REPO / "templates"))
    template = env.from_string('{% from "partials/sponsored.html" import sponsored_links %}{{ sponsored_links(links) }}')
    return template.render(links=links)


def test_sponsored_macro_always_emits_rel_and_disclosure() -> None:
    html = _sponsored([
        {"program": "amazon", "label": "RTX 4090 <b>", "url": "https://www.amazon.com/s?k=x&tag=t", "rel": "sponsored noopener", "new_tab": True, "disclosure": "As an Amazon Associate I earn from qualifying purchases."},
    ])
    anchors = re.findall(r"<a [^>]*>", html)
    assert anchors and all('rel="sponsored noopener"' in a for a in anchors)
    assert 'target="_blank"' in anchors[0]
    assert "As an Amazon Associate I earn from qualifying purchases." in html
    assert "RTX 4090 &lt;b&gt;" in html  # labels are escaped
    # The disclosure sits inside the same section as the links.
    section = re.search(r"<section class=\"sponsored\".*?</section>", html, re.S).group(0)
    assert "Sponsored links" in section and "<a " in section


def test_templates_are_strict_about_undefined_names() -> None:
    env = template_environment(str(REPO / "templates"))
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing.value }}").render()
