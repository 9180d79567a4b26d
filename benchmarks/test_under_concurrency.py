"""Middleware overhead under concurrent callers (last in the suite by its name: its minutes of
threads come after the transport figures): the five-layer stack and the timeout layer at 1, 8
and 64 callers (threads for the sync path, tasks for the async one), and a deliberately
contended middleware beside an uncontended one. Each other layer alone under callers was here
too (24 rows, 4.5 of the suite's 13 minutes); the stack holds them all, and a layer that grew
with callers would grow the stack's row.

Under the GIL a middleware without shared state costs per call what it costs one caller, so
its rows stay flat. ``SharedCounter`` holds its lock across the call it counts: one caller
barely notices, but callers of an agent whose work releases the GIL (checksumming in C, or a
worker thread for the async path) could overlap on two cores and now wait in line, so its
overhead grows with them. ``Metrics`` on the same agent keeps no lock: the flat control.
Budgets are those of ``test_middleware_overhead.py`` (per call, whatever the load); the
growth table at the end of the report is the figure (docs/concurrency.md).
"""

from __future__ import annotations

import pytest
from framework import EchoAgent, HashingAgent, Metrics, SharedCounter, stack
from test_middleware_overhead import FULL_STACK, MIDDLEWARE, pair

LEVELS = [1, 8, 64]
KINDS = ["sync", "async"]


def under_load(**budget):
    return pytest.mark.overhead(concurrency=LEVELS, processes=3, work="500ms", group="under concurrency", **budget)


@pytest.mark.parametrize("kind", KINDS)
@under_load(max_abs="50us")
def test_timeout_under_concurrency(overhead, kind: str):
    """The timeout layer under 1, 8 and 64 callers may add at most 50 µs per call (its cancel scope in async code)."""
    agent = EchoAgent()
    pair(overhead, MIDDLEWARE["timeout"][0](agent), agent, kind)


@pytest.mark.parametrize("kind", KINDS)
@under_load(max_abs="40us")  # async: the timeout layer's cancel scope (sync alone: 10 µs)
def test_full_stack_under_concurrency(overhead, kind: str):
    """The five-layer stack under 1, 8 and 64 callers may add at most 40 µs per call."""
    agent = EchoAgent()
    pair(overhead, stack(agent, *FULL_STACK), agent, kind)


@pytest.mark.parametrize(
    ("name", "wrap"),
    [("shared_counter", SharedCounter), ("metrics", Metrics)],
    ids=["contended-shared_counter", "uncontended-metrics"],
)
@pytest.mark.parametrize("kind", KINDS)
@under_load(max_abs="1ms")  # loose on purpose: the growth between the levels is the figure here
def test_a_lock_held_across_the_call_grows_with_callers(overhead, name: str, wrap, kind: str):
    """A lock held across the call (the contended shared counter) may cost at most 1 ms per call at any level: a loose
    bound, for the growth table beside its uncontended control, which is what this test shows."""
    agent = HashingAgent()
    pair(overhead, wrap(agent), agent, kind)
