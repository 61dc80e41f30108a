"""CEL device selectors of Dynamic Resource Allocation, as kube-scheduler v1.34 evaluates them.

Upstream: staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go and cache.go (v0.34), on
the Kubernetes CEL base environment (staging/src/k8s.io/apiserver/pkg/cel/environment/base.go)
and its libraries (pkg/cel/library: quantity.go, semverlib.go, regex.go, lists.go). Parsing,
type checking and evaluation are cel-cpp's, through `cel-expr-python` (docs/cel.md says why that
one); this module declares upstream's `device` variable and implements the Kubernetes functions
and types on top of it, and turns cel-cpp's error texts into cel-go's.

What upstream does and this module reproduces:

- `device` has the fields `driver`, `attributes` and `capacity` (`allowMultipleAllocations` only
  with the alpha DRAConsumableCapacity gate: `compile_selector(..., consumable_capacity=True)`);
  any other field is a compile error ("undefined field 'x'").
- `device.attributes` and `device.capacity` map a domain to a map from ID to value; a name
  without "/" goes under the driver's name. Looking up a domain the device does not have gives
  an empty map (so `device.attributes["other"].x` fails with "no such key: x"), while
  `"other" in device.attributes`, `size()` and the macros see only the domains the device has.
- Attribute values are int, bool, string or a semantic version (`kubernetes.Semver`); capacities
  are `kubernetes.Quantity`, compared exactly.
- The result must be bool (or of the unknown type, then checked at run time).
- Compile errors read "compilation failed: ERROR: <input>:1:1: ..."; the allocator prefixes them
  with "CEL compile error: " and run-time errors with "CEL runtime error: "; both are part of
  `str(SelectorError)` here, the "class X: selector #N: " / "claim X: selector #N: " prefix is
  the caller's.
- Compiled selectors are kept in an LRU cache of upstream's size (the plugin's
  `cel.NewCache(10, ...)`), which compiles without cost estimation, as the scheduler does.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from cel_expr_python import cel as _cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2

from ..api.quantity import MAX_INT64, Quantity, QuantityError, parse_quantity

__all__ = [
    "CACHE_SIZE",
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "AttributeValue",
    "CompiledSelector",
    "DeviceInput",
    "SelectorError",
    "compile_selector",
    "validate_selector_expression",
]

# staging/src/k8s.io/api/resource/v1/types.go
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost (the run-time limit)
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength (bytes)
# pkg/scheduler/framework/plugins/dynamicresources: "The most recent 10 of them get reused".
CACHE_SIZE = 10

COMPILE_ERROR_PREFIX = "CEL compile error: "
RUNTIME_ERROR_PREFIX = "CEL runtime error: "
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"


class SelectorError(Exception):
    """A CEL compile or runtime error; str(exc) is upstream's text (without the 'class X: selector #N:' /
    'claim X: selector #N:' prefix, which the caller adds).

    `kind` is "compile" or "runtime"; `detail` is the text without "CEL compile error: " /
    "CEL runtime error: " (what `CompilationResult.Error` resp. `DeviceMatches` return upstream).
    """

    def __init__(self, kind: Literal["compile", "runtime"], detail: str) -> None:
        self.kind = kind
        self.detail = detail
        prefix = COMPILE_ERROR_PREFIX if kind == "compile" else RUNTIME_ERROR_PREFIX
        super().__init__(prefix + detail)


@dataclass(frozen=True)
class AttributeValue:
    """One resource.k8s.io/v1 DeviceAttribute: exactly one of int (int64), bool, string, version (semver)."""

    kind: Literal["int", "bool", "string", "version"]
    value: int | bool | str


@dataclass(frozen=True)
class DeviceInput:
    """What a selector sees of one device (upstream's `cel.Device`)."""

    driver: str
    attributes: Mapping[str, AttributeValue]  # "model" (the driver's domain) or "domain/id"
    capacity: Mapping[str, Quantity]  # same key rules
    allow_multiple_allocations: bool | None = None  # only seen with DRAConsumableCapacity


class _CelFailure(Exception):
    """Raised by our function implementations; cel-cpp turns it into an error value."""


# ---------------------------------------------------------------------------------------------
# The Kubernetes types as protobuf messages: cel-expr-python carries no opaque Python values, so a
# quantity and a semantic version travel as a message whose one field holds a canonical text.
# Equal values have equal texts, which makes CEL's `==` on messages upstream's Equal().

_PROTO_PACKAGE = "kubernetes"


def _build_pool() -> tuple[Any, type, type]:
    field = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    struct_file = descriptor_pb2.FileDescriptorProto()
    struct_pb2.DESCRIPTOR.CopyToProto(struct_file)
    pool.Add(struct_file)
    proto = descriptor_pb2.FileDescriptorProto(
        name="clusterviz/dra_cel.proto",
        package=_PROTO_PACKAGE,
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Quantity", "Semver"):
        message = proto.message_type.add(name=name)
        message.field.add(name="canonical", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    # The static view of `device` for the type checker (upstream's object type "kubernetes.DRADevice").
    # Evaluation uses plain maps (see _Environments).
    for name, extra in (("DRADevice", False), ("DRADeviceConsumableCapacity", True)):
        message = proto.message_type.add(name=name)
        message.field.add(name="driver", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
        for number, fname in ((2, "attributes"), (3, "capacity")):
            message.field.add(
                name=fname,
                number=number,
                type=field.TYPE_MESSAGE,
                type_name=".google.protobuf.Struct",
                label=field.LABEL_OPTIONAL,
            )
        if extra:
            message.field.add(
                name="allowMultipleAllocations", number=4, type=field.TYPE_BOOL, label=field.LABEL_OPTIONAL
            )
    pool.Add(proto)
    quantity_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PROTO_PACKAGE}.Quantity"))
    semver_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PROTO_PACKAGE}.Semver"))
    return pool, quantity_class, semver_class


_POOL, _QuantityMsg, _SemverMsg = _build_pool()
_QUANTITY = _cel.Type(f"{_PROTO_PACKAGE}.Quantity")
_SEMVER = _cel.Type(f"{_PROTO_PACKAGE}.Semver")

# ---------------------------------------------------------------------------------------------
# kubernetes.Quantity (apiserver/pkg/cel/library/quantity.go)

# apimachinery's ParseQuantity errors (resource.ErrFormatWrong, ErrSuffix)
_QUANTITY_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_QUANTITY_SUFFIX = "unable to parse quantity's suffix"
_QUANTITY_SHAPE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")


def _fraction_text(amount: Fraction) -> str:
    return f"{amount.numerator}/{amount.denominator}"


@lru_cache(maxsize=4096)
def _amount(canonical: str) -> Fraction:
    numerator, _, denominator = canonical.partition("/")
    return Fraction(int(numerator), int(denominator or 1))


def _quantity_message(amount: Fraction) -> Any:
    return _QuantityMsg(canonical=_fraction_text(amount))


@lru_cache(maxsize=4096)
def _parse_quantity_text(text: str) -> Fraction:
    if not text or text != text.strip():
        raise _CelFailure(_QUANTITY_FORMAT_WRONG)
    try:
        return parse_quantity(text).amount
    except QuantityError:
        raise _CelFailure(_QUANTITY_SUFFIX if _QUANTITY_SHAPE.match(text) else _QUANTITY_FORMAT_WRONG) from None


def _q(message: Any) -> Fraction:
    return _amount(message.canonical)


def _cmp(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _compare(a: Any, b: Any) -> int:
    """compareTo of two quantities or of two semantic versions (the checker allows no mix)."""
    if isinstance(a, _SemverMsg):
        return _semver_cmp(a, b)
    return _cmp(_q(a), _q(b))


def _quantity_as_integer(message: Any) -> int:
    amount = _q(message)
    if amount.denominator != 1 or not -MAX_INT64 - 1 <= amount <= MAX_INT64:
        raise _CelFailure("cannot convert value to integer")
    return int(amount)


def _quantity_is_integer(message: Any) -> bool:
    amount = _q(message)
    return amount.denominator == 1 and -MAX_INT64 - 1 <= amount <= MAX_INT64


def _is_quantity(text: str) -> bool:
    try:
        _parse_quantity_text(text)
    except _CelFailure:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# kubernetes.Semver (apiserver/pkg/cel/library/semverlib.go on github.com/blang/semver/v4)

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64 = 2**64


def _only(text: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in text)


def _parse_uint(text: str) -> int:
    # strconv.ParseUint(s, 10, 64)'s errors
    if not text or not _only(text, _NUMBERS):
        raise _CelFailure(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    value = int(text)
    if value >= _UINT64:
        raise _CelFailure(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


SemverKey = tuple[int, int, int, tuple[tuple[int, int, str], ...]]


@lru_cache(maxsize=4096)
def _parse_semver(text: str) -> tuple[str, SemverKey]:
    """blang/semver/v4 Parse: (canonical text without build metadata, comparison key) or _CelFailure."""
    if not text:
        raise _CelFailure("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise _CelFailure("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in (("major", parts[0]), ("minor", parts[1])):
        if not _only(part, _NUMBERS):
            raise _CelFailure(f"Invalid character(s) found in {label} number {_go_quote(part)}")
        if len(part) > 1 and part[0] == "0":
            raise _CelFailure(f"{label.capitalize()} number must not contain leading zeroes {_go_quote(part)}")
        numbers.append(_parse_uint(part))
    patch = parts[2]
    build: list[str] = []
    prerelease: list[str] = []
    if "+" in patch:
        patch, _, rest = patch.partition("+")
        build = rest.split(".")
    if "-" in patch:
        patch, _, rest = patch.partition("-")
        prerelease = rest.split(".")
    if not _only(patch, _NUMBERS):
        raise _CelFailure(f"Invalid character(s) found in patch number {_go_quote(patch)}")
    if len(patch) > 1 and patch[0] == "0":
        raise _CelFailure(f"Patch number must not contain leading zeroes {_go_quote(patch)}")
    numbers.append(_parse_uint(patch))
    pre_key = []
    pre_text = []
    for identifier in prerelease:
        if not identifier:
            raise _CelFailure("Prerelease is empty")
        if _only(identifier, _NUMBERS):
            if len(identifier) > 1 and identifier[0] == "0":
                raise _CelFailure(
                    f"Numeric PreRelease version must not contain leading zeroes {_go_quote(identifier)}"
                )
            number = _parse_uint(identifier)
            pre_key.append((0, number, ""))
            pre_text.append(str(number))
        elif _only(identifier, _ALPHANUM):
            pre_key.append((1, 0, identifier))
            pre_text.append(identifier)
        else:
            raise _CelFailure(f"Invalid character(s) found in prerelease {_go_quote(identifier)}")
    for identifier in build:
        if not identifier:
            raise _CelFailure("Build meta data is empty")
        if not _only(identifier, _ALPHANUM):
            raise _CelFailure(f"Invalid character(s) found in build meta data {_go_quote(identifier)}")
    canonical = ".".join(str(n) for n in numbers) + ("-" + ".".join(pre_text) if pre_text else "")
    return canonical, (numbers[0], numbers[1], numbers[2], tuple(pre_key))


def _normalize_semver(text: str) -> str:
    """semverlib.go normalizeAndParse, before semver.Parse."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise _CelFailure("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver_message(text: str, normalize: bool = False) -> Any:
    canonical, _ = _parse_semver(_normalize_semver(text) if normalize else text)
    return _SemverMsg(canonical=canonical)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _semver_message(text, normalize)
    except _CelFailure:
        return False
    return True


def _sv(message: Any) -> SemverKey:
    return _parse_semver(message.canonical)[1]


def _semver_cmp(a: Any, b: Any) -> int:
    ka, kb = _sv(a), _sv(b)
    if ka[:3] != kb[:3]:
        return 1 if ka[:3] > kb[:3] else -1
    pa, pb = ka[3], kb[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            return 1 if x > y else -1
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def _int64(value: int) -> int:
    """types.Int(uint64): wraps around like Go's conversion."""
    return value - _UINT64 if value > MAX_INT64 else value


# ---------------------------------------------------------------------------------------------
# kubernetes regex and lists libraries (pkg/cel/library/regex.go, lists.go)


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise _CelFailure(f"error parsing regexp: {exc}") from None


def _find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in zip(items, items[1:], strict=False))


def _min(items: list[Any]) -> Any:
    if not items:
        raise _CelFailure("min(list) argument must not be empty")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise _CelFailure("max(list) argument must not be empty")
    return max(items)


def _sum(items: list[Any]) -> Any:
    if items and isinstance(items[0], float):
        return float(sum(items))
    total = sum(items)
    if not -MAX_INT64 - 1 <= total <= MAX_INT64:
        raise _CelFailure("integer overflow")
    return total


def _decls() -> list[Any]:
    T = _cel.Type
    Q, S, B, I, D, STR = _QUANTITY, _SEMVER, T.BOOL, T.INT, T.DOUBLE, T.STRING
    fns: dict[str, list[Any]] = {}

    def overload(name: str, oid: str, result: Any, params: list[Any], member: bool, impl: Callable | None) -> None:
        # cel-cpp dispatches on run-time kinds, where every message is a message and every list a
        # list: one implementation serves the overloads of a name that look alike at run time.
        args = {"impl": impl} if impl is not None else {}
        fns.setdefault(name, []).append(
            _cel.Overload(oid, return_type=result, parameters=params, is_member=member, **args)
        )

    # quantity.go
    overload("quantity", "string_to_quantity", Q, [STR], False, lambda s: _quantity_message(_parse_quantity_text(s)))
    overload("isQuantity", "is_quantity_string", B, [STR], False, _is_quantity)
    overload("sign", "quantity_sign", I, [Q], False, lambda q: _cmp(_q(q), Fraction(0)))
    overload("isGreaterThan", "quantity_is_greater_than", B, [Q, Q], True, lambda a, b: _compare(a, b) == 1)
    overload("isLessThan", "quantity_is_less_than", B, [Q, Q], True, lambda a, b: _compare(a, b) == -1)
    overload("compareTo", "quantity_compare_to", I, [Q, Q], True, _compare)
    overload("asApproximateFloat", "quantity_get_float", D, [Q], True, lambda q: float(_q(q)))
    overload("asInteger", "quantity_get_int", I, [Q], True, _quantity_as_integer)
    overload("isInteger", "quantity_is_integer", B, [Q], True, _quantity_is_integer)
    overload("add", "quantity_add", Q, [Q, Q], True, lambda a, b: _quantity_message(_q(a) + _q(b)))
    overload("add", "quantity_add_int", Q, [Q, I], True, lambda a, b: _quantity_message(_q(a) + b))
    overload("sub", "quantity_sub", Q, [Q, Q], True, lambda a, b: _quantity_message(_q(a) - _q(b)))
    overload("sub", "quantity_sub_int", Q, [Q, I], True, lambda a, b: _quantity_message(_q(a) - b))
    # semverlib.go, SemverVersion(1) as in the base environment since 1.33
    overload("semver", "string_to_semver", S, [STR], False, lambda s: _semver_message(s))
    overload("semver", "string_bool_to_semver", S, [STR, B], False, _semver_message)
    overload("isSemver", "is_semver_string", B, [STR], False, lambda s: _is_semver(s))
    overload("isSemver", "is_semver_string_bool", B, [STR, B], False, _is_semver)
    overload("isGreaterThan", "semver_is_greater_than", B, [S, S], True, None)
    overload("isLessThan", "semver_is_less_than", B, [S, S], True, None)
    overload("compareTo", "semver_compare_to", I, [S, S], True, None)
    overload("major", "semver_major", I, [S], True, lambda v: _int64(_sv(v)[0]))
    overload("minor", "semver_minor", I, [S], True, lambda v: _int64(_sv(v)[1]))
    overload("patch", "semver_patch", I, [S], True, lambda v: _int64(_sv(v)[2]))
    # regex.go
    overload("find", "string_find_string", STR, [STR, STR], True, _find)
    overload("findAll", "string_find_all_string", T.List(STR), [STR, STR], True, _find_all)
    overload("findAll", "string_find_all_string_int", T.List(STR), [STR, STR, I], True, _find_all)
    # lists.go, for the element types a device attribute can have
    for i, (suffix, element) in enumerate((("int", I), ("double", D), ("string", STR))):
        lst = T.List(element)
        overload("isSorted", f"list_{suffix}_is_sorted", B, [lst], True, _is_sorted if i == 0 else None)
        overload("min", f"list_{suffix}_min", element, [lst], True, _min if i == 0 else None)
        overload("max", f"list_{suffix}_max", element, [lst], True, _max if i == 0 else None)
    overload("sum", "list_int_sum", I, [T.List(I)], True, _sum)
    overload("sum", "list_double_sum", D, [T.List(D)], True, None)
    return [_cel.FunctionDecl(name, overloads) for name, overloads in fns.items()]


# ---------------------------------------------------------------------------------------------
# Environments


class _Environments:
    """A checking environment (device is kubernetes.DRADevice) and an evaluating one (device is a
    map): cel-expr-python checks a variable's Python value against its declared type, and the
    device's domain maps are plain dicts."""

    def __init__(self) -> None:
        decls = _decls()

        def env(device_type: Any) -> Any:
            return _cel.NewEnv(
                descriptor_pool=_POOL,
                variables={"device": device_type},
                # ext.Bindings (DRA), ext.Strings(version 2) and cel.OptionalTypes (base environment)
                extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(2), ext_optional.ExtOptional()],
                functions=decls,
            )

        self.check = env(_cel.Type(f"{_PROTO_PACKAGE}.DRADevice"))
        self.check_consumable = env(_cel.Type(f"{_PROTO_PACKAGE}.DRADeviceConsumableCapacity"))
        self.evaluate = env(_cel.Type.Map(_cel.Type.STRING, _cel.Type.DYN))


_envs: _Environments | None = None
_envs_lock = threading.Lock()


def _environments() -> _Environments:
    global _envs
    if _envs is None:
        with _envs_lock:
            if _envs is None:
                _envs = _Environments()
    return _envs


# ---------------------------------------------------------------------------------------------
# cel-cpp's texts in cel-go's words

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_UNDEFINED_FIELD = re.compile(r"undefined field '([^']*)' not found in struct '[^']*'")
_MISSING_KEY = re.compile(r'^Key not found in map : (?:"((?:[^"\\]|\\.)*)"|(.*))$', re.S)
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+) size=\d+$")
_RUNTIME_TEXTS = {
    "divide by zero": "division by zero",
    "modulus by zero": "modulus by zero",
    "Iteration budget exceeded": COST_LIMIT_EXCEEDED,
}


def _status_text(message: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", message, count=1))


def _compile_text(message: str) -> str:
    return "compilation failed: " + _UNDEFINED_FIELD.sub(r"undefined field '\1'", _status_text(message))


def _missing_key(message: str) -> str | None:
    match = _MISSING_KEY.match(message)
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


def _runtime_text(message: str) -> str:
    text = _status_text(message)
    key = _missing_key(text)
    if key is not None:
        return f"no such key: {key}"
    match = _INDEX_ERROR.match(text)
    if match:
        return f"index out of bounds: {match.group(1)}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    return _RUNTIME_TEXTS.get(text, text)


def _type_name(cel_type: Any) -> str:
    """cel-cpp's type name as cel-go's Type.String() spells it: "int", "list(string)", "map(string, int)"."""
    name = cel_type.name()
    words = {
        "BOOL": "bool",
        "INT": "int",
        "UINT": "uint",
        "DOUBLE": "double",
        "STRING": "string",
        "BYTES": "bytes",
        "NULL": "null_type",
        "DYN": "dyn",
        "LIST": "list",
        "MAP": "map",
        "TYPE": "type",
        "DURATION": "google.protobuf.Duration",
        "TIMESTAMP": "google.protobuf.Timestamp",
        "ERROR": "*error*",
    }
    return re.sub(r"\b[A-Z]+\b", lambda m: words.get(m.group(0), m.group(0)), name).replace("<", "(").replace(">", ")")


# ---------------------------------------------------------------------------------------------
# Compiling and evaluating

_MAX_DOMAIN_RETRIES = 16


class CompiledSelector:
    """One compiled selector (upstream's CompilationResult without an error)."""

    __slots__ = ("_consumable_capacity", "_program", "expression")

    def __init__(self, expression: str, program: Any, consumable_capacity: bool) -> None:
        self.expression = expression
        self._program = program
        self._consumable_capacity = consumable_capacity

    def matches(self, device: DeviceInput) -> bool:
        """Evaluate against one device; raise SelectorError with upstream's runtime error text (e.g. a missing map key)."""
        attributes, capacity = _domain_maps(device)
        device_map: dict[str, Any] = {"driver": device.driver, "attributes": attributes, "capacity": capacity}
        if self._consumable_capacity:
            device_map["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
        data = {"device": device_map}
        added: set[str] = set()
        for _ in range(_MAX_DOMAIN_RETRIES):
            try:
                result = self._program.eval(data=data)
            except RuntimeError as exc:  # cel-cpp aborted evaluation (e.g. its iteration budget)
                raise SelectorError("runtime", _runtime_text(str(exc))) from None
            kind = result.type().name()
            if kind == "BOOL":
                return bool(result.value())
            if kind != "ERROR":
                raise SelectorError(
                    "runtime",
                    f"CEL result of type {_type_name(result.type())} could not be converted to bool: "
                    f"type conversion error from {_go_kind(kind)} to 'bool'",
                )
            message = _status_text(str(result.value()))
            key = _missing_key(message)
            # Upstream's domain maps answer a missing domain with an empty map. cel-cpp's maps cannot,
            # so a failed lookup of a key that is no domain of the device is tried again with that
            # domain present and empty (a key of an inner map fails the same way the second time).
            if key is None or key in attributes or key in capacity or key in added:
                raise SelectorError("runtime", _runtime_text(message))
            added.add(key)
            attributes = {**attributes, key: {}}
            capacity = {**capacity, key: {}}
            device_map["attributes"] = attributes
            device_map["capacity"] = capacity
        raise SelectorError("runtime", _runtime_text(message))

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"


def _go_kind(kind: str) -> str:
    return {"INT": "Int", "UINT": "Uint", "DOUBLE": "Double", "STRING": "String", "BYTES": "Bytes"}.get(
        kind, kind.lower()
    )


@lru_cache(maxsize=4096)
def _quantity_value(quantity: Quantity) -> Any:
    return _quantity_message(quantity.amount)


def _attribute_value(name: str, attribute: AttributeValue) -> Any:
    if attribute.kind == "version":
        try:
            return _semver_message(str(attribute.value))
        except _CelFailure as exc:
            raise SelectorError("runtime", f"attribute {name}: parse semantic version: {exc}") from None
    if attribute.kind not in ("int", "bool", "string"):
        raise SelectorError("runtime", f"attribute {name}: unsupported attribute value")
    return attribute.value


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _domain_maps(device: DeviceInput) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    attributes: dict[str, dict[str, Any]] = {}
    for name, attribute in device.attributes.items():
        value = _attribute_value(name, attribute)
        domain, ident = _split(name, device.driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, quantity in device.capacity.items():
        domain, ident = _split(name, device.driver)
        capacity.setdefault(domain, {})[ident] = _quantity_value(quantity)
    return attributes, capacity


def _compile(expression: str, consumable_capacity: bool) -> CompiledSelector | SelectorError:
    envs = _environments()
    checker = envs.check_consumable if consumable_capacity else envs.check
    try:
        checked = checker.compile(expression)
    except RuntimeError as exc:
        return SelectorError("compile", _compile_text(str(exc)))
    output = checked.return_type()
    if output.name() not in ("BOOL", "DYN"):
        return SelectorError("compile", f"must evaluate to bool or the unknown type, not {_type_name(output)}")
    try:
        program = envs.evaluate.compile(expression)
    except RuntimeError as exc:  # should not happen: the evaluating environment is the more lenient one
        return SelectorError("compile", "unexpected compilation error: " + _status_text(str(exc)))
    return CompiledSelector(expression, program, consumable_capacity)


class _Cache:
    """cel.Cache: an LRU of compiled selectors. Failed compilations are kept too (upstream recompiles
    them, with the same outcome)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, bool], CompiledSelector | SelectorError] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compile(self, expression: str, consumable_capacity: bool) -> CompiledSelector | SelectorError:
        key = (expression, consumable_capacity)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        entry = _compile(expression, consumable_capacity)
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_cache = _Cache(CACHE_SIZE)


def compile_selector(expression: str, *, consumable_capacity: bool = False) -> CompiledSelector:
    """Compile (cached, LRU like upstream's cel.Cache) or raise SelectorError with upstream's compile error text.

    `consumable_capacity` is the DRAConsumableCapacity feature gate (alpha, off in v1.34): with it,
    `device.allowMultipleAllocations` exists.
    """
    entry = _cache.get_or_compile(expression, consumable_capacity)
    if isinstance(entry, SelectorError):
        raise SelectorError(entry.kind, entry.detail)
    return entry


def validate_selector_expression(expression: str, field_path: str = "expression") -> str | None:
    """The API server's check of an expression's length (pkg/apis/resource/validation validateCELSelector):
    None, or the field error text. The scheduler itself does not check the length."""
    if len(expression.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return f"{field_path}: Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
    return None
