"""Build the YAML fast path (`_yaml_fast.c`) next to this file: `python -m scheduler_core.api.build_yaml_fast`.

Needs a C compiler, Python's headers and libyaml's (Debian: `libyaml-dev`); `./dev` runs it. Without
the built module the exact reader reads everything (the same values and errors, several times slower).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_yaml_fast.c"


def target() -> Path:
    """Where the built module goes (the name this interpreter imports)."""
    return HERE / f"_yaml_fast{sysconfig.get_config_var('EXT_SUFFIX')}"


def build() -> Path:
    """Compile the module (again only when its source is newer); fails loudly."""
    out = target()
    if out.exists() and out.stat().st_mtime >= SOURCE.stat().st_mtime:
        return out
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    command = [
        compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-Wall",
        f"-I{sysconfig.get_paths()['include']}",
        str(SOURCE),
        "-lyaml",
        "-o",
        str(out) + ".tmp",
    ]
    subprocess.run(command, check=True)
    Path(str(out) + ".tmp").replace(out)
    return out


if __name__ == "__main__":
    try:
        print(build())
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"building the YAML fast path failed: {exc}")
