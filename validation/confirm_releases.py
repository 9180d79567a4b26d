"""``history --confirm`` over a real library's releases: two regressions in a range of six unmeasured
commits, both named (issue 69).

    python validation/confirm_releases.py --out DIR --wheels FOLDER    # ~10 min, alone

``FOLDER`` holds tenacity's wheels 8.2.1 to 9.1.2 (``pip download --no-deps tenacity==V``). A git
project vendors tenacity (``vendor/``, on ``pythonpath``), one release a commit, and times a
``@retry`` call against the bare function. Measured here outside pytest (5,000 calls, best of 7, 3
rounds): 8.2.3 -> 8.3.0 +42%, 8.4.1 -> 8.4.2 +68%, the releases between them within a few percent, and
8.4.0 does not import (``tenacity.asyncio`` missing from its wheel). Only 8.2.1, 8.2.2, 9.0.0 and 9.1.2
are measured (autosaved, default profile); the six releases between, 8.2.3 to 8.5.0, are not. Then
``overheadbench history --confirm``: the step between 8.2.2 and 9.0.0 must be confirmed and bisected
to 8.3.0 and then 8.4.2, with 8.4.0 skipped. Writes DIR/confirm.json and prints the history.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import harness

RELEASES = ("8.2.1", "8.2.2", "8.2.3", "8.3.0", "8.4.0", "8.4.1", "8.4.2", "8.5.0", "9.0.0", "9.1.2")
MEASURED = ("8.2.1", "8.2.2", "9.0.0", "9.1.2")
TRUTH = ("8.3.0", "8.4.2")
"""The releases that slowed the call (measured outside pytest, see the module)."""
PAIR = """
import pytest
from tenacity import retry, stop_after_attempt, wait_none


def bare(x):
    return x + 1


framed = retry(stop=stop_after_attempt(3), wait=wait_none(), reraise=True)(bare)


@pytest.mark.overhead(max="1000x")
def test_retry_call(overhead):
    overhead.compare(lambda: bare(1), lambda: framed(1))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--wheels", type=Path, required=True, help="tenacity's wheels, 8.2.1 to 9.1.2")
    args = parser.parse_args()
    folder = harness.git_project(
        args.out, {"test_retry.py": PAIR, "pytest.ini": "[pytest]\npythonpath = vendor\n", ".gitignore": "baselines/\n"}
    )
    shas = {}
    for release in RELEASES:
        (wheel,) = args.wheels.glob(f"tenacity-{release}-*.whl")
        shutil.rmtree(folder / "vendor", ignore_errors=True)
        with zipfile.ZipFile(wheel) as unpacked:
            unpacked.extractall(folder / "vendor", [n for n in unpacked.namelist() if n.startswith("tenacity/")])
        harness.git(folder, "add", "-A")
        harness.git(folder, "commit", "-qm", f"tenacity {release}")
        shas[release] = harness.git(folder, "rev-parse", "HEAD").strip()
    env = {"OVERHEADBENCH_BRANCH": "main"}
    for release in MEASURED:
        harness.git(folder, "checkout", "-q", "--detach", shas[release])
        ran = harness.session(
            folder,
            args.out / f"{release}.json",
            "--overhead-autosave",
            "-p",
            "no:randomly",
            env=env,
            paths=[harness.SRC],
        )
        print(f"tenacity {release}: ratio {ran.results[0]['ratio']:.1f}", flush=True)
    harness.git(folder, "checkout", "-q", "main")
    history = subprocess.run(
        [
            sys.executable,
            "-m",
            "overheadbench.cli",
            "history",
            "--confirm",
            "--json",
            str(args.out / "history.json"),
            "--",
            "-p",
            "no:randomly",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(harness.SRC)},
    )
    named = {release: sha for release, sha in shas.items()}
    lines = history.stdout.splitlines()
    first = [re.findall(r"[0-9a-f]{40}", line) for line in lines if "first regressed commit between them" in line]
    then = [re.findall(r"[0-9a-f]{40}", line) for line in lines if "then regressed again" in line]
    release_of = {sha: release for release, sha in named.items()}
    found = [release_of.get(s[-1], s[-1]) for s in (*first, *then) if s]
    summary = {
        "named": found,
        "truth": list(TRUTH),
        "met": found == list(TRUTH),
        "skipped": [line.strip() for line in lines if "skipped" in line],
        "exit": history.returncode,
        "history": history.stdout[-4000:],
        "errors": history.stderr[-2000:],
    }
    (args.out / "confirm.json").write_text(json.dumps(summary, indent=1))
    print(history.stdout[-3000:])
    print(json.dumps({k: v for k, v in summary.items() if k not in ("history", "errors")}))


if __name__ == "__main__":
    main()
