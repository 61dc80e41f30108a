"""Turn a conformance case into CLI inputs and compare the CLI's JSON with the expected answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

CASES = Path(__file__).parent / "cases"


def write_inputs(case: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    items = [
        *(case.get("priorityClasses") or []),
        *case["nodes"],
        *(case.get("pods") or []),
        *(case.get("objects") or []),  # e.g. PodDisruptionBudgets, passed through unchanged
    ]
    cluster = folder / "cluster.yaml"
    pod = folder / "pod.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    pod.write_text(yaml.safe_dump(case["pod"]))
    return cluster, pod


# The version the corpus pins (its README): cases carry no version, so the runner names it.
CORPUS_VERSION = "1.34"


def case_version(case: dict[str, Any]) -> str:
    """The version a case's answer belongs to (`version:` in the case, else the corpus' v1.34)."""
    return str(case.get("version") or CORPUS_VERSION)


def run_cli(cluster: Path, pod: Path, seed: int = 0, version: str = CORPUS_VERSION) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scheduler_core",
            "explain",
            "--cluster",
            str(cluster),
            "--pod",
            str(pod),
            "--seed",
            str(seed),
            "--version",
            version,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def mismatches(case: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Every difference between the expected answer and the CLI's JSON."""
    expect = case["expect"]
    problems: list[str] = []
    if "prefilter" in expect:
        want = expect["prefilter"]
        have = got["preFilter"] or {}
        if (
            have.get("plugin") != want["plugin"]
            or ", ".join(have.get("reasons", [])) != want["reason"]
            or have.get("code") != want["code"]
        ):
            problems.append(f"preFilter: want {want}, got {have}")
    for node, want in (expect.get("filters") or {}).items():
        have = got["nodes"][node]
        if want["plugin"] == "pass":
            if not have["feasible"] or have["filter"] is not None:
                problems.append(f"{node}: want pass, got {have['filter']}")
            continue
        status = have["filter"] or {}
        reason = ", ".join(status.get("reasons", []))
        if status.get("plugin") != want["plugin"] or reason != want["reason"] or status.get("code") != want["code"]:
            problems.append(f"{node}: want {want['plugin']} {want['code']} {want['reason']!r}, got {status}")
        if "reasons" in want and status.get("reasons") != want["reasons"]:
            problems.append(f"{node}: want reasons {want['reasons']}, got {status.get('reasons')}")
    for node, plugins in (expect.get("scores") or {}).items():
        for plugin, value in plugins.items():
            have = got["nodes"][node]["scores"].get(plugin)
            if have is None or have["normalized"] != value:
                problems.append(f"{node} {plugin}: want {value}, got {have}")
    # The corpus leaves volumes out of scope and omits VolumeBinding, whose PreScore returns Skip
    # for every pod in v1.34 (StorageCapacityScoring off): it is implied in every expected list.
    # (from v1.37 VolumeBinding scores a pod's claims: a case giving its score says so)
    scores_volumes = any("VolumeBinding" in plugins for plugins in (expect.get("scores") or {}).values())
    implied = set() if scores_volumes else {"VolumeBinding"}
    skipped = sorted({*(expect.get("skipped_score_plugins") or []), *implied})
    if "skipped_score_plugins" in expect and skipped != sorted(got["skippedScorePlugins"]):
        problems.append(f"skipped: want {expect['skipped_score_plugins']}, got {got['skippedScorePlugins']}")
    for node, total in (expect.get("totals") or {}).items():
        if got["nodes"][node]["total"] != total:
            problems.append(f"{node} total: want {total}, got {got['nodes'][node]['total']}")
    if "selected" in expect and got["selectedNode"] != expect["selected"]:
        problems.append(f"selected: want {expect['selected']}, got {got['selectedNode']}")
    if "tied_top" in expect and sorted(expect["tied_top"]) != sorted(got["tiedTop"]):
        problems.append(f"tiedTop: want {expect['tied_top']}, got {got['tiedTop']}")
    if "nominated_node" in expect and got["nominatedNode"] != expect["nominated_node"]:
        problems.append(f"nominatedNode: want {expect['nominated_node']}, got {got['nominatedNode']}")
    if "victims" in expect and got["victims"] != expect["victims"]:
        problems.append(f"victims: want {expect['victims']}, got {got['victims']}")
    if "message" in expect and got["message"] != expect["message"]:
        problems.append(f"message:\n  want {expect['message']!r}\n  got  {got['message']!r}")
    return problems
