"""The ``transport`` marker's figures (:mod:`.metrics`, :mod:`.results`, :mod:`.verdict`) and the
``transport`` fixture (:mod:`.fixture`), over the load and stream machinery of :mod:`overheadbench.http`.
"""
