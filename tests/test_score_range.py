"""A score outside [0, 100] after NormalizeScore ends the cycle with upstream's error
(runtime/framework.go RunScorePlugins), whichever side of the range it falls on."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import default_profile
from scheduler_core.framework.runtime import Framework
from scheduler_core.framework.status import Code
from scheduler_core.plugins.registry import IN_TREE_REGISTRY
from scheduler_core.schedule_one import Scheduler

from .helpers import node, pod


class _FixedScores:
    """Stands in for ImageLocality: the given scores for the scored nodes."""

    name = "ImageLocality"

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def score(self, state, pod, table, idx):  # type: ignore[no-untyped-def]
        return np.array(self.values[: len(idx)], dtype=np.int64)


@pytest.mark.parametrize(("values", "bad"), [([0, 101, 5], 101), ([100, 7, -1], -1), ([0, 100, 50], None)])
def test_a_score_outside_the_range_is_an_error(values: list[int], bad: int | None) -> None:
    registry = {**IN_TREE_REGISTRY, "ImageLocality": lambda args, handle: _FixedScores(values)}
    scheduler = Scheduler(Framework(default_profile(), registry), seed=0)
    table = NodeTable.build([node("a"), node("b"), node("c")])
    result = scheduler.schedule_pod(table, PodInfo.of(pod("p", requests={"cpu": "1"})))
    if bad is None:
        assert result.status.code == Code.SUCCESS
        return
    assert result.status.code == Code.ERROR
    assert result.message == (
        f'plugin "ImageLocality" returns an invalid score {bad}, it should in the range of [0, 100] after normalizing'
    )
