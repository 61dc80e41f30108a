"""Capacity queries at cluster scale: load a generated dump, then `drain` and `fit` on it.

    .venv/bin/python -m bench.capacity [--nodes 5000] [--pods 50000] [--drain 500] [--fit 5000] [--dir DIR]

Prints, in one run (so the machine's load cancels out): a bare `json.load` of the dump, the load
(read, validate, build the scheduler's table), a drain of the first `--drain` nodes (cordon, kubectl's
filters, budgets, every evicted pod rescheduled or explained), a fit of up to `--fit` copies of a
Deployment's pod, and the numpy probe's pods/s (bench/limit_probe.py, a copy of the shared probe)
with each query's pods per second beside it. The figures are appended to bench/capacity_results.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from scheduler_core.api.loading import load_cluster_file
from scheduler_core.api.workloads import WorkloadIndex
from scheduler_core.capacity import DrainOptions, NodeChoice, drain, fit, workload_template
from scheduler_core.explain import build_table

RESULTS = Path(__file__).with_name("capacity_results.md")
PROBE = Path(__file__).with_name("limit_probe.py")


def _dump(nodes: int, pods: int, directory: Path) -> Path:
    path = directory / f"cluster-{nodes}-{pods}.json"
    if not path.exists():
        with path.open("wb") as out:
            subprocess.run(
                [sys.executable, "-m", "scheduler_core", "generate", "--nodes", str(nodes), "--pods", str(pods)],
                stdout=out,
                check=True,
            )
    return path


def _bare_load(path: Path) -> float:
    """Seconds reading and a bare `json.loads` of the dump take (in a child process)."""
    code = (
        "import json, sys, time; t = time.perf_counter();"
        " json.loads(open(sys.argv[1], 'rb').read()); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _probe(nodes: int) -> float:
    out = subprocess.run([sys.executable, str(PROBE), str(nodes), "2000"], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _timed(action):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = action()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--drain", type=int, default=500, help="drain this many nodes")
    parser.add_argument("--fit", type=int, default=5000, help="fit up to this many copies")
    parser.add_argument("--dir", default="/tmp", help="where the generated dump is kept (and reused)")
    args = parser.parse_args(argv)
    path = _dump(args.nodes, args.pods, Path(args.dir))
    size_mb = path.stat().st_size / 1e6
    probe_before = _probe(args.nodes)
    bare_wall = _bare_load(path)  # in a process of its own: this one's peak memory is the load's
    cluster, load_wall, _ = _timed(lambda: load_cluster_file(str(path)))
    table, table_wall, _ = _timed(lambda: build_table(cluster))
    load_total = load_wall + table_wall
    load_peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workloads = WorkloadIndex(cluster.workloads)
    names = sorted(table.names)[: args.drain]
    drained, drain_wall, drain_cpu = _timed(
        lambda: drain(table, NodeChoice(tuple(names)), workloads, DrainOptions(ignore_daemonsets=True, force=True))
    )
    moved = len(drained.placements)
    deployment = next(w for w in cluster.workloads if w.kind == "Deployment")
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    template = workload_template(
        f"deployment/{deployment.metadata.name}",
        deployment.metadata.namespace or "default",
        cluster.workloads,
        classes,
        {},
    )
    fitted, fit_wall, fit_cpu = _timed(lambda: fit(build_table(cluster), template, limit=args.fit))
    probe_after = _probe(args.nodes)
    probe = (probe_before + probe_after) / 2
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load_avg = os.getloadavg()[0]
    drain_rate = moved / drain_cpu if drain_cpu else 0.0
    fit_rate = fitted.count / fit_cpu if fit_cpu else 0.0
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {args.nodes:,} nodes / {args.pods:,} pods"
        f" ({size_mb:.0f} MB JSON) · load {load_avg:.1f}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| bare `json.load` | {bare_wall:.2f} s |",
        f"| load + table (read, validate, build) | {load_total:.2f} s = {load_total / bare_wall:.1f}x the bare load |",
        f"| peak memory: the load | {load_peak_mib:,.0f} MiB (with the queries' own tables: {peak_mib:,.0f} MiB) |",
        f"| drain {len(names)} nodes: {drained.evicted:,} evicted, {moved - len(drained.pending):,} rescheduled, "
        f"{len(drained.pending):,} Pending, {len(drained.refused)} refused | {drain_wall:.2f} s wall,"
        f" {drain_cpu:.2f} s CPU"
        f" = {drain_wall / load_total:.2f}x the load; {drain_rate:,.0f} pods/cpu-s |",
        f"| fit up to {args.fit:,} copies of {template.source}: {fitted.count:,} fit | {fit_wall:.2f} s wall, "
        f"{fit_cpu:.2f} s CPU = {fit_wall / load_total:.2f}x the load; {fit_rate:,.0f} pods/cpu-s |",
        f"| numpy probe (bench/limit_probe.py, {args.nodes:,} nodes) | {probe:,.0f} pods/s (before {probe_before:,.0f},"
        f" after {probe_after:,.0f}) |",
        f"| ratio to the probe | drain {drain_rate / probe:.2f}, fit {fit_rate / probe:.2f} |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not RESULTS.exists():
        RESULTS.write_text("# Capacity query benchmark\n\nWritten by `python -m bench.capacity`; newest last.\n\n")
    with RESULTS.open("a") as out:
        out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
