"""Kept memory per call that does not flip (issue 25, part 4): the same allocation verdict on
every fresh session, for code that holds bounded state and for code that leaks.

    pip install structlog
    python validation/kept_memory.py --sessions 20            # ~10 min, run alone

Each session is a fresh ``pytest --overhead`` over a generated project whose pairs all carry
``max_alloc=0`` (no extra memory block kept per call):

* ``structlog_itself``: the same structlog chain on both sides (identical code);
* ``structlog_vs_stdlib``: stdlib ``logging`` to a ``NullHandler`` against structlog (the pair
  whose kept blocks flipped, 0 -> 0.2..1 per call, in 16-call blocks);
* ``lru_cache_full``: a full ``functools.lru_cache`` evicting an entry per call (bounded);
* ``leak``: a call that appends a dict to a module-level list (1+ block kept per call).

Both modes run (time: one process, a short budget, since the allocation pass is the same with
replicas; count: the counter ``auto`` picks). Per pair and mode it prints each side's kept
blocks per call (median over sessions and the sessions' range), the block length, and how many
sessions gave the first session's verdict.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import textwrap
from pathlib import Path

import harness

PROJECT = textwrap.dedent(
    """
    import functools
    import logging

    import pytest
    import structlog

    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.processors.JSONRenderer()],
        logger_factory=structlog.ReturnLoggerFactory(),
        cache_logger_on_first_use=True,
    )
    slog = structlog.get_logger()
    stdlib = logging.getLogger("kept")
    stdlib.addHandler(logging.NullHandler())
    stdlib.propagate = False
    leaked = []
    keys = iter(range(10**9))


    @functools.lru_cache(maxsize=64)
    def parsed(key):
        return {"key": key, "text": str(key)}


    @pytest.mark.overhead(max=100.0, max_alloc=0)
    def test_structlog_itself(overhead):
        overhead.compare(lambda: slog.info("hello", who="world"), lambda: slog.info("hello", who="world"))


    @pytest.mark.overhead(max=100.0, max_alloc=0)
    def test_structlog_vs_stdlib(overhead):
        overhead.compare(lambda: stdlib.info("hello %s", "world"), lambda: slog.info("hello", who="world"))


    @pytest.mark.overhead(max=100.0, max_alloc=0)
    def test_lru_cache_full(overhead):
        overhead.compare(lambda: parsed(1), lambda: parsed(next(keys)))


    @pytest.mark.overhead(max=100.0, max_alloc=0)
    def test_leak(overhead):
        overhead.compare(lambda: {"a": 1}, lambda: leaked.append({"a": 1}))
    """
)


def session(project: Path, mode: str, index: int) -> list[dict]:
    args = (f"--overhead-mode={mode}", "--overhead-processes=1", "--overhead-time-budget=0.3s", "test_kept.py")
    return harness.session(project, project / f"{mode}{index}.json", *args).results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--modes", default="time,count")
    args = parser.parse_args()
    print(f"{args.sessions} fresh sessions per mode")
    print("| pair | mode | baseline kept/call | framework kept/call | calls per block | same verdict |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_kept.py").write_text(PROJECT)
        for mode in args.modes.split(","):
            rows: dict[str, dict[str, list]] = {}
            for index in range(args.sessions):
                for result in session(project, mode, index):
                    row = rows.setdefault(result["nodeid"].split("::")[1], {"b": [], "f": [], "calls": [], "v": []})
                    counts = result["counts"]
                    row["b"].append(statistics.median(counts["baseline"]["kept_blocks"]))
                    row["f"].append(statistics.median(counts["framework"]["kept_blocks"]))
                    row["calls"].append(counts.get("allocation_calls", counts["calls_per_block"]))  # before schema 8
                    row["v"].append(result["verdict"])
            for name, row in rows.items():
                same = sum(v == row["v"][0] for v in row["v"])
                print(
                    f"| `{name}` | {mode} | {figure(row['b'])} | {figure(row['f'])} | "
                    f"{min(row['calls']):,}..{max(row['calls']):,} | {same}/{len(row['v'])} ({row['v'][0]}) |"
                )


def figure(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} ({min(values):.3g}..{max(values):.3g})"


if __name__ == "__main__":
    main()
