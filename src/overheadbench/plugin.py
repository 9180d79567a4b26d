"""pytest's entry point: the options, the markers, the plugin's module-level fixtures, and the
session's plugins (:mod:`overheadbench.session`) registered with its measured kinds, in the
user's session, an xdist worker and a replica process alike."""

from __future__ import annotations

import pytest

from . import hookspecs
from .core.option_paths import misread_paths
from .core.scratch import remove_orphans
from .core.tables import WARNING_WIDTH, fitted
from .core.termination import install_sigterm, uninstall_sigterm
from .core.xdist import XdistGrouping, is_controller, prepare_controller
from .gate_options import gate_deprecations, gate_options_from_config
from .http.fixtures import asgi_server as asgi_server  # a fixture of this plugin
from .option_table import GATE, REPORTS, add_gate_options, add_options
from .options import deprecations, options_from_config
from .pairs.marker import (
    concurrency_level as concurrency_level,  # a fixture of this plugin
    parametrize_levels,
)
from .replicas.launch import ReplicaRequest
from .replicas.replica import ReplicaPlugin
from .session import assemble


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    gate = parser.getgroup(GATE, "overheadbench: regression gate (a base tree, environments, stored runs)", REPORTS)
    add_gate_options(gate, parser)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_levels(metafunc)


def pytest_configure(config: pytest.Config) -> None:
    """Check every option, then register the session's plugins (measuring; and reporting, in the
    user's session), each measured kind, and in a replica process the replica's plugin too."""
    request = ReplicaRequest.from_env()
    options = options_from_config(config)
    gate = gate_options_from_config(config, in_replica=request is not None, measuring=options.measuring)
    if install_sigterm():  # this process may hold replicas, servers, scratch folders: SIGTERM cleans up too
        config.add_cleanup(uninstall_sigterm)
    replica = ReplicaPlugin(config, request) if request is not None else None
    if replica is None and not hasattr(config, "workerinput"):
        remove_orphans()  # what sessions that died (kill -9) left in the temporary directory
        for warning in misread_paths(config):
            config.issue_config_time_warning(pytest.PytestConfigWarning(fitted(warning, WARNING_WIDTH)), stacklevel=2)
        for deprecated in [*deprecations(config), *gate_deprecations(config)]:
            config.issue_config_time_warning(pytest.PytestDeprecationWarning(deprecated), stacklevel=2)
    if replica is not None:
        config.pluginmanager.register(replica, "overheadbench-replica")
    elif options.measuring and config.pluginmanager.hasplugin("xdist"):
        if is_controller(config):
            prepare_controller(config)
        config.pluginmanager.register(XdistGrouping(), "overheadbench-xdist")
    measurer = assemble(config, options, gate, replica)
    config.pluginmanager.register(measurer, "overheadbench-session")
    for kind in measurer.kinds:  # each kind's marker, fixture, and report hook
        config.addinivalue_line("markers", kind.marker_help)
        config.pluginmanager.register(kind, f"overheadbench-{kind.marker}")
    if replica is None and not hasattr(config, "workerinput"):  # only the user's session reports
        from .report.reporter import Reporter  # here: a replica or worker never imports the report's ~20 modules

        reporter = Reporter(config, options, gate, measurer.state, measurer.started)
        config.pluginmanager.register(reporter, "overheadbench-reporter")
