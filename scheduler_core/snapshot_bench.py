"""The snapshot benchmark: generate a realistic cluster dump, load it and explain one pod.

`python -m scheduler_core bench-snapshot --nodes 1000,5000` writes, for each size, the dump as
`kubectl get … -o json` and `-o yaml` print it (10 pods a node unless `--pods` says otherwise),
then loads each file and explains one pod against it in a fresh process, whose load time, explain
time, CPU time and peak RSS it prints. Figures, not a test: the machine's load shows in them.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .synthetic import SnapshotSpec, pending_pod, write_snapshot

__all__ = ["format_table", "measure", "run"]


def _explain_gpu_pod(cluster: Any) -> tuple[float, str | None]:
    """Explain a training pod whose claim the resourceclaim controller made from the dump's template
    (as the app does before the scheduler sees the pod): seconds, and the node it lands on."""
    from .api.loading import parse_object
    from .dra.templates import claim_from_template
    from .explain import explain
    from .synthetic.dra import TEMPLATE, TEMPLATE_NAMESPACE, pending_gpu_pod

    started = time.perf_counter()
    pod = parse_object(pending_gpu_pod("bench-trainer"), "pod")
    pod.metadata.uid = "bench-trainer-uid"
    template = next(
        t
        for t in cluster.resource_claim_templates
        if t.metadata.name == TEMPLATE and t.metadata.namespace == TEMPLATE_NAMESPACE
    )
    claim = claim_from_template(pod, pod.spec.resource_claims[0], template, "bench", "bench-claim-uid")
    cluster.resource_claims.append(claim)
    explanation = explain(cluster, pod, seed=0)  # type: ignore[arg-type]
    result = explanation.result
    return time.perf_counter() - started, result.selected_node if result else None


def measure(path: str) -> dict[str, Any]:
    """Load the snapshot at `path` and explain one pod (in this process): the figures."""
    from .api.loading import admit_pod, load_kept_cluster_file, parse_object
    from .explain import explain

    started, cpu = time.perf_counter(), time.process_time()
    cluster = load_kept_cluster_file(path)  # as the CLI does: the snapshot is long-lived
    loaded, loaded_cpu = time.perf_counter(), time.process_time()
    pod = parse_object(pending_pod(), "pod")
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    admit_pod(pod, classes, {})  # type: ignore[arg-type]
    explanation = explain(cluster, pod, seed=0)  # type: ignore[arg-type]
    done, done_cpu = time.perf_counter(), time.process_time()
    result = explanation.result
    gpu: dict[str, Any] = {}
    if cluster.resource_slices:
        seconds, node = _explain_gpu_pod(cluster)
        gpu = {"explain_gpu_s": round(seconds, 2), "gpu_selected": node}
    return {
        "bytes": Path(path).stat().st_size,
        "nodes": len(cluster.nodes),
        "pods": len(cluster.pods),
        "skipped": sum(cluster.skipped.values()),
        "load_s": round(loaded - started, 2),
        "load_cpu_s": round(loaded_cpu - cpu, 2),
        "explain_s": round(done - loaded, 2),
        "explain_cpu_s": round(done_cpu - loaded_cpu, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "selected": result.selected_node if result else None,
        "dra_pods": sum(1 for p in cluster.pods if p.spec.resource_claims),
        **gpu,
    }


def _probe(path: str) -> dict[str, Any]:
    """`measure` in a fresh interpreter, so that each peak RSS is its own."""
    code = f"import json, sys; from scheduler_core.snapshot_bench import measure; print(json.dumps(measure({path!r})))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"measuring {path} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def run(
    sizes: list[int],
    pods_per_node: int = 10,
    formats: tuple[str, ...] = ("json", "yaml"),
    directory: str | None = None,
    dra: bool = False,
) -> list[dict[str, Any]]:
    """Generate (or reuse, in `directory`) each dump and measure it; one row per size and format."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(directory or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for nodes in sizes:
            spec = SnapshotSpec(nodes=nodes, pods=nodes * pods_per_node, dra=dra)
            for output in formats:
                path = folder / f"snapshot-{nodes}n-{spec.pods}p{'-dra' if dra else ''}.{output}"
                if not path.exists():
                    started = time.perf_counter()
                    write_snapshot(path, spec, output)
                    print(f"generated {path} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
                row = {"format": output, **_probe(str(path))}
                rows.append(row)
                print(format_table([row], header=not rows[:-1]), end="", flush=True)
    return rows


_COLUMNS = (
    ("nodes", "NODES"),
    ("pods", "PODS"),
    ("format", "FORMAT"),
    ("bytes", "SIZE"),
    ("load_s", "LOAD s"),
    ("load_cpu_s", "(CPU)"),
    ("explain_s", "EXPLAIN s"),
    ("explain_cpu_s", "(CPU)"),
    ("peak_rss_mib", "PEAK RSS MiB"),
    ("dra_pods", "DRA PODS"),
    ("explain_gpu_s", "GPU EXPLAIN s"),
)


def format_table(rows: list[dict[str, Any]], header: bool = True) -> str:
    """Fixed-width rows (sizes in MB)."""
    lines = []
    if header:
        lines.append("  ".join(f"{title:>12}" for _, title in _COLUMNS))
    for row in rows:
        cells = []
        for key, _ in _COLUMNS:
            value = row.get(key, "-")
            cells.append(f"{value / 1e6:>10.0f}MB" if key == "bytes" else f"{value!s:>12}")
        lines.append("  ".join(cells))
    return "\n".join(lines) + "\n"
