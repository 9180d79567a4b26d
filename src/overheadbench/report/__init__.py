"""What a person reads: the terminal tables and summary, the markdown report, the change and
budget tables, CSV, plots, GitHub annotations, and the session's gathered measurements.
"""
