"""The sample conformance cases (upstream's answers), run through the CLI's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scheduler_core.__main__ import main
from tests.conformance.runner import CASES, CORPUS_VERSION, case_version, mismatches, run_cli, write_inputs

CASE_FILES = sorted(CASES.glob("*.yaml"))


def _explain_json(
    cluster: Path, pod: Path, capsys: pytest.CaptureFixture[str], seed: int = 0, version: str = CORPUS_VERSION
) -> dict:
    argv = ["explain", "--cluster", str(cluster), "--pod", str(pod), "--seed", str(seed), "--version", version]
    code = main([*argv, "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[f.stem for f in CASE_FILES])
def test_case(case_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = yaml.safe_load(case_file.read_text())
    cluster, pod = write_inputs(case, tmp_path)
    got = _explain_json(cluster, pod, capsys, version=case_version(case))
    assert mismatches(case, got) == []


def test_there_are_cases() -> None:
    assert len(CASE_FILES) >= 56


def test_cli_in_a_real_process(tmp_path: Path) -> None:
    case = yaml.safe_load((CASES / "msg-all-nodes-insufficient-cpu.yaml").read_text())
    cluster, pod = write_inputs(case, tmp_path)
    got = run_cli(cluster, pod)
    assert mismatches(case, got) == []
    assert got["scheduled"] is False


def test_tie_is_broken_by_the_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = yaml.safe_load((CASES / "e2e-tie-is-random.yaml").read_text())
    cluster, pod = write_inputs(case, tmp_path)
    picks = {_explain_json(cluster, pod, capsys, seed=seed)["selectedNode"] for seed in range(30)}
    assert picks == {"n1", "n2", "n3"}
    again = {_explain_json(cluster, pod, capsys, seed=7)["selectedNode"] for _ in range(3)}
    assert len(again) == 1
