"""Shared helpers: a fake nanosecond clock that callables advance by synthetic costs."""

from __future__ import annotations

import pytest

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


@pytest.fixture(autouse=True)
def _quiet_pytester_ini(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated projects set pytest-asyncio's loop scope, so its deprecation warning stays out,
    and run as sessions of their own, whether or not this suite runs under xdist."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini(QUIET_INI)
        for name in XDIST_WORKER_ENV:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_clock_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project whose tests get a ``clock`` fixture driving ``overhead`` synthetically."""
    pytester.makeconftest(FAKE_CLOCK_CONFTEST)
    pytester.makeini(f"{LOOP_SCOPE}overhead_processes = 1\n{BYTECODE}")
    return pytester
