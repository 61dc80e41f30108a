"""Scheduling profiles from real KubeSchedulerConfiguration YAML, and numFeasibleNodesToFind.

Upstream: pkg/scheduler/apis/config/v1/default_plugins.go (mergePlugins, mergePluginSet),
framework/runtime/framework.go (updatePluginList, expandMultiPointPlugins, getScoreWeights, NewFramework
checks), apis/config/validation/validation.go (validatePercentageOfNodesToScore, pluginConfig duplicates),
schedule_one.go numFeasibleNodesToFind with schedule_one_test.go TestNumFeasibleNodesToFind.
"""

from __future__ import annotations

import textwrap

import pytest

from scheduler_core.api.loading import InputError
from scheduler_core.api.objects import Node, Pod
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.profile import Profile, default_profile, load_profile, profile_from_config
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult, num_feasible_nodes_to_find
from tests.helpers import filter_status, node, pod, table

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def config(body: str = "") -> Profile:
    return load_profile(HEADER + textwrap.dedent(body).lstrip("\n"), "sched.yaml")


def run(profile: Profile, nodes: list[Node], incoming: Pod, pods: list[Pod] = (), seed: int = 0) -> ScheduleResult:  # type: ignore[assignment]
    return Scheduler(new_framework(profile), seed=seed).schedule_pod(table(nodes, list(pods)), PodInfo.of(incoming))


def names(plugins: list) -> list[str]:  # type: ignore[type-arg]
    return [p.name for p in plugins]


def totals(result: ScheduleResult) -> dict[str, int]:
    assert result.totals is not None
    return {
        result.table.names[i]: int(t) for i, t in zip(result.candidates.tolist(), result.totals.tolist(), strict=True)
    }


# --- the default profile ---------------------------------------------------------------------


def test_default_profile_points_and_weights() -> None:
    """getDefaultPlugins (v1.34, DynamicResources on); an empty config resolves to the same."""
    for profile in (default_profile(), config(), config("profiles: []\n"), config("profiles:\n- {}\n")):
        fw = new_framework(profile)
        assert names(fw.filter_plugins) == [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources",
        ]
        assert names(fw.post_filter_plugins) == ["DynamicResources", "DefaultPreemption"]
        assert fw.weights == {
            "TaintToleration": 3,
            "NodeAffinity": 2,
            "NodeResourcesFit": 1,
            "VolumeBinding": 1,
            "PodTopologySpread": 2,
            "InterPodAffinity": 2,
            "NodeResourcesBalancedAllocation": 1,
            "ImageLocality": 1,
        }
        assert profile.percentage_of_nodes_to_score is None


# --- disabling, weights, custom order --------------------------------------------------------

SOFT_TAINT = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}
TWO_NODES = [node("clean"), node("tainted", taints=[SOFT_TAINT])]


def test_disabling_a_score_plugin_removes_only_its_score() -> None:
    profile = config(
        """
        profiles:
        - plugins:
            score:
              disabled:
              - name: TaintToleration
        """
    )
    fw = new_framework(profile)
    assert "TaintToleration" not in names(fw.score_plugins)
    assert "TaintToleration" in names(fw.filter_plugins)  # still filters
    assert "TaintToleration" in names(fw.pre_score_plugins)  # upstream disables per point only
    result = run(profile, TWO_NODES, pod("p"))
    assert [entry.plugin for entry in result.scores] == ["NodeResourcesFit", "ImageLocality"]
    assert totals(result)["clean"] == totals(result)["tainted"]  # the taint no longer matters


@pytest.mark.parametrize(
    ("body", "weight"),
    [
        pytest.param("", 3, id="default weight 3"),
        pytest.param(
            """
            profiles:
            - plugins:
                score:
                  enabled:
                  - name: TaintToleration
                    weight: 10
            """,
            10,
            id="score point re-enables with weight 10",
        ),
        pytest.param(
            """
            profiles:
            - plugins:
                multiPoint:
                  enabled:
                  - name: TaintToleration
                    weight: 10
            """,
            10,
            id="multiPoint override keeps the position, weight 10",
        ),
        pytest.param(
            """
            profiles:
            - plugins:
                score:
                  enabled:
                  - name: TaintToleration
                    weight: 0
            """,
            1,
            id="weight 0 becomes 1",
        ),
    ],
)
def test_taint_toleration_weight_changes_totals(body: str, weight: int) -> None:
    result = run(config(body), TWO_NODES, pod("p"))
    entry = next(e for e in result.scores if e.plugin == "TaintToleration")
    assert entry.weight == weight
    assert entry.normalized.tolist() == [100, 0]
    assert totals(result)["clean"] - totals(result)["tainted"] == 100 * weight
    assert result.selected_node == "clean"


