"""Kubernetes name and label validation (k8s.io/apimachinery/pkg/util/validation), with its messages."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from .limits import MAX_REPLICAS
from .text import quote

__all__ = [
    "Replicas",
    "dns1123_label_error",
    "dns1123_subdomain_error",
    "label_key_error",
    "label_value_error",
    "replicas_error",
]

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# Whole-string patterns, always applied with fullmatch: `$` would also match before a trailing "\n"
# (Go's regexp `$` does not), letting "node01\n" pass as a name.
_DNS1123_SUBDOMAIN_RE = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _quote(value: str) -> str:
    return quote(value, 80)


def dns1123_subdomain_error(value: str) -> str | None:
    if len(value) > 253:
        return f"Invalid value: {_quote(value)}: must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return (
            f"Invalid value: {_quote(value)}: a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return None


def dns1123_label_error(value: str) -> str | None:
    if len(value) > 63:
        return f"Invalid value: {_quote(value)}: must be no more than 63 characters"
    if not _DNS1123_LABEL_RE.fullmatch(value):
        return (
            f"Invalid value: {_quote(value)}: a lowercase RFC 1123 label must consist of lower case alphanumeric "
            "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return None


def label_key_error(key: str) -> str | None:
    """A qualified name: optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or dns1123_subdomain_error(prefix)):
        return f"Invalid value: {_quote(key)}: prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME_RE.fullmatch(name):
        return (
            f"Invalid value: {_quote(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "and be no more than 63 characters"
        )
    return None


def label_value_error(value: str) -> str | None:
    if len(value) > 63:
        return f"Invalid value: {_quote(value)}: must be no more than 63 characters"
    if not _LABEL_VALUE_RE.fullmatch(value):
        return (
            f"Invalid value: {_quote(value)}: a valid label must be an empty string or consist of alphanumeric "
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return None


def replicas_error(value: object) -> str | None:
    """What is wrong with a workload's `spec.replicas` (None when nothing is), in upstream's words
    (ValidateNonnegativeField); the upper bound is ours (`MAX_REPLICAS`). The one rule for create,
    the scale action and the Scale subresource."""
    if not isinstance(value, int) or isinstance(value, bool):
        return f"Invalid value: {quote(value)}: must be an integer"
    shown = repr(value) if value.bit_length() <= 3000 else "(an integer of more than 900 digits)"
    if value < 0:
        return f"Invalid value: {shown}: must be greater than or equal to 0"
    if value > MAX_REPLICAS:
        return f"Invalid value: {shown}: must be less than or equal to {MAX_REPLICAS}"
    return None


def _check_replicas(value: int) -> int:
    error = replicas_error(value)
    if error:
        raise ValueError(error)
    return value


#: A workload's `spec.replicas` in a pydantic model (checked by `replicas_error`).
Replicas = Annotated[int, AfterValidator(_check_replicas)]
