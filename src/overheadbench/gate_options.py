"""The regression gate's options: stored runs (save, compare), the base tree
(``--overhead-against``), and the gate's threshold; resolved and checked at configure time (their
flags: :mod:`overheadbench.option_table`), so a contradiction is a usage error (exit 4) before
anything is measured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .core.errors import StorageError, deprecated, usage
from .core.git import checked_out_branch, git
from .core.thresholds import REPLACED, Thresholds, parse_thresholds
from .engine.settings import Policy
from .replicas.environments import EnvError, Environment, resolve_environments
from .replicas.trees import BaseTree, TreeError, resolve_base
from .store.environment import BRANCH_VARIABLE
from .store.runs import Storage, check_name, read_run


@dataclass(frozen=True)
class GateOptions:
    """Stored runs, the base tree and the gate, resolved and checked."""

    storage: Storage
    save: str | None = None
    autosave: bool = False
    compare: str | None = None
    """A stored run's name, number or path; "" for the newest; None: no comparison."""
    thresholds: Thresholds = Thresholds()
    """``--overhead-fail-above``: the gate's threshold for pairs and transport figures."""
    unknown: Policy = Policy.WARN
    """What a change whose interval contains the threshold does."""
    force: bool = False
    """Gate against another machine's run anyway."""
    against: BaseTree | None = None
    envs: tuple[Environment, ...] = ()
    """``--overhead-env``: the other interpreters every pair is measured under too."""
    linking: bool = False
    """``--overhead-link``: the base tree, where there is one, is the newest stored ancestor's commit."""
    added: tuple[Any, ...] = ()
    """Places a plugin adds (``pytest_overheadbench_places``: each a
    :class:`~overheadbench.replicas.places.Where`), gated as the environments are."""

    @property
    def reference(self) -> str:
        """How the changes name what they are against: the base tree, or this environment."""
        return self.against.name if self.against is not None else "this environment"

    @property
    def uses_storage(self) -> bool:
        gated_stored = self.against is None and not self.envs and not self.added and self.thresholds.given
        return bool(self.save or self.autosave or self.compare is not None or gated_stored)


DEFAULT_STORAGE = "baselines"
"""The storage folder under the rootdir when none is named."""


def gate_options_from_config(config: pytest.Config, in_replica: bool, measuring: bool = True) -> GateOptions:
    """Resolve and check the gate's options; a replica process resolves none (they are the
    controller's), and a session that does not measure does not probe the ini file's environments."""
    option = config.getoption
    named = option("--overhead-storage") or config.getini("overhead_storage")
    try:
        storage = Storage.named(
            config.rootpath / (named or DEFAULT_STORAGE),
            option("--overhead-machine") or config.getini("overhead_machine"),
        )
        storage.check()
        save = None if option("--overhead-save") is None else check_name(option("--overhead-save"))
    except StorageError as exc:
        raise usage(f"overheadbench: {exc}") from None
    against, python = option("--overhead-against"), option("--overhead-against-python")
    compare = _compared(option("--overhead-compare"), config.rootpath)
    env_specs = [*(option("--overhead-env") or ()), *(config.getini("overhead_envs") if measuring else ())]
    _check_places(config, against, python, env_specs, compare)
    if option("--overhead-link"):
        against = _linked(config, storage, against, env_specs, compare, in_replica)
    base, envs = None, []
    try:
        if against is not None and not in_replica:
            base = resolve_base(against, Path(config.invocation_params.dir), config.rootpath, python)
        if env_specs and not in_replica:
            envs = resolve_environments(env_specs, Path(config.invocation_params.dir), config.rootpath)
    except (TreeError, EnvError) as exc:
        raise usage(f"overheadbench: {exc}") from None
    added = () if in_replica else _added_places(config)
    options = GateOptions(
        storage=storage,
        save=save,
        autosave=bool(option("--overhead-autosave")),
        compare=compare,
        thresholds=_thresholds(config, places=against is not None or bool(env_specs) or bool(added)),
        unknown=_policy(option("--overhead-compare-unknown") or config.getini("overhead_compare_unknown")),
        force=bool(option("--overhead-compare-force")),
        against=base,
        envs=tuple(envs),
        linking=bool(option("--overhead-link")),
        added=added,
    )
    if not named and options.uses_storage:
        _refuse_a_default_storage_elsewhere(storage.root, config.rootpath)
    return options


def _check_places(
    config: pytest.Config, against: str | None, python: str | None, env_specs: list[str], compare: str | None
) -> None:
    """One kind of other place per session, and none beside a stored run's comparison."""
    if python is not None and against is None:
        raise usage(
            "overheadbench: --overhead-against-python names the base tree's interpreter; give "
            "--overhead-against=REV|DIR too"
        )
    if against is not None and env_specs:
        raise usage(
            "overheadbench: --overhead-against and --overhead-env each measure every pair at other places in this "
            "session, and one session takes one of them: run the tree comparison and the environments separately"
        )
    for flag, given in (("--overhead-against", against), ("--overhead-env", env_specs or None)):
        stored = (
            ("--overhead-compare", compare),
            ("--overhead-compare-force", config.getoption("--overhead-compare-force") or None),
        )
        clashing = [name for name, value in stored if value is not None]
        if given is not None and clashing:
            raise usage(
                f"overheadbench: {flag} compares with other places measured in this session; {clashing[0]} "
                f"compares with a stored run: choose one"
            )


