"""The session's composition root: one pytest session's parts built from its options, by named
functions, into its measuring plugin (:class:`~overheadbench.measurer.Measurer`: collection,
pools, each test judged by each measured kind, :mod:`overheadbench.pairs.kind` and
:mod:`overheadbench.transport.kind`). The entry point (:mod:`overheadbench.plugin`) registers it,
each kind (its pytest fixture), and in the user's session the reporting plugin
(:class:`~overheadbench.report.reporter.Reporter`), as pytest-xdist registers its ``DSession``
and ``TerminalDistReporter``.
"""

from __future__ import annotations

from functools import partial

import pytest

from .engine.changes import Gate
from .engine.harness import Harness
from .engine.settings import Counter
from .engine.timed_path import AppLogging
from .gate_options import GateOptions
from .history.gate import StoredRuns, session_stored
from .measurer import Measurer, MeasuringOptions, SessionParts, SessionState
from .options import Options
from .pairs.across import PlaceGate
from .pairs.explaining import Explainer
from .pairs.fixture import FixtureParts
from .pairs.kind import PairKind
from .pairs.strategy import strategy_for
from .replicas.places import Places, places, session_pool, under_callgrind
from .replicas.pool import ReplicaPool
from .replicas.replica import ReplicaPlugin
from .transport.fixture import TransportFixture
from .transport.kind import TransportKind


def assemble(
    config: pytest.Config, options: Options, gate: GateOptions, replica: ReplicaPlugin | None
) -> Measurer[StoredRuns]:
    """The session's measuring plugin, its parts built: its state, its places and replicas, each
    measured kind (transport first: each test is judged by every kind, in this order)."""
    state: SessionState[StoredRuns] = SessionState.of(config)
    measured = measured_parts(config, options, gate, replica, state)
    kinds = (
        transport_kind(options, gate, measured, state, replica),
        pair_kind(options, gate, measured, state, replica),
    )
    asked = MeasuringOptions(options.measuring, options.implied_by)
    return Measurer(config, asked, measured, state, kinds, partial(stored_runs, gate, state, replica))


def stored_runs(gate: GateOptions, state: SessionState[StoredRuns], replica: ReplicaPlugin | None) -> StoredRuns | None:
    """The session's stored runs, where it uses storage (a replica reads none: its controller judges)."""
    return None if replica is not None else session_stored(gate, state.environment)


def measured_parts(
    config: pytest.Config,
    options: Options,
    gate: GateOptions,
    replica: ReplicaPlugin | None,
    state: SessionState[StoredRuns],
) -> SessionParts[Places]:
    """Where the session's pairs get their samples: its places (the base tree, each environment,
    those a plugin adds), their replica pools, count mode's callgrind replicas, or in a replica
    the controller."""
    where = [*places(gate.against, gate.envs), *gate.added]
    replicas = Places(partial(replica_pool, config, options, state), where)
    valgrind = options.settings.counter is Counter.CALLGRIND and replica is None  # count mode counts in replicas
    counting = replicas.under(under_callgrind) if valgrind else None
    replication = replica if replica is not None else replicas
    return SessionParts(where, replicas, counting, replication, AppLogging(), Harness())


def replica_pool(config: pytest.Config, options: Options, state: SessionState[StoredRuns]) -> ReplicaPool:
    """The session's replica processes, for the timed tests measured in more than one process
    (made on the first such pair, once the collection named them)."""
    return session_pool(config, state.replicated, options.settings.replica_timeout_s)


def pair_kind(
    options: Options,
    gate: GateOptions,
    measured: SessionParts[Places],
    state: SessionState[StoredRuns],
    replica: ReplicaPlugin | None,
) -> PairKind:
    """The pairs: their fixture's parts (the session's places, instruments and explainer; the
    strategy chosen with its counting elsewhere); their gate against the other places."""
    pair_gate = PlaceGate(Gate(gate.reference, gate.thresholds.pairs, gate.unknown)) if measured.places else None
    explainer = Explainer(
        every=options.explain,
        gate=pair_gate,
        places=measured.replicas if measured.places else None,
        orders=replica,
    )
    counting = measured.counting
    choose = partial(
        strategy_for,
        elsewhere=counting.count if counting else None,
        places=(counting or measured.replicas).count_places if measured.places else None,
        gate=pair_gate,
    )
    parts = FixtureParts(
        options.settings,
        options.measuring,
        choose,
        measured.replication,
        measured.app_logging,
        measured.harness,
        explainer,
    )
    return PairKind(parts, state, bool(measured.places or counting), pair_gate)


def transport_kind(
    options: Options,
    gate: GateOptions,
    measured: SessionParts[Places],
    state: SessionState[StoredRuns],
    replica: ReplicaPlugin | None,
) -> TransportKind:
    """The transport tests: their fixture (the quick profile's where asked), and, with other
    places, their rounds there and their figures' gate (an unknown change shown, not warned: a
    figure has many, each with a wide interval)."""
    rounds_at = measured.replicas if measured.places else None
    figure_gate = Gate(gate.reference, gate.thresholds.transport, None) if rounds_at is not None else None
    make = partial(TransportFixture, quick=options.quick)
    return TransportKind(
        make, state, options.settings, options.measuring, replica, rounds_at, figure_gate, options.quick
    )
