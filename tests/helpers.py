"""What several test modules share: generated projects' settings and conftest, a git runner, a
process probe, synthetic blocks. One module, so that no test module imports another's helpers."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
from pathlib import Path

import pytest

from overheadbench.core.vocabulary import Role, Side
from overheadbench.engine.attribution import explain
from overheadbench.engine.changes import Change
from overheadbench.engine.checks import Overall
from overheadbench.engine.profiles import Profiled
from overheadbench.pairs.results import PlaceResult
from overheadbench.store.environment import fingerprint
from overheadbench.store.runs import Run, read_run

BASELINE, FRAMEWORK, HARNESS = Side.BASELINE, Side.FRAMEWORK, Side.HARNESS

FAKE_CLOCK_CONFTEST = '''
import random

import pytest


class FakeClock:
    """Nanoseconds that only pass when a synthetic callable says so."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now

    def cost(self, mean_ns, jitter=0.02, seed=1):
        rng = random.Random(seed)

        def call():
            self.now += int(mean_ns * (1 + rng.uniform(-jitter, jitter)))

        return call

    def acost(self, mean_ns, jitter=0.02, seed=1):
        step = self.cost(mean_ns, jitter, seed)

        async def call():
            step()

        return call


@pytest.fixture
def clock(overhead):
    fake = FakeClock()
    overhead.clock_ns = fake
    return fake
