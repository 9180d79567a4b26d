"""The pairs the validation measures, in a module the generated test file imports.

``work_a``/``work_b`` are separate but identical functions (A/A: separate code objects, as
two real implementations would be); the 25% and 10% cases do more loop iterations.
"""

from __future__ import annotations

BASE_ITERATIONS = 40


def work_a(iterations: int = BASE_ITERATIONS) -> int:
    total = 0
    for value in range(iterations):
        total += value
    return total


def work_b(iterations: int = BASE_ITERATIONS) -> int:
    total = 0
    for value in range(iterations):
        total += value
    return total


async def awork_a(iterations: int = BASE_ITERATIONS) -> int:
    return work_a(iterations)


async def awork_b(iterations: int = BASE_ITERATIONS) -> int:
    return work_b(iterations)
