"""One error vocabulary for the whole build: an Issue points at a file and line, SiteError carries many."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Issue:
    path: str
    line: int
    col: int
    field: str
    message: str
    fix: str = ""

    def format(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}" if self.col else f"{self.path}:{self.line}"
        text = f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        text = text.rstrip(".") + "."
        if self.fix:
            text += " " + self.fix if self.fix.endswith(("?", "!")) else " " + self.fix.rstrip(".") + "."
        return text


class SiteError(Exception):
    """Raised once per stage with every issue found, so editors fix them all in one pass."""

    def __init__(self, issues: list[Issue] | tuple[Issue, ...]):
        self.issues = tuple(sorted(set(issues)))
        super().__init__("\n".join(issue.format() for issue in self.issues))

    def __reduce__(self):
        # Rebuilt from its issues, so an error raised in a build worker process arrives whole.
        return (type(self), (self.issues,))


class ContentError(SiteError):
    """Records that fail to parse, validate or cross-reference."""


class RenderError(SiteError):
    """A template that fails, or a page that breaks a publishing rule."""


class BuildError(SiteError):
    """Writing the site failed; the previous site/ is untouched."""
