"""CEL device selectors of Dynamic Resource Allocation, as kube-scheduler v1.34 evaluates them.

Upstream: staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go and cache.go (v0.34), on
the Kubernetes CEL base environment (staging/src/k8s.io/apiserver/pkg/cel/environment/base.go)
and its libraries (pkg/cel/library: quantity.go, semverlib.go, regex.go, lists.go). Parsing,
type checking and evaluation are cel-cpp's, through `cel-expr-python` (docs/cel.md says why that
one); this module declares upstream's `device` variable and implements the Kubernetes functions
and types on top of it, and turns cel-cpp's error texts into cel-go's.

What upstream does and this module reproduces:

- `device` is the object type kubernetes.DRADevice with the fields `driver`, `attributes`,
  `capacity` and `allowMultipleAllocations`; any other field is a compile error ("undefined
  field 'x'"). The scheduler compiles in environment.StoredExpressions, which ignores feature
  gates, so `allowMultipleAllocations` always exists there (false unless the device sets it); only
  environment.NewExpressions (`new_expressions=True`, the API server's check of a new object)
  leaves it out without DRAConsumableCapacity (`consumable_capacity=True`).
- `device.attributes` is map(string, map(string, google.protobuf.Any)) and `device.capacity`
  map(string, map(string, kubernetes.Quantity)) to the type checker, as compile.go declares them:
  a capacity is type-checked as a quantity, an attribute as cel-go's "unknown type" (dyn-like, but
  no comprehension range). A name without "/" goes under the driver's name. Looking up a domain
  the device does not have gives an empty map (so `device.attributes["other"].x` fails with "no
  such key: x"), while `"other" in device.attributes`, `size()` and the macros see only the
  domains the device has.
- Attribute values are int, bool, string or a semantic version (`kubernetes.Semver`); capacities
  are `kubernetes.Quantity`, compared exactly.
- The result type must be bool or google.protobuf.Any (checked at run time); dyn is refused, as
  compile.go compares the output type with cel.BoolType and cel.AnyType. A run-time result that is
  no bool fails with cel-go's conversion text ("CEL result of type int could not be converted to
  bool: unsupported type conversion from 'int' to bool").
- Compile errors read "compilation failed: ERROR: <input>:1:1: ..." in cel-go's words (member
  calls "found no matching overload for 'f' applied to 'T.(A)'", "type 'T' does not support field
  selection", ...); the allocator prefixes them with "CEL compile error: " and run-time errors with
  "CEL runtime error: "; both are part of `str(SelectorError)` here, the "class X: selector #N: " /
  "claim X: selector #N: " prefix is the caller's.
- Compiled selectors are kept in an LRU cache of upstream's size (the plugin's
  `cel.NewCache(10, ...)`), which compiles without cost estimation and keeps only successful
  compilations, as cache.go does.

docs/cel.md lists what still differs from upstream (chiefly: cel-cpp's iteration budget of 10,000
stands in for cel-go's cost limit of 1,000,000 units, and some base-environment libraries are
missing).
"""

from __future__ import annotations

import itertools
import math
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
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory, struct_pb2

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
    allow_multiple_allocations: bool | None = None  # None reads as false (compile.go ptr.Deref)


class _CelFailure(Exception):
    """Raised by our function implementations; cel-cpp turns it into an error value."""


# ---------------------------------------------------------------------------------------------
# The Kubernetes types as protobuf messages: cel-expr-python carries no opaque Python values, so a
# quantity and a semantic version travel as a message whose one field holds a canonical text.
# Equal values have equal texts, which makes CEL's `==` on messages upstream's Equal().

_PROTO_PACKAGE = "kubernetes"
_DEVICE_TYPE = "DRADevice"
_DEVICE_TYPE_V131 = "DRADeviceV131"


