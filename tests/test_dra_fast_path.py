"""The columnar single-device path (scheduler_core/dra/fast_path.py) gives the allocator's answer on every node.

Random clusters — nodes with zero to three pools, devices with and without the attribute a selector
reads (a CEL runtime error where the search meets one), devices in use, invalid pools, devices with
alpha-only fields — are allocated both ways; the device, "no solution" or the error text must agree
node by node, and again after devices change hands (the journal the columns follow).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from scheduler_core.dra.allocator import AllocationError, Allocator, DeviceID, Features
from scheduler_core.dra.fast_path import columns_of, fast_outcomes, single_device_request
from scheduler_core.dra.index import DraIndex
from tests.helpers import node

DRIVERS = ("a.example.com", "b.example.com")
SELECTORS = {
    "none": [],
    "driver": ['device.driver == "a.example.com"'],
    "model": ['device.attributes["a.example.com"].model == "x"'],  # errors on a device without it
    "guarded": ['"model" in device.attributes["a.example.com"] && device.attributes["a.example.com"].model == "y"'],
}

device_st = st.fixed_dictionaries(
    {
        "model": st.sampled_from([None, "x", "y"]),
        "extra": st.sampled_from([None, None, None, "bindingConditions", "consumesCounters"]),
    }
)
pool_st = st.fixed_dictionaries(
    {
        "driver": st.sampled_from(DRIVERS),
        "devices": st.lists(device_st, min_size=0, max_size=4),
        "duplicate": st.booleans(),
    }
)
cluster_st = st.lists(st.lists(pool_st, max_size=3), min_size=1, max_size=6)


def slices_of(cluster: list[list[dict[str, Any]]]) -> list[ResourceSlice]:
    out = []
    for n, pools in enumerate(cluster):
        for p, pool in enumerate(pools):
            devices = []
            for d, spec in enumerate(pool["devices"]):
                device: dict[str, Any] = {"name": f"dev-{d}"}
                if spec["model"]:
                    device["attributes"] = {"model": {"string": spec["model"]}}
                if spec["extra"] == "bindingConditions":
                    device["bindingConditions"] = ["ready"]
                elif spec["extra"] == "consumesCounters":
                    device["consumesCounters"] = [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]
                devices.append(device)
            slice_spec = {
                "driver": pool["driver"],
                "nodeName": f"node-{n}",
                "pool": {"name": f"node-{n}-pool-{p}", "resourceSliceCount": 2 if pool["duplicate"] else 1},
                "devices": devices,
            }
            out.append(ResourceSlice.model_validate({"metadata": {"name": f"node-{n}-{p}"}, "spec": slice_spec}))
            if pool["duplicate"] and devices:  # a second slice repeating the first device: an invalid pool
                twin = {**slice_spec, "devices": devices[:1]}
                out.append(ResourceSlice.model_validate({"metadata": {"name": f"node-{n}-{p}-b"}, "spec": twin}))
    return out


def claim_of(claim_selector: str) -> ResourceClaim:
    selectors = [{"cel": {"expression": e}} for e in SELECTORS[claim_selector]]
    return ResourceClaim.model_validate(
        {
            "metadata": {"name": "c", "namespace": "default", "uid": "c-uid"},
            "spec": {
                "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "k", "selectors": selectors}}]}
            },
        }
    )


def general_answer(allocator: Allocator, name: str, claim: ResourceClaim) -> str:
    try:
        results = allocator.allocate(node(name, {}), [claim])
    except AllocationError as exc:
        return f"error: {exc}"
    if results is None:
        return "none"
    (result,) = results[0].devices.results
    return f"{result.driver}/{result.pool}/{result.device}"


def fast_answers(allocator: Allocator, index: DraIndex, names: list[str], claim: ResourceClaim) -> list[str]:
    fast = fast_outcomes(allocator, index, claim, names)
    columns = columns_of(allocator.slices, allocator)
    answers = []
    for i, name in enumerate(names):
        if fast.general[i]:
            answers.append(general_answer(allocator, name, claim))
        elif i in fast.errors:
            answers.append(f"error: {fast.errors[i]}")
        elif fast.row[i] < 0:
            answers.append("none")
        else:
            d = columns.devices[fast.row[i]]
            answers.append(f"{d.driver}/{d.pool}/{d.name}")
    return answers


def claim_holding(devices: list[DeviceID], name: str) -> ResourceClaim:
    results = [{"request": "r", "driver": d.driver, "pool": d.pool, "device": d.device} for d in devices]
    return ResourceClaim.model_validate(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "k"}}]}},
            "status": {"allocation": {"devices": {"results": results}}},
        }
    )


@settings(max_examples=150, deadline=None)
@given(
    cluster=cluster_st,
    class_selector=st.sampled_from(sorted(SELECTORS)),
    claim_selector=st.sampled_from(sorted(SELECTORS)),
    used=st.lists(st.integers(0, 40), max_size=8),
    freed=st.integers(0, 8),
)
def test_fast_path_answers_as_the_allocator(
    cluster: list[list[dict[str, Any]]], class_selector: str, claim_selector: str, used: list[int], freed: int
) -> None:
    slices = slices_of(cluster)
    device_class = DeviceClass.model_validate(
        {
            "metadata": {"name": "k"},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in SELECTORS[class_selector]]},
        }
    )
    every = sorted({DeviceID(s.spec.driver, s.spec.pool.name, d.name) for s in slices for d in s.spec.devices})
    held = sorted({every[u % len(every)] for u in used}) if every else []
    index = DraIndex.of(
        claims=[claim_holding([d], f"held-{k}") for k, d in enumerate(held)], classes=[device_class], slices=slices
    )
    claim = claim_of(claim_selector)
    names = [f"node-{n}" for n in range(len(cluster))] + ["bare"]
    slice_index = index.slice_index()
    assert single_device_request([claim], slice_index)
    for _round in range(2):
        allocator = Allocator(Features(), index.allocated_devices(), index.classes, slice_index)
        expected = [general_answer(allocator, name, claim) for name in names]
        assert fast_answers(allocator, index, names, claim) == expected
        for k in range(min(freed, len(held))):  # devices change hands: the columns follow the journal
            index.remove(f"default/held-{k}")
