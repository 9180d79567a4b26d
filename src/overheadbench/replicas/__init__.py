"""Replica processes: fresh runs of the user's session that re-measure each pair.

Why fresh processes: a pair's ratio depends on where code and objects land in memory
(ASLR, hash seed). Here it moved 1–3 points between fresh processes while one process's own
interval was ±0.3 points, and a forked child did not reproduce the spread. Like pyperf, we
re-run the measurement in new processes and let the interval include the spread between them.

The parts:

* :mod:`.lifeline`: how a replica starts, and dies with its controller;
* :mod:`.relaunch`: how to start the user's pytest session again (its own arguments,
  ``addopts``, plugins and conftests; only the selection and a few options change);
* :mod:`.messages`: the typed messages between the controller and a replica;
* :mod:`.pool`: the controller's side, the process pool, and one pair's use of it;
* :mod:`.process`: one replica process as the pool holds it;
* :mod:`.failures`: the errors a replica's failure raises, and their stories;
* :mod:`.places`: where a pair is measured (the session's own replicas, a base tree's, each
  environment's) and the procedure for one pair: rounds of processes, every place's replicas
  interleaved, until the intervals are narrow enough or the time budget spent;
* :mod:`.trees`: the base tree of ``--overhead-against`` (a revision's worktree or a folder)
  and the check that its replicas import it;
* :mod:`.environments`: the interpreters of ``--overhead-env`` (a path, or a tox environment),
  checked and named;
* :mod:`.replica`: the replica's side, the plugin registered in a replica process.

A test or fixture that must know whether it runs in a replica calls :func:`in_replica`.
"""

from __future__ import annotations

from .lifeline import in_replica

__all__ = ["in_replica"]
