"""``load(server, ...)``: a fixed request from lean worker processes, released together, and
their reports merged into one :class:`~overheadbench.http.load.Throughput`.

The workers (:mod:`overheadbench.http.loadgen`) connect to every target and warm up first; only
when all say ``ready`` are they told ``go``, so connection set-up is outside the measured
seconds, and :class:`Workers` can go on with more windows on either target (a transport pair's
sides alternating). The servers' CPU is read from the OS around each window (every server
running, the target's first); each worker's own CPU is its report's; both are divided by the
requests served (finished in time or during the drain).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.exits import exit_story
from .connections import MAX_BODY, Job, LoadError
from .load import Throughput
from .protocols import HttpProtocol
from .recorder import WorkerReport
from .server import SERVING, Server
from .tls import authority

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


@dataclass(frozen=True)
class Target:
    """One request against one server: what a load (or one side of a transport pair) sends.

    The request defaults to what any app answers: ``GET /`` with no body; a ``body`` makes it a
    ``POST`` (``method`` chooses another), and a body with ``GET`` or ``HEAD`` is refused.
    ``headers`` go with every request (default: ``content-type: application/json`` when there is
    a body, none without)."""

    server: Server
    method: str | None = None
    path: str = "/"
    body: bytes = b""
    headers: dict[str, str] | None = None

    @property
    def label(self) -> str:
        """The target in a pair's default row name: its protocol, and its path when not ``/``."""
        return f"{self.server.protocol}{'' if self.path == '/' else ' ' + self.path}"

    def jobs(self, shares: Sequence[int], duration_s: float, warmup: int) -> list[Job]:
        """A job per worker (its share of the requests in flight), or ``ValueError`` naming the mistake."""
        body = self.body
        if len(body) > MAX_BODY:
            raise ValueError(f"the lean load sends bodies of at most {MAX_BODY:,} bytes, not {len(body):,}")
        method = (self.method or ("POST" if body else "GET")).upper()
        if body and method in BODILESS:
            raise ValueError(
                f"method={method} with a body ({len(body):,} bytes): a {method} request carries none (a server may "
                f"drop the connection over it); use method='POST', or leave the body out"
            )
        server = self.server
        default_headers = {"content-type": "application/json"} if body else {}
        sent = default_headers if self.headers is None else {k.lower(): v for k, v in self.headers.items()}
        port = server.quic_port if server.protocol == "h3" else int(server.url.rsplit(":", 1)[1])
        assert port is not None
        cadata = authority().cert_pem.bytes().decode() if server.tls else None
        return [
            Job(
                HttpProtocol(server.protocol),
                port,
                method,
                self.path,
                base64.b64encode(body).decode(),
                share,
                duration_s,
                max(warmup // len(shares), 1),
                cadata,
                headers=tuple(sent.items()),
            )
            for share in shares
        ]


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
    """Keep ``concurrency`` copies of one request (a :class:`Target`'s) in flight against ``server``
    for ``duration_s``, from ``processes`` worker processes (default: :func:`default_processes`).
    Latency, req/s per window, errors, the workers' and the servers' CPU per request. (Whether the
    server really had that many requests in flight is
    :func:`~overheadbench.http.sweeps.in_flight_probe`'s question: an app that never awaits
    finishes each request before the next one is read, so its own gauge says 1 whatever the load.)"""
    target = Target(server, method, path, body, headers)
    with Workers([target], concurrency, duration_s, processes=processes, warmup=warmup) as workers:
        return workers.window(0)


def servers_running(first: Sequence[Server]) -> list[Server]:
    """``first`` and every other server running now, each once: whose CPU a load reads."""
    seen: dict[int, Server] = {id(server): server for server in first}
    for server in SERVING.values():
        seen.setdefault(id(server), server)
    return list(seen.values())


class ServersCPU:
    """Every server running (``first`` first), named, with their CPU seconds read around a window."""

    def __init__(self, first: Sequence[Server]) -> None:
        self.servers = servers_running(first)
        names = [server.name for server in self.servers]
        # numbered when two share a name (two echo servers over HTTP/1.1)
        self.names = [
            f"{name} #{names[:index].count(name) + 1}" if names.count(name) > 1 else name
            for index, name in enumerate(names)
        ]

    def read(self) -> list[float]:
        return [server.cpu_s() for server in self.servers]

    def spent(self, before: Sequence[float]) -> list[tuple[str, float]]:
        """Each server's CPU seconds since ``before`` (a :meth:`read`), by name."""
        return [(name, now - then) for name, now, then in zip(self.names, self.read(), before, strict=True)]


class Workers:
    """Lean worker processes connected to every target and warm: each :meth:`window` loads one
    target for ``window_s`` while the others' connections wait open, so a transport pair's two
    sides alternate window by window with nothing set up between them. A context manager: the
    workers end with it, whatever happened."""

    def __init__(
        self,
        targets: Sequence[Target],
        concurrency: int,
        window_s: float,
        *,
        processes: int | None = None,
        warmup: int = 20,
    ) -> None:
        if concurrency < 1 or window_s <= 0:
            raise ValueError(f"concurrency must be >= 1 and duration > 0 (got {concurrency}, {window_s})")
        count = min(processes or default_processes(concurrency), concurrency)
        shares = [concurrency // count + (index < concurrency % count) for index in range(count)]
        per_target = [target.jobs(shares, window_s, warmup) for target in targets]
        self.jobs = [[jobs[worker] for jobs in per_target] for worker in range(count)]
        self.targets, self.concurrency = list(targets), concurrency
        self.cpu = ServersCPU([target.server for target in targets])
        self.processes: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Workers:
        environ = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
        try:
            for jobs in self.jobs:
                command = [sys.executable, "-m", "overheadbench.http.loadgen"]
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=environ,
                )
                self.processes.append(process)
                self._say(process, json.dumps([dataclasses.asdict(job) for job in jobs]))
            for process in self.processes:
                self._line(process, "before it was ready", self.targets[0].server, expected="ready")
        except BaseException:
            self.__exit__()
            raise
        return self

    def window(self, index: int, window_s: float | None = None) -> Throughput:
        """Release every worker on target ``index`` for one window (of the workers' duration, or
        ``window_s``) and merge their reports."""
        server = self.targets[index].server
        started = self.cpu.read()
        for process in self.processes:
            self._say(process, f"go {index}" if window_s is None else f"go {index} {window_s!r}")
        lines = [self._line(process, "while the load ran", server) for process in self.processes]
        reports = [WorkerReport.from_json(json.loads(line)) for line in lines]
        spent = self.cpu.spent(started)
        return WorkerReport.merged(reports).throughput(self.concurrency, sum(s for _, s in spent), spent)

    def __exit__(self, *_: object) -> None:
        for process in self.processes:
            try:
                if process.poll() is None and process.stdin is not None and not process.stdin.closed:
                    process.stdin.close()  # end of commands: the worker closes its connections and exits
                process.wait(timeout=WORKER_END_S)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()

    @staticmethod
    def _say(process: subprocess.Popen[str], line: str) -> None:
        assert process.stdin is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()

    @staticmethod
    def _line(process: subprocess.Popen[str], when: str, server: Server, expected: str = "{") -> str:
        """The worker's next line when it starts with ``expected`` (``ready``, a report's ``{``),
        else :class:`LoadError` with its own fatal error or the story of how it ended."""
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith(expected):
            raise LoadError(_worker_failure(process, line, server, when))
        if expected == "{" and "fatal" in (report := json.loads(line)):
            raise LoadError(_fatal(report["fatal"], server))
        return line


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
