"""Regenerate the protobuf modules under clusterviz/kube_api/pb/ from upstream's generated.proto files
(k8s.io/api and k8s.io/apimachinery at one release tag), with Google's protoc:

    python3.12 -m venv /tmp/protoc && /tmp/protoc/bin/pip install grpcio-tools==1.85.4
    /tmp/protoc/bin/python clusterviz/kube_api/pb/regenerate.py \\
        --api <kubernetes/api checkout or git dir> --apimachinery <kubernetes/apimachinery …> --ref v0.34.9

The files are copied under clusterviz/kube_api/pb/k8s_io/… (a Python package path: `k8s.io` is not
one), their imports rewritten to match, and compiled with `--python_out` at the repository root, so the
generated modules import each other as clusterviz.kube_api.pb.k8s_io.… . Not imported by the app.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "clusterviz/kube_api/pb"
API = [
    "core/v1",
    "apps/v1",
    "batch/v1",
    "autoscaling/v1",
    "coordination/v1",
    "discovery/v1",
    "policy/v1",
    "resource/v1",
    "scheduling/v1",
    "storage/v1",
    "authorization/v1",
    "authentication/v1",
    "events/v1",
]
APIMACHINERY = [
    "pkg/apis/meta/v1",
    "pkg/runtime",
    "pkg/runtime/schema",
    "pkg/util/intstr",
    "pkg/api/resource",
]


def read(source: Path, ref: str, path: str) -> str:
    """A file of a checkout, or (a bare git directory) of `ref`."""
    if (source / "HEAD").exists() and not (source / path).exists():
        return subprocess.run(
            ["git", f"--git-dir={source}", "show", f"{ref}:{path}"], check=True, capture_output=True, text=True
        ).stdout
    return (source / path).read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", type=Path, required=True)
    parser.add_argument("--apimachinery", type=Path, required=True)
    parser.add_argument("--ref", default="v0.34.9")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        sources = [(args.api, "api", path) for path in API] + [
            (args.apimachinery, "apimachinery", path) for path in APIMACHINERY
        ]
        for source, repo, path in sources:
            text = read(source, args.ref, f"{path}/generated.proto")
            text = re.sub(r'import "k8s\.io/(api|apimachinery)/', rf'import "{PACKAGE}/k8s_io/\1/', text)
            target = Path(tmp) / PACKAGE / "k8s_io" / repo / path / "generated.proto"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"// From k8s.io/{repo} {args.ref}: {path}/generated.proto (imports renamed)\n{text}")
            files.append(str(target.relative_to(tmp)))
        command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"--python_out={ROOT}", *files]
        subprocess.run(command, check=True)
    for directory in (ROOT / PACKAGE).rglob("*"):
        if directory.is_dir() and not (directory / "__init__.py").exists():
            (directory / "__init__.py").write_text("")
    print(f"regenerated {len(files)} modules under {PACKAGE}/k8s_io from {args.ref}")


if __name__ == "__main__":
    main()
