"""Views: thin wrappers over scheduler_core and the services."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from scheduler_core.api.loading import load_cluster, load_pod
from scheduler_core.explain import explain, result_to_json

SCENARIOS = Path(__file__).parent / "scenarios"


@lru_cache(maxsize=1)
def _demo() -> dict[str, Any]:
    cluster = load_cluster((SCENARIOS / "demo-cluster.yaml").read_bytes(), "demo-cluster.yaml")
    pod = load_pod((SCENARIOS / "demo-pod.yaml").read_bytes(), "demo-pod.yaml")
    return result_to_json(explain(cluster, pod, seed=0))


def home(request: HttpRequest) -> HttpResponse:
    data = _demo()
    nodes = data["nodes"]
    first = next(iter(nodes.values()))
    return render(
        request,
        "clusterviz/home.html",
        {
            "result": data,
            "filter_plugins": [f["plugin"] for f in first["filters"]],
            "rows": [
                {
                    "name": name,
                    "node": node,
                    "selected": name == data["selectedNode"],
                    "scores": sorted(node["scores"].items()),
                }
                for name, node in nodes.items()
            ],
        },
    )
