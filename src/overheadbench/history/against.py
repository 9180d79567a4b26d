"""The controller's side of ``--overhead-against``: the base tree, its replica pool, and each
pair's base measurement attached to the pair's result (where the change is read from).

The head tree is this one: the controller calibrates the pair here and its replicas run the
head's code; the base tree's replicas run the same node ids from the base tree, with the same
command line, environment and settings, paths mapped (see
:meth:`~overheadbench.replicas.relaunch.Invocation.in_tree`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ..engine.settings import Mode, Settings
from ..pairs.results import OverheadResult
from ..pairs.verdict import summarise, summarise_counts
from ..replicas.pool import ReplicaPool
from ..replicas.trees import BaseSide, BaseTree
from .changes import Change, Gate
from .pair_changes import side_change

NEW = "new: the base tree has no such test"
NOT_COMPARED = "not compared: measured in this process only (processes=1); the base tree is measured in replicas"


@dataclass
class Against:
    """This session's base tree and what its replicas measured."""

    tree: BaseTree
    sides: dict[str, BaseSide]
    """The base's side of each pair measured so far, by node id (filled by the
    :class:`~overheadbench.replicas.duet.Duet`)."""
    gate: Gate
    """The pairs' gate on the change from the base tree."""
    count_base: Callable[[str, Settings, int], None]
    """Count a count-mode pair in the base tree, with this block size (into ``sides``)."""

    def attach(self, result: OverheadResult, settings: Settings) -> OverheadResult:
        """``result`` (the head's) with the base's measurement of the same pair, or why it has none."""
        if result.mode == Mode.COUNT and result.counts is not None and result.nodeid not in self.sides:
            self.count_base(result.nodeid, settings, result.counts.calls_per_block)
        side = self.sides.pop(result.nodeid, None)
        if side is not None and side.counts is not None:
            base = summarise_counts(result.pair, result.kind, side.counts, 0.0)
            return dataclasses.replace(result, against=self.tree.name, base=base)
        if side is None or not (side.samples or side.missing):
            note = side.note if side is not None and side.note else NOT_COMPARED
            return dataclasses.replace(result, against=self.tree.name, base_note=note)
        if side.missing:
            return dataclasses.replace(result, against=self.tree.name, base_note=NEW)
        base = summarise(result.pair, result.kind, list(side.samples), settings, 0.0)
        return dataclasses.replace(result, against=self.tree.name, base=base)

    def change(self, result: OverheadResult) -> Change | None:
        return side_change(result)


def base_pool(tree: BaseTree) -> Callable[[ReplicaPool], ReplicaPool]:
    """How the base tree's pool is made from the head's: the same session in the base tree
    (checked out when the first pair needs it), its replicas checking their imports."""

    def make(head: ReplicaPool) -> ReplicaPool:
        root = tree.open()
        base = head.invocation.in_tree(tree.map, tree.python)
        return ReplicaPool(base, head.nodeids, head.timeout_s, trees=(str(tree.head_root), str(root)))

    return make
