"""`--version` and `--feature-gates` for every command line that schedules, and the profile they make."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable

from ..api.objects import Node
from ..framework.profile import Profile, default_profile, load_profile
from . import NEWEST, RANGE_TEXT, Version, get_version
from .suggest import kubelet_versions, suggest_version

__all__ = ["add_version_arguments", "note_snapshot_version", "profile_from_arguments", "version_from_arguments"]


def add_version_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--version",
        dest="kube_version",
        metavar="VERSION",
        help=f"the kube-scheduler version to answer as ({RANGE_TEXT}; default 1.{NEWEST})",
    )
    parser.add_argument(
        "--feature-gates",
        default="",
        metavar="A=true,B=false",
        help="feature gates to set, as kube-scheduler's flag takes them (default: the version's defaults)",
    )


def version_from_arguments(args: argparse.Namespace) -> Version:
    """The version named on the command line; the gates' warnings go to stderr as klog prints them."""
    version = get_version(args.kube_version, args.feature_gates)
    for warning in version.gates.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return version


def note_snapshot_version(
    args: argparse.Namespace, nodes: Iterable[Node], path: str, server: str | None = None
) -> None:
    """Without --version, a stderr note when the snapshot's API server (`server`, from a
    `kubectl version` document) or its kubelets point to another version."""
    if args.kube_version is not None:
        return
    suggestion = suggest_version(kubelet_versions(nodes), server)
    if suggestion is not None and suggestion.version != f"1.{NEWEST}":
        print(
            f"note: {path}: {suggestion.why}: answering as v1.{NEWEST} (the default); "
            f"--version {suggestion.version} answers as the snapshot's",
            file=sys.stderr,
        )


def profile_from_arguments(
    args: argparse.Namespace, read: Callable[[str], bytes], scheduler_name: str | None, version: Version
) -> Profile:
    """`--profile` in `version` (the pod's scheduler's profile), or the version's default profile."""
    if args.profile:
        return load_profile(read(args.profile), args.profile, scheduler_name, version=version)
    return default_profile(version)
