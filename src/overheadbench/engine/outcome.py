"""What a judged test does to itself: fail, warn, or nothing, by one rule for every measured kind.

Each kind (:mod:`overheadbench.pairs.kind`, :mod:`overheadbench.transport.kind`) makes its verdicts
and its changes; :func:`decide` turns them into the test's one outcome: each verdict fails the
test when failed, and fails or warns when inconclusive (by the ``overhead_inconclusive`` policy);
each change against the stored run or another place is judged by the session's gate
(:func:`gate_effect`), in the one sentence the CLI prints too (:func:`gate_sentence`). Each kind's
plugin judges its tests and puts what it kept on their reports in the hooks of :class:`KindHooks`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ..core.errors import OverheadChangeWarning, OverheadInconclusiveWarning
from ..core.tables import plain_warning, said
from .changes import REGRESSED_MARK, Change, Gate
from .checks import OVERALL_ORDER, Overall, Status
from .findings import Finding
from .settings import Policy


@dataclass(frozen=True)
class Outcome:
    """What a judged test does: fail with ``failure``, and/or issue ``warnings``."""

    failure: str | None = None
    warnings: tuple[Warning, ...] = ()
    overall: Overall = Overall.UNMEASURED
    """The test's one outcome, worst first over its verdicts and the gate's findings (what every
    report shows; ``failure`` says whether the test failed for it)."""


@dataclass(frozen=True)
class Gated:
    """One change the gate judges: of ``what`` (``the framework path``, ``h2c c=10 p95 latency``),
    told as ``story`` (old and new as their figure prints them, the change and its interval)."""

    what: str
    story: str
    change: Change
    explained: str = ""
    """What the change added, function by function, as its failure or warning quotes it (empty: not explained)."""


def conclude(item: pytest.Item, decided: Outcome) -> None:
    """Issue the outcome's warnings on the test, and fail it if it says so."""
    for warning in decided.warnings:
        item.warn(plain_warning(warning))
    if decided.failure:
        pytest.fail(said(decided.failure), pytrace=False)


WARN_INSTEAD = " (overhead_inconclusive=warn makes this a warning)"
"""Said only where an inconclusive verdict failed its test: a warning already is one."""


def decide(
    nodeid: str,
    verdicts: Sequence[tuple[Status, str]],
    policy: Policy,
    changes: Sequence[Gated] = (),
    gate: Gate | None = None,
    warnings: Sequence[Warning] = (),
) -> Outcome:
    """The test's outcome from its verdicts (status, message), its changes and its own ``warnings``.
    Its one ``overall`` is the worst of what failed it where something did (a test failed on an
    inconclusive budget read UNKNOWN for a change the gate only warned of), else the worst found."""
    failures: list[str] = []
    warned: list[Warning] = []
    found = [Overall.of(status) for status, _ in verdicts]
    failing: list[Overall] = []
    for status, message in verdicts:
        if status == Status.FAIL or (status == Status.INCONCLUSIVE and policy == Policy.FAIL):
            failures.append(message if status == Status.FAIL else f"inconclusive: {message}{WARN_INSTEAD}")
            failing.append(Overall.of(status))
        elif status == Status.INCONCLUSIVE:
            warned.append(OverheadInconclusiveWarning(f"{nodeid}: inconclusive: {message}"))
    for gated in changes:
        if gate is not None:
            gate_effect(nodeid, gated, gate, failures, warned)
            if gate.fails(gated.change) or gate.warns(gated.change):
                found.append(Overall(gate.finding(gated.change)))
            if gate.fails(gated.change):
                failing.append(Overall(gate.finding(gated.change)))
    shown = failing or found
    overall = min(shown, key=OVERALL_ORDER.index) if shown else Overall.UNMEASURED
    return Outcome("\n".join(failures) or None, (*warned, *warnings), overall)


def gate_effect(nodeid: str, gated: Gated, gate: Gate, failures: list[str], warned: list[Warning]) -> None:
    """The gate, one rule for every change: regressed by more than the threshold (the low end of
    the interval, in the figure's bad direction) fails; an interval containing the threshold
    ("unknown") warns or fails by ``gate.unknown`` (or is only shown); same, improved, or no
    threshold: nothing."""
    if not (gate.fails(gated.change) or gate.warns(gated.change)):
        return
    message = gate_sentence(nodeid, gated, gate, f"--overhead-fail-above={gate.threshold:g}%") + gated.explained
    if gate.fails(gated.change):
        failures.append(message)
    else:
        warned.append(OverheadChangeWarning(message))


def gate_sentence(nodeid: str, gated: Gated, gate: Gate, limit: str) -> str:
    """What the gate says of a change it fails or warns of (regressed, or unknown at ``limit``, the
    threshold as the user gave it): the session's failure or warning and the CLI's line alike."""
    if gate.finding(gated.change) == Finding.REGRESSED:
        return f"{nodeid}: {gated.what}{REGRESSED_MARK}{gate.reference}: {gated.story}, more than {limit}"
    why = (
        "exact counts and timing the same calls disagree: work the counter does not see (compiled code, "
        "waiting) changed; judge this pair in time mode"
        if gated.change.exact
        else "the interval contains the threshold (more processes or time per pair narrow it)"
    )
    changed = f"cannot tell whether {gated.what} changed by more than {limit} against {gate.reference}"
    return f"{nodeid}: {changed}: {gated.story}; {why}"


PURPOSE_ATTRIBUTE = "overheadbench_purpose"


def purpose(item: pytest.Item) -> str:
    """What the test's budget is for: the first paragraph of its docstring, on one line."""
    doc = inspect.getdoc(getattr(item, "obj", None)) or ""
    return " ".join(doc.split("\n\n")[0].split())


class KindHooks(ABC):
    """A measured kind's own hooks (:class:`~overheadbench.engine.kind.MeasuredKind`): each of its
    tests judged once it ran, and what the kind kept of it, with the test's purpose, put on the
    test's call report as extra attributes, which pytest serialises (so they travel from xdist
    workers) and the reporter gathers.

    Kinds are judged in the order the session registers them, the last one first outside: each
    test's call goes through every kind's wrapper, the innermost judging first."""

    @abstractmethod
    def apply(self, item: pytest.Item) -> None:
        """Judge the test (see :meth:`~overheadbench.engine.kind.MeasuredKind.apply`)."""

    @abstractmethod
    def carried(self, item: pytest.Item) -> dict[str, Any]:
        """What the kind kept of the test, by report attribute (see
        :meth:`~overheadbench.engine.kind.MeasuredKind.carried`)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        result = yield
        self.apply(item)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        carried = self.carried(item) if call.when == "call" else {}
        for name, value in carried.items():
            setattr(report, name, value)
        if carried:
            setattr(report, PURPOSE_ATTRIBUTE, purpose(item))
        return report
