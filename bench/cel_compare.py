"""Compare the CEL libraries on PyPI for DRA device selectors (the measurement behind docs/cel.md).

Run it in a scratch venv that has all three candidates (they are not project dependencies, except
the winner) and the project on the path:

    python3.12 -m venv /tmp/v-bench
    /tmp/v-bench/bin/pip install cel-expr-python==0.1.3 protobuf==7.36.2 \\
        common-expression-language==0.10.0 cel-python==0.5.0
    PYTHONPATH=. /tmp/v-bench/bin/python bench/cel_compare.py [--evaluations 10000]

Each candidate gets the same cases: an expression, one device, and upstream's result (kube-scheduler
v1.34: k8s.io/dynamic-resource-allocation/cel on cel-go) or the text upstream's error contains.
cel-expr-python is measured through scheduler_core/dra/cel.py, the module the scheduler uses; the
other two through the smallest adapter that gives them the same environment (quantity and semver
as their custom functions, upstream's empty map for a missing domain). A case counts as right when
the result is the same, or the error is of the same kind (compile / runtime) and contains
upstream's text. Each case runs in a forked child with a memory cap and a time limit
(--case-timeout), so a candidate that runs away loses that case instead of the machine.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from scheduler_core.api.quantity import parse_quantity
from scheduler_core.dra import cel as dra_cel

DRIVER = "dra.example.com"
_EXPENSIVE = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)

# (name, expression, expected): True/False, or ("compile" | "runtime", text upstream's error contains)
CASES: list[tuple[str, str, Any]] = [
    ("driver", f'device.driver == "{DRIVER}"', True),
    ("string attribute", f'device.attributes["{DRIVER}"].model == "a100"', True),
    ("int attribute", f'device.attributes["{DRIVER}"].cores >= 100', True),
    ("bool attribute", f'device.attributes["{DRIVER}"].healthy', True),
    ("qualified attribute", 'device.attributes["other.example.com"].zone == "a"', True),
    ("capacity compareTo", f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ("quantity isGreaterThan", 'quantity("1Gi").isGreaterThan(quantity("1Mi"))', True),
    ("quantity exact", 'quantity("0.1").add(quantity("0.2")) == quantity("0.3")', True),
    ("semver isGreaterThan", 'semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ("version attribute", f'device.attributes["{DRIVER}"].driverVersion.isLessThan(semver("1.10.0"))', True),
    ("in", f'"model" in device.attributes["{DRIVER}"]', True),
    ("domain not in", '"gpu.example.com" in device.attributes', False),
    ("startsWith", f'device.attributes["{DRIVER}"].model.startsWith("a1")', True),
    ("matches", f'device.attributes["{DRIVER}"].model.matches("^a[0-9]+$")', True),
    ("cel.bind", f'cel.bind(d, device.attributes["{DRIVER}"], d.healthy && d.cores > 0)', True),
    ("split (ext strings)", f'device.attributes["{DRIVER}"].model.split("1").size() == 2', True),
    ("missing key", f'device.attributes["{DRIVER}"].nosuch', ("runtime", "no such key: nosuch")),
    ("missing domain", 'device.attributes["gpu.example.com"].model == "x"', ("runtime", "no such key: model")),
    ("non-bool", "1", ("compile", "must evaluate to bool or the unknown type, not int")),
    (
        "non-bool quantity",
        'quantity("1")',
        ("compile", "must evaluate to bool or the unknown type, not kubernetes.Quantity"),
    ),
    ("syntax error", "?!", ("compile", "compilation failed: ERROR: <input>:1:1: Syntax error: extraneous input '?'")),
    ("undefined field", "device.nope == 1", ("compile", "undefined field 'nope'")),
    # cel-go checker/format.go: a member call's target is written before the arguments
    (
        "type error",
        'quantity("1").isGreaterThan(1)',
        ("compile", "found no matching overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(int)'"),
    ),
    # compile.go: capacity values are kubernetes.Quantity to the checker
    (
        "capacity type",
        f'device.capacity["{DRIVER}"].memory > 1',
        ("compile", "found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'"),
    ),
    # compile.go accepts bool and cel.AnyType (google.protobuf.Any, an attribute's type), not dyn
    ("dyn result", "dyn(true)", ("compile", "must evaluate to bool or the unknown type, not dyn")),
    (
        "non-bool attribute",
        f'device.attributes["{DRIVER}"].cores',
        (
            "runtime",
            "CEL result of type int could not be converted to bool: unsupported type conversion from 'int' to bool",
        ),
    ),
    (
        "comprehension on attribute",
        f'device.attributes["{DRIVER}"].model.exists(c, c == "a")',
        ("compile", "expression of type 'any' cannot be range of a comprehension"),
    ),
    # environment.StoredExpressions ignores feature gates: the field exists, false when unset
    ("allowMultipleAllocations", "device.allowMultipleAllocations == false", True),
    ("syntax error expecting '?'", "{", ("compile", "'!', '?', 'true'")),
    ("semver parse error", 'semver("1.0") == semver("1.0.0")', ("runtime", "No Major.Minor.Patch elements found")),
    ("quantity parse error", 'quantity("1x").isInteger()', ("runtime", "quantities must match the regular expression")),
    ("cost limit", _EXPENSIVE, ("runtime", "operation cancelled: actual cost limit exceeded")),
]
# The speed cases: ten selectors of the kinds DeviceClasses and claims use.
SPEED = [
    "driver",
    "string attribute",
    "int attribute",
    "bool attribute",
    "qualified attribute",
    "capacity compareTo",
    "version attribute",
    "in",
    "matches",
    "cel.bind",
]


def device_spec(i: int = 0) -> dict[str, Any]:
    """One device: attributes as (kind, value), capacity as quantity strings; i varies the values."""
    return {
        "driver": DRIVER,
        "attributes": {
            "model": ("string", "a100" if i % 3 else "a10"),
            "cores": ("int", 100 + i % 50),
            "healthy": ("bool", i % 7 != 0),
            "driverVersion": ("version", f"1.{2 + i % 5}.3"),
            "other.example.com/zone": ("string", "a" if i % 2 else "b"),
        },
        "capacity": {"memory": f"{40 + i % 8}Gi", "other.example.com/slots": "4"},
    }


class Failure(Exception):
    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind = kind


# --- cel-expr-python, through scheduler_core/dra/cel.py ------------------------------------------


def ours_device(spec: dict[str, Any]) -> dra_cel.DeviceInput:
    return dra_cel.DeviceInput(
        driver=spec["driver"],
        attributes={k: dra_cel.AttributeValue(kind, v) for k, (kind, v) in spec["attributes"].items()},
        capacity={k: parse_quantity(v) for k, v in spec["capacity"].items()},
    )


def ours_compile(expression: str) -> Callable[[Any], bool]:
    try:
        selector = dra_cel._compile(expression, False)  # the uncached compiler, for timing
    except Exception as exc:  # pragma: no cover
        raise Failure("compile", str(exc)) from exc
    if isinstance(selector, dra_cel.SelectorError):
        raise Failure("compile", selector.detail)

    def run(device: dra_cel.DeviceInput) -> bool:
        try:
            return selector.matches(device)
        except dra_cel.SelectorError as exc:
            raise Failure(exc.kind, exc.detail) from None

    return run


# --- shared by the two adapters -------------------------------------------------------------------

_Q = Fraction


def _split(name: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (DRIVER, name)


def _semver_key(text: str) -> tuple[Any, ...]:
    _canonical, key = dra_cel._parse_semver(text)
    return key


# --- common-expression-language (Rust `cel` crate) ------------------------------------------------


def rust_device(spec: dict[str, Any]) -> dict[str, Any]:
    # No custom Python values: a quantity travels as its exact "n/d" text, a version as its text.
    attributes: dict[str, dict[str, Any]] = {}
    for name, (_kind, value) in spec["attributes"].items():
        domain, ident = _split(name)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, text in spec["capacity"].items():
        domain, ident = _split(name)
        amount = parse_quantity(text).amount
        capacity.setdefault(domain, {})[ident] = f"{amount.numerator}/{amount.denominator}"
    device = {
        "driver": spec["driver"],
        "allowMultipleAllocations": False,
        "attributes": attributes,
        "capacity": capacity,
    }
    return {"device": device}


def _rust_functions() -> dict[str, Callable[..., Any]]:
    def q(text: str) -> Fraction:
        n, _, d = text.partition("/")
        return Fraction(int(n), int(d or 1))

    def quantity(text: str) -> str:
        try:
            amount = parse_quantity(text).amount
        except Exception:
            raise ValueError("quantities must match the regular expression") from None
        return f"{amount.numerator}/{amount.denominator}"

    def semver(text: str) -> str:
        try:
            dra_cel._parse_semver(text)
        except dra_cel._CelFailure as exc:
            raise ValueError(str(exc)) from None
        return text

    def compare(a: str, b: str) -> int:
        if "/" in a or "/" in b:
            x, y = q(a), q(b)
        else:
            x, y = _semver_key(a), _semver_key(b)
        return (x > y) - (x < y)

    def add(a: str, b: str) -> str:
        s = q(a) + q(b)
        return f"{s.numerator}/{s.denominator}"

    def is_integer(a: str) -> bool:
        return q(a).denominator == 1

    return {
        "quantity": quantity,
        "semver": semver,
        "compareTo": compare,
        "isGreaterThan": lambda a, b: compare(a, b) == 1,
        "isLessThan": lambda a, b: compare(a, b) == -1,
        "add": add,
        "isInteger": is_integer,
    }


def rust_compile(expression: str) -> Callable[[Any], bool]:
    import cel  # common-expression-language

    try:
        program = cel.compile(expression)
    except Exception as exc:
        text = str(exc).replace(f"Failed to parse expression '{expression}': ", "compilation failed: ")
        raise Failure("compile", text) from None
    functions = _rust_functions()

    def run(data: dict[str, Any]) -> bool:
        # upstream's empty map for a missing domain: retry with the domain present (as ours does)
        device = data["device"]
        for _ in range(8):
            context = cel.Context(data, functions)
            try:
                result = program.execute(context)
            except KeyError as exc:
                key = exc.args[0] if exc.args else ""
                if key in device["attributes"] or key in device["capacity"]:
                    raise Failure("runtime", f"no such key: {key}") from None
                device = {**device, "attributes": {**device["attributes"], key: {}}}
                device["capacity"] = {**device["capacity"], key: {}}
                data = {"device": device}
                continue
            except Exception as exc:
                raise Failure("runtime", str(exc)) from None
            if not isinstance(result, bool):
                raise Failure("runtime", f"result {result!r} is not a bool")
            return result
        raise Failure("runtime", "retries exhausted")

    return run


# --- cel-python (celpy, pure Python) --------------------------------------------------------------


class _PyQuantity:
    __slots__ = ("amount",)

    def __init__(self, amount: Fraction) -> None:
        self.amount = amount

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _PyQuantity) and self.amount == other.amount

    __hash__ = None  # type: ignore[assignment]


class _PySemver:
    __slots__ = ("key",)

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key


def _celpy_functions() -> dict[str, Callable[..., Any]]:
    import celpy
    import celpy.celtypes as ct

    def quantity(text: Any) -> Any:
        try:
            return _PyQuantity(parse_quantity(str(text)).amount)
        except Exception:
            return celpy.CELEvalError("quantities must match the regular expression")

    def semver(text: Any) -> Any:
        try:
            return _PySemver(_semver_key(str(text)))
        except dra_cel._CelFailure as exc:
            return celpy.CELEvalError(str(exc))

    def key(v: Any) -> Any:
        return v.amount if isinstance(v, _PyQuantity) else v.key

    def compare(a: Any, b: Any) -> Any:
        x, y = key(a), key(b)
        return ct.IntType((x > y) - (x < y))

    return {
        "quantity": quantity,
        "semver": semver,
        "compareTo": compare,
        "isGreaterThan": lambda a, b: ct.BoolType(compare(a, b) == 1),
        "isLessThan": lambda a, b: ct.BoolType(compare(a, b) == -1),
        "add": lambda a, b: _PyQuantity(a.amount + b.amount),
        "isInteger": lambda a: ct.BoolType(a.amount.denominator == 1),
    }


def celpy_device(spec: dict[str, Any]) -> dict[str, Any]:
    import celpy.celtypes as ct

    class DomainMap(ct.MapType):
        """upstream's mapper: a missing domain reads as an empty map; `in` sees the real keys."""

        def __getitem__(self, key: Any) -> Any:
            return super().get(key, ct.MapType())

    attributes: dict[Any, Any] = {}
    for name, (kind, value) in spec["attributes"].items():
        domain, ident = _split(name)
        if kind == "int":
            cel_value: Any = ct.IntType(value)
        elif kind == "bool":
            cel_value = ct.BoolType(value)
        elif kind == "version":
            cel_value = _PySemver(_semver_key(value))
        else:
            cel_value = ct.StringType(value)
        attributes.setdefault(ct.StringType(domain), ct.MapType())[ct.StringType(ident)] = cel_value
    capacity: dict[Any, Any] = {}
    for name, text in spec["capacity"].items():
        domain, ident = _split(name)
        capacity.setdefault(ct.StringType(domain), ct.MapType())[ct.StringType(ident)] = _PyQuantity(
            parse_quantity(text).amount
        )
    device = ct.MapType(
        {
            ct.StringType("driver"): ct.StringType(spec["driver"]),
            ct.StringType("allowMultipleAllocations"): ct.BoolType(False),
            ct.StringType("attributes"): DomainMap(attributes),
            ct.StringType("capacity"): DomainMap(capacity),
        }
    )
    return {"device": device}


