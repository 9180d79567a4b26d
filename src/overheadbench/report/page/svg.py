"""The page's drawing: scales, ticks and marks written as inline SVG text.

Why SVG written here rather than a plotting library's: the page is one file that must work from a
``file://`` URL, as a CI artifact, with no network and with JavaScript off (the figures are in the
HTML; scripts only add interaction). Inline SVG is drawn by the browser itself, stays small (a
suite of 100 pairs), and every mark is a DOM element a test can find. matplotlib stays for
``overheadbench plot`` (PNG/SVG files).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from html import escape

LOG_SPAN = 10.0
"""A ratio axis goes logarithmic where its largest value is more than this many times its smallest."""


def esc(text: object) -> str:
    """``text`` safe in HTML text and attribute values (test ids and messages come from files)."""
    return escape(str(text), quote=True)


ID_BREAKS = ("::", "/", "[")
"""Where a test id may break on a narrow screen."""
FUNCTION_BREAKS = (*ID_BREAKS, ":", ".")
"""Where a function's qualified name may break (``json.encoder:_make_iterencode.<locals>._iterencode_dict``
made an explanation's table 521 px wide at 390)."""


def name(text: object, code: bool = True, breaks: tuple[str, ...] = ID_BREAKS) -> str:
    """A name from a file (a test id, a run's, a place's, a commit's subject, a function) as HTML:
    escaped, isolated from the text around it (``<bdi>``: a right-to-left override in a stored run's name
    reversed the rest of its verdict line), and breakable after each of ``breaks`` rather than anywhere (a
    phone's narrow cell broke test ids every four characters); ``code``: in a code span, as ids are."""
    marks = "|".join(re.escape(mark) for mark in sorted(breaks, key=len, reverse=True))  # "::" before ":"
    escaped = re.sub(f"({marks})", r"\1<wbr>", esc(text))
    inner = f"<code>{escaped}</code>" if code else escaped
    return f"<bdi>{inner}</bdi>"


def number(value: float) -> str:
    """A coordinate, short (``12.5``, not ``12.500000000001``)."""
    return f"{value:.1f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"


@dataclass(frozen=True)
class Scale:
    """``low..high`` (values) onto ``start..end`` (pixels), linear or logarithmic."""

    low: float
    high: float
    start: float
    end: float
    log: bool = False

    @classmethod
    def spanning(cls, values: list[float], start: float, end: float, log: bool = False, pad: float = 0.05) -> Scale:
        """A scale over ``values`` (and a little around them): log where asked and every value is positive."""
        finite = [value for value in values if math.isfinite(value) and (value > 0 or not log)]
        if not finite:
            return cls(0.0, 1.0, start, end)
        low, high = min(finite), max(finite)
        if log:
            low, high = math.log10(low), math.log10(high)
        width = (high - low) or max(abs(high), 1.0) * 0.5
        low, high = low - pad * width, high + pad * width
        return cls(10**low if log else low, 10**high if log else high, start, end, log)

    def _unit(self, value: float) -> float:
        if self.log:
            return math.log10(max(value, 1e-300))
        return value

    def __call__(self, value: float) -> float:
        low, high = self._unit(self.low), self._unit(self.high)
        share = (self._unit(value) - low) / ((high - low) or 1.0)
        return self.start + min(max(share, -0.02), 1.02) * (self.end - self.start)

    def ticks(self, count: int = 5) -> list[float]:
        """Round values within the scale: powers of ten (and 2, 5 times them) on a log scale."""
        if self.log:
            first, last = math.floor(math.log10(self.low)), math.ceil(math.log10(self.high))
            steps = [1.0] if last - first > 2 else [1.0, 2.0, 5.0]
            found = [step * 10.0**power for power in range(first, last + 1) for step in steps]
            return [value for value in found if self.low <= value <= self.high]
        step = _round_step((self.high - self.low) / max(count, 1))
        first = math.ceil(self.low / step)
        return [index * step for index in range(first, int(math.floor(self.high / step)) + 1)]


def _round_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``raw``."""
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return float(next(step * power for step in (1, 2, 5, 10) if step * power >= raw))


def line(x1: float, y1: float, x2: float, y2: float, css: str, title: str = "") -> str:
    tip = f"<title>{esc(title)}</title>" if title else ""
    coordinates = f'x1="{number(x1)}" y1="{number(y1)}" x2="{number(x2)}" y2="{number(y2)}"'
    return f'<line class="{css}" {coordinates}>{tip}</line>'


def text(x: float, y: float, words: str, css: str = "", anchor: str = "middle") -> str:
    return f'<text class="{css}" x="{number(x)}" y="{number(y)}" text-anchor="{anchor}">{esc(words)}</text>'


def svg(width: float, height: float, body: list[str], label: str, css: str = "chart") -> str:
    """An SVG that scales to its container's width (its ``viewBox``), named for screen readers."""
    return (
        f'<svg class="{css}" viewBox="0 0 {number(width)} {number(height)}" role="img" '
        f'aria-label="{esc(label)}" preserveAspectRatio="xMinYMin meet">{"".join(body)}</svg>'
    )


def anchor(kind: str, nodeid: str) -> str:
    """A stable id for a test's row or section (a test id holds characters an id should not)."""
    return f"{kind}-{hashlib.sha1(nodeid.encode()).hexdigest()[:12]}"