def test_score_point_override_runs_first() -> None:
    """expandMultiPointPlugins: plugins re-configured at a point come first, then MultiPoint ones."""
    profile = config(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: ImageLocality
                weight: 5
        """
    )
    fw = new_framework(profile)
    assert names(fw.score_plugins)[0] == "ImageLocality"
    assert fw.weights["ImageLocality"] == 5


# A node failing both TaintToleration and NodeResourcesFit: upstream records the first failing
# plugin in Filter order, so the order of the configuration decides the reported reason.
BOTH_FAIL = node(
    "n", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}], allocatable={"cpu": "1", "pods": "110"}
)
CUSTOM_ORDER = """
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: "*"
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
      - name: {first}
      - name: {second}
"""


@pytest.mark.parametrize(
    ("first", "second", "recorded"),
    [
        ("TaintToleration", "NodeResourcesFit", ("TaintToleration", "UnschedulableAndUnresolvable")),
        ("NodeResourcesFit", "TaintToleration", ("NodeResourcesFit", "UnschedulableAndUnresolvable")),
    ],
)
def test_multi_point_custom_order(first: str, second: str, recorded: tuple[str, str]) -> None:
    profile = config(CUSTOM_ORDER.format(first=first, second=second))
    fw = new_framework(profile)
    assert names(fw.filter_plugins) == [first, second]
    assert names(fw.post_filter_plugins) == []  # DefaultPreemption and DynamicResources are gone
    result = run(profile, [BOTH_FAIL], pod("p", requests={"cpu": "2"}))
    status = filter_status(result, "n")
    assert status is not None and status[:2] == recorded
    assert result.message.startswith("0/1 nodes are available: 1 ")
    assert "preemption" not in result.message  # no PostFilter plugins


def test_disabling_all_filter_plugins_with_star() -> None:
    """`filter: disabled: ["*"]` skips MultiPoint expansion for Filter; explicitly enabled ones stay."""
    profile = config(
        """
        profiles:
        - plugins:
            filter:
              disabled:
              - name: "*"
              enabled:
              - name: NodeUnschedulable
        """
    )
    fw = new_framework(profile)
    assert names(fw.filter_plugins) == ["NodeUnschedulable"]
    assert "NodeAffinity" in names(fw.pre_filter_plugins)  # other points keep their defaults
    nodes = [node("cordoned", unschedulable=True), node("tainted", taints=[{"key": "k", "effect": "NoSchedule"}])]
    result = run(profile, nodes, pod("p", nodeSelector={"nowhere": "x"}))
    assert result.selected_node == "tainted"  # no TaintToleration or NodeAffinity filter any more
    assert filter_status(result, "cordoned") == (
        "NodeUnschedulable",
        "UnschedulableAndUnresolvable",
        ["node(s) were unschedulable"],
    )


# --- pluginConfig ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "fit_scores", "chosen"),
    [("LeastAllocated", [75, 25], "empty"), ("MostAllocated", [25, 75], "half-full")],
)
def test_node_resources_fit_scoring_strategy(strategy: str, fit_scores: list[int], chosen: str) -> None:
    profile = config(
        f"""
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: {strategy}
        """
    )
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    nodes = [node("empty", allocatable=allocatable), node("half-full", allocatable=allocatable)]
    running = [pod("e", requests={"cpu": "2", "memory": "4Gi"}, node_name="half-full")]
    result = run(profile, nodes, pod("p", requests={"cpu": "1", "memory": "2Gi"}), running)
    fit = next(e for e in result.scores if e.plugin == "NodeResourcesFit")
    assert fit.normalized.tolist() == fit_scores
    assert result.selected_node == chosen


# --- percentageOfNodesToScore -----------------------------------------------------------------

# schedule_one_test.go TestNumFeasibleNodesToFind (global percentage folded into the argument: the
# profile value wins when set, else the global one).
NUM_FEASIBLE_CASES = [
    pytest.param(0, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(40, 10, 10, id="set profile percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(0, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(40, 1000, 400, id="set profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(0, 6000, 300, id="not set percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(40, 6000, 2400, id="set profile percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(0, 5000, 500, id="5000 nodes adaptive 10%"),
    pytest.param(0, 99, 99, id="under 100 nodes all"),
    pytest.param(0, 100, 100, id="100 nodes adaptive 50% is below the minimum 100"),
    pytest.param(1, 1000, 100, id="1% of 1000 raised to the minimum 100"),
    pytest.param(100, 1000, 1000, id="100%"),
    pytest.param(0, 20000, 1000, id="adaptive floor 5%"),
]


@pytest.mark.parametrize(("percentage", "num_nodes", "expected"), NUM_FEASIBLE_CASES)
def test_num_feasible_nodes_to_find(percentage: int, num_nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, num_nodes) == expected


def many_nodes(n: int) -> list[Node]:
    return [node(f"n{i:03d}") for i in range(n)]


@pytest.mark.parametrize(
    ("body", "percentage", "scored"),
    [
        pytest.param("", None, 150, id="unset: teaching mode scores every feasible node"),
        pytest.param("percentageOfNodesToScore: 10\n", 10, 100, id="global 10% of 150, raised to 100"),
        pytest.param("percentageOfNodesToScore: 0\n", 0, 100, id="global 0: adaptive 49% of 150, raised to 100"),
        pytest.param(
            "percentageOfNodesToScore: 100\nprofiles:\n- percentageOfNodesToScore: 10\n",
            10,
            100,
            id="profile overrides global",
        ),
        pytest.param("profiles:\n- percentageOfNodesToScore: 100\n", 100, 150, id="profile 100%"),
    ],
)
def test_percentage_of_nodes_to_score(body: str, percentage: int | None, scored: int) -> None:
    profile = config(body)
    assert profile.percentage_of_nodes_to_score == percentage
    result = run(profile, many_nodes(150), pod("p"))
    assert len(result.candidates) == scored
    if scored < 150:
        assert result.not_evaluated is not None
        assert int(result.not_evaluated.sum()) == 150 - scored
        assert result.candidates.tolist() == list(range(scored))  # from nextStartNodeIndex 0, in order


def test_next_start_node_index_rotates() -> None:
    """nextStartNodeIndex advances by the nodes processed, modulo all nodes."""
    scheduler = Scheduler(new_framework(config("percentageOfNodesToScore: 10\n")), seed=0)
    snapshot = table(many_nodes(150))
    first = scheduler.schedule_pod(snapshot, PodInfo.of(pod("a")))
    second = scheduler.schedule_pod(snapshot, PodInfo.of(pod("b")))
    assert first.candidates.tolist() == list(range(100))
    assert second.candidates.tolist() == list(range(100, 150)) + list(range(50))


def test_profile_chosen_by_scheduler_name() -> None:
    body = """
    profiles:
    - schedulerName: default-scheduler
    - schedulerName: packer
      pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
    """
    document = HEADER + textwrap.dedent(body).lstrip("\n")
    assert load_profile(document, "sched.yaml").scheduler_name == "default-scheduler"
    packer = load_profile(document, "sched.yaml", "packer")
    assert packer.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    with pytest.raises(InputError, match=r"^sched.yaml:3: profiles: no profile with schedulerName 'other'$"):
        load_profile(document, "sched.yaml", "other")


# --- errors: one line naming file, line and field path -----------------------------------------

ERROR_CASES = [
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: Foo
        """,
        'sched.yaml:7: profiles[0].plugins.score.enabled[0]: ScorePlugin "Foo" does not exist',
        id="unknown plugin at a point",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - name: Foo
        """,
        'sched.yaml:7: profiles[0].plugins.multiPoint.enabled[0]: PreFilterPlugin "Foo" does not exist',
        id="unknown plugin in multiPoint",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: NodeName
        """,
        'sched.yaml:7: profiles[0].plugins.score.enabled[0]: plugin "NodeName" does not extend ScorePlugin plugin',
        id="plugin not extending the point",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            filter:
              enabled:
              - name: NodePorts
              - name: NodePorts
        """,
        'sched.yaml:8: profiles[0].plugins.filter.enabled[1]: plugin "NodePorts" already registered as "FilterPlugin"',
        id="double registration",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: TaintToleration
                weight: -1
        """,
        "sched.yaml:8: profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: "
        "must be an integer in [0, 2147483647]",
        id="negative weight",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - name: TaintToleration
                weight: ten
        """,
        "sched.yaml:8: profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: 'ten': "
        "must be an integer in [0, 2147483647]",
        id="weight not a number",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - weight: 2
        """,
        "sched.yaml:7: profiles[0].plugins.score.enabled[0].name: Required value",
        id="missing plugin name",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            scores: {}
        """,
        'sched.yaml:5: profiles[0].plugins.scores: strict decoding error: unknown field "profiles[0].plugins.scores"',
        id="unknown extension point",
    ),
    pytest.param(
        "percentageOfNodesToScore: 101\n",
        "sched.yaml:3: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        id="global percentage out of range",
    ),
    pytest.param(
        """
        profiles:
        - percentageOfNodesToScore: -1
        """,
        "sched.yaml:4: profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        id="profile percentage out of range",
    ),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args: {}
          - name: NodeResourcesFit
            args: {}
        """,
        'sched.yaml:7: profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"',
        id="duplicate pluginConfig",
    ),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: Balanced
        """,
        "sched.yaml:8: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "
        '"Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        id="bad plugin args name the file, line and path",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            queueSort:
              disabled:
              - name: "*"
        """,
        "sched.yaml:4: profiles[0]: only one queue sort plugin required for profile with scheduler name "
        '"default-scheduler", but got 0',
        id="no queue sort plugin",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            bind:
              disabled:
              - name: DefaultBinder
        """,
        "sched.yaml:4: profiles[0]: at least one bind plugin is needed for profile with scheduler name "
        '"default-scheduler"',
        id="no bind plugin",
    ),
]


@pytest.mark.parametrize(("body", "message"), ERROR_CASES)
def test_profile_errors(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        config(body)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("kind: Pod\n", "sched.yaml:1: kind: Invalid value: 'Pod': expected KubeSchedulerConfiguration"),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            "sched.yaml:1: apiVersion: Invalid value: 'kubescheduler.config.k8s.io/v1beta3': "
            "expected kubescheduler.config.k8s.io/v1",
        ),
        pytest.param("- a\n", "sched.yaml:1: expected a KubeSchedulerConfiguration (a mapping)"),
        pytest.param("", "sched.yaml: expected one KubeSchedulerConfiguration document, found 0"),
        pytest.param("kind: [\n", "sched.yaml:2:1: "),
    ],
)
def test_profile_document_errors(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_profile(text, "sched.yaml")
    assert str(caught.value).startswith(message)


def test_profile_from_config_without_yaml_names_the_path() -> None:
    with pytest.raises(InputError, match=r"^profile: profiles\[0\]\.plugins\.score\.enabled\[0\]: ScorePlugin"):
        profile_from_config(
            {"kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {"score": {"enabled": [{"name": "X"}]}}}]}
        )


def test_failures_before_the_cancelling_feasible_node_are_processed() -> None:
    """Read sequentially: n000-n099 feasible (100 = numNodesToFind), n100 fails and is recorded, n101 is
    feasible, pushes the count past 100, cancels and is discarded. processed = 100 + 1 = 101."""
    scheduler = Scheduler(new_framework(config("percentageOfNodesToScore: 10\n")), seed=0)
    nodes = [node(f"n{i:03d}", unschedulable=(i == 100)) for i in range(150)]
    result = scheduler.schedule_pod(table(nodes), PodInfo.of(pod("a")))
    assert result.candidates.tolist() == list(range(100))
    assert result.not_evaluated is not None and not result.not_evaluated[100]
    assert scheduler.next_start_node_index == 101
