"""The gateway of gateway_windows.py in the A/B gate (issue 70): does a 5% head get decided?

    python validation/gateway_ab.py --out DIR --sessions 3 --busy 2

A Starlette proxy of the built-in app's event stream (20 events 20 ms apart: a request takes ~0.42 s),
measured by ``transport.compare`` against the upstream at 16 in flight, in a git project. The head's
proxy waits ``extra_ms.txt`` ms more per request: ``--slower`` (5%) of the proxy's p50 as the base
tree's rounds read it in an A/B session of main against itself beside the same busy loops. Each
session: ``pytest --overhead --overhead-against=main --overhead-fail-above=transport:5`` on main
(identical trees) and on the head. Reported per tree: the pair's latency ratios (gated) and the
proxy side's latencies (shown only): each change, what it detects and the gate's finding at 5%.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import harness
from gateway_windows import PROXY

APP = PROXY.replace(
    "import contextlib\nimport os\n",
    "import asyncio\nimport contextlib\nimport os\nimport pathlib\n\n"
    'EXTRA_S = float(pathlib.Path(__file__).with_name("extra_ms.txt").read_text()) / 1000\n',
).replace(
    "async def proxy(request):\n",
    "async def proxy(request):\n    await asyncio.sleep(EXTRA_S)  # what the head adds\n",
)
TEST = """
import pytest
from overheadbench.http.loadrun import Target

QUERY = "chunks=20&size=100&delay_ms=20"


@pytest.mark.transport
def test_proxy_at_16(transport, asgi_server):
    upstream = asgi_server()
    proxy = asgi_server("proxy_app:app", env={"UPSTREAM_URL": upstream.url})
    transport.compare(Target(upstream, path=f"/stream?{QUERY}"), Target(proxy, path=f"/proxy?{QUERY}"),
                      concurrency=16, label="proxy c=16")
"""
ROWS = ("proxy c=16", "proxy c=16 [framework]")
"""The pair's ratios (gated) and the proxy side's own figures (shown, not gated)."""
LATENCIES = ("p50", "p95", "p99")
THRESHOLD = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    harness.session_options(parser, sessions=3, busy=2)
    parser.add_argument("--slower", type=float, default=0.05, help="the head's share of the proxy's p50")
    args = parser.parse_args()
    folder = harness.git_project(args.out, {"proxy_app.py": APP, "test_proxy.py": TEST, "extra_ms.txt": "0"})
    harness.git(folder, "add", "-A")
    harness.git(folder, "commit", "-qm", "main")
    against = ("--overhead-against=main", f"--overhead-fail-above=transport:{THRESHOLD:g}")
    with harness.busy_loops(args.busy, seconds=7200.0):
        plain = harness.session(folder, args.out / "plain.json", paths=[harness.SRC], timeout_s=900)
        base = harness.session(folder, args.out / "calibration.json", *against, paths=[harness.SRC], timeout_s=900)
        p50 = next(
            f["places"][0]["change"]["old"] for f in base.figures if f["row"] == ROWS[1] and f["metric"] == "p50"
        )
        extra_ms = args.slower * p50 * 1000
        print(
            f"plain session {plain.wall_s:.0f} s; the proxy's p50 {1000 * p50:.0f} ms: the head waits {extra_ms:.1f} ms"
        )
        harness.git(folder, "checkout", "-qb", "head")
        (folder / "extra_ms.txt").write_text(f"{extra_ms:.3f}")
        harness.git(folder, "commit", "-qam", "head: the proxy waits")
        found: dict[str, list[dict[tuple[str, str], tuple[float, float, str]]]] = {"main": [], "head": []}
        for number in range(args.sessions):
            for tree in ("main", "head"):
                harness.git(folder, "checkout", "-q", tree)
                out = args.out / f"{tree}{number}.json"
                ran = harness.session(folder, out, *against, paths=[harness.SRC], timeout_s=900)
                found[tree].append(harness.base_changes(ran.run, ROWS, LATENCIES, THRESHOLD))
                print(f"session {number} {tree}: exit {ran.exit}, {ran.wall_s:.0f} s", flush=True)
    for tree, sessions in found.items():
        for row in ROWS:
            cells = [s[(row, metric)] for s in sessions for metric in LATENCIES if (row, metric) in s]
            decided = sum(finding != "unknown" for _, _, finding in cells)
            said = "; ".join(f"{p:+.1f}% ±{d:.1f}% {f}" for p, d, f in cells)
            print(f"{tree}: {row} p50/p95/p99: {decided} of {len(cells)} decided: {said}")


if __name__ == "__main__":
    main()
