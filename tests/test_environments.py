"""``--overhead-env``: the same tree measured under other interpreters in one session, interleaved
with the session's own; each environment's change gated; every bad input a usage error before
anything is measured.

An "environment" here is a small script that starts this interpreter with a variable set, the
way a virtual environment would bring other dependency versions: the projects' costs read it,
so an environment's framework path can be made slower on the fake clock (exact changes)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers import sentences

import overheadbench
from overheadbench.cli import main
from overheadbench.replicas.build import this_build
from overheadbench.replicas.environments import Interpreter, derived_name, package_differences, project_dependencies
from overheadbench.store.environment import differences, differences_heading, same_machine

COSTS = "import os\nFRAMEWORK_NS = int(os.environ.get('FRAMEWORK_NS', '1100'))\n"
PAIR = """
import pytest
from costs import FRAMEWORK_NS

@pytest.mark.overhead(max=1.0)
def test_middleware(overhead, clock):
    overhead.compare(clock.cost(1000), clock.cost(FRAMEWORK_NS, seed=2))
"""
REPLICATED = ("-o", "overhead_processes=2", "-p", "no:cacheprovider")


def interpreter(folder: Path, name: str, **variables: str) -> str:
    """An executable that runs this Python with ``variables`` set (a stand-in for a venv)."""
    path = folder / name
    exports = " ".join(f"{key}={value}" for key, value in variables.items())
    path.write_text(f'#!/bin/sh\n{exports} exec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def project(fake_clock_project: pytest.Pytester) -> pytest.Pytester:
    fake_clock_project.makepyfile(costs=COSTS, test_pair=PAIR)
    return fake_clock_project


def test_an_identical_environment_measures_the_same_and_passes_the_gate(project: pytest.Pytester) -> None:
    done = project.runpytest(
        f"--overhead-env=twin={sys.executable}", "--overhead-fail-above=5", "--overhead-json=o.json", *REPLICATED
    )
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(
        [
            "*overhead: under twin (measured in this session, interleaved with this environment)*",
            "*this environment*twin*change*",
            "*test_middleware*10.0%*10.0%*+0.0%*same*",
        ]
    )
    (result,) = json.loads((project.path / "o.json").read_text())["results"]
    (place,) = result["places"]
    assert (place["name"], place["role"]) == ("twin", "environment") and place["result"]["processes"] == 2
    assert place["change"]["old"] == pytest.approx(1.1, abs=0.002) == place["change"]["new"]


def test_an_environment_whose_framework_path_is_slower_fails_the_test(project: pytest.Pytester) -> None:
    slow = interpreter(project.path, "slowpython", FRAMEWORK_NS="1300")
    done = project.runpytest(f"--overhead-env=slow={slow}", "--overhead-fail-above=5", *REPLICATED)
    done.assert_outcomes(failed=1)
    sentences(done.stdout).fnmatch_lines(
        [
            "*::test_middleware: the framework path under slow regressed against this environment: "
            "overhead 10.0% -> 30.0% (+18.2%*), more than --overhead-fail-above=5%",
        ]
    )


PLUGIN_PLACES = """
from overheadbench.core.vocabulary import Role
from overheadbench.replicas.places import Place

def pytest_overheadbench_places(config):
    return [Place("container", Role.ENVIRONMENT, config.getoption("--slow-python"))]

def pytest_overheadbench_machine_info(config, machine_info):
    machine_info["accelerator"] = "none"

def pytest_addoption(parser):
    parser.addoption("--slow-python")
