"""Machine instructions, counted by Valgrind's callgrind around exactly the counted calls.

Count mode's bytecode counter cannot see work done in compiled code (a C or Rust extension,
the interpreter's own C): pydantic's validation read 33% *fewer* instructions than a
dataclass while it took 4x the time. Callgrind counts every instruction the CPU executes,
but only in a process valgrind started; so count mode's instructions are counted in one
replica process started under ``valgrind --tool=callgrind --collect-atstart=no``
(:meth:`overheadbench.replicas.relaunch.Invocation.under_callgrind`), and that process
switches collection on and off around each block with callgrind's *client requests*.

A client request is a magic instruction sequence that does nothing on a real CPU and that
valgrind's translator recognises. It needs no compiler and no ``valgrind.h``: the ten-odd
bytes of x86-64 code are written to one mapped executable page and called through
``ctypes`` (``request(args, default) -> result``). On any other machine, or outside
valgrind, the sequence returns ``default``: :func:`running_on_valgrind` is then 0.

A block switches collection on, runs the calls, switches it off and dumps the counters to a
file (``DUMP_STATS_AT``), whose ``totals:`` line is the block's count. The request calls
themselves are counted too, alike in every block: an empty block's count (no call) is taken
off each when the meter starts, so the loop and the call of the callable stay, as in time mode.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import InstrumentError
from ..core.vocabulary import Figure
from ..engine.samples import Kind
from ..engine.valgrind import supported
from . import walltime

_CODE = bytes.fromhex(
    "4889f8"  # mov rax, rdi        (the request's argument block)
    "4889f2"  # mov rdx, rsi        (the default result)
    "48c1c703"
    "48c1c70d"
    "48c1c73d"
    "48c1c733"  # rol rdi 3, 13, 61, 51: valgrind's preamble (a no-op)
    "4887db"  # xchg rbx, rbx       (the client request itself)
    "4889d0"  # mov rax, rdx        (its result)
    "c3"  # ret
)
RUNNING_ON_VALGRIND = 0x1001
_CALLGRIND = 0x43540000  # VG_USERREQ_TOOL_BASE('C', 'T')
ZERO_STATS = _CALLGRIND + 1
TOGGLE_COLLECT = _CALLGRIND + 2
DUMP_STATS_AT = _CALLGRIND + 3
START_INSTRUMENTATION = _CALLGRIND + 4
EMPTY_BLOCKS = 7
"""Empty blocks counted when the meter starts: their median is every block's fixed cost."""

_Request = Callable[[Any, int], int]
_request: _Request | None = None
_page: mmap.mmap | None = None


def _requester() -> _Request:
    global _request, _page
    if _request is None:
        if not supported():
            raise InstrumentError(f"callgrind's client requests need Linux on x86-64, not {platform.machine()}")
        _page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        _page.write(_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(_page))
        _request = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64)(address)
    return _request


def _arguments(code: int, argument: int = 0) -> ctypes.Array[ctypes.c_uint64]:
    """A request's argument block: the code and five arguments."""
    return (ctypes.c_uint64 * 6)(code, argument, 0, 0, 0, 0)


def request(code: int, argument: int = 0, default: int = 0) -> int:
    """Issue one client request (``code`` with one argument); ``default`` outside valgrind."""
    arguments = _arguments(code, argument)  # held until the request returns
    return int(_requester()(ctypes.addressof(arguments), default))


def running_on_valgrind() -> bool:
    return supported() and request(RUNNING_ON_VALGRIND) > 0


class CallgrindMeter:
    """A block's "clock": the first read starts collecting, the second stops it and returns
    the instructions collected between them (read back from the dump it wrote to ``folder``),
    less what an empty block collects (the requests' own instructions: as time mode, the
    figure keeps the loop and the call of the callable, and only the block's fixed cost goes)."""

    def __init__(self, folder: Path) -> None:
        if not running_on_valgrind():
            raise InstrumentError("machine-instruction counting runs only in a process started under callgrind")
        self.folder = folder
        self._collecting = False
        self._label = ctypes.create_string_buffer(b"overheadbench-block")
        request(START_INSTRUMENTATION)  # a no-op when valgrind instruments from the start
        send = _requester()
        # Built once: the requests inside the collected window allocate nothing, so every block
        # runs the same instructions around its calls.
        self._held = [_arguments(ZERO_STATS), _arguments(TOGGLE_COLLECT)]
        zero, toggle = (ctypes.addressof(arguments) for arguments in self._held)
        self._zero: Callable[[], int] = partial(send, zero, 0)
        self._toggle: Callable[[], int] = partial(send, toggle, 0)
        self._fixed = 0
        empty = walltime.sync_block(_nothing, self.read)
        self._fixed = sorted(empty(0) for _ in range(EMPTY_BLOCKS))[EMPTY_BLOCKS // 2]

    def read(self) -> int:
        if not self._collecting:
            self._collecting = True
            self._zero()
            self._toggle()
            return 0
        self._toggle()
        self._collecting = False
        request(DUMP_STATS_AT, ctypes.addressof(self._label))
        return self._total() - self._fixed

    def _total(self) -> int:
        """The newest dump's ``totals:`` (each dump is its own file, ``cg.<pid>.<n>``; removed once read)."""
        own = f"cg.{os.getpid()}."
        dumps = [path for path in self.folder.iterdir() if path.name.startswith(own) and path.suffix[1:].isdigit()]
        if not dumps:
            raise InstrumentError(f"callgrind wrote no dump into {self.folder}")
        newest = max(dumps, key=lambda path: int(path.name.rsplit(".", 1)[-1]))
        try:
            for line in newest.read_text(errors="replace").splitlines():
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
        finally:
            for path in dumps:
                path.unlink(missing_ok=True)
        raise InstrumentError(f"callgrind's dump {newest} has no totals line")


def _nothing() -> None:
    """Never called: an empty block runs no call."""


class MachineInstructionCount:
    """The count-mode instrument under callgrind: blocks return the machine instructions executed."""

    figures: tuple[Figure, ...] = (Figure.INSTRUCTIONS,)
    subtract_harness: bool = False
    """The meter takes the block's fixed cost off already; the loop and the call stay, as in time mode."""
    paced: bool = False

    def __init__(self, folder: Path) -> None:
        self.meter = CallgrindMeter(folder)

    def block(self, fn: Callable[[], Any], kind: Kind) -> walltime.SyncBlock | walltime.AsyncBlock:
        """A block with a code object of its own: the interpreter specialises a call site for the
        callable it calls, and one loop shared by both sides re-specialised as they alternated
        (blocks read two levels ~35 instructions per call apart, by the order they ran in)."""
        read = self.meter.read
        block = walltime.sync_block(fn, read) if kind == Kind.SYNC else walltime.async_block(fn, read)
        block.__code__ = block.__code__.replace()
        return block

    def close(self) -> None:
        """Nothing held between blocks."""
