"""`metav1.Status` errors, worded as a real API server words them (kubectl prints `message`)."""

from __future__ import annotations

import re
from typing import Any

from scheduler_core.api.loading import InputError

from .. import store
from ..update_validation import UpdateInvalid
from .resources import Resource

__all__ = [
    "ApiError",
    "already_exists",
    "conflict",
    "from_exception",
    "invalid",
    "not_found",
    "status_body",
    "success_body",
]

# how admit() prefixes its messages: "object: path: msg" or "object:12: path: msg"
ADMIT_SOURCE = "object"
_SOURCE = re.compile(rf"^{ADMIT_SOURCE}(:\d+)?: ")
_FIELD = re.compile(r"^[A-Za-z_$][\w$]*(\[[^\]]*\]|\.[\w$/-]+)*$")


class ApiError(Exception):
    """An error answered as a Status; `warning` becomes a `Warning: 299` header."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        warning: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.warning = warning
        self.metadata = metadata  # the Status's ListMeta (a continue token)

    def body(self) -> dict[str, Any]:
        body = status_body(self.code, self.reason, self.message, self.details)
        if self.metadata:
            body["metadata"] = dict(self.metadata)
        return body


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A failure `metav1.Status`: the one body every refusal of the app answers with (the kube API
    and the browser's JSON API alike)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if not reason:  # a Status a registry answers itself (the eviction's 500) carries none
        del body["reason"]
    if details:
        body["details"] = details
    return body


def success_body(code: int) -> dict[str, Any]:
    """A success `metav1.Status` (what an eviction answers)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


def _details(res: Resource | None, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if res is not None:
        details["kind"] = res.plural
        if res.group:
            details["group"] = res.group
    return details


def not_found(res: Resource, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{res.qualified} "{name}" not found', _details(res, name))


def already_exists(res: Resource, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists', _details(res, name))


def conflict(res: Resource, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        _details(res, name),
    )


def invalid(res: Resource | None, name: str, error: str, kind: str = "", group: str = "") -> ApiError:
    """422 Invalid from an admit() message: `The Pod "x" is invalid: spec.containers[0].image: Required value`
    (`kind` and `group` for an object other than the resource's own, such as its Scale)."""
    if not kind and res is not None:
        kind, group = res.kind, res.group or ""
    text = _SOURCE.sub("", error)
    cause: dict[str, Any] = {"reason": "FieldValueInvalid", "message": text}
    head, sep, rest = text.partition(": ")
    if sep and _FIELD.match(head):
        cause = {"reason": _cause_reason(rest), "message": rest, "field": head}
    details = {"name": name, "kind": kind, "causes": [cause]}
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f'The {kind} "{name}" is invalid: {text}', details)


def _cause_reason(message: str) -> str:
    for prefix, reason in (
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Duplicate value", "FieldValueDuplicate"),
    ):
        if message.startswith(prefix):
            return reason
    return "FieldValueInvalid"


def from_exception(exc: Exception, res: Resource | None, name: str) -> ApiError:
    """Map the app's own refusals (store errors, InputError) to the Status a real server sends."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, UpdateInvalid):
        return ApiError(exc.code, exc.reason, str(exc), exc.details())
    if isinstance(exc, RecursionError):  # a body too deep for some step past the parser's own bound
        return ApiError(400, "BadRequest", "the request body is nested too deeply")
    if res is not None:
        if isinstance(exc, store.NotFound) and f'"{name}"' in str(exc):
            return not_found(res, name)
        if isinstance(exc, store.AlreadyExists):
            return already_exists(res, name)
        if isinstance(exc, store.Conflict):
            return conflict(res, name)
        if isinstance(exc, InputError) or type(exc) is store.StoreError:
            return invalid(res, name, str(exc))
    if isinstance(exc, store.StoreError):
        return ApiError(exc.code, exc.reason, str(exc), _details(res, name))
    if isinstance(exc, InputError):
        return ApiError(422, "Invalid", _SOURCE.sub("", str(exc)), _details(res, name))
    return ApiError(500, "InternalError", "Internal error occurred: the request failed on the server")
