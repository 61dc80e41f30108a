"""A pod's ResourceClaims as the scheduler finds them (k8s.io/dynamic-resource-allocation/resourceclaim).

`claim_name` is `resourceclaim.Name`: a claim named in `spec.resourceClaims[].resourceClaimName`,
or the one the resourceclaim controller made from a template and recorded in
`status.resourceClaimStatuses` (then the pod must be its controller: `is_for_pod`). The texts are
upstream's, since they reach the FailedScheduling message verbatim.
"""

from __future__ import annotations

from ..api.objects import Pod, PodResourceClaim
from ..api.resource import RESERVED_FOR_MAX_SIZE, ResourceClaim

__all__ = [
    "ClaimError",
    "can_be_reserved",
    "claim_name",
    "is_for_pod",
    "is_reserved_for_pod",
    "lister_not_found",
]


class ClaimError(Exception):
    """Why a pod's claims cannot be used yet; str is upstream's text."""


def _pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """(the claim's name, whether its owner must be checked); None: no claim was needed."""
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name, False
    if pod_claim.resource_claim_template_name is not None:
        for status in pod.status.resource_claim_statuses:
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimError(f'pod "{_pod_key(pod)}": ResourceClaim not created yet')
    raise ClaimError(
        f'pod "{_pod_key(pod)}", spec.resourceClaim "{pod_claim.name}": none of the supported fields are set'
    )


def is_for_pod(pod: Pod, claim: ResourceClaim) -> None:
    """`resourceclaim.IsForPod`: same namespace and the pod is the claim's controller."""
    namespace = pod.metadata.namespace or "default"
    controller = next((ref for ref in claim.metadata.owner_references if ref.controller), None)
    if claim.metadata.namespace != namespace or controller is None or controller.uid != (pod.metadata.uid or ""):
        raise ClaimError(
            f"ResourceClaim {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
            f"{_pod_key(pod)} (pod is not owner)"
        )


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """`resourceclaim.IsReservedForPod`: the pod's UID is among `status.reservedFor`."""
    uid = pod.metadata.uid or ""
    return any(ref.uid == uid for ref in claim.status.reserved_for)


def can_be_reserved(claim: ResourceClaim) -> bool:
    """`resourceclaim.CanBeReserved`: fewer consumers than ResourceClaimReservedForMaxSize."""
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE


def lister_not_found(name: str) -> str:
    """The ResourceClaim lister's NotFound text (`errors.NewNotFound`)."""
    return f'resourceclaim.resource.k8s.io "{name}" not found'
