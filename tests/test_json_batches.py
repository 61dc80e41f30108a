"""A List's items printed as kubectl prints them are decoded a batch at a time (msgspec); the
objects and every error must be those of reading them one by one with the standard library."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler_core.api import json_reading
from scheduler_core.api.loading import ClusterObjects, InputError, load_cluster
from scheduler_core.synthetic import SnapshotSpec, generate_objects

BUCKETS = ("nodes", "pods", "namespaces", "priority_classes", "workloads", "claims", "volumes", "pdbs")


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Batches of a few items and 64 KiB chunks, so a small dump has many of both; counts the
    batches decoded."""
    monkeypatch.setattr(json_reading, "BATCH_CHARS", 3000)
    monkeypatch.setattr(json_reading, "CHUNK_BYTES", 64 * 1024)
    counts = {"batches": 0}
    batch = json_reading._Reader.batch

    def counted(reader: Any) -> Any:
        found = batch(reader)
        counts["batches"] += found is not None
        return found

    monkeypatch.setattr(json_reading._Reader, "batch", counted)
    return counts


def one_by_one(text: str | bytes, max_bytes: int = 2**30) -> ClusterObjects | str:
    """The reference: the same reader with batches off (each item read by the standard library)."""
    batch = json_reading._Reader.batch
    json_reading._Reader.batch = lambda reader: None  # type: ignore[method-assign]
    try:
        return loaded(text, max_bytes)
    finally:
        json_reading._Reader.batch = batch  # type: ignore[method-assign]


def loaded(text: str | bytes, max_bytes: int = 2**30) -> ClusterObjects | str:
    try:
        return load_cluster(io.BytesIO(text.encode() if isinstance(text, str) else text), "c.json", max_bytes)
    except InputError as exc:
        return str(exc)


def dicts(cluster: ClusterObjects | str) -> Any:
    assert not isinstance(cluster, str), cluster
    return repr([[o.model_dump() for o in getattr(cluster, bucket)] for bucket in BUCKETS])


def odd_objects() -> Iterator[dict[str, Any]]:
    """Values the standard library reads and msgspec refuses or could read otherwise."""
    spec = {"selector": {"matchLabels": {"app": "x"}}, "replicas": 2}
    yield {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "big"}, "spec": {**spec, "n": 2**70}}
    yield {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "nan"}, "spec": {**spec, "f": "NaN!"}}
    yield {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "lone"}, "spec": {**spec, "s": "\ud800"}}
    yield {"kind": "Namespace", "metadata": {"name": "ünï", "labels": {"k": "välue"}}, "x": 1.5e300}


def kubectl_json(objects: list[dict[str, Any]]) -> str:
    """As `kubectl get … -o json` prints a List."""
    return json.dumps(
        {"apiVersion": "v1", "items": objects, "kind": "List", "metadata": {"resourceVersion": ""}}, indent=4
    )


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    items = list(generate_objects(SnapshotSpec(nodes=8, pods=60, seed=3)))
    for k, odd in enumerate(odd_objects()):
        items.insert(10 + 17 * k, odd)
    return items


def test_batched_items_are_the_items_read_one_by_one(
    objects: list[dict[str, Any]], small_batches: dict[str, int]
) -> None:
    text = kubectl_json(objects).replace('"f": "NaN!"', '"f": NaN')
    cluster = loaded(text)
    assert small_batches["batches"] > 10
    assert dicts(cluster) == dicts(one_by_one(text))
    assert isinstance(cluster, ClusterObjects)
    big = next(w for w in cluster.workloads if w.metadata.name == "big")
    assert big.spec["n"] == 2**70 and isinstance(big.spec["n"], int)
    assert next(w for w in cluster.workloads if w.metadata.name == "lone").spec["s"] == "\ud800"
    assert len(cluster.pods) == 60 and len(cluster.nodes) == 8


def break_at(text: str, needle: str, replacement: str, nth: int = 40) -> str:
    at = -1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    return text[:at] + replacement + text[at + len(needle) :]


@pytest.mark.parametrize(
    ("needle", "replacement", "expected"),
    [
        pytest.param(
            '"cpu": "', '"cpu": "lots', r"^c\.json:\d+: items\[\d+\]\.spec\.containers\[0\]\.resources", id="validation"
        ),
        pytest.param('"name": ', '"name" ', r"^c\.json:\d+:\d+: Expecting ':' delimiter$", id="syntax"),
        pytest.param('"uid": ', '"uid": 1e999, "u": ', None, id="number out of range"),
        pytest.param("\n        },", "\n        }", r"^c\.json:\d+:\d+: Expecting ',' delimiter$", id="no comma"),
        pytest.param(
            '"uid": ',
            '"uid": 1, "n": ' + "7" * 5000 + ', "u": ',
            r"^c\.json:\d+:\d+: integer with too many digits$",
            id="integer longer than Python converts",
        ),
    ],
)
def test_errors_in_a_batch_are_those_of_reading_one_by_one(
    objects: list[dict[str, Any]], small_batches: dict[str, int], needle: str, replacement: str, expected: str | None
) -> None:
    text = break_at(kubectl_json(objects), needle, replacement)
    message = loaded(text)
    assert message == one_by_one(text)
    if expected is not None:
        assert isinstance(message, str) and re.search(expected, message), message
    assert small_batches["batches"] > 0


