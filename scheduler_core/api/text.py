"""How user-supplied values appear inside error messages: quoted like Go's %q, one line, bounded."""

from __future__ import annotations

import json

__all__ = ["quote"]


def quote(value: object, limit: int = 64) -> str:
    """`"value"` with control characters escaped (a message stays one line), cut at `limit`."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    return json.dumps(text, ensure_ascii=False)
