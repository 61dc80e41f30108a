"""Command line: `python -m scheduler_core explain|fit|drain|add|bench|generate|bench-snapshot ...`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .api.loading import MAX_YAML_BYTES, ClusterObjects, InputError, load_kept_cluster_file, load_pod, open_input
from .api.objects import Pod
from .capacity.cli import add_parsers
from .framework.profile import Profile
from .versions.arguments import (
    add_version_arguments,
    note_snapshot_version,
    profile_from_arguments,
    version_from_arguments,
)


def _read(path: str) -> bytes:
    """The file's bytes, at most one byte over the YAML size limit (so /dev/zero cannot hang us)."""
    with open_input(path) as handle:
        return handle.read(MAX_YAML_BYTES + 1)


def _explain(args: argparse.Namespace) -> int:
    from .explain import explain, format_text, result_to_json

    cluster = load_kept_cluster_file(args.cluster)  # lives until exit: out of the collector's reach
    notice = cluster.skipped_notice()
    if notice:
        print(f"note: {args.cluster}: {notice}", file=sys.stderr)
    classes = {pc.metadata.name: pc for pc in cluster.priority_classes}
    runtimes = {rc.metadata.name: rc for rc in cluster.runtime_classes}
    pod = load_pod(_read(args.pod), args.pod, classes, runtimes)
    version = version_from_arguments(args)
    note_snapshot_version(args, cluster.nodes, args.cluster, cluster.server_version)
    # Upstream picks the profile whose schedulerName is the pod's spec.schedulerName.
    profile = profile_from_arguments(args, _read, pod.spec.scheduler_name, version)
    if args.compare_version:
        return _compare(args, cluster, pod, profile)
    explanation = explain(cluster, pod, profile, seed=args.seed)
    if args.output == "json":
        json.dump(result_to_json(explanation), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(explanation))
    return 0


def _compare(args: argparse.Namespace, cluster: ClusterObjects, pod: Pod, profile: Profile) -> int:
    """`explain --version A --compare-version B`: both answers and what differs, with causes."""
    from .explain import explain, result_to_json
    from .versions import get_version
    from .versions.compare import compare_answers, format_differences

    other = get_version(args.compare_version, args.feature_gates, flag="--compare-version")
    other_profile = profile_from_arguments(args, _read, pod.spec.scheduler_name, other)
    seed = 0 if args.seed is None else args.seed  # one tie-break for both, so only the versions differ
    answers = [result_to_json(explain(cluster, pod, p, seed=seed)) for p in (profile, other_profile)]
    differences = compare_answers(answers[0], answers[1], profile.version, other)
    if args.output == "json":
        body = {
            "versions": [profile.version.name, other.name],
            "differences": [d.to_json() for d in differences],
            "answers": {profile.version.name: answers[0], other.name: answers[1]},
        }
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_differences(differences, profile.version, other))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .bench import (
        TABLE_HEADER,
        format_curve,
        format_preemption_report,
        format_row,
        load_workload,
        run_preemption,
        run_workload,
    )

    if args.preemption:
        for spread in (False, True):
            for num_nodes in args.nodes:
                report = run_preemption(num_nodes, repeats=args.repeats, seed=args.seed, spread=spread)
                if args.output == "json":
                    sys.stdout.write(json.dumps(report) + "\n")
                else:
                    sys.stdout.write(format_preemption_report(report))
        return 0
    if not args.workload:
        raise InputError("bench: --workload is required (or --preemption)")
    workloads = [load_workload(_read(path), path) for path in args.workload]
    version = version_from_arguments(args)
    if len(workloads) == 1 and not args.sizes and args.output == "json":
        report = run_workload(workloads[0], seed=args.seed, max_pods=args.pods, version=version)
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    reports = []
    if args.output == "text":
        sys.stdout.write(TABLE_HEADER + "\n")
    for size in args.sizes or [None]:
        for k, workload in enumerate(workloads):
            report = run_workload(
                workload, seed=args.seed, num_nodes=size, max_pods=args.pods, measure_memory=k == 0, version=version
            )
            reports.append(report)
            sys.stdout.write(json.dumps(report) + "\n" if args.output == "json" else format_row(report))
            sys.stdout.flush()
    if args.output == "text" and args.sizes and len(args.sizes) > 1:
        sys.stdout.write(format_curve(reports))
    return 0


