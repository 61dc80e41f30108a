"""Write objects as `kubectl get … -o json` / `-o yaml` do: one `kind: List`, streamed item by item."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import yaml

from .cluster import SnapshotSpec, generate_objects

__all__ = ["dump_json", "dump_yaml", "write_snapshot"]

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_json(objects: Iterable[dict[str, Any]], out: TextIO) -> None:
    """kubectl's JSON: four-space indentation, the List's keys sorted around its items."""
    out.write('{\n    "apiVersion": "v1",\n    "items": [')
    first = True
    for obj in objects:
        out.write("\n        " if first else ",\n        ")
        out.write(json.dumps(obj, indent=4, ensure_ascii=False).replace("\n", "\n        "))
        first = False
    out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')


def dump_yaml(objects: Iterable[dict[str, Any]], out: TextIO) -> None:
    """kubectl's YAML: block style, two-space indentation, list items at their key's indentation."""
    out.write("apiVersion: v1\nitems:\n")
    for obj in objects:
        text = yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=False, width=10_000)
        out.write("- " + text.rstrip("\n").replace("\n", "\n  ") + "\n")
    out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def write_snapshot(path: str | Path, spec: SnapshotSpec, output: str = "json") -> None:
    """Generate the cluster of `spec` into `path` as JSON or YAML."""
    with Path(path).open("w", encoding="utf-8") as out:
        (dump_json if output == "json" else dump_yaml)(generate_objects(spec), out)
