"""Pairs whose framework is 10x, 100x, 1000x their baseline (issue 38): what one costs, and
whether its interval holds across sessions.

    python validation/lopsided.py cost --before DIR/src --sessions 3   # ~10 min, run alone
    python validation/lopsided.py coverage --sessions 20               # ~14 min, run alone
    python validation/lopsided.py report                               # the coverage table again

The pairs, in a generated project, sync and async: a bare ~0.3 µs loop (the baseline) against
a copy of itself (``1x``: an A/A pair, judged at ``max=5%``), and against ``K`` calls of it
through a small pipeline (``10x``, ``100x``, ``1000x``; async: a chain of awaited coroutines),
whose budget is a generous absolute one so that the budget's wording plays no part.

``cost``: one session per profile (default, quick, and A/B: ``--overhead-against`` a copy of
the project) and version (``--before``, an older ``src``; and this one), ``--sessions`` times,
alternating; per pair, the wall time the plugin records (``wall_s``) and the figure.

``coverage``: ``--sessions`` more fresh sessions per profile with this version, kept in ``--out``
(``report`` reads them all again); per pair, the 95%
interval's coverage of a pooled long reference (the median of every process's median ratio
over all sessions), the binomial probability of so few coverings if the interval truly covers
95%, the median half-width over 1.96 sd of the estimate across sessions (log scale), and the
A/A pairs' verdicts at ``max=5%``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import harness

sys.path.insert(0, str(Path(__file__).parent))
from ab_gate import binomial_at_most  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FACTORS = (1, 10, 100, 1000)
APP = """
def bare():
    total = 0
    for i in range(10):
        total += i
    return total


def bare_copy():
    total = 0
    for i in range(10):
        total += i
    return total


def pipeline(steps):
    def run():
        for _ in range(steps):
            bare()
    return run


async def abare():
    return bare()


async def abare_copy():
    return bare_copy()


async def _step(depth):
    return bare() if depth == 0 else await _step(depth - 1)


def chain(steps):
    async def run():
        for _ in range(steps):
            await _step(1)  # two awaited coroutines around one bare call
    return run
