"""The command line: `check` on every invalid case (exit code, message, file:line), and the progress line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from generator.cli import EXIT_CONTENT, EXIT_OK, main, progress_reporter

from .conftest import copy_site
from .test_load import CASES, apply_case


@pytest.mark.parametrize("case", CASES)
def test_check_reports_each_invalid_case(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_site(tmp_path / "root")
    expect = apply_case(case, root)
    assert main(["check", "--root", str(root)]) == EXIT_CONTENT
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].endswith("found."), lines
    problems = lines[:-1]
    for wanted in expect["errors"]:
        assert any(line.startswith(wanted["at"] + ":") and wanted["message"] in line for line in problems), (
            f"expected {wanted['at']}: ...{wanted['message']}... in:\n" + "\n".join(problems)
        )
    assert len(problems) == expect["count"], "\n".join(problems)


def test_check_passes_on_the_fixture_site(site_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(site_root)]) == EXIT_OK
    assert capsys.readouterr().out.startswith("ok:")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    stream = _Terminal()
    report = progress_reporter(stream=stream)
    assert report is not None
    for done in range(1, 6):
        report(done, 5)
    text = stream.getvalue()
    assert "rendered 1/5 pages" in text  # the first call always draws
    assert text.endswith("rendered 5/5 pages (" + text.rsplit("(", 1)[1])  # the last call always draws
    assert text.endswith("/s)\n")


def test_progress_is_quiet_in_ci_when_piped_or_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert progress_reporter(stream=_Terminal()) is None
    monkeypatch.delenv("CI")
    assert progress_reporter(stream=io.StringIO()) is None  # not a TTY
    assert progress_reporter(quiet=True, stream=_Terminal()) is None


def test_build_reports_progress_to_the_callback(site_root: Path) -> None:
    from generator.build.pipeline import build_site

    calls: list[tuple[int, int]] = []
    build = build_site(site_root, today="2026-11-29", progress=lambda done, total: calls.append((done, total)))
    total = len(build.plan.pages)
    assert calls == [(n, total) for n in range(1, total + 1)]


def test_a_build_run_as_a_program_prints_its_report_and_exit_code_through_a_pipe(site_root: Path, tmp_path: Path) -> None:
    """`kvtriage build` ends without the interpreter's teardown (cli._exit_now): what it printed to a
    pipe, where output is buffered, still arrives, and the exit code is the build's."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    command = [sys.executable, "-m", "generator", "build", "--root", str(site_root), "--out", str(tmp_path / "site"), "--quiet",
               "--no-search", "--jobs", "1"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=repo, timeout=600)
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.startswith("wrote ") and "pages (" in done.stdout and done.stdout.endswith("\n")
    again = subprocess.run(command, capture_output=True, text=True, cwd=repo, timeout=600)
    assert again.returncode == EXIT_OK and again.stdout.startswith("nothing changed")
    (site_root / "data/gpus.yaml").write_text("gpus: [", encoding="utf-8")
    broken = subprocess.run(command, capture_output=True, text=True, cwd=repo, timeout=600)
    assert broken.returncode == EXIT_CONTENT and broken.stderr.rstrip().endswith("found.")
