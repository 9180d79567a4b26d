"""The other tree of ``--overhead-against``: a git revision checked out as a temporary
worktree, or a checkout the user names, and how head paths map onto it.

Why both trees in one session: between two CI runs the machine changes (its load, its CPU
model on hosted runners), and a stored run from another machine cannot be gated against at
all. Measured by replicas of both trees, interleaved, in the same session, whatever the
machine does it does to both (duet benchmarking, Bulej et al. 2020).

Everything that can be wrong is found when the session starts (exit 4 before anything is
measured): an unknown revision (a shallow clone: the message says how to fetch it), a path
that is neither, a base with uncommitted changes, a base interpreter that does not run. The
worktree is made only when the first pair needs it, inside a folder this session owns (see
:mod:`overheadbench.core.scratch`), and removed at the end; a session killed before that leaves a
folder the next session removes, and ``git worktree prune`` forgets it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.git import git
from ..core.scratch import owned_folder, remove_folder
from .environments import EnvError, probe


class TreeError(Exception):
    """The base tree cannot be used; the message names the option, the cause and the fix."""


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = git(directory, *args)
    if done is None:
        raise TreeError("--overhead-against: git is not installed (give a checkout's folder instead)")
    return done


def git_root(directory: Path) -> Path | None:
    """The top of the git work tree holding ``directory``, or None outside one."""
    done = _git(directory, "rev-parse", "--show-toplevel")
    return Path(done.stdout.strip()).resolve() if done.returncode == 0 and done.stdout.strip() else None


REAPER = (
    "import shutil, subprocess, sys; repository, tree, folder = sys.argv[1:]; sys.stdin.buffer.read(); "
    "git = ['git', '-C', repository, 'worktree']; "
    "subprocess.run([*git, 'remove', '--force', tree], capture_output=True); "
    "shutil.rmtree(folder, ignore_errors=True); subprocess.run([*git, 'prune'], capture_output=True)"
)
"""A reaped worktree's reaper: waits for end of file on its standard input (its owner's end, however
it came: the kernel closes the pipe at any death, as the replicas' lifeline,
:mod:`overheadbench.replicas.lifeline`), then removes the worktree and its folder, and makes the
repository forget it."""
REAPER_WAIT_S = 20.0


@dataclass
class Worktree:
    """A commit of ``repository`` checked out in a folder this process owns: the one home of a
    checked-out tree (the base tree of ``--overhead-against``, the commits ``bisect``, ``history
    --confirm`` and ``history --measure`` measure).

    Made on the first :meth:`checkout` (registrations a killed process left pruned first), switched in
    place by later ones (a fresh checkout each step costs the whole tree's files), taken away by
    :meth:`remove`. A process that dies leaves a folder whose lock is free: the next session removes
    it (:mod:`overheadbench.core.scratch`) and ``git worktree prune`` forgets it. A ``reaped`` one is
    removed at once however its owner dies (``SIGKILL`` included): a small process (:data:`REAPER`)
    holds a pipe the owner never writes."""

    repository: Path
    kind: str
    """The owned folder's kind (``overheadbench-<kind>-*``)."""
    name: Callable[[Path, Path], str] = lambda folder, repository: "tree"
    """The checkout's name in its folder, from the folder and the repository."""
    reaped: bool = False
    folder: Path | None = None
    path: Path | None = None
    _reaper: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def prepare(self) -> Path:
        """The owned folder the checkout goes in (made now where it is not yet, with its reaper)."""
        if self.folder is None:
            _git(self.repository, "worktree", "prune")  # registrations of worktrees a killed process left
            self.folder = owned_folder(self.kind)
            self.path = self.folder / self.name(self.folder, self.repository)
            if self.reaped:
                self._reaper = subprocess.Popen(
                    [sys.executable, "-c", REAPER, str(self.repository), str(self.path), str(self.folder)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C to the terminal's process group must not end it first
                )
        return self.folder

    def checkout(self, commit: str) -> Path:
        """The tree at ``commit``; raises :class:`TreeError` with git's reason where it cannot be."""
        self.prepare()
        assert self.path is not None
        if self.path.is_dir():
            done = _git(self.path, "checkout", "--quiet", "--detach", "--force", commit)
        else:
            done = _git(self.repository, "worktree", "add", "--detach", "--quiet", str(self.path), commit)
        if done.returncode != 0:
            raise TreeError(f"git could not check {commit} out: {done.stderr.strip()}")
        return self.path

    def remove(self) -> None:
        """Remove the checkout and its folder, and make the repository forget it; safe twice."""
        if self.folder is None:
            return
        if self.path is not None and self.path.exists():
            _git(self.repository, "worktree", "remove", "--force", str(self.path))
        remove_folder(self.folder)
        _git(self.repository, "worktree", "prune")
        self.folder, self.path = None, None
        if self._reaper is not None:  # told by its pipe's end, it finds nothing left to remove
            if self._reaper.stdin is not None:
                self._reaper.stdin.close()
            self._reaper.wait(timeout=REAPER_WAIT_S)
            self._reaper = None


@dataclass
class BaseTree:
    """The base tree: where it is, which interpreter runs it, and the head tree it maps from."""

    spec: str
    """As given to ``--overhead-against``."""
    head_root: Path
    revision: str | None = None
    """The commit to check out (a revision was given), or None (a folder was given)."""
    python: str = sys.executable
    root: Path | None = None
    """The base tree's top folder, once there (a folder: at once; a revision: on :meth:`open`)."""
    _checkout: Worktree | None = field(default=None, repr=False)
    used_at: Path | None = None
    """Where the base tree was when its replicas ran (kept after :meth:`close`, for the report)."""

    @property
    def name(self) -> str:
        """How reports name the base: the spec and, for a revision, its short commit."""
        if not self.revision or self.revision.startswith(self.spec):  # a commit id names itself
            return self.spec
        return f"{self.spec} ({self.revision[:12]})"

    def open(self) -> Path:
        """The base tree's root, checking the revision out first if needed."""
        if self.root is not None:
            self.used_at = self.root
            return self.root
        assert self.revision is not None
        self._checkout = Worktree(self.head_root, "against", _padded_name)
        try:
            path = self._checkout.checkout(self.revision)
        except TreeError as exc:
            self.close()
            raise TreeError(f"--overhead-against={self.spec}: {exc}") from None
        self.root = self.used_at = path
        return path

    def where(self) -> str:
        """Where the base's replicas ran, and whether its path is as long as the head's (a path's length
        moves a process's layout a little; where the temporary folder is too long to pad it, nothing a
        user does changes that, so the line only states the fact)."""
        if self.used_at is None:
            return ""
        said = ["its path as long as the head's"] if len(str(self.used_at)) == len(str(self.head_root)) else []
        said += ["removed"] if self.revision else []
        return f"base tree: {self.used_at}" + (f" ({'; '.join(said)})" if said else "")

    def map(self, path: Path) -> Path:
        """A path of the head tree, in the base tree (others unchanged)."""
        assert self.root is not None
        try:
            return self.root / Path(path).resolve().relative_to(self.head_root)
        except ValueError:
            return Path(path)

    def close(self) -> None:
        """Remove the worktree (a folder the user named is left alone); safe twice."""
        if self._checkout is None:
            return
        self._checkout.remove()
        self._checkout, self.root = None, None


def _padded_name(folder: Path, head_root: Path) -> str:
    """A name for the worktree in ``folder`` that makes its path as long as the head's, where
    the head's is long enough: both trees then run from paths of equal length (a path's length
    moves what the process lays out after it: its argv, its modules' file names)."""
    room = len(str(head_root)) - len(str(folder)) - 1
    return "b" * room if room >= 1 else "base"


def resolve_base(spec: str, invocation_dir: Path, rootdir: Path, python: str | None) -> BaseTree:
    """``--overhead-against`` (and ``--overhead-against-python``) checked: a folder, else a
    revision of the head's git repository; raises :class:`TreeError` saying what is wrong."""
    if not spec.strip():
        raise TreeError("--overhead-against needs a git revision (e.g. origin/main) or a checkout's folder")
    interpreter = _interpreter(python, invocation_dir) if python else sys.executable
    in_git = git_root(invocation_dir)
    head_root = in_git or rootdir.resolve()
    folder = (invocation_dir / spec).expanduser()
    if folder.is_dir():
        root = folder.resolve()
        if root == head_root:
            raise TreeError(f"--overhead-against={spec}: that is this tree; name another checkout or a revision")
        _check_clean(spec, root)
        return BaseTree(spec, head_root, None, interpreter, root)
    if in_git is None:
        raise TreeError(f"--overhead-against={spec}: no such folder, and {invocation_dir} is not in a git repository")
    done = _git(head_root, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    if done.returncode != 0:
        shallow = _git(head_root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        why = "this clone is shallow, and it is not in it" if shallow else "no such revision in this repository"
        remote, _, branch = spec.partition("/")
        # quoted as a shell would need it: the hint is copied into one, and a spec is the user's text
        fetch = shlex.join(["git", "fetch", remote, branch] if branch else ["git", "fetch", "origin", spec])
        raise TreeError(
            f"--overhead-against={spec}: {why}. Fetch it first ({fetch}; in GitHub Actions, actions/checkout "
            f"with fetch-depth: 0), or name a checkout's folder"
        )
    return BaseTree(spec, head_root, done.stdout.strip(), interpreter)


def _check_clean(spec: str, root: Path) -> None:
    """A base folder under git must have no uncommitted changes to tracked files: the base
    would not be the version it claims to be."""
    done = _git(root, "status", "--porcelain", "--untracked-files=no")
    if done.returncode == 0 and done.stdout.strip():
        changed = [line[3:] for line in done.stdout.splitlines()]
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        raise TreeError(
            f"--overhead-against={spec}: the checkout has uncommitted changes ({shown}); commit or stash them, "
            f"or give a revision (a clean worktree is made of it)"
        )


def _interpreter(python: str, directory: Path) -> str:
    """``--overhead-against-python``: a program that runs Python and has pytest and overheadbench."""
    try:
        return probe(python, f"--overhead-against-python={python}", directory).python
    except EnvError as exc:
        raise TreeError(str(exc)) from None
