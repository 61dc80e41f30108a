"""Validation that means what it says: names, label keys and values are checked as whole strings
(Go's regexp `$` does not match before a trailing newline, Python's does), and JSON Patch paths
index arrays only with canonical decimal numbers (RFC 6901: no "01", no "²", no "1\\n").
Property tests generate exactly such near-miss inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterviz.kube_api.managed import check_manager
from clusterviz.kube_api.patch import PATCH_REJECTED, json_patch
from clusterviz.kube_api.protobuf import MAGIC, decode
from clusterviz.kube_api.status import ApiError
from clusterviz.validation import admit
from scheduler_core.api.loading import InputError
from scheduler_core.api.validation import (
    dns1123_label_error,
    dns1123_subdomain_error,
    label_key_error,
    label_value_error,
)

LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")
SUBDOMAIN_CHARS = LABEL_CHARS | {"."}
QUALIFIED_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")

valid_labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
# A valid value with something glued on: a line break, other whitespace, a non-ASCII digit or letter.
suffixes = st.sampled_from(["\n", "\r\n", "\r", " ", "\t", "\x0b", "\u2028", "²", "é", "٣", "\n\n"])


@settings(max_examples=300, deadline=None)
@given(valid_labels, suffixes, st.booleans())
def test_a_valid_name_with_anything_glued_on_is_refused(name: str, suffix: str, before: bool) -> None:
    value = suffix + name if before else name + suffix
    assert dns1123_label_error(name) is None and dns1123_subdomain_error(name) is None
    assert dns1123_label_error(value) is not None
    assert dns1123_subdomain_error(value) is not None
    assert label_key_error(value) is not None
    assert label_value_error(value) is not None


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=70))
def test_whatever_is_accepted_is_made_of_allowed_characters_only(text: str) -> None:
    if dns1123_label_error(text) is None:
        assert set(text) <= LABEL_CHARS and text[0].isalnum() and text[-1].isalnum() and len(text) <= 63
    if dns1123_subdomain_error(text) is None:
        assert set(text) <= SUBDOMAIN_CHARS and text[-1].isalnum()
    if label_value_error(text) is None:
        assert set(text) <= QUALIFIED_CHARS and len(text) <= 63
    if label_key_error(text) is None:
        prefix, _, name = text.rpartition("/")
        assert set(name) <= QUALIFIED_CHARS and set(prefix) <= SUBDOMAIN_CHARS


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node01\n"}},
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node01", "labels": {"zone\n": "a"}}},
        {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node01", "labels": {"zone": "a\n"}}},
        {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "team\n"}},
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c\n", "image": "nginx"}]},
        },
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "p", "namespace": "default\n"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    ],
)
def test_admission_refuses_a_trailing_newline(body: dict) -> None:
    with pytest.raises(InputError, match="Invalid value"):
        admit(body)


DOC = {"a": [10, 20, 30], "b": {"c": 1}}


@pytest.mark.parametrize(
    "path",
    ["/a/01", "/a/²", "/a/1\n", "/a/ 1", "/a/+1", "/a/-1", "/a/1.0", "/a/٣", "/a/3", "/a/99999999999999999999"],
)
@pytest.mark.parametrize("op", ["replace", "remove", "test"])
def test_a_non_canonical_or_missing_array_index_is_422(path: str, op: str) -> None:
    with pytest.raises(ApiError) as refused:
        json_patch(DOC, [{"op": op, "path": path, "value": 10}])
    assert (refused.value.code, refused.value.reason, refused.value.message) == (422, "Invalid", PATCH_REJECTED)
    assert refused.value.details and refused.value.details["causes"][0]["message"]


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=6), st.sampled_from(["add", "replace", "remove", "test", "copy", "move"]))
def test_any_index_text_is_applied_or_refused_never_crashes(index: str, op: str) -> None:
    operation = {"op": op, "path": f"/a/{index}", "value": 1, "from": "/b/c"}
    try:
        result = json_patch(DOC, [operation])
    except ApiError as exc:
        assert exc.code in (400, 422)
        return
    canonical = index == "-" or index == "0" or (index.isascii() and index.isdigit() and index[0] != "0")
    assert canonical, f"{op} at index {index!r} was applied: {result}"


def test_json_patch_applies_rfc6902_and_leaves_the_target_alone() -> None:
    doc = {"a": [1, 2], "c": "x"}
    ops = [
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "add", "path": "/a/0", "value": 0},
        {"op": "replace", "path": "/c", "value": "y"},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e~1f"},
        {"op": "remove", "path": "/a/1"},
        {"op": "test", "path": "/e~1f", "value": "y"},
    ]
    assert json_patch(doc, ops) == {"a": [0, 2, 3], "c": "y", "e/f": "y"}
    assert doc == {"a": [1, 2], "c": "x"}


@pytest.mark.parametrize(
    ("patch", "code", "message"),
    [
        ({"op": "add"}, 400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ([1], 400, "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        (
            [{"op": "add", "path": "/x", "value": 1}] * 10001,
            413,
            "The allowed maximum operations in a JSON patch is 10000, got 10001",
        ),
        ([{"op": "bogus", "path": "/x"}], 422, PATCH_REJECTED),
        ([{"op": "add", "path": "x", "value": 1}], 422, PATCH_REJECTED),
        ([{"op": "test", "path": "/c", "value": 2}], 422, PATCH_REJECTED),
    ],
)
def test_json_patch_refusals_are_upstreams(patch: object, code: int, message: str) -> None:
    with pytest.raises(ApiError) as refused:
        json_patch({"c": 1}, patch)
    assert (refused.value.code, refused.value.message) == (code, message)


# --- the protobuf SelfSubjectAccessReview kubectl auth can-i sends


def _field(number: int, payload: bytes) -> bytes:
    key, length = (number << 3) | 2, len(payload)
    out = bytes([key])
    while length >= 0x80:
        out += bytes([(length & 0x7F) | 0x80])
        length >>= 7
    return out + bytes([length]) + payload


def test_a_protobuf_access_review_is_read() -> None:
    attributes = _field(1, b"default") + _field(2, b"create") + _field(5, b"pods")
    review = _field(2, _field(1, attributes))  # SelfSubjectAccessReview.spec.resourceAttributes
    body = MAGIC + _field(1, b"") + _field(2, review)  # runtime.Unknown{typeMeta (empty: the endpoint's), raw}
    assert decode(body, "SelfSubjectAccessReview", "authorization.k8s.io/v1") == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
    }


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_protobuf_body_is_read_or_refused_with_a_400(tail: bytes) -> None:
    try:
        review = decode(MAGIC + tail, "SelfSubjectAccessReview", "authorization.k8s.io/v1")
    except ApiError as exc:
        assert exc.code == 400
        return
    assert isinstance(review, dict)


@pytest.mark.parametrize(
    ("manager", "message"),
    [
        ("", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'),
        ("m" * 129, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most 128 bytes'),
        (
            "a\x00",
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\u0000": invalid character '
            "U+0000 (at position 1)",
        ),
    ],
)
def test_an_apply_needs_a_sane_field_manager(manager: str, message: str) -> None:
    with pytest.raises(ApiError) as refused:
        check_manager(manager, {})
    assert (refused.value.code, refused.value.message) == (422, message)
    with pytest.raises(ApiError, match=r"^metadata\.managedFields must be nil$"):
        check_manager("kubectl", {"metadata": {"managedFields": []}})


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        ({"op": "test", "path": "/spec/replicas", "value": 5}, "testing value /spec/replicas failed: test failed"),
        (
            {"op": "remove", "path": "/metadata/labels/x"},
            "error in remove for path: '/metadata/labels/x': Unable to remove nonexistent key: x: missing value",
        ),
        (
            {"op": "replace", "path": "/spec/x", "value": 1},
            "replace operation does not apply: doc is missing key: /spec/x: missing value",
        ),
        (
            {"op": "add", "path": "/nope/x", "value": 1},
            'add operation does not apply: doc is missing path: "/nope/x": missing value',
        ),
        (
            {"op": "add", "path": "/spec/l/5", "value": 1},
            "error in add for path: '/spec/l/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            {"op": "move", "from": "/q", "path": "/z"},
            "move operation does not apply: doc is missing from path: /q: missing value",
        ),
        ({"op": "bogus", "path": "/x"}, "Unexpected kind: bogus"),
    ],
)
def test_json_patch_failures_are_worded_as_evanphx_json_patch(operation: dict, reason: str) -> None:
    """gopkg.in/evanphx/json-patch.v4, which kube-apiserver applies JSON patches with."""
    doc = {"spec": {"replicas": 2, "l": [1, 2]}, "metadata": {"labels": {"a": "b"}}}
    with pytest.raises(ApiError) as refused:
        json_patch(doc, [{"op": "add", "path": "/spec/y", "value": 1}, operation])
    assert refused.value.details is not None
    assert refused.value.details["causes"][0]["message"] == reason
