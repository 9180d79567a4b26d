"""How a child process ended, in words, for the messages that quote it (a replica, a load worker).

A bare exit code hid the one fact that explains most endings here: a negative code is the
signal that killed the process (the OOM killer's SIGKILL, a CI runner's SIGTERM).
"""

from __future__ import annotations

import signal


def exit_story(code: int | None) -> str:
    """``exited with code 3``, ``was killed by SIGKILL``, or (None) ``did not end``."""
    if code is None:
        return "did not end"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
