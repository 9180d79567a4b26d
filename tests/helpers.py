"""What several test modules share: generated projects' settings and conftest, a git runner, a
process probe, synthetic blocks. One module, so that no test module imports another's helpers."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from overheadbench.engine.samples import Side

BASELINE, FRAMEWORK, HARNESS = Side.BASELINE, Side.FRAMEWORK, Side.HARNESS

FAKE_CLOCK_CONFTEST = '''
import random

import pytest


class FakeClock:
    """Nanoseconds that only pass when a synthetic callable says so."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now

    def cost(self, mean_ns, jitter=0.02, seed=1):
        rng = random.Random(seed)

        def call():
            self.now += int(mean_ns * (1 + rng.uniform(-jitter, jitter)))

        return call

    def acost(self, mean_ns, jitter=0.02, seed=1):
        step = self.cost(mean_ns, jitter, seed)

        async def call():
            step()

        return call


@pytest.fixture
def clock(overhead):
    fake = FakeClock()
    overhead.clock_ns = fake
    return fake
'''


LOOP_SCOPE = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
BYTECODE = "overhead_counter = bytecode\n"
QUIET_INI = f"{LOOP_SCOPE}overhead_processes = 3\noverhead_time_budget = 0.5s\n{BYTECODE}"
"""Generated projects: pytest-asyncio's loop scope set (its deprecation warning stays out),
3 replica processes per pair rather than the default 10 (the quick profile's 3): these projects
test how replicas run, not how many, and the suite's time on a 2-core CI machine is spent mostly
starting them (a replica is a whole pytest session, about 1 s of CPU) and timing (0.5 s per
pair, the quick profile's, rather than 2 s);
and count mode counting bytecode in the test's process, whose exact counts the tests read (a
callgrind replica costs ~10 s a session: the tests of that counter ask for it by option)."""


XDIST_WORKER_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
"""What an xdist worker running this suite puts in the environment: a generated session is no
worker (pytest-benchmark disables itself in any session that sees ``PYTEST_XDIST_WORKER``)."""


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


COUNTED = """
import pytest
from costs import EXTRA

def bare():
    return 1

def framework():
    total = 0
    for i in range(10 + EXTRA):
        total += i
    return total

@pytest.mark.overhead(max=100.0, mode="count")
def test_counted(overhead):
    overhead.compare(bare, framework)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


class Synthetic:
    """Blocks that cost ``per_call_ns[side] * n`` and advance a fake clock by that much."""

    def __init__(self, per_call_ns: dict[str, float], noise: float = 0.0, seed: int = 3) -> None:
        self.per_call_ns = per_call_ns
        self.now = 0
        self.log: list[tuple[str, int]] = []
        self.rng = random.Random(seed)
        self.noise = noise

    def clock(self) -> int:
        return self.now

    def block(self, side: str):
        def run(n: int) -> int:
            cost = int(self.per_call_ns[side] * n * (1 + self.rng.uniform(-self.noise, self.noise)))
            self.now += max(cost, 1)
            self.log.append((side, n))
            return cost

        return run

    def blocks(self) -> dict:
        return {side: self.block(side) for side in (BASELINE, FRAMEWORK, HARNESS)}
