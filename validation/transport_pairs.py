"""Transport pairs and absolute transport budgets across fresh sessions, measured (issue 27).

    python validation/transport_pairs.py collect --out validation/out/pairs  # ~20 min, alone
    python validation/transport_pairs.py report --out validation/out/pairs

``collect`` runs, in consecutive fresh pytest sessions of identical code, the suite's gateway
vs upstream pairs (1 and 10 in flight) and h2c vs HTTP/1.1 pairs (1, 10 and 100 in flight),
and absolute budgets set near their figures (``NEAR``: an upstream's p95 and req/s one request
at a time, the gateway's req/s and p95 at 10 in flight); then the gateway pair one request at
a time with 1 ms injected into the gateway (``GATEWAY_DELAY_MS=1``), in as many fresh sessions.
Each session's run is written with ``--overhead-json``.

``report`` reads them back: each judged figure's verdicts over the sessions (a flip is a
figure that passed in one session and failed in another), each pair figure's coverage (the
share of sessions whose paired interval holds the reference: the figure pooled over every
session, the mean of their log ratios or of their added costs; of the session's own interval,
and of the interval a budget is judged on, widened by the between-session prior), the injected delay's
detection (sessions where the gateway's budget failed), and each figure's spread between
sessions (the standard deviation of its log, or of a pair's log ratio): the priors of
``overheadbench.transport.metrics``.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections import defaultdict
from pathlib import Path

import harness
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PYTEST = ["--overhead-inconclusive=warn", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
"""What each session adds to the harness's command line."""
PAIRS = [
    "benchmarks/test_transport.py",
    "-k",
    "gateway_vs_its_upstream or h2c_vs_http1 or sse_starlette_vs or near_its_budgets",
]
DELAYED = ["benchmarks/test_transport.py::test_gateway_vs_its_upstream[c=1]"]
NEAR = '''
"""Absolute budgets near their figures on the reference machine (validation/transport_pairs.py)."""
import json

import pytest

from overheadbench.http.loadrun import Target

BODY = json.dumps({"message": "hello", "padding": "x" * 60}).encode()


@pytest.mark.transport(p95="600us", rps=2400)
def test_upstream_near_its_budgets(transport, asgi_server):
    transport.load(asgi_server(), concurrency=1, path="/echo", body=BODY, label="upstream c=1")


@pytest.mark.transport(p95="30ms", rps=500)
def test_gateway_near_its_budgets(transport, asgi_server):
    upstream = asgi_server()
    gateway = asgi_server("gateway_app:app", env={"UPSTREAM_URL": upstream.url})
    transport.load(gateway, concurrency=10, path="/v1/chat", body=BODY, label="gateway c=10")
'''


def session(out: Path, name: str, args: list[str], delay_ms: int = 0) -> None:
    """One fresh pytest session, its run written to ``out/name.json`` (kept: a rerun goes on)."""
    env = {"GATEWAY_DELAY_MS": str(delay_ms)}
    ran = harness.session(ROOT, out / f"{name}.json", *PYTEST, *args, env=env, paths=[ROOT / "benchmarks"], reuse=True)
    if ran.wall_s:
        print(f"{name}: {ran.wall_s:.0f} s", flush=True)


def collect(out: Path, sessions: int, select: str | None = None) -> None:
    """``select``: a ``-k`` expression in place of ``PAIRS``' (one pair's sessions after its budget moved)."""
    out.mkdir(parents=True, exist_ok=True)
    near = Path(tempfile.mkdtemp(prefix="overheadbench-near-")) / "test_near_limits.py"  # outside benchmarks/
    near.write_text(NEAR)
    chosen = [*PAIRS[:2], select] if select else PAIRS
    for index in range(sessions):
        session(out, f"aa-{index:02d}", [*chosen, str(near)])
    for index in range(sessions):
        session(out, f"delayed-{index:02d}", DELAYED, delay_ms=1)


def figures(out: Path, prefix: str) -> list[list[dict]]:
    """Each session's transport figures (sessions whose file is missing are left out)."""
    return [json.loads(path.read_text()).get("figures", []) for path in sorted(out.glob(f"{prefix}-*.json"))]


def key(figure: dict) -> tuple[str, str, str, str]:
    test = figure["nodeid"].split("::")[-1]
    return test, figure["row"], figure["metric"], figure.get("measure", "figure")


def rejudged(figure: dict, limit: float | None = None):
    """The figure as this code judges it against its budget (or ``limit``, for one without), from
    the session's own interval, which the runs keep beside the judged one: a changed prior is
    replayed, not measured again."""
    from overheadbench.transport.results import FigureResult
    from overheadbench.transport.verdict import judge

    stored = FigureResult.from_json(figure)
    return judge(stored.nodeid, stored.reading, stored.limit if limit is None else limit)


