"""The app at cluster scale: import time and peak memory of a big dump, and the scheduler's cycle
time per pod with its cache (after) and rebuilt from the store every cycle (before).

    python bench/app_scale.py import --nodes 5000 --pods-per-node 10
    python bench/app_scale.py cycles --nodes 1000 5000 --pods-per-node 10 --pods 20
    python bench/app_scale.py scaleup --nodes 1000 5000 --pods-per-node 1 --replicas 1000

`scaleup` serves the generated cluster with uvicorn (the instant pace), opens a WebSocket follower,
scales a Deployment from 0 to `--replicas` over HTTP and prints the seconds until every replica is
bound and until every one is Running in the store (polled from the database), until the follower
has received every one Running, the stream's message count and largest message, the server's CPU
seconds, and whether the follower saw any change twice or out of order.

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
from collections import Counter
from pathlib import Path
from typing import Any

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


SCALE_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
"""


def bench_scaleup(nodes: int, per_node: int, replicas: int, workdir: Path) -> dict[str, Any]:
    import sqlite3
    import threading
    import urllib.request

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from bench import load_procs

    db = workdir / f"scaleup-{nodes}.sqlite3"
    env = load_procs.server_env(db, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    dump = workdir / f"dump-{nodes}.json"
    dump.write_bytes(dump_json(nodes, per_node))
    setup = (
        "from clusterviz import imports, services\n"
        "from clusterviz.controllers.runner import reconcile\n"
        "from clusterviz.models import Cluster\n"
        f"imports.run(imports.new_job('big', 'dump.json'), open({str(dump)!r}, 'rb').read())\n"
        "cluster = Cluster.objects.get(slug='big')\n"
        f"services.create_from_yaml(cluster, {SCALE_DEPLOYMENT!r}, 'kubectl')\n"
        "reconcile(cluster)\n"
        "cluster.refresh_from_db()\n"
        "print(cluster.owner_token, cluster.resource_version)\n"
    )
    token, rv = load_procs.django_script(env, setup, timeout=1800).split()[-2:]
    registry = load_procs.Registry(workdir)
    try:
        server = load_procs.spawn_server(registry, "uvicorn", env)
        load_procs.wait_ready(server, timeout=60)

        def open_stream(since: str) -> Any:
            return connect(
                f"ws://127.0.0.1:{server.port}/ws/clusters/big/?resourceVersion={since}&key={token}",
                origin=server.base_url,  # type: ignore[arg-type]
                proxy=None,
                max_size=None,
                open_timeout=600,
            )

        streams = [open_stream(rv)]
        streams[0].recv(timeout=600)  # `resumed`: the server's loop has the cluster (its cache built)
        follower: dict[str, Any] = {
            "running": set(),
            "messages": 0,
            "largest": 0,
            "rvs": [],
            "done": None,
            "types": Counter(),
            "closes": [],
        }

        def read() -> None:
            """As the page does: a stream closed with 4429 (fell behind) resumes from the last change."""
            while follower["done"] is None:
                try:
                    text = streams[-1].recv(timeout=600)
                except ConnectionClosed as closed:
                    follower["closes"].append(closed.rcvd.code if closed.rcvd else None)
                    if follower["done"] is not None or not follower["rvs"] or len(follower["closes"]) > 20:
                        return
                    streams.append(open_stream(str(follower["rvs"][-1])))
                    continue
                except Exception:
                    return
                follower["messages"] += 1
                follower["largest"] = max(follower["largest"], len(text))
                message = json.loads(text)
                follower["types"][message.get("type")] += 1
                changes = message["changes"] if message.get("type") == "watch.batch" else [message]
                for change in changes:
                    if change.get("type") != "watch":
                        continue
                    follower["rvs"].append(int(change["resourceVersion"]))
                    pod = change["object"]
                    running = pod.get("status", {}).get("phase") == "Running"
                    if change["kind"] == "Pod" and running and pod["metadata"]["name"].startswith("web-"):
                        follower["running"].add(pod["metadata"]["name"])
                if len(follower["running"]) >= replicas:
                    follower["done"] = time.perf_counter()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        cpu_before = load_procs.cpu_seconds(server.pid)
        request = urllib.request.Request(
            f"{server.base_url}/api/clusters/big/actions",
            data=json.dumps({"action": "scale", "name": "web", "replicas": replicas}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
            method="POST",
        )
        started = time.perf_counter()
        with load_procs.NO_PROXY.open(request, timeout=60) as response:
            assert response.status == 200
        bound_at = running_at = None
        query = (
            "select sum(node_name != ''), sum(json_extract(body, '$.status.phase') = 'Running') "
            "from clusterviz_kubeobject where kind = 'Pod' and name like 'web-%'"
        )
        deadline = started + 1800
        while time.perf_counter() < deadline and (running_at is None or follower["done"] is None):
            with sqlite3.connect(db, timeout=30) as connection:
                bound, running = connection.execute(query).fetchone()
            now = time.perf_counter()
            if bound_at is None and (bound or 0) >= replicas:
                bound_at = now
            if running_at is None and (running or 0) >= replicas:
                running_at = now
            time.sleep(0.1)
        cpu = load_procs.cpu_seconds(server.pid) - cpu_before
        warnings = [line for line in server.log_tail(200).splitlines() if "WARNING" in line or "ERROR" in line]
        rvs = follower["rvs"]
        follower["done"] = follower["done"] or -1
        streams[-1].close()
    finally:
        registry.stop_all()

    def since(moment: float | None) -> float | None:
        return None if moment is None or moment < 0 else round(moment - started, 2)

    return {
        "nodes": nodes,
        "replicas": replicas,
        "boundSeconds": since(bound_at),
        "runningInStoreSeconds": since(running_at),
        "followerHasAllRunningSeconds": since(follower["done"]),
        "streamMessages": follower["messages"],
        "messageTypes": dict(follower["types"]),
        "watchEvents": len(rvs),
        "largestMessageKiB": round(follower["largest"] / 1024, 1),
        "followerInOrderOnce": rvs == sorted(set(rvs)),
        "followerCloses": follower["closes"],
        "serverCpuSeconds": round(cpu, 1),
        "serverWarnings": warnings[:5],
        "loadAverage": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["import", "cycles", "scaleup"])
    parser.add_argument("--nodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--pods-per-node", type=int, default=10)
    parser.add_argument("--pods", type=int, default=20, help="pending pods timed per mode (cycles)")
    parser.add_argument("--replicas", type=int, default=1000, help="the Deployment's scale-up (scaleup)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clusterviz-bench-") as tmp:
        for nodes in args.nodes:
            if args.what == "import":
                figures = bench_import(nodes, args.pods_per_node, Path(tmp))
            elif args.what == "scaleup":
                figures = bench_scaleup(nodes, args.pods_per_node, args.replicas, Path(tmp))
            else:
                figures = bench_cycles(nodes, args.pods_per_node, args.pods, Path(tmp))
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
