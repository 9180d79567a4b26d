"""A transport pair at other places takes turns with the session's own run, round by round.

Units: the controller's :class:`~overheadbench.replicas.transport.Turns` over scripted replicas (who
runs when, and every place stopping at the same look), the gate's question at a look, and a stream
plan whose looks a taker decides. Sessions: a sync stream pair under ``--overhead-env`` whose streams
write which place ran them, read back for the interleaving, the lockstep and the change's rounds."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from helpers import sentences
from test_environments import interpreter
from test_stream_pairs import stream

from overheadbench.core.turns import At, asking, looked, take_turn, turns
from overheadbench.core.vocabulary import Role
from overheadbench.engine.changes import Gate
from overheadbench.engine.findings import Finding
from overheadbench.engine.sampling import PlaceFigures
from overheadbench.engine.stats import trimmed_mean
from overheadbench.replicas.failures import NotInTree
from overheadbench.replicas.messages import Figured, Go, Look, Looked, Take, Turn
from overheadbench.replicas.transport import Turns
from overheadbench.report.transport import figure_places
from overheadbench.transport.across import unknown_changes, with_places
from overheadbench.transport.metrics import Measure, Metric
from overheadbench.transport.results import FigurePlace, FigureResult, Reading
from overheadbench.transport.stream_pairs import Rounds, StreamPlan
from overheadbench.transport.verdict import judge


class ScriptedPool:
    """A replica pool whose one replica answers from a script, logging what it was told."""

    def __init__(self, name: str, log: list[str], answers: list[Turn | Look | Figured], here: bool = True) -> None:
        self.name, self.log, self.answers, self.here = name, log, iter(answers), here
        self.released = 0

    def tell(self, order: Go | Take | Looked) -> Turn | Look | Figured:
        if isinstance(order, Take):
            self.log.append(self.name)
        elif isinstance(order, Looked):
            self.log.append(f"{self.name} looked {order.more}")
        return next(self.answers)

    def release(self) -> None:
        self.released += 1

    def ensure(self, count: int, nodeid: str) -> None:
        if not self.here:
            raise NotInTree(f"{nodeid}: not in {self.name}", failed=False)
        self.log.append(f"{self.name} moved")


def place(name: str) -> PlaceFigures:
    return PlaceFigures(name, Role.BASE)


def test_each_round_every_place_runs_once_between_the_sessions_own_rounds() -> None:
    log: list[str] = []
    pools = [ScriptedPool(name, log, [Turn()] * 20 + [Figured([], [["r", "total", "figure", 1.0]])]) for name in "ab"]
    with Turns(pools, [place("a"), place("b")], "t.py::test", None, random.Random(5)) as taking:  # type: ignore[arg-type]
        for _ in range(20):
            take_turn()
            log.append("own")
        placed = taking.finish()
    assert log[:2] == ["a moved", "b moved"]  # at the session's first round, not before
    turns_taken = log[2:]
    rounds = [list(group) for own, group in itertools.groupby(turns_taken, lambda said: said == "own") if not own]
    assert log.count("a") == log.count("b") == log.count("own") == 20  # then each ended at its 21st answer
    assert all(len(between) <= 4 for between in rounds)  # a place's turn after own's, then before own's next
    assert [p.rounds for p in placed] == [(["r", "total", "figure", 1.0],)] * 2
    assert all(pool.released == 1 for pool in pools)
    take_turn()  # the session's run has ended: nobody takes turns now
    assert log.count("a") == 20


def test_every_place_stops_at_the_look_the_session_decides() -> None:
    log: list[str] = []
    asked: list[tuple[At, list[Any]]] = []

    def question(at: At, places: list[Any]) -> bool:
        asked.append((at, [(place.name, rounds) for place, rounds in places]))
        return len(asked) == 1  # unknown at the first look, decided at the second

    at_look = [Look("pair", [["pair", "total", "max", 2.0]])]
    script: list[Turn | Look | Figured] = [Turn(), *at_look, Turn(), *at_look, Figured([])]
    pool = ScriptedPool("base", log, script)
    gone = ScriptedPool("gone", log, [], here=False)  # has no such test: left out, still a place
    places = [PlaceFigures("gone", Role.ENVIRONMENT), place("base")]
    with Turns([gone, pool], places, "t.py::test", None, random.Random(1), question) as taking:  # type: ignore[arg-type]
        assert asking()
        take_turn()
        assert looked(At("pair", [["pair", "total", "max", 1.0]], 0.98, 4), False, True)
        take_turn()
        assert not looked(At("pair", [], 0.98, 4), False, True)
        placed = taking.finish()
    assert log == ["base moved", "base", "base looked True", "base", "base looked False"]
    at = At("pair", [["pair", "total", "max", 1.0]], 0.98, 4)
    assert asked[0] == (at, [("base", [["pair", "total", "max", 2.0]])])
    assert [p.name for p in placed] == ["gone", "base"] and placed[0].missing


def test_a_look_the_sessions_run_never_reached_ends_that_pair_there() -> None:
    """The base tree's test looks where the head's does not (another budget): it is told to stop."""
    log: list[str] = []
    pool = ScriptedPool("base", log, [Turn(), Look("other", []), Turn(), Figured([])])
    with Turns([pool], [place("base")], "t.py::test", None, random.Random(2)) as taking:  # type: ignore[arg-type]
        take_turn()
        take_turn()
        taking.finish()
    assert log[:4] == ["base moved", "base", "base looked False", "base"]


def test_an_unaffordable_look_ends_the_pair_whatever_is_unknown() -> None:
    log: list[str] = []
    pool = ScriptedPool("base", log, [Turn(), Look("pair", []), Figured([])])
    with Turns([pool], [place("base")], "t.py::test", None, random.Random(2), lambda *_: True) as taking:  # type: ignore[arg-type]
        take_turn()
        assert not looked(At("pair", [], 0.98, 4), True, False)
        taking.finish()
    assert log[-1] == "base looked False"


def test_a_test_without_stream_pairs_moves_no_replica_to_take_turns() -> None:
    log: list[str] = []
    with Turns([ScriptedPool("base", log, [])], [place("base")], "t.py::test", None, random.Random(2)) as taking:  # type: ignore[arg-type]
        placed = taking.finish()
    assert log == [] and placed == [place("base")]


def rounds(values: list[float], row: str = "pair [framework]") -> list[list[Any]]:
    return [[[row, "total", "figure", value]] for value in values]


def test_the_gates_question_is_a_change_still_unknown_at_the_threshold_that_more_rounds_could_decide() -> None:
    unknown = unknown_changes(Gate("base", 5.0))
    steady = [0.010 * (1 + 0.002 * (-1) ** i) for i in range(12)]
    base = [(place("base"), rounds(steady))]

    def at(values: list[float], last: int = 48) -> At:
        return At("pair", rounds(values), 0.983, last)

    assert not unknown(at([v * 1.30 for v in steady]), base)  # regressed: decided
    assert not unknown(at(steady), base)  # the same: decided
    wobbly = [0.010 * (1.10 + 0.06 * (-1) ** i) for i in range(12)]  # +10% ±6% a round
    assert unknown(at(wobbly, last=24), base)  # unknown at 12 rounds; 24 would tell +10% from 5%
    assert not unknown(at(wobbly, last=13), base)  # one more round would not: futile
    noisy = [0.010 * (1 + 0.4 * (-1) ** i) for i in range(12)]
    assert not unknown(at(noisy, last=24), base)  # ±40% a round around 0: even 24 rounds hold the threshold
    assert unknown(at(noisy, last=48), base)  # but from a first look of a quarter the rounds go on


class Taker:
    asks = True

    def __init__(self, answers: list[bool]) -> None:
        self.answers, self.looks = iter(answers), 0

    def turn(self) -> None:
        pass

    def look(self, at: At, wanted: bool, affordable: bool) -> bool:
        self.looks += 1
        return next(self.answers)


def test_a_stream_pair_taking_turns_looks_where_the_session_says() -> None:
    taker = Taker([True, False])
    with turns(taker):
        plan = StreamPlan(4, False, 60.0, lambda: [0, 1], lambda *_: True, "pair")
        done: Rounds = ([], [])
        for side in plan.sides(done):
            done[side].append([stream(0.01)])
    assert (plan.looks, len(done[0]), taker.looks) == ([4, 8, 16], 8, 2)
    alone = StreamPlan(4, False, 60.0, lambda: [0, 1], lambda *_: True, "pair")
    assert alone.looks == [4]


PAIR = """
import os
import pathlib
import time

