"""The end-of-session table: formatting only, every figure read from the results."""

from __future__ import annotations

from typing import Sequence

from .comparison import Change
from .durations import format_fraction, format_seconds
from .results import OverheadResult
from .stats import WITHIN_PROCESS

HEADERS = ("test", "baseline/call", "framework/call", "overhead (CI)", "abs/call", "harness/call", "budget", "impact",
           "status")
STATUS_MARKS = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def table_rows(results: Sequence[OverheadResult]) -> list[tuple[str, ...]]:
    """One row per measured pair, in the order of ``HEADERS``."""
    rows = []
    for result in results:
        low, high = result.ci
        interval = f"{format_fraction(result.overhead)} ({format_fraction(low)}..{format_fraction(high)})"
        if result.method == WITHIN_PROCESS:
            interval += "*"
        rows.append((
            result.nodeid,
            format_seconds(result.baseline_s),
            format_seconds(result.framework_s),
            interval,
            format_seconds(result.abs_overhead_s, signed=True),
            format_seconds(result.harness_s),
            result.budget.describe(),
            impact(result),
            STATUS_MARKS.get(result.verdict, result.verdict),
        ))
    return rows


def impact(result: OverheadResult) -> str:
    """``0.03% of 500 ms``: the absolute overhead against the real work per call, if declared."""
    if result.impact is None or result.budget.work_s is None:
        return ""
    return f"{100 * result.impact:.2g}% of {format_seconds(result.budget.work_s)}"


def padded(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as text lines with padded columns, a rule under the first (the headers)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def render_comparison(changes: Sequence[Change], old_name: str) -> list[str]:
    """Old and new overhead per test; "~" marks a change that is not significant (p >= 0.05)."""
    rows = [("test", f"old ({old_name})", "new", "change", "p")]
    rows += [(c.nodeid, format_fraction(c.old), format_fraction(c.new),
              f"{'' if c.significant else '~ '}{c.delta_points:+.1f} points", f"{c.p_value:.3g}") for c in changes]
    return [*padded(rows), "~: not a significant change (Mann-Whitney U over the processes, p >= 0.05)"]


def render_table(results: Sequence[OverheadResult]) -> list[str]:
    """The table as text lines, columns padded; a footnote explains ``*`` intervals."""
    lines = padded([HEADERS, *table_rows(results)])
    confidences = sorted({f"{r.confidence * 100:g}%" for r in results})
    lines.append(f"intervals: {', '.join(confidences)} confidence, over {max(len(r.samples) for r in results)} "
                 f"fresh process(es) per pair at most")
    if any(r.method == WITHIN_PROCESS for r in results):
        lines.append("* measured in one process only: the interval leaves out between-process "
                     "variance and is optimistic (use overhead_processes >= 3)")
    return lines


MARKDOWN_STATUS = {"pass": "✅", "fail": "❌", "inconclusive": "⚠ inconclusive"}
CSV_HEADERS = ("group", "test", "baseline_s", "framework_s", "overhead", "ci_low", "ci_high", "abs_overhead_s",
               "budget_max", "budget_max_abs_s", "verdict", "processes")


def environment_lines(env: dict) -> list[str]:
    """The environment as a two-column markdown table (Python, OS, CPU, commit, packages, date)."""
    machine, commit = env.get("machine_info") or {}, env.get("commit_info") or {}
    cpu = (machine.get("cpu") or {}).get("brand_raw") or machine.get("processor") or "?"
    packages = ", ".join(f"{name} {version}" for name, version in (env.get("packages") or {}).items() if version)
    rows = [
        ("Python", f"{machine.get('python_implementation', '?')} {machine.get('python_version', '?')}"),
        ("OS", f"{machine.get('system', '?')} {machine.get('release', '')} {machine.get('machine', '')}".strip()),
        ("CPU", f"{cpu} ({env.get('cpu_count', '?')} cores)"),
        ("Commit", f"{commit.get('id', '?')}{' (dirty)' if commit.get('dirty') else ''} on {commit.get('branch', '?')}"),
        ("Packages", packages or "?"),
        ("Date", str(env.get("datetime", "?"))),
    ]
    return ["| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in rows)]


def render_markdown(results: Sequence[OverheadResult], env: dict) -> str:
    """A report in the style of published benchmark baselines: the environment, then one
    table per group. Ready for a PR comment or a CI step summary."""
    lines = ["# Overhead report", "", *environment_lines(env)]
    groups: dict[str | None, list[OverheadResult]] = {}
    for result in results:
        groups.setdefault(result.group, []).append(result)
    for group, members in groups.items():
        with_impact = any(r.impact is not None for r in members)
        lines += ["", f"## {group or 'Ungrouped'}", "",
                  "| Test | Baseline/call | Framework/call | Overhead (95% CI) | Budget |"
                  + (" Impact on real work |" if with_impact else "") + " Status |",
                  "|---|---|---|---|---|" + ("---|" if with_impact else "") + "---|"]
        for result in members:
            low, high = result.ci
            lines.append(f"| `{result.nodeid}` | {format_seconds(result.baseline_s)} | {format_seconds(result.framework_s)} "
                         f"| {format_fraction(result.overhead)} ({format_fraction(low)}..{format_fraction(high)}) "
                         f"| {result.budget.describe()} |" + (f" {impact(result)} |" if with_impact else "")
                         + f" {MARKDOWN_STATUS.get(result.verdict, result.verdict)} |")
    return "\n".join(lines) + "\n"


def csv_rows(results: Sequence[OverheadResult]) -> list[tuple]:
    """One row per pair, in seconds and fractions (no formatting), headed by ``CSV_HEADERS``."""
    return [CSV_HEADERS, *((r.group or "", r.nodeid, r.baseline_s, r.framework_s, r.overhead, r.ci[0], r.ci[1],
                            r.abs_overhead_s, r.budget.max_overhead, r.budget.max_abs_s, r.verdict, len(r.samples))
                           for r in results)]
