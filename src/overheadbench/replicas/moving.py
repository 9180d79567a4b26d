"""Moving the places' replicas to a test, through its rounds, and back (every pair's and transport test's plan)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol, TypeVar

from ..core.timeouts import PairTimeout
from .failures import NotInTree

T = TypeVar("T")


class Pool(Protocol):
    """What moving a place's replicas asks of its pool (:class:`~.pool.ReplicaPool`)."""

    def ensure(self, count: int, nodeid: str) -> None: ...

    def release(self) -> None: ...

    def abandon(self) -> None: ...

    def close(self, grace_s: float = ...) -> None: ...


P = TypeVar("P", bound=Pool)


def placed(pools: Sequence[P], count: int, nodeid: str) -> tuple[list[P], list[bool]]:
    """``count`` replicas of each of these other places moved to the test (a place without the test
    is found before anything is timed, and left out; one where it does not collect raises its error):
    the pools taking part, and whether each place has the test."""
    taking: list[P] = []
    present: list[bool] = []
    for pool in pools:
        try:
            pool.ensure(count, nodeid)
        except NotInTree as exc:
            if exc.failed:
                raise
            present.append(False)
            continue
        taking.append(pool)
        present.append(True)
    return taking, present


def moved(pools: Sequence[P], count: int, nodeid: str) -> tuple[list[P], list[bool]]:
    """:func:`placed` for every place but the session's own (``pools[0]``), then the session's own:
    the pools taking part (the session's first), and whether each other place has the test."""
    taking, present = placed(pools[1:], count, nodeid)
    pools[0].ensure(count, nodeid)
    return [pools[0], *taking], present


def in_rounds(
    rng: random.Random,
    pools: Sequence[P],
    into: list[list[T]],
    count: int,
    take: Callable[[P, int], T],
) -> None:
    """``count`` rounds: what the next replica of each pool gives (``take``), in a random order
    each round."""
    for _ in range(count):
        index = len(into[0])
        order = list(zip(pools, into, strict=True))
        rng.shuffle(order)
        for pool, kept in order:
            kept.append(take(pool, index))


@contextmanager
def one_pair(pools: Sequence[Pool]) -> Iterator[None]:
    """The pools' replicas through one pair's plan: released when it ends; when the pair's time
    is up, those still owing an answer are ended first (not waited for); when the session
    ends (Ctrl-C, SIGTERM), all are, since nobody will wait on them."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit):
        for pool in pools:
            pool.close(grace_s=0.0)
        raise
    except PairTimeout:
        for pool in pools:
            pool.abandon()
        raise
    finally:
        for pool in pools:
            pool.release()
