"""Run the README's example (test_readme.py, beside this script) as a user would, and write what
the README shows of its output to test_readme.out: the failure and the table, from a real run.

    python docs/examples/sample_output.py      # then paste test_readme.out into the README

tests/test_docs.py checks that the README shows this file's example and this output word for word.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(HERE / "test_readme.py", folder)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "--overhead", "-p", "no:cacheprovider", "-p", "no:asyncio"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
    lines = run.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "FAILURES" in line)
    (HERE / "test_readme.out").write_text("\n".join(lines[start:]) + "\n", encoding="utf-8")
    print(f"pytest exited {run.returncode}; wrote {HERE / 'test_readme.out'}")


if __name__ == "__main__":
    main()
