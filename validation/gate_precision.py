"""What a gated A/B session's precision allows (issue 45): how many processes a tree a change needs,
and how two centres over processes read the same samples.

    python validation/gate_precision.py needed REPO/ab-runs [--change 5.8] [--gate 2] [--pairs 2] \
        [--pytest-args="--overhead-against=HEAD~1 --overhead-fail-above=2%"]
    python validation/gate_precision.py centres RUN.json [RUN.json ...]

``needed`` reads the records ``busy_runner.py ab`` keeps (each gated pair's change, its standard error
and processes): the standard deviation of one round's log difference (``se x sqrt(processes) /
efficiency``: Huber's 1.0252; ``--efficiency 1.2533`` for runs pooled by the weighted median), and
the rounds a one-look test needs for 90% power to read ``--change`` percent as regressed at a
``--gate`` percent threshold with ``--pairs`` gated pairs (each at ``0.05 / pairs``):
``((t + 1.28) x efficiency x sd / (ln(1 + change) - ln(1 + gate)))^2``.

``centres`` reads gated sessions kept whole (``--overhead-json`` of a session with
``--overhead-against``): per pair, the change pooled by the weighted median (with the median's
standard error, as overheadbench 0.2.0 did before issue 45's end) and by Huber's centre (as now), at
the interval the session's gate read (its ``confidence``), on the same samples.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import shlex
from pathlib import Path
from statistics import NormalDist

import numpy as np

from overheadbench.engine.process_logs import process_logs
from overheadbench.engine.stats import (
    BIG_VARIANCE,
    _weighted_squares,
    pool,
    weighted_median,
)
from overheadbench.engine.student import t_quantile
from overheadbench.pairs.results import OverheadResult

HUBER = 1.0252
MEDIAN = 1.2533


def rounds_needed(sd: float, change: float, gate: float, pairs: int, efficiency: float, power: float = 0.9) -> int:
    """Rounds (processes a tree) for ``power`` at one look: the least ``n`` whose interval's low end
    clears ``gate`` when the change reads ``change`` (percent), at ``1 - 0.05 / pairs`` two-sided."""
    room = math.log1p(change / 100) - math.log1p(gate / 100)
    for n in range(3, 1000):
        t = t_quantile(1 - 0.025 / pairs, n - 1)
        if (t + NormalDist().inv_cdf(power)) * efficiency * sd / math.sqrt(n) < room:
            return n
    return 1000


def needed(folder: Path, extra: list[str], change: float, gate: float, pairs: int, efficiency: float) -> None:
    sds = []
    for path in sorted(glob.glob(str(folder / "*.json"))):
        record = json.loads(Path(path).read_text())
        if record["extra"] != extra:
            continue
        sds += [row["se"] * math.sqrt(row["processes"]) / efficiency for row in record["changes"] if row.get("se")]
    sds.sort()
    print(f"{len(sds)} gated pairs; sd of one round's log change: " + " ".join(f"{100 * sd:.1f}%" for sd in sds))
    counts = [rounds_needed(sd, change, gate, pairs, efficiency) for sd in sds]
    print(f"processes a tree for 90% power at one look (+{change}% at a {gate}% gate, {pairs} pairs): {counts}")
    print(f"median sd {100 * float(np.median(sds)):.1f}%, median processes {float(np.median(counts)):g}")


def median_pool(logs: np.ndarray, variances: np.ndarray) -> tuple[float, float]:
    """The pooling before Huber's: the weighted median, with the median's standard error."""
    v = np.minimum(variances, BIG_VARIANCE)
    mad = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
    weights = 1.0 / (v + max(0.0, mad**2 - float(np.median(v))))
    model = 1.0 / float(weights.sum())
    seen = _weighted_squares(logs, weights) / ((logs.size - 1) * float(weights.sum()))
    return weighted_median(logs, weights), MEDIAN * math.sqrt(max(model, seen))


def huber_pool(logs: np.ndarray, variances: np.ndarray) -> tuple[float, float]:
    pooled = pool(logs, variances)
    return pooled.centre, pooled.se


def centres(paths: list[Path]) -> None:
    for path in paths:
        for raw in json.loads(path.read_text())["results"]:
            result = OverheadResult.from_json(raw)
            if not result.places:
                continue
            place = result.places[0]
            if place.result is None:
                continue
            head, head_v = process_logs(result.samples)
            base, base_v = process_logs(place.result.samples)
            n = min(head.size, base.size)
            confidence = place.change.confidence if place.change is not None else 0.95
            t = t_quantile((1 + confidence) / 2, n - 1)
            cells = []
            for name, pooled in (("median", median_pool), ("Huber", huber_pool)):
                centre = pooled(head[:n], head_v[:n])[0] - pooled(base[:n], base_v[:n])[0]
                se = pooled(head[:n] - base[:n], head_v[:n] + base_v[:n])[1]
                low, high = (100 * math.expm1(centre + sign * t * se) for sign in (-1, 1))
                cells.append(f"{name} {100 * math.expm1(centre):+.1f}% ({low:+.1f}..{high:+.1f})")
            print(f"{path.name} {result.nodeid} ({n} rounds, at {confidence:.2%}): " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["needed", "centres"])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--change", type=float, default=5.8)
    parser.add_argument("--gate", type=float, default=2.0)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--efficiency", type=float, default=HUBER)
    parser.add_argument(
        "--pytest-args",
        default="--overhead-against=HEAD~1 --overhead-fail-above=2%",
        help="needed: the records of sessions run with these options only",
    )
    args = parser.parse_args()
    if args.step == "needed":
        needed(args.paths[0], shlex.split(args.pytest_args), args.change, args.gate, args.pairs, args.efficiency)
    else:
        centres(args.paths)


if __name__ == "__main__":
    main()