PLACE = os.environ.get("PLACE", "own")
LOG = pathlib.Path(__file__).with_name("streams.log")


def source(label, side, delay_s):
    def events():
        with LOG.open("a") as log:
            log.write(f"{PLACE} {label} {side}\\n")
        for _ in range(3):
            time.sleep(delay_s)
            yield "event"
    return events


def test_pair(transport):
    slower = float(os.environ.get("SLOWER", "1"))
    transport.compare_streams(source("a", "raw", 0.0005), source("a", "sdk", 0.002 * slower), label="sdk vs raw")
    if os.environ.get("FAIL_OWN") and PLACE == "own":
        raise AssertionError("the session's own run fails after its first pair")
    transport.compare_streams(source("b", "raw", 0.0005), source("b", "sdk", 0.002), label="second")


def test_after(transport):
    transport.compare_streams(source("c", "raw", 0.0005), source("c", "sdk", 0.002), label="after")
"""


def run_pair(pytester: pytest.Pytester, *options: str, **twin: str) -> pytest.RunResult:
    pytester.makepyfile(test_pair=PAIR)
    envs = f"--overhead-env=twin={interpreter(pytester.path, 'twin', PLACE='twin', **twin)}"
    return pytester.runpytest("--overhead", "--overhead-quick", envs, "--overhead-json=o.json", *options)


def streams(pytester: pytest.Pytester, label: str) -> list[str]:
    """Which place ran each stream of pair ``label``, in order."""
    lines = (pytester.path / "streams.log").read_text().splitlines()
    return [place for place, pair, _ in (line.split() for line in lines) if pair == label]


def test_a_stream_pair_at_another_place_takes_its_rounds_in_turn_and_stops_with_the_sessions(
    pytester: pytest.Pytester,
) -> None:
    done = run_pair(pytester, "--overhead-fail-above=transport:20", "test_pair.py::test_pair", SLOWER="5")
    done.assert_outcomes(failed=1)
    sentences(done.stdout).fnmatch_lines(
        [
            "*test_pair: sdk vs raw stream total time under twin regressed*",  # the pair's ratio is gated
            "*sdk vs raw [[]framework] stream total time (a side: not gated)*",  # its sides shown
            "*regressed*",
        ]
    )
    assert "[framework] stream total time under twin regressed" not in done.stdout.str()
    places = streams(pytester, "a")
    assert places.count("own") == places.count("twin") > 0  # every look decided for both alike
    runs = [len(list(group)) for _, group in itertools.groupby(places)]
    assert max(runs) <= 12  # a round is 6 streams: at most a place's two rounds in a row, never its whole pair
    figures = json.loads((pytester.path / "o.json").read_text())["figures"]
    (total,) = [f for f in figures if f["row"] == "sdk vs raw [framework]" and f["metric"] == "total"]
    rounds = places.count("own") // 6 - 1  # 6 streams a round, less the warm-up round
    assert total["places"][0]["change"]["df"] == trimmed_mean([0.0] * rounds)[2]  # paired round by round


def test_a_session_whose_own_run_fails_ends_the_other_places_run_there_and_goes_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_OWN", "1")
    done = run_pair(pytester)
    done.assert_outcomes(failed=1, passed=1)
    done.stdout.fnmatch_lines(["*the session's own run fails after its first pair*"])
    assert streams(pytester, "b") == []  # the other place's run ended at its next pair's first turn
    figures = json.loads((pytester.path / "o.json").read_text())["figures"]
    after = [f for f in figures if f["row"] == "after" and f["places"]]
    assert after and all(f["places"][0]["name"] == "twin" for f in after)  # its replica went on to the next test


def test_paired_rounds_are_averaged_trimmed_so_a_few_rounds_in_another_regime_cannot_carry_the_change() -> None:
    steady = [0.01 * (-1) ** i for i in range(20)]
    centre, se, df = trimmed_mean([*steady[:16], 0.5, 0.6, 0.5, 0.7])  # four rounds 50-70% apart
    assert abs(centre) < 0.02 and df == 20 - 2 * 4 - 1
    assert trimmed_mean([0.1, 0.2, 0.3])[::2] == (pytest.approx(0.2), 2)  # fewer than ten: the plain mean


def test_a_pairs_change_widens_by_as_far_as_its_baseline_side_moved_between_the_places() -> None:
    """The places' processes sat differently on the cores for the whole test: the bare side (the trees'
    shared path) read 60% slower at the base tree, so the pair's ratio is not trusted to the rounds' spread."""
    rng = random.Random(3)

    def rounds(bare: float, framework: float, control: bool = True) -> tuple[list[list[Any]], ...]:
        found = []
        for _ in range(24):
            b, f = bare * rng.uniform(0.97, 1.03), framework * rng.uniform(0.97, 1.03)
            found.append([["c=1", "total", "max", f / b], *([["c=1 [baseline]", "total", "figure", b]] * control)])
        return tuple(found)

    own = [
        judge("t.py::test_sdk", Reading("c=1", Metric.TOTAL, 2.5, 2.4, 2.6, "", measure=Measure.CHANGE), None),
        judge("t.py::test_sdk", Reading("c=1 [baseline]", Metric.TOTAL, 0.004, 0.004, 0.004, ""), None),
    ]
    session = rounds(0.004, 0.01)
    sides = {"c=1 [baseline]"}

    def at(bare: float, framework: float, control: bool = True) -> list[FigureResult]:
        return with_places(
            own, (session, [PlaceFigures("main", Role.BASE, rounds(bare, framework, control))]), sides=sides
        )

    apart = at(0.0064, 0.018)  # the base's ratio 2.8: the session's -11%
    moved = apart[0].places[0]
    assert (
        moved.control == pytest.approx(apart[1].places[0].change.percent) and moved.control < -30
    )  # from the base to the session
    assert moved.change.percent < -5 and moved.change.finding(5) == Finding.UNKNOWN
    assert at(0.0064, 0.018, control=False)[0].places[0].change.finding(5) == Finding.IMPROVED  # no control: wrong
    alike = at(0.004, 0.0101)[0].places[0]
    assert alike.control is None and alike.change.finding(5) == Finding.SAME
    assert FigurePlace.from_json(moved.to_json(), "p", moved.change.what).control == moved.control
    assert "[baseline] moved -38%" in figure_places(apart, 5.0)["main"][1][0].figure
