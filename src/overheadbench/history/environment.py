"""What a stored run was measured on, and what differs between two runs' environments.

Machine and commit information come from pytest-benchmark's hooks
(``pytest_benchmark_generate_machine_info``, ``pytest_benchmark_update_machine_info``,
``pytest_benchmark_generate_commit_info``), so a project that customises them gets the
same metadata in both tools. overheadbench adds the CPU count, the versions of the
packages that shape a measurement, and the date.
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

PACKAGES = ("overheadbench", "pytest", "pytest-benchmark", "numpy", "anyio", "httpx", "hypercorn")
COMPARED = (
    ("machine_info", "python_implementation"),
    ("machine_info", "python_version"),
    ("machine_info", "system"),
    ("machine_info", "machine"),
    ("machine_info", "cpu", "brand_raw"),
    ("cpu_count",),
    ("packages",),
)
"""The fields whose difference makes two runs' overheads not comparable as they stand."""


def environment(config: Any) -> dict[str, Any]:
    """The environment of this session, from pytest-benchmark's hooks when its plugin is loaded."""
    hook = config.hook
    machine: dict[str, Any] = {}
    commit: dict[str, Any] = {}
    if hasattr(hook, "pytest_benchmark_generate_machine_info"):
        machine = hook.pytest_benchmark_generate_machine_info(config=config)
        hook.pytest_benchmark_update_machine_info(config=config, machine_info=machine)
        commit = hook.pytest_benchmark_generate_commit_info(config=config)
    return {
        "machine_info": machine,
        "commit_info": commit,
        "cpu_count": os.cpu_count(),
        "fingerprint": fingerprint(),
        "packages": {name: _version(name) for name in PACKAGES},
        "datetime": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable differences in the fields that matter, e.g. ``python_version: 3.11.7 -> 3.12.1``."""
    found = []
    for path in COMPARED:
        before, after = _get(old, path), _get(new, path)
        if isinstance(before, dict) and isinstance(after, dict):
            found += [
                f"{key}: {before.get(key)} -> {after.get(key)}"
                for key in sorted(set(before) | set(after))
                if before.get(key) != after.get(key)
            ]
        elif before != after:
            found.append(f"{path[-1]}: {before} -> {after}")
    return found


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
    return _fingerprint(
        platform.system(), platform.python_implementation(), version, bits, os.cpu_count(), _cpu_model()
    )


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


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return found.group(1).strip() if found else platform.machine()
