"""Valgrind as the plugin runs it: whether callgrind can count here, the command a counting
replica starts under, and the environment that tells that replica so.

Kept apart from the counter itself (:mod:`overheadbench.instruments.callgrind`) so that the
replicas' launcher and the options can ask without importing an instrument.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from pathlib import Path

SCRATCH_ENV = "OVERHEADBENCH_SCRATCH"
"""A replica's scratch folder (set by its pool): a counting replica's dumps go there."""
COUNTER_ENV = "OVERHEADBENCH_COUNTER"
"""Set to ``callgrind`` in a replica started under callgrind to count (:func:`in_counting_replica`)."""


def supported() -> bool:
    """Whether this machine can issue client requests (the code page is x86-64 code)."""
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def unavailable() -> str | None:
    """Why callgrind cannot count here (None: it can)."""
    if not supported():
        return f"callgrind's client requests are issued by x86-64 code on Linux; this is {sys.platform} on " + (
            platform.machine() or "an unknown machine"
        )
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (not on PATH)"
    return None


def wrapper() -> tuple[str, ...]:
    """The command a counting replica is started under: callgrind collecting nothing until a
    block asks, instrumenting nothing until the first count (start-up runs at ~4x, not ~50x),
    dumping into the replica's scratch folder (valgrind expands ``%q{...}`` from the environment)."""
    valgrind = shutil.which("valgrind") or "valgrind"
    return (
        valgrind,
        "--tool=callgrind",
        "--quiet",
        "--collect-atstart=no",
        "--instr-atstart=no",
        f"--callgrind-out-file=%q{{{SCRATCH_ENV}}}/cg.%p",
    )


def in_counting_replica() -> Path | None:
    """This process's dump folder, when it is a replica started under callgrind to count."""
    if os.environ.get(COUNTER_ENV) != "callgrind" or not os.environ.get(SCRATCH_ENV):
        return None
    return Path(os.environ[SCRATCH_ENV])
