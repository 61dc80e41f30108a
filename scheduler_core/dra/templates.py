"""ResourceClaims made from templates, as kube-controller-manager's resourceclaim controller makes them.

pkg/controller/resourceclaim/controller.go (`handleClaim`): for each `spec.resourceClaims[]` entry
of a pod that names a `resourceClaimTemplateName` and has no claim yet, a ResourceClaim is created
with `generateName` `<pod>-<podClaimName>-` (both parts shortened in proportion when longer than 57
characters), the template's labels and annotations plus `resource.kubernetes.io/pod-claim-name`,
the pod as its controlling owner, and the template's claim spec; the pod's
`status.resourceClaimStatuses` then records the claim's name. The scheduler waits for that
(`ResourceClaim not created yet`) and is woken by the pod status update.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..api.objects import Pod, PodResourceClaim, PodResourceClaimStatus
from ..api.resource import ResourceClaim, ResourceClaimTemplate

if TYPE_CHECKING:
    from ..framework.pod_info import PodInfo
    from .index import DraIndex

__all__ = ["POD_CLAIM_NAME_ANNOTATION", "claim_from_template", "create_template_claims", "generate_name"]

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
MAX_BASE_LEN = 57  # room for the hyphen and the 5 random characters of a 63-character name


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The claim's `generateName` (its name is this plus 5 characters the API server picks)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) > MAX_BASE_LEN:
        base = (
            pod_name[: len(pod_name) * MAX_BASE_LEN // len(base)]
            + "-"
            + pod_claim_name[: len(pod_claim_name) * MAX_BASE_LEN // len(base)]
        )
    return base


def claim_from_template(
    pod: Pod, pod_claim: PodResourceClaim, template: ResourceClaimTemplate, suffix: str, uid: str
) -> ResourceClaim:
    """The claim the controller creates for `pod_claim` (named with `suffix`), and — recorded on
    the pod — its entry in `status.resourceClaimStatuses`."""
    base = generate_name(pod.metadata.name, pod_claim.name)
    meta = template.spec.metadata
    body: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": base + suffix,
            "generateName": base,
            "namespace": pod.metadata.namespace or "default",
            "uid": uid,
            "labels": dict(meta.labels),
            "annotations": {**meta.annotations, POD_CLAIM_NAME_ANNOTATION: pod_claim.name},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.metadata.name,
                    "uid": pod.metadata.uid or "",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": template.spec.spec.to_dict(),
    }
    claim = ResourceClaim.model_validate(body)
    statuses = [s for s in pod.status.resource_claim_statuses if s.name != pod_claim.name]
    pod.status.resource_claim_statuses = [
        *statuses,
        PodResourceClaimStatus(name=pod_claim.name, resource_claim_name=claim.metadata.name),
    ]
    return claim


def create_template_claims(dra: DraIndex, infos: Iterable[PodInfo], tag: str = "") -> bool:
    """The resourceclaim controller's part for pods about to be scheduled: a claim from its template
    for every `spec.resourceClaims[]` entry that names one (the claims get the pods' UIDs as owners;
    `tag` keeps the names of one batch apart from another's). True when any pod uses DRA."""
    uses = False
    for k, info in enumerate(infos):
        pod = info.pod
        if not pod.spec.resource_claims:
            continue
        uses = True
        pod.metadata.uid = pod.metadata.uid or f"{tag}pod-{info.namespace}-{k:06d}"
        for pod_claim in pod.spec.resource_claims:
            name = pod_claim.resource_claim_template_name
            template = dra.templates.get(f"{info.namespace}/{name}") if name else None
            if template is not None:
                suffix = f"{tag}{k:05d}"
                dra.store(claim_from_template(pod, pod_claim, template, suffix, f"{pod.metadata.uid}-{pod_claim.name}"))
    return uses
