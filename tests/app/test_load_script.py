"""Smoke test of the load benchmark (bench/load.py) with tiny numbers, so that it cannot rot: it starts
its own server processes, runs every scenario, reports figures, and leaves no process behind, even
when interrupted."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tools import missing_tool

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "load.py"
TINY = [
    "--followers", "3", "--actions", "6", "--clusters", "2", "--cluster-followers", "2",
    "--cluster-actions", "6", "--reconnectors", "2", "--reconnect-pause", "0.05", "--spacing", "0.03",
    "--quiet-seconds", "0.3",
]  # fmt: skip


def _env() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "SQLITE_PATH") and not key.startswith(("PYTEST", "COV_"))
    }


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state == "Z"


def _run(mode: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--mode", mode, *TINY, "-o", "json"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.fixture(scope="module")
def single_report() -> dict[str, Any]:
    return _run("single")


def _load_module() -> Any:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_load", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_load"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return module


@pytest.mark.parametrize("mode", ["single", "redis"])
def test_runs_every_scenario_and_reports_figures(mode: str, request: pytest.FixtureRequest) -> None:
    if mode == "redis" and shutil.which("redis-server") is None:
        missing_tool("redis-server is not installed (apt-get install -y redis-server)")
    report = request.getfixturevalue("single_report") if mode == "single" else _run(mode)
    assert report["passed"] is True
    assert (report["mode"], report["servers"]) == (mode, 2 if mode == "redis" else 1)
    by_name = {r["scenario"]: r for r in report["scenarios"]}
    assert sorted(by_name) == ["A", "B", "C"]
    a, b, c = by_name["A"], by_name["B"], by_name["C"]
    assert (a["followers"], a["clusters"], b["followers"], b["clusters"]) == (3, 1, 4, 2)
    for r in (a, b, c):
        assert r["actionsOk"] == r["actionsPlanned"] > 0
        assert r["presenterChanges"] == r["actionsOk"]  # each action writes exactly one change
        assert r["controllerChanges"] > 0  # the created pod is scheduled and started
        per_cluster = r["followers"] // r["clusters"]  # the same in every cluster (same actions, same lesson)
        assert r["deliveriesExpected"] == per_cluster * r["changes"]
        assert r["delivered"] == r["deliveriesExpected"]
        assert (r["missed"], r["duplicates"], r["problems"]) == (0, 0, [])
        assert r["latencyDirectMs"]["n"] == per_cluster * r["presenterChanges"]
        assert 0 < r["latencyDirectMs"]["p50"] <= r["latencyDirectMs"]["p99"] <= r["latencyDirectMs"]["max"]
        servers = [p for p in r["processes"] if p["name"] == "uvicorn"]
        assert len(servers) == report["servers"]
        assert all(p["alive"] and p["cpuSeconds"] >= 0 and p["peakRssMiB"] > 10 for p in servers)
    assert (c["reconnects"], c["resumed"], c["snapshotFallbacks"]) == (2, 2, 0)
    pids = {p["pid"] for r in report["scenarios"] for p in r["processes"]}
    assert all(_gone(pid) for pid in pids), "the benchmark stopped everything it started"


def test_table_output_and_bad_arguments(single_report: dict[str, Any]) -> None:
    text = _load_module().table(single_report)
    assert "Scenario A: classroom: 1 cluster, 3 followers, 6 actions" in text
    assert re.search(r"watch deliveries +(\d+) / \1 +missed 0 +duplicates 0", text)
    assert "planned reconnects        2: resumed 2" in text
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), "--scenarios", "X"], cwd=REPO, env=_env(), capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "--scenarios" in bad.stderr


def test_interrupt_stops_everything_it_started() -> None:
    """Ctrl-C in the middle of a scenario: exit 130, and the servers and redis-server are gone."""
    argv = [sys.executable, str(SCRIPT), "--followers", "20", "--actions", "600", "--scenarios", "A"]
    if shutil.which("redis-server"):
        argv += ["--mode", "redis"]
    bench = subprocess.Popen(
        argv, cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert bench.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = bench.stderr.readline()
            lines.append(line)
            if "presenters acting" in line or not line:
                break
        pids = [int(pid) for line in lines for pid in re.findall(r"pid (\d+)", line)]
        assert pids, "".join(lines)
        assert "scenario A: 20 followers connected, presenters acting" in lines[-1], "".join(lines)
        bench.send_signal(signal.SIGINT)
        _, err = bench.communicate(timeout=150)  # its own bounds: tasks cancelled, each process 8 s + 5 s
        assert bench.returncode == 130, err
        assert "interrupted" in err
        assert all(_gone(pid) for pid in pids)
        redis = [int(pid) for pid in re.findall(r"redis-server pid (\d+)", "".join(lines) + err)]
        assert all(_gone(pid) for pid in redis)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait(10)


def test_the_prediction_scenario_runs_and_reports_figures() -> None:
    """Scenario P with 4 students who join by the code on the presenter's page: every one answers once
    (a second answer refused), the presenter gets tallies and nobody else does, every board gets the
    reveal."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--scenarios", "P", "--followers", "4", "--answer-window", "0.2", "-o", "json"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    (p,) = json.loads(result.stdout)["scenarios"]
    assert (p["scenario"], p["followers"], p["answers"], p["problems"]) == ("P", 4, 4, [])
    assert p["outcome"] == "node02" and p["score"] == {"right": 1, "answered": 4}  # picks go round the 4 choices
    assert p["talliesToPresenter"] >= 2 and p["talliesToFollowers"] == 0
    for figure in ("joinMs", "questionDeliveryMs", "answerAckMs", "tallyDeliveryMs", "revealDeliveryMs"):
        assert p[figure]["n"] == 4 and 0 < p[figure]["p50"] <= p[figure]["max"]
    assert "Scenario P: prediction round: 4 followers" in _load_module().table({**json.loads(result.stdout)})


