"""The options of a write request — CreateOptions, UpdateOptions, PatchOptions, DeleteOptions — read
from the query string (or, for a delete, from the DeleteOptions body) and validated as
kube-apiserver validates them (apimachinery `metav1/validation`: ValidateDryRun)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .patch import parse_body
from .status import ApiError

__all__ = ["DRY_RUN_ALL", "OPTIONS_KIND", "WriteOptions", "delete_options", "invalid_option", "write_options"]

DRY_RUN_ALL = "All"
JSON = "application/json"
OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool = False
    delete: dict[str, Any] = field(default_factory=dict)  # the DeleteOptions of a delete (or an eviction)


def _go_strings(values: list[Any]) -> str:
    """How Go's `%#v` prints a []string (the bad value of an Unsupported value error)."""
    return "[]string{" + ", ".join(json.dumps(str(v), ensure_ascii=False) for v in values) + "}"


def invalid_option(kind: str, path: str, detail: str) -> ApiError:
    """errors.NewInvalid(meta.k8s.io/<kind>, "", errs): 422 naming the option."""
    return ApiError(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: {path}: {detail}',
        {
            "kind": kind,
            "group": "meta.k8s.io",
            "causes": [{"reason": _reason(detail), "message": detail, "field": path}],
        },
    )


def _reason(detail: str) -> str:
    return "FieldValueNotSupported" if detail.startswith("Unsupported value") else "FieldValueInvalid"


def dry_run_of(values: list[Any], kind: str) -> bool:
    """ValidateDryRun: every value must be "All"; any value at all makes the request a dry run."""
    if any(value != DRY_RUN_ALL for value in values):
        raise invalid_option(kind, "dryRun", f'Unsupported value: {_go_strings(values)}: supported values: "All"')
    return bool(values)


def delete_options(body: bytes, params: Any) -> dict[str, Any]:
    """A delete's DeleteOptions: its body when it has one (as the apiserver's delete handler reads it),
    else the query parameters."""
    if body.strip():
        options = parse_body(body, JSON)
        if not isinstance(options, dict):
            raise ApiError(400, "BadRequest", "the body of the request must be a DeleteOptions object")
        dry_run = options.get("dryRun") or []
        if not isinstance(dry_run, list):
            raise ApiError(400, "BadRequest", "DeleteOptions.dryRun: must be a list of strings")
        grace = options.get("gracePeriodSeconds")
        if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
            raise ApiError(400, "BadRequest", "DeleteOptions.gracePeriodSeconds: must be an integer")
        return options
    options = {}
    if params.getlist("dryRun"):
        options["dryRun"] = params.getlist("dryRun")
    grace = params.get("gracePeriodSeconds")
    if grace is not None:
        try:
            options["gracePeriodSeconds"] = int(grace)
        except ValueError:
            raise ApiError(400, "BadRequest", f'gracePeriodSeconds: invalid value "{grace}"') from None
    return options


def write_options(method: str, params: Any, body: bytes) -> WriteOptions:
    """The options of a POST/PUT/PATCH/DELETE, validated (422 naming the option, as upstream)."""
    kind = OPTIONS_KIND[method]
    if method == "DELETE":
        options = delete_options(body, params)
        return WriteOptions(dry_run_of(list(options.get("dryRun") or []), kind), options)
    return WriteOptions(dry_run_of(params.getlist("dryRun"), kind))