def _linked(
    config: pytest.Config, storage: Storage, against: str | None, envs: list[str], compare: str | None, replica: bool
) -> str | None:
    """``--overhead-link``: the newest stored ancestor's commit, the session's base tree (None: this run
    starts the chain, stored unlinked). It is a stored run's link: saved, and no other place. A
    replica resolves nothing: the controller's options are checked, and its base tree is the session's."""
    if replica:
        return None
    if not (config.getoption("--overhead-autosave") or config.getoption("--overhead-save")):
        raise usage("overheadbench: --overhead-link links a stored run: give --overhead-autosave too")
    clashing = [flag for flag, given in (("--overhead-against", against), ("--overhead-env", envs or None)) if given]
    if clashing or compare is not None:
        other = clashing[0] if clashing else "--overhead-compare"
        raise usage(
            f"overheadbench: --overhead-link measures the newest stored run's commit beside this tree; {other} "
            f"names another place: choose one"
        )
    return _link_target(storage, config.rootpath)


def _refuse_a_default_storage_elsewhere(root: Path, rootdir: Path) -> None:
    """The default storage folder (``baselines/``) that resolves outside the rootdir (a link to a
    folder of someone else's) is not written to unless named: a save there lands in, and cleans
    up in, a folder the user never gave. Named with ``--overhead-storage`` or ``overhead_storage``,
    any folder is the user's choice."""
    resolved = root.resolve()
    if not resolved.is_relative_to(rootdir.resolve()):
        raise usage(
            f"overheadbench: the default storage folder {root} resolves to {resolved}, outside the rootdir "
            f"{rootdir}: stored runs go there only when it is named: give --overhead-storage={resolved} "
            f"(or overhead_storage in the ini file) to use it"
        )


def gate_deprecations(config: pytest.Config) -> list[str]:
    """The replaced gate flags this session was given, and what replaces each."""
    return [deprecated(flag, spelling) for flag, spelling in REPLACED.items() if config.getoption(flag) is not None]


def _compared(name: str | None, root: Path) -> str | None:
    """The stored run to compare with; a test path taken for its name is a usage error. The name
    is optional, so ``--overhead-compare tests/test_x.py`` would take the path as the run's
    name and run every test: say so, and how to write it."""
    if name and (name.endswith(".py") or "::" in name or (root / name).is_dir()):
        raise usage(
            f"overheadbench: --overhead-compare took {name!r} as the stored run's name, which looks like a test "
            f"path; write --overhead-compare=NAME (or --overhead-compare alone before the paths: the newest run)"
        )
    return name


def _thresholds(config: pytest.Config, places: bool) -> Thresholds:
    """``--overhead-fail-above``, or what the two flags it replaces meant: ``--overhead-compare-fail``
    gated pairs (and, at other places of the session, transport figures too),
    ``--overhead-compare-fail-percent`` transport figures."""
    flags = ("--overhead-fail-above", *REPLACED)
    given = {flag: raw for flag in flags if (raw := config.getoption(flag)) is not None}
    if "--overhead-fail-above" in given and len(given) > 1:
        old = next(flag for flag in given if flag != "--overhead-fail-above")
        raise usage(f"overheadbench: {old} is the old spelling of --overhead-fail-above: give one")
    parsed = {}
    for flag, raw in given.items():
        try:
            parsed[flag] = parse_thresholds(raw)
        except ValueError as exc:
            raise usage(f"overheadbench: {flag}={exc}") from None
    if "--overhead-fail-above" in parsed:
        return parsed["--overhead-fail-above"]
    pairs = parsed.get("--overhead-compare-fail", Thresholds()).pairs
    figures = parsed.get("--overhead-compare-fail-percent", Thresholds()).transport
    return Thresholds(pairs, figures if figures is not None or not places else pairs)


def _policy(raw: str | None) -> Policy:
    if not raw:
        return Policy.WARN
    try:
        return Policy(str(raw).strip())
    except ValueError:
        raise usage(f"overheadbench: overhead_compare_unknown={raw!r}: must be warn or fail") from None


def _added_places(config: pytest.Config) -> tuple[Any, ...]:
    """The places plugins add through ``pytest_overheadbench_places`` (:mod:`overheadbench.hookspecs`)."""
    return tuple(place for found in config.hook.pytest_overheadbench_places(config=config) for place in found)


def _link_target(storage: Storage, repository: Path) -> str | None:
    """The commit a linked session measures beside its own: that of the newest stored run of this
    branch (in this storage folder) whose commit is an ancestor of HEAD. Its figures are in the
    history already, so this run's change over it links the two runs directly, and the runner's load
    and CPU model, which move each session's levels, cancel in it (:mod:`overheadbench.engine.shifts`).
    None: no such run, and this run starts the chain."""
    head = git(repository, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head is None or head.returncode != 0:
        return None
    sha = head.stdout.strip()
    branch = os.environ.get(BRANCH_VARIABLE) or checked_out_branch(repository)
    branch = None if branch == "HEAD" else branch  # detached, unnamed: any ancestor's run
    for path in reversed(storage.runs()):  # newest first, by number; read until one is an ancestor
        try:
            commit = read_run(path).environment.get("commit_info") or {}
        except StorageError:  # an unreadable run is no link (the history says why it is left out)
            continue
        stored = str(commit.get("id") or "")
        if not stored or commit.get("dirty") or stored == sha or (branch and commit.get("branch") != branch):
            continue
        ancestor = git(repository, "merge-base", "--is-ancestor", stored, sha)
        if ancestor is not None and ancestor.returncode == 0:
            return stored[:12]
    return None
