"""`python -m scheduler_core fit|drain|add --cluster DUMP …`: the capacity queries on a snapshot."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from ..api.errors import InputError
from ..api.loading import ClusterObjects, load_kept_cluster_file, load_pod, parse_object
from ..api.objects import Node
from ..api.workloads import WorkloadIndex
from ..api.yaml_reading import load_yaml_documents
from ..explain import build_table
from ..framework.profile import Profile
from ..versions.arguments import (
    add_version_arguments,
    note_snapshot_version,
    profile_from_arguments,
    version_from_arguments,
)
from .add import add_nodes, pending_pods, shape_of
from .drain import drain
from .evictions import DrainOptions
from .fit import fit
from .nodes import NodeChoice
from .progress import TerminalProgress
from .templates import PodTemplate, pod_template, workload_template
from .text import format_add, format_drain, format_fit

__all__ = ["add_parsers"]

Read = Callable[[str], bytes]
DEFAULT_SCHEDULER = "default-scheduler"


def _cluster(args: argparse.Namespace) -> ClusterObjects:
    path = args.cluster
    cluster = load_kept_cluster_file(path)
    notice = cluster.skipped_notice()
    if notice:
        print(f"note: {path}: {notice}", file=sys.stderr)
    note_snapshot_version(args, cluster.nodes, path, cluster.server_version)
    return cluster


def _profile(args: argparse.Namespace, read: Read, scheduler_name: str) -> Profile:
    return profile_from_arguments(args, read, scheduler_name, version_from_arguments(args))


def _print(report: Any, text: Callable[[Any], str], output: str) -> int:
    if output == "json":
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(report))
    return 0


def _template(args: argparse.Namespace, cluster: ClusterObjects, read: Read) -> PodTemplate:
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    runtimes = {rc.metadata.name: rc for rc in cluster.runtime_classes}
    if bool(args.pod) == bool(args.workload):
        raise InputError("fit: give exactly one of --pod FILE and --workload KIND/NAME")
    if args.pod:
        return pod_template(load_pod(read(args.pod), args.pod, classes, runtimes))
    return workload_template(args.workload, args.namespace, cluster.workloads, classes, runtimes)


def _fit(args: argparse.Namespace, read: Read) -> int:
    if args.max is not None and args.max < 1:
        raise InputError(f"--max must be at least 1 (got {args.max})")
    cluster = _cluster(args)
    template = _template(args, cluster, read)
    profile = _profile(args, read, template.info.pod.spec.scheduler_name or DEFAULT_SCHEDULER)
    progress = TerminalProgress("fit", sys.stderr)
    try:
        report = fit(build_table(cluster), template, profile, limit=args.max, seed=args.seed, progress=progress)
    finally:
        progress.close()
    return _print(report, format_fit, args.output)


def _drain(args: argparse.Namespace, read: Read) -> int:
    choice = NodeChoice(tuple(args.nodes), args.selector or "", args.zone or "", args.instance_type or "")
    cluster = _cluster(args)
    options = DrainOptions(args.ignore_daemonsets, args.force, args.delete_emptydir_data)
    progress = TerminalProgress("drain", sys.stderr)
    try:
        report = drain(
            build_table(cluster),
            choice,
            WorkloadIndex(cluster.workloads),
            options,
            _profile(args, read, DEFAULT_SCHEDULER),
            seed=args.seed,
            progress=progress,
        )
    finally:
        progress.close()
    return _print(report, format_drain, args.output)


def _written_node(path: str, read: Read) -> Node:
    documents = load_yaml_documents(read(path), path)
    if len(documents) != 1:
        raise InputError(f"{path}: expected exactly one Node, found {len(documents)} documents")
    node = parse_object(documents[0].data, path, documents[0].node, kinds=("Node",))
    assert isinstance(node, Node)
    return node


def _add(args: argparse.Namespace, read: Read) -> int:
    if bool(args.like) == bool(args.node):
        raise InputError("add: give exactly one of --like NODE and --node FILE")
    cluster = _cluster(args)
    table = build_table(cluster)
    shape, shape_text = shape_of(table, args.like, _written_node(args.node, read) if args.node else None)
    profile = _profile(args, read, DEFAULT_SCHEDULER)
    pending = pending_pods(cluster.pods, profile.scheduler_name if profile else DEFAULT_SCHEDULER)
    progress = TerminalProgress("add", sys.stderr)
    try:
        report = add_nodes(
            table,
            shape,
            shape_text,
            args.count,
            pending,
            profile,
            prefix=args.name_prefix,
            seed=args.seed,
            progress=progress,
            baseline=build_table(cluster),  # the same pods without the new nodes
        )
    finally:
        progress.close()
    return _print(report, format_add, args.output)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", required=True, help="`kubectl get … -A -o json|yaml` output")
    parser.add_argument("--profile", help="a KubeSchedulerConfiguration (default: upstream's default profile)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random tie-break")
    add_version_arguments(parser)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")


def add_parsers(sub: Any, read: Read) -> None:
    """The three subcommands on the main parser (`read`: a file's bytes, within the size limit)."""
    fi = sub.add_parser("fit", help="how many more copies of a pod or workload fit, and where; why the next does not")
    _common(fi)
    fi.add_argument("--pod", help="the Pod to copy (YAML)")
    fi.add_argument("--workload", help="deployment/NAME, replicaset/NAME or statefulset/NAME: its next pod")
    fi.add_argument("-n", "--namespace", default="default", help="the workload's namespace")
    fi.add_argument("--max", type=int, help="stop after this many (default: until one does not fit)")
    fi.set_defaults(run=lambda args: _fit(args, read))
    dr = sub.add_parser("drain", help="cordon and drain nodes as kubectl would: where every evicted pod goes")
    _common(dr)
    dr.add_argument("nodes", nargs="*", help="node names")
    dr.add_argument("-l", "--selector", help="nodes by label selector, e.g. eks.amazonaws.com/nodegroup=spot")
    dr.add_argument("--zone", help="nodes of this topology.kubernetes.io/zone")
    dr.add_argument("--instance-type", help="nodes of this node.kubernetes.io/instance-type")
    dr.add_argument("--ignore-daemonsets", action="store_true", help="as kubectl drain: leave DaemonSet pods")
    dr.add_argument("--force", action="store_true", help="as kubectl drain: delete pods that declare no controller")
    dr.add_argument("--delete-emptydir-data", action="store_true", help="as kubectl drain: delete pods with emptyDir")
    dr.set_defaults(run=lambda args: _drain(args, read))
    ad = sub.add_parser("add", help="add nodes of a shape: which pending pods then schedule")
    _common(ad)
    ad.add_argument("--like", help="copy this node (labels, taints, allocatable)")
    ad.add_argument("--node", help="a Node to add (YAML), instead of --like")
    ad.add_argument("--count", type=int, default=1, help="how many nodes (default 1)")
    ad.add_argument("--name-prefix", help="the new nodes' names: PREFIX1, PREFIX2, … (default: NODE-new-)")
    ad.set_defaults(run=lambda args: _add(args, read))