'''


INI = "[pytest]\n"
LOOP_SCOPE = "asyncio_default_fixture_loop_scope = function\n"
"""pytest-asyncio's key, in the ini file of a project that loads it (its deprecation warning stays out)."""
BYTECODE = "overhead_counter = bytecode\n"
QUIET_INI = f"{INI}overhead_processes = 3\noverhead_time_budget = 0.5s\n{BYTECODE}"
"""Generated projects: 3 replica processes per pair rather than the default 10 (the quick
profile's 3): these projects test how replicas run, not how many, and the suite's time on a
2-core CI machine is spent mostly starting them (a replica is a whole pytest session, about 0.7 s
of CPU) and timing (0.5 s per pair, the quick profile's, rather than 2 s);
and count mode counting bytecode in the test's process, whose exact counts the tests read (a
callgrind replica costs ~10 s a session: the tests of that counter ask for it by option)."""


ONLY_THIS_PLUGIN = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_PLUGINS": "overheadbench.plugin"}
"""The environment of a generated project's sessions, and so of their replicas and xdist workers:
overheadbench loaded, no other installed plugin, unless the test is marked ``every_plugin``.

Each of the ~900 Python processes the suite starts paid ~0.5 s of CPU for plugins its project
never used: pytest scanning every installed distribution for entry points (~0.25 s with this
suite's dependencies), then importing and configuring pytest-benchmark, anyio, pytest-asyncio,
xdist and pytest-cov: half of a replica's start-up. A test of the plugin beside another one (xdist,
pytest-benchmark, async tests, coverage) is marked and its project loads them all, as users' do."""


ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1"}
"""The environment of every process the suite starts. numpy's OpenBLAS starts a thread per core
when numpy is imported, and each spins for ~0.1 s before it sleeps (its ``OPENBLAS_THREAD_TIMEOUT``):
0.1 s of CPU (a quarter of a replica's start-up) in each of the ~600 processes that import the
plugin, and none of them calls BLAS. A user's replicas keep the user's setting: their code may."""


XDIST_WORKER_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
"""What an xdist worker running this suite puts in the environment: a generated session is no
worker (pytest-benchmark disables itself in any session that sees ``PYTEST_XDIST_WORKER``)."""


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


COUNTED = """
import pytest
from costs import EXTRA

def bare():
    return 1

def framework():
    total = 0
    for i in range(10 + EXTRA):
        total += i
    return total

@pytest.mark.overhead(max=100.0, mode="count")
def test_counted(overhead):
    overhead.compare(bare, framework)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


class Synthetic:
    """Blocks that cost ``per_call_ns[side] * n`` and advance a fake clock by that much."""

    def __init__(self, per_call_ns: dict[str, float], noise: float = 0.0, seed: int = 3) -> None:
        self.per_call_ns = per_call_ns
        self.now = 0
        self.log: list[tuple[str, int]] = []
        self.rng = random.Random(seed)
        self.noise = noise

    def clock(self) -> int:
        return self.now

    def block(self, side: str):
        def run(n: int) -> int:
            cost = int(self.per_call_ns[side] * n * (1 + self.rng.uniform(-self.noise, self.noise)))
            self.now += max(cost, 1)
            self.log.append((side, n))
            return cost

        return run

    def blocks(self) -> dict:
        return {side: self.block(side) for side in (BASELINE, FRAMEWORK, HARNESS)}


GOLDEN_RUN = Path(__file__).parent / "golden" / "0001_old.json"
"""A stored run of three pairs (schema 1): what made histories and pages are built from."""


def commit(repository: Path, subject: str) -> str:
    (repository / "README.md").write_text(subject)
    git(repository, "add", "README.md")
    git(repository, "commit", "-q", "-m", subject)
    return git(repository, "rev-parse", "HEAD").strip()


def store(storage: Path, number: int, sha: str, scale: float, branch: str = "main", seed: int = 0) -> Path:
    """A stored run of ``sha``: the golden run, its pairs' ratios times ``scale`` (and a little noise)."""
    data = json.loads(GOLDEN_RUN.read_text())
    data["environment"]["commit_info"] = {"id": sha, "branch": branch, "dirty": False, "time": f"2026-01-{number:02d}"}
    noise = random.Random(number * 100 + seed)
    for result in data["results"]:
        factor = scale * (1 + noise.gauss(0, 0.002))
        result["ratio"] *= factor
        result["overhead"] = result["ratio"] - 1
        result["ci"] = [(1 + end) * factor - 1 for end in result["ci"]]  # the interval moves with the value
    folder = storage / fingerprint()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{number:04d}_main.json"
    path.write_text(json.dumps(data))
    return path


OUTER, MIDDLE, INNER = "mw:outer.<locals>.run", "mw:middle.<locals>.run", "mw:inner.<locals>.run"


def three_layers() -> Profiled:
    """A framework path of three layers over the baseline's work; the middle layer's loop dominates."""
    baseline = {"t:bare;app:work": 1000.0}
    framework = {
        f"t:framed;{OUTER}": 50.0,
        f"t:framed;{OUTER};{MIDDLE}": 800.0,
        f"t:framed;{OUTER};{MIDDLE};{INNER}": 20.0,
        f"t:framed;{OUTER};{MIDDLE};{INNER};app:work": 1000.0,
    }
    return Profiled(baseline, 1, framework, 1)


def made_run() -> Run:
    """The golden run with a failed pair (explained), a regressed one (its base tree's change) and a passing one."""
    run = read_run(GOLDEN_RUN)
    failed, regressed, passed = run.results
    failed = dataclasses.replace(
        failed, outcome=Overall.FAIL, explain=explain(three_layers(), "instructions", exact=True)
    )
    change = Change("overhead", 1.10, 1.20, se=0.01)
    place = PlaceResult("main", Role.BASE, change=change, explain=explain(three_layers(), "instructions", exact=True))
    regressed = dataclasses.replace(regressed, outcome=Overall.REGRESSED, places=[place])
    return dataclasses.replace(run, results=[passed, regressed, failed], gate=dataclasses.replace(run.gate, pairs=5.0))


def stepped_history(folder: Path) -> tuple[Path, Path, list[str]]:
    """A git project of ten commits in ``folder``, each with a stored run, every pair 16% slower from
    the sixth commit on: the project, its storage folder, and the commits."""
    project, storage = folder / "project", folder / "runs"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    shas = [commit(project, f"commit {i}") for i in range(10)]
    for number, sha in enumerate(shas, start=1):
        store(storage, number, sha, 1.16 if number > 5 else 1.0)
    return project, storage, shas


def one_line(text: str) -> str:
    """A message as one line, its whitespace (the terminal's line breaks) single spaces: for tests that read
    a message's words, not its layout."""
    return " ".join(text.split())


def sentences(matcher: pytest.LineMatcher) -> pytest.LineMatcher:
    """The lines as a reader takes them in: before each line that a message the plugin fitted to the
    terminal (:func:`overheadbench.core.tables.fitted`) continues, the whole sentence, its continuation
    lines (each two spaces deeper than it; an ``E`` line's after its ``E``) joined back. A test matches a
    sentence wherever the terminal's width broke it, and every line is still there as a line of its own."""

    def split(line: str) -> tuple[str, int, str]:
        marker, body = ("E", line[1:]) if line.startswith("E ") else ("", line)
        return marker, len(body) - len(body.lstrip(" ")), body.strip()

    found = matcher.lines
    lines = []
    for index, line in enumerate(found):
        marker, indent, _ = split(line)
        continued = []
        for later in found[index + 1 :]:
            later_marker, later_indent, text = split(later)
            if not text or later_marker != marker or later_indent != indent + 2:
                break
            continued.append(text)
        lines += [" ".join([line, *continued])] if continued else []
        lines.append(line)
    return pytest.LineMatcher(lines)
