"""KubeSchedulerConfiguration validation with upstream's field paths and texts.

Upstream: pkg/scheduler/apis/config/validation/validation.go (ValidateKubeSchedulerConfiguration,
isPluginInvalid, validateCommonQueueSort) and validation_pluginargs.go (ValidateNodeResourcesFitArgs,
ValidatePodTopologySpreadArgs, validateFunctionShape, validateResources, ValidateDefaultPreemptionArgs,
validateHardPodAffinityWeight, ValidateNodeResourcesBalancedAllocationArgs); defaults from v1/defaults.go.
"""

from __future__ import annotations

import textwrap

import pytest

from scheduler_core.api.loading import InputError
from scheduler_core.framework.profile import load_config, load_profile

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def plugin_config(name: str, args: str) -> str:
    return (
        HEADER
        + "profiles:\n- pluginConfig:\n  - name: "
        + name
        + "\n    args:\n"
        + textwrap.indent(textwrap.dedent(args).strip("\n"), "      ")
    )


CASES = [
    pytest.param(
        "NodeResourcesFit",
        "scoringStrategy:\n  type: MostAllocated\n  resources:\n  - name: cpu\n    weight: 101\n",
        "sched.yaml:11: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: "
        "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
        id="resource weight",
    ),
    pytest.param(
        "NodeResourcesFit",
        "scoringStrategy:\n  resources:\n  - name: cpu\n",
        'sched.yaml:7: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "": '
        'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        id="a scoringStrategy without type",
    ),
    pytest.param(
        "NodeResourcesFit",
        "scoringStrategy:\n  type: RequestedToCapacityRatio\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: "
        "Required value: must be specified when type is RequestedToCapacityRatio",
        id="RTCR without its shape",
    ),
    pytest.param(
        "NodeResourcesFit",
        "scoringStrategy:\n  type: LeastAllocated\n  requestedToCapacityRatio:\n    shape: []\n",
        "sched.yaml:9: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: "
        "Forbidden: must be nil when type is not RequestedToCapacityRatio",
        id="a shape on LeastAllocated",
    ),
    pytest.param(
        "NodeResourcesFit",
        "scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n    shape: []\n",
        "sched.yaml:10: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: "
        "Required value: at least one point must be specified",
        id="an empty shape",
    ),
    pytest.param(
        "NodeResourcesFit",
        """
        scoringStrategy:
          type: RequestedToCapacityRatio
          requestedToCapacityRatio:
            shape:
            - {utilization: 50, score: 0}
            - {utilization: 40, score: 11}
        """,
        "sched.yaml:12: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1]"
        ".utilization: Invalid value: 40: values must be sorted in increasing order",
        id="shape out of order",
    ),
    pytest.param(
        "NodeResourcesFit",
        """
        scoringStrategy:
          type: RequestedToCapacityRatio
          requestedToCapacityRatio:
            shape:
            - {utilization: 0, score: 11}
        """,
        "sched.yaml:11: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0]"
        ".score: Invalid value: 11: not in valid range [0, 10]",
        id="shape score",
    ),
    pytest.param(
        "NodeResourcesFit",
        "ignoredResourceGroups: [example.com/gpu]\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: "
        "Invalid value: \"example.com/gpu\": resource group name can't contain '/'",
        id="ignored group",
    ),
    pytest.param(
        "PodTopologySpread",
        "defaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
        'sched.yaml:6: profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": '
        "when .defaultConstraints are not empty",
        id="constraints with System defaulting",
    ),
    pytest.param(
        "PodTopologySpread",
        "defaultingType: Always\n",
        'sched.yaml:7: profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Always": '
        'supported values: "System", "List"',
        id="defaultingType",
    ),
    pytest.param(
        "PodTopologySpread",
        "defaultingType: List\ndefaultConstraints:\n"
        "- {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
        "sched.yaml:9: profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: "
        "not in valid range (0, inf)",
        id="maxSkew",
    ),
    pytest.param(
        "PodTopologySpread",
        "defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}\n",
        "sched.yaml:9: profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: "
        'Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
        id="whenUnsatisfiable",
    ),
    pytest.param(
        "PodTopologySpread",
        "defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}\n",
        "sched.yaml:9: profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey: "
        "Required value: can not be empty",
        id="topologyKey",
    ),
    pytest.param(
        "PodTopologySpread",
        """
        defaultingType: List
        defaultConstraints:
        - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
        - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
        """,
        "sched.yaml:10: profiles[0].pluginConfig[0].args.defaultConstraints[1]: "
        'Duplicate value: "{zone, DoNotSchedule}"',
        id="repeated constraint",
    ),
    pytest.param(
        "PodTopologySpread",
        """
        defaultingType: List
        defaultConstraints:
        - maxSkew: 1
          topologyKey: zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: a}}
        """,
        "sched.yaml:12: profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: "
        "Forbidden: constraint must not define a selector, as they deduced for each pod",
        id="selector",
    ),
    pytest.param(
        "InterPodAffinity",
        "hardPodAffinityWeight: 101\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: "
        "not in valid range [0, 100]",
        id="hardPodAffinityWeight",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        "resources:\n- {name: cpu, weight: 2}\n",
        "sched.yaml:8: profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
        id="balanced weight",
    ),
    pytest.param(
        "DefaultPreemption",
        "minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 0\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: "
        "cannot be zero at the same time as minCandidateNodesAbsolute",
        id="preemption both zero",
    ),
    pytest.param(
        "VolumeBinding",
        "bindTimeoutSeconds: -1\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: "
        "invalid BindTimeoutSeconds, should not be a negative value",
        id="bind timeout",
    ),
    pytest.param(
        "VolumeBinding",
        "shape:\n- {utilization: 0, score: 0}\n- {utilization: 100, score: 10}\n",
        "sched.yaml:7: profiles[0].pluginConfig[0].args.shape: Invalid value: []config.UtilizationShapePoint"
        "{config.UtilizationShapePoint{Utilization:0, Score:0}, config.UtilizationShapePoint{Utilization:100, "
        "Score:10}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        id="volume binding shape with StorageCapacityScoring off",
    ),
    pytest.param(
        "EBSLimits",
        "{}\n",
        'sched.yaml:5: profiles[0].pluginConfig[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="removed plugin",
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), CASES)
def test_plugin_args_errors_use_upstream_texts(name: str, args: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_profile(plugin_config(name, args), "sched.yaml")
    assert str(caught.value) == message


def test_valid_args_load() -> None:
    profile = load_profile(
        plugin_config(
            "PodTopologySpread",
            "defaultingType: List\ndefaultConstraints:\n"
            "- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
        ),
        "sched.yaml",
    )
    assert profile.plugin_args["PodTopologySpread"]["defaultingType"] == "List"


def test_every_profile_by_scheduler_name() -> None:
    text = HEADER + textwrap.dedent(
        """
        profiles:
        - schedulerName: default-scheduler
        - schedulerName: bin-packing
          pluginConfig:
          - name: NodeResourcesFit
            args: {scoringStrategy: {type: MostAllocated}}
        """
    )
    profiles = load_config(text, "sched.yaml")
    assert list(profiles) == ["default-scheduler", "bin-packing"]
    assert profiles["bin-packing"].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"


def test_a_scheduler_name_used_twice() -> None:
    text = HEADER + "profiles:\n- schedulerName: a\n- schedulerName: a\n"
    with pytest.raises(InputError, match=r"^sched.yaml:5: profiles\[1\].schedulerName: Duplicate value: "):
        load_config(text, "sched.yaml")


def test_queue_sort_must_match() -> None:
    text = HEADER + textwrap.dedent(
        """
        profiles:
        - schedulerName: a
        - schedulerName: b
          plugins:
            queueSort:
              disabled: [{name: "*"}]
              enabled: [{name: PrioritySort}]
        """
    )
    with pytest.raises(InputError, match=r"profiles\[1\].plugins.queueSort: Invalid value: .*must be the same for all"):
        load_config(text, "sched.yaml")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "percentageOfNodeToScore: 50\n",
            'sched.yaml:3: percentageOfNodeToScore: strict decoding error: unknown field "percentageOfNodeToScore"',
        ),
        (
            "profiles:\n- plugins:\n    score:\n      enable: [{name: ImageLocality}]\n",
            "sched.yaml:6: profiles[0].plugins.score.enable: strict decoding error: "
            'unknown field "profiles[0].plugins.score.enable"',
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
            "      scoringStratgy: {type: MostAllocated}\n",
            "sched.yaml:7: profiles[0].pluginConfig[0].args.scoringStratgy: strict decoding error: unknown field "
            '"profiles[0].pluginConfig[0].args.scoringStratgy"',
        ),
    ],
    ids=["top level", "plugin set", "plugin args"],
)
def test_unknown_fields_are_refused_as_kube_scheduler_decodes_strictly(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_config(HEADER + body, "sched.yaml")
    assert str(caught.value) == message


def test_fields_kube_scheduler_reads_and_the_simulator_ignores_are_accepted() -> None:
    text = HEADER + textwrap.dedent(
        """
        parallelism: 16
        leaderElection: {leaderElect: false}
        clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf}
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: NodeResourcesFit
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: NodeResourcesFitArgs
              scoringStrategy: {type: MostAllocated}
        """
    )
    assert list(load_config(text, "sched.yaml")) == ["default-scheduler"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "parallelism: 0\n",
            "sched.yaml:3: parallelism: Invalid value: 0: should be an integer value greater than zero",
        ),
        (
            "podInitialBackoffSeconds: 0\n",
            "sched.yaml:3: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
            "sched.yaml:4: podMaxBackoffSeconds: Invalid value: 2: "
            "must be greater than or equal to PodInitialBackoffSeconds",
        ),
    ],
    ids=["parallelism", "initial backoff", "max backoff"],
)
def test_top_level_numbers(body: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_config(HEADER + body, "sched.yaml")
    assert str(caught.value) == message
