"""Lean load generation: one fixed request, sent back to back from worker processes, as wrk
and h2load do, so the load generator is not what limits the figure.

httpx costs ~1 ms of client CPU per request on the reference machine (docs/http.md; 1.4 ms
over h2c), which capped every throughput figure at ~600–1,000 req/s against a server that wrk
drives at ~5,000. The workers here speak the protocol directly on asyncio (:mod:`.connections`:
one connection per concurrent request over HTTP/1.1, as wrk; streams multiplexed over connections
of at most ``STREAMS_PER_CONNECTION`` over HTTP/2 and HTTP/3). Each worker measures its own requests' latency and
its own CPU; :func:`overheadbench.http.loadrun.load` starts them, releases them together and merges
what they report.

Run as ``python -m overheadbench.http.loadgen``: it reads its jobs (:class:`~.connections.Job`, one per
target) as one JSON line on stdin, connects and warms up, prints ``ready``, and then runs a window on
the target each ``go <index>`` line names, printing each window's report as one JSON line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from typing import Any

from .connections import Connection, Job, connect
from .protocols import HttpProtocol
from .recorder import DRAIN_S, Recorder


async def window(job: Job, connections: list[Connection]) -> dict[str, Any]:
    """Keep ``job.concurrency`` requests in flight over ``connections`` for ``job.duration_s``,
    recorded by :class:`~overheadbench.http.recorder.Recorder`'s rule (the same as
    :func:`~overheadbench.http.recorder.throughput`'s): one window's report."""
    recorder = Recorder(job.duration_s)
    cpu_started = time.process_time()
    count = len(connections)
    tasks = [asyncio.ensure_future(recorder.worker(connections[i % count].send)) for i in range(job.concurrency)]
    _, pending = await asyncio.wait(tasks, timeout=job.duration_s + DRAIN_S)
    for task in pending:
        task.cancel()
    return recorder.report(time.process_time() - cpu_started).to_json()


def read_jobs(line: str) -> list[Job]:
    """The jobs a worker is given: a JSON list, one per target it loads."""
    return [
        Job(**{**data, "protocol": HttpProtocol(data["protocol"]), "headers": tuple(map(tuple, data["headers"]))})
        for data in json.loads(line)
    ]


async def _serve_parent() -> None:
    """Connect to every target and warm up, say ``ready``, then run a window on the target each
    ``go <index> [seconds]`` line names (for its job's duration, or that many seconds: a window
    grown to the requests' own time), a report line each, until stdin ends (targets alternate this
    way with their connections kept warm between windows)."""
    loop = asyncio.get_running_loop()

    async def line() -> str:
        return await loop.run_in_executor(None, sys.stdin.readline)

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    opened: list[list[Connection]] = []
    try:
        jobs = read_jobs(await line())
        for job in jobs:
            opened.append(await connect(job))
        say("ready")
        while (command := (await line()).split()) and command[0] == "go":
            job = jobs[int(command[1])]
            if len(command) > 2:
                job = dataclasses.replace(job, duration_s=float(command[2]))
            say(json.dumps(await window(job, opened[int(command[1])])))
    except Exception as exc:  # reported to the parent, which raises it with the worker's words
        say(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}))
    finally:
        for connections in opened:
            for connection in connections:
                await connection.close()


if __name__ == "__main__":
    asyncio.run(_serve_parent())
