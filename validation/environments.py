"""``--overhead-env``, measured (issue 39): three environments of one project, side by side.

    python validation/environments.py setup --out DIR      # venvs, ~3 min
    python validation/environments.py collect --out DIR    # ~25 min, run alone
    python validation/environments.py report --out DIR

``setup`` makes a small project (``DIR/project``: two pairs whose framework path calls a
dependency, ``envdep``) and four virtual environments, each with a frozen copy of this
repository's HEAD (``DIR/tree``: editing the working copy meanwhile changes nothing) and one
release of the dependency: ``ref`` and ``same`` (Python 3.11, envdep 1.0:
identical packages), ``slower`` (envdep 1.1, whose work is 15% longer: the framework path about
15% slower, the baseline untouched) and ``py313`` (Python 3.13, envdep 1.0).

``collect`` runs, one session at a time: ``--sessions`` sessions of ``ref`` with
``--overhead-env`` of ``same``, then of ``slower`` (gate at ``--overhead-fail-above=5``), then
plain sessions of ``ref`` and of ``slower`` alone (the change from separate runs), then one
session each with 0, 1 and 2 extra environments (the cost), and one with ``py313``.

``report``: gate failures on identical environments, the slower dependency caught, the paired
change against the ratio of separate runs, and the wall time per extra environment.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

import harness

REPO = Path(__file__).resolve().parents[1]
PYTHONS = {"ref": "3.11.7", "same": "3.11.7", "slower": "3.11.7", "py313": "3.13.0"}
RELEASE = {"ref": "1.0", "same": "1.0", "slower": "1.1", "py313": "1.0"}
WORK = {"1.0": 400, "1.1": 460}
"""The dependency's loop per call, by release: 1.1 works 15% longer."""
DEPENDENCY = """
def handle(items):
    total = 0
    for value in range({work}):
        total += value ^ items
    return total
"""
TESTS = """
import pytest
import envdep


def bare():
    total = 0
    for value in range(300):
        total += value ^ 3
    return total


@pytest.mark.overhead(max="5x")
def test_handler(overhead):
    overhead.compare(bare, lambda: envdep.handle(3))


@pytest.mark.overhead(max="5x")
def test_wrapped_handler(overhead):
    def wrapped():
        return {"result": envdep.handle(3)}["result"]

    overhead.compare(bare, wrapped)
"""


def python_of(version: str) -> str:
    return str(Path.home() / ".pyenv" / "versions" / version / "bin" / "python")


