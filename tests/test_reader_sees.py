"""What a reader sees is right (issue 71): a footnote derived from the rows it explains, advice only
where it changes something."""

from __future__ import annotations

from overheadbench.engine.changes import Change
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
