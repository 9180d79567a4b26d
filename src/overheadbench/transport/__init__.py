"""The ``transport`` marker's figures (:mod:`.figures`) and the ``transport`` fixture (:mod:`.fixture`),
over the load and stream machinery of :mod:`overheadbench.http`.
"""
