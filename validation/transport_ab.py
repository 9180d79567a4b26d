"""Transport tests in the A/B gate (``--overhead-against``), measured (issue 39).

    python validation/transport_ab.py collect --out DIR    # ~20 min, run alone
    python validation/transport_ab.py report --out DIR

A small git project (``DIR/project``) whose app (``app.py``, served by ``asgi_server`` in its own
process) answers after ``DELAY_S``; two transport tests: a lean load row (``transport.load``,
c=4) and a transport pair (``transport.compare`` of the app against itself behind one extra
await, c=4). The committed tree is the base; the working tree (the head) is either identical or
its app waits 2 ms (then 0.5 ms) more per request. ``--sessions`` sessions of
``--overhead-quick --overhead-against=HEAD --overhead-fail-above=5`` per head, one at a time.

``report``: per head and test, the sessions whose test failed on a regressed figure, and the
changes of p50 and req/s across sessions.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import harness

APP = """
import asyncio

DELAY_S = {delay}


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if DELAY_S:
        await asyncio.sleep(DELAY_S)
    await send({{"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}})
    await send({{"type": "http.response.body", "body": b"ok"}})
"""
TESTS = """
import pytest


@pytest.mark.transport
def test_gateway_load(transport, asgi_server):
    transport.load(asgi_server("app:app"), concurrency=4)


@pytest.mark.transport
def test_gateway_pair(transport, asgi_server):
    server = asgi_server("app:app")
    transport.compare(server, server, concurrency=4, label="same app twice")
"""
BASE_DELAY_S = 0.001
HEADS = {"identical": 0.0, "plus-0.5ms": 0.0005, "plus-2ms": 0.002}


def collect(out: Path, sessions: int) -> None:
    project = out / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "app.py").write_text(APP.format(delay=BASE_DELAY_S))
    (project / "test_gateway.py").write_text(TESTS)
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    if not (project / ".git").exists():
        harness.git(project, "init", "-q")
        harness.git(project, "add", "-A")
        harness.git(project, "commit", "-qm", "base")
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    for index in range(sessions):
        for head, extra in HEADS.items():
            (project / "app.py").write_text(APP.format(delay=BASE_DELAY_S + extra))
            path = runs / f"{head}-{index:02d}.json"
            args = ("--overhead-quick", "--overhead-against=HEAD", "--overhead-fail-above=5")
            ran = harness.session(project, path, *args, measuring=False)
            (runs / f"{head}-{index:02d}.log").write_text(ran.output)
            data = {**ran.run, "wall_s": ran.wall_s, "failed": _failed(ran.output)}
            path.write_text(json.dumps(data))
            print(f"{head} {index}: exit {ran.exit}, {data['wall_s']:.0f} s, failed {data['failed']}", flush=True)
    (project / "app.py").write_text(APP.format(delay=BASE_DELAY_S))


def _failed(stdout: str) -> list[str]:
    return [line.split()[1].split("::")[-1] for line in stdout.splitlines() if line.startswith("FAILED ")]


def report(out: Path) -> None:
    from overheadbench.engine.changes import Change

    runs = out / "runs"
    print("| head | test | sessions | failed (regressed) | p50 change median (min..max) | req/s change median |")
    print("|---|---|---|---|---|---|")
    for head in HEADS:
        found = [json.loads(p.read_text()) for p in sorted(runs.glob(f"{head}-*.json"))]
        for test in ("test_gateway_load", "test_gateway_pair"):
            failed = sum(test in run["failed"] for run in found)
            changes: dict[str, list[float]] = {"p50": [], "rps": []}
            for run in found:
                for figure in run["figures"]:
                    if figure["nodeid"].endswith(test) and figure["metric"] in changes and figure["places"]:
                        if figure["measure"] == "figure" or test.endswith("pair"):
                            change = Change.from_json(figure["places"][0]["change"], "change", test)
                            changes[figure["metric"]].append(change.percent)
            p50, rps = changes["p50"], changes["rps"]
            spread = f"{statistics.median(p50):+.1f}% ({min(p50):+.1f}..{max(p50):+.1f})" if p50 else "n/a"
            rate = f"{statistics.median(rps):+.1f}%" if rps else "n/a"
            print(f"| {head} | {test} | {len(found)} | {failed} | {spread} | {rate} |")
    walls = [json.loads(p.read_text())["wall_s"] for p in runs.glob("*.json")]
    print(f"\nsession wall time: median {statistics.median(walls):.0f} s ({min(walls):.0f}..{max(walls):.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("collect", "report"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.step == "collect":
        collect(out, args.sessions)
    else:
        report(out)


if __name__ == "__main__":
    main()
