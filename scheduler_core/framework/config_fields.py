"""The fields a `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration may have: kube-scheduler
decodes its `--config` file strictly, so a misspelled field is an error there, and here too.

Upstream: staging/src/k8s.io/kube-scheduler/config/v1/types.go and types_pluginargs.go (v1.34), core/v1
TopologySpreadConstraint for PodTopologySpread's defaultConstraints. Fields kube-scheduler reads but the
simulator does not use (leaderElection, clientConnection, extenders…) are accepted and ignored.
"""

from __future__ import annotations

from typing import Any

__all__ = ["unknown_field"]

Loc = tuple[int | str, ...]
# A schema: a set of plain field names, or a dict mapping a field to the schema of its value; a
# list [schema] is a list of such values; None accepts anything.
Schema = Any

_PLUGIN_SET = {"enabled": [{"name": None, "weight": None}], "disabled": [{"name": None, "weight": None}]}
_POINTS = [
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "multiPoint",
]
_RESOURCES = [{"name": None, "weight": None}]
_TYPE_META = {"apiVersion": None, "kind": None}
ARGS: dict[str, Schema] = {
    "NodeResourcesFit": {
        **_TYPE_META,
        "ignoredResources": None,
        "ignoredResourceGroups": None,
        "scoringStrategy": {
            "type": None,
            "resources": _RESOURCES,
            "requestedToCapacityRatio": {"shape": [{"utilization": None, "score": None}]},
        },
    },
    "PodTopologySpread": {
        **_TYPE_META,
        "defaultingType": None,
        "defaultConstraints": [
            {
                "maxSkew": None,
                "topologyKey": None,
                "whenUnsatisfiable": None,
                "labelSelector": None,
                "minDomains": None,
                "nodeAffinityPolicy": None,
                "nodeTaintsPolicy": None,
                "matchLabelKeys": None,
            }
        ],
    },
    "InterPodAffinity": {**_TYPE_META, "hardPodAffinityWeight": None, "ignorePreferredTermsOfExistingPods": None},
    "DefaultPreemption": {**_TYPE_META, "minCandidateNodesPercentage": None, "minCandidateNodesAbsolute": None},
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": _RESOURCES},
    "NodeAffinity": {**_TYPE_META, "addedAffinity": None},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": None, "shape": None},
    "DynamicResources": {**_TYPE_META, "filterTimeout": None, "bindingTimeout": None},
}
CONFIG: Schema = {
    **_TYPE_META,
    "parallelism": None,
    "leaderElection": None,
    "clientConnection": None,
    "enableProfiling": None,
    "enableContentionProfiling": None,
    "percentageOfNodesToScore": None,
    "podInitialBackoffSeconds": None,
    "podMaxBackoffSeconds": None,
    "delayCacheUntilActive": None,
    "extenders": None,
    "profiles": [
        {
            "schedulerName": None,
            "percentageOfNodesToScore": None,
            "plugins": dict.fromkeys(_POINTS, _PLUGIN_SET),
            "pluginConfig": [{"name": None, "args": None}],  # args: by plugin name, below
        }
    ],
}


def _walk(value: Any, schema: Schema, loc: Loc) -> Loc | None:
    if schema is None:
        return None
    if isinstance(schema, list):
        if isinstance(value, list):
            for k, item in enumerate(value):
                found = _walk(item, schema[0], (*loc, k))
                if found:
                    return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in schema:
                return (*loc, key)
            found = _walk(item, schema[key], (*loc, key))
            if found:
                return found
    return None


def unknown_field(config: Any) -> Loc | None:
    """The path of the first field kube-scheduler's strict decoding would refuse, or None."""
    found = _walk(config, CONFIG, ())
    if found:
        return found
    profiles = config.get("profiles") if isinstance(config, dict) else None
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        entries = profile.get("pluginConfig") if isinstance(profile, dict) else None
        for k, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and entry.get("name") in ARGS:
                found = _walk(entry.get("args"), ARGS[entry["name"]], ("profiles", i, "pluginConfig", k, "args"))
                if found:
                    return found
    return None
