"""Pages in, strings out: the Jinja2 environment, its filters, and the rendering of one page."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import jinja2
from markdown_it.common.utils import escapeHtml
from markupsafe import Markup

from generator.errors import Issue, RenderError
from generator.markdown import markdown_inline_html, markdown_to_html
from generator.pages import Page, gib, kib, mib
from generator.schema import PLACEHOLDER


@dataclass(frozen=True)
class RenderedFile:
    path: str  # relative to the site root, always forward slashes
    content: bytes


# --------------------------------------------------------------------------- filters


def tokens(value: int) -> str:
    return f"{value:,}"


def percent(value: float) -> str:
    return f"{value * 100:g}%"


def json_script(value: Any) -> Markup:
    """JSON safe inside <script>: '<', '>' and '&' cannot end the element or start a comment."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


# Prose repeats across pages (an error's fixes, FAQ answers and notes without numbers in them
# appear on every pair page of the error): each distinct text is rendered once per process.
@lru_cache(maxsize=4096)
def _block_html(text: str) -> str:
    return markdown_to_html(text)


@lru_cache(maxsize=4096)
def _inline_html(text: str) -> str:
    return markdown_inline_html(text)


# --- Markdown with the engine's figures in it, rendered once per prose rather than once per page.
# The prose is rendered with a plain word standing in for each figure, and the figures (escaped as
# the renderer escapes text) replace the words. That gives the bytes rendering the filled text
# would, as long as nothing Markdown reads can tell a figure from the word: each figure is a plain
# run of letters, digits and . , : / % - and spaces that starts and ends with a letter or digit (as
# the word does), no figure starts a line (where "1." opens a list), the prose has no link or
# autolink (whose targets are encoded), and each word comes out exactly once. Anything else is
# rendered the slow way.
_PLAIN_FIGURE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 .,:/%-]*[A-Za-z0-9])?")
_STAND_IN = "kvtriagefigure{}x"


def _stand_in_prose(template: str) -> str | None:
    """The prose with numbered stand-in words for its placeholders, or None if a placeholder
    starts a line or the prose holds a link."""
    if "](" in template or "]:" in template or "<" in template:
        return None
    parts, count, last = [], 0, 0
    for match in PLACEHOLDER.finditer(template):
        line_start = template.rfind("\n", 0, match.start()) + 1
        if not any(ch.isalnum() for ch in template[line_start : match.start()]):
            return None
        parts.append(template[last : match.start()])
        parts.append(_STAND_IN.format(count))
        count += 1
        last = match.end()
    parts.append(template[last:])
    return "".join(parts)


@lru_cache(maxsize=1024)
def _stand_in_html(template: str, inline: bool) -> str | None:
    prose = _stand_in_prose(template)
    if prose is None:
        return None
    html = markdown_inline_html(prose) if inline else markdown_to_html(prose)
    count = len(PLACEHOLDER.findall(template))
    if any(html.count(_STAND_IN.format(i)) != 1 for i in range(count)):
        return None
    return html


def _filled_html(text: str, inline: bool) -> str:
    template, values = getattr(text, "template", None), getattr(text, "values", None)
    if template is not None and values and all(_PLAIN_FIGURE.fullmatch(v) for v in values):
        html = _stand_in_html(template, inline)
        if html is not None:
            for i, value in enumerate(values):
                html = html.replace(_STAND_IN.format(i), escapeHtml(value), 1)
            return html
    return _inline_html(str(text)) if inline else _block_html(str(text))


def md_block(text: str) -> Markup:
    return Markup(_filled_html(text, inline=False))


def md_inline(text: str) -> Markup:
    return Markup(_filled_html(text, inline=True))


FILTERS = {
    "gib": gib,
    "mib": mib,
    "kib": kib,
    "tokens": tokens,
    "percent": percent,
    "json_script": json_script,
    "markdown": md_block,
    "markdown_inline": md_inline,
    "ceil": math.ceil,
}


# --------------------------------------------------------------------------- environment


@lru_cache(maxsize=8)
def template_environment(templates_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir),
        undefined=jinja2.StrictUndefined,
        # .md twins are Markdown, not HTML: escaping there would corrupt code blocks.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml"), default_for_string=False, default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters.update(FILTERS)
    return env


def _template_issue(exc: Exception, page: Page, template_name: str) -> Issue:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return Issue(f"templates/{exc.name or template_name}", exc.lineno or 1, 0, "", f"template syntax: {exc.message}")
    line = 1
    tb = exc.__traceback__
    name = template_name
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith((".html", ".md", ".xml", ".txt")):
            line = tb.tb_lineno
            name = Path(filename).name
        tb = tb.tb_next
    return Issue(f"templates/{name}", line, 0, "", f"while rendering {page.url}: {type(exc).__name__}: {exc}")


def render_page(env: jinja2.Environment, page: Page, site: Mapping[str, Any]) -> list[RenderedFile]:
    """Render a page to its index.html and its index.md twin."""
    out = []
    for suffix in ("html", "md"):
        template_name = f"{page.template}.{suffix}"
        try:
            text = env.get_template(template_name).render(page=page, view=page.view, site=site)
        except jinja2.TemplateError as exc:
            raise RenderError([_template_issue(exc, page, template_name)]) from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise RenderError([_template_issue(exc, page, template_name)]) from None
        out.append(RenderedFile(page.output_path(suffix), text.encode("utf-8")))
    return out