"""


def test_a_plugin_adds_a_place_and_machine_facts_through_the_hooks(project: pytest.Pytester) -> None:
    """No seam for a place kind: a container or another machine meant editing 15 files. A plugin's
    place is measured and gated as an environment is, and its machine facts are recorded."""
    conftest = project.path / "conftest.py"  # the fake clock's, and the plugin's hooks beside it
    conftest.write_text(conftest.read_text() + PLUGIN_PLACES)
    slow = interpreter(project.path, "slowpython", FRAMEWORK_NS="1300")
    done = project.runpytest(
        f"--slow-python={slow}", "--overhead", "--overhead-fail-above=5", "--overhead-json=o.json", *REPLICATED
    )
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["*::test_middleware: the framework path under container regressed*"])
    data = json.loads((project.path / "o.json").read_text())
    (place,) = data["results"][0]["places"]
    assert (place["name"], place["role"]) == ("container", "environment")
    assert data["environment"]["machine_info"]["accelerator"] == "none"


def test_each_of_several_environments_is_measured_and_named_by_what_differs(project: pytest.Pytester) -> None:
    slow = interpreter(project.path, "slowpython", FRAMEWORK_NS="1300")
    fast = interpreter(project.path, "fastpython", FRAMEWORK_NS="1050")
    project.makeini(f"[pytest]\noverhead_envs =\n    slow={slow}\n    {fast}\n")
    done = project.runpytest("--overhead", "--overhead-json=o.json", "-o", "overhead_processes=2")
    done.assert_outcomes(passed=1)  # no threshold: shown, not gated
    (result,) = json.loads((project.path / "o.json").read_text())["results"]
    slow_place, fast_place = result["places"]
    version = ".".join(map(str, sys.version_info[:3]))
    assert (slow_place["name"], fast_place["name"]) == ("slow", f"py{version}")  # nothing else differs
    assert slow_place["change"]["new"] == pytest.approx(1.3, abs=0.002)
    assert fast_place["change"]["new"] == pytest.approx(1.05, abs=0.002)
    assert "replica processes started in this session: 6" in done.stdout.str()  # 2 per environment


def test_a_test_that_does_not_collect_in_an_environment_fails_with_that_environments_error(
    project: pytest.Pytester,
) -> None:
    broken = interpreter(project.path, "brokenpython", FRAMEWORK_NS="not-a-number")
    done = project.runpytest(f"--overhead-env=broken={broken}", *REPLICATED)
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(["*test_middleware: the environment broken does not collect there:*", "*ValueError*"])


def test_a_pair_measured_in_this_process_only_is_not_compared(project: pytest.Pytester) -> None:
    done = project.runpytest(f"--overhead-env=twin={sys.executable}", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=1)
    done.stdout.fnmatch_lines(["*test_middleware: not compared: measured in this process only (processes=1)*"])


def not_python(folder: Path) -> str:
    path = folder / "notpython"
    path.write_text("#!/bin/sh\nexit 3\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("/nowhere/python", "*--overhead-env=/nowhere/python: not an executable file*"),
        ("{folder}/notpython", "*--overhead-env=*/notpython: cannot import pytest and overheadbench (*); install*"),
        ("twin=", "*--overhead-env=twin=: give an interpreter: ?NAME=?PYTHON (a path, or tox:ENV)*"),
        ("tox:py399", "*--overhead-env=tox:py399: tox *"),
    ],
)
def test_an_unusable_environment_is_a_usage_error_before_anything_runs(
    project: pytest.Pytester, spec: str, expected: str
) -> None:
    not_python(project.path)
    done = project.runpytest(f"--overhead-env={spec.format(folder=project.path)}")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines([expected])


def test_an_environment_with_another_overheadbench_build_is_refused_naming_both(project: pytest.Pytester) -> None:
    """A replica of another build failed a minute later on a message it could not read."""
    other = project.path / "other" / "overheadbench"
    shutil.copytree(Path(overheadbench.__file__).parent, other, ignore=shutil.ignore_patterns("__pycache__"))
    with (other / "replicas" / "messages.py").open("a") as messages:
        messages.write("\n# an older build: one line of its protocol differs\n")
    older = interpreter(project.path, "older", PYTHONPATH=str(other.parent))
    done = project.runpytest(f"--overhead-env={older}")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    ours = f"{overheadbench.__version__}, build {this_build()}"
    sentences(done.stderr).fnmatch_lines(
        [f"*--overhead-env=*/older: its overheadbench (*, build *) is not this session's ({ours})*"]
    )
    assert this_build() not in sentences(done.stderr).str().split("is not this")[0]


def test_a_name_given_twice_and_a_base_tree_beside_environments_are_usage_errors(project: pytest.Pytester) -> None:
    twice = project.runpytest(f"--overhead-env=a={sys.executable}", f"--overhead-env=a={sys.executable}")
    assert twice.ret == pytest.ExitCode.USAGE_ERROR
    twice.stderr.fnmatch_lines(["*--overhead-env=a=*: the name 'a' is given twice; name each once*"])
    both = project.runpytest(f"--overhead-env={sys.executable}", "--overhead-against=HEAD")
    assert both.ret == pytest.ExitCode.USAGE_ERROR
    both.stderr.fnmatch_lines(["*one session takes one of them*"])


def fake_tox(folder: Path, answer: str, code: int = 0) -> None:
    """A ``tox`` on PATH that answers ``tox config`` as tox 4 does."""
    bin_folder = folder / "bin"
    bin_folder.mkdir(exist_ok=True)
    tox = bin_folder / "tox"
    tox.write_text(f"#!/bin/sh\ncat <<'EOF'\n{answer}\nEOF\nexit {code}\n")
    tox.chmod(0o755)


def test_a_tox_environment_is_resolved_by_tox_and_must_exist(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{project.path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    fake_tox(project.path, f"[testenv:py313]\nenv_python = {project.path}/.tox/py313/bin/python")
    missing = project.runpytest("--overhead-env=tox:py313")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    made_first = "make it first with `tox run -e py313 --notest`"
    sentences(missing.stderr).fnmatch_lines(
        [f"*--overhead-env=tox:py313: tox has not made the environment 'py313' yet *; {made_first}*"]
    )
    fake_tox(project.path, f"[testenv:py313]\nenv_python = {sys.executable}")
    found = project.runpytest("--overhead-env=tox:py313", "--overhead-json=o.json", *REPLICATED)
    found.assert_outcomes(passed=1)
    (result,) = json.loads((project.path / "o.json").read_text())["results"]
    assert result["places"][0]["role"] == "environment" and result["places"][0]["change"] is not None
    fake_tox(project.path, "ROOT: HandledError| provided environments not found in configuration file:\npy399", 255)
    unknown = project.runpytest("--overhead-env=tox:py399")
    sentences(unknown.stderr).fnmatch_lines(["*--overhead-env=tox:py399: tox has no environment 'py399' here (py399)*"])


def test_an_environment_is_named_by_its_python_and_the_packages_that_differ() -> None:
    reference = Interpreter("/a/python", "3.11.7", {"httpx": "0.27.2", "numpy": "2.1.0", "idna": "3.7"})
    other = Interpreter("/b/python", "3.13.0", {"httpx": "0.28.1", "numpy": "2.1.0", "h11": "0.14.0"})
    assert derived_name(reference, other) == "py3.13.0, h11 0.14.0, httpx 0.28.1, idna -"
    assert package_differences(reference.packages, other.packages) == [
        "h11 - -> 0.14.0",
        "httpx 0.27.2 -> 0.28.1",
        "idna 3.7 -> -",
    ]


def test_runs_of_another_python_on_this_machine_differ_by_environment_not_machine() -> None:
    old = {
        "machine_info": {"python_version": "3.11.7"},
        "fingerprint": "Linux-CPython-3.11-64bit-2cpu-5d41402a",
        "distributions": {"httpx": "0.27.2", "langchain-core": "1.8.3"},
    }
    new = {
        "machine_info": {"python_version": "3.13.0"},
        "fingerprint": "Linux-CPython-3.13-64bit-2cpu-5d41402a",
        "distributions": {"httpx": "0.28.1", "langchain-core": "1.8.3"},
    }
    assert same_machine(old, new)
    assert differences(old, new) == ["python 3.11.7 -> 3.13.0", "httpx 0.27.2 -> 0.28.1"]
    assert not same_machine(old, {**new, "fingerprint": "Linux-CPython-3.13-64bit-16cpu-0000beef"})


def test_a_run_stored_under_another_python_of_this_machine_is_gated_as_another_environment(
    project: pytest.Pytester,
) -> None:
    from overheadbench.store.environment import fingerprint

    project.runpytest("--overhead-save=py399").assert_outcomes(passed=1)
    stored = project.path / "baselines" / fingerprint() / "0001_py399.json"
    data = json.loads(stored.read_text())
    system, _, _, *machine = data["environment"]["fingerprint"].split("-")
    data["environment"]["fingerprint"] = "-".join([system, "CPython", "3.99", *machine])
    data["environment"]["machine_info"]["python_version"] = "3.99.0"
    data["environment"]["distributions"]["langchain-core"] = "0.1.0"
    elsewhere = project.path / "py399.json"  # as a tox env or CI job leaves it: outside this machine's folder
    elsewhere.write_text(json.dumps(data))
    stored.unlink()
    gated = project.runpytest(f"--overhead-compare={elsewhere}", "--overhead-fail-above=5")
    gated.assert_outcomes(passed=1)
    version = ".".join(map(str, sys.version_info[:3]))
    warning = f"measured in another environment: python 3.99.0 -> {version}; langchain-core 0.1.0 -> -"
    gated.stdout.fnmatch_lines([f"WARNING: overhead compared with py399.json, {warning}*"])


TRANSPORT = """
import os
import pytest
from overheadbench.http.load import LatencyStats, Throughput

