"""The one rule for a NoExecute taint's `timeAdded`, whoever writes the node (the browser's taint
action, `kubectl taint` / `edit` / `apply` through the API).

v1.34's API server leaves `timeAdded` to the writer (only the node lifecycle controller sets it:
kubernetes/kubernetes#98482); clusterviz stamps NoExecute taints because its taint manager counts
`tolerationSeconds` from the stamp. The rule is the one proposed for the API server
(kubernetes/kubernetes#141453): a value the client wrote is kept; a taint that already existed
(same key and effect, kubectl's `MatchTaint`) keeps its time, so a read-modify-write or a value
change does not restart the clock; a new one gets the current time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import store

__all__ = ["stamp_no_execute"]


def stamp_no_execute(before: Iterable[dict[str, Any]], after: Iterable[dict[str, Any]]) -> None:
    """Give each NoExecute taint of `after` (in place) its `timeAdded`, from `before` if it was there."""
    kept = {(t.get("key"), t.get("effect")): t.get("timeAdded") for t in before}
    for taint in after:
        if taint.get("effect") != "NoExecute" or taint.get("timeAdded"):
            continue
        taint["timeAdded"] = kept.get((taint.get("key"), taint.get("effect"))) or store.now_rfc3339()
