"""The ``overheadbench`` command's commands, one module each (:mod:`overheadbench.cli` parses and dispatches)."""