def test_a_syntax_error_is_at_its_line_and_column(objects: list[dict[str, Any]], small_batches: dict[str, int]) -> None:
    text = break_at(kubectl_json(objects), '"kind": "Pod"', '"kind": "Pod",,', nth=30)
    at = text.index(",,") + 1
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    assert loaded(text) == f"c.json:{line}:{column}: Expecting property name enclosed in double quotes"
    assert small_batches["batches"] > 0


def test_an_error_further_on_does_not_hide_an_earlier_one(
    objects: list[dict[str, Any]], small_batches: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches read ahead: a bad byte or the size limit met in the next chunk is reported only
    where reading item by item meets it, after the objects before it (and their errors)."""
    broken = break_at(kubectl_json(objects), '"cpu": "', '"cpu": "lots', 30).encode()
    chunk_end = broken.index(b"\n        },", broken.index(b"lots")) + 100  # the bad pod ends the first chunk
    monkeypatch.setattr(json_reading, "CHUNK_BYTES", chunk_end)
    monkeypatch.setattr(json_reading, "BATCH_CHARS", 2 * chunk_end)  # every batch reads ahead
    with_bad_byte = broken[:chunk_end] + b"\xff" + broken[chunk_end:]
    for message in (loaded(with_bad_byte), loaded(broken, max_bytes=chunk_end + 1)):
        assert re.fullmatch(
            r'c\.json:\d+: items\[22\]\.spec\.containers\[0\]\.resources\.requests\.cpu: "lots.*', str(message)
        )
    assert loaded(with_bad_byte) == one_by_one(with_bad_byte)
    assert "not valid UTF-8" in str(loaded(with_bad_byte.replace(b"lots", b"")))


def test_a_truncated_dump(objects: list[dict[str, Any]], small_batches: dict[str, int]) -> None:
    text = kubectl_json(objects)
    half = text[: len(text) // 2]
    message = loaded(half)
    assert message == one_by_one(half)
    assert str(message).endswith("unexpected end of input (a truncated or half-written file?)")


@pytest.mark.parametrize(
    ("needle", "replacement"),
    [
        pytest.param('"operation": "Update"', '"operation": "Update",', id="syntax"),
        pytest.param('"operation": "Update"', '"operation": NaN', id="NaN"),
        pytest.param('"operation": "Update"', '"operation": "\\ud800"', id="lone surrogate"),
        pytest.param('"operation": "Update"', '"operation": 1e999', id="out of range"),
        pytest.param('"operation": "Update"', '"operation": "a\tb"', id="control character"),
        pytest.param('"managedFields": [', '"managedFields": 5, "x": [', id="not a list"),
        pytest.param('"operation": "Update"', '"operation": ' + "[" * 1390 + "]" * 1390, id="deep"),
        pytest.param('"operation": "Update"', '"operation": ' + "[" * 1500 + "]" * 1500, id="too deep"),
    ],
)
def test_managed_fields_are_skipped_but_checked(
    objects: list[dict[str, Any]], small_batches: dict[str, int], needle: str, replacement: str
) -> None:
    """A snapshot's reader skips metadata.managedFields without building it (every reader drops
    it), yet what is wrong in it is refused as when it is read."""
    text = break_at(kubectl_json(objects), needle, replacement, nth=20)
    assert replacement in text
    result = loaded(text)
    reference = one_by_one(text)
    assert (dicts(result) if not isinstance(result, str) else result) == (
        dicts(reference) if not isinstance(reference, str) else reference
    )


def test_a_managed_fields_key_elsewhere_is_kept(objects: list[dict[str, Any]], small_batches: dict[str, int]) -> None:
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    odd = {**deployment, "spec": {"managedFields": [{"kept": True}], **deployment["spec"]}}  # not the last key
    odd["metadata"] = {**deployment["metadata"], "name": "odd", "x": {"managedFields": [1]}}
    text = kubectl_json([*objects[:30], odd, *objects[30:]])
    cluster = loaded(text)
    assert isinstance(cluster, ClusterObjects) and dicts(cluster) == dicts(one_by_one(text))
    kept = next(w for w in cluster.workloads if w.metadata.name == "odd")
    assert kept.spec["managedFields"] == [{"kept": True}] and kept.metadata.model_extra == {"x": {"managedFields": [1]}}