def net_spread(found: list[dict]) -> float:
    """The figure's spread between sessions beyond what each session's own interval explains:
    the plugin's own rule for learning it from stored runs (``session_log_sd``), so the priors
    measured here are what the plugin would learn from these runs."""
    from overheadbench.engine.changes import interval_estimate, session_log_sd
    from overheadbench.transport.results import FigureResult, compared_values

    readings = [interval_estimate(*compared_values(FigureResult.from_json(f))) for f in found]
    return session_log_sd(readings, math.nan)[0]


def _kind(metric: str, pair: bool = False) -> str:
    """The prior a figure's spread goes to (``SESSION_SD``'s and ``PAIR_SD``'s keys)."""
    if metric in ("ttfe", "events_per_s", "total"):
        return "stream"
    return metric if pair or "cpu" not in metric else "cpu"


def report(out: Path) -> None:
    sessions = figures(out, "aa")
    by_key: dict[tuple[str, str, str, str], list[dict]] = defaultdict(list)
    for run in sessions:
        for figure in run:
            by_key[key(figure)].append(figure)
    print(f"## {len(sessions)} fresh sessions of identical code\n")
    print(
        "| test | figure | budget | pass | inconclusive | fail | flip | value range | coverage: own / judged | "
        "sd between |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    spreads: dict[str, list[float]] = defaultdict(list)
    for (test, row, metric, measure), found in sorted(by_key.items()):
        checks = [f["check"] for f in found]
        values = np.array([c["value"] for c in checks], float)
        statuses = [c["status"] for c in checks]
        change = measure == "max"
        logs = np.log1p(values) if change else np.log(values) if (values > 0).all() else values  # added: relative
        sd = float(np.std(logs, ddof=1)) if len(logs) > 1 and np.isfinite(logs).all() else math.nan
        if measure != "max_abs" and metric != "errors" and math.isfinite(sd):
            kind = f"pair {_kind(metric, pair=True)}" if change else _kind(metric)
            spreads[kind].append(net_spread(found))
        limit = checks[0]["limit"]
        if limit is None and measure == "figure":
            continue  # an unbudgeted absolute figure: its spread only
        if limit is not None:  # judged again from each session's own interval, by this code's priors
            statuses = [rejudged(f).verdict.value for f in found]
        coverage = ""
        if measure != "figure":  # of the session's own interval, and of the interval a budget is judged on
            reference = float(np.expm1(np.mean(np.log1p(values)))) if change else float(values.mean())
            own = [(f["ci"][0], f["ci"][1]) for f in found]
            judged = [(j.check.low, j.check.high) for j in (rejudged(f, math.inf) for f in found)]
            coverage = " / ".join(
                f"{np.mean([low <= reference <= high for low, high in ci]):.0%}" for ci in (own, judged)
            )
        counts = {s: statuses.count(s) for s in ("pass", "inconclusive", "fail")}
        flip = "FLIP" if counts["pass"] and counts["fail"] else "no"
        shown = f"{values.min():.4g}..{values.max():.4g}"
        budget = "" if limit is None else f"{limit:.4g}"
        print(
            f"| {test} | {row}: {metric} {measure} | {budget} | {counts['pass']} | {counts['inconclusive']} | "
            f"{counts['fail']} | {flip} | {shown} | {coverage} | {sd:.3f} |"
        )
    delayed = figures(out, "delayed")
    caught = [any(f["check"]["status"] == "fail" for f in run if f["check"]["limit"] is not None) for run in delayed]
    print(
        f"\n## 1 ms injected into the gateway: detected (its budget failed) in {sum(caught)} of {len(caught)} sessions"
    )
    for run in delayed[:1]:
        for figure in run:
            if figure["check"]["limit"] is not None:
                print(f"  e.g. {figure['check']['sentence']}")
    print("\n## Between-session sd of the log beyond each session's own error (median over the figures of each kind)\n")
    for kind, spread in sorted(spreads.items()):
        finite = [v for v in spread if math.isfinite(v)]  # an idle server's CPU (0) has no log
        print(f"- {kind}: {np.median(finite):.3f} (max {max(finite):.3f}, {len(finite)} figures)")
    print(f"\ncommand: python validation/transport_pairs.py report --out {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("collect", "report"))
    parser.add_argument("--out", type=Path, default=ROOT / "validation/out/pairs")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--select", help="a -k expression of benchmarks/test_transport.py in place of the pairs'")
    args = parser.parse_args()
    collect(args.out, args.sessions, args.select) if args.step == "collect" else report(args.out)


if __name__ == "__main__":
    main()
