"""benchmarks/: validation/ holds scripts (run by hand), not tests."""

collect_ignore = ["validation"]
