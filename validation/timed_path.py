"""What the timed path sees (issue 25): real-library pairs under ``pytest --overhead`` against
``timeit`` outside pytest, with this version's ``src`` and with an older one's.

    pip install structlog pytest-cov
    python validation/timed_path.py --before DIR/src --sessions 5   # ~6 min, run alone

The pairs (each in a generated project, one fresh session per pair and version):

* ``structlog``: stdlib ``logging`` to a ``NullHandler`` (the baseline; the logger propagates to
  the root, where pytest's capture handlers sit) against structlog's processor chain to a null
  sink; with pytest's handlers in the timed path the stdlib side paid for them and structlog
  read faster.
* ``basicconfig``: an app that calls ``logging.basicConfig(level=INFO, handlers=[NullHandler()])``
  at import; ``json.dumps`` against ``json.dumps`` plus an ``info`` log call (a no-op under pytest
  before: the root logger was pytest's).
* ``cov``: a bare function against the same behind a decorator, under ``--cov``.
* ``import``: a bare call against the same after an optional import that is not installed, tried
  on every call (issue 38): every finder on ``sys.meta_path`` is asked, pytest's
  assertion rewriter first.
* ``deprecated``: the same against a call that issues a ``DeprecationWarning`` (issue 38): pytest
  records every one (``always``, into a list), production ignores it.

``timeit`` runs each side in a fresh ``python`` (no pytest) and gives framework / baseline - 1
from the medians of 7 repeats; the plugin's figure is its overhead and per-call times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]

APP = """
import json
import logging
import os
import warnings

import structlog

STD = logging.getLogger("bench")
STD.addHandler(logging.NullHandler())
STD.setLevel(logging.INFO)
structlog.configure(
    processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                structlog.processors.JSONRenderer()],
    logger_factory=structlog.PrintLoggerFactory(open(os.devnull, "w")),
    cache_logger_on_first_use=True,
)
STRUCT = structlog.get_logger()
PAYLOAD = {"user": 42, "items": list(range(20)), "name": "agent"}


def std_log():
    STD.info("request handled", extra={"user": 42})


def struct_log():
    STRUCT.info("request handled", user=42)


def work():
    return json.dumps(PAYLOAD)


def work_logged():
    json.dumps(PAYLOAD)
    logging.getLogger("app").info("handled")


def decorated(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def bare():
    total = 0
    for i in range(10):
        total += i
    return total


wrapped = decorated(bare)


def optional_speedups():
    try:
        import not_installed_speedups  # noqa: F401
    except ImportError:
        pass
    return bare()


def deprecated():
    warnings.warn("use new_api()", DeprecationWarning, stacklevel=2)
    return bare()
"""
BASIC = "import logging\nlogging.basicConfig(level=logging.INFO, handlers=[logging.NullHandler()])\nimport app\n"
PAIRS = {
    "structlog": ("app", "std_log", "struct_log", []),
    "basicconfig": ("basic", "app.work", "app.work_logged", []),
    "cov": ("app", "bare", "wrapped", ["--cov=app"]),
    "import": ("app", "bare", "optional_speedups", []),
    "deprecated": ("app", "bare", "deprecated", []),
}
TEST = """
import pytest
import {module}
from app import *


@pytest.mark.overhead(max_abs="1s")
def test_pair(overhead):
    overhead.compare({module}.{baseline}, {module}.{framework})
"""


def timeit_ratio(project: Path, module: str, baseline: str, framework: str) -> tuple[float, float, float]:
    """framework / baseline - 1 and both sides' seconds per call, outside pytest."""
    code = (
        f"import timeit, statistics, {module}\n"
        f"def per_call(fn):\n"
        f"    n = timeit.Timer(fn).autorange()[0]\n"
        f"    return statistics.median(t / n for t in timeit.repeat(fn, number=n, repeat=7))\n"
        f"b = per_call({module}.{baseline}); f = per_call({module}.{framework})\n"
        f"print(b, f)"
    )
    # sys.path as the plugin's sessions have it (this version's src, the project): the same folders to search
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{project}"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, check=True
    )
    base, frame = map(float, done.stdout.split())
    return frame / base - 1, base, frame


def plugin_run(project: Path, src: Path, name: str, extra: list[str]) -> tuple[float, float, float]:
    out = project / f"{name}.json"
    ran = harness.session(project, out, f"test_{name}.py", *extra, paths=[src, project])
    (result,) = ran.results
    return result["overhead"], result["baseline_s"], result["framework_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="an older version's src folder")
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--pairs", default=",".join(PAIRS), help="which pairs, comma-separated")
    args = parser.parse_args()
    versions = {"before": args.before.resolve(), "after": ROOT / "src"}
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "app.py").write_text(APP)
        (project / "basic.py").write_text(BASIC)
        (project / "pytest.ini").write_text("[pytest]\n")
        print("| pair | measured by | sessions | overhead (median, range) | baseline | framework |")
        print("|---|---|---|---|---|---|")
        for name in args.pairs.split(","):
            module, baseline, framework, extra = PAIRS[name]
            (project / f"test_{name}.py").write_text(TEST.format(module=module, baseline=baseline, framework=framework))
            rows = {
                "timeit, outside pytest": [
                    timeit_ratio(project, module, baseline, framework) for _ in range(args.sessions)
                ]
            }
            for version, src in versions.items():
                rows[f"pytest --overhead {' '.join(extra)}, {version}"] = [
                    plugin_run(project, src, name, extra) for _ in range(args.sessions)
                ]
            for how, runs in rows.items():
                overheads = [100 * r[0] for r in runs]
                print(
                    f"| {name} | {how} | {len(runs)} | {statistics.median(overheads):+.1f}% "
                    f"({min(overheads):+.1f}..{max(overheads):+.1f}) | "
                    f"{1e9 * statistics.median(r[1] for r in runs):.0f} ns | "
                    f"{1e9 * statistics.median(r[2] for r in runs):.0f} ns |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
