"""Just enough of the Kubernetes protobuf encoding to read what kubectl sends as protobuf and this
endpoint must understand: the `k8s\\x00` envelope (runtime.Unknown) and a SelfSubjectAccessReview's
resource or non-resource attributes (`kubectl auth can-i`). Field numbers: k8s.io/api generated.proto."""

from __future__ import annotations

from typing import Any

from .status import ApiError

__all__ = ["MAGIC", "access_review_spec", "rules_review_spec"]

MAGIC = b"k8s\x00"
# ResourceAttributes and NonResourceAttributes field numbers (authorization/v1 generated.proto)
RESOURCE_FIELDS = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
NON_RESOURCE_FIELDS = {1: "path", 2: "verb"}


def _bad() -> ApiError:
    return ApiError(400, "BadRequest", "the protobuf body of the request could not be decoded")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _bad()
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> dict[int, bytes]:
    """The length-delimited fields of a message (the last of each number); others are skipped."""
    out: dict[int, bytes] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise _bad()
            out[number] = data[pos : pos + length]
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise _bad()
    return out


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    try:
        return {names[n]: value.decode("utf-8") for n, value in _fields(data).items() if n in names}
    except UnicodeDecodeError:
        raise _bad() from None


def access_review_spec(body: bytes) -> dict[str, Any]:
    """The `spec` of a protobuf SelfSubjectAccessReview, as its JSON form would have it."""
    if not body.startswith(MAGIC):
        raise _bad()
    raw = _fields(body[len(MAGIC) :]).get(2, b"")  # runtime.Unknown.raw
    spec = _fields(raw).get(2, b"")  # SelfSubjectAccessReview.spec
    parts = _fields(spec)
    out: dict[str, Any] = {}
    if 1 in parts:
        out["resourceAttributes"] = _strings(parts[1], RESOURCE_FIELDS)
    if 2 in parts:
        out["nonResourceAttributes"] = _strings(parts[2], NON_RESOURCE_FIELDS)
    return out


def rules_review_spec(body: bytes) -> dict[str, Any]:
    """The `spec` of a protobuf SelfSubjectRulesReview (`kubectl auth can-i --list`): its namespace."""
    if not body.startswith(MAGIC):
        raise _bad()
    raw = _fields(body[len(MAGIC) :]).get(2, b"")  # runtime.Unknown.raw
    spec = _fields(raw).get(2, b"")  # SelfSubjectRulesReview.spec
    return _strings(spec, {1: "namespace"})
