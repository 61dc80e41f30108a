"""`--version` and `--feature-gates` for every command line that schedules, and the profile they make."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ..framework.profile import Profile, default_profile, load_profile
from . import NEWEST, RANGE_TEXT, Version, get_version

__all__ = ["add_version_arguments", "profile_from_arguments", "version_from_arguments"]


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


def profile_from_arguments(
    args: argparse.Namespace, read: Callable[[str], bytes], scheduler_name: str | None, version: Version
) -> Profile:
    """`--profile` in `version` (the pod's scheduler's profile), or the version's default profile."""
    if args.profile:
        return load_profile(read(args.profile), args.profile, scheduler_name, version=version)
    return default_profile(version)
