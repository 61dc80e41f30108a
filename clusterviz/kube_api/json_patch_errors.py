"""Why an RFC 6902 patch did not apply, in the words of the library kube-apiserver applies it with
(gopkg.in/evanphx/json-patch.v4, patch.go): `testing value /spec/replicas failed: test failed`,
`replace operation does not apply: doc is missing key: /spec/x: missing value`, …"""

from __future__ import annotations

import re
from typing import Any

import jsonpatch
import jsonpointer

__all__ = ["failure_reason"]

MISSING = "missing value"
_INDEX = re.compile(r"0|[1-9][0-9]*")
INVALID_INDEX = "invalid index referenced"


def _parts(path: Any) -> list[str] | None:
    try:
        return list(jsonpointer.JsonPointer(str(path)).parts)
    except jsonpointer.JsonPointerException:
        return None


def _resolve(doc: Any, parts: list[str]) -> tuple[bool, Any]:
    try:
        return True, jsonpointer.JsonPointer.from_parts(parts).resolve(doc)
    except (jsonpointer.JsonPointerException, TypeError, ValueError):
        return False, None


def _has(container: Any, key: str) -> bool:
    if isinstance(container, dict):
        return key in container
    if isinstance(container, list):
        return _INDEX.fullmatch(key) is not None and int(key) < len(container)
    return False


def _reason(op: dict[str, Any], doc: Any) -> str | None:
    kind, path = op.get("op"), op.get("path")
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        return f"Unexpected kind: {kind}"
    parts = _parts(path)
    if parts is None:
        return None
    found, parent = _resolve(doc, parts[:-1]) if parts else (True, None)
    key = parts[-1] if parts else ""
    if kind == "test":
        return f"testing value {path} failed: test failed"
    if kind in ("move", "copy"):
        source = _parts(op.get("from"))
        if source is not None and not _resolve(doc, source)[0]:
            return f"{kind} operation does not apply: doc is missing from path: {op.get('from')}: {MISSING}"
        return None
    if not found or not isinstance(parent, dict | list):
        quoted = f'"{path}"' if kind in ("add", "remove") else str(path)
        return f"{kind} operation does not apply: doc is missing path: {quoted}: {MISSING}"
    if kind == "remove" and not _has(parent, key):
        if isinstance(parent, list):
            return f"error in remove for path: '{path}': Unable to remove invalid index: {key}: {INVALID_INDEX}"
        return f"error in remove for path: '{path}': Unable to remove nonexistent key: {key}: {MISSING}"
    if kind == "replace" and not _has(parent, key):
        return f"replace operation does not apply: doc is missing key: {path}: {MISSING}"
    if kind == "add" and isinstance(parent, list) and key != "-" and not _has(parent, key) and key != str(len(parent)):
        return f"error in add for path: '{path}': Unable to access invalid index: {key}: {INVALID_INDEX}"
    return None


def failure_reason(target: Any, operations: list[dict[str, Any]], fallback: str) -> str:
    """Apply the operations one by one to find the one that fails, and say why as upstream does
    (`fallback`, the library's own text, when the case has no upstream wording here)."""
    doc = target
    for op in operations:
        try:
            doc = jsonpatch.JsonPatch([op]).apply(doc)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException):
            try:
                return _reason(op, doc) or fallback
            except (TypeError, ValueError, RecursionError):
                return fallback
    return fallback
