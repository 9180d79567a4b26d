"""Replica processes: fresh interpreters that re-run the session's overhead tests, each timing
every pair once more.

Why fresh processes: a pair's ratio depends on where code and objects land in memory
(ASLR, hash seed). Here it moved 1–3 points between fresh processes while one process's own
interval was ±0.3 points, and a forked child did not reproduce the spread. Like pyperf, we
re-run the measurement in new processes and let the interval include the spread between them.

Why one pool for the whole session: a replica is a pytest process, ~0.35 s of CPU to start.
Started per pair, four of them cost ~0.7 s of every pair's 2 s budget on 2 cores. A replica
that runs *all* the session's overhead tests, in the controller's order, pays that once.

Why one at a time: replica processes sampling *at the same time* on a 2-core machine
disturbed each other (A/A replica sd 1.2–1.6 points with -5% outliers, against 0.3 alone).
So every live replica is parked (blocked on a pipe) at the pair's ``compare`` while anything
is timed; the controller samples here, then lets one replica at a time sample; only when the
pair is done are all of them released to run on to the next pair together.

Protocol (JSON lines over two inherited pipes, named in ``OVERHEADBENCH_WORKER`` with the
node ids to run): the worker's ``overhead`` fixture calls the pair once and sends
``{"ready": nodeid}``; the controller answers ``{"go": calls_per_block}`` (sample; the worker
answers ``{"samples": ...}`` and waits again) or ``{"next": true}`` (run on). End of file on
the command pipe means the controller has finished: the worker stops its session.
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
from typing import IO, Any, Callable, Generator, Iterable, Sequence

from .options import Settings
from .sampling import Request, ReplicaSamples, calibrate, replica_plan

WORKER_ENV = "OVERHEADBENCH_WORKER"
WORKER_TIMEOUT_S = 120.0
EXIT_GRACE_S = 5.0


class ReplicaError(Exception):
    """A replica process failed; the message carries the end of its output."""


class ControllerGone(Exception):
    """In a worker: the controller closed the command pipe, so this session should stop."""


@dataclass(frozen=True)
class WorkerRequest:
    """What a replica process is asked to do, passed as JSON in ``OVERHEADBENCH_WORKER``."""

    nodeids: tuple[str, ...]
    settings: Settings
    ready_fd: int
    go_fd: int

    def to_env(self) -> str:
        return json.dumps({"nodeids": list(self.nodeids), "settings": self.settings.to_json(),
                           "ready_fd": self.ready_fd, "go_fd": self.go_fd})

    @classmethod
    def from_env(cls, environ: Any = os.environ) -> WorkerRequest | None:
        raw = environ.get(WORKER_ENV)
        if not raw:
            return None
        data = json.loads(raw)
        return cls(tuple(data["nodeids"]), Settings.from_json(data["settings"]), data["ready_fd"], data["go_fd"])


class WorkerChannel:
    """The worker's end of the protocol, opened once per replica process."""

    def __init__(self, request: WorkerRequest) -> None:
        self.request = request
        self._out = os.fdopen(request.ready_fd, "wb")
        self._in = os.fdopen(request.go_fd, "rb")

    def send(self, **message: Any) -> None:
        self._out.write(json.dumps(message).encode() + b"\n")
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise ControllerGone("the overheadbench controller has finished")
        return json.loads(line)


def order_like(items: list[Any], nodeids: Sequence[str]) -> tuple[list[Any], list[Any]]:
    """``items`` kept and reordered as ``nodeids`` lists them, and the rest (to deselect).

    A replica must meet the pairs in the controller's order, whatever order its own
    collection produced.
    """
    position = {nodeid: index for index, nodeid in enumerate(nodeids)}
    kept = sorted((item for item in items if item.nodeid in position), key=lambda item: position[item.nodeid])
    return kept, [item for item in items if item.nodeid not in position]


