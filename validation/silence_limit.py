"""The pair's silence limit on a busy runner (issue 56): healthy pairs never ended, hung ones ended in time.

    python validation/silence_limit.py --sessions 10 --busy 4 --limit 10
    python validation/silence_limit.py --sessions 3 --busy 0 --limit 10    # alone

Each session runs a generated suite with ``--overhead --overhead-explain`` and
``--overhead-pair-timeout`` at ``--limit`` seconds, beside ``--busy`` loops of
``python -c "while True: pass"`` (busy_runner.py's): three healthy pairs of different shapes (a
thin retry layer over ``json.dumps``, a millisecond-scale pure-Python call, an async pair in the
test's event loop), a pair whose framework callable hangs (``time.sleep(3600)``), and one whose
framework callable hangs only while the sampling profiler explains it. Per session, from pytest's
JUnit XML: each test's outcome and duration, and whether its failure was the silence limit.

The promise: no healthy pair ended by a limit; the hanging pair failed within the limit + 5 s of
its first call; the one that hangs only while explained failed at the limit too (its measurement
before the hang is in its time), and the session was never killed (it used to die by ``SIGALRM``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import busy_loops, pytest_command, session_options  # noqa: E402

SUITE = """
import asyncio
import json
import signal
import time

import pytest

DOCUMENT = {"items": [{"id": n, "name": f"item {n}", "tags": ["a", "b", "c"]} for n in range(40)]}


def handler():
    return json.dumps(DOCUMENT)


def with_retries(call, attempts=3):
    def retried():
        for attempt in range(attempts):
            try:
                return call()
            except ValueError:
                if attempt == attempts - 1:
                    raise
    return retried


def work(size=4000):
    return sorted(str(n * 7919 % size) for n in range(size))


def profiled():  # the sampling profiler holds SIGALRM while it samples
    return getattr(signal.getsignal(signal.SIGALRM), "__name__", "") == "_on_signal"


@pytest.mark.overhead(max=5.0)
def test_healthy_retry_over_json(overhead):
    overhead.compare(handler, with_retries(handler))


@pytest.mark.overhead(max=5.0)
def test_healthy_millisecond_call(overhead):
    overhead.compare(work, lambda: work()[::-1])


@pytest.mark.overhead(max=5.0, processes=1)
async def test_healthy_in_loop(overhead):
    async def bare():
        return handler()

    async def wrapped():
        await asyncio.sleep(0)
        return handler()

    await overhead.acompare(bare, wrapped)


@pytest.mark.overhead(max=5.0)
def test_hangs(overhead):
    overhead.compare(handler, lambda: time.sleep(3600))


@pytest.mark.overhead(max=5.0, processes=1)
def test_hangs_only_while_explained(overhead):
    def framework():
        if profiled():
            time.sleep(3600)
        return with_retries(handler)()

    overhead.compare(handler, framework)
"""
INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
HEALTHY = ("test_healthy_retry_over_json", "test_healthy_millisecond_call", "test_healthy_in_loop")
SILENCE = "made no progress for"


def run(folder: Path, python: str, limit_s: float, timeout_s: float) -> tuple[int, float, dict[str, tuple[str, float]]]:
    """One session: its exit code, wall time and, per test, (outcome, duration)."""
    started = time.monotonic()
    done = subprocess.run(
        pytest_command(python, "--overhead-explain", f"--overhead-pair-timeout={limit_s:g}s", "--junitxml=junit.xml"),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    wall = time.monotonic() - started
    tests: dict[str, tuple[str, float]] = {}
    if (folder / "junit.xml").exists():
        for case in ET.parse(folder / "junit.xml").iter("testcase"):
            failure = case.find("failure")
            outcome = "passed"
            if failure is not None:
                text = (failure.get("message") or "") + (failure.text or "")
                outcome = "silence limit" if SILENCE in text else "failed"
            elif case.find("skipped") is not None:
                outcome = "skipped"
            tests[case.get("name", "?")] = (outcome, float(case.get("time", "nan")))
    return done.returncode, wall, tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    session_options(parser, sessions=10, busy=4)
    parser.add_argument("--limit", type=float, default=10.0, help="--overhead-pair-timeout, seconds")
    args = parser.parse_args()
    ended = late = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "test_suite.py").write_text(SUITE)
        (folder / "pytest.ini").write_text(INI)
        for index in range(args.sessions):
            with busy_loops(args.busy):
                code, wall, tests = run(folder, args.python, args.limit, timeout_s=900)
            healthy_ended = [name for name in HEALTHY if tests.get(name, ("missing", 0))[0] != "passed"]
            hang = tests.get("test_hangs", ("missing", 0.0))
            ended += len(healthy_ended)
            late += hang[0] != "silence limit" or hang[1] > args.limit + 5
            shown = "; ".join(
                f"{name.removeprefix('test_')}: {outcome} {seconds:.1f} s" for name, (outcome, seconds) in tests.items()
            )
            print(f"session {index}: exit {code}, {wall:.0f} s; {shown}", flush=True)
    print(
        f"healthy pairs not passed: {ended} of {len(HEALTHY) * args.sessions}; hanging pair not ended by the "
        f"limit within {args.limit:g} + 5 s: {late} of {args.sessions}"
    )


if __name__ == "__main__":
    main()
