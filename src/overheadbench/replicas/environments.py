"""The other interpreters of ``--overhead-env=[NAME=]PYTHON``: this tree measured under another
Python or another virtual environment (the dependency versions under test), interleaved with
the session's own, and how each is named.

Why in one session: "did upgrading Python, or this dependency, change our framework's
overhead?" asked of two separate runs mixes the answer with how the machine moved between
them (a pair's figure moves several percent between sessions here); replicas of both
environments sampled in turn share the session's state.

Everything that can be wrong is found when the session starts (exit 4 before anything is
measured): a path that is not an interpreter, one that cannot import pytest and overheadbench, a
duplicate name, ``tox:ENV`` without tox or without such an environment, or one tox has not made.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import build

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency there
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]  # installed there with pytest

PROBE_TIMEOUT_S = 120.0
PROBE = (
    "import json, pathlib, platform, runpy, sys, pytest, overheadbench; from importlib import metadata; "
    "print(json.dumps({'python': platform.python_version(), 'executable': sys.executable, "
    "'overheadbench': overheadbench.__version__, "
    f"'build': runpy.run_path({build.__file__!r})['build_of'](pathlib.Path(overheadbench.__file__).parent), "
    "'packages': {d.metadata['Name'].lower(): d.version for d in metadata.distributions() if d.metadata['Name']}}))"
)
"""What an interpreter is asked: its version, its overheadbench's version and build, and every
installed distribution's (importing pytest and overheadbench on the way: a replica needs both)."""
SHOWN_DIFFERENCES = 3
"""Packages named in an environment's derived name; more are counted."""
TOOLING = frozenset({"pip", "setuptools", "wheel", "distribute"})
"""Installers every virtual environment brings at its own versions: never what the measured code
runs on, so never named as a difference."""


class EnvError(Exception):
    """An ``--overhead-env`` cannot be used; the message names the option, the cause and the fix."""


@dataclass(frozen=True)
class Interpreter:
    """An interpreter as it answered: its Python version and installed distributions."""

    python: str
    version: str
    packages: dict[str, str]


@dataclass(frozen=True)
class Environment:
    """One ``--overhead-env``: its name in reports and the interpreter its replicas run."""

    name: str
    interpreter: Interpreter

    @property
    def python(self) -> str:
        return self.interpreter.python


