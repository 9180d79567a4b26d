"""benchmarks/: the project's own overhead benchmarks (the validation scripts are ``validation/``).

The async benchmarks run on asyncio and on trio. anyio's own ``anyio_backend`` fixture lists
only the backends installed, so without trio its rows would silently not exist; here a missing
trio is a skip that says so.
"""

from importlib.util import find_spec

import pytest

MISSING = "pip install '.[bench]' (or the package alone) to run it"


@pytest.fixture(
    scope="module",
    params=[
        "asyncio",
        pytest.param(
            "trio", marks=pytest.mark.skipif(find_spec("trio") is None, reason=f"trio is not installed: {MISSING}")
        ),
    ],
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
