"""The CI templates (docs/ci/) and this repository's release workflow: what they install, what
they may do, and their commands run as written against a scratch repository.

A template that parsed but did not run reached users: its install line failed on an index
without the package, its job could write to the pull request while running the pull request's
code, and a report it appended replaced the summary's earlier lines. Here the gate's lines run in
a repository with a base branch and a slower head, under a pre-filled job summary, and the
comment job's line runs against a stand-in ``gh``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
TEMPLATES = sorted((ROOT / "docs" / "ci").glob("*.yml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
INSTALL = "python -m pip install "
"""How a template's install lines begin: skipped when its lines run here (this interpreter has
overheadbench), checked instead."""


def template_steps(path: Path, job: str | None = None) -> list[list[str]]:
    """The shell lines of a CI template, step by step: each GitHub step's ``run``, each GitLab job's
    ``script`` as one step (of ``job`` only, if named)."""
    document = yaml.safe_load(path.read_text())
    steps: list[list[str]] = []
    for name, found in (document.get("jobs") or {}).items():
        if job in (None, name):
            steps += [step["run"].splitlines() for step in found["steps"] if "run" in step]
    for name, found in document.items():
        if isinstance(found, dict) and "script" in found and job in (None, name):
            steps.append([line for item in found["script"] for line in item.splitlines()])
    return [[line.strip() for line in lines if line.strip()] for lines in steps]


def template_commands(path: Path, job: str | None = None) -> list[str]:
    """Every shell line of a CI template (of ``job`` only, if named)."""
    return [line for lines in template_steps(path, job) for line in lines]


def template_variables(path: Path) -> dict[str, str]:
    """What a template asks the user to fill in once: its workflow's ``env`` or its top-level ``variables``."""
    document = yaml.safe_load(path.read_text())
    return {key: str(value) for key, value in (document.get("env") or document.get("variables") or {}).items()}


MEASURING_JOBS = {"github-workflow.yml": ("overhead", "history"), "gitlab-ci.yml": ("overhead", "overhead-history")}
"""Each template's jobs that install and measure: the pull request's gate, and main's history."""


def test_the_ci_templates_exist() -> None:
    assert {path.name for path in TEMPLATES} == {"github-workflow.yml", "gitlab-ci.yml"}


@pytest.mark.parametrize("template", TEMPLATES, ids=[path.name for path in TEMPLATES])
def test_a_ci_template_installs_a_pinned_overheadbench_and_no_project(template: Path) -> None:
    text = template.read_text()
    for job in MEASURING_JOBS[template.name]:
        installs = [line for line in template_commands(template, job) if "pip install" in line]
        assert installs == [f'{INSTALL}"$OVERHEADBENCH" $DEPENDENCIES'], job
    variables = template_variables(template)  # each a variable the user fills in once, said at the top
    assert re.fullmatch(r"overheadbench==\d+\.\d+\.\d+", variables["OVERHEADBENCH"])  # pinned
    assert variables["DEPENDENCIES"] == "-r requirements.txt" and variables["OVERHEAD_TESTS"] == "tests"
    assert text.count("OVERHEADBENCH: overheadbench==") == 1
    assert "python -m build" in text and "git+https://" in text  # what to name until it is on PyPI
    assert "fetch-depth: 0" in text or 'GIT_DEPTH: "0"' in text
    assert "pythonpath" in text  # what makes each tree import its own source, said where the user reads it


@pytest.mark.parametrize("dependencies", ["", "-r requirements.txt"])
def test_a_templates_install_line_names_a_requirement_with_or_without_dependencies(
    tmp_path: Path, dependencies: str
) -> None:
    """An empty ``DEPENDENCIES`` once made a line of its own, ``pip install`` with nothing, which pip
    refuses (exit 1): the line runs here against a stand-in ``python`` that records what pip was given."""
    stand_in = tmp_path / "python"
    stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS"\n')
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IEXEC)
    for template in TEMPLATES:
        (line,) = {line for line in template_commands(template) if line.startswith(INSTALL)}
        environ = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", "ARGS": str(tmp_path / "args")}
        environ |= {"OVERHEADBENCH": "overheadbench==0.2.0", "DEPENDENCIES": dependencies}
        subprocess.run(["sh", "-c", line], env=environ, check=True)
        given = (tmp_path / "args").read_text().splitlines()
        assert given == ["-m", "pip", "install", "overheadbench==0.2.0", *dependencies.split()], template.name


