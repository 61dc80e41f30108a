"""CPU and SQL per presenter action with the control loops reconciled, in-process on the demo cluster.

Performs `bench/load.py`'s action plan (label, taint, create a pod, unlabel, untaint, delete it) on a
fresh `demo` cluster in a temporary SQLite database, reconciling the controllers after each action
as the cluster's runner does at the instant pace, and prints the CPU milliseconds, SQL queries and
controller steps per action (a figure, not a timed test). `--top N` adds a cProfile of the N
costliest functions; `--queries N` the N most frequent SQL statements (numbers masked);
`--recording` records a lesson meanwhile (clusterviz/lesson_recording.py: each action a step).

Usage: .venv/bin/python bench/control_loop_cpu.py [--actions 60] [--warmup 6] [--top 0] [--queries 0] [--recording]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=60, help="actions measured (default 60)")
    parser.add_argument("--warmup", type=int, default=6, help="actions done first, not measured (default 6)")
    parser.add_argument("--top", type=int, default=0, help="print a profile of the N costliest functions")
    parser.add_argument("--queries", type=int, default=0, help="print the N most frequent SQL statements")
    parser.add_argument("--recording", action="store_true", help="record a lesson while acting")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="cv-cpu-")
    os.environ["DJANGO_SETTINGS_MODULE"] = "clusterviz.settings"
    os.environ["SQLITE_PATH"] = str(Path(workdir) / "db.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from load import action_plan

    from clusterviz.actions import decode, parse_action, perform
    from clusterviz.controllers.runner import reconcile
    from clusterviz.models import Cluster

    call_command("migrate", verbosity=0)
    call_command("load_scenario", "demo", "--cluster", "cpu-bench", verbosity=0)
    cluster = Cluster.objects.get(slug="cpu-bench")
    reconcile(cluster)
    plan = action_plan(args.warmup + args.actions)

    def act(action: dict) -> int:
        perform(cluster, parse_action(decode(json.dumps(action))), "browser")
        return reconcile(cluster)

    for action in plan[: args.warmup]:
        act(action)
    if args.recording:
        from clusterviz import lesson_recording

        lesson_recording.start(cluster)
    measured = plan[args.warmup :]
    profile = cProfile.Profile() if args.top else None
    queries: Counter[str] = Counter()
    count = steps = 0
    cpu = wall = 0.0
    for action in measured:
        with CaptureQueriesContext(connection) as captured:
            c0, w0 = time.process_time(), time.perf_counter()
            if profile:
                profile.enable()
            steps += act(action)
            if profile:
                profile.disable()
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
        count += len(captured.captured_queries)
        if args.queries:
            queries.update(re.sub(r"\b\d+(\.\d+)?\b", "N", q["sql"])[-200:] for q in captured.captured_queries)
    n = len(measured)
    recorded = " (recorded as lesson steps)" if args.recording else ""
    print(
        f"{n} actions on the demo cluster{recorded}: CPU {cpu * 1000 / n:.1f} ms/action, "
        f"{count / n:.1f} queries/action, "
        f"{steps / n:.2f} controller steps/action (wall {wall * 1000 / n:.1f} ms/action, "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    for sql, times in queries.most_common(args.queries):
        print(f"{times / n:7.2f}/action  {sql}")
    if profile:
        pstats.Stats(profile).sort_stats(os.environ.get("SORT", "cumulative")).print_stats(args.top)


if __name__ == "__main__":
    main()
