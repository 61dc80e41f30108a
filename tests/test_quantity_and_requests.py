"""Quantity parsing and pod resource requests (what NodeResourcesFit and the scorers read)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from scheduler_core.api.loading import admit_pod
from scheduler_core.api.objects import Pod
from scheduler_core.api.quantity import MAX_INT64, QuantityError, parse_quantity
from scheduler_core.framework.pod_info import PodInfo, pod_requests

Mi = 1024 * 1024

# --- Quantity parsing ------------------------------------------------------------------------
# Upstream: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go TestQuantityParse
# (inputs and values), TestParseQuantityString ("." is a number), and quantity.go ParseQuantity
# (non-zero values round up to a whole nano unit; the magnitude is capped at 2^63-1).
PARSE_CASES = [
    ("0", Fraction(0)),
    ("0Mi", Fraction(0)),
    ("1", Fraction(1)),
    ("1Ki", Fraction(1024)),
    ("7Mi", Fraction(7 * Mi)),
    ("6Gi", Fraction(6 * 2**30)),
    ("5Ti", Fraction(5 * 2**40)),
    ("4Pi", Fraction(4 * 2**50)),
    ("3Ei", Fraction(3 * 2**60)),
    ("5n", Fraction(5, 10**9)),
    ("4u", Fraction(4, 10**6)),
    ("3m", Fraction(3, 1000)),
    ("8k", Fraction(8000)),
    ("7M", Fraction(7 * 10**6)),
    ("6G", Fraction(6 * 10**9)),
    ("5T", Fraction(5 * 10**12)),
    ("2P", Fraction(2 * 10**15)),
    ("1E", Fraction(10**18)),
    ("1E-3", Fraction(1, 1000)),
    ("1e3", Fraction(1000)),
    ("12E6", Fraction(12 * 10**6)),
    ("1.5e-3", Fraction(15, 10**4)),
    ("1.3E+6", Fraction(1_300_000)),
    ("0.5", Fraction(1, 2)),
    (".5", Fraction(1, 2)),
    (".001", Fraction(1, 1000)),
    ("1.", Fraction(1)),
    ("1.G", Fraction(10**9)),
    ("100.035k", Fraction(100035)),
    ("100.035Ki", Fraction(10243584, 100)),
    ("0.5Mi", Fraction(Mi // 2)),
    ("+1", Fraction(1)),
    ("-1.5", Fraction(-3, 2)),
    ("3.001n", Fraction(4, 10**9)),  # "Things that saturate/round"
    ("0.0000000001", Fraction(1, 10**9)),
    ("0.00000012345", Fraction(124, 10**9)),
    ("0.000000000001Ki", Fraction(2, 10**9)),
    ("9Ei", Fraction(MAX_INT64)),
    ("9223372036854775807Ki", Fraction(MAX_INT64)),
    (".", Fraction(0)),  # parseQuantityString reads "." as 0
    ("Mi", Fraction(0)),  # no digits: num "0" with a valid suffix
    (" 2Gi ", Fraction(2 * 2**30)),  # Quantity.UnmarshalJSON trims spaces before parsing
    (250, Fraction(250)),  # YAML numbers
    (0.5, Fraction(1, 2)),
]


@pytest.mark.parametrize(("text", "amount"), PARSE_CASES, ids=[str(t) for t, _ in PARSE_CASES])
def test_parse_quantity(text: object, amount: Fraction) -> None:
    assert parse_quantity(text).amount == amount


# quantity_test.go TestQuantityParse `invalid` list, plus the brief's examples.
INVALID = ["1x", "", "1.2.3", "--1", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-"]
INVALID += ["1e", "1K", "1 2"]


@pytest.mark.parametrize("text", INVALID)
def test_parse_quantity_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert str(err.value) == f'"{text}" is not a valid quantity'


# MilliValue() / Value() round up (quantity.go ScaledValue with RoundUp semantics).
VALUE_CASES = [
    ("0.0001", 1, 1),  # 0.0001 cpu -> 1m
    ("500m", 500, 1),  # memory "500m" -> 1 byte
    ("1500m", 1500, 2),
    ("100m", 100, 1),
    ("1Ki", 1024000, 1024),
    ("1.0001m", 2, 1),
    ("0", 0, 0),
    ("9Ei", MAX_INT64, MAX_INT64),  # milli overflows upstream; we clamp
]


@pytest.mark.parametrize(("text", "milli", "value"), VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_milli_value_and_value_round_up(text: str, milli: int, value: int) -> None:
    q = parse_quantity(text)
    assert (q.milli_value(), q.value()) == (milli, value)


# --- Pod requests ----------------------------------------------------------------------------


def _container(name: str, requests: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "x", **extra}
    if requests is not None:
        body["resources"] = {"requests": requests}
    return body


def make_pod(
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> Pod:
    """A Pod with explicit container / init container dicts; `spec` extras in camelCase."""
    p = Pod.model_validate(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": containers if containers is not None else [_container("c")],
                "initContainers": init or [],
                **spec,
            },
        }
    )
    admit_pod(p, {}, {})
    return p


_names = itertools.count()


def c(requests: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return _container(f"c{next(_names)}", requests, **extra)


def sidecar(requests: dict[str, Any]) -> dict[str, Any]:
    return _container(f"s{next(_names)}", requests, restartPolicy="Always")


# Expected PodInfo.requests (cpu in millicores, others in units; zero entries may be absent).
# Sources: fit.go `computePodResourceRequest` comment example; component-helpers
# resource/helpers_test.go TestPodRequests-style sidecar cases (KEP-753 formula: the init peak of
# init container i is its request plus the sidecars started before it); fit_test.go
# TestEnoughRequests overhead / pod-level rows.
REQUEST_CASES = [
    pytest.param(
        make_pod(
            [c({"cpu": "2", "memory": "1G"}), c({"cpu": "1", "memory": "1G"})],
            [c({"cpu": "2", "memory": "1G"}), c({"cpu": "2", "memory": "3G"})],
        ),
        {"cpu": 3000, "memory": 3 * 10**9},
        id="fit.go-comment-example",
    ),
    pytest.param(
        make_pod([c({"cpu": "1"})], [sidecar({"cpu": "1"})]),
        {"cpu": 2000},
        id="restartable-init-container-adds",
    ),
    pytest.param(
        make_pod([c({"cpu": "1"})], [sidecar({"cpu": "1"}), sidecar({"cpu": "2"}), sidecar({"cpu": "3"})]),
        {"cpu": 7000},
        id="multiple-restartable-init-containers",
    ),
    pytest.param(
        make_pod(
            [c({"cpu": "1"})],
            [
                c({"cpu": "5"}),
                sidecar({"cpu": "1"}),
                sidecar({"cpu": "2"}),
                c({"cpu": "5"}),
                sidecar({"cpu": "3"}),
            ],
        ),
        {"cpu": 8000},  # init peak: 5 + sidecars 1 + 2 = 8 > containers 1 + sidecars 6 = 7
        id="restartable-and-regular-init-containers",
    ),
    pytest.param(
        make_pod([c({"cpu": "1"})], [sidecar({"cpu": "1"}), c({"cpu": "5"})]),
        {"cpu": 6000},  # regular init after a sidecar: 5 + 1
        id="regular-init-after-sidecar",
    ),
    pytest.param(
        make_pod([c({"cpu": "1m", "memory": "1"})], overhead={"cpu": "3m", "memory": "13"}),
        {"cpu": 4, "memory": 14},
        id="fit_test-resources+pod-overhead",
    ),
    pytest.param(
        make_pod([c({"cpu": "1m", "memory": "1"})], resources={"requests": {"cpu": "7m", "memory": "2"}}),
        {"cpu": 7, "memory": 2},
        id="fit_test-pod-level-replaces-aggregate",
    ),
    pytest.param(
        make_pod([c({"cpu": "1m", "memory": "5"})], resources={"requests": {"cpu": "7m"}}),
        {"cpu": 7, "memory": 5},
        id="pod-level-cpu-only-memory-from-containers",
    ),
    pytest.param(
        make_pod(
            [c({"cpu": "1m", "memory": "1"})],
            resources={"requests": {"cpu": "3m", "memory": "2"}},
            overhead={"cpu": "1m", "memory": "1"},
        ),
        {"cpu": 4, "memory": 3},
        id="pod-level-then-overhead",
    ),
    pytest.param(
        make_pod([_container("c", None, resources={"limits": {"cpu": "2", "memory": "1Gi"}})]),
        {"cpu": 2000, "memory": 2**30},
        id="requests-defaulted-from-limits",
    ),
    pytest.param(
        make_pod(
            [_container("c", None, resources={"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}})]
        ),
        {"cpu": 1000, "memory": 2**30},
        id="explicit-request-kept-limit-fills-missing",
    ),
    pytest.param(
        make_pod([c({"memory": "500m"}), c({"memory": "500m"})]),
        {"memory": 1},
        id="rounding-once-per-pod-memory",
    ),
    pytest.param(
        make_pod([c({"cpu": "0.0001"}), c({"cpu": "0.0001"})]),
        {"cpu": 1},
        id="rounding-once-per-pod-cpu",
    ),
    pytest.param(
        make_pod([c({"example.com/gpu": "2", "hugepages-2Mi": "4Mi", "ephemeral-storage": "1Gi"})]),
        {"example.com/gpu": 2, "hugepages-2Mi": 4 * Mi, "ephemeral-storage": 2**30},
        id="scalar-and-ephemeral",
    ),
]


@pytest.mark.parametrize(("p", "want"), REQUEST_CASES)
def test_pod_info_requests(p: Pod, want: dict[str, int]) -> None:
    got = {k: v for k, v in PodInfo.of(p).requests.items() if v}
    assert got == want


def test_pod_requests_is_exact_before_rounding() -> None:
    p = make_pod([c({"memory": "500m"}), c({"memory": "500m"})])
    assert pod_requests(p) == {"memory": Fraction(1)}


# Non-zero requests (PodInfo.non_zero_cpu / non_zero_memory): schedutil.DefaultMilliCPURequest 100m
# and DefaultMemoryRequest 200Mi fill a *missing* key per container (applyNonMissing in
# component-helpers PodRequests); an explicit "0" stays 0. Upstream: framework/types.go
# calculateResource + getNonMissingContainerRequests.
NON_ZERO_CASES = [
    pytest.param(make_pod([c()]), (100, 200 * Mi), id="best-effort-one-container"),
    pytest.param(make_pod([c(), c()]), (200, 400 * Mi), id="best-effort-two-containers"),
    pytest.param(make_pod([c({"cpu": "0"})]), (0, 200 * Mi), id="explicit-zero-cpu-stays-zero"),
    pytest.param(make_pod([c({"cpu": "0", "memory": "0"})]), (0, 0), id="explicit-zeros"),
    pytest.param(make_pod([c({"cpu": "250m"}), c()]), (350, 400 * Mi), id="per-container-defaults"),
    pytest.param(make_pod([c({"cpu": "50m", "memory": "1Mi"})], [c()]), (100, 200 * Mi), id="init-default-is-max"),
    pytest.param(make_pod([c({"cpu": "1", "memory": "1Gi"})]), (1000, 2**30), id="requests-as-is"),
    pytest.param(make_pod([c()], [sidecar({"cpu": "1"})]), (1100, 400 * Mi), id="sidecar-gets-memory-default"),
    pytest.param(
        make_pod([c({"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"}),
        (1250, 320 * Mi),
        id="overhead-added-after-defaults",
    ),
    pytest.param(
        make_pod([c(), c()], resources={"requests": {"cpu": "500m", "memory": "1Gi"}}),
        (500, 2**30),
        id="pod-level-replaces-defaults",
    ),
    pytest.param(
        make_pod([c({"cpu": "1", "memory": "1Mi"}), c()], resources={"requests": {"cpu": "3"}}),
        # types.go getNonMissingContainerRequests: memory is missing at the pod level, so each container
        # without a memory request gets the 200Mi default: 1Mi + 200Mi.
        (3000, 201 * Mi),
        id="pod-level-cpu-memory-missing-at-pod-level",
    ),
    pytest.param(
        make_pod([c(), c()], resources={"requests": {"cpu": "500m"}}),
        (500, 400 * Mi),
        id="pod-level-cpu-only-memory-missing-everywhere",
    ),
]


@pytest.mark.parametrize(("p", "want"), NON_ZERO_CASES)
def test_non_zero_requests(p: Pod, want: tuple[int, int]) -> None:
    info = PodInfo.of(p)
    assert (info.non_zero_cpu, info.non_zero_memory) == want


def test_pod_level_requests_default_to_container_aggregate() -> None:
    p = make_pod([c({"cpu": "500m"})], resources={"limits": {"cpu": "2"}})
    assert PodInfo.of(p).requests["cpu"] == 500
