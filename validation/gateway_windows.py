"""A streaming proxy at 16 in flight, its requests longer than a default window (issue 56, item 9).

    python validation/gateway_windows.py --sessions 3            # alone, ~2 min a session
    python validation/gateway_windows.py --sessions 3 --busy 4

Each session is a pytest session of a generated test: a Starlette app that proxies the built-in
app's server-sent-events stream (20 events, one every 20 ms: a request takes ~0.4 s, longer than
the default 0.25 s window) over one pooled httpx client, measured by ``transport.compare`` against
the upstream called directly at 16 in flight (default windows and rounds); then, in the same test,
against the same two servers, an independent loop: 16 httpx tasks per side for ``LOOP_S`` seconds,
the sides alternating three times, every request's latency kept. Compared per session: each side's
req/s and p50, and the pair's change of both, the plugin's against the loop's. The promise: within
10% of the independent loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import harness

sys.path.insert(0, str(Path(__file__).parent))
from harness import busy_loops, session_options  # noqa: E402

PROXY = """
import contextlib
import os

import httpx
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

UPSTREAM = os.environ.get("UPSTREAM_URL", "http://127.0.0.1:9")


@contextlib.asynccontextmanager
async def lifespan(app):
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(base_url=UPSTREAM, limits=limits, timeout=30) as client:
        yield {"client": client}


async def proxy(request):
    client = request.state.client
    upstream = await client.send(client.build_request("GET", "/stream", params=request.query_params), stream=True)

    async def body():
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()

    return StreamingResponse(body(), media_type="text/event-stream")


app = Starlette(routes=[Route("/proxy", proxy)], lifespan=lifespan)
"""
TEST = '''
import asyncio
import json
import statistics
import time

import httpx
import pytest
from overheadbench.http.loadrun import Target

QUERY = "chunks=20&size=100&delay_ms=20"
LOOP_S = {loop_s}


async def independent(url, concurrency, seconds):
    """``concurrency`` tasks requesting ``url`` back to back for ``seconds``: req/s and every latency."""
    latencies = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        end = time.perf_counter() + seconds

        async def worker():
            while time.perf_counter() < end:
                started = time.perf_counter()
                response = await client.get(url)
                response.raise_for_status()
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return len(latencies) / (time.perf_counter() - started), latencies


@pytest.mark.transport
def test_proxy_at_16(transport, asgi_server):
    upstream = asgi_server()
    proxy = asgi_server("proxy_app:app", env={{"UPSTREAM_URL": upstream.url}})
    transport.compare(Target(upstream, path=f"/stream?{{QUERY}}"), Target(proxy, path=f"/proxy?{{QUERY}}"),
                      concurrency=16, label="proxy vs upstream c=16")
    sides = {{"baseline": f"{{upstream.url}}/stream?{{QUERY}}", "framework": f"{{proxy.url}}/proxy?{{QUERY}}"}}
    found = {{side: ([], []) for side in sides}}
    for _ in range(3):
        for side, url in sides.items():
            rate, latencies = asyncio.run(independent(url, 16, LOOP_S))
            found[side][0].append(rate)
            found[side][1].extend(latencies)
    loop = {{side: {{"rps": statistics.mean(rates), "p50": statistics.median(latencies)}}
            for side, (rates, latencies) in found.items()}}
    with open("loop.json", "w") as out:
        json.dump(loop, out)
'''


def session(folder: Path, python: str) -> dict:
    ran = harness.session(folder, folder / "run.json", "--overhead-inconclusive=warn", python=python, timeout_s=900)
    plugin: dict[str, dict[str, float]] = {"baseline": {}, "framework": {}, "change": {}}
    for figure in ran.figures:
        row, metric, value = figure["row"], figure["metric"], figure["check"]["value"]
        side = "baseline" if "[baseline]" in row else "framework" if "[framework]" in row else "change"
        if metric in ("rps", "p50") and (side != "change" or figure["measure"] == "max"):
            plugin[side].setdefault(metric, value)
    loop = json.loads((folder / "loop.json").read_text())
    loop["change"] = {metric: loop["framework"][metric] / loop["baseline"][metric] - 1 for metric in ("rps", "p50")}
    return {"plugin": plugin, "loop": loop}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    session_options(parser, sessions=3, busy=0)
    parser.add_argument("--loop-s", type=float, default=5.0, help="each side's independent loop, per turn")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "proxy_app.py").write_text(PROXY)
        (folder / "test_proxy.py").write_text(TEST.format(loop_s=args.loop_s))
        (folder / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
        for index in range(args.sessions):
            with busy_loops(args.busy):
                found = session(folder, args.python)
            parts = []
            for side in ("baseline", "framework", "change"):
                for metric in ("rps", "p50"):
                    ours, theirs = found["plugin"][side].get(metric, float("nan")), found["loop"][side][metric]
                    off = (ours - theirs) / abs(theirs) if side != "change" else ours - theirs
                    unit = "points" if side == "change" else "of the loop's"
                    parts.append(f"{side} {metric}: {ours:.4g} vs {theirs:.4g} ({100 * off:+.1f}% {unit})")
            print(f"session {index}: " + "; ".join(parts), flush=True)


if __name__ == "__main__":
    main()