"""
TEST = '''
import pytest

import app

LOPSIDED = pytest.mark.overhead(max_abs="1s")


@pytest.mark.overhead(max_abs="1s")
def test_0_start(overhead):
    """The session's first pair carries its replicas' start: not in the tables."""
    overhead.compare(app.bare, app.bare_copy)


@pytest.mark.overhead(max=0.05)
def test_sync_1x(overhead):
    overhead.compare(app.bare, app.bare_copy)


@pytest.mark.overhead(max=0.05)
def test_async_1x(overhead):
    overhead.compare(app.abare, app.abare_copy)


@pytest.mark.parametrize("factor", [10, 100, 1000])
@LOPSIDED
def test_sync(overhead, factor):
    overhead.compare(app.bare, app.pipeline(factor))


@pytest.mark.parametrize("factor", [10, 100, 1000])
@LOPSIDED
def test_async(overhead, factor):
    overhead.compare(app.abare, app.chain(factor))
'''
PROFILES = {"default": [], "quick": ["--overhead-quick"]}


def project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(APP)
    (folder / "test_pairs.py").write_text(TEST)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def session(folder: Path, src: Path, out: Path, extra: list[str]) -> list[dict]:
    """One fresh session; its results (the run document's)."""
    return harness.session(folder, out, *extra, paths=[src, folder]).results


def name(nodeid: str) -> str:
    return nodeid.split("::")[1]


def tabled(documents: list[list[dict]]) -> list[str]:
    """The pairs a table shows: all but the session's first (its replicas' start)."""
    return [r["nodeid"] for r in documents[0] if "test_0_start" not in r["nodeid"]]


def cost(before: Path, sessions: int) -> None:
    versions = {"before": before.resolve(), "after": ROOT / "src"}
    runs: dict[tuple[str, str], list[list[dict]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = project(Path(scratch) / "project")
        base = Path(scratch) / "base"
        shutil.copytree(folder, base)
        modes = {**PROFILES, "A/B": [f"--overhead-against={base}"]}
        for index in range(sessions):
            for mode, extra in modes.items():
                for version, src in versions.items():
                    out = Path(scratch) / f"{version}-{index}.json"
                    runs.setdefault((mode, version), []).append(session(folder, src, out, extra))
                    print(f"{mode} {version} {index}: done", file=sys.stderr, flush=True)
    print("| pair | profile | version | seconds per pair (median, range) | overhead (median of sessions) |")
    print("|---|---|---|---|---|")
    for (mode, version), documents in runs.items():
        for nodeid in tabled(documents):
            results = [r for document in documents for r in document if r["nodeid"] == nodeid]
            walls = [r["wall_s"] for r in results]
            overhead = statistics.median(r["overhead"] for r in results)
            print(
                f"| `{name(nodeid)}` | {mode} | {version} | {statistics.median(walls):.1f} s "
                f"({min(walls):.1f}..{max(walls):.1f}) | {100 * overhead:+,.0f}% |"
            )


def coverage(sessions: int, out: Path) -> None:
    """``sessions`` more sessions per profile into ``out`` (kept: the report reads them all)."""
    out.mkdir(parents=True, exist_ok=True)
    first = len(list(out.glob("default-*.json")))
    with tempfile.TemporaryDirectory() as scratch:
        folder = project(Path(scratch) / "project")
        for index in range(first, first + sessions):
            for profile, extra in PROFILES.items():
                session(folder, ROOT / "src", out / f"{profile}-{index:03d}.json", extra)
                print(f"{profile} {index}: done", file=sys.stderr, flush=True)
    report(out)


def report(out: Path) -> None:
    """The coverage table, each interval and verdict recomputed from the stored samples by this
    version (``summarise``: what its sessions would print for the same samples), beside the
    coverage of the intervals the sessions themselves printed."""
    sys.path.insert(0, str(ROOT / "src"))
    from overheadbench.core.units import format_overhead
    from overheadbench.engine.settings import Settings
    from overheadbench.pairs.comparing import process_ratios
    from overheadbench.pairs.results import OverheadResult
    from overheadbench.pairs.verdict import summarise

    def now(stored: OverheadResult) -> OverheadResult:
        return summarise(stored.pair, stored.kind, stored.samples, Settings(), stored.wall_s, stored.counts)

    runs = {
        profile: [json.loads(path.read_text())["results"] for path in sorted(out.glob(f"{profile}-*.json"))]
        for profile in PROFILES
    }
    print(
        "| pair | profile | sessions | estimate (median) | sd across sessions | median half-width | half-width / 1.96 sd "
        "| covers reference | P(so few) at 95% | the sessions' own intervals covered | verdicts |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for profile, documents in runs.items():
        covered_all = own_all = total = 0
        for nodeid in tabled(documents):
            stored = [OverheadResult.from_json(r) for document in documents for r in document if r["nodeid"] == nodeid]
            results = [now(r) for r in stored]
            reference = statistics.median(process_ratios([s for r in results for s in r.samples]))
            sd = statistics.stdev(math.log(r.ratio) for r in results)
            half = statistics.median((math.log1p(r.ci[1]) - math.log1p(r.ci[0])) / 2 for r in results)
            covered = sum(1 + r.ci[0] <= reference <= 1 + r.ci[1] for r in results)
            own = sum(1 + r.ci[0] <= reference <= 1 + r.ci[1] for r in stored)
            covered_all, own_all, total = covered_all + covered, own_all + own, total + len(results)
            verdicts = ", ".join(
                f"{v} {sum(r.verdict == v for r in results)}" for v in sorted({r.verdict for r in results})
            )
            estimate = format_overhead(statistics.median(r.overhead for r in results))
            print(
                f"| `{name(nodeid)}` | {profile} | {len(results)} | {estimate} | {100 * sd:.2f}% | ±{100 * half:.2f}% | "
                f"{half / (1.96 * sd):.2f} | {covered}/{len(results)} | "
                f"{binomial_at_most(covered, len(results), 0.95):.2f} | {own}/{len(results)} | {verdicts} |"
            )
        print(
            f"| **pooled** | {profile} | | | | | | {covered_all}/{total} ({covered_all / total:.1%}) | "
            f"{binomial_at_most(covered_all, total, 0.95):.2f} | {own_all}/{total} ({own_all / total:.1%}) | |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("cost", "coverage", "report"))
    parser.add_argument("--out", type=Path, default=ROOT / "validation/out/lopsided")
    parser.add_argument("--before", type=Path, help="an older version's src folder (cost)")
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args()
    if args.command == "cost":
        if args.before is None:
            parser.error("cost needs --before")
        cost(args.before, args.sessions)
    elif args.command == "coverage":
        coverage(args.sessions, args.out)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
