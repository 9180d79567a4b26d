"""Where an overhead goes, checked against ground truth the suite already has (issue 49, part 2).

    python validation/explain.py [--out DIR]     # ~3 minutes, run alone

The middleware benchmarks measure each layer alone (``test_each_middleware_alone[NAME-sync]``) and
the five-layer stack (``test_full_stack_five_layers[sync]``: metrics, retry, circuit breaker, rate
limiter, timeout). One session with ``--overhead-explain`` per mode (time; count with the bytecode
counter) explains every pair; the stack's explanation is summed per layer (its rows whose
``where`` is that layer's class: ``framework:Metrics.handle``, ``framework:Metrics._record``...),
and set beside what the layer's own pair added per call: its measured framework - baseline in time
mode, its instructions in count mode. Rows of C functions (``builtins:...``) belong to no layer and
are shown apart. Writes DIR/explain.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {  # the stack's layer class, and its own pair's parameter
    "Metrics": "metrics",
    "Retry": "retry",
    "CircuitBreaker": "circuit_breaker",
    "RateLimiter": "rate_limiter",
    "Timeout": "timeout",
}
SELECTION = "(alone and sync and not failures) or (full_stack and sync)"
MODES = {"time": [], "count": ["--overhead-mode=count", "--overhead-counter=bytecode"]}


def run(out: Path, mode: str) -> tuple[dict, float]:
    path = out / f"{mode}.json"
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "benchmarks/test_middleware_overhead.py"]
    command += ["-k", SELECTION, "--overhead-explain", f"--overhead-json={path}", *MODES[mode]]
    done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True, timeout=1800)
    if not path.is_file():
        raise SystemExit(f"the {mode} session wrote no results:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return json.loads(path.read_text()), time.monotonic() - started


def own_added(result: dict, mode: str) -> float:
    """What a layer's own pair added per call: measured time, or counted instructions."""
    if mode == "count":
        counts = result["counts"]
        return statistics.median(counts["framework"]["instructions"]) - statistics.median(
            counts["baseline"]["instructions"]
        )
    return result["framework_s"] - result["baseline_s"]


def table(data: dict, mode: str) -> list[str]:
    results = {r["nodeid"].split("::")[-1]: r for r in data["results"]}
    stack = results["test_full_stack_five_layers[sync]"]
    explanation = stack["explain"]
    per_layer = dict.fromkeys(LAYERS, 0.0)
    unattributed = 0.0
    for row in explanation["rows"]:
        module, _, qualname = row["where"].partition(":")
        layer = qualname.split(".")[0]
        if module == "framework" and layer in per_layer:
            per_layer[layer] += row["added"]
        else:
            unattributed += row["added"]
    scale, unit = (1.0, "instr") if mode == "count" else (1e9, "ns")
    lines = [
        f"### {mode} mode ({'exact' if explanation['exact'] else 'approximate'}; {explanation['note']})",
        "",
        f"| layer | stack, explained ({unit}/call) | share | layer's own pair ({unit}/call) | explained / own |",
        "|---|---|---|---|---|",
    ]
    total = sum(row["added"] for row in explanation["rows"]) or 1.0
    for layer, name in LAYERS.items():
        own = own_added(results[f"test_each_middleware_alone[{name}-sync]"], mode)
        agreement = per_layer[layer] / own if own else float("nan")
        lines.append(
            f"| {layer} | {per_layer[layer] * scale:.1f} | {per_layer[layer] / total:.0%} | {own * scale:.1f} | "
            f"{agreement:.2f} |"
        )
    measured = own_added(stack, mode)
    lines += [
        f"| (other rows: C functions, the test's lambdas) | {unattributed * scale:.1f} | {unattributed / total:.0%} | | |",
        "",
        f"The stack's net explained: {explanation['net'] * scale:.1f} {unit}/call; measured for the stack pair: "
        f"{measured * scale:.1f} {unit}/call.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "validation/out/explain")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = ["# Explained stack against each layer's own pair", ""]
    for mode in MODES:
        data, took = run(args.out, mode)
        lines += [*table(data, mode), "", f"_session: {took:.0f} s_", ""]
    text = "\n".join(lines)
    (args.out / "explain.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
