"""The Job controller (pkg/controller/job/job_controller.go), NonIndexed completion mode, one action
per step: keeps `min(parallelism, completions - succeeded)` pods active, counts the pods that
succeeded (the simulated kubelet finishes a Job's containers after its run time, see kubelet.py)
and, once `completions` pods succeeded, writes completionTime and the SuccessCriteriaMet and
Complete conditions (v1.34 adds SuccessCriteriaMet first: JobManagedBy/JobPodReplacementPolicy are
on by default). More failed pods than `backoffLimit` fail the Job (BackoffLimitExceeded).
"""

from __future__ import annotations

from typing import Any

from .. import scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster
from ..services import delete_object
from .owners import create_pod, is_ready, is_terminating, owned_pods, owner_ref, set_status

COMPONENT = "job-controller"
COMPLETED_MESSAGE = "Reached expected number of succeeded pods"
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
Obj = dict[str, Any]


def _finished(job: Obj) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in job.get("status", {}).get("conditions", [])
    )


def _condition(kind: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def _new_pod(job: Obj) -> Obj:
    template = job["spec"]["template"]
    meta = {k: v for k, v in template.get("metadata", {}).items() if k not in ("name", "generateName")}
    return {
        "metadata": {
            **meta,
            "generateName": f"{job['metadata']['name']}-",
            "namespace": job["metadata"].get("namespace", "default"),
            "ownerReferences": [owner_ref(job)],
        },
        "spec": dict(template.get("spec", {})),
    }


def sync_jobs(cluster: Cluster) -> bool:
    """One action for the first Job that needs one."""
    for row in scheduler_cache.listed(cluster, "Job"):
        job = row.body
        if job["metadata"].get("deletionTimestamp") or _finished(job):
            continue
        if _sync_one(cluster, job):
            return True
    return False


def _sync_one(cluster: Cluster, job: Obj) -> bool:
    spec, status = job["spec"], job.get("status", {})
    now = store.now_rfc3339()
    if not status.get("startTime") and not spec.get("suspend"):
        return set_status(cluster, job, {"startTime": now, "active": 0}, COMPONENT)
    pods = owned_pods(cluster, job)
    phases = [p.get("status", {}).get("phase") for p in pods]
    succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
    active = [p for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
    running = [p for p in active if not is_terminating(p)]
    completions = spec.get("completions")
    parallelism = int(spec.get("parallelism", 1))
    done = succeeded >= completions if completions is not None else succeeded > 0 and not running
    if done and not running:
        conditions = [
            *status.get("conditions", []),
            _condition("SuccessCriteriaMet", "CompletionsReached", COMPLETED_MESSAGE, now),
            _condition("Complete", "CompletionsReached", COMPLETED_MESSAGE, now),
        ]
        set_status(
            cluster,
            job,
            {"succeeded": succeeded, "active": None, "ready": 0, "completionTime": now, "conditions": conditions},
            COMPONENT,
        )
        record_event(cluster, job, "Normal", "Completed", "Job completed", COMPONENT)
        return True
    if failed > int(spec.get("backoffLimit", 6)):
        if running:
            _delete(cluster, running[-1])
            return True
        conditions = [
            *status.get("conditions", []),
            _condition("FailureTarget", "BackoffLimitExceeded", BACKOFF_MESSAGE, now),
            _condition("Failed", "BackoffLimitExceeded", BACKOFF_MESSAGE, now),
        ]
        set_status(cluster, job, {"failed": failed, "active": None, "conditions": conditions}, COMPONENT)
        record_event(cluster, job, "Warning", "BackoffLimitExceeded", BACKOFF_MESSAGE, COMPONENT)
        return True
    wanted = 0 if spec.get("suspend") or done else parallelism
    if completions is not None:
        wanted = min(wanted, max(0, completions - succeeded))
    if len(running) < wanted:
        return create_pod(cluster, job, _new_pod(job), COMPONENT, COMPONENT) is not None  # None: forbidden
    if len(running) > wanted:
        _delete(cluster, running[-1])
        record_event(
            cluster, job, "Normal", "SuccessfulDelete", f"Deleted pod: {running[-1]['metadata']['name']}", COMPONENT
        )
        return True
    return set_status(
        cluster,
        job,
        {
            "active": len(active) or None,
            "ready": sum(1 for p in running if is_ready(p)),
            "succeeded": succeeded or None,
            "failed": failed or None,
            "terminating": len(active) - len(running),
            "uncountedTerminatedPods": {},
        },
        COMPONENT,
    )


def _delete(cluster: Cluster, pod: Obj) -> None:
    delete_object(cluster, "Pod", pod["metadata"]["namespace"], pod["metadata"]["name"], COMPONENT)
