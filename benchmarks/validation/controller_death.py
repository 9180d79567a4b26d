"""How soon replicas exit after their controller is killed with SIGKILL (the promise: within 1 s).

    python benchmarks/validation/controller_death.py --trials 10
    python benchmarks/validation/controller_death.py --trials 10 --starting

Each trial starts `pytest --overhead` on a small generated suite whose replicas spend their time
in every state a replica can be in (setting up a slow fixture, parked, sampling, idle), kills
the controller with SIGKILL at a random moment once replicas are running, and measures how long
until every replica process has ended. With ``--starting`` the suite's conftest takes 3 s to
import in a replica (a suite with heavy imports) and the kill comes while replicas are still
starting, before pytest has even configured. Linux only (reads process states from /proc).
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
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


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def trial(folder: Path, rng: random.Random, starting: bool) -> tuple[int, float]:
    """One kill: (replica processes that were running, seconds until the last one ended)."""
    pids_file = folder / "replica-pids.txt"
    pids_file.unlink(missing_ok=True)
    controller = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--overhead", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not pids_file.exists():
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 1.0) if starting else rng.uniform(0.5, 4.0))
    controller.send_signal(signal.SIGKILL)
    controller.wait()
    killed = time.monotonic()
    pids = {int(pid) for pid in pids_file.read_text().split()}
    while any(alive(pid) for pid in pids) and time.monotonic() - killed < 30:
        time.sleep(0.005)
    return len(pids), time.monotonic() - killed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--starting", action="store_true", help="kill while replicas are still starting")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="overheadbench-death-") as name:
        folder = Path(name)
        (folder / "test_suite.py").write_text(SUITE)
        (folder / "conftest.py").write_text(CONFTEST.format(import_s=3.0 if args.starting else 0.0))
        results = [trial(folder, rng, args.starting) for _ in range(args.trials)]
    for index, (count, seconds) in enumerate(results, 1):
        print(f"trial {index}: {count} replica process(es), all gone {seconds * 1000:.0f} ms after SIGKILL")
    within = sum(seconds <= 1.0 for _, seconds in results)
    print(
        f"all replicas gone within 1 s in {within} of {len(results)} trials; "
        f"slowest {max(seconds for _, seconds in results) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
