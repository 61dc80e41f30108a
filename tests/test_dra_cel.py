"""scheduler_core/dra/cel.py against upstream's results.

Upstream (kube-scheduler v1.34, k8s.io/dynamic-resource-allocation v0.34.x, on cel-go v0.26.0):
- staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go (TestCEL, TestInterrupt): the
  `UPSTREAM_CASES` below, one for each of its cases, with its expression, device and result.
  Upstream checks an error with strings.Contains; these tests also check the whole text, so each
  error case carries upstream's fragment and the full text (cel-go's wording, see cel.py).
  Upstream's `expectCost` (the worst-case cost estimate) is not reproduced: cel-cpp estimates no
  cost; the scheduler's cache compiles without estimation too (cache.go).
- staging/src/k8s.io/dynamic-resource-allocation/cel/cache_test.go (TestCacheSemantic,
  TestCacheConcurrency), for the scheduler's cache of size 10 (dynamicresources.go
  `cel.NewCache(10, ...)`).
- staging/src/k8s.io/apiserver/pkg/cel/library/quantity_test.go and semver_test.go, as selectors.
- pkg/apis/resource/validation/validation.go validateCELSelector, for validate_selector_expression.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from scheduler_core.api.quantity import parse_quantity
from scheduler_core.dra import cel

DRIVER = "dra.example.com"
Attr = cel.AttributeValue


def device(
    driver: str = "",
    attributes: dict[str, Attr] | None = None,
    capacity: dict[str, str] | None = None,
    allow_multiple_allocations: bool | None = None,
) -> cel.DeviceInput:
    return cel.DeviceInput(
        driver=driver,
        attributes=attributes or {},
        capacity={name: parse_quantity(text) for name, text in (capacity or {}).items()},
        allow_multiple_allocations=allow_multiple_allocations,
    )


def outcome(expression: str, dev: cel.DeviceInput, **options: bool) -> Any:
    """True/False, or ("compile" | "runtime", detail)."""
    try:
        selector = cel.compile_selector(expression, **options)
    except cel.SelectorError as exc:
        assert exc.kind == "compile"
        return ("compile", exc.detail)
    try:
        return selector.matches(dev)
    except cel.SelectorError as exc:
        assert exc.kind == "runtime"
        return ("runtime", exc.detail)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cel._cache.clear()


def _expensive_attributes() -> dict[str, Attr]:
    # compile_test.go "expensive": ResourceSliceMaxAttributesAndCapacitiesPerDevice (32) attributes
    # whose IDs have DeviceMaxIDLength (32) characters.
    attributes = {}
    for i in range(32):
        suffix = f"-{i}"
        attributes["dra.example.com/" + "x" * (32 - len(suffix)) + suffix] = Attr("string", "abc")
    return attributes


EXPENSIVE = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
SYNTAX_EXPECTING = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
)
ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
T = True
NAME_TRUE = {"name": Attr("bool", True)}
NAME_1MI = {"name": "1Mi"}
NEW = {"new_expressions": True}  # environment.NewExpressions (envType in compile_test.go)

# (compile_test.go case, expression, device, compile options, expected, upstream's error fragment)
UPSTREAM_CASES: list[tuple[str, str, cel.DeviceInput, dict[str, bool], Any, str | None]] = [
    ("true", "true", device(), {}, True, None),
    ("false", "false", device(), {}, False, None),
    (
        "syntax-error",
        "?!",
        device(),
        {},
        (
            "compile",
            f"compilation failed: ERROR: <input>:1:1: Syntax error: extraneous input '?' expecting {SYNTAX_EXPECTING}\n"
            " | ?!\n | ^\n"
            f"ERROR: <input>:1:3: Syntax error: extraneous input '<EOF>' expecting {SYNTAX_EXPECTING}\n"
            " | ?!\n | ..^",
        ),
        "Syntax error",
    ),
    ("type-error", "1", device(), {}, ("compile", "must evaluate to bool or the unknown type, not int"), None),
    (
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        device(),
        {},
        ("runtime", "no such key: noSuchAttr"),
        "no such key: noSuchAttr",
    ),
    (
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        device(),
        {},
        ("runtime", "no such key: noSuchAttr"),
        "no such key: noSuchAttr",
    ),
    ("domain-check-negative", '"no-such-domain" in device.attributes', device(), {}, False, None),
    (
        "domain-check-positive",
        '"dra.example.com" in device.attributes',
        device(attributes={"dra.example.com/something": Attr("bool", True)}),
        {},
        True,
        None,
    ),
    ("empty-driver-name", 'device.driver == ""', device(), {}, True, None),
    ("real-driver-name", 'device.driver == "dra.example.com"', device(DRIVER), {}, True, None),
    (
        "driver-name-qualifier",
        'device.attributes["dra.example.com"].name',
        device(DRIVER, NAME_TRUE),
        {},
        True,
        None,
    ),
    (
        "driver-name-qualifier-map-lookup",
        'device.attributes["dra.example.com"]["name"]',
        device(DRIVER, NAME_TRUE),
        {},
        True,
        None,
    ),
    (
        "bind",
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        device(DRIVER, NAME_TRUE),
        {},
        True,
        None,
    ),
    (
        "qualified-attribute-name",
        'device.attributes["other.example.com"].name',
        device(DRIVER, {"other.example.com/name": Attr("bool", True)}),
        {},
        True,
        None,
    ),
    ("bool", 'device.attributes["dra.example.com"].name', device(DRIVER, NAME_TRUE), {}, True, None),
    (
        "int",
        'device.attributes["dra.example.com"].name > 0',
        device(DRIVER, {"name": Attr("int", 1)}),
        {},
        True,
        None,
    ),
    (
        "string",
        'device.attributes["dra.example.com"].name == "fish"',
        device(DRIVER, {"name": Attr("string", "fish")}),
        {},
        True,
        None,
    ),
    (
        "version",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        device(DRIVER, {"name": Attr("version", "1.0.0")}),
        {},
        True,
        None,
    ),
    (
        "version_v",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        device(DRIVER, {"name": Attr("version", "1.0.0")}),
        {},
        True,
        None,
    ),
    (
        "quantity",
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(DRIVER, capacity=NAME_1MI),
        {},
        True,
        None,
    ),
    (
        "check-positive",
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(DRIVER, capacity=NAME_1MI),
        {},
        True,
        None,
    ),
    (
        "check-negative",
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(),
        {},
        True,
        None,
    ),
    (
        "all",
        ALL,
        device(
            DRIVER,
            {
                "bool": Attr("bool", True),
                "int": Attr("int", 1),
                "string": Attr("string", "fish"),
                "version": Attr("version", "1.0.0"),
            },
            {"quantity": "1Mi"},
        ),
        {},
        True,
        None,
    ),
    (
        "many",
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        device(DRIVER, {"a": Attr("bool", True), "b": Attr("bool", True), "c": Attr("bool", True)}),
        {},
        True,
        None,
    ),
    (
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        device(DRIVER, {"services": Attr("string", "some_example_value")}),
        {},
        True,
        None,
    ),
    (
        "check_attribute_ids",
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        device(DRIVER, {"services": Attr("string", "some_example_value")}),
        {},
        True,
        None,
    ),
    (
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        device(DRIVER, {"services": Attr("string", "some_example_value")}),
        {},
        True,
        None,
    ),
    (
        "regexp_attribute",
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        device(DRIVER, {"services": Attr("string", "asymetric")}),
        {},
        True,
        None,
    ),
    (
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        device(DRIVER, capacity={"memory": "1Mi"}),
        {},
        True,
        None,
    ),
    (
        "check_capacity_ids",
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        device(DRIVER, capacity={"memory": "1Mi"}),
        {},
        True,
        None,
    ),
    (
        "expensive",
        EXPENSIVE,
        device(DRIVER, _expensive_attributes()),
        {},
        ("runtime", "operation cancelled: actual cost limit exceeded"),
        "actual cost limit exceeded",
    ),
    (
        "allow_multiple_allocations",
        "device.allowMultipleAllocations == true",
        device(DRIVER, allow_multiple_allocations=True),
        {"consumable_capacity": True},
        True,
        None,
    ),
    (
        "allow_multiple_allocations_default",
        "device.allowMultipleAllocations == false",
        device(DRIVER),
        {"consumable_capacity": True},
        True,
        None,
    ),
    (
        "allow_multiple_allocations_false",
        "device.allowMultipleAllocations == false",
        device(DRIVER, allow_multiple_allocations=False),
        {"consumable_capacity": True},
        True,
        None,
    ),
    (
        "allow_multiple_allocations_new",
        "device.allowMultipleAllocations == false",
        device(DRIVER, allow_multiple_allocations=False),
        {"consumable_capacity": True, **NEW},
        True,
        None,
    ),
    (
        "allow_multiple_allocations_enabled",
        "device.allowMultipleAllocations == false",
        device(DRIVER, allow_multiple_allocations=False),
        {"consumable_capacity": True, **NEW},
        True,
        None,
    ),
    (
        "allow_multiple_allocations_disabled",
        "device.allowMultipleAllocations == false",
        device(DRIVER),
        {"consumable_capacity": False, **NEW},
        (
            "compile",
            "compilation failed: ERROR: <input>:1:7: undefined field 'allowMultipleAllocations'\n"
            " | device.allowMultipleAllocations == false\n"
            " | ......^",
        ),
        "undefined field 'allowMultipleAllocations'",
    ),
]


@pytest.mark.parametrize(
    ("expression", "dev", "options", "expected", "fragment"),
    [case[1:] for case in UPSTREAM_CASES],
    ids=[case[0] for case in UPSTREAM_CASES],
)
def test_upstream_compile_test_cases(
    expression: str, dev: cel.DeviceInput, options: dict[str, bool], expected: Any, fragment: str | None
) -> None:
    got = outcome(expression, dev, **options)
    assert got == expected
    if fragment is not None:
        assert fragment in got[1]


def test_upstream_case_list_is_complete() -> None:
    # compile_test.go v0.34 has 37 cases in `testcases`
    assert len(UPSTREAM_CASES) == 37
    assert len({case[0] for case in UPSTREAM_CASES}) == 37


def test_interrupt_expression_compiles_and_evaluates() -> None:
    # compile_test.go TestInterrupt: this expression compiles; with 1000 int attributes and a live
    # context it evaluates without error (attr3 * 20 == 60). Cancellation has no counterpart here.
    expression = (
        'device.attributes["dra.example.com"].map(key, device.attributes["dra.example.com"][key] * 20)'
        ".filter(e, e > 50).exists(e, e == 60)"
    )
    attributes = {f"dra.example.com/attr{i}": Attr("int", i) for i in range(1000)}
    assert outcome(expression, device(attributes=attributes)) is True


def test_stored_expressions_ignore_the_feature_gate() -> None:
    # environment.go Extend: StoredExpressions ignores FeatureEnabled, so compile.go's two device
    # types are both declared there and `device.allowMultipleAllocations` exists without the gate
    # (upstream's comment on envType: "The feature gate only has an effect in combination with
    # environment.NewExpressions"). The scheduler's cache compiles in StoredExpressions.
    assert outcome("device.allowMultipleAllocations == false", device(DRIVER)) is True
    assert outcome("device.allowMultipleAllocations", device(DRIVER, allow_multiple_allocations=True)) is True


# --- missing domains, result types, texts -------------------------------------------------------


def test_missing_domain_is_an_empty_map() -> None:
    # compile.go newStringInterfaceMapWithDefault: looking up an unknown domain gives an empty map,
    # while `in`, size() and the macros see only the device's own domains.
    dev = device(DRIVER, {"model": Attr("string", "a100")}, {"memory": "1Gi"})
    assert outcome('device.attributes["gpu.example.com"] == {}', dev) is True
    assert outcome('size(device.attributes["gpu.example.com"]) == 0', dev) is True
    assert outcome('"model" in device.attributes["gpu.example.com"]', dev) is False
    assert outcome("size(device.attributes) == 1 && size(device.capacity) == 1", dev) is True
    assert outcome('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1"))', dev) == (
        "runtime",
        "no such key: memory",
    )
    assert outcome('device.attributes["dra.example.com"].nosuch == 1', dev) == ("runtime", "no such key: nosuch")


def test_runtime_error_text_carries_the_allocators_prefix() -> None:
    selector = cel.compile_selector('device.attributes["x"].y')
    with pytest.raises(cel.SelectorError) as info:
        selector.matches(device())
    assert str(info.value) == "CEL runtime error: no such key: y"
    with pytest.raises(cel.SelectorError) as info:
        cel.compile_selector("1")
    assert str(info.value) == "CEL compile error: must evaluate to bool or the unknown type, not int"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # compile.go: `ast.OutputType() != cel.BoolType && ast.OutputType() != cel.AnyType`
        ('quantity("1")', "must evaluate to bool or the unknown type, not kubernetes.Quantity"),
        ('semver("1.0.0")', "must evaluate to bool or the unknown type, not kubernetes.Semver"),
        ('"x"', "must evaluate to bool or the unknown type, not string"),
        ("[true]", "must evaluate to bool or the unknown type, not list(bool)"),
        ('{"a": true}', "must evaluate to bool or the unknown type, not map(string, bool)"),
        ("null", "must evaluate to bool or the unknown type, not null_type"),
        ("dyn(true)", "must evaluate to bool or the unknown type, not dyn"),
        # outerAttributesMapType / outerCapacityMapType
        (
            "device.attributes",
            "must evaluate to bool or the unknown type, not map(string, map(string, google.protobuf.Any))",
        ),
        (
            'device.attributes["dra.example.com"]',
            "must evaluate to bool or the unknown type, not map(string, google.protobuf.Any)",
        ),
        (
            'device.capacity["dra.example.com"]',
            "must evaluate to bool or the unknown type, not map(string, kubernetes.Quantity)",
        ),
        (
            'device.capacity["dra.example.com"].memory',
            "must evaluate to bool or the unknown type, not kubernetes.Quantity",
        ),
        ("device", "must evaluate to bool or the unknown type, not kubernetes.DRADevice"),
    ],
)
def test_result_type_compile_errors(expression: str, expected: str) -> None:
    assert outcome(expression, device()) == ("compile", expected)


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        # compile.go DeviceMatches: "CEL result of type %s could not be converted to bool: %w", with
        # cel-go's Type().TypeName() and ConvertToNative errors (common/types/int.go, string.go, ...)
        (
            Attr("int", 1),
            "CEL result of type int could not be converted to bool: unsupported type conversion from 'int' to bool",
        ),
        (
            Attr("string", "fish"),
            "CEL result of type string could not be converted to bool: "
            "unsupported native conversion from string to 'bool'",
        ),
        (
            Attr("version", "1.0.0"),
            "CEL result of type kubernetes.Semver could not be converted to bool: "
            "type conversion error from 'Semver' to 'bool'",
        ),
    ],
)
def test_result_type_runtime_errors(attribute: Attr, expected: str) -> None:
    dev = device(DRIVER, {"name": attribute})
    assert outcome('device.attributes["dra.example.com"].name', dev) == ("runtime", expected)


def test_compile_error_texts() -> None:
    dev = device()
    assert outcome("device.nope == 1", dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope == 1\n | ......^",
    )
    # cel-go checker/format.go: member calls as "target.(args)"
    assert outcome('quantity("1").isGreaterThan(1)', dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:28: found no matching overload for 'isGreaterThan' applied to "
        "'kubernetes.Quantity.(int)'\n"
        ' | quantity("1").isGreaterThan(1)\n'
        " | ...........................^",
    )
    # a capacity is a kubernetes.Quantity to the checker
    assert outcome('device.capacity["dra.example.com"].memory > 1', dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:43: found no matching overload for '_>_' applied to "
        "'(kubernetes.Quantity, int)'\n"
        ' | device.capacity["dra.example.com"].memory > 1\n'
        " | ..........................................^",
    )
    # an attribute is a google.protobuf.Any, which is no comprehension range (cel-go checker.go)
    assert outcome('device.attributes["dra.example.com"].name.exists(x, x > 0)', dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:37: expression of type 'any' cannot be range of a comprehension "
        "(must be list, map, or dynamic)\n"
        ' | device.attributes["dra.example.com"].name.exists(x, x > 0)\n'
        " | ....................................^",
    )
    assert outcome("device.driver.x", dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:14: type 'string' does not support field selection\n"
        " | device.driver.x\n"
        " | .............^",
    )
    # cel-go parser_test.go `{` and `?`
    assert outcome("{", dev) == (
        "compile",
        "compilation failed: ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting "
        "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
        "STRING, BYTES, IDENTIFIER}\n | {\n | .^",
    )
    assert outcome("?", dev) == (
        "compile",
        f"compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '?' expecting {SYNTAX_EXPECTING}\n"
        " | ?\n | ^\n"
        f"ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {SYNTAX_EXPECTING}\n"
        " | ?\n | .^",
    )


def test_runtime_error_texts() -> None:
    dev = device()
    assert outcome("1 / 0 == 1", dev) == ("runtime", "division by zero")
    assert outcome("1 % 0 == 1", dev) == ("runtime", "modulus by zero")
    assert outcome("[1][2] == 1", dev) == ("runtime", "index out of bounds: 2")
    assert outcome('{"a": true}["b"]', dev) == ("runtime", "no such key: b")


def test_attribute_with_a_bad_version() -> None:
    # compile.go getAttributeValue / DeviceMatches: "attribute %s: parse semantic version: %w"
    dev = device(DRIVER, {"name": Attr("version", "1.0")})
    assert outcome("true", dev) == (
        "runtime",
        "attribute name: parse semantic version: No Major.Minor.Patch elements found",
    )


# --- quantity and semver libraries (apiserver pkg/cel/library quantity_test.go, semver_test.go) ----

LIBRARY_CASES = [
    ('quantity("12Mi") == quantity("12582912")', True),
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
        'quantity("0.002G") == quantity("2000k")',
        True,
    ),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G")) == 0', True),
    ('quantity("50M").compareTo(quantity("50Mi")) == -1', True),
    ('quantity("50Mi").compareTo(quantity("50M")) == 1', True),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20', True),
    ('quantity("50k").asInteger() == 50000', True),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat() == 50703.0', True),
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.2.3").compareTo(semver("1.2.3")) == 0', True),
    ('semver("1.0.0").compareTo(semver("1.2.3")) == -1', True),
    ('semver("1.2.3").compareTo(semver("1.0.0")) == 1', True),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
]


@pytest.mark.parametrize(("expression", "expected"), LIBRARY_CASES)
def test_quantity_and_semver_library(expression: str, expected: bool) -> None:
    assert outcome(expression, device()) is expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            'quantity("10Mo").isInteger()',
            ("runtime", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ),
        ('quantity("10Mm").isInteger()', ("runtime", "unable to parse quantity's suffix")),
        (
            'quantity("9999999999999999999999999999999999999G").asInteger() == 1',
            ("runtime", "cannot convert value to integer"),
        ),
        ('semver("v1.0") == semver("1.0.0")', ("runtime", "No Major.Minor.Patch elements found")),
        (
            "isQuantity([1, 2, 3])",
            (
                "compile",
                "compilation failed: ERROR: <input>:1:11: found no matching overload for 'isQuantity' applied to "
                "'(list(int))'\n | isQuantity([1, 2, 3])\n | ..........^",
            ),
        ),
        (
            "isSemver([1, 2, 3])",
            (
                "compile",
                "compilation failed: ERROR: <input>:1:9: found no matching overload for 'isSemver' applied to "
                "'(list(int))'\n | isSemver([1, 2, 3])\n | ........^",
            ),
        ),
    ],
)
def test_quantity_and_semver_errors(expression: str, expected: tuple[str, str]) -> None:
    assert outcome(expression, device()) == expected


def test_capacity_is_compared_exactly() -> None:
    dev = device(DRIVER, capacity={"memory": "1Mi"})
    assert outcome('device.capacity["dra.example.com"].memory == quantity("1024Ki")', dev) is True
    assert outcome('device.capacity["dra.example.com"].memory.compareTo(quantity("1048577")) == -1', dev) is True


# --- the cache (cache_test.go) ------------------------------------------------------------------


def test_cache_size_is_upstreams() -> None:
    assert cel.CACHE_SIZE == 10
    assert cel._cache.size == 10


def test_cache_semantic() -> None:
    # cache_test.go TestCacheSemantic, with the scheduler's size of 10 instead of 2.
    first = cel.compile_selector("true")
    assert cel.compile_selector("true") is first  # successful compilations are cached

    with pytest.raises(cel.SelectorError) as failed:
        cel.compile_selector("no-such-variable")
    with pytest.raises(cel.SelectorError) as failed_again:
        cel.compile_selector("no-such-variable")
    assert failed.value is not failed_again.value
    assert "no-such-variable" not in cel._cache  # unsuccessful ones are not
    assert len(cel._cache) == 1

    others = [cel.compile_selector(f"{i} == {i}") for i in range(9)]  # fills the cache
    assert len(cel._cache) == 10
    assert cel.compile_selector("true") is first  # now the most recently used
    eleventh = cel.compile_selector("false && true")  # pushes out the least recently used ("0 == 0")
    assert len(cel._cache) == 10
    assert cel.compile_selector("false && true") is eleventh
    assert cel.compile_selector("true") is first
    assert cel.compile_selector("1 == 1") is others[1]
    assert cel.compile_selector("0 == 0") is not others[0]  # evicted and compiled anew


def test_cache_concurrency() -> None:
    # cache_test.go TestCacheConcurrency: 10 workers compiling at once.
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            assert cel.compile_selector(f"{i} == {i}").matches(device()) is True
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cel._cache) == 10


# --- validate_selector_expression (validation.go validateCELSelector) ------------------------------


def test_validate_length_in_bytes() -> None:
    assert cel.CEL_SELECTOR_EXPRESSION_MAX_LENGTH == 10 * 1024
    assert cel.validate_selector_expression("true" + " " * (10 * 1024 - 4)) is None
    assert cel.validate_selector_expression("true" + " " * (10 * 1024 - 3)) == (
        "expression: Too long: may not be more than 10240 bytes"
    )
    # len() of a Go string counts bytes: 5121 "é" are 10242 bytes
    assert cel.validate_selector_expression("é" * 5121, "spec.selectors[0].cel.expression") == (
        "spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"
    )


def test_validate_compiles_in_new_expressions() -> None:
    path = "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert cel.validate_selector_expression('device.driver == "x"', path) is None
    assert cel.validate_selector_expression("1", path) == (
        f'{path}: Invalid value: "1": must evaluate to bool or the unknown type, not int'
    )
    expression = "device.allowMultipleAllocations"
    expected = (
        f'{path}: Invalid value: "device.allowMultipleAllocations": compilation failed: ERROR: <input>:1:7: '
        "undefined field 'allowMultipleAllocations'\n | device.allowMultipleAllocations\n | ......^"
    )
    assert cel.validate_selector_expression(expression, path) == expected
    assert cel.validate_selector_expression(expression, path, consumable_capacity=True) is None
    assert cel.validate_selector_expression(expression, path, stored=True) is None
    # the value is quoted as Go's %q does
    assert cel.validate_selector_expression('"a" +\n"b"', "f") == (
        'f: Invalid value: "\\"a\\" +\\n\\"b\\"": must evaluate to bool or the unknown type, not string'
    )


# --- other libraries of the base environment (apiserver pkg/cel/environment/base.go) --------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # pkg/cel/library/lists.go
        ("[1, 2, 3].isSorted()", True),
        ('["b", "a"].isSorted()', False),
        ("[2u, 1u].min() == 1u", True),
        ("[1.5, 2.5].sum() == 4.0", True),
        ('["b", "a"].min() == "a"', True),
        ('[b"a", b"b"].max() == b"b"', True),
        ("[true, false].min() == false", True),
        ("[1].filter(x, x > 1).min() == 1", ("runtime", "min called on empty list")),
        ("[1].filter(x, x > 1).max() == 1", ("runtime", "max called on empty list")),
        ("[9223372036854775807, 1].sum() == 1", ("runtime", "integer overflow")),
        # cel-go ext/sets.go
        ("sets.contains([1, 2], [2])", True),
        ("sets.contains([1], [2])", False),
        ("sets.contains([1], [1.0])", True),
        ("sets.equivalent([1, 2], [2, 1, 1])", True),
        ("sets.intersects([1], [3, 1])", True),
        ("sets.intersects([true], [1])", False),
        # pkg/cel/library/regex.go
        ('"abc 123 def 456".find("[0-9]+") == "123"', True),
        ('"abc 123 def 456".findAll("[0-9]+") == ["123", "456"]', True),
        ('"abc 123 def 456".findAll("[0-9]+", 1) == ["123"]', True),
        # ext.Strings(2), cel.OptionalTypes
        ('"a,b".split(",") == ["a", "b"] && "ABC".lowerAscii() == "abc"', True),
        ("optional.of(1).hasValue() && !optional.none().hasValue()", True),
    ],
)
def test_base_environment_libraries(expression: str, expected: Any) -> None:
    assert outcome(expression, device()) == expected


def test_allocator_api_is_unchanged() -> None:
    # scheduler_core/dra/allocator.py calls compile_selector(expression, consumable_capacity=...)
    for gate in (False, True):
        selector = cel.compile_selector('device.driver == "dra.example.com"', consumable_capacity=gate)
        assert selector.matches(device(DRIVER)) is True
        assert selector.expression == 'device.driver == "dra.example.com"'
