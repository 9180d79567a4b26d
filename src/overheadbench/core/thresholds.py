"""The gate's threshold as users write it, once for ``pytest --overhead-fail-above`` and
``overheadbench compare --fail-above``: ``5`` or ``5%`` for pairs and transport figures alike,
or ``pairs:5%,transport:30%`` for each its own.

One threshold serves both kinds because each change is judged against its own interval: a
transport figure measured in separate sessions carries their spread (docs/transport.md) in its
interval, so at 5% it reads "unknown" rather than failing for noise. A separate threshold is for a
team that wants transport figures gated only past a larger change.
"""

from __future__ import annotations

from dataclasses import dataclass

from .numbers import parse_number

KINDS = ("pairs", "transport")
EXAMPLE = "5% (pairs and transport figures), or pairs:5%,transport:30%"
HELP_EXAMPLE = EXAMPLE.replace("%", "%%")
"""The example in an argparse help string (argparse formats help with %)."""


@dataclass(frozen=True)
class Thresholds:
    """Percent a change may grow before it fails, per kind; None: that kind is shown, not gated."""

    pairs: float | None = None
    """A pair's change of framework / baseline."""
    transport: float | None = None
    """A transport figure's change (worse: slower, fewer requests per second)."""

    @property
    def given(self) -> bool:
        return self.pairs is not None or self.transport is not None

    def pick(self, pair: bool) -> float | None:
        """The threshold for a pair's change (``pair``) or a transport figure's."""
        return self.pairs if pair else self.transport


def parse_thresholds(text: str) -> Thresholds:
    """``5``, ``5%``, ``pairs:5%``, ``pairs:5%,transport:30%``; a ``ValueError`` saying what is
    accepted otherwise (``nan`` or a negative number would switch the gate off, so they are refused)."""
    parts = [part.strip() for part in str(text).split(",") if part.strip()]
    if len(parts) == 1 and ":" not in parts[0]:
        number = _percent(parts[0], text)
        return Thresholds(number, number)
    given: dict[str, float] = {}
    for part in parts:
        kind, _, value = part.partition(":")
        kind = kind.strip()
        if kind not in KINDS or not value:
            kinds = ", ".join(KINDS)
            raise ValueError(f"{text!r}: {part!r} is not KIND:PERCENT with KIND one of {kinds}; e.g. {EXAMPLE}")
        if kind in given:
            raise ValueError(f"{text!r}: {kind} is given twice")
        given[kind] = _percent(value, text)
    if not given:
        raise ValueError(f"{text!r}: give a percent, e.g. {EXAMPLE}")
    return Thresholds(given.get("pairs"), given.get("transport"))


def _percent(value: str, text: str) -> float:
    try:
        return parse_number(value.strip().removesuffix("%"), minimum=0)
    except ValueError:
        raise ValueError(f"{text!r}: give a number of percent, 0 or more; e.g. {EXAMPLE}") from None


UNGATED = Thresholds()
"""No threshold: every change shown, none gated."""


REPLACED = {
    "--overhead-compare-fail": "--overhead-fail-above=PCT gates pairs and transport figures alike",
    "--overhead-compare-fail-percent": "--overhead-fail-above=transport:PCT gates transport figures only",
}
"""The two gate flags ``--overhead-fail-above`` replaced (0.2.0): they work, with a deprecation warning, until 0.3."""
