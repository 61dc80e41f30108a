"""scheduler_core: kube-scheduler v1.34's framework and default plugins, in pure Python.

No Django here. Entry points: `explain.explain()` for one what-if cycle, `schedule_one.Scheduler`
for a stream of cycles, and the command line (`python -m scheduler_core explain|bench`).
"""