RATE = float(os.environ.get("RATE", "2000"))


def rows(rate, latency_ms=2.0):
    windows = tuple(rate * (1 + 0.02 * (-1) ** i) for i in range(10))
    latencies = tuple(int(latency_ms * 1e6 * (0.5 + i / 1000)) for i in range(1000))
    return Throughput(100, int(rate * 2), 0, 2.0, LatencyStats.from_ns(latencies), 1e-4, "",
                      server_cpu_s_per_request=3e-4, window_rates=windows, latency_ns=latencies)


@pytest.mark.transport(rps=100)
def test_gateway(transport):
    transport.record("h2c c=100", rows(RATE, latency_ms=2000 / RATE))
"""


def test_a_transport_test_runs_at_every_environment_and_a_lower_rate_there_fails(
    fake_clock_project: pytest.Pytester,
) -> None:
    fake_clock_project.makepyfile(test_gateway=TRANSPORT)
    same = interpreter(fake_clock_project.path, "samepython")
    slow = interpreter(fake_clock_project.path, "slowpython", RATE="1500")
    envs = (f"--overhead-env=same={same}", f"--overhead-env=slow={slow}")
    outputs = ("--overhead-json=o.json", "--overhead-md=o.md")
    done = fake_clock_project.runpytest(*envs, "--overhead-fail-above=5", *outputs)
    done.assert_outcomes(failed=1)
    done.stdout.fnmatch_lines(
        [
            "*test_gateway: h2c c=100 req/s under slow regressed against this environment: req/s 2,000/s -> 1,500/s (-25.0%*"
        ]
    )
    (figure, *_) = [
        f for f in json.loads((fake_clock_project.path / "o.json").read_text())["figures"] if f["metric"] == "rps"
    ]
    same_place, slow_place = figure["places"]
    assert (same_place["name"], same_place["change"]["new"]) == ("same", pytest.approx(2000))
    slow_change = slow_place["change"]
    assert (slow_change["old"], slow_change["new"], slow_change["df"]) == (pytest.approx(2000), pytest.approx(1500), 7)
    markdown = (fake_clock_project.path / "o.md").read_text()
    assert "## Transport under slow" in markdown and "| `test_gateway.py::test_gateway` | h2c c=100 req/s |" in markdown
    assert main(["compare", str(fake_clock_project.path / "o.json"), "--fail-above", "5"]) == 1


def test_a_label_names_the_projects_own_dependencies_first_then_the_interpreter(tmp_path: Path) -> None:
    """A release of the framework under test was the sixth of 16 WARNING lines and absent from the label."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "agent"\ndependencies = ["Pydantic_AI>=1.0", "httpx"]\n'
        "[project.optional-dependencies]\nllm = [\"genai-prices ; python_version >= '3.10'\"]\n"
    )
    (tmp_path / "requirements-dev.txt").write_text("# tools\ntenacity==9.0\n")
    project = project_dependencies(tmp_path)
    assert project == {"pydantic-ai", "httpx", "genai-prices", "tenacity"}
    changed = {f"lib{index}": "2" for index in range(13)} | {"pydantic_ai": "1.2.0", "genai-prices": "0.2.4"}
    reference = Interpreter("/a", "3.12.1", {f"lib{index}": "1" for index in range(13)} | {"pydantic_ai": "1.1.0"})
    other = Interpreter("/b", "3.12.1", changed)
    assert (
        derived_name(reference, other, project)
        == "genai-prices 0.2.4, pydantic_ai 1.2.0, py3.12.1, lib0 2, 12 more packages"
    )
    assert derived_name(reference, other) == "py3.12.1, genai-prices 0.2.4, lib0 2, lib1 2, 12 more packages"
    old = {
        "machine_info": {"python_version": "3.12.1"},
        "distributions": reference.packages,
        "project_dependencies": sorted(project),
    }
    new = {**old, "distributions": other.packages}
    assert differences_heading(old, new) == (
        "measured in different environments: genai-prices - -> 0.2.4; pydantic_ai 1.1.0 -> 1.2.0; lib0 1 -> 2; "
        "lib1 1 -> 2; lib10 1 -> 2; and 10 more packages"
    )
    assert differences_heading(old, old) == ""
