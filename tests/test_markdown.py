from __future__ import annotations

import pytest

from generator.markdown import is_safe_link, markdown_to_html, unsafe_links


def test_raw_html_is_escaped() -> None:
    html = markdown_to_html("Hi <script>alert(1)</script> <img src=x onerror=alert(1)>")
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd", "//evil.example/x"])
def test_unsafe_links_are_not_rendered_and_are_reported(url: str) -> None:
    text = f"[click]({url})"
    assert "<a" not in markdown_to_html(text)
    assert not is_safe_link(url)
    assert unsafe_links(text)


@pytest.mark.parametrize("url", ["https://docs.vllm.ai/en/latest/", "http://example.com", "/oom/x/", "#fixes"])
def test_safe_links_render(url: str) -> None:
    assert f'href="{url}"' in markdown_to_html(f"[ok]({url})")
    assert unsafe_links(f"[ok]({url})") == []


@pytest.mark.parametrize(
    "text, target",
    [
        ("[a][r]\n\n[r]: javascript:alert(1)", "javascript:alert(1)"),  # reference-style
        ("<javascript:alert(1)>", "javascript:alert(1)"),  # autolink
        ("![x](data:image/svg+xml;base64,PHN2Zz4=)", "data:image/svg+xml;base64,PHN2Zz4="),  # image
        ("[a](<vbscript:x>)", "vbscript:x"),  # pointy brackets
        ("[a](java&#115;cript:alert(1))", "javascript:alert(1)"),  # entity-encoded scheme
        ("- list [x](file:///etc/passwd)", "file:///etc/passwd"),  # nested in a block
    ],
)
def test_unsafe_links_finds_every_link_form(text: str, target: str) -> None:
    assert target in unsafe_links(text)
    assert "<a" not in markdown_to_html(text) and "<img" not in markdown_to_html(text)
