"""Hooks another plugin (or a ``conftest.py``) implements to extend overheadbench, declared as
pytest-benchmark declares its own (``pytest_benchmark_update_machine_info``...).

* ``pytest_overheadbench_places``: places where every pair is measured too, beside the base tree
  of ``--overhead-against`` and each ``--overhead-env`` (a container image, another machine): each
  a :class:`~overheadbench.replicas.places.Where`, measured in rounds interleaved with the session's
  own, its change reported and gated as an environment's.
* ``pytest_overheadbench_machine_info``: facts about the machine a run records (a GPU, a governor,
  a cloud instance type), beside the interpreter and CPU overheadbench records itself.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_overheadbench_places(config: pytest.Config) -> list[Any]:
    """Places this session measures every pair at too (each a ``Where``); results are joined."""
    return []


@pytest.hookspec
def pytest_overheadbench_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    """Add to (or change) the machine facts the session's run records, in place."""
