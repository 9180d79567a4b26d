"""A counter that cannot see a change says so (issue 68): count mode against a head that adds C work.

    python validation/count_unseen.py --out DIR --sessions 3            # ~1 min a session, run alone

A project in a git repository whose framework path serialises a message (``json.dumps``); the head
adds ``json.dumps`` of a 100-key dict per call, work done in C, which the bytecode counter does not
see: both trees run the very same bytecode, the head's dict is bigger. Each session runs ``pytest --overhead-against=HEAD~1 --overhead-fail-above=5`` on a count-mode
pair, with the bytecode counter and with callgrind (``--overhead-counter``), and reads the change's
outcome (the gate's finding) and its time check (``timed``) from the run. The promise: bytecode reads
the change unknown with its reason, callgrind reads it regressed, every session; identical trees
(``--overhead-against=HEAD``) read same with both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import harness

PAIR = """
import json

import pytest
from costs import EXTRA_KEYS

MESSAGE = {"role": "user", "content": "hello", "tools": ["search", "fetch"]}
EXTRA = {f"key{i}": i for i in range(EXTRA_KEYS)}


def bare():
    return json.dumps(MESSAGE)


def framework():
    total = 0
    for i in range(200):  # the framework's own Python: most of its bytecode
        total += i
    json.dumps(EXTRA)  # the same bytecode in both trees; the head's dict has 100 keys: C work
    return json.dumps(MESSAGE), total


@pytest.mark.overhead(max="100x", mode="count")
def test_counted(overhead):
    overhead.compare(bare, framework)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    harness.session_options(parser, sessions=3, busy=0)
    args = parser.parse_args()
    folder = harness.git_project(args.out, {"test_counted.py": PAIR})
    for subject, keys in (("base", 0), ("head: json.dumps of a 100-key dict per call", 100)):
        (folder / "costs.py").write_text(f"EXTRA_KEYS = {keys}\n")
        harness.git(folder, "add", "-A")
        harness.git(folder, "commit", "-qm", subject)
    rows = []
    with harness.busy_loops(args.busy):
        for number in range(args.sessions):
            for counter in ("bytecode", "callgrind"):
                for against in ("HEAD~1", "HEAD"):
                    out = args.out / f"{counter}-{against.replace('~', '-')}-{number}.json"
                    gate = (f"--overhead-against={against}", "--overhead-fail-above=5", f"--overhead-counter={counter}")
                    ran = harness.session(folder, out, *gate, python=args.python, paths=[harness.SRC])
                    (result,) = ran.results
                    (place,) = result["places"]
                    change = place["change"]
                    rows.append((number, counter, against, result["outcome"], change["timed"], ran.exit))
                    print(f"session {number} {counter} against {against}: {result['outcome']}, timed {change['timed']}")
    (args.out / "rows.json").write_text(json.dumps(rows, indent=1))
    print("| session | counter | against | outcome | timing's change (95% CI) | exit |")
    print("|---|---|---|---|---|---|")
    for number, counter, against, outcome, timed, code in rows:
        shown = f"{timed[0]:+.1f}..{timed[1]:+.1f}%" if timed else "-"
        print(f"| {number} | {counter} | {against} | {outcome} | {shown} | {code} |")


if __name__ == "__main__":
    main()
