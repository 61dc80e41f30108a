"""scheduler_core must stay free of Django (and Channels)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scheduler_core_imports_no_django() -> None:
    code = (
        "import pkgutil, importlib, sys, scheduler_core\n"
        "for m in pkgutil.walk_packages(scheduler_core.__path__, 'scheduler_core.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('django', 'channels', 'daphne', 'clusterviz'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_no_django_import_statements_in_the_source() -> None:
    for path in (ROOT / "scheduler_core").rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            assert not stripped.startswith(("import django", "from django", "import channels", "from channels")), path
