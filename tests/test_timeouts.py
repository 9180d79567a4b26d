"""The pair's silence limit (:mod:`overheadbench.core.timeouts`) on an injected clock: it strikes on
silence, never on length, and the sampling profiler that borrows ``SIGALRM`` keeps it."""

from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest

from overheadbench.core import timeouts
from overheadbench.core.timeouts import PairTimeout, check_silence, lent, not_counted, progressed, time_limit


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(timeouts, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def _timer() -> float:
    return signal.getitimer(signal.ITIMER_REAL)[0]


def test_a_pair_that_keeps_moving_is_never_ended_for_its_length(clock: list[float]) -> None:
    with time_limit(60, lambda waiting: f"silent ({waiting})"):
        for _ in range(10):  # ten minutes of a pair that progresses every 59 s
            clock[0] += 59
            progressed()
            check_silence()
            assert _timer() > 59  # the timer starts again from the whole span
        clock[0] += 61
        with timeouts.waiting_on("a replica"), pytest.raises(PairTimeout, match=r"silent \(a replica\)"):
            check_silence()
    assert _timer() == 0


def test_progress_re_arms_at_most_every_twentieth_of_the_span(clock: list[float]) -> None:
    with time_limit(60, lambda waiting: "silent"):
        signal.setitimer(signal.ITIMER_REAL, 50)  # as if 10 s had passed on the real timer
        clock[0] += 1  # less than 60 / REARM_SHARE: no syscall
        progressed()
        assert _timer() <= 50
        clock[0] += 60 / timeouts.REARM_SHARE
        progressed()
        assert _timer() > 50


def test_the_sampler_borrows_the_signal_and_the_silence_goes_on(clock: list[float]) -> None:
    # the last silence ends in the sampler's own check, then at once in the timer given back
    with pytest.raises(PairTimeout), time_limit(60, lambda waiting: "silent"):
        with lent():
            assert _timer() == 0
            clock[0] += 30
            progressed()  # counted, the borrowed timer left alone
            assert _timer() == 0
            clock[0] += 50
            check_silence()  # 50 s since the last progress: not yet
        assert 9 < _timer() <= 10  # what is left of the silence
        with lent():
            clock[0] += 11
            check_silence()


def test_a_paused_span_is_not_silence(clock: list[float]) -> None:
    with time_limit(60, lambda waiting: "silent"):
        with not_counted():  # a replica start: the session's cost
            clock[0] += 600
            assert _timer() == 0
        clock[0] += 59
        check_silence()


def test_without_a_limit_nothing_happens(clock: list[float]) -> None:
    progressed()
    check_silence()
    with lent(), not_counted():
        pass
    assert _timer() == 0


def _handle_a_tick() -> None:
    """Run the Python handler of ``SIGALRM`` now, as a tick flagged by another thread is run late."""
    handler = signal.getsignal(signal.SIGALRM)
    assert callable(handler)
    handler(signal.SIGALRM, None)


def test_a_tick_handled_late_is_not_read_as_the_limit(clock: list[float]) -> None:
    with time_limit(60, lambda waiting: "silent"):
        with lent():
            clock[0] += 30
            progressed()
            _handle_a_tick()  # the pair's handler while the signal is lent: a stray
        clock[0] += 10
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        _handle_a_tick()  # 10 s of silence: not the limit; the timer is set to what is left
        assert 49 < _timer() <= 50
        expire = signal.getsignal(signal.SIGALRM)
        clock[0] += 51
        with pytest.raises(PairTimeout):
            _handle_a_tick()
    assert callable(expire)
    expire(signal.SIGALRM, None)  # the limit has ended: a tick handled after it is nothing
    assert _timer() == 0


def test_the_sampler_gives_the_signal_back_when_the_limit_strikes_inside_it(clock: list[float]) -> None:
    """The crash: the sampler's exit ran a pending tick that raised, never gave the signal back, and
    the suspended borrow armed the timer when collected, with no handler: ``SIGALRM`` killed pytest."""
    from overheadbench.instruments.functions import _Sampling

    with time_limit(60, lambda waiting: "silent"):
        expire = signal.getsignal(signal.SIGALRM)
        with pytest.raises(PairTimeout), _Sampling(set()):
            clock[0] += 61
            _handle_a_tick()  # the sampler's own check strikes
        assert signal.getsignal(signal.SIGALRM) is expire
        assert _timer() == 0  # the limit has struck: not armed again to strike twice
        sampling = _Sampling(set())
        with sampling:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
        sampling._on_signal(signal.SIGALRM, None)  # a tick handled after the sampler stopped: nothing
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
    assert _timer() == 0
