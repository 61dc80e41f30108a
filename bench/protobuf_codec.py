"""What the protobuf encoding costs the API server (clusterviz/kube_api/protobuf.py): reading a
Deployment as `kubectl create deployment` sends it, and writing a PodList of N pods as a typed
client's list receives it, beside the JSON encoding of the same list.

    .venv/bin/python bench/protobuf_codec.py [--pods 1000] [--repeat 5]

Figures are min / median / max in milliseconds; run it beside ../shared/bench/limit_probe.py in the
same session and report the two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clusterviz.settings")
import django  # noqa: E402

django.setup()  # the codec's errors are the API server's Status objects

from clusterviz.kube_api.protobuf import decode, encode  # noqa: E402


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        runs.append((time.perf_counter() - start) * 1000)
    return runs


def pod(index: int) -> dict:
    return {
        "metadata": {"name": f"web-{index:05d}", "namespace": "default", "labels": {"app": "web"}, "uid": f"u{index}"},
        "spec": {
            "nodeName": f"node{index % 50:03d}",
            "containers": [
                {"name": "web", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
            ],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
        },
        "status": {"phase": "Running", "podIP": "10.244.0.5", "startTime": "2026-12-07T01:00:00Z"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod(0)["spec"]},
        },
    }
    body = encode(deployment)
    assert body is not None
    listed = {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "7"},
        "items": [pod(i) for i in range(args.pods)],
    }
    rows = [
        (
            "read a Deployment (kubectl create deployment)",
            timed(lambda: decode(body, "Deployment", "apps/v1"), args.repeat),
        ),
        (f"write a PodList of {args.pods} pods as protobuf", timed(lambda: encode(listed), args.repeat)),
        ("the same list as JSON", timed(lambda: json.dumps(listed, separators=(",", ":")), args.repeat)),
    ]
    print(f"{'what':<52} {'min':>8} {'median':>8} {'max':>8}  (ms)")
    for what, runs in rows:
        print(f"{what:<52} {min(runs):8.2f} {statistics.median(runs):8.2f} {max(runs):8.2f}")


if __name__ == "__main__":
    main()
