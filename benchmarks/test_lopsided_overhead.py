"""The pairs agent frameworks bring: a whole pipeline against the bare call it wraps.

An agent framework's runnable is 100-1000x the function it runs. Such a pair's budget is a
factor (``max="100x"``), its figure prints as one (``24.5x (24.1x..24.9x)``), and each side's blocks
are sized on its own cost, so the pair costs about what a balanced one does (see
docs/measurement.md and validation/lopsided.py).
"""

from __future__ import annotations

import pytest
from framework import EchoAgent, Parallel, Router, Sequential, stack
from test_middleware_overhead import FULL_STACK, pair


def chain(prefix: str) -> Sequential:
    """Three agents in a row, each behind the full middleware stack."""
    return Sequential([stack(EchoAgent(f"{prefix}{index}"), *FULL_STACK) for index in range(3)])


def pipeline() -> object:
    """Routing to two chains run in parallel (another chain otherwise), all behind the stack too."""
    router = Router([(lambda m: "billing" in m["text"], Parallel([chain("b"), chain("c")]))], chain("d"))
    return stack(router, *FULL_STACK)


@pytest.mark.parametrize(
    "kind",
    [
        # sync ~25x here; async ~200-250x (a task group per call, one anyio.fail_after per layer)
        pytest.param("sync", marks=pytest.mark.overhead(max="100x", group="pipeline vs bare call")),
        pytest.param("async", marks=pytest.mark.overhead(max="2000x", group="pipeline vs bare call")),
    ],
)
def test_pipeline_against_the_bare_call(overhead, kind: str):
    """The whole pipeline (routing, then two chains in parallel: six agent calls, each behind five layers of
    middleware, all behind five more) against one bare agent call: a budget as a factor, for a pair 25-250x apart."""
    pair(overhead, pipeline(), EchoAgent("bare"), kind)