def test_the_github_template_gives_the_measuring_job_no_write_access() -> None:
    (template,) = [path for path in TEMPLATES if path.name == "github-workflow.yml"]
    document = yaml.safe_load(template.read_text())
    assert document["permissions"] == {"contents": "read"}
    measuring = document["jobs"]["overhead"]
    assert "permissions" not in measuring  # the workflow's read-only token
    (checkout,) = [step for step in measuring["steps"] if step.get("uses", "").startswith("actions/checkout")]
    assert checkout["with"]["persist-credentials"] is False
    assert measuring["if"] == "github.event_name == 'pull_request'"
    history = document["jobs"]["history"]  # main's own code, after the merge: it pushes to the data branch
    assert history["if"] == "github.event_name == 'push'" and history["permissions"] == {"contents": "write"}
    comment = document["jobs"]["comment"]
    assert comment["permissions"] == {"pull-requests": "write"} and comment["needs"] == "overhead"
    assert """fromJSON('["success", "failure"]'), needs.overhead.result""" in comment["if"]  # not after a cancel
    assert not [step for step in comment["steps"] if step.get("uses", "").startswith("actions/checkout")]
    assert measuring["timeout-minutes"] and history["timeout-minutes"]  # a job is bounded too
    assert measuring["concurrency"]["cancel-in-progress"] is True  # a new push cancels the superseded run
    assert history["concurrency"]["cancel-in-progress"] is False  # never a push to the data branch cut short


def test_the_gitlab_template_bounds_its_jobs_and_lets_a_new_push_cancel_the_old() -> None:
    (template,) = [path for path in TEMPLATES if path.name == "gitlab-ci.yml"]
    document = yaml.safe_load(template.read_text())
    assert document["overhead"]["interruptible"] is True and document["overhead"]["timeout"]
    assert document["overhead-history"]["timeout"] and "interruptible" not in document["overhead-history"]


PYPROJECT = """
[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
overhead_counter = "bytecode"
"""
APP = """
def handle():
    return sum(range(4))


def layers():
    for _ in range({work}):
        handle()
    return handle()


def steady():
    return handle()
"""
TESTS = """
import pytest

from app import handle, layers, steady


@pytest.mark.overhead(max="100x", mode="count")
def test_layers(overhead):
    '''The layers around the handler.'''
    overhead.compare(handle, layers)


@pytest.mark.overhead(max="100x", mode="count")
def test_steady(overhead):
    '''A wrapper that does not change.'''
    overhead.compare(handle, steady)
"""
GITHUB_EXPRESSIONS = {
    "github.sha": "0123abc",
    "github.server_url": "https://github.com",
    "github.run_id": "99",
    "github.base_ref": "main",
    "github.event.pull_request.number": "7",
    "github.repository": "owner/project",
}


def _git(folder: Path, *args: str) -> None:
    quiet = ["-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *quiet, *args], cwd=folder, check=True, capture_output=True)


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A project whose ``main`` (on its ``origin``) has ``layers`` calling the handler 3 times and
    whose checked-out head (branch ``feature``) calls it 6 times: a regression in count mode."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "requirements.txt").write_text("")
    (project / "tests" / "test_app.py").write_text(TESTS)
    (project / "src" / "app.py").write_text(APP.format(work=3))
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    _git(tmp_path, "clone", "-q", "--bare", str(project), "origin.git")
    _git(project, "remote", "add", "origin", str(tmp_path / "origin.git"))
    _git(project, "fetch", "-q", "origin")  # what actions/checkout's fetch-depth: 0 leaves
    _git(project, "checkout", "-q", "-b", "feature")
    (project / "src" / "app.py").write_text(APP.format(work=6))
    _git(project, "commit", "-q", "-am", "slower layers")
    return project


def _run(lines: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The lines as the runner's shell runs a step (bash, stop at the first failure), ``python``
    being this interpreter (which has overheadbench: the install lines are checked, not run)."""
    script = "\n".join(line for line in lines if not line.startswith(INSTALL))
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


GH = """#!/bin/sh
printf "%s\\n" "$*" >> {folder}/gh-calls
case "$1 $2" in
  "api -X") cp body.md {folder}/edited.md ;;
  "api "*) cat {folder}/made 2>/dev/null || true ;;
  "pr comment") echo 101 > {folder}/made; cp body.md {folder}/made.md ;;
