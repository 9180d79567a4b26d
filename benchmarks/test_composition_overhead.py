"""Composition overhead: each pattern against the same agents called by hand.

Baseline: the calls a hand-written pipeline makes (``c(b(a(m)))``, a list of answers, the
primary's answer, the routed agent's answer). Framework: the composition object. So the
overhead is the pattern's own bookkeeping.
"""

from __future__ import annotations

import anyio
import pytest
from framework import EchoAgent, Fallback, Parallel, Router, Sequential

MESSAGE = {"text": "route this message to the billing agent please"}


def agents(count: int) -> list[EchoAgent]:
    return [EchoAgent(f"agent{index}") for index in range(count)]


def by_hand_sequential(chain, message):
    for agent in chain:
        message = agent.handle(message)
    return message


@pytest.mark.overhead(max=0.5, max_abs="2us", work="500ms", group="composition, 3 agents")
def test_sequential(overhead):
    """The pipeline object may add at most 50% and 2 µs to three agents called by hand: composition is bookkeeping, not
    work."""
    chain = agents(3)
    overhead.compare(lambda: by_hand_sequential(chain, MESSAGE), lambda: Sequential(chain).handle(MESSAGE))


@pytest.mark.overhead(max=0.5, max_abs="2us", work="500ms", group="composition, 3 agents")
def test_parallel_sync(overhead):
    """Gathering three answers through the pattern may add at most 50% and 2 µs to a list comprehension doing the same."""
    group = agents(3)
    overhead.compare(
        lambda: {**MESSAGE, "results": [a.handle(MESSAGE) for a in group]}, lambda: Parallel(group).handle(MESSAGE)
    )


# A task group per call: ~60-80 µs on asyncio, ~120 µs on trio here; the budget holds for both.
@pytest.mark.overhead(max_abs="250us", work="500ms", group="composition, 3 agents")
def test_parallel_async_task_group(overhead):
    """An anyio task group per call may cost at most 250 µs (60-120 µs measured on asyncio and trio): concurrency has a
    price, and it must stay bounded."""
    group = agents(3)
    parallel = Parallel(group)

    async def baseline():
        return {**MESSAGE, "results": [await a.process(MESSAGE) for a in group]}

    async def framework():
        return await parallel.process(MESSAGE)

    overhead.compare(baseline, framework)


@pytest.mark.overhead(max=0.5, max_abs="2us", work="500ms", group="composition, 3 agents")
def test_fallback_primary_succeeds(overhead):
    """When the primary answers, the fallback wrapper may add at most 50% and 2 µs."""
    primary, *others = agents(3)
    fallback = Fallback([primary, *others])
    overhead.compare(lambda: primary.handle(MESSAGE), lambda: fallback.handle(MESSAGE))


@pytest.mark.overhead(max=0.5, max_abs="2us", work="500ms", group="composition, 3 agents")
def test_conditional_routing(overhead):
    """Routing by a keyword may add at most 50% and 2 µs to calling the right agent directly."""
    billing, support, default = agents(3)
    router = Router([(lambda m: "billing" in m["text"], billing), (lambda m: "help" in m["text"], support)], default)
    overhead.compare(lambda: billing.handle(MESSAGE), lambda: router.handle(MESSAGE))


@pytest.mark.overhead(max=0.5, max_abs="3us", work="500ms", group="composition, nested")
def test_nested_parallel_of_sequentials(overhead):
    """Nesting compositions may add at most 50% and 3 µs: the cost of nesting must not compound."""
    first, second = agents(2), agents(2)
    nested = Parallel([Sequential(first), Sequential(second)])
    overhead.compare(
        lambda: {**MESSAGE, "results": [by_hand_sequential(first, MESSAGE), by_hand_sequential(second, MESSAGE)]},
        lambda: nested.handle(MESSAGE),
    )


@pytest.mark.parametrize("count", [2, 5, 10])
@pytest.mark.overhead(max=0.5, max_abs="5us", work="500ms", group="composition, scaling")
def test_sequential_scaling(overhead, count: int):
    """A pipeline of 2, 5 or 10 agents may add at most 50% and 5 µs: the pattern's cost must not grow with its length."""
    chain = agents(count)
    pipeline = Sequential(chain)
    overhead.compare(lambda: by_hand_sequential(chain, MESSAGE), lambda: pipeline.handle(MESSAGE))


def test_async_compositions_run_on_this_backend():
    """The async paths give the same answers as the sync ones (asyncio here; trio in tox)."""
    group = agents(3)
    assert anyio.run(Parallel(group).process, MESSAGE) == Parallel(group).handle(MESSAGE)
