"""The ground every layer stands on: words, units, JSON, errors, text tables, process and xdist helpers.

It imports nothing of the package.
"""
