"""Static JavaScript as it is published: minified with rjsmin, a regex-based minifier that keeps ES module
syntax (import(), export, template literals) as written and gives the same bytes for the same input.

The calculator loads its modules by fingerprinted URLs that hash the published bytes, so the
fingerprint follows the minified file, not the source.
"""

from __future__ import annotations

import rjsmin


def published_static(name: str, content: bytes) -> bytes:
    """The bytes a static file is published with: JavaScript minified, every other file as it is."""
    if not name.endswith(".js"):
        return content
    return rjsmin.jsmin(content.decode("utf-8")).encode("utf-8")
