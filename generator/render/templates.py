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
from markupsafe import Markup, escape

from generator.errors import Issue, RenderError
from generator.markdown import markdown_inline_html, markdown_to_html
from generator.plan.pages import LazyView, Page
from generator.plan.views import figure, gb_s, gib, kib, mib, tokens
from generator.schema import PLACEHOLDER, reader_urls


@dataclass(frozen=True)
class RenderedFile:
    path: str  # relative to the site root, always forward slashes
    content: bytes


# --------------------------------------------------------------------------- filters


def percent(value: float) -> str:
    return f"{figure(value, 'a fraction') * 100:g}%"


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
# would, as long as nothing Markdown reads can tell a figure from the word:
# - each figure is a plain run of letters, digits and . , : / % - and spaces that starts and ends
#   with a letter or digit (as the word does), with underscores only between letters or digits
#   (Q4_K_M: never emphasis), and holds no stand-in word itself;
# - a figure that begins a line's text does not make it an ordered list ("12. ");
# - the prose has no autolink or raw HTML;
# - each word comes out exactly once, in text, not inside a tag (a link target is encoded).
# Anything else is rendered the slow way.
_PLAIN_FIGURE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 .,:/%-]|(?<=[A-Za-z0-9])_(?=[A-Za-z0-9]))*(?<=[A-Za-z0-9])")
_LIST_MARKER = re.compile(r"\d{1,9}[.)](?:[ \t\n]|$)")
_STAND_IN = "kvtriagefigure{}x"


def _stand_in_prose(template: str) -> tuple[str, tuple[tuple[int, str], ...]] | None:
    """The prose with numbered stand-in words for its placeholders, and for those that begin their
    line's text, the two characters after them; None if the prose has an autolink or HTML."""
    if "<" in template:
        return None
    parts, line_starts, count, last = [], [], 0, 0
    for match in PLACEHOLDER.finditer(template):
        line_start = template.rfind("\n", 0, match.start()) + 1
        if not any(ch.isalnum() for ch in template[line_start : match.start()]):
            line_starts.append((count, template[match.end() : match.end() + 2]))
        parts.append(template[last : match.start()])
        parts.append(_STAND_IN.format(count))
        count += 1
        last = match.end()
    parts.append(template[last:])
    return "".join(parts), tuple(line_starts)


@lru_cache(maxsize=1024)
def _stand_in_html(template: str, inline: bool) -> tuple[str, tuple[tuple[int, str], ...]] | None:
    found = _stand_in_prose(template)
    if found is None:
        return None
    prose, line_starts = found
    html = markdown_inline_html(prose) if inline else markdown_to_html(prose)
    for i in range(len(PLACEHOLDER.findall(template))):
        word = _STAND_IN.format(i)
        at = html.find(word)
        if at < 0 or html.find(word, at + 1) >= 0 or html.rfind("<", 0, at) > html.rfind(">", 0, at):
            return None
    return html, line_starts


def _filled_html(text: str, inline: bool) -> str:
    template, values = getattr(text, "template", None), getattr(text, "values", None)
    if template is not None and values and all(_PLAIN_FIGURE.fullmatch(v) and "kvtriagefigure" not in v for v in values):
        found = _stand_in_html(template, inline)
        # A figure that begins a line must not make it an ordered list ("12. ...", "3) ...").
        if found is not None and not any(_LIST_MARKER.match(values[i] + after) for i, after in found[1]):
            html = found[0]
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
    "gb_s": gb_s,
    "percent": percent,
    "json_script": json_script,
    "markdown": md_block,
    "markdown_inline": md_inline,
    "ceil": math.ceil,
    "reader_urls": reader_urls,  # a record's source as links a reader can open
}


# --------------------------------------------------------------------------- environment


_DICT_ATTRIBUTES = frozenset(dir(dict))
_VIEW_ATTRIBUTES = frozenset(dir(LazyView))


class _Environment(jinja2.Environment):
    """Jinja's `a.b` on a dict tries the attribute, fails (an exception each time), then the key:
    about four million times in a 10k-page build. A plain dict, or a page's LazyView, has no
    attributes of its own besides its methods, so a key that is not a method name is looked up
    directly, which is what Jinja would return. The rest is Jinja's own getattr, inlined."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        kind = type(obj)
        if (kind is dict and attribute not in _DICT_ATTRIBUTES) or (kind is LazyView and attribute not in _VIEW_ATTRIBUTES):
            try:
                return obj[attribute]
            except KeyError:
                pass
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)

    def _generate(self, source: Any, name: str | None, filename: str | None, defer_init: bool = False) -> str:
        """Jinja's hook for the generated module: its output goes through escape_output (printed
        {{ }} is the only use of the module's `escape`). The line goes last, so template line
        numbers in errors stay the same."""
        code = super()._generate(source, name, filename, defer_init=defer_init)
        return code + "\nfrom generator.render.templates import escape_output as escape\n"


_HTML_SPECIAL = re.compile("[&<>'\"]")


def escape_output(value: Any) -> Any:
    """What Jinja's escape() prints for a value, without making a Markup of the text that needs no
    escaping: most of what a page prints is names and figures. Only for output, which is joined as
    plain text (a macro's, a block's or a set block's is made Markup again by Jinja itself)."""
    kind = type(value)
    if (kind is str and not _HTML_SPECIAL.search(value)) or kind is int:
        return str(value)
    return escape(value)


@lru_cache(maxsize=8)
def template_environment(templates_dir: str, version: str = "") -> jinja2.Environment:
    """The environment of templates_dir, its templates compiled once (no reload); version (the digest
    of the folder's files) keeps a process from rendering with templates it compiled before an edit."""
    env = _Environment(
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
    view = page.view
    if type(view) is LazyView:  # the templates read the view's dict itself: a lookup instead of three calls
        view = view.built()
    for suffix in ("html", "md"):
        template_name = f"{page.template}.{suffix}"
        try:
            text = env.get_template(template_name).render(page=page, view=view, site=site)
        except jinja2.TemplateError as exc:
            raise RenderError([_template_issue(exc, page, template_name)]) from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise RenderError([_template_issue(exc, page, template_name)]) from None
        out.append(RenderedFile(page.output_path(suffix), text.encode("utf-8")))
    return out
