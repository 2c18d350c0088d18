from __future__ import annotations

import re

import jinja2
import pytest

from generator.render.templates import gib, json_script, kib, template_environment, tokens

from ..conftest import REPO


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


# --- prose with figures: rendered once per prose, same bytes as rendering each filled text

_FIGURE_SETS = [
    lambda i: f"{(i + 1) * 1234:,}",  # plain numbers
    lambda i: f"{i + 7}.00 GiB",
    lambda i: ["RTX 4090", "Qwen2.5-Coder-32B", "0.90", "A100-SXM4-80GB", "Q4_K_M", "Q8_0"][i % 6],
    lambda i: ["snake_case_name", "50%", "(8.9)", "a*b*", "x & y", "<b>", " padded ", "1.", "_lead", "trail_", "a__b"][i % 11],
    lambda i: ["1. item", "2. two", "10"][i % 3],  # list markers where a figure begins a line
]


def _prose_fields(error) -> list[tuple[str, bool]]:
    fields = [(error.triage, False), (error.cause, False)]
    fields += [(fix.note, True) for fix in error.fixes]
    fields += [(item.answer, False) for item in error.faq]
    return fields


@pytest.mark.parametrize("figures", _FIGURE_SETS, ids=["numbers", "sizes", "names", "markdown-characters", "list-markers"])
def test_prose_with_figures_renders_as_the_filled_text_would(figures) -> None:
    from generator.load import load_dataset
    from generator.markdown import markdown_inline_html, markdown_to_html
    from generator.plan.views import fill
    from generator.render.templates import md_block, md_inline
    from generator.schema import PLACEHOLDER

    dataset = load_dataset(REPO)
    checked = 0
    for error in dataset.errors.values():
        for text, inline in _prose_fields(error):
            names = PLACEHOLDER.findall(text)
            filled = fill(text, {name: figures(i) for i, name in enumerate(names)})
            expected = markdown_inline_html(str(filled)) if inline else markdown_to_html(str(filled))
            assert str(md_inline(filled) if inline else md_block(filled)) == expected, text
            checked += bool(names)
    assert checked > 20  # the shipped prose has figures in it
    from generator.render.templates import _stand_in_html

    assert _stand_in_html.cache_info().currsize > 10  # most prose took the render-once path


@pytest.mark.parametrize("template", [
    "{{ a }}. starts a line",
    "- {{ a }} in a list",
    "text\n{{ a }}. on the next line",
    "see [the page](/oom/{{ a }}/)",
    "`{{ a }}` in code and **{{ b }}** in bold",
    "{{ a }}_{{ b }}_ next to underscores",
    "# {{ a }} heading",
    "> {{ a }} quoted",
    "ends with {{ a }}  \nhard break",
    "[link text {{ a }}](/oom/) and [{{ b }}][ref]\n\n[ref]: /gpus/{{ a }}/",
    "<https://example.com/{{ a }}>",
    "1. first\n2. {{ a }} second\n\n{{ b }}. own line",
])
@pytest.mark.parametrize("values", [("1", "2"), ("12,345", "RTX 4090"), ("3.5", "x_y"), ("1. a", "7. b"), ("Q4_K_M", "_x_"), ("a_", "b__c"),
                                    ("kvtriagefigure1x", "kvtriagefigure0x")])
def test_figures_in_markdown_positions_render_as_the_filled_text_would(template: str, values: tuple[str, str]) -> None:
    from generator.markdown import markdown_to_html
    from generator.plan.views import fill
    from generator.render.templates import md_block

    filled = fill(template, dict(zip(("a", "b"), values)))
    assert str(md_block(filled)) == markdown_to_html(str(filled))


# --- figures no page may print (issue 18): "inf GB/s", "-131,072 tokens", "931322574615478534144.00 GiB"


@pytest.mark.parametrize(
    "formatter, value",
    [("gb_s", float("inf")), ("gb_s", float("nan")), ("tokens", -131_072), ("tokens", float("inf")), ("gib", 10**30),
     ("gib", float("nan")), ("kib", -1024), ("mib", float("-inf")), ("percent", float("nan")), ("tokens", "12")],
)
def test_formatters_refuse_figures_no_page_may_print(formatter: str, value) -> None:
    from generator.plan.views import FigureError
    from generator.render.templates import FILTERS

    with pytest.raises(FigureError):
        FILTERS[formatter](value)


def test_formatters_still_print_real_figures() -> None:
    from generator.render.templates import FILTERS

    assert FILTERS["gb_s"](1008) == "1008 GB/s" and FILTERS["gb_s"](3352.5) == "3352.5 GB/s"
    assert FILTERS["gib"](-2 * 2**30) == "-2.00 GiB"  # memory left after weights that do not fit
    assert FILTERS["tokens"](131_072) == "131,072" and FILTERS["tokens"](0) == "0"


def test_a_bad_figure_stops_the_build_naming_the_page_and_the_figure() -> None:
    from generator.errors import RenderError
    from generator.plan.pages import Page
    from generator.render.templates import render_page

    env = jinja2.Environment(loader=jinja2.DictLoader({"t.html": "<p>{{ view.bw | gb_s }}</p>\n", "t.md": "{{ view.bw | gb_s }}\n"}))
    from generator.render.templates import FILTERS

    env.filters.update(FILTERS)
    page = Page(url="/gpus/x/", template="t", title="t", description="d", kind="gpu", lastmod="2026-01-01", view={"bw": float("inf")})
    with pytest.raises(RenderError) as raised:
        render_page(env, page, {})
    text = "\n".join(issue.format() for issue in raised.value.issues)
    assert "/gpus/x/" in text and "a bandwidth in GB/s is inf" in text


def test_the_model_page_twin_gives_the_numbers_of_its_html_lede(site_root) -> None:
    """The title promises the KV cache per token; the Markdown twin gives it, and the rope-scaled
    context of the model card, as the HTML page does."""
    import html

    from generator.build.pipeline import build_site

    files = {f.path: f.content.decode() for f in build_site(site_root, today="2026-11-29").files if f.path.startswith("models/")}
    pages = [path for path in files if path.endswith("/index.html") and path != "models/index.html"]
    assert pages
    for path in pages:
        lede = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p class="lede">(.*?)</p>', files[path], re.S).group(1)))
        twin = files[path.removesuffix(".html") + ".md"].replace("`", "")
        sentences = [s.strip() for s in re.split(r"(?<=\.) ", lede) if "KiB" in s or "model card" in s]
        assert sentences and all(s in twin for s in sentences), (path, sentences)
