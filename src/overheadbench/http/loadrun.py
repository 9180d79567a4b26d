"""``load(server, ...)``: a fixed request from lean worker processes, released together, and
their reports merged into one :class:`~overheadbench.http.load.Throughput`.

The workers (:mod:`overheadbench.http.loadgen`) connect and warm up first; only when all say
``ready`` are they told ``go``, so connection set-up is outside the measured seconds. The
server's CPU is read from the OS around the run; each worker's own CPU is its report's; both
are divided by the requests served (finished in time or during the drain).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys

from ..core.exits import exit_story
from .load import Throughput, WorkerReport
from .loadgen import MAX_BODY, Job, LoadError
from .protocols import HttpProtocol
from .server import Server, authority

START_TIMEOUT_S = 30.0
WORKER_END_S = 2.0
"""How long a worker whose output ended gets to exit before it is killed (its exit code is the story)."""
DEFAULT_BODY = b'{"message": "hello", "padding": "' + b"x" * 60 + b'"}'
"""About 100 bytes of JSON, the reference figures' request (``POST /echo`` on the built-in app)."""
BODILESS = ("GET", "HEAD")
"""Methods whose request carries no body: a server may drop the connection over one that does."""
CLOSED_HINT = (
    "the server dropped the connection instead of answering; its output (if any) follows. Usual causes: "
    "the server process crashed or was stopped, or it refused the request at the protocol level "
    "(over HTTP/2 hypercorn drops a stream whose body the app did not read)"
)


def default_processes(concurrency: int) -> int:
    """One worker per two cores (the server needs the others), never more than requests in flight."""
    return max(1, min(concurrency, (os.cpu_count() or 2) // 2))


def load(
    server: Server,
    *,
    concurrency: int = 1,
    duration_s: float = 2.0,
    method: str | None = None,
    path: str = "/",
    body: bytes = b"",
    processes: int | None = None,
    warmup: int = 20,
    headers: dict[str, str] | None = None,
) -> Throughput:
    """Keep ``concurrency`` copies of one request in flight against ``server`` for ``duration_s``,
    from ``processes`` worker processes (default: :func:`default_processes`). Latency, req/s
    per window, errors, the workers' and the server's CPU per request.

    The request defaults to what any app answers: ``GET /`` with no body; a ``body`` makes it a
    ``POST`` (``method`` chooses another), and a body with ``GET`` or ``HEAD`` is refused.
    ``headers`` go with every request (default: ``content-type: application/json`` when there is
    a body, none without). (Whether the server
    really had that many requests in flight is :func:`~overheadbench.http.sweeps.in_flight_probe`'s
    question: an app that never awaits finishes each request before the next one is read,
    so its own gauge says 1 whatever the load.)"""
    if concurrency < 1 or duration_s <= 0:
        raise ValueError(f"concurrency must be >= 1 and duration > 0 (got {concurrency}, {duration_s})")
    if len(body) > MAX_BODY:
        raise ValueError(f"the lean load sends bodies of at most {MAX_BODY:,} bytes, not {len(body):,}")
    method = (method or ("POST" if body else "GET")).upper()
    if body and method in BODILESS:
        raise ValueError(
            f"method={method} with a body ({len(body):,} bytes): a {method} request carries none (a server may "
            f"drop the connection over it); use method='POST', or leave the body out"
        )
    workers = min(processes or default_processes(concurrency), concurrency)
    default_headers = {"content-type": "application/json"} if body else {}
    sent = default_headers if headers is None else {k.lower(): v for k, v in headers.items()}
    shares = [concurrency // workers + (index < concurrency % workers) for index in range(workers)]
    port = server.quic_port if server.protocol == "h3" else int(server.url.rsplit(":", 1)[1])
    assert port is not None
    cadata = authority().cert_pem.bytes().decode() if server.tls else None
    jobs = [
        Job(HttpProtocol(server.protocol), port, method, path, base64.b64encode(body).decode(), share, duration_s,
            max(warmup // workers, 1), cadata, headers=tuple(sent.items()))
        for share in shares
    ]  # fmt: skip
    reports, server_s = _run_workers(jobs, server)
    return WorkerReport.merged(reports).throughput(concurrency, server_s)


def _run_workers(jobs: list[Job], server: Server) -> tuple[list[WorkerReport], float]:
    """Start a worker process per job, release them together, and gather their reports, with the
    server's CPU seconds over the run."""
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "overheadbench.http.loadgen"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        for _ in jobs
    ]
    try:
        for process, job in zip(processes, jobs, strict=True):
            assert process.stdin is not None
            process.stdin.write(json.dumps(dataclasses.asdict(job)) + "\n")
            process.stdin.flush()
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            if line.strip() != "ready":
                raise LoadError(_worker_failure(process, line, server, "before it was ready"))
        cpu_started = server.cpu_s()
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        reports = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith("{"):
                raise LoadError(_worker_failure(process, line, server, "while the load ran"))
            report = json.loads(line)
            if "fatal" in report:
                raise LoadError(_fatal(report["fatal"], server))
            reports.append(WorkerReport.from_json(report))
        return reports, server.cpu_s() - cpu_started
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


def _fatal(error: str, server: Server) -> str:
    """A worker's fatal error, with the likely cause and the server's output when the server hung up."""
    text = f"a load worker for {server.url} ({server.protocol}) failed: {error}"
    if "closed the connection" in error or "ended the connection" in error:
        output = server.output().strip()
        text += f"; {CLOSED_HINT}" + (f":\n{output[-2000:]}" if output else "")
    return text


def _worker_failure(process: subprocess.Popen[str], line: str, server: Server, when: str) -> str:
    """A worker that did not answer as it should: its own fatal error, or how it ended (the
    signal that killed it) and what it printed."""
    if line.startswith("{"):
        return _fatal(json.loads(line).get("fatal", line), server)
    try:  # end of its output: it is ending, or has ended; how, is the story
        code: int | None = process.wait(timeout=WORKER_END_S)
    except subprocess.TimeoutExpired:
        code = None
        process.kill()
    _, errors = process.communicate()
    printed = (line + errors).strip()
    return f"a load worker for {server.url} ({server.protocol}) stopped {when}: it {exit_story(code)}" + (
        f"; its output:\n{printed[-2000:]}" if printed else ""
    )
