"""Replica processes: the same test, re-run in fresh interpreters, each timing the pair once more.

Why: a pair's ratio depends on where code and objects land in memory (ASLR, hash seed);
on the 2-core machines we measure, it moved 2–5 points between fresh processes while one
process's own interval was ±0.3 points. Like pyperf, we re-run the measurement in new
processes and let the interval include the spread between them.

The controller re-runs exactly one test node (``python -m pytest NODEID``) with the
request in an environment variable; in the worker the ``overhead`` fixture times the pair
with the controller's calibration, writes its samples to the file named there, and skips
the rest of the test.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .jsonio import write_json_atomic
from .options import Settings
from .sampling import ReplicaSamples

WORKER_ENV = "OVERHEADBENCH_WORKER"
WORKER_TIMEOUT_S = 120.0


class ReplicaError(Exception):
    """A replica process failed; the message carries the end of its output."""


@dataclass(frozen=True)
class WorkerRequest:
    """What a replica process is asked to do, passed as JSON in ``OVERHEADBENCH_WORKER``."""

    nodeid: str
    calls_per_block: int
    settings: Settings
    out: str

    def to_env(self) -> str:
        return json.dumps({"nodeid": self.nodeid, "calls_per_block": self.calls_per_block,
                           "settings": self.settings.to_json(), "out": self.out})

    @classmethod
    def from_env(cls, environ: dict[str, str] | os._Environ[str] = os.environ) -> WorkerRequest | None:
        raw = environ.get(WORKER_ENV)
        if not raw:
            return None
        data = json.loads(raw)
        return cls(data["nodeid"], data["calls_per_block"], Settings.from_json(data["settings"]), data["out"])

    def write(self, samples: ReplicaSamples) -> None:
        write_json_atomic(self.out, samples.to_json())


@dataclass(frozen=True)
class Launch:
    """How to start pytest again on one node: the interpreter, the root, the ini, plugins."""

    rootdir: Path
    inifile: Path | None
    plugin_args: tuple[str, ...]

    def command(self, nodeid: str) -> list[str]:
        command = [sys.executable, "-m", "pytest", nodeid, "-q", "--no-header", "-p", "no:cacheprovider",
                   "-p", "no:xdist", "-p", "no:randomly", "-o", "addopts=", "--rootdir", str(self.rootdir)]
        if self.inifile is not None:
            command += ["-c", str(self.inifile)]
        return command + list(self.plugin_args)


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


def run_replicas(launch: Launch, nodeid: str, calls_per_block: int, settings: Settings, count: int) -> list[ReplicaSamples]:
    """Run ``count`` fresh processes, ``settings.jobs`` at a time, and return their samples."""
    results: list[ReplicaSamples] = []
    with tempfile.TemporaryDirectory(prefix="overheadbench-") as folder:
        pending = [Path(folder, f"replica-{index}.json") for index in range(count)]
        while pending:
            wave, pending = pending[: settings.jobs], pending[settings.jobs:]
            running = [(out, _start(launch, WorkerRequest(nodeid, calls_per_block, settings, str(out))))
                       for out in wave]
            for out, process in running:
                results.append(_collect(out, process, nodeid))
    return results


def _start(launch: Launch, request: WorkerRequest) -> subprocess.Popen[str]:
    environ = dict(os.environ, **{WORKER_ENV: request.to_env()})
    return subprocess.Popen(launch.command(request.nodeid), cwd=launch.rootdir, env=environ,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _collect(out: Path, process: subprocess.Popen[str], nodeid: str) -> ReplicaSamples:
    try:
        output, _ = process.communicate(timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise ReplicaError(f"{nodeid}: a replica process did not finish within {WORKER_TIMEOUT_S:.0f} s") from None
    if not out.exists():
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise ReplicaError(
            f"{nodeid}: a replica process (a fresh `pytest {nodeid}`) exited with code "
            f"{process.returncode} without measuring the pair. Its output ended:\n{tail}"
        )
    return ReplicaSamples.from_json(json.loads(out.read_text(encoding="utf-8")))


def replicate(
    first: ReplicaSamples,
    spawn: Callable[[int], list[ReplicaSamples]],
    settings: Settings,
    halfwidth: Callable[[list[ReplicaSamples]], float],
    started_s: float,
    clock_s: Callable[[], float] = time.perf_counter,
) -> list[ReplicaSamples]:
    """All replicas of a pair: this process's, ``processes - 1`` fresh ones, then further
    waves of ``jobs`` processes while the interval is wider than the target and another
    wave still fits the pair's time budget."""
    replicas = [first]
    if settings.processes == 1:
        return replicas
    spawned_at = clock_s()
    replicas += spawn(settings.processes - 1)
    wave_s = (clock_s() - spawned_at) / math.ceil((settings.processes - 1) / settings.jobs)
    while halfwidth(replicas) > settings.target_halfwidth and clock_s() - started_s + wave_s <= settings.time_budget_s:
        replicas += spawn(settings.jobs)
    return replicas


def pending_request(nodeid: str, environ: Any = os.environ) -> WorkerRequest | None:
    """The worker request for ``nodeid`` when this process is a replica worker for it."""
    request = WorkerRequest.from_env(environ)
    return request if request is not None and request.nodeid == nodeid else None
