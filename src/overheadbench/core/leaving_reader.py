"""Standard output whose reader may leave: ``overheadbench history | head`` ended in a
``BrokenPipeError`` traceback and exit 1, the regression code, whatever the history said.

Once the reader has gone, what is written is dropped (the descriptor points at ``/dev/null``, so
the interpreter's last flush is quiet too) and the command goes on to its own exit code: a gate
cut short in its printing still fails or passes on what it read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class _Leaving:
    """``stream``, quiet once its reader has gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self._gone = True
        with open(os.devnull, "w") as nothing:
            os.dup2(nothing.fileno(), self._stream.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """``sys.stdout`` made quiet once its reader leaves, for the block (restored after it)."""
    stream = sys.stdout
    sys.stdout = _Leaving(stream)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = stream
