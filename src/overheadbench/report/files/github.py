"""GitHub Actions: an ``::error`` annotation per failing pair, and the markdown report in the job's summary.

Under Actions (``GITHUB_ACTIONS=true``) a failing pair's message is printed as a workflow
command, so it shows on the pull request's diff at the test's line, and the markdown report
is appended to the file ``GITHUB_STEP_SUMMARY`` names (appended: other steps write there too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Failure:
    """A failing measured test: its file, line (1-based), message, and kind (a pair's
    ``overhead`` or a ``transport`` test's figures), which the annotation's title names."""

    path: str
    line: int
    message: str
    kind: str
    test: str
    """The test's name within its file, parameters included (``test_x[c=64-retry]``): the
    parametrized cases of one function share its line, and only this tells their annotations apart."""


def in_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def annotation(path: str, line: int, title: str, message: str) -> str:
    """``::error file=...,line=...,title=...::message``, escaped as the workflow-command syntax wants."""
    properties = ",".join(
        f"{key}={_escape(value, property=True)}"
        for key, value in (("file", path), ("line", str(line)), ("title", title))
    )
    return f"::error {properties}::{_escape(message)}"


def is_summary(path: Path, env: Mapping[str, str]) -> bool:
    """Whether ``path`` is the job summary file: ``--overhead-md="$GITHUB_STEP_SUMMARY"`` replaced
    what earlier steps wrote there, and the report then appeared twice (appended as well)."""
    target = env.get("GITHUB_STEP_SUMMARY")
    return target is not None and target != "" and path.resolve() == Path(target).resolve()


def append_summary(env: Mapping[str, str], markdown: str) -> Path | None:
    """Append ``markdown`` to the job summary file, if the job has one; the file's path."""
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as summary:
        summary.write(markdown + "\n")
    return Path(target)


def _escape(text: str, property: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property else text
