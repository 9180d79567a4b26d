"""One test per adversarial pair (pairs.py), each under its own budget."""

import pytest
from adversaries import ADVERSARIES


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.overhead(max=pair.budget)) for name, pair in ADVERSARIES.items()]
)
def test_adversary(overhead, name):
    baseline, framework = ADVERSARIES[name].build()
    overhead.compare(baseline=baseline, framework=framework)
