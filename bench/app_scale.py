"""The app at cluster scale: import time and peak memory of a big dump, and the scheduler's cycle
time per pod with its cache (after) and rebuilt from the store every cycle (before).

    python bench/app_scale.py import --nodes 5000 --pods-per-node 10
    python bench/app_scale.py cycles --nodes 1000 5000 --pods-per-node 10 --pods 20

Each run uses a fresh SQLite file in a temporary directory (the default database) and prints one
line of figures per measurement. `import` runs `manage.py import_cluster` in a child process and
reports its wall time and peak RSS; `cycles` imports the cluster, adds pending pods and times
`schedule_next` (one full cycle: pick, schedule with every plugin on every node, bind, events).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cluster_dump import dump_json  # noqa: E402


def _env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(db), DJANGO_SETTINGS_MODULE="clusterviz.settings", LOG_LEVEL="ERROR")
    return env


def bench_import(nodes: int, per_node: int, workdir: Path) -> dict[str, float]:
    dump = workdir / "dump.json"
    dump.write_bytes(dump_json(nodes, per_node))
    env = _env(workdir / "db.sqlite3")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "import_cluster", "big", str(dump)],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "nodes": nodes,
        "pods": nodes * per_node,
        "dumpMiB": round(dump.stat().st_size / 2**20, 1),
        "seconds": round(seconds, 1),
        "objectsPerSecond": round(nodes * (per_node + 1) / seconds),
        "peakRssMiB": round(peak, 1),
    }


def bench_cycles(nodes: int, per_node: int, pods: int, workdir: Path) -> dict[str, float]:
    os.environ.update(_env(workdir / f"cycles-{nodes}.sqlite3"))
    import django

    django.setup()
    from django.core.management import call_command

    from clusterviz import imports, scheduler_cache, services
    from clusterviz.controllers import scheduler
    from clusterviz.models import Cluster

    call_command("migrate", verbosity=0)
    slug = f"c{nodes}"
    imports.run(imports.new_job(slug, "dump.json"), dump_json(nodes, per_node))
    cluster = Cluster.objects.get(slug=slug)
    pod = (
        "kind: Pod\napiVersion: v1\nmetadata: {{name: new-{k}}}\n"
        "spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 100m}}}}}}]}}\n"
    )
    services.create_from_yaml(cluster, "---\n".join(pod.format(k=k) for k in range(2 * pods)), "kubectl")

    def timed(rebuild_each_cycle: bool) -> list[float]:
        times = []
        scheduler_cache.forget(cluster.pk)
        scheduler_cache.synced(cluster)  # the cache is built once, at lease acquisition (not timed)
        for _ in range(pods):
            if rebuild_each_cycle:
                scheduler_cache.forget(cluster.pk)
            started = time.perf_counter()
            assert scheduler.schedule_next(cluster)
            times.append((time.perf_counter() - started) * 1000)
        return times

    before = timed(rebuild_each_cycle=True)
    after = timed(rebuild_each_cycle=False)
    return {
        "nodes": nodes,
        "boundPods": nodes * per_node,
        "beforeMsPerPod": round(statistics.median(before), 1),
        "afterMsPerPod": round(statistics.median(after), 1),
        "speedup": round(statistics.median(before) / statistics.median(after), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["import", "cycles"])
    parser.add_argument("--nodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--pods-per-node", type=int, default=10)
    parser.add_argument("--pods", type=int, default=20, help="pending pods timed per mode (cycles)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clusterviz-bench-") as tmp:
        for nodes in args.nodes:
            if args.what == "import":
                figures = bench_import(nodes, args.pods_per_node, Path(tmp))
            else:
                figures = bench_cycles(nodes, args.pods_per_node, args.pods, Path(tmp))
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
