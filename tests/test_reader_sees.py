"""What a reader sees is right (issue 71): a footnote derived from the rows it explains, advice only
where it changes something, the comment's visible part naming what a change slowed, every message
and table fitted to the terminal (the suite's sessions are checked for it: tests/conftest.py)."""

from __future__ import annotations

from helpers import MIDDLE, made_run

from overheadbench.core.tables import MESSAGE_WIDTH, TERMINAL_WIDTH, fitted, laid_out, shown_length
from overheadbench.engine.changes import Change
from overheadbench.report.files.markdown import render_markdown
from overheadbench.report.shown import Shown, render_changes


def _shown(test: str, confidence: float) -> Shown:
    return Shown(test, "p99 latency", "1.00 ms", "1.10 ms", Change("x", 1.0, 1.1, 0.02, 30, confidence=confidence))


def test_the_change_tables_footnote_names_the_levels_its_rows_are_read_at() -> None:
    """It said "at 99.17%" (a fixed example) while every row read "at 99.44%" under a "95% CI" heading."""
    lines = render_changes([_shown("t.py::a", 0.9944), _shown("t.py::b", 0.995)], "main")
    text = " ".join(lines)
    assert "'at 99.44%' or 'at 99.50%' is read at that level" in text and "99.17" not in text
    assert " interval " in lines[0] and "95% CI" not in lines[0]
    plain = render_changes([_shown("t.py::a", 0.95)], "main")
    assert "95% CI" in plain[0] and "read at that level" not in " ".join(plain)


def test_the_comments_visible_part_names_the_function_each_regressed_pairs_change_slowed() -> None:
    """The one line a reviewer wants was folded away with the explanations."""
    comment = render_markdown(made_run(), folded=True)
    visible = comment.split("<details>")[0]
    assert f"- `tests/test_mw.py::test_metrics`: the change slowed `{MIDDLE}` (92% of what it added," in visible
    assert "+800 bytecode instr/call)" in visible


def test_a_message_is_fitted_to_the_terminal_its_paths_and_ids_whole_and_not_counted() -> None:
    path = "/tmp/" + "x" * 150 + "/0001_base.json"
    text = f"t.py::test_pair: {path} is not a valid run: " + "the words of a long sentence " * 12
    lines = fitted(text).splitlines()
    assert " ".join(line.strip() for line in lines) == " ".join(text.split())  # nothing lost or cut
    assert path in lines[0] and all(shown_length(line) <= MESSAGE_WIDTH for line in lines)
    assert all(line.startswith("  ") for line in lines[1:])  # continuations under their line


def test_a_table_too_wide_for_the_terminal_goes_on_in_indented_lines() -> None:
    """A change table with each side's time per call ran to 150 characters."""
    header = ("test", *(f"column {index}" for index in range(8)))
    rows = [header, ("t.py::test_a", *(f"{index} {'x' * 20}" for index in range(8)))]
    lines = laid_out(rows)
    assert all(len(line) <= TERMINAL_WIDTH for line in lines) and len(lines) > 4
    cells = " ".join(lines)
    assert all(f"{index} {'x' * 20}" in cells for index in range(8))