esac
"""
"""GitHub's CLI as the comment job uses it: ``gh api COMMENTS --jq ...`` prints the ids of the comments
it made (the filter's output), ``gh api -X PATCH`` edits one, ``gh pr comment`` makes one (id 101)."""


def _environment(project: Path, summary: Path, github: bool) -> dict[str, str]:
    """The runner's environment: GitHub's job summary and ``GITHUB_ACTIONS``, or GitLab's target branch."""
    bin_folder = project.parent / "bin"
    bin_folder.mkdir(exist_ok=True)
    gh = bin_folder / "gh"  # stands in for GitHub's CLI: records each call; the comments API lists what it made
    gh.write_text(GH.format(folder=shlex.quote(str(project.parent))))
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "PYTEST_", "CI_"))}
    python = Path(sys.executable).parent  # a virtual environment's folder has its `python`
    assert (python / "python").exists(), "the tests run from a virtual environment (.ci/run makes one)"
    env["PATH"] = os.pathsep.join([str(python), str(bin_folder), env["PATH"]])
    if github:
        return env | {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    return env | {"GITLAB_CI": "true", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}


@pytest.mark.parametrize("template", TEMPLATES, ids=[path.name for path in TEMPLATES])
def test_a_templates_commands_gate_a_pull_request_as_written(template: Path, pull_request: Path) -> None:
    """The acceptance of issue 47: the summary's earlier line survives, the report is there once,
    it opens with the gate, and the regressed test is named first and shows no tick."""
    summary = pull_request.parent / "summary.md"
    summary.write_text("Tests: 212 passed\n")
    github = template.name == "github-workflow.yml"
    env = _environment(pull_request, summary, github) | template_variables(template)
    steps = [_run(_substituted(lines), pull_request, env) for lines in template_steps(template, job="overhead")]
    (gated,) = [step for step in steps if "test_layers" in step.stdout]
    assert gated.returncode == 1, gated.stdout[-3000:] + gated.stderr[-3000:]  # the regressed test failed the job
    assert "regressed" in gated.stdout and "1 failed, 1 passed" in gated.stdout  # the test path: tests/ only
    assert [step.returncode for step in steps if step is not gated] == [0] * (len(steps) - 1)  # the later steps ran
    assert (pull_request / "overhead.html").is_file()
    report = (pull_request / "overhead.md").read_text()
    assert report.startswith(
        "# Overhead report\n\n## Gate\n\n**❌ 1 regressed · ⚠ 0 unknown · ✅ 0 improved · ✅ 1 same**"
    )
    assert report.index("test_layers") < report.index("test_steady")
    pairs = [line for line in report.splitlines() if line.startswith("| `tests/test_app.py::test_layers`")]
    assert pairs and not [line for line in pairs if "✅" in line], pairs
    assert (pull_request / "overhead.json").is_file()
    written = summary.read_text()
    if not github:
        assert written == "Tests: 212 passed\n"  # GitLab has no job summary: the artifact is the report
        return
    assert written == f"Tests: 212 passed\n{report}\n"  # appended once, after what was there
    for _ in range(2):  # one comment, made at the first push and edited in place at the next
        commented = _run(_substituted(template_commands(template, job="comment")), pull_request, env)
        assert commented.returncode == 0, commented.stderr
    calls = (pull_request.parent / "gh-calls").read_text().splitlines()
    assert [call.split()[:2] for call in calls] == [
        ["api", "repos/owner/project/issues/7/comments"],
        ["pr", "comment"],
    ] + [
        ["api", "repos/owner/project/issues/7/comments"],
        ["api", "-X"],
    ]
    assert calls[3].startswith("api -X PATCH repos/owner/project/issues/comments/101 -F body=@body.md")
    body = (pull_request.parent / "edited.md").read_text()
    assert body.startswith("<!-- overheadbench -->\n# Overhead report\n\n## Gate\n")  # the gate first
    assert body.index("test_layers") < body.index("<details>") and "</details>" in body  # the rest folded
    assert "`overhead.html` in the [run's overhead artifact](https://github.com/owner/project/actions/runs/99" in body


def _substituted(lines: list[str]) -> list[str]:
    """The lines with the workflow's ``${{ ... }}`` expressions as GitHub fills them for pull request 7."""
    for expression, value in GITHUB_EXPRESSIONS.items():
        lines = [line.replace("${{ " + expression + " }}", value) for line in lines]
    assert not [line for line in lines if "${{" in line], lines
    return lines


@pytest.mark.parametrize("template", TEMPLATES, ids=[path.name for path in TEMPLATES])
def test_a_templates_history_job_keeps_mains_runs_on_a_data_branch_and_reads_them(
    template: Path, pull_request: Path
) -> None:
    """Two pushes to main, the second one slower: each run lands on ``overheadbench-runs`` in the
    origin, and the history of both is in the job summary (GitHub) or its report (GitLab)."""
    github = template.name == "github-workflow.yml"
    _git(pull_request, "checkout", "-q", "main")
    summary = pull_request.parent / "summary.md"
    origin = pull_request.parent / "origin.git"
    env = _environment(pull_request, summary, github) | template_variables(template)  # GitLab pushes to its
    # https URL: here, the origin
    env |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.{origin}.insteadOf"}
    env |= {"GIT_CONFIG_VALUE_0": "https://oauth2:token@gitlab.example.com/owner/project.git"}
    env |= {
        "OVERHEADBENCH_PUSH_TOKEN": "token",
        "CI_SERVER_HOST": "gitlab.example.com",
        "CI_PROJECT_PATH": "owner/project",
        "CI_COMMIT_BRANCH": "main",
    }
    lines = _substituted(template_commands(template, job=MEASURING_JOBS[template.name][1]))
    for push in range(2):
        if push:
            (pull_request / "src" / "app.py").write_text(APP.format(work=6))
            _git(pull_request, "commit", "-q", "-am", "slower layers")
        if (pull_request / "runs").exists():  # each push is a fresh clone
            _git(pull_request, "worktree", "remove", "--force", "runs")
        done = _run(lines, pull_request, env | {"CI_COMMIT_SHA": f"push{push}"})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    kept = subprocess.run(
        ["git", "-C", str(origin), "log", "--format=%s", "--name-only", "overheadbench-runs"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert kept.count("run of ") == 2 and kept.count(".json") == 2, kept
    report = summary.read_text() if github else (pull_request / "history.txt").read_text()
    assert "overheadbench history: 2 runs (1 linked) of machine " in report  # the second measured the first beside it
    assert json.loads((pull_request / "history.json").read_text())["runs"] == 2
    page = (pull_request / ("site" if github else "public") / "index.html").read_text()  # and its page, for Pages
    assert page.count('<figure id="trend-') == 2 and "2 runs (1 linked) in git order" in page


def test_the_release_workflow_builds_checks_and_publishes_by_trusted_publishing() -> None:
    document = yaml.safe_load(RELEASE.read_text())
    assert document[True] == {"push": {"tags": ["v*"]}}  # YAML reads the key `on` as true
    assert document["permissions"] == {"contents": "read"}
    jobs = document["jobs"]
    assert jobs["build"]["needs"] == "test" and jobs["publish"]["needs"] == "build"
    assert [name for name, job in jobs.items() if "permissions" in job] == ["publish"]
    assert jobs["publish"]["permissions"] == {"id-token": "write"} and jobs["publish"]["environment"] == "pypi"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in jobs["publish"]["steps"])
    built = template_commands(RELEASE, job="build")
    assert "python -m build" in built and "python -m twine check --strict dist/*" in built
    assert template_commands(RELEASE, job="test") == ["bash .ci/run"]


@pytest.mark.parametrize(("tag", "status"), [("v1.2.3", 0), ("v1.2.4", 1)])
def test_the_release_refuses_a_tag_that_is_not_the_version_built(tmp_path: Path, tag: str, status: int) -> None:
    (check,) = [line for line in template_commands(RELEASE, job="build") if line.startswith("test -f")]
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "overheadbench-1.2.3-py3-none-any.whl").write_bytes(b"")
    done = subprocess.run(
        ["bash", "-c", check], cwd=tmp_path, env={**os.environ, "GITHUB_REF_NAME": tag}, capture_output=True, text=True
    )
    assert done.returncode == status
    assert ("is not the version built" in done.stdout) == bool(status)
