"""A replica of the base tree must measure the base's code: the project modules it imported from elsewhere (the
head tree, an editable install of it, the head installed into site-packages) are found (:func:`foreign_modules`)
and said, with the fix (:func:`imported_from_head`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

EXEMPT = ("overheadbench",)
"""Packages a base replica runs from wherever they are: the measuring tool itself, which must
speak the controller's protocol."""


def foreign_modules(modules: Mapping[str, ModuleType], head_root: Path, own_root: Path) -> Iterator[tuple[str, Path]]:
    """The modules (name, file) that a replica of the tree ``own_root`` imported from elsewhere
    although they are its own project's code: any module from the other tree ``head_root`` (an
    editable install of the head), and any of this tree's top-level packages or modules
    (:func:`project_names`) loaded from outside it (the head installed into site-packages).
    Other installed packages (under the interpreter's prefixes, a virtual environment inside the
    head tree included) and :data:`EXEMPT` are not project code."""
    installed = {Path(p).resolve() for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)}
    own = project_names(own_root)
    for name, module in list(modules.items()):
        file = getattr(module, "__file__", None)
        top = name.partition(".")[0]
        if not file or top in EXEMPT:
            continue
        path = Path(file).resolve()
        if _under(path, own_root):
            continue
        if top in own or (_under(path, head_root) and not any(_under(path, p) for p in installed)):
            yield name, path


def project_names(root: Path) -> set[str]:
    """The top-level packages and modules of a tree: at its root and in its ``src`` folder."""
    names = set()
    for folder in (root, root / "src"):
        for entry in folder.iterdir() if folder.is_dir() else ():
            if entry.is_dir() and (entry / "__init__.py").is_file() or entry.suffix == ".py":
                names.add(entry.stem if entry.suffix == ".py" else entry.name)
    return names - {"conftest", "setup", "noxfile", "__init__"}


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def imported_from_head(head_root: Path, own_root: Path) -> str:
    """Why this replica of the base tree does not measure the base: the project modules it
    imported from elsewhere (none: "")."""
    found = list(foreign_modules(sys.modules, head_root, own_root))
    if not found:
        return ""
    name, path = found[0]
    others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    where = "the head tree" if head_root in path.parents else "outside the base tree"
    return (
        f"--overhead-against: a replica of the base tree {own_root} imported {name} from {path}, {where}{others}, "
        f"so the base's code is not what it would measure. The usual cause: the project is installed (pip install "
        f"-e . or pip install .) from the head tree {head_root}. Fix: let each tree import its own source (pytest's "
        f"pythonpath = src ini option, or PYTHONPATH=src), or install the base in an environment of its own and "
        f"pass --overhead-against-python=<its python>"
    )