def _build_pool() -> tuple[Any, type, type]:
    field = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    for well_known in (struct_pb2, any_pb2):
        well_known_file = descriptor_pb2.FileDescriptorProto()
        well_known.DESCRIPTOR.CopyToProto(well_known_file)
        pool.Add(well_known_file)
    proto = descriptor_pb2.FileDescriptorProto(
        name="clusterviz/dra_cel.proto",
        package=_PROTO_PACKAGE,
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Quantity", "Semver"):
        message = proto.message_type.add(name=name)
        message.field.add(name="canonical", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    # The object type "kubernetes.DRADevice" of compile.go, for the type checker: it makes
    # `device.nope` a compile error. compile.go declares it twice, with allowMultipleAllocations
    # (deviceTypeV134ConsumableCapacity) and without (deviceTypeV131); the second is this module's
    # DRADeviceV131. `device.attributes` and `device.capacity` are declared as variables of their own
    # with upstream's precise types (see _Environments); these fields only serve `device` used as a
    # value (e.g. `cel.bind(d, device, ...)`), as maps from a domain to map(string, dyn).
    for name, multi_alloc in ((_DEVICE_TYPE, True), (_DEVICE_TYPE_V131, False)):
        message = proto.message_type.add(name=name)
        message.field.add(name="driver", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
        for number, fname, entry in ((2, "attributes", "AttributesEntry"), (3, "capacity", "CapacityEntry")):
            map_entry = message.nested_type.add(name=entry)
            map_entry.options.map_entry = True
            map_entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
            map_entry.field.add(
                name="value",
                number=2,
                type=field.TYPE_MESSAGE,
                type_name=".google.protobuf.Struct",
                label=field.LABEL_OPTIONAL,
            )
            message.field.add(
                name=fname,
                number=number,
                type=field.TYPE_MESSAGE,
                type_name=f".{_PROTO_PACKAGE}.{name}.{entry}",
                label=field.LABEL_REPEATED,
            )
        if multi_alloc:
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
_QUANTITY_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
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
        quantity = parse_quantity(text)
    except QuantityError:
        raise _CelFailure(_QUANTITY_SUFFIX if _QUANTITY_SHAPE.match(text) else _QUANTITY_FORMAT_WRONG) from None
    return _uncapped(quantity.text, quantity.amount)


_QUANTITY_PARTS = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_MAX_UNCAPPED_EXPONENT = 400
_NANO = Fraction(1, 10**9)


def _uncapped(text: str, amount: Fraction) -> Fraction:
    """apimachinery's ParseQuantity caps only a binary-SI amount at MaxInt64 (quantity.go,
    `format == BinarySI && amount.Cmp(maxAllowed.Dec) > 0`); scheduler_core.api.quantity caps every
    format, which is what the scheduler's resource arithmetic needs. The CEL library sees upstream's
    uncapped decimal amount (so `quantity("1E20").isInteger()` is false, as upstream)."""
    if abs(amount) != MAX_INT64:
        return amount
    match = _QUANTITY_PARTS.match(text)
    if match is None:
        return amount
    sign, whole, frac, suffix = match.groups()
    suffix = suffix or ""
    if suffix.endswith("i"):
        return amount
    exponent = _DECIMAL_EXPONENTS[suffix] if suffix in _DECIMAL_EXPONENTS else int(suffix[1:])
    if abs(exponent) > _MAX_UNCAPPED_EXPONENT:  # beyond any int64 anyway; keeps "1e999999" cheap
        return amount
    frac = frac or ""
    magnitude = Fraction(int((whole or "0") + frac), 10 ** len(frac)) * Fraction(10) ** exponent
    if magnitude % _NANO:  # rounded up to a whole number of nano units, as upstream
        magnitude = (magnitude // _NANO + 1) * _NANO
    return -magnitude if sign == "-" else magnitude


def _approximate_float(amount: Fraction) -> float:
    try:
        return float(amount)
    except OverflowError:  # AsApproximateFloat64 gives ±Inf
        return math.copysign(math.inf, amount)


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
                raise _CelFailure(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(identifier)}")
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
    return all(a <= b for a, b in itertools.pairwise(items))


def _min(items: list[Any]) -> Any:
    if not items:
        raise _CelFailure("min called on empty list")  # lists.go cmp()
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise _CelFailure("max called on empty list")
    return max(items)


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    if isinstance(items[0], float):
        return float(sum(items))
    total = sum(items)
    if not -MAX_INT64 - 1 <= total <= MAX_INT64:
        raise _CelFailure("integer overflow")
    return total


def _cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality on the Python values cel-expr-python passes (bool is no number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(
            any(_cel_equal(k, k2) and _cel_equal(v, b[k2]) for k2 in b) for k, v in a.items()
        )
    if isinstance(a, bytes | bytearray) and isinstance(b, bytes | bytearray):
        return bytes(a) == bytes(b)
    return type(a) is type(b) and a == b


# cel-go ext/sets.go (base environment since 1.29)
def _sets_contains(items: list[Any], sub: list[Any]) -> bool:
    return all(any(_cel_equal(x, y) for x in items) for y in sub)


def _sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(any(_cel_equal(x, y) for x in a) for y in b)


def _decls(evaluating: bool) -> list[Any]:
    """The Kubernetes functions. cel-expr-python registers one implementation per name and run-time
    argument kinds, and converts its result to the declared type of that overload, so overloads that
    differ only in a list's element type cannot each have one: the checking environments get
    upstream's typed overloads (no implementations needed), the evaluating one a single overload on
    list(dyn) returning dyn."""
    T = _cel.Type
    Q, S, B, INT, D, STR = _QUANTITY, _SEMVER, T.BOOL, T.INT, T.DOUBLE, T.STRING
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
    overload("sign", "quantity_sign", INT, [Q], False, lambda q: _cmp(_q(q), Fraction(0)))
    overload("isGreaterThan", "quantity_is_greater_than", B, [Q, Q], True, lambda a, b: _compare(a, b) == 1)
    overload("isLessThan", "quantity_is_less_than", B, [Q, Q], True, lambda a, b: _compare(a, b) == -1)
    overload("compareTo", "quantity_compare_to", INT, [Q, Q], True, _compare)
    overload("asApproximateFloat", "quantity_get_float", D, [Q], True, lambda q: _approximate_float(_q(q)))
    overload("asInteger", "quantity_get_int", INT, [Q], True, _quantity_as_integer)
    overload("isInteger", "quantity_is_integer", B, [Q], True, _quantity_is_integer)
    overload("add", "quantity_add", Q, [Q, Q], True, lambda a, b: _quantity_message(_q(a) + _q(b)))
    overload("add", "quantity_add_int", Q, [Q, INT], True, lambda a, b: _quantity_message(_q(a) + b))
    overload("sub", "quantity_sub", Q, [Q, Q], True, lambda a, b: _quantity_message(_q(a) - _q(b)))
    overload("sub", "quantity_sub_int", Q, [Q, INT], True, lambda a, b: _quantity_message(_q(a) - b))
    # semverlib.go, SemverVersion(1) as in the base environment since 1.33
    overload("semver", "string_to_semver", S, [STR], False, lambda s: _semver_message(s))
    overload("semver", "string_bool_to_semver", S, [STR, B], False, _semver_message)
    overload("isSemver", "is_semver_string", B, [STR], False, lambda s: _is_semver(s))
    overload("isSemver", "is_semver_string_bool", B, [STR, B], False, _is_semver)
    overload("isGreaterThan", "semver_is_greater_than", B, [S, S], True, None)
    overload("isLessThan", "semver_is_less_than", B, [S, S], True, None)
    overload("compareTo", "semver_compare_to", INT, [S, S], True, None)
    overload("major", "semver_major", INT, [S], True, lambda v: _int64(_sv(v)[0]))
    overload("minor", "semver_minor", INT, [S], True, lambda v: _int64(_sv(v)[1]))
    overload("patch", "semver_patch", INT, [S], True, lambda v: _int64(_sv(v)[2]))
    # regex.go
    overload("find", "string_find_string", STR, [STR, STR], True, _find)
    overload("findAll", "string_find_all_string", T.List(STR), [STR, STR], True, _find_all)
    overload("findAll", "string_find_all_string_int", T.List(STR), [STR, STR, INT], True, _find_all)
    # lists.go: isSorted, min and max for its comparableTypes, sum for its summableTypes
    comparable = (
        ("int", INT),
        ("uint", T.UINT),
        ("double", D),
        ("bool", B),
        ("string", STR),
        ("bytes", T.BYTES),
    )
    # (lists.go also has duration and timestamp lists: cel-expr-python cannot return those as dyn.)
    if evaluating:
        any_list = T.List(T.DYN)
        overload("isSorted", "list_is_sorted_bool", B, [any_list], True, _is_sorted)
        overload("min", "list_min", T.DYN, [any_list], True, _min)
        overload("max", "list_max", T.DYN, [any_list], True, _max)
        overload("sum", "list_sum", T.DYN, [any_list], True, _sum)
    else:
        for suffix, element in comparable:
            lst = T.List(element)
            overload("isSorted", f"list_{suffix}_is_sorted_bool", B, [lst], True, None)
            overload("min", f"list_{suffix}_min_{suffix}", element, [lst], True, None)
            overload("max", f"list_{suffix}_max_{suffix}", element, [lst], True, None)
        for suffix, element in (("int", INT), ("uint", T.UINT), ("double", D)):
            overload("sum", f"list_{suffix}_sum_{suffix}", element, [T.List(element)], True, None)
    # ext.Sets (cel-go ext/sets.go) on list(A), list(A): declared on dyn here (cel-expr-python takes no
    # type parameters), so a mismatch of element types that cel-go's checker refuses is evaluated here.
    # (lists.go indexOf / lastIndexOf on lists cannot be added: cel-expr-python refuses a second
    # declaration of the names ext.Strings declares for strings.)
    DYN_LIST = T.List(T.DYN)
    overload("sets.contains", "list_sets_contains_list", B, [DYN_LIST, DYN_LIST], False, _sets_contains)
    overload("sets.equivalent", "list_sets_equivalent_list", B, [DYN_LIST, DYN_LIST], False, _sets_equivalent)
    overload("sets.intersects", "list_sets_intersects_list", B, [DYN_LIST, DYN_LIST], False, _sets_intersects)
    return [_cel.FunctionDecl(name, overloads) for name, overloads in fns.items()]


# ---------------------------------------------------------------------------------------------
# Environments


# compile.go: innerAttributesMapType / outerAttributesMapType (values of apiservercel.AnyType, whose CEL
# type is cel.AnyType = google.protobuf.Any) and the capacity maps (values of kubernetes.Quantity).
_ANY = _cel.Type("google.protobuf.Any")
_ATTRIBUTES_TYPE = _cel.Type.Map(_cel.Type.STRING, _cel.Type.Map(_cel.Type.STRING, _ANY))
_CAPACITY_TYPE = _cel.Type.Map(_cel.Type.STRING, _cel.Type.Map(_cel.Type.STRING, _QUANTITY))
_DOMAIN_MAPS_VALUE_TYPE = _cel.Type.Map(_cel.Type.STRING, _cel.Type.Map(_cel.Type.STRING, _cel.Type.DYN))
_ATTRIBUTES_VAR = "device.attributes"
_CAPACITY_VAR = "device.capacity"


class _Environments:
    """Checking environments and an evaluating one.

    The checking environments declare `device` as the object type kubernetes.DRADevice (so an
    unknown field is a compile error, as upstream) and, beside it, the qualified names
    `device.attributes` and `device.capacity` with upstream's types: CEL resolves `device.attributes`
    to the longest declared name, so `device.capacity["d"].memory` is a kubernetes.Quantity and
    `device.attributes["d"].model` a google.protobuf.Any to the checker, as in cel-go. The
    evaluating environment declares the same names with dyn values, since cel-expr-python checks a
    variable's Python value against its declared type; it compiles only what a checking
    environment accepted.

    Environments (compile.go newCompiler; apiserver pkg/cel/environment/environment.go Extend):
    `stored` is environment.StoredExpressions, which ignores feature gates and so always has
    `device.allowMultipleAllocations` (the scheduler's allocator compiles there); `new` and
    `new_consumable` are environment.NewExpressions without and with DRAConsumableCapacity.
    """

    def __init__(self) -> None:
        def env(device_type: Any, attributes_type: Any, capacity_type: Any, evaluating: bool = False) -> Any:
            return _cel.NewEnv(
                descriptor_pool=_POOL,
                variables={"device": device_type, _ATTRIBUTES_VAR: attributes_type, _CAPACITY_VAR: capacity_type},
                # ext.Bindings (DRA), ext.Strings(version 2) and cel.OptionalTypes (base environment)
                extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(2), ext_optional.ExtOptional()],
                functions=_decls(evaluating),
            )

        with_multi_alloc = _cel.Type(f"{_PROTO_PACKAGE}.{_DEVICE_TYPE}")
        v131 = _cel.Type(f"{_PROTO_PACKAGE}.{_DEVICE_TYPE_V131}")
        self.stored = env(with_multi_alloc, _ATTRIBUTES_TYPE, _CAPACITY_TYPE)
        self.new_consumable = self.stored
        self.new = env(v131, _ATTRIBUTES_TYPE, _CAPACITY_TYPE)
        self.evaluate = env(
            _cel.Type.Map(_cel.Type.STRING, _cel.Type.DYN), _DOMAIN_MAPS_VALUE_TYPE, _DOMAIN_MAPS_VALUE_TYPE, True
        )

    def checker(self, consumable_capacity: bool, new_expressions: bool) -> Any:
        if not new_expressions:
            return self.stored
        return self.new_consumable if consumable_capacity else self.new


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
# cel-go checker/errors.go typeDoesNotSupportFieldSelection
_NOT_SELECTABLE = re.compile(r"expression of type '([^']*)' cannot be the operand of a select operation")
_NO_OVERLOAD = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']*)' applied to '\((.*)\)'$"
)
# cel-go checker/errors.go notAComprehensionRange
_NOT_A_RANGE = " cannot be the range of a comprehension "
# cel-cpp reports a parse failure once more after its syntax errors; cel-go does not
_NIL_PARSE_TREE = "\nERROR: <input>:-1:-1: <<nil>> parsetree"
_MISSING_KEY = re.compile(r'^Key not found in map : (?:"((?:[^"\\]|\\.)*)"|(.*))$', re.S)
_INDEX_ERROR = re.compile(r"^Index error: index=(-?\d+) size=\d+$")
_RUNTIME_TEXTS = {
    "divide by zero": "division by zero",
    "modulus by zero": "modulus by zero",
    "Iteration budget exceeded": COST_LIMIT_EXCEEDED,
}
# cel-go checker/format.go FormatCELType, where it differs from Type.String()
_FORMAT_CEL_TYPE = {
    "google.protobuf.Any": "any",
    "google.protobuf.Duration": "duration",
    "google.protobuf.Timestamp": "timestamp",
    "null_type": "null",
}
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


def _status_text(message: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", message, count=1))


def _split_signature(text: str) -> list[str]:
    """The argument types of cel-cpp's "(a, map(b, c))", split at the top-level commas."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        depth += (char == "(") - (char == ")")
        current.append(char)
    if current or parts:
        parts.append("".join(current).strip())
    return parts


def _format_cel_type(name: str) -> str:
    return re.sub(r"[A-Za-z_][A-Za-z0-9_.]*", lambda m: _FORMAT_CEL_TYPE.get(m.group(0), m.group(0)), name)


def _is_member_call(expression: str, line: int, column: int, function: str) -> bool:
    """Whether the call that cel-cpp reports at line:column ('(' of the call) is `x.function(...)`."""
    lines = expression.split("\n")
    if not 1 <= line <= len(lines):
        return False
    text = lines[line - 1]
    i = column - 1
    if i >= len(text) or text[i] != "(":
        return False
    i -= 1
    while i >= 0 and text[i].isspace():
        i -= 1
    end = i + 1
    while i >= 0 and _IDENT_CHAR.match(text[i]):
        i -= 1
    if text[i + 1 : end] != function:
        return False
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and text[i] == "."


def _overload_line(expression: str, line: str) -> str:
    # cel-go checker/errors.go noMatchingOverload and format.go formatFunctionDeclType: a member
    # call's target is written before the arguments ("kubernetes.Quantity.(int)").
    match = _NO_OVERLOAD.match(line)
    if match is None:
        return line
    row, column, function, signature = match.groups()
    args = [_format_cel_type(arg) for arg in _split_signature(signature)]
    if args and _is_member_call(expression, int(row), int(column), function):
        formatted = f"{args[0]}.({', '.join(args[1:])})"
    else:
        formatted = f"({', '.join(args)})"
    return f"ERROR: <input>:{row}:{column}: found no matching overload for '{function}' applied to '{formatted}'"


def _compile_text(message: str, expression: str = "") -> str:
    text = _status_text(message).replace(_NIL_PARSE_TREE, "")
    text = _UNDEFINED_FIELD.sub(r"undefined field '\1'", text)
    text = _NOT_SELECTABLE.sub(r"type '\1' does not support field selection", text)
    text = text.replace(_NOT_A_RANGE, " cannot be range of a comprehension ")
    # cel-cpp escapes '?' in ANTLR's "expecting {...}" sets; cel-go does not
    text = text.replace("'\\u003F'", "'?'")
    return "compilation failed: " + "\n".join(_overload_line(expression, line) for line in text.split("\n"))


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


_TYPE_WORDS = {
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
    # cel-expr-python names google.protobuf.Any "ERROR" inside a checked type
    "ERROR": "google.protobuf.Any",
    "any": "google.protobuf.Any",
    f"{_PROTO_PACKAGE}.{_DEVICE_TYPE_V131}": f"{_PROTO_PACKAGE}.{_DEVICE_TYPE}",
}


def _type_name(cel_type: Any) -> str:
    """cel-cpp's type name as cel-go's Type.String() spells it: "int", "list(string)", "map(string, int)"."""
    name = cel_type.name()
    return (
        re.sub(r"[A-Za-z_][A-Za-z0-9_.]*", lambda m: _TYPE_WORDS.get(m.group(0), m.group(0)), name)
        .replace("<", "(")
        .replace(">", ")")
    )


def _is_any(cel_type: Any) -> bool:
    return cel_type == _ANY or cel_type.name() in ("ERROR", "any")


# cel-go common/types/*.go ConvertToNative(reflect.TypeOf(true)) failures, and Type().TypeName(), for
# DeviceMatches' "CEL result of type %s could not be converted to bool: %w" (compile.go).
_NOT_BOOL = {
    "INT": ("int", "unsupported type conversion from 'int' to bool"),
    "UINT": ("uint", "unsupported type conversion from 'uint' to bool"),
    "DOUBLE": ("double", "type conversion error from Double to 'bool'"),
    "STRING": ("string", "unsupported native conversion from string to 'bool'"),
    "BYTES": ("bytes", "type conversion error from Bytes to 'bool'"),
    "NULL": ("null_type", "type conversion error from 'null_type' to 'bool'"),
    "LIST": ("list", "type conversion error from list to 'bool'"),
    "MAP": ("map", "type conversion error from map to 'bool'"),
    "TYPE": ("type", "type conversion not supported for 'type'"),
    "DURATION": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
    "TIMESTAMP": ("google.protobuf.Timestamp", "type conversion error from 'Timestamp' to 'bool'"),
    # apiserver pkg/cel/quantity.go and semver.go
    f"{_PROTO_PACKAGE}.Quantity": ("kubernetes.Quantity", "type conversion error from 'Quantity' to 'bool'"),
    f"{_PROTO_PACKAGE}.Semver": ("kubernetes.Semver", "type conversion error from 'Semver' to 'bool'"),
}


def _not_bool_text(cel_type: Any) -> str:
    name = cel_type.name()
    kind = name.split("<", 1)[0]
    type_name, reason = _NOT_BOOL.get(kind, (_type_name(cel_type), f"type conversion error from '{name}' to 'bool'"))
    return f"CEL result of type {type_name} could not be converted to bool: {reason}"


# ---------------------------------------------------------------------------------------------
# Compiling and evaluating

_MAX_DOMAIN_RETRIES = 16


class CompiledSelector:
    """One compiled selector (upstream's CompilationResult without an error)."""

    __slots__ = ("_program", "expression")

    def __init__(self, expression: str, program: Any) -> None:
        self.expression = expression
        self._program = program

    def matches(self, device: DeviceInput) -> bool:
        """Evaluate against one device; raise SelectorError with upstream's runtime error text
        (e.g. a missing map key)."""
        attributes, capacity = _domain_maps(device)
        # compile.go DeviceMatches: allowMultipleAllocations is always set (false when unset)
        device_map: dict[str, Any] = {
            "driver": device.driver,
            "allowMultipleAllocations": bool(device.allow_multiple_allocations),
            "attributes": attributes,
            "capacity": capacity,
        }
        data = {"device": device_map, _ATTRIBUTES_VAR: attributes, _CAPACITY_VAR: capacity}
        added: set[str] = set()
        for _ in range(_MAX_DOMAIN_RETRIES):
            try:
                result = self._program.eval(data=data)
            except RuntimeError as exc:  # cel-cpp aborted evaluation (e.g. its iteration budget)
                raise SelectorError("runtime", _runtime_text(str(exc))) from None
            result_type = result.type()
            kind = result_type.name()
            if kind == "BOOL":
                return bool(result.value())
            if kind != "ERROR":
                raise SelectorError("runtime", _not_bool_text(result_type))
            message = _status_text(str(result.value()))
            key = _missing_key(message)
            # Upstream's domain maps answer a missing domain with an empty map (compile.go mapper.Find).
            # cel-cpp's maps cannot, so a failed lookup of a key that is no domain of the device is tried
            # again with that domain present and empty (a key of an inner map fails the same way the
            # second time). `in`, size() and the macros see the device's own domains, as upstream.
            if key is None or key in attributes or key in capacity or key in added:
                raise SelectorError("runtime", _runtime_text(message))
            added.add(key)
            attributes = {**attributes, key: {}}
            capacity = {**capacity, key: {}}
            device_map["attributes"] = attributes
            device_map["capacity"] = capacity
            data = {"device": device_map, _ATTRIBUTES_VAR: attributes, _CAPACITY_VAR: capacity}
        raise SelectorError("runtime", _runtime_text(message))

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"


@lru_cache(maxsize=4096)
def _quantity_value(quantity: Quantity) -> Any:
    return _quantity_message(_uncapped(quantity.text, quantity.amount))


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


def _compile(
    expression: str, consumable_capacity: bool = False, new_expressions: bool = False
) -> CompiledSelector | SelectorError:
    """compile.go CompileCELExpression (without cost estimation)."""
    envs = _environments()
    try:
        checked = envs.checker(consumable_capacity, new_expressions).compile(expression)
    except RuntimeError as exc:
        return SelectorError("compile", _compile_text(str(exc), expression))
    output = checked.return_type()
    # compile.go: `ast.OutputType() != cel.BoolType && ast.OutputType() != cel.AnyType`, where
    # cel.AnyType is google.protobuf.Any (an attribute's type), not dyn: `dyn(true)` is refused.
    if output.name() != "BOOL" and not _is_any(output):
        return SelectorError("compile", f"must evaluate to bool or the unknown type, not {_type_name(output)}")
    try:
        program = envs.evaluate.compile(expression)
    except RuntimeError as exc:  # should not happen: the evaluating environment is the more lenient one
        return SelectorError("compile", "unexpected compilation error: " + _status_text(str(exc)))
    return CompiledSelector(expression, program)


class _Cache:
    """cache.go Cache: an LRU of successfully compiled selectors; a failed compilation is not kept
    (it is compiled again the next time, with the same outcome)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, bool, bool], CompiledSelector] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compile(
        self, expression: str, consumable_capacity: bool = False, new_expressions: bool = False
    ) -> CompiledSelector | SelectorError:
        key = (expression, consumable_capacity, new_expressions)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        result = _compile(expression, consumable_capacity, new_expressions)
        if isinstance(result, SelectorError):
            return result
        with self._lock:
            self._entries[key] = result
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return result

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, expression: object) -> bool:
        return any(key[0] == expression for key in self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_cache = _Cache(CACHE_SIZE)


def compile_selector(
    expression: str, *, consumable_capacity: bool = False, new_expressions: bool = False
) -> CompiledSelector:
    """Compile (cached, LRU like upstream's cel.Cache) or raise SelectorError with upstream's compile error text.

    `consumable_capacity` is the DRAConsumableCapacity feature gate (alpha, off in v1.34). As upstream,
    it matters only with `new_expressions` (environment.NewExpressions, what the API server uses for a
    new object): the scheduler compiles in environment.StoredExpressions, which ignores feature gates,
    so there `device.allowMultipleAllocations` always exists (false unless the device sets it).
    """
    entry = _cache.get_or_compile(expression, consumable_capacity, new_expressions)
    if isinstance(entry, SelectorError):
        raise SelectorError(entry.kind, entry.detail)
    return entry


def _go_quote(text: str) -> str:
    """strconv.Quote, which field.Invalid uses for a string value (%q)."""
    out = ['"']
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in escapes:
            out.append(escapes[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def validate_selector_expression(
    expression: str, field_path: str = "expression", *, stored: bool = False, consumable_capacity: bool = False
) -> str | None:
    """The API server's check of a CEL selector (pkg/apis/resource/validation validateCELSelector, v1.34):
    None, or the field error's text. Too long (over CELSelectorExpressionMaxLength bytes): "Too long",
    without compiling; else a compile error in environment.NewExpressions (StoredExpressions when
    `stored`, i.e. for an update that keeps the expression): "Invalid value". Upstream also refuses an
    expression whose estimated worst-case cost exceeds CELSelectorExpressionMaxCost ("too complex,
    exceeds cost limit"); cel-cpp estimates no cost, so that check is not made here. The scheduler
    itself does not validate."""
    if len(expression.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return f"{field_path}: Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
    result = _compile(expression, consumable_capacity, not stored)
    if isinstance(result, SelectorError):
        return f"{field_path}: Invalid value: {_go_quote(expression)}: {result.detail}"
    return None
