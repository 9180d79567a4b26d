"""How soon replicas exit after their controller is killed with SIGKILL (the promise: within 1 s).

    python validation/controller_death.py --trials 10
    python validation/controller_death.py --trials 10 --starting
    python validation/controller_death.py --trials 20 --tls

Each trial starts `pytest --overhead` on a small generated suite whose replicas spend their time
in every state a replica can be in (setting up a slow fixture, parked, sampling, idle), kills
the controller with SIGKILL at a random moment once replicas are running, and measures how long
until every replica process has ended. With ``--starting`` the suite's conftest takes 3 s to
import in a replica (a suite with heavy imports) and the kill comes while replicas are still
starting, before pytest has even configured. With ``--tls`` every test sets up an HTTPS server
(in the replicas too), the kill comes the moment the first replica's server is up (the
others' are still starting), and each trial also counts the private keys and TLS folders left in the sessions'
temporary directory 2 s after the kill, and when the servers were gone. Linux only (reads
process states from /proc).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONFTEST = """
import os
import time
from overheadbench import in_replica

if in_replica():
    with open("replica-pids.txt", "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    time.sleep({import_s})
"""
SUITE = """
import time
import pytest
from overheadbench import in_replica


@pytest.fixture
def slow_in_replicas():
    if in_replica():
        time.sleep(0.4)


@pytest.mark.parametrize("extra", range(20))
@pytest.mark.overhead(max=5.0)
def test_pair(overhead, slow_in_replicas, extra):
    overhead.compare(lambda: sum(range(200)), lambda: sum(range(200 + extra)))
"""


TLS_SUITE = """
import os
import pytest
from overheadbench.http import start_server


@pytest.fixture
def https_server():
    server = start_server(protocol="https")
    with open("server-pids.txt", "a") as out:
        out.write(f"{server.process.pid}\\n")
    yield server
    server.close()


@pytest.mark.parametrize("extra", range(20))
@pytest.mark.overhead(max=5.0)
def test_pair(overhead, https_server, extra):
    overhead.compare(lambda: sum(range(200)), lambda: sum(range(200 + extra)))
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


@dataclass
class Trial:
    processes: int
    gone_s: float
    """Seconds from the kill until the last of them had ended."""
    keys: int = 0
    """Private key files in the sessions' temporary directory 2 s after the kill (``--tls``)."""
    folders: int = 0
    """``overheadbench-tls-*`` folders there then."""


def trial(folder: Path, rng: random.Random, starting: bool, tls: bool) -> Trial:
    """One kill: the processes that were running (replicas; with ``tls`` their servers too), how
    soon they were gone, and with ``tls`` the keys and TLS folders left 2 s after the kill."""
    pids_file, servers_file, temporary = folder / "replica-pids.txt", folder / "server-pids.txt", folder / "tmp"
    for path in (pids_file, servers_file):
        path.unlink(missing_ok=True)
    temporary.mkdir(exist_ok=True)
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    deadline = time.monotonic() + 60
    awaited, lines = (servers_file, 2) if tls else (pids_file, 1)  # tls: this session's server and a replica's
    while time.monotonic() < deadline and (not awaited.exists() or len(awaited.read_text().split()) < lines):
        time.sleep(0.005)
    if not tls:  # with tls: at once, while the other replicas' servers are starting
        time.sleep(rng.uniform(0.0, 1.0) if starting else rng.uniform(0.5, 4.0))
    controller.send_signal(signal.SIGKILL)
    controller.wait()
    killed = time.monotonic()
    pids = {int(pid) for path in (pids_file, servers_file) if path.exists() for pid in path.read_text().split()}
    while any(alive(pid) for pid in pids) and time.monotonic() - killed < 30:
        time.sleep(0.005)
    result = Trial(len(pids), time.monotonic() - killed)
    if tls:
        time.sleep(max(0.0, killed + 2.0 - time.monotonic()))
        result.keys = len(list(temporary.rglob("key.pem")))
        result.folders = len(list(temporary.glob("overheadbench-tls-*")))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--starting", action="store_true", help="kill while replicas are still starting")
    parser.add_argument("--tls", action="store_true", help="every test sets up an HTTPS server; count keys left")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="overheadbench-death-") as name:
        folder = Path(name)
        (folder / "test_suite.py").write_text(TLS_SUITE if args.tls else SUITE)
        (folder / "conftest.py").write_text(CONFTEST.format(import_s=3.0 if args.starting else 0.0))
        results = [trial(folder, rng, args.starting, args.tls) for _ in range(args.trials)]
    for index, result in enumerate(results, 1):
        line = f"trial {index}: {result.processes} process(es), all gone {result.gone_s * 1000:.0f} ms after SIGKILL"
        print(line + (f"; 2 s after: {result.keys} key file(s), {result.folders} TLS folder(s)" if args.tls else ""))
    within = sum(result.gone_s <= 1.0 for result in results)
    slowest = max(result.gone_s for result in results)
    print(f"all gone within 1 s in {within} of {len(results)} trials; slowest {slowest * 1000:.0f} ms")
    if args.tls:
        left = sum(result.keys + result.folders > 0 for result in results)
        keys = sum(result.keys for result in results)
        print(f"trials that left a key or a TLS folder 2 s after the kill: {left} of {len(results)} ({keys} keys)")


if __name__ == "__main__":
    main()
