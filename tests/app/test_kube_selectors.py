"""`?labelSelector=` is matched by the scheduler's own matcher (one rule for both)."""

from __future__ import annotations

import pytest

from clusterviz.kube_api.selectors import LabelSelector
from clusterviz.kube_api.status import ApiError
from scheduler_core.api.objects import LabelSelector as SpecSelector
from scheduler_core.framework.selectors import compile_label_selector


def _obj(**labels: str) -> dict[str, object]:
    return {"metadata": {"labels": labels}}


@pytest.mark.parametrize(
    ("text", "labels", "matched"),
    [
        ("app=web", {"app": "web"}, True),
        ("app!=web", {}, True),
        ("tier in (a,b),!gone", {"tier": "b"}, True),
        ("tier notin (a)", {"tier": "a"}, False),
        ("rank>5", {"rank": "7"}, True),
        # Go's strconv.ParseInt, not Python's int(): the API used to read "1_0" as 10
        ("rank>5", {"rank": "1_0"}, False),
        ("rank<5", {"rank": "+3"}, True),
    ],
)
def test_label_selectors_match_as_the_scheduler_does(text: str, labels: dict[str, str], matched: bool) -> None:
    assert LabelSelector.parse(text).matches(_obj(**labels)) is matched


def test_a_gt_bound_is_an_int64() -> None:
    with pytest.raises(ApiError, match=r"^unable to parse requirement: for '>', '1_0' must be an integer$"):
        LabelSelector.parse("rank>1_0")
    with pytest.raises(ApiError, match="must be an integer"):
        LabelSelector.parse(f"rank<{2**63}")


def test_the_scheduler_and_the_api_agree_on_a_spec_selector() -> None:
    spec = SpecSelector.model_validate(
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}
    )
    for labels in ({"app": "web"}, {"app": "web", "tier": "db"}, {"app": "db", "tier": "x"}):
        api = LabelSelector.parse("app=web,tier notin (db)").matches(_obj(**labels))
        assert api == compile_label_selector(spec).matches(labels)