IMPORT_TINY = ["--scenarios", "A", "--followers", "3", "--actions", "6", "--spacing", "0.03", "--quiet-seconds", "0.3"]


def test_scenario_a_with_an_import_running_reports_the_import() -> None:
    """`--import-nodes 20`: a 20-node dump is imported over HTTP during scenario A; its outcome,
    duration and CPU (the server's, its worker process's) are reported beside A's figures."""
    argv = [*IMPORT_TINY, "--import-nodes", "20", "--import-pods-per-node", "2", "-o", "json"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *argv], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    report = json.loads(result.stdout)
    (a,) = report["scenarios"]
    assert a["title"] == "classroom: 1 cluster, 3 followers, 6 actions, while 20 nodes are imported"
    assert a["delivered"] == a["deliveriesExpected"] and a["problems"] == []
    imported = a["import"]
    assert (imported["state"], imported["stored"], imported["total"]) == ("done", 60, 60)  # 20 nodes, 40 pods
    assert 0 < imported["uploadSeconds"] <= imported["seconds"]
    assert imported["atActionsEnd"]["state"] in ("running", "done")
    # the import's worker process used CPU of its own (it starts a Python with Django: well over 0.1 s)
    assert imported["workerCpuSeconds"] > 0.1 and imported["serverCpuSeconds"] > 0
    text = _load_module().table(report)
    assert "import during the run     20 nodes x 2 pods" in text and "done, 60 / 60 stored" in text
    assert f"import worker process {imported['workerCpuSeconds']} s" in text


def test_a_refused_import_fails_the_run() -> None:
    """The server refuses the dump (larger than its CLUSTERVIZ_IMPORT_MAX_BYTES): the run fails, saying why."""
    env = {**_env(), "CLUSTERVIZ_IMPORT_MAX_BYTES": "1000"}
    argv = [*IMPORT_TINY, "--import-nodes", "20", "-o", "json"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    report = json.loads(result.stdout)
    assert report["passed"] is False
    (a,) = report["scenarios"]
    assert a["import"]["state"] is None
    assert a["problems"] == [a["import"]["problems"][0]]
    assert a["problems"][0].startswith("the import was refused: 413 ")
