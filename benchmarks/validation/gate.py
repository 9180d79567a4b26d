"""The regression gate's false-alarm rate and detection curve, measured (issue 14).

    python benchmarks/validation/gate.py collect --out benchmarks/validation/out/gate   # ~25 min, run alone
    python benchmarks/validation/gate.py report --out benchmarks/validation/out/gate

``collect`` runs the suite's overhead pairs (`-m overhead benchmarks/`: in-process and HTTP
pairs; the transport tables are left out) in consecutive fresh sessions of identical code, for
the default and the quick profile, each session's run written with ``--overhead-json``. Then
it injects regressions into the metrics middleware (``OVERHEADBENCH_EXAMPLE_SLOWDOWN``, loop
iterations per call), calibrated to about +5, +10 and +20 points on its sync pair, and runs
the metrics pairs again in fresh sessions.

``report`` replays the gate of ``overheadbench.comparison`` offline on those runs: every
consecutive pair of identical sessions (the newer compared with the older, with the older ones
as the machine's history), and every injected session against every identical one. It prints
the false alarms at the documented threshold, the detection curve, and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROFILES = {"default": [], "quick": ["--overhead-quick"]}
METRICS = ["benchmarks/test_middleware_overhead.py", "-k", "alone and metrics"]
LEVELS = (5, 10, 20)


def session(out: Path, name: str, args: list[str], slowdown: int = 0) -> dict:
    """One fresh pytest session; its run document (written by --overhead-json)."""
    path = out / f"{name}.json"
    if not path.exists():
        env = {**os.environ, "OVERHEADBENCH_EXAMPLE_SLOWDOWN": str(slowdown)}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--overhead",
                   f"--overhead-json={path}", *args]
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=False)
        print(f"{name}: {time.perf_counter() - started:.0f} s", flush=True)
    return json.loads(path.read_text())


def overhead_of(run: dict, test: str) -> float:
    return next(r["overhead"] for r in run["results"] if r["nodeid"].endswith(test))


def collect(out: Path, sessions: int, injected: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for profile, flags in PROFILES.items():
        for index in range(sessions):
            session(out, f"aa-{profile}-{index:02d}", ["-m", "overhead", "benchmarks/", *flags])
    # calibrate: points per loop iteration on the sync metrics pair, default profile
    probe, plain = session(out, "calibrate-200", METRICS, slowdown=200), session(out, "calibrate-0", METRICS)
    sync = "test_each_middleware_alone[metrics-sync]"
    per_iteration = (overhead_of(probe, sync) - overhead_of(plain, sync)) * 100 / 200
    (out / "calibration.json").write_text(json.dumps({"points_per_iteration": per_iteration}))
    for profile, flags in PROFILES.items():
        for level in LEVELS:
            iterations = max(1, round(level / per_iteration))
            for index in range(injected):
                session(out, f"inj{level}-{profile}-{index:02d}", [*METRICS, *flags], slowdown=iterations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("collect", "report"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/validation/out/gate")
    parser.add_argument("--sessions", type=int, default=8, help="identical sessions per profile")
    parser.add_argument("--injected", type=int, default=6, help="sessions per injected level and profile")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, args.sessions, args.injected)
    else:
        from gate_report import report

        report(args.out)


if __name__ == "__main__":
    main()
