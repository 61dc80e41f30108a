"""The Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`), read and written with
Google's protobuf runtime and the messages generated from upstream's generated.proto files
(clusterviz/kube_api/pb, `regenerate.py`): the `k8s\\x00` envelope (runtime.Unknown: apiVersion, kind,
the object's bytes) and each object as the JSON form the rest of the API server speaks.

A message maps to JSON field by field (the proto fields carry the JSON names); apimachinery's
wrapper types read as their JSON forms: Time/MicroTime as RFC 3339, Quantity as its string,
IntOrString as an int or a string, RawExtension/FieldsV1 as the JSON they hold, Duration as Go's
duration text. Decoding errors are upstream's (runtime/serializer/protobuf/protobuf.go), answered by
the create and update handlers as 400 BadRequest."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

# Importing the generated modules registers their messages in the default pool.
from .pb.k8s_io.api.apps.v1 import generated_pb2 as _apps  # noqa: F401
from .pb.k8s_io.api.authentication.v1 import generated_pb2 as _authentication  # noqa: F401
from .pb.k8s_io.api.authorization.v1 import generated_pb2 as _authorization  # noqa: F401
from .pb.k8s_io.api.autoscaling.v1 import generated_pb2 as _autoscaling  # noqa: F401
from .pb.k8s_io.api.batch.v1 import generated_pb2 as _batch  # noqa: F401
from .pb.k8s_io.api.coordination.v1 import generated_pb2 as _coordination  # noqa: F401
from .pb.k8s_io.api.core.v1 import generated_pb2 as _core  # noqa: F401
from .pb.k8s_io.api.discovery.v1 import generated_pb2 as _discovery  # noqa: F401
from .pb.k8s_io.api.events.v1 import generated_pb2 as _events  # noqa: F401
from .pb.k8s_io.api.policy.v1 import generated_pb2 as _policy  # noqa: F401
from .pb.k8s_io.api.resource.v1 import generated_pb2 as _resource  # noqa: F401
from .pb.k8s_io.api.scheduling.v1 import generated_pb2 as _scheduling  # noqa: F401
from .pb.k8s_io.api.storage.v1 import generated_pb2 as _storage  # noqa: F401
from .pb.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb2
from .pb.k8s_io.apimachinery.pkg.runtime import generated_pb2 as runtime_pb2
from .status import ApiError

__all__ = ["MAGIC", "MEDIA_TYPE", "WATCH_MEDIA_TYPE", "decode", "encode", "has_message", "watch_frame"]

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"
Obj = dict[str, Any]

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME, MICRO_TIME, DURATION, FIELDS_V1 = (f"{META}Time", f"{META}MicroTime", f"{META}Duration", f"{META}FieldsV1")
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
# API group → the proto package of its types (k8s.io/api/<directory>)
PACKAGES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "autoscaling": "autoscaling",
    "policy": "policy",
    "coordination.k8s.io": "coordination",
    "discovery.k8s.io": "discovery",
    "events.k8s.io": "events",
    "resource.k8s.io": "resource",
    "scheduling.k8s.io": "scheduling",
    "storage.k8s.io": "storage",
    "authorization.k8s.io": "authorization",
    "authentication.k8s.io": "authentication",
}
META_KINDS = ("Status", "DeleteOptions", "APIResourceList", "APIGroupList", "APIGroup", "APIVersions")
INT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


@cache
def _message_class(api_version: str, kind: str) -> type[Message] | None:
    """The generated message of `kind` in `api_version` (meta/v1's for Status and the like), if any."""
    group, version = _split(api_version)
    name = f"{META}{kind}" if kind in META_KINDS else None
    if name is None:
        package = PACKAGES.get(group)
        if package is None:
            return None
        name = f"k8s.io.api.{package}.{version}.{kind}"
    try:
        found = descriptor_pool.Default().FindMessageTypeByName(name)
    except KeyError:
        return None
    return message_factory.GetMessageClass(found)


def has_message(api_version: str, kind: str) -> bool:
    return _message_class(api_version, kind) is not None


# --- protobuf → JSON ------------------------------------------------------------------------


def _rfc3339(seconds: int, nanos: int = 0, micro: bool = False) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_duration(nanoseconds: int) -> str:
    """time.Duration.String() for whole seconds and below (what API fields hold)."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    seconds, rest = divmod(abs(nanoseconds), 1_000_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    fraction = f".{rest:09d}".rstrip("0") if rest else ""
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}{fraction}s"
    if minutes:
        return f"{sign}{minutes}m{seconds}{fraction}s"
    return f"{sign}{seconds}{fraction}s"


def _raw_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return base64.b64encode(raw).decode()


def _special_to_json(name: str, msg: Any) -> Any:
    if name == TIME:
        return _rfc3339(msg.seconds)
    if name == MICRO_TIME:
        return _rfc3339(msg.seconds, msg.nanos, micro=True)
    if name == QUANTITY:
        return msg.string
    if name == INT_OR_STRING:
        return msg.strVal if msg.type == 1 else msg.intVal
    if name == DURATION:
        return _go_duration(msg.duration)
    if name == RAW_EXTENSION:
        return _raw_json(msg.raw)
    return _raw_json(msg.Raw)  # FieldsV1


SPECIAL = frozenset({TIME, MICRO_TIME, QUANTITY, INT_OR_STRING, DURATION, RAW_EXTENSION, FIELDS_V1})


def _value_to_json(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        return _special_to_json(name, value) if name in SPECIAL else to_json(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


# Go's encoder writes every non-pointer field, zero or not; JSON's `omitempty` leaves their zeros out,
# and defaulting treats a zero as unset. A zero is kept only for pointer fields where 0 or false is
# a choice (`replicas: 0`, `automountServiceAccountToken: false`), as their JSON keeps it.
ZERO_KEPT = frozenset(
    {
        "replicas",
        "parallelism",
        "completions",
        "backoffLimit",
        "revisionHistoryLimit",
        "progressDeadlineSeconds",
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "ttlSecondsAfterFinished",
        "tolerationSeconds",
        "automountServiceAccountToken",
        "enableServiceLinks",
        "suspend",
        "privileged",
        "allowPrivilegeEscalation",
        "readOnlyRootFilesystem",
        "runAsNonRoot",
        "runAsUser",
        "runAsGroup",
        "fsGroup",
        "optional",
        "minAvailable",
        "maxUnavailable",
        "priority",
    }
)


# Go structs embedded with `json:",inline"` (types.go): their fields sit in the parent's JSON object,
# where protobuf has a field of their own (a Volume's `volumeSource`, a Probe's `handler`, …).
INLINE = frozenset(
    {
        "volumeSource",
        "persistentVolumeSource",
        "localObjectReference",
        "handler",
        "ephemeralContainerCommon",
        "deviceConfiguration",
    }
)


def _inline(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.name in INLINE and not field.is_repeated


def to_json(msg: Message) -> Obj:
    """A message as its JSON object: what is set, without the zeros Go writes for every non-pointer
    field (`ZERO_KEPT`), a zero Time as absent."""
    out: Obj = {}
    for field, value in msg.ListFields():
        scalar = field.type != FieldDescriptor.TYPE_MESSAGE and not field.is_repeated
        if scalar and value in ("", 0, False, b"") and field.name not in ZERO_KEPT:
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name == TIME and not value.seconds:
            continue  # metav1.Time's zero value (Go marshals it as an empty message)
        if _inline(field):
            out.update(to_json(value))
        elif _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {key: _value_to_json(value_field, item) for key, item in value.items()}
        elif field.is_repeated:
            out[field.name] = [_value_to_json(field, item) for item in value]
        else:
            out[field.name] = _value_to_json(field, value)
    return out


# --- JSON → protobuf ------------------------------------------------------------------------


def _seconds_of(text: str) -> tuple[int, int]:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(moment.timestamp()), moment.microsecond * 1000


def _special_from_json(name: str, value: Any, msg: Any) -> None:
    if name in (TIME, MICRO_TIME):
        msg.seconds, nanos = _seconds_of(str(value))
        if name == MICRO_TIME:
            msg.nanos = nanos
    elif name == QUANTITY:
        msg.string = str(value)
    elif name == INT_OR_STRING:
        if isinstance(value, str):
            msg.type, msg.strVal = 1, value
        else:
            msg.type, msg.intVal = 0, int(value)
    elif name == RAW_EXTENSION:
        msg.raw = json.dumps(value, separators=(",", ":")).encode()
    elif name == FIELDS_V1:
        msg.Raw = json.dumps(value, separators=(",", ":")).encode()
    # Duration strings are not written by this server


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if field.type in INT_TYPES:
        return int(value)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return bool(value)
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return float(value)
    return str(value)


def _fill(msg: Any, value: Any, descriptor: Descriptor) -> None:
    name = descriptor.full_name
    if name in SPECIAL:
        _special_from_json(name, value, msg)
    elif isinstance(value, dict):
        from_json(value, msg)


def from_json(obj: Obj, msg: Any) -> Any:
    """Fill `msg` from a JSON object; fields the message does not have are left out (as the typed
    clients drop them)."""
    fields = msg.DESCRIPTOR.fields_by_name
    for field in msg.DESCRIPTOR.fields:
        if _inline(field):
            own = field.message_type.fields_by_name
            from_json({key: value for key, value in obj.items() if key in own}, getattr(msg, field.name))
    for key, value in obj.items():
        field = fields.get(key)
        if field is None or value is None:
            continue
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            target = getattr(msg, key)
            for item_key, item in (value or {}).items():
                if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                    _fill(target[item_key], item, value_field.message_type)
                else:
                    target[item_key] = _scalar(value_field, item)
        elif field.is_repeated:
            target = getattr(msg, key)
            for item in value or []:
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    _fill(target.add(), item, field.message_type)
                else:
                    target.append(_scalar(field, item))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            child = getattr(msg, key)
            child.SetInParent()  # an empty object ({}) is set, not absent (emptyDir: {})
            _fill(child, value, field.message_type)
        else:
            setattr(msg, key, _scalar(field, value))
    return msg


# --- the envelope ---------------------------------------------------------------------------


def decode(body: bytes, kind: str, version: str) -> Obj:
    """A protobuf request body as its JSON object (with apiVersion and kind from the envelope), or
    upstream's 400 for data that is not one (`kind`/`version`: the resource's, for the message)."""
    if not body:
        raise _undecodable(kind, "empty data")
    if not body.startswith(MAGIC):
        prefix = " ".join(str(byte) for byte in MAGIC)  # Go's %v of a []byte: [107 56 115 0]
        raise _undecodable(kind, f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]")
    if len(body) == len(MAGIC):
        raise _undecodable(kind, "empty body")
    unknown = runtime_pb2.Unknown()
    try:
        unknown.ParseFromString(body[len(MAGIC) :])
    except DecodeError:
        raise _undecodable(kind, "unexpected EOF") from None
    # what the envelope leaves out is the endpoint's (copyKindDefaults)
    api_version, body_kind = unknown.typeMeta.apiVersion or version, unknown.typeMeta.kind or kind
    cls = _message_class(api_version, body_kind)

    def unhandled(reason: str) -> ApiError:
        """transformDecodeError once the envelope named a kind (endpoints/handlers/create.go)."""
        message = f'{body_kind} in version "{_split(api_version)[1]}" cannot be handled as a {kind}: {reason}'
        return ApiError(400, "BadRequest", message)

    if cls is None:
        raise unhandled(
            f'no kind "{body_kind}" is registered for version "{api_version}" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"'
        )
    msg = cls()
    try:
        msg.ParseFromString(unknown.raw)
    except DecodeError:
        raise unhandled("unexpected EOF") from None
    return {"apiVersion": api_version, "kind": body_kind, **to_json(msg)}


def _undecodable(kind: str, reason: str) -> ApiError:
    """transformDecodeError before a kind is known: the data is no protobuf message."""
    return ApiError(400, "BadRequest", f"the object provided is unrecognized (must be of type {kind}): {reason}")


def encode(obj: Obj) -> bytes | None:
    """A JSON object as a protobuf response body (None: no message for its kind; answer JSON)."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    cls = _message_class(api_version, kind)
    if cls is None:
        return None
    raw = from_json({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}, cls()).SerializeToString()
    unknown = runtime_pb2.Unknown(raw=raw)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return MAGIC + unknown.SerializeToString()


def watch_frame(event_type: str, obj: Obj) -> bytes:
    """One event of a protobuf watch stream: a meta/v1 WatchEvent (its object the enveloped object, as
    a RawExtension), in a frame of its length as 4 big-endian bytes (framer.NewLengthDelimitedFrameWriter)."""
    encoded = encode(obj)
    event = meta_pb2.WatchEvent(type=event_type)
    event.object.raw = encoded if encoded is not None else json.dumps(obj, separators=(",", ":")).encode()
    data = event.SerializeToString()
    return len(data).to_bytes(4, "big") + data
