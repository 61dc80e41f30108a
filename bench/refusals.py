"""How long refusing each hostile document takes, and the heaviest documents we accept.

    .venv/bin/python bench/refusals.py [--repeat 5]

The cases are tests/hostile_cases.py's (the same documents tests/app/test_hostile.py asserts are
refused with a located error). Each is timed through the core's readers, as the CLI, the API server
and the import all read input: a pod document through `load_pod`, a node or workload through
`load_cluster`. The API server's own admission checks (names, NUL characters) run after these and
are not timed here. Then the worst accepted documents: a pod of MAX_YAML_NODES - 20 YAML nodes, and
`pod_at_the_limits()` (1,000 tolerations, 100 terms of each kind) read and explained on a 30-node,
300-pod cluster. Figures are min / median / max over --repeat runs, in milliseconds; run it beside
../shared/bench/limit_probe.py in the same session and report the two side by side.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduler_core.api import limits  # noqa: E402
from scheduler_core.api.loading import InputError, load_cluster, load_pod  # noqa: E402
from scheduler_core.explain import explain  # noqa: E402
from tests.hostile_cases import CASES, Hostile, busy_cluster, pod_at_the_limits  # noqa: E402


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds per run of `action`."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        runs.append((time.perf_counter() - start) * 1000)
    return runs


def refusal(case: Hostile) -> Callable[[], object]:
    """A call that reads the case as its path would and fails unless the document is refused."""
    reader = (
        (lambda: load_pod(case.text, "pod.yaml"))
        if "cli" in case.paths
        else (lambda: load_cluster(case.text, "cluster.yaml"))
    )

    def refuse() -> None:
        try:
            reader()
        except InputError:
            return
        raise SystemExit(f"{case.id}: accepted, expected a refusal")

    return refuse


def row(name: str, runs: list[float]) -> str:
    return f"{name:<34} {min(runs):>9.2f} {statistics.median(runs):>9.2f} {max(runs):>9.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    header = f"{'case':<34} {'min ms':>9} {'median':>9} {'max':>9}"
    print("refused (core readers)")
    print(header)
    totals, server_only = [], []
    for case in CASES:
        try:
            runs = timed(refusal(case), args.repeat)
        except SystemExit:  # the API server's admission refuses it, not the readers
            server_only.append(case.id)
            continue
        totals.append(max(runs))
        print(row(case.id, runs))
    slowest, typical = max(totals), statistics.median(totals)
    print(f"{len(totals)} cases; slowest refusal {slowest:.1f} ms, median of maxima {typical:.2f} ms")
    print(f"refused by the API server's admission (not timed here): {', '.join(server_only)}")

    print("\naccepted (the heaviest valid documents)")
    print(header)
    items = limits.MAX_YAML_NODES - 20
    widest = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nextra: [" + "1, " * items + "]\n"
    widest += "spec: {containers: [{name: c}]}\n"
    print(row(f"pod of {items} YAML nodes", timed(lambda: load_pod(widest, "p.yaml"), args.repeat)))
    heavy = pod_at_the_limits()
    print(row("pod at the limits: read", timed(lambda: load_pod(heavy, "heavy.yaml"), args.repeat)))
    cluster = load_cluster(busy_cluster(), "busy.yaml")
    pod = load_pod(heavy, "heavy.yaml")
    outcome = explain(cluster, pod, seed=1).result
    if outcome is None or outcome.selected is None:
        raise SystemExit(f"pod at the limits: expected it to fit, got {outcome and outcome.message}")
    print(row("pod at the limits: explain (30 n)", timed(lambda: explain(cluster, pod, seed=1), args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
