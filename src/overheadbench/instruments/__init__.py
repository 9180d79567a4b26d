"""What one timed block measures.

An instrument turns a zero-argument callable into a *block*: ``block(n) -> int`` runs the
callable ``n`` times and returns the cost of the whole block. Wall time (nanoseconds) is the
only instrument today; a deterministic count instrument (instructions, allocations) can be a
second module with the same shape, without touching the sampling engine.
"""
