"""What a stored run was measured on, and what differs between two runs' environments.

Machine and commit information come from pytest-benchmark's hooks
(``pytest_benchmark_generate_machine_info``, ``pytest_benchmark_update_machine_info``,
``pytest_benchmark_generate_commit_info``), so a project that customises them gets the
same metadata in both tools. overheadbench adds the CPU count, the versions of the
packages that shape a measurement, every installed distribution's version (what the measured
code ran on: the project's own dependencies too), and the date.

Two runs differ by *machine* (its system, CPU model and count: their figures are not comparable
as they stand) or only by *environment* (the Python version or a package's: the very question
of a tox matrix or an upgrade, comparable on one machine).
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from ..replicas.environments import (
    SHOWN_DIFFERENCES,
    installed,
    normalized,
    package_differences,
    project_dependencies,
)
from .machine import commit_info, cpu_model, machine_info

PACKAGES = ("overheadbench", "pytest", "pytest-benchmark", "numpy", "anyio", "httpx", "hypercorn")
COMPARED = (
    ("machine_info", "python_implementation"),
    ("machine_info", "python_version"),
    ("machine_info", "system"),
    ("machine_info", "machine"),
    ("machine_info", "cpu", "brand_raw"),
    ("cpu_count",),
)
"""The fields whose difference makes two runs' overheads not comparable as they stand (and
every package's version, :func:`differences`)."""
BRANCH_VARIABLE = "OVERHEADBENCH_BRANCH"
"""The environment variable that names the branch a run records (and links on), where the checkout
is detached: CI checks a commit out, and ``history --measure`` measures past commits."""
FINGERPRINT_PARTS = 6
INTERPRETER_PARTS = (1, 2)
"""The parts of a fingerprint (:func:`fingerprint`) that name the interpreter, not the machine."""


def environment(config: Any) -> dict[str, Any]:
    """The environment of this session; machine and commit from pytest-benchmark's hooks when its
    plugin is loaded, else :mod:`overheadbench.store.machine`'s."""
    hook = config.hook
    if hasattr(hook, "pytest_benchmark_generate_machine_info"):
        machine = hook.pytest_benchmark_generate_machine_info(config=config)
        hook.pytest_benchmark_update_machine_info(config=config, machine_info=machine)
        commit = hook.pytest_benchmark_generate_commit_info(config=config)
    else:
        machine, commit = machine_info(), commit_info(Path(config.rootpath))
    if os.environ.get(BRANCH_VARIABLE):  # a detached checkout (CI, history --measure) names its branch
        commit = {**commit, "branch": os.environ[BRANCH_VARIABLE]}
    if hasattr(hook, "pytest_overheadbench_machine_info"):
        hook.pytest_overheadbench_machine_info(config=config, machine_info=machine)
    return {
        "machine_info": machine,
        "commit_info": commit,
        "cpu_count": os.cpu_count(),
        "fingerprint": fingerprint(),
        "packages": {name: _version(name) for name in PACKAGES},
        "distributions": installed(),
        "project_dependencies": sorted(project_dependencies(Path(config.rootpath))),
        "datetime": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable differences in the fields that matter, e.g. ``python 3.11.7 -> 3.12.1``,
    ``httpx 0.27.2 -> 0.28.1`` (every installed distribution, where both runs recorded them;
    else the plugin's own packages)."""
    found = []
    for path in COMPARED:
        before, after = _get(old, path), _get(new, path)
        if before != after:
            name = "python" if path[-1] == "python_version" else path[-1]
            found.append(f"{name} {before} -> {after}" if name == "python" else f"{name}: {before} -> {after}")
    key = "distributions" if all(isinstance(env.get("distributions"), dict) for env in (old, new)) else "packages"
    before, after = ({k: str(v) for k, v in env.get(key, {}).items() if v} for env in (old, new))
    return found + package_differences(before, after, own_dependencies(old, new))


def own_dependencies(*environments: dict[str, Any]) -> frozenset[str]:
    """The project's own dependencies as the runs recorded them (none before they were)."""
    return frozenset(name for env in environments for name in env.get("project_dependencies") or ())


def differences_heading(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The differences of two runs' environments in one line, the project's own dependencies
    first, then the interpreter and the machine, then up to ``SHOWN_DIFFERENCES`` other packages
    (``measured in different environments: pydantic-ai 1.1.0 -> 1.2.0; python 3.12.1 -> 3.13.0;
    cffi: ...; and 13 more packages``); empty when they do not differ."""
    found = differences(old, new)
    own = own_dependencies(old, new)
    first = [d for d in found if normalized(d.split(" ", 1)[0]) in own]
    machine = [d for d in found if d.startswith("python ") or ":" in d.split(" ", 1)[0]]
    rest = [d for d in found if d not in first and d not in machine]
    shown = rest[:SHOWN_DIFFERENCES]
    more = [f"and {len(rest) - len(shown)} more packages"] if len(rest) > len(shown) else []
    return "measured in different environments: " + "; ".join([*first, *machine, *shown, *more]) if found else ""


def same_machine(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two runs were measured on one machine, another Python aside: their fingerprints
    (:func:`recorded_fingerprint`) agree on the system, word size, core count and CPU model."""
    prints = [recorded_fingerprint(env) for env in (old, new)]
    if None in prints:
        return False
    parts = [str(p).split("-") for p in prints]
    return all(len(p) == FINGERPRINT_PARTS for p in parts) and all(
        parts[0][i] == parts[1][i] for i in range(FINGERPRINT_PARTS) if i not in INTERPRETER_PARTS
    )


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return data if data != {} else None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def fingerprint() -> str:
    """This machine as a folder name for its stored runs, e.g. ``Linux-CPython-3.11-64bit-2cpu-5d41402a``.

    pytest-benchmark's machine id (system, interpreter, Python version, word size) plus what
    moves an overhead between machines: the core count and the CPU model (hashed, so the
    name stays short). Runs of one fingerprint are one machine's history.
    """
    version = ".".join(platform.python_version_tuple()[:2])
    bits = platform.architecture()[0]
    return _fingerprint(platform.system(), platform.python_implementation(), version, bits, os.cpu_count(), cpu_model())


def recorded_fingerprint(env: dict[str, Any]) -> str | None:
    """The fingerprint of the machine that measured a stored run: the one it recorded, else
    (runs stored before runs recorded it) rebuilt from its machine info; None if unknown.

    A run's folder is only where it was put: a run copied into another machine's folder is
    still the measuring machine's, and the gate must see that."""
    if isinstance(env.get("fingerprint"), str):
        return str(env["fingerprint"])
    machine = env.get("machine_info") or {}
    cpu = (machine.get("cpu") or {}).get("brand_raw")
    count = env.get("cpu_count")
    version = str(machine.get("python_version") or "")
    if not (cpu and count and version and machine.get("system") and machine.get("python_implementation")):
        return None
    bits = f"{(machine.get('cpu') or {}).get('bits', 64)}bit"
    major_minor = ".".join(version.split(".")[:2])
    return _fingerprint(machine["system"], machine["python_implementation"], major_minor, bits, count, cpu)


def _fingerprint(system: str, implementation: str, version: str, bits: str, cpus: int | None, cpu: str) -> str:
    digest = hashlib.sha256(f"{cpu}/{cpus}".encode()).hexdigest()[:8]
    return re.sub(r"[^\w.-]", "_", "-".join((system, implementation, version, bits, f"{cpus}cpu", digest)))