@dataclass(frozen=True)
class Launch:
    """How to start pytest again on some nodes: interpreter, root, ini, plugins.

    ``plugins`` None means "autoload every installed plugin, as the first run did";
    a tuple means "autoload nothing and load these modules": starting a replica with
    all of a busy environment's plugins cost 1.2 s for three at once here, 0.5 s without.
    """

    rootdir: Path
    inifile: Path | None
    plugin_args: tuple[str, ...]
    plugins: tuple[str, ...] | None = None

    def command(self, nodeids: Iterable[str]) -> list[str]:
        command = [sys.executable, "-m", "pytest", *nodeids, "-q", "--no-header", "-p", "no:cacheprovider",
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


def needed_plugins(items: Iterable[Any]) -> tuple[str, ...]:
    """The installed (entry-point) plugins replicas of ``items`` need: those that define a
    fixture a test uses, and, for ``async def`` tests, those that run test functions
    (``pytest_pyfunc_call``: pytest-asyncio, anyio's plugin). Others are left out."""
    top = lambda name: name.split(".")[0]  # noqa: E731
    wanted = {"overheadbench"}
    installed: set[str] = set()
    for item in items:
        manager = item.config.pluginmanager
        installed = {getattr(plugin, "__name__", "") for plugin, _ in manager.list_plugin_distinfo()}
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
    log: IO[bytes]
    messages_fd: int
    commands: IO[bytes]
    first: int
    """Index (in the pool's node ids) of the first pair this worker runs."""
    at: str | None = None
    """The node id whose ``compare`` the worker is parked at, if any."""
    buffer: bytes = b""


@dataclass
class ReplicaPool:
    """Fresh pytest processes for a session's pairs: started on demand, kept for later pairs,
    sampled one at a time, stopped when the session ends."""

    launch: Launch
    nodeids: tuple[str, ...]
    settings: Settings
    clock_ns: Callable[[], int] = time.perf_counter_ns
    _workers: list[_Worker] = field(default_factory=list)
    _startup_ns: float = 0.0
    """Last measured wall time for two processes (one per core) to start and get ready."""
    _current: str = ""
    """The pair being measured, for error messages."""

    @property
    def size(self) -> int:
        return len(self._workers)

    def startup_ns(self, count: int) -> float:
        """Predicted wall time to start ``count`` more processes and have them ready."""
        return self._startup_ns * math.ceil(count / 2)

    def ensure(self, count: int, nodeid: str) -> None:
        """Have at least ``count`` processes parked at ``nodeid``: start the missing ones,
        then wait until every live process is parked there (so nothing runs while timing)."""
        first = self._index(nodeid)
        self._current = nodeid
        started = self.clock_ns()
        new = max(0, count - len(self._workers))
        for _ in range(new):
            self._start(first)
        for worker in list(self._workers):
            self._park(worker, nodeid)
        if new:
            self._startup_ns = (self.clock_ns() - started) / math.ceil(new / 2)

    def sample(self, index: int, calls_per_block: int) -> ReplicaSamples:
        """Let the ``index``-th process sample the pair it is parked at; return its samples."""
        worker = self._workers[index]
        self._send(worker, go=calls_per_block)
        message = self._receive(worker)
        if message is None or "samples" not in message:
            self._drop(worker, f"exited with code {self._exit_code(worker)} while measuring the pair")
        return ReplicaSamples.from_json(message["samples"])

    def release(self) -> None:
        """Let every parked process run on to its next pair (they do so together, untimed)."""
        for worker in self._workers:
            if worker.at is not None:
                worker.at = None
                self._send(worker, next=True)

    def close(self) -> None:
        """Tell every process to stop, give them a moment, then kill what is left; safe twice."""
        for worker in self._workers:
            worker.commands.close()
        deadline = time.monotonic() + EXIT_GRACE_S
        for worker in self._workers:
            try:
                worker.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            os.close(worker.messages_fd)
            worker.log.close()
        self._workers.clear()

    def _index(self, nodeid: str) -> int:
        try:
            return self.nodeids.index(nodeid)
        except ValueError:
            raise ReplicaError(f"{nodeid}: not among the session's @pytest.mark.overhead tests when the session "
                               f"started (was the marker added at run time?); replicas cannot re-run it") from None

    def _start(self, first: int) -> None:
        messages_read, messages_write = os.pipe()
        commands_read, commands_write = os.pipe()
        request = WorkerRequest(self.nodeids[first:], self.settings, messages_write, commands_read)
        log = tempfile.TemporaryFile(prefix="overheadbench-replica-")
        try:
            process = subprocess.Popen(
                self.launch.command(request.nodeids), cwd=self.launch.rootdir, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, pass_fds=(messages_write, commands_read),
                env=self.launch.environ(request),
            )
        except BaseException:
            for fd in (messages_read, commands_write):
                os.close(fd)
            log.close()
            raise
        finally:
            os.close(messages_write)
            os.close(commands_read)
        self._workers.append(_Worker(process, log, messages_read, os.fdopen(commands_write, "wb"), first))

    def _park(self, worker: _Worker, nodeid: str) -> None:
        """Read the worker's messages until it is parked at ``nodeid``, moving it past earlier pairs."""
        wanted = self._index(nodeid)
        while worker.at != nodeid:
            if worker.at is not None:
                if self._index(worker.at) > wanted:
                    self._drop(worker, f"ran {nodeid} without reaching overhead.compare (it failed or was "
                                       f"skipped there) and went on to {worker.at}")
                worker.at = None
                self._send(worker, next=True)
            message = self._receive(worker)
            if message is None:
                self._drop(worker, f"exited with code {self._exit_code(worker)} before measuring the pair")
            worker.at = message.get("ready")

    def _send(self, worker: _Worker, **message: Any) -> None:
        try:
            worker.commands.write(json.dumps(message).encode() + b"\n")
            worker.commands.flush()
        except BrokenPipeError:
            self._drop(worker, f"exited with code {self._exit_code(worker)}")

    def _receive(self, worker: _Worker) -> dict[str, Any] | None:
        """The worker's next message, or None once it has exited."""
        deadline = time.monotonic() + WORKER_TIMEOUT_S
        while b"\n" not in worker.buffer:
            readable, _, _ = select.select([worker.messages_fd], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                self._drop(worker, f"sent nothing for {WORKER_TIMEOUT_S:.0f} s")
            chunk = os.read(worker.messages_fd, 1 << 16)
            if not chunk:
                return None
            worker.buffer += chunk
        line, _, worker.buffer = worker.buffer.partition(b"\n")
        return json.loads(line)

    def _exit_code(self, worker: _Worker) -> int | None:
        try:
            return worker.process.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            return None

    def _drop(self, worker: _Worker, what: str) -> None:
        """Remove a worker that cannot go on, and raise its story with the end of its output."""
        self._workers.remove(worker)
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()
        worker.log.seek(0)
        tail = "\n".join(worker.log.read().decode(errors="replace").strip().splitlines()[-15:])
        worker.commands.close()
        os.close(worker.messages_fd)
        worker.log.close()
        raise ReplicaError(f"{self._current}: a replica process (a fresh pytest run of the session's "
                           f"overhead tests) {what}. Its output ended:\n{tail}")


def pair_plan(
    settings: Settings,
    rng: Any,
    clock_ns: Callable[[], int],
    pool: ReplicaPool | Any | None,
    nodeid: str,
    more_needed: Callable[[list[ReplicaSamples]], bool],
) -> Generator[Request, int, list[ReplicaSamples]]:
    """The controller's whole procedure for a pair, as one plan for the sampling drivers.

    Without a pool (``processes = 1``) the pair is calibrated and sampled here. Otherwise
    this process only calibrates: it is no fresh process (it has run other tests, loaded
    every plugin), and its ratio was biased against the replicas' (+0.4 points on an A/A
    pair, with a wider spread). ``processes`` replicas, parked at this pair (any missing
    are started), sample in turn. While ``more_needed`` (interval too wide, or verdict not
    yet decided) and another round of ``extra_processes`` is predicted to fit the time
    budget, another round runs: its cost is the sampling time per process seen so far,
    plus start-up for processes the pool does not have yet.
    """
    if pool is None:
        calls = yield from calibrate(settings)
        return [(yield from replica_plan(settings, rng, clock_ns, calls))]
    started = clock_ns()
    try:
        pool.ensure(settings.processes, nodeid)
        calls = yield from calibrate(settings)
        sampling_from = clock_ns()
        replicas = [pool.sample(index, calls) for index in range(settings.processes)]
        per_process_ns = (clock_ns() - sampling_from) / settings.processes
        while more_needed(replicas):
            want = len(replicas) + settings.extra_processes
            round_ns = per_process_ns * settings.extra_processes + pool.startup_ns(max(0, want - pool.size))
            if clock_ns() - started + round_ns > settings.time_budget_s * 1e9:
                break
            pool.ensure(want, nodeid)
            replicas += [pool.sample(index, calls) for index in range(len(replicas), want)]
        return replicas
    finally:
        pool.release()


def worker_plan(
    channel: WorkerChannel, nodeid: str, rng: Any, clock_ns: Callable[[], int]
) -> Generator[Request, int, list[ReplicaSamples]]:
    """A replica's procedure for one pair: park, then sample if told to, then park again
    until the controller has finished the pair. No samples when told to run on."""
    channel.send(ready=nodeid)
    command = channel.receive()
    if "go" not in command:
        return []
    samples = yield from replica_plan(channel.request.settings, rng, clock_ns, int(command["go"]))
    channel.send(samples=samples.to_json())
    channel.receive()
    return [samples]
