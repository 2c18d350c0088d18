"""Turn a built kvtriage site into a Hugo site with the same pages, for bench/run.py.

    python bench/hugo/make_site.py KVTRIAGE_SITE_DIR HUGO_ROOT

Each kvtriage page's Markdown twin (index.md) becomes one Hugo content file at the same URL,
with its title, description and breadcrumbs as front matter and the rest of the twin as the
body, so Hugo renders pages of the same number, size and structure (headings, paragraphs,
tables, code blocks, lists) to HTML and a Markdown twin. Hugo's layouts live next to this
file (hugo.toml, layouts/).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_DESCRIPTION = re.compile(r'<meta name="description" content="([^"]*)">')
_CRUMB = re.compile(r'<li><a href="([^"]+)">([^<]+)</a></li>|<li aria-current="page">([^<]+)</li>')


def page_front_matter(url: str, title: str, description: str, crumbs: list[list[str]]) -> str:
    data = {"title": title, "description": description, "crumbs": crumbs}
    if url != "/":
        data["url"] = url
    # JSON is valid YAML and needs no escaping rules of its own.
    return "---\n" + json.dumps(data, ensure_ascii=False, indent=1) + "\n---\n"


def convert(site: Path, root: Path) -> int:
    if root.exists():
        shutil.rmtree(root)
    (root / "content/pages").mkdir(parents=True)
    shutil.copy2(HERE / "hugo.toml", root / "hugo.toml")
    shutil.copytree(HERE / "layouts", root / "layouts")
    count = 0
    for twin in sorted(site.rglob("index.md")):
        page = twin.parent
        html_file = page / "index.html"
        if not html_file.is_file():
            continue
        relative = page.relative_to(site).as_posix()
        url = "/" if relative == "." else f"/{relative}/"
        text = twin.read_text(encoding="utf-8")
        first, _, body = text.partition("\n")
        title = first.removeprefix("# ").strip()
        head = html_file.read_text(encoding="utf-8")
        match = _DESCRIPTION.search(head)
        description = html.unescape(match.group(1)) if match else ""
        crumbs = [[html.unescape(m.group(2) or m.group(3)), m.group(1) or url] for m in _CRUMB.finditer(head)]
        target = root / "content/_index.md" if url == "/" else root / "content/pages" / f"p{count:06d}.md"
        target.write_text(page_front_matter(url, title, description, crumbs) + body.lstrip("\n"), encoding="utf-8")
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    count = convert(Path(args[0]), Path(args[1]))
    print(f"{args[1]}: {count} Hugo content pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