def _generate(args: argparse.Namespace) -> int:
    from .synthetic import SnapshotSpec, dump_json, dump_yaml, generate_objects

    if args.nodes < 1 or args.pods < 0:
        raise InputError("--nodes must be at least 1 and --pods at least 0")
    objects = generate_objects(SnapshotSpec(nodes=args.nodes, pods=args.pods, seed=args.seed, dra=args.dra))
    (dump_json if args.output == "json" else dump_yaml)(objects, sys.stdout)
    return 0


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected node counts such as 1000,5000") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected node counts such as 1000,5000")
    return sizes


def _bench_snapshot(args: argparse.Namespace) -> int:
    from .snapshot_bench import run

    formats = tuple(dict.fromkeys(args.formats.split(",")))
    if not set(formats) <= {"json", "yaml"}:
        raise InputError(f"--formats {args.formats!r}: expected json, yaml or json,yaml")
    run(args.nodes, args.pods_per_node, formats, args.dir, args.dra)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("explain", help="explain why a pod lands where it does, or stays Pending")
    ex.add_argument(
        "--cluster", required=True, help="`kubectl get … -A -o json|yaml` output: a kind: List, documents or objects"
    )
    ex.add_argument("--pod", required=True, help="the Pod to schedule (YAML)")
    ex.add_argument("--profile", help="a KubeSchedulerConfiguration (default: upstream's default profile)")
    ex.add_argument("--seed", type=int, default=None, help="seed for the random tie-break")
    add_version_arguments(ex)
    ex.add_argument("--compare-version", metavar="VERSION", help="also answer as this version and print what differs")
    ex.add_argument("-o", "--output", choices=("text", "json"), default="text")
    ex.set_defaults(run=_explain)
    add_parsers(sub, _read)
    be = sub.add_parser("bench", help="run a scheduler_perf-style workload and print pods per second")
    be.add_argument("--workload", nargs="+", help="workload files (bench/workloads/*.yaml)")
    be.add_argument("--sizes", type=_sizes, help="run each workload at these node counts, e.g. 5000,15000,50000")
    be.add_argument("--pods", type=int, help="cap the measured pods per workload")
    be.add_argument("--preemption", action="store_true", help="time one preempting pod's cycle instead")
    be.add_argument("--nodes", type=int, nargs="+", default=[400, 1000, 5000], help="cluster sizes for --preemption")
    be.add_argument("--repeats", type=int, default=5, help="cycles timed per size for --preemption (median)")
    be.add_argument("--seed", type=int, default=0)
    add_version_arguments(be)
    be.add_argument("-o", "--output", choices=("text", "json"), default="text")
    be.set_defaults(run=_bench)
    ge = sub.add_parser("generate", help="print a realistic cluster as `kubectl get … -A -o json|yaml` would")
    ge.add_argument("--nodes", type=int, required=True)
    ge.add_argument("--pods", type=int, required=True)
    ge.add_argument("--seed", type=int, default=0)
    ge.add_argument(
        "--dra", action="store_true", help="GPUs through Dynamic Resource Allocation on the gpu pool (slices, claims)"
    )
    ge.add_argument("-o", "--output", choices=("json", "yaml"), default="json")
    ge.set_defaults(run=_generate)
    bs = sub.add_parser("bench-snapshot", help="generate snapshots, load them, explain a pod: print the figures")
    bs.add_argument("--nodes", type=_sizes, default=[100, 1000], help="node counts, e.g. 1000,5000")
    bs.add_argument("--pods-per-node", type=int, default=10)
    bs.add_argument("--formats", default="json,yaml")
    bs.add_argument("--dir", help="keep (and reuse) the generated dumps here")
    bs.add_argument("--dra", action="store_true", help="GPU pools through DRA (slices, claims, training pods)")
    bs.set_defaults(run=_bench_snapshot)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except InputError as exc:
        print("error: " + " ".join(str(exc).splitlines()), file=sys.stderr)
        return 2
    except RecursionError:
        print("error: input nested too deeply", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `generate … | head`: the reader is gone; silence the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
