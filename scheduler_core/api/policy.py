"""PodDisruptionBudget (policy/v1), as far as preemption reads it.

Upstream's DefaultPreemption reads only `spec.selector`, `status.disruptionsAllowed` and
`status.disruptedPods` (plugins/defaultpreemption/default_preemption.go `filterPodsWithPDBViolation`);
the other fields are validated as the API server would and kept for display.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..framework.selectors import Selector, compile_label_selector
from .objects import INT32_MAX, K8sModel, LabelSelector, ObjectMeta, none_as_empty

__all__ = ["PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus"]

_PERCENT = re.compile(r"^[0-9]+%$")


def _int_or_percent(value: object) -> object:
    """An IntOrString budget: a non-negative int or a percentage such as "50%" (validation.go
    ValidatePodDisruptionBudgetSpec: IsValidPercent, at most 100%)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("must be an integer or a percentage")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("must be greater than or equal to 0")
        return value
    if isinstance(value, str):
        if not _PERCENT.match(value):
            raise ValueError("a valid percent string must be a numeric string followed by an ending '%' (e.g. \"1%\")")
        if int(value[:-1]) > 100:
            raise ValueError("must be less than or equal to 100%")
        return value
    raise ValueError("must be an integer or a percentage")


class PodDisruptionBudgetSpec(K8sModel):
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    unhealthy_pod_eviction_policy: Literal["IfHealthyBudget", "AlwaysAllow"] | None = None

    @field_validator("min_available", "max_unavailable", mode="before")
    @classmethod
    def _budget(cls, value: object) -> object:
        return _int_or_percent(value)

    @model_validator(mode="after")
    def _one_budget(self) -> PodDisruptionBudgetSpec:
        if self.min_available is not None and self.max_unavailable is not None:
            raise ValueError("minAvailable and maxUnavailable cannot be both set")
        return self


class PodDisruptionBudgetStatus(K8sModel):
    observed_generation: int | None = None
    disrupted_pods: dict[str, str] = Field(default_factory=dict)
    disruptions_allowed: int = Field(default=0, ge=0, le=INT32_MAX)
    current_healthy: int = Field(default=0, ge=0, le=INT32_MAX)
    desired_healthy: int = Field(default=0, ge=0, le=INT32_MAX)
    expected_pods: int = Field(default=0, ge=0, le=INT32_MAX)

    _none_map = none_as_empty(dict, "disrupted_pods")


class PodDisruptionBudget(K8sModel):
    api_version: str = "policy/v1"
    kind: Literal["PodDisruptionBudget"] = "PodDisruptionBudget"
    metadata: ObjectMeta
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = Field(default_factory=PodDisruptionBudgetStatus)

    _none_object = none_as_empty(dict, "spec", "status")

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    def selector(self) -> Selector:
        """`metav1.LabelSelectorAsSelector(spec.selector)`: nil matches nothing, {} is Empty()."""
        return compile_label_selector(self.spec.selector)
