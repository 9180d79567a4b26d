"""A differential flame graph of an explanation's whole stacks, as inline SVG.

The framework side's call stacks (:class:`~overheadbench.engine.stacks.StackCost`) drawn as an
icicle, callers above callees: each frame as wide as the framework path spends in it and below it
per call, and coloured by what it adds *itself* over the baseline (red: added, blue: saved, grey:
shared), so the layer that makes the overhead is the reddest block, however deep it sits and
however wide the shared work beneath it is. For a change between places the stacks are the head's
and the colour is head less base (:func:`~overheadbench.engine.attribution.explain_change`).

Every frame is an SVG group with its figures in ``data-`` attributes and a ``<title>``: drawn and
readable without scripts; the page's script adds zoom (click or Enter on a frame), search and
keyboard use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...engine.stacks import SEPARATOR, StackCost
from .svg import esc, number, svg

WIDTH, FRAME_HEIGHT = 1000.0, 18.0
MIN_DRAWN = 0.3
"""Frames narrower than this (in the 1000-wide view) are left out: the page stays small."""
CHAR_WIDTH = 6.5
"""About the width of one character of a frame's label."""
ROOT = "all"


@dataclass
class Frame:
    """A frame of the tree: its function, and the costs per call of it and everything below it."""

    name: str
    cost: float = 0.0
    """Inclusive: spent in it and below it."""
    own_added: float = 0.0
    """What it adds itself (its stacks' added cost where it is the last frame)."""
    added: float = 0.0
    """Inclusive added cost."""
    children: dict[str, Frame] = field(default_factory=dict)


def stack_tree(stacks: Iterable[StackCost]) -> Frame:
    """The stacks merged into one tree under a root (``all``)."""
    root = Frame(ROOT)
    for stack in stacks:
        frame = root
        frame.cost += stack.cost
        frame.added += stack.added
        for name in stack.path.split(SEPARATOR):
            frame = frame.children.setdefault(name, Frame(name))
            frame.cost += stack.cost
            frame.added += stack.added
        frame.own_added += stack.added
    return root


def render_flame(stacks: Iterable[StackCost], label: str, per_call: Callable[[float], str]) -> str:
    """The flame graph's SVG (``per_call`` writes a cost per call in the explanation's unit)."""
    root = stack_tree(stacks)
    if root.cost <= 0:
        return ""
    most = max((abs(frame.own_added) for frame in _frames(root)), default=0.0) or 1.0
    body: list[str] = []
    depth = 0

    def draw(frame: Frame, x: float, level: int) -> None:
        nonlocal depth
        width = WIDTH * frame.cost / root.cost
        if width < MIN_DRAWN:
            return
        depth = max(depth, level)
        body.append(_frame(frame, x, width, level, most, root, per_call))
        offset = x
        for child in sorted(frame.children.values(), key=lambda child: -child.cost):
            draw(child, offset, level + 1)
            offset += WIDTH * child.cost / root.cost

    draw(root, 0.0, 0)
    height = (depth + 1) * FRAME_HEIGHT
    return svg(WIDTH, height, body, label, "flame")


def _frames(frame: Frame) -> Iterable[Frame]:
    yield frame
    for child in frame.children.values():
        yield from _frames(child)


def _frame(
    frame: Frame, x: float, width: float, level: int, most: float, root: Frame, per_call: Callable[[float], str]
) -> str:
    share = frame.own_added / most
    if share > 0.01:
        fill = f"hsl(4, 80%, {number(92 - 42 * share)}%)"
    elif share < -0.01:
        fill = f"hsl(215, 70%, {number(92 + 42 * share)}%)"
    else:
        fill = "hsl(40, 8%, 86%)"
    y = level * FRAME_HEIGHT
    fits = int((width - 6) / CHAR_WIDTH)
    label = frame.name if len(frame.name) <= fits else (frame.name[: fits - 1] + "…" if fits > 3 else "")
    title = (
        f"{frame.name}: {per_call(frame.cost)}/call here and below ({frame.cost / root.cost:.0%}); "
        f"adds {per_call(frame.own_added)}/call itself, {per_call(frame.added)}/call with what it calls"
    )
    attributes = (
        f'data-name="{esc(frame.name)}" data-x="{x / WIDTH:.6f}" data-w="{width / WIDTH:.6f}" data-depth="{level}" '
        f'data-added="{frame.own_added:.6g}"'
    )
    return (
        f'<g class="frame" tabindex="0" role="button" {attributes}><title>{esc(title)}</title>'
        f'<rect x="{number(x)}" y="{number(y)}" width="{number(width)}" height="{number(FRAME_HEIGHT - 1)}" '
        f'fill="{fill}"></rect><text x="{number(x + 3)}" y="{number(y + FRAME_HEIGHT - 5)}">{esc(label)}</text></g>'
    )
