"""Replica processes: the same test re-run in fresh interpreters, each timing the pair once more.

Why fresh processes: a pair's ratio depends on where code and objects land in memory
(ASLR, hash seed). Here it moved 1–3 points between fresh processes while one process's own
interval was ±0.3 points, and a forked child did not reproduce the spread. Like pyperf, we
re-run the measurement in new processes and let the interval include the spread between them.

Why one at a time: replica processes sampling *at the same time* on a 2-core machine
disturbed each other (A/A replica sd 1.2–1.6 points with -5% outliers, against 0.3 alone).
So the replicas start together (their ~0.6 s start-up overlaps), report ready, and wait;
the controller samples its own replica, then lets each worker sample in turn.

Protocol: the controller re-runs exactly one node (``python -m pytest NODEID``) with a JSON
request in ``OVERHEADBENCH_WORKER`` naming two inherited pipe descriptors. In the worker the
``overhead`` fixture calls the pair once, writes a byte to the *ready* pipe, blocks reading the
*go* pipe (which carries the controller's calls per block), samples, writes its samples to
the file named in the request, and skips the rest of the test.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Generator

from .jsonio import write_json_atomic
from .options import Settings
from .sampling import Request, ReplicaSamples, calibrate, replica_plan

WORKER_ENV = "OVERHEADBENCH_WORKER"
WORKER_TIMEOUT_S = 120.0


class ReplicaError(Exception):
    """A replica process failed; the message carries the end of its output."""


@dataclass(frozen=True)
class WorkerRequest:
    """What a replica process is asked to do, passed as JSON in ``OVERHEADBENCH_WORKER``."""

    nodeid: str
    settings: Settings
    out: str
    ready_fd: int
    go_fd: int

    def to_env(self) -> str:
        return json.dumps({"nodeid": self.nodeid, "settings": self.settings.to_json(), "out": self.out,
                           "ready_fd": self.ready_fd, "go_fd": self.go_fd})

    @classmethod
    def from_env(cls, environ: Any = os.environ) -> WorkerRequest | None:
        raw = environ.get(WORKER_ENV)
        if not raw:
            return None
        data = json.loads(raw)
        return cls(data["nodeid"], Settings.from_json(data["settings"]), data["out"], data["ready_fd"], data["go_fd"])

    def ready_then_wait(self) -> int:
        """Tell the controller this process is ready; block until it says go; return calls per block."""
        os.write(self.ready_fd, b"r")
        os.close(self.ready_fd)
        with os.fdopen(self.go_fd, "rb") as go:
            return int(json.loads(go.read())["calls_per_block"])

    def write(self, samples: ReplicaSamples) -> None:
        write_json_atomic(self.out, samples.to_json())


def pending_request(nodeid: str, environ: Any = os.environ) -> WorkerRequest | None:
    """The worker request for ``nodeid`` when this process is a replica worker for it."""
    request = WorkerRequest.from_env(environ)
    return request if request is not None and request.nodeid == nodeid else None


@dataclass(frozen=True)
class Launch:
    """How to start pytest again on one node: interpreter, root, ini, plugins.

    ``plugins`` None means "autoload every installed plugin, as the first run did";
    a tuple means "autoload nothing and load these modules": starting a replica with
    all of a busy environment's plugins cost 1.2 s for three at once here, 0.5 s without.
    """

    rootdir: Path
    inifile: Path | None
    plugin_args: tuple[str, ...]
    plugins: tuple[str, ...] | None = None

    def command(self, nodeid: str) -> list[str]:
        command = [sys.executable, "-m", "pytest", nodeid, "-q", "--no-header", "-p", "no:cacheprovider",
                   "-p", "no:xdist", "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(self.rootdir)]
        if self.inifile is not None:
            command += ["-c", str(self.inifile)]
        for module in self.plugins or ():
            command += ["-p", module]
        return command + list(self.plugin_args)

    def environ(self, request: WorkerRequest) -> dict[str, str]:
        environ = dict(os.environ, **{WORKER_ENV: request.to_env()})
        if self.plugins is not None:
            environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        return environ


def needed_plugins(item: Any) -> tuple[str, ...]:
    """The installed (entry-point) plugins a replica of ``item`` needs: those that define a
    fixture the test uses, and, for an ``async def`` test, those that run test functions
    (``pytest_pyfunc_call``: pytest-asyncio, anyio's plugin). Others are left out."""
    manager = item.config.pluginmanager
    installed = {getattr(plugin, "__name__", ""): plugin for plugin, _ in manager.list_plugin_distinfo()}
    top = lambda name: name.split(".")[0]  # noqa: E731
    wanted = {"overheadbench"}
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        wanted.update(top(getattr(d.func, "__module__", "") or "") for d in definitions)
    if inspect.iscoroutinefunction(getattr(item, "obj", None)):
        wanted.update(top(getattr(impl.plugin, "__name__", "")) for impl in manager.hook.pytest_pyfunc_call.get_hookimpls())
    return tuple(sorted(name for name in installed if name and top(name) in wanted))


def plugin_args(invocation_args: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The ``-p NAME`` options of the original command line, which a re-run needs too."""
    found: list[str] = []
    args = list(invocation_args)
    for index, arg in enumerate(args):
        if arg == "-p" and index + 1 < len(args):
            found += ["-p", args[index + 1]]
        elif arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            found += ["-p", arg[2:]]
    return tuple(found)


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    out: Path
    log: IO[bytes]
    ready_fd: int
    go_fd: int


@dataclass
class ReplicaPool:
    """Fresh pytest processes for one pair: started together, sampled one at a time."""

    launch: Launch
    nodeid: str
    settings: Settings
    _folder: tempfile.TemporaryDirectory[str] = field(default_factory=lambda: tempfile.TemporaryDirectory(prefix="overheadbench-"))
    _waiting: list[_Worker] = field(default_factory=list)
    _started: int = 0

    def start(self, count: int) -> None:
        for _ in range(count):
            self._started += 1
            out = Path(self._folder.name, f"replica-{self._started}.json")
            ready_read, ready_write = os.pipe()
            go_read, go_write = os.pipe()
            request = WorkerRequest(self.nodeid, self.settings, str(out), ready_write, go_read)
            log = open(Path(self._folder.name, f"replica-{self._started}.log"), "w+b")
            try:
                process = subprocess.Popen(
                    self.launch.command(self.nodeid), cwd=self.launch.rootdir, stdin=subprocess.DEVNULL,
                    stdout=log, stderr=subprocess.STDOUT, pass_fds=(ready_write, go_read),
                    env=self.launch.environ(request),
                )
            finally:
                os.close(ready_write)
                os.close(go_read)
            self._waiting.append(_Worker(process, out, log, ready_read, go_write))

    def wait_ready(self) -> None:
        """Block until every started process has reported ready (or fail with its output)."""
        deadline = time.monotonic() + WORKER_TIMEOUT_S
        for worker in self._waiting:
            readable, _, _ = select.select([worker.ready_fd], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                self._fail(worker, f"did not get ready within {WORKER_TIMEOUT_S:.0f} s")
            if os.read(worker.ready_fd, 1) != b"r":
                worker.process.wait(timeout=WORKER_TIMEOUT_S)
                self._fail(worker, f"exited with code {worker.process.returncode} before measuring the pair")

    def sample_each(self, calls_per_block: int) -> list[ReplicaSamples]:
        """Let each ready process sample in turn; return their samples."""
        results = []
        while self._waiting:
            worker = self._waiting[0]
            with os.fdopen(worker.go_fd, "wb") as go:
                worker.go_fd = -1
                go.write(json.dumps({"calls_per_block": calls_per_block}).encode())
            try:
                worker.process.wait(timeout=WORKER_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._fail(worker, f"did not finish within {WORKER_TIMEOUT_S:.0f} s")
            if not worker.out.exists():
                self._fail(worker, f"exited with code {worker.process.returncode} without writing its samples")
            results.append(ReplicaSamples.from_json(json.loads(worker.out.read_text(encoding="utf-8"))))
            self._discard(worker)
        return results

    def close(self) -> None:
        """Stop whatever still runs and remove the temporary files; safe to call twice."""
        while self._waiting:
            self._discard(self._waiting[0])
        self._folder.cleanup()

    def _fail(self, worker: _Worker, what: str) -> None:
        worker.log.flush()
        worker.log.seek(0)
        tail = "\n".join(worker.log.read().decode(errors="replace").strip().splitlines()[-15:])
        raise ReplicaError(f"{self.nodeid}: a replica process (a fresh `pytest {self.nodeid}`) {what}. "
                           f"Its output ended:\n{tail}")

    def _discard(self, worker: _Worker) -> None:
        self._waiting.remove(worker)
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()
        for fd in (worker.ready_fd, worker.go_fd):
            if fd >= 0:
                os.close(fd)
        worker.log.close()


def pair_plan(
    settings: Settings,
    rng: Any,
    clock_ns: Callable[[], int],
    pool: ReplicaPool | Any,
    more_needed: Callable[[list[ReplicaSamples]], bool],
) -> Generator[Request, int, list[ReplicaSamples]]:
    """The controller's whole procedure for a pair, as one plan for the sampling drivers.

    Calibrate; start ``processes - 1`` replicas; when all are ready, sample here, then in
    each replica in turn. While ``more_needed`` (interval too wide, or verdict not yet
    decided) and another round of ``extra_processes`` is expected to fit the time budget,
    run another round. A round's cost is predicted from the first: start-up scales with
    the number of processes per core (2 here), sampling with the number of processes.
    """
    started = clock_ns()
    extra = settings.processes - 1
    try:
        calls = yield from calibrate(settings)  # a few ms, before the replicas load the machine
        if not extra:
            return [(yield from replica_plan(settings, rng, clock_ns, calls))]
        pool.start(extra)
        pool.wait_ready()
        ready_at = clock_ns()
        replicas = [(yield from replica_plan(settings, rng, clock_ns, calls))]
        replicas += pool.sample_each(calls)
        startup_ns = (ready_at - started) * math.ceil(settings.extra_processes / 2) / math.ceil(extra / 2)
        round_ns = startup_ns + (clock_ns() - ready_at) * settings.extra_processes / settings.processes
        while more_needed(replicas) and clock_ns() - started + round_ns <= settings.time_budget_s * 1e9:
            pool.start(settings.extra_processes)
            pool.wait_ready()
            replicas += pool.sample_each(calls)
        return replicas
    finally:
        if extra:
            pool.close()


def worker_plan(
    request: WorkerRequest, rng: Any, clock_ns: Callable[[], int]
) -> Generator[Request, int, list[ReplicaSamples]]:
    """A replica process's procedure: ready, wait for go, sample, write the samples."""
    calls = request.ready_then_wait()
    samples = yield from replica_plan(request.settings, rng, clock_ns, calls)
    request.write(samples)
    return [samples]