def setup(out: Path) -> None:
    project = out / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "test_handlers.py").write_text(TESTS)
    (project / "pytest.ini").write_text("[pytest]\n")
    for release, work in WORK.items():
        package = out / f"envdep-{release}"
        (package / "envdep").mkdir(parents=True, exist_ok=True)
        (package / "envdep" / "__init__.py").write_text(DEPENDENCY.format(work=work))
        (package / "pyproject.toml").write_text(
            f'[project]\nname = "envdep"\nversion = "{release}"\n[build-system]\nrequires = ["setuptools"]\n'
            'build-backend = "setuptools.build_meta"\n'
        )
    tree = out / "tree"
    if not tree.exists():
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    for name, version in PYTHONS.items():
        venv = out / f"venv-{name}"
        if not venv.exists():
            subprocess.run([python_of(version), "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "-e", str(tree), str(out / f"envdep-{RELEASE[name]}")], check=True)
        print(f"{name}: ready")


def session(out: Path, python: str, name: str, *args: str) -> dict:
    """One session in the project; its JSON and wall time, kept under ``DIR/runs``."""
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    path = runs / f"{name}.json"
    ran = harness.session(out / "project", path, *args, python=python)
    (runs / f"{name}.log").write_text(ran.output)
    data = {**ran.run, "wall_s": ran.wall_s, "exit": ran.exit}
    path.write_text(json.dumps(data))
    print(f"{name}: exit {ran.exit}, {ran.wall_s:.1f} s", flush=True)
    return data


def collect(out: Path, sessions: int) -> None:
    ref = str(out / "venv-ref" / "bin" / "python")
    env = {name: str(out / f"venv-{name}" / "bin" / "python") for name in PYTHONS}
    gate = "--overhead-fail-above=5"
    for index in range(sessions):
        session(out, ref, f"same-{index:02d}", f"--overhead-env=same={env['same']}", gate)
        session(out, ref, f"slower-{index:02d}", f"--overhead-env=slower={env['slower']}", gate)
        session(out, ref, f"alone-ref-{index:02d}")
        session(out, env["slower"], f"alone-slower-{index:02d}")
    session(out, ref, "cost-0")
    session(out, ref, "cost-1", f"--overhead-env=same={env['same']}")
    session(out, ref, "cost-2", f"--overhead-env=same={env['same']}", f"--overhead-env=slower={env['slower']}")
    session(out, ref, "py313", f"--overhead-env=py313={env['py313']}", gate)


def report(out: Path) -> None:
    runs = out / "runs"

    def load(pattern: str) -> list[dict]:
        return [json.loads(p.read_text()) for p in sorted(runs.glob(f"{pattern}.json"))]

    print("## Identical environments and a 15% slower dependency, 5% gate\n")
    print("| environment | sessions | pairs | regressed | same | unknown | improved | change median (min..max) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("same", "slower"):
        found = load(f"{name}-*")
        changes = [p["change"] for run in found for r in run["results"] for p in r["places"] if p["change"]]
        findings = [_finding(c, 5.0) for c in changes]
        percents = [_percent(c) for c in changes]
        counts = " | ".join(str(findings.count(f)) for f in ("regressed", "same", "unknown", "improved"))
        spread = f"{statistics.median(percents):+.1f}% ({min(percents):+.1f}..{max(percents):+.1f})"
        print(f"| {name} | {len(found)} | {len(changes)} | {counts} | {spread} |")
    print("\n## The paired change against separate runs of each environment\n")
    print("| test | paired (median over sessions) | separate runs (median ratio of medians) |")
    print("|---|---|---|")
    for test in ("test_handler", "test_wrapped_handler"):
        paired = [_percent(p["change"]) for r in _of(load("slower-*"), test) for p in r["places"] if p["change"]]
        ref = statistics.median(r["ratio"] for r in _of(load("alone-ref-*"), test))
        slow = statistics.median(r["ratio"] for r in _of(load("alone-slower-*"), test))
        print(f"| {test} | {statistics.median(paired):+.1f}% | {100 * (slow / ref - 1):+.1f}% |")
    print("\n## Cost of a session (two pairs) per extra environment\n")
    print("| extra environments | wall time | replica processes |")
    print("|---|---|---|")
    for count in range(3):
        (run,) = load(f"cost-{count}")
        places = [p["result"]["processes"] for r in run["results"] for p in r["places"] if p["result"]]
        processes = sum(r["processes"] for r in run["results"]) + sum(places)
        print(f"| {count} | {run['wall_s']:.1f} s | {processes} |")
    (py313,) = load("py313")
    for result in py313["results"]:
        for place in result["places"]:
            change = place["change"]
            print(f"\npy313 {result['nodeid']}: {_percent(change):+.1f}% ({_finding(change, 5.0)})")


def _of(runs: list[dict], test: str) -> list[dict]:
    return [r for run in runs for r in run["results"] if r["nodeid"].endswith(test)]


def _percent(change: dict) -> float:
    return 100 * (change["new"] / change["old"] - 1)


def _finding(change: dict, threshold: float) -> str:
    from overheadbench.engine.changes import Change

    return Change.from_json(change, "change", "").finding(threshold).value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("setup", "collect", "report"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.step == "setup":
        setup(args.out)
    elif args.step == "collect":
        collect(args.out, args.sessions)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
