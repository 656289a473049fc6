"""Every ```python block in the README runs (examples that cannot rot)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys):
    """Each example runs and shows the reader something (issue 50: the batched engine's printed
    nothing)."""
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out.strip()


def test_the_batched_engine_example_prints_what_the_readme_says(capsys):
    """4,096 games of 433-entry observations; the count of games ended is what the README
    states after the block."""
    (code,) = [b for b in BLOCKS if "BatchGame" in b]
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("4,096 observations of 433; ") and printed.endswith(" games ended")
    assert f"It prints `{printed}`." in README.read_text(encoding="utf-8")


class _Reporter:
    """A stand-in for pytest's terminal reporter: its ``stats`` and the lines written."""

    def __init__(self, skipped: list[object]) -> None:
        self.stats = {"skipped": skipped}
        self.lines: list[str] = []

    def write_line(self, line: str, **_markup: bool) -> None:
        self.lines.append(line)


class _Skip:
    def __init__(self, reason: str) -> None:
        self.longrepr = ("tests/test_web_browser.py", 21, f"Skipped: {reason}")


def test_a_run_without_chromium_ends_saying_so():
    """The README's test command skips the browser tests without Chromium: the run's last line
    says so and how to enable them; other skips say nothing; and the README says the same."""
    from tests.conftest import BROWSER_SKIPPED, pytest_terminal_summary

    without = _Reporter([_Skip("needs torch"), _Skip("no Chromium: apt-get install chromium")])
    pytest_terminal_summary(without, 0, None)
    assert without.lines == [
        "browser tests skipped (tests/test_web_browser.py): no Chromium found; "
        "enable them with: apt-get install chromium"
    ]
    other = _Reporter([_Skip("needs torch")])
    pytest_terminal_summary(other, 0, None)
    assert other.lines == []
    assert "apt-get install chromium" in BROWSER_SKIPPED
    assert "apt-get install chromium" in README.read_text(encoding="utf-8")
