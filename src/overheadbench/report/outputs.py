"""A session's outputs (``--overhead-json``, ``--overhead-md``, the job summary, the stored run),
each written on its own.

Why on its own: written one after another in one ``try``, a JSON file on a full disk stopped
the stored run from being saved, the error named no file, and the summary still said the
results were written. Here every output is tried, each failure names its file, and only what
was written is listed. An interrupted session (Ctrl-C, SIGTERM) writes none of them: it has
only some of its results, and a file from an earlier, whole session is worth more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import StorageError


@dataclass(frozen=True)
class Output:
    name: str
    """The file it goes to, as the user named it (or what it is, for the stored run)."""
    write: Callable[[], Path | None]
    """Writes it; the file written (None: nothing to write after all)."""


@dataclass
class Written:
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """What went wrong, one line per output, each naming its file."""


def write_outputs(outputs: Sequence[Output], interrupted: bool) -> Written:
    """Write every output, each whatever happened to the others (none when ``interrupted``)."""
    done = Written()
    if interrupted:
        if outputs:
            names = ", ".join(output.name for output in outputs)
            done.problems.append(f"interrupted: {names} not written (existing files left as they were)")
        return done
    for output in outputs:
        try:
            path = output.write()
        except StorageError as exc:  # already names the folder and the reason
            done.problems.append(f"{output.name}: not saved: {exc}")
        except OSError as exc:  # the temporary file's name or none (a full disk): the user's name instead
            done.problems.append(f"{output.name}: could not be written ({exc.strerror or exc})")
        else:
            if path is not None:
                done.files.append(path)
    return done