def celpy_compile(expression: str) -> Callable[[Any], bool]:
    import celpy

    env = celpy.Environment()
    try:
        ast = env.compile(expression)
    except Exception as exc:
        raise Failure("compile", f"compilation failed: {exc}") from None
    program = env.program(ast, functions=_celpy_functions())

    def run(data: dict[str, Any]) -> bool:
        try:
            result = program.evaluate(data)
        except Exception as exc:
            text = str(exc.args[0]) if exc.args else str(exc)
            text = text.replace("no such member in mapping: ", "no such key: ").replace("'", "")
            raise Failure("runtime", text) from None
        if isinstance(result, Exception):
            raise Failure("runtime", str(result))
        if not isinstance(result, celpy.celtypes.BoolType):
            raise Failure("runtime", f"result {result!r} is not a bool")
        return bool(result)

    return run


CANDIDATES: dict[str, tuple[str, Callable[[str], Callable[[Any], bool]], Callable[[dict[str, Any]], Any]]] = {
    "cel-expr-python": ("cel-expr-python", ours_compile, ours_device),
    "common-expression-language": ("common-expression-language", rust_compile, rust_device),
    "cel-python": ("cel-python", celpy_compile, celpy_device),
}


def check_isolated(
    name: str, expression: str, expected: Any, compile_: Callable, make_device: Callable, timeout: float
) -> tuple[bool, str]:
    """check() in a forked child with a memory cap and a time limit: a candidate that runs away
    (cel-python on the cost-limit case grows without bound) loses that case instead of the machine."""
    import multiprocessing
    import resource

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
        try:
            send.send(check(name, expression, expected, compile_, make_device))
        except BaseException as exc:  # MemoryError, RecursionError, ...
            send.send((False, repr(("crash", f"{type(exc).__name__}: {exc}"))[:160]))

    process = context.Process(target=child)
    process.start()
    outcome: tuple[bool, str] | None = None
    if receive.poll(timeout):
        try:
            outcome = receive.recv()
        except EOFError:
            outcome = None
    process.join(1)
    if process.is_alive():
        process.kill()
        process.join()
        return False, repr(("crash", f"no answer within {timeout:.0f} s"))
    return outcome or (False, repr(("crash", f"child exited with {process.exitcode}")))


