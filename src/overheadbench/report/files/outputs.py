"""A session's outputs (``--overhead-json``, ``--overhead-md``, the job summary, the stored run),
each written on its own.

Why on its own: written one after another in one ``try``, a JSON file on a full disk stopped
the stored run from being saved, the error named no file, and the summary still said the
results were written. Here every output is tried, each failure names its file, and only what
was written is listed. An interrupted session (Ctrl-C, SIGTERM) writes none of them: it has
only some of its results, and a file from an earlier, whole session is worth more.

Why a replaced file is named: a CI job re-run with the same ``--overhead-json`` path replaced a
passing run's file with a failed run's, silently. The summary now says what each output
replaced (and when that file was written); a session that did not pass keeps the file it
replaced beside it, as ``NAME.previous.EXT``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import StorageError
from ...core.files import write_text_atomic


@dataclass(frozen=True)
class Output:
    name: str
    """The file it goes to, as the user named it (or what it is, for the stored run)."""
    write: Callable[[], Path | None]
    """Writes it; the file written (None: nothing to write after all)."""
    replaces: Path | None = None
    """The file it is written over, for a file output (the stored run and the job summary replace nothing)."""
    optional: bool = False
    """A courtesy the session's outcome does not rest on (the job summary): not written is a warning,
    never an exit status (an unwritable ``GITHUB_STEP_SUMMARY`` turned a passing session into exit 4)."""

    @classmethod
    def file(cls, path: Path, text: Callable[[], str]) -> Output:
        """A file of ``text()``, written atomically over ``path``."""
        return cls(str(path), lambda: write_text_atomic(path, text()), path)


@dataclass
class Written:
    files: list[str] = field(default_factory=list)
    """Each file written, and what it replaced, as the summary says it."""
    problems: list[str] = field(default_factory=list)
    """What went wrong, one line per output, each naming its file."""
    warnings: list[str] = field(default_factory=list)
    """The same for optional outputs."""


def previous_path(path: Path) -> Path:
    """Where a session that did not pass keeps the file it replaced: ``out.json`` -> ``out.previous.json``."""
    return path.with_name(f"{path.stem}.previous{path.suffix}")


def write_outputs(outputs: Sequence[Output], interrupted: bool, passed: bool = True) -> Written:
    """Write every output, each whatever happened to the others (none when ``interrupted``);
    when the session did not pass, a file an output replaces is kept first (:func:`previous_path`)."""
    done = Written()
    if interrupted:
        if outputs:
            names = ", ".join(output.name for output in outputs)
            done.problems.append(f"interrupted: {names} not written (existing files left as they were)")
        return done
    for output in outputs:
        failed = done.warnings if output.optional else done.problems
        try:
            replaced = _replaced(output.replaces, keep=not passed)
            path = output.write()
        except StorageError as exc:  # already names the folder and the reason
            failed.append(f"{output.name}: not saved: {exc}")
        except OSError as exc:  # the temporary file's name or none (a full disk): the user's name instead
            failed.append(f"{output.name}: could not be written ({exc.strerror or exc})")
        else:
            if path is not None:
                done.files.append(f"{path}{replaced}")
    return done


def _replaced(path: Path | None, keep: bool) -> str:
    """What writing ``path`` replaces, as the summary says it ("" if nothing); kept beside it if ``keep``."""
    if path is None or not path.is_file():
        return ""
    when = datetime.datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M:%S")
    if not keep:
        return f" (replacing the file written {when})"
    kept = write_text_atomic(previous_path(path), path.read_text(encoding="utf-8", errors="replace"))
    return f" (this session did not pass: the file it replaced, written {when}, is kept as {kept})"
