"""Kubernetes resource quantities, parsed exactly as apimachinery's `resource.Quantity` does.

Upstream: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (`ParseQuantity`,
`MilliValue`, `Value`). Values are kept as exact fractions; the scheduler converts a quantity to
an integer once, rounding *up* (cpu with `MilliValue()`, everything else with `Value()`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from .text import quote

__all__ = ["MAX_INT64", "Quantity", "QuantityError", "parse_quantity"]

MAX_INT64 = 2**63 - 1

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# ParseQuantity's grammar (parseQuantityString): an optional sign, digits (possibly none), an optional
# "." with digits (possibly none), then a suffix: binary SI, decimal SI, or e/E with a signed exponent.
# Upstream therefore reads "Mi", ".", "+" and "e3" as 0, and "1." or "1.G" as 1 and 1G.
_QUANTITY_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_NANO = Fraction(1, 10**9)
# Beyond these exponents a non-zero number is capped at MAX_INT64 or rounded up to 1n anyway;
# the bound keeps "1e999999" cheap.
_MAX_EXPONENT = 40


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity with its original spelling."""

    text: str
    amount: Fraction

    def milli_value(self) -> int:
        """`MilliValue()`: thousandths, rounded up (ceiling).

        Clamped to int64: upstream overflows (an undefined result) for more than ~9.2e15 units.
        """
        return max(-MAX_INT64 - 1, min(MAX_INT64, math.ceil(self.amount * 1000)))

    def value(self) -> int:
        """`Value()`: whole units, rounded up (ceiling)."""
        return math.ceil(self.amount)

    def is_zero(self) -> bool:
        return self.amount == 0

    def __str__(self) -> str:
        return self.text


def parse_quantity(raw: object) -> Quantity:
    """Parse a quantity given as a YAML/JSON string or number.

    Raises QuantityError with a message of the form '"1x" is not a valid quantity'.
    """
    if isinstance(raw, bool) or raw is None:
        raise QuantityError(f"{_show(raw)} is not a valid quantity")
    if isinstance(raw, int):
        text = str(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"{_show(raw)} is not a valid quantity")
        text = repr(raw)
    elif isinstance(raw, str):
        text = raw.strip()
    else:
        raise QuantityError(f"{_show(raw)} is not a valid quantity")
    match = _QUANTITY_RE.match(text) if text else None
    if match is None:
        raise QuantityError(f"{_show(raw)} is not a valid quantity")
    # Decimal, not int(): no limit on the number of digits.
    number = Fraction(Decimal(f"{match.group('int') or '0'}.{match.group('frac') or '0'}"))
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        amount = number * _BINARY[suffix]
    elif suffix in _DECIMAL:
        amount = number * _DECIMAL[suffix]
    else:
        exponent = int(suffix[1:])
        if number == 0:
            amount = Fraction(0)
        elif exponent > _MAX_EXPONENT:
            amount = Fraction(MAX_INT64)
        elif exponent < -_MAX_EXPONENT:
            amount = _NANO
        else:
            amount = number * Fraction(10) ** exponent
    # Non-zero values are rounded up (away from zero) to a whole number of nano units, then the
    # magnitude is capped at MAX_INT64 ("9Ei" parses as 9223372036854775807).
    if amount % _NANO:
        amount = (amount // _NANO + 1) * _NANO
    amount = min(amount, Fraction(MAX_INT64))
    if match.group("sign") == "-":
        amount = -amount
    return Quantity(text=text, amount=amount)


def _show(raw: object) -> str:
    return quote(raw) if isinstance(raw, str) else repr(raw)[:64]
