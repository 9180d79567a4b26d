"""What a reader sees is right (issue 71): a footnote derived from the rows it explains, advice only
where it changes something, the comment's visible part naming what a change slowed."""

from __future__ import annotations

from helpers import MIDDLE, made_run

from overheadbench.engine.changes import Change
from overheadbench.report.markdown import render_markdown
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