CHILD_MEMORY_BYTES = 2 * 1024**3


def check(name: str, expression: str, expected: Any, compile_: Callable, make_device: Callable) -> tuple[bool, str]:
    try:
        run = compile_(expression)
        got: Any = run(make_device(device_spec(1)))
    except Failure as exc:
        got = (exc.kind, str(exc))
    except Exception as exc:  # a candidate's own crash
        got = ("crash", f"{type(exc).__name__}: {exc}")
    if isinstance(expected, tuple):
        ok = isinstance(got, tuple) and got[0] == expected[0] and expected[1] in got[1]
    else:
        ok = got is expected
    return ok, repr(got)[:160]


def measure(compile_: Callable, make_device: Callable, evaluations: int) -> tuple[float, float] | None:
    by_name = {name: expr for name, expr, _ in CASES}
    compile_times = []
    eval_times = []
    devices = [make_device(device_spec(i)) for i in range(100)]
    for name in SPEED:
        expression = by_name[name]
        start = time.perf_counter()
        try:
            run = compile_(expression)
        except Failure:
            return None
        compile_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(evaluations):
            try:  # noqa: SIM105 (a with-block per evaluation would be timed too)
                run(devices[i % 100])
            except Failure:
                pass
        eval_times.append((time.perf_counter() - start) / evaluations)
    return statistics.median(compile_times), statistics.mean(eval_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evaluations", type=int, default=10_000, help="device evaluations per expression")
    parser.add_argument("--verbose", action="store_true", help="print each case's outcome")
    parser.add_argument("--case-timeout", type=float, default=60.0, help="seconds a candidate gets for one case")
    args = parser.parse_args()
    rows = []
    for label, (dist, compile_, make_device) in CANDIDATES.items():
        version = importlib.metadata.version(dist)
        right = []
        for name, expression, expected in CASES:
            ok, got = check_isolated(name, expression, expected, compile_, make_device, args.case_timeout)
            right.append(ok)
            if args.verbose:
                print(f"{label:28} {'ok  ' if ok else 'MISS'} {name:24} {got}")
        speed = measure(compile_, make_device, args.evaluations)
        missed = [name for (name, _, _), ok in zip(CASES, right, strict=True) if not ok]
        rows.append((label, version, sum(right), speed, missed))
    print(f"| library | version | cases right (of {len(CASES)}) | compile, median | evaluation, mean per device |")
    print("| --- | --- | --- | --- | --- |")
    for label, version, right, speed, _ in rows:
        timing = f"{speed[0] * 1e3:.2f} ms | {speed[1] * 1e6:.1f} µs" if speed else "n/a | n/a"
        print(f"| {label} | {version} | {right} | {timing} |")
    for label, _, _, _, missed in rows:
        print(f"{label} missed: {', '.join(missed) or 'none'}")


if __name__ == "__main__":
    main()
