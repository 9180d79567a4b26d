"""pytest-xdist: the timed tests run one at a time, on one worker; the rest spread out.

Pairs timed on two workers at once disturb each other (and each brings its replicas), and a
transport test's load (a server and load-generator processes) beside a timed pair halves
both, so under ``-n`` every timed test (an overhead pair, a transport test) goes to one xdist
group. Two things must happen before
xdist schedules, in the right order:

* on the controller, at configure time, the distribution mode becomes ``loadgroup`` (from
  ``load``, which ``-n`` alone means; ``loadgroup`` is ``load`` plus groups). Modes that
  cannot keep a group on one worker (``each``, ``loadscope``, ``loadfile``, ``worksteal``)
  are refused with a usage error rather than measured badly;
* on each worker, after collection, the timed tests' node ids get the group suffix
  (``@overheadbench``) that ``loadgroup`` schedules by. That is done here rather than with
  an ``xdist_group`` mark, because xdist reads the marks before a ``trylast`` hook could add
  one, and a user's own ``xdist_group`` would give the test a second group name.

The original node id is kept (:func:`original_nodeid`) for results, stored runs and
replicas, which must not see the suffix.
"""

from __future__ import annotations

import pytest

from .errors import usage

GROUP = "overheadbench"
_WORKERINPUT_KEY = "overheadbench_group"
_ORIGINAL_NODEID = pytest.StashKey[str]()
GROUPING_MODES = ("load", "loadgroup")


WORKER_REPLICAS = "overheadbench_replicas"
"""The xdist worker's output key: the replica processes it started (the controller's summary counts them)."""


def is_controller(config: pytest.Config) -> bool:
    """Whether this is an xdist controller that distributes tests to workers."""
    return (
        not hasattr(config, "workerinput")
        and bool(getattr(config.option, "tx", None))
        and getattr(config.option, "dist", "no") != "no"
    )


def prepare_controller(config: pytest.Config) -> None:
    """Make the controller group the timed tests, or refuse a mode that cannot (usage error)."""
    dist = config.option.dist
    if dist not in GROUPING_MODES:
        raise usage(
            f"overheadbench: --dist {dist} would measure overhead pairs on several xdist workers at once, where "
            f"they disturb each other; use --dist load or loadgroup (overheadbench sends every overhead test to "
            f"one worker, one at a time; the other tests still spread out), or run --overhead without -n"
        )
    config.option.dist = "loadgroup"


class XdistGrouping:
    """Registered where pytest-xdist is loaded and pairs are measured."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: object) -> None:
        node.workerinput[_WORKERINPUT_KEY] = True  # type: ignore[attr-defined]


def remember_nodeids(items: list[pytest.Item]) -> None:
    """Keep each item's node id before anyone (xdist's ``loadgroup``) suffixes it."""
    for item in items:
        item.stash[_ORIGINAL_NODEID] = item.nodeid


def original_nodeid(item: pytest.Item) -> str:
    return item.stash.get(_ORIGINAL_NODEID, item.nodeid)


def group_timed_tests(config: pytest.Config, timed_items: list[pytest.Item]) -> None:
    """On an xdist worker told to group: give every timed test the one group suffix."""
    if not getattr(config, "workerinput", {}).get(_WORKERINPUT_KEY):
        return
    for item in timed_items:
        _set_nodeid(item, f"{original_nodeid(item)}@{GROUP}")


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    """Rename an item, as xdist's ``loadgroup`` does with its marks.

    xdist assigns ``item._nodeid``; pytest 9.2 keeps node ids structured in ``item._id`` and
    no longer reads ``_nodeid``, so there xdist's own groups silently stay ungrouped.
    """
    if hasattr(item, "_id"):
        from _pytest.nodeid import coerce_node_id

        item._id = coerce_node_id(nodeid)
    else:
        setattr(item, "_nodeid", nodeid)  # noqa: B010  (pytest < 9.2 keeps the id here)