def probe(python: str, option: str, directory: Path) -> Interpreter:
    """Ask ``python`` (an executable file; relative to ``directory``, where the session was
    started) what it is; it must import pytest and overheadbench. ``option``: the option as
    given, which every error names. A virtual environment's interpreter is kept as its path,
    not resolved: it is a link, and its environment is found from where it is called."""
    path = Path(os.path.abspath(directory / Path(python).expanduser()))
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise EnvError(f"{option}: not an executable file")
    try:
        done = subprocess.run(
            [str(path), "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            cwd=tempfile.gettempdir(),
            check=False,
        )
    except OSError as exc:
        raise EnvError(f"{option}: does not run ({exc.strerror})") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise EnvError(
            f"{option}: cannot import pytest and overheadbench ({last}); install the project and "
            f"overheadbench in that environment"
        )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    if answer["build"] != build.this_build():
        ours = f"{metadata.version('overheadbench')}, build {build.this_build()}"
        raise EnvError(
            f"{option}: its overheadbench ({answer['overheadbench']}, build {answer['build']}) is not this "
            f"session's ({ours}): a replica of another build cannot answer this one; install this "
            f"overheadbench in that environment"
        )
    return Interpreter(str(path), str(answer["python"]), dict(answer["packages"]))


def this_interpreter() -> Interpreter:
    """The session's own interpreter, as :func:`probe` would describe it."""
    return Interpreter(sys.executable, platform.python_version(), installed())


def installed() -> dict[str, str]:
    """Every distribution installed for this interpreter, by its lower-case name: what the
    measured code ran on (the project's own dependencies, not only the plugin's)."""
    return {d.metadata["Name"].lower(): d.version for d in metadata.distributions() if d.metadata["Name"]}


def normalized(name: str) -> str:
    """A distribution's name as the index compares them (PEP 503): ``Pydantic_AI`` is ``pydantic-ai``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_dependencies(root: Path) -> frozenset[str]:
    """The project's own dependencies (normalized names): ``pyproject.toml``'s ``[project]``
    dependencies and optional ones, and ``requirements*.txt`` at ``root``. A label names these first:
    a release of the framework under test matters more than one of ``cffi``."""
    found: list[str] = []
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError, UnicodeDecodeError):
        project = {}
    found += [str(item) for item in project.get("dependencies", []) or []]
    found += [str(item) for extra in (project.get("optional-dependencies", {}) or {}).values() for item in extra]
    for path in sorted(root.glob("requirements*.txt")):
        try:
            found += path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
    names = (re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line) for line in found)
    return frozenset(normalized(match.group(1)) for match in names if match)


def changed_packages(
    old: dict[str, str], new: dict[str, str], first: frozenset[str] = frozenset()
) -> list[tuple[str, str, str]]:
    """The distributions whose versions differ (:data:`TOOLING` aside): (name, old version, new
    version), ``-`` where one side does not have it; those named in ``first`` (the project's own
    dependencies) first."""
    names = sorted((set(old) | set(new)) - TOOLING, key=lambda name: (normalized(name) not in first, name))
    return [(name, old.get(name, "-"), new.get(name, "-")) for name in names if old.get(name) != new.get(name)]


def package_differences(old: dict[str, str], new: dict[str, str], first: frozenset[str] = frozenset()) -> list[str]:
    """The distributions whose versions differ, as ``httpx 0.27.2 -> 0.28.1`` (``first``'s first)."""
    return [f"{name} {before} -> {after}" for name, before, after in changed_packages(old, new, first)]


def derived_name(reference: Interpreter, other: Interpreter, project: frozenset[str] = frozenset()) -> str:
    """An environment's name when the user gave none: the project's own dependencies whose versions
    differ from the session's, then its Python version, then up to ``SHOWN_DIFFERENCES`` other
    packages that differ (``pydantic-ai 1.2.0, py3.13, httpx 0.28.1, 12 more packages``)."""
    changed = changed_packages(reference.packages, other.packages, project)
    own = [f"{name} {after}" for name, _, after in changed if normalized(name) in project]
    rest = [f"{name} {after}" for name, _, after in changed if normalized(name) not in project]
    shown = rest[: max(0, SHOWN_DIFFERENCES - len(own))]
    more = [f"{len(rest) - len(shown)} more packages"] if len(rest) > len(shown) else []
    return ", ".join([*own, f"py{other.version}", *shown, *more])


def resolve_environments(
    specs: list[str], directory: Path, rootdir: Path, reference: Interpreter | None = None
) -> list[Environment]:
    """Every ``--overhead-env`` (and ``overhead_envs`` line) checked and named; a relative path is
    the invocation ``directory``'s, a tox environment is ``rootdir``'s tox's. Raises
    :class:`EnvError` saying what is wrong."""
    found: list[Environment] = []
    reference = reference or this_interpreter()
    for spec in specs:
        option = f"--overhead-env={spec}"
        name, _, python = spec.partition("=") if "=" in spec else ("", "", spec)
        if not python.strip():
            raise EnvError(f"{option}: give an interpreter: [NAME=]PYTHON (a path, or tox:ENV)")
        tox_env = python.removeprefix("tox:") if python.startswith("tox:") else ""
        if tox_env:
            python = tox_python(tox_env, rootdir, option)
        interpreter = probe(python, option, directory)
        derived = derived_name(reference, interpreter, project_dependencies(rootdir))
        environment = Environment(name.strip() or tox_env or derived, interpreter)
        if any(other.name == environment.name for other in found):
            raise EnvError(f"{option}: the name {environment.name!r} is given twice; name each once")
        found.append(environment)
    return found


def tox_python(env: str, rootdir: Path, option: str) -> str:
    """A tox environment's interpreter, as tox itself resolves it (``tox config -k env_python``),
    which must exist already: tox makes environments, this plugin does not."""
    tox = shutil.which("tox")
    command = [tox] if tox else [sys.executable, "-m", "tox"]
    try:
        done = subprocess.run(
            [*command, "config", "-e", env, "-k", "env_python", "-qq"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            cwd=rootdir,
            check=False,
        )
    except OSError:
        done = None
    if done is None or (not tox and "No module named tox" in done.stderr):
        raise EnvError(f"{option}: tox is not installed here (pip install tox), or give the interpreter's path")
    line = next((x for x in done.stdout.splitlines() if x.strip().startswith("env_python")), "")
    if done.returncode != 0 or not line:
        why = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise EnvError(f"{option}: tox has no environment {env!r} here ({why[-1] if why else 'no answer'})")
    python = line.partition("=")[2].strip()
    if not Path(python).is_file():
        raise EnvError(
            f"{option}: tox has not made the environment {env!r} yet ({python} is missing); make it first with "
            f"`tox run -e {env} --notest`"
        )
    return python
