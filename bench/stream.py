"""Stream transport figures: one scheduling cycle's wire size and encode time at N nodes (the full
per-node form against the compact one the stream sends), and, with `--server URL --slug SLUG`, the
time a browser waits for a cluster's state over HTTP.

    python bench/stream.py [--nodes 5000] [-o json]
    python bench/stream.py --server http://127.0.0.1:8000 --slug big
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scheduler_core.framework.events import encode_cycle
from tests.big_cluster import one_cycle


def best_ms(encode: Any, runs: int = 5) -> tuple[float, str]:
    best, text = float("inf"), ""
    for _ in range(runs):
        started = time.perf_counter()
        text = encode()
        best = min(best, time.perf_counter() - started)
    return best * 1000, text


def cycle_figures(nodes: int) -> dict[str, Any]:
    events, names = one_cycle(nodes)
    full_ms, full = best_ms(lambda: json.dumps([e.to_dict(names) for e in events]))
    compact_ms, compact = best_ms(lambda: json.dumps(encode_cycle(events, names)))
    return {
        "nodes": nodes,
        "full": {"bytes": len(full), "gzipBytes": len(gzip.compress(full.encode())), "encodeMs": round(full_ms, 1)},
        "compact": {
            "bytes": len(compact),
            "gzipBytes": len(gzip.compress(compact.encode())),
            "encodeMs": round(compact_ms, 1),
        },
    }


def state_figures(server: str, slug: str) -> dict[str, Any]:
    """Time to the first state: GET the state (gzip), decode it; then the same with the ETag (304)."""
    url = f"{server}/api/clusters/{slug}/state"
    started = time.perf_counter()
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request) as response:
        raw = response.read()
        etag = response.headers["ETag"]
        encoding = response.headers.get("Content-Encoding")
    body = json.loads(gzip.decompress(raw) if encoding == "gzip" else raw)
    first = time.perf_counter() - started
    started = time.perf_counter()
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    try:
        urllib.request.urlopen(request).read()
        status = 200
    except urllib.error.HTTPError as exc:
        status = exc.code
    again = time.perf_counter() - started
    return {
        "nodes": len(body["objects"].get("Node", [])),
        "objects": sum(len(v) for v in body["objects"].values()),
        "wireBytes": len(raw),
        "jsonBytes": len(json.dumps(body)),
        "firstStateMs": round(first * 1000, 1),
        "revalidateMs": round(again * 1000, 1),
        "revalidateStatus": status,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--server")
    parser.add_argument("--slug")
    parser.add_argument("-o", dest="output", choices=["text", "json"], default="text")
    args = parser.parse_args()
    report = state_figures(args.server, args.slug) if args.server else cycle_figures(args.nodes)
    print(json.dumps(report, indent=None if args.output == "json" else 2))


if __name__ == "__main__":
    main()
