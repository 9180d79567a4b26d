"""Words right (issue 68): a change of a ratio prints as a ratio, a side shows a change only by the
gate's own rule, the status column shows the outcome that failed the test, a stream's terminator is
not an event."""

from __future__ import annotations

import random

from httpx_sse import ServerSentEvent

from overheadbench.core.vocabulary import Role, Side
from overheadbench.engine.changes import Change, Gate
from overheadbench.engine.checks import Overall, Status
from overheadbench.engine.outcome import Gated, decide
from overheadbench.engine.samples import Kind, ReplicaSamples
from overheadbench.engine.settings import Policy
from overheadbench.http.streaming import EventTimer
from overheadbench.pairs.pair import Budget, Pair
from overheadbench.pairs.results import OverheadResult, PlaceResult
from overheadbench.report.pair_changes import per_call_shown
from overheadbench.transport.metrics import Measure, Metric
from overheadbench.transport.outcome import figures_outcome
from overheadbench.transport.results import Reading
from overheadbench.transport.verdict import judge


def test_a_change_of_a_ratio_prints_as_a_ratio_in_the_gates_sentence() -> None:
    """ "stream total time +228.2% -> +253.3%" was said of 2.28x -> 2.53x."""
    ratio = judge(
        "t.py::test_stream", Reading("sse", Metric.TOTAL, 1.53, 1.5, 1.56, "95% CI", measure=Measure.CHANGE), None
    )
    change = Change("t.py::test_stream", 2.28, 2.53, 0.01)
    failed = figures_outcome("t.py::test_stream", [], Policy.FAIL, [(ratio, change)], Gate("0001_ref.json", 5, None))
    assert failed.failure is not None and "2.28x -> 2.53x" in failed.failure, failed.failure
    assert "%" not in failed.failure.split("2.53x")[0].split("->")[0]


def test_the_status_is_the_outcome_that_failed_the_test() -> None:
    """A test failed on an inconclusive budget showed UNKNOWN, for a change the gate only warned of."""
    unknown = Gated("the framework path", "+4.0% (95% CI -1..+9%)", Change("t::x", 1.0, 1.04, 0.025))
    gate = Gate("the base tree", 5, Policy.WARN)
    decided = decide("t::x", [(Status.INCONCLUSIVE, "overhead 20% (10..30%)")], Policy.FAIL, [unknown], gate)
    assert decided.failure is not None and decided.overall == Overall.INCONCLUSIVE
    warned = decide("t::x", [(Status.INCONCLUSIVE, "overhead 20% (10..30%)")], Policy.WARN, [unknown], gate)
    assert warned.failure is None and warned.overall == Overall.UNKNOWN  # nothing failed it: the worst found


def measured(baseline_ns: float, spread: float, seed: int) -> OverheadResult:
    """A pair of three processes whose baseline costs ``baseline_ns`` a call (and the framework twice it)."""
    rng, samples = random.Random(seed), []
    for _ in range(3):
        process = ReplicaSamples(1000)
        level = 1 + rng.gauss(0, spread)
        for _ in range(40):
            base = baseline_ns * 1000 * level * (1 + rng.gauss(0, 0.002))
            process.add(int(base), int(2 * base))
        samples.append(process)
    pair = Pair("t.py::test_pair", Budget(max_overhead=2.0), processes=3)
    return OverheadResult(
        pair,
        Kind.SYNC,
        ratio=2.0,
        baseline_s=baseline_ns * 1e-9,
        framework_s=2 * baseline_ns * 1e-9,
        verdict=Status.PASS,
        samples=samples,
    )


def test_a_side_shows_a_change_between_trees_only_where_the_gate_would_call_one() -> None:
    """An identical baseline read -23.6% (95% CI -38.8..-4.5%) between two trees, shown as significant."""
    own, base = measured(90, 0.01, 1), measured(100, 0.01, 2)
    place = PlaceResult("HEAD", Role.BASE, base, Change("t.py::test_pair", 2.0, 2.0, 0.01))
    significant = per_call_shown(own, place, Side.BASELINE, None)
    assert significant.startswith("-10") and not significant.startswith("~")  # no gate: an interval clear of zero
    assert per_call_shown(own, place, Side.BASELINE, 20.0).startswith("~ -10")  # within the gate's 20%: no change
    assert per_call_shown(own, place, Side.BASELINE, 5.0).startswith("-10")  # past its 5%: a change


def test_a_streams_done_terminator_is_not_an_event() -> None:
    ticks = iter(range(0, 10_000, 100))
    timer = EventTimer(lambda: next(ticks))
    timer.start()
    for data in ("a", "b", "[DONE]"):
        timer.read(f"data: {data}\n\n".encode())
        timer.event(ServerSentEvent(data=data))
    assert timer.stats().events == 2


def test_the_counts_warning_prints_ratios_as_ratios() -> None:
    """3,690x in instructions was printed as "+368935.7%"."""
    from overheadbench.core.vocabulary import Counter
    from overheadbench.engine.counting import disagreement

    why = disagreement("t::x", 3690.0, 446.0, Counter.CALLGRIND)
    assert why is not None and "reads 3,690x in instructions" in why and "446x" in why and "%" not in why


def test_the_counts_check_reads_the_probes_undisturbed_pairs() -> None:
    """A warning fired on a disturbed probe (446x where the code reads ~3,800x)."""
    from overheadbench.engine.counting import probe_ratio
    from overheadbench.engine.samples import Timer, Timing

    probe = ReplicaSamples(1, timer=Timer.CPU)
    for i in range(60):
        preempted = i % 3 == 0  # a third of the pairs ran a fifth of their wall time on the CPU
        base_wall = 5_000 if preempted else 1_000
        probe.add(Timing(base_wall, 1_000, 0), Timing(3_800_000, 3_800_000 if not preempted else 446_000, 0))
    assert probe_ratio(probe) == 3800


def test_exact_counts_that_timing_decides_otherwise_are_unknown_never_same() -> None:
    from overheadbench.engine.findings import Finding

    counted = Change("t::x", 2.0, 2.002, exact=True, timed=(7.0, 12.0))
    assert counted.finding(5) == Finding.UNKNOWN  # counts +0.1% (same), time +7..12% (regressed)
    assert counted.finding(10) == Finding.SAME  # time cannot tell at 10%: the counts' finding stands
    assert counted.finding(20) == Finding.SAME  # time within 20%: they agree
    assert Change("t::x", 2.0, 2.0, exact=True, timed=(-3.0, 4.0)).finding(5) == Finding.SAME  # time holds the counts
    python = Change("t::x", 2.0, 2.6, exact=True, timed=(8.0, 12.0))
    assert python.finding(5) == Finding.REGRESSED  # cheap bytecode: more in counts than in time, both regressed
