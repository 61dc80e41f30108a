"""LimitRanges: the kind (validated and defaulted as kube-apiserver does: pkg/apis/core/validation
ValidateLimitRange, pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem) and the LimitRanger
admission plugin (plugin/pkg/admission/limitranger/admission.go), which every default kube-apiserver
runs on a pod's creation: a container without a request or limit gets the namespace's defaults
(annotated `kubernetes.io/limit-ranger`), then each min, max and maxLimitRequestRatio is enforced per
Container and per Pod. The defaults are requests the scheduler counts: a LimitRange can make a pod
Pending on a node it would otherwise fit."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from scheduler_core.api.loading import InputError
from scheduler_core.api.quantity import Quantity, QuantityError, parse_quantity
from scheduler_core.api.yaml_reading import locate

from . import store
from .models import Cluster

__all__ = ["ANNOTATION", "LimitRangeViolation", "admit_limit_range", "apply_limit_ranges"]

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"
MAX_MILLI_VALUE = (2**63 - 1) // 1000  # resource.MaxMilliValue
LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
OVERCOMMIT_FORBIDDEN = ("hugepages-",)
NO_REQUEST = "but no request is specified or request is 0."
NO_LIMIT = "but no limit is specified or limit is 0."  # and extended resources (a "/" in the name)


class LimitRangeViolation(store.Forbidden):
    """A pod a LimitRange forbids: `pods "<name>" is forbidden: …` (admission.NewForbidden)."""


def _quantity(text: Any, where: str) -> Quantity:
    try:
        return parse_quantity(text)
    except QuantityError as exc:
        raise InputError(f"{where}: {exc}") from None


def _overcommit_allowed(name: str) -> bool:
    return "/" not in name and not name.startswith(OVERCOMMIT_FORBIDDEN)


def _items(body: Obj) -> list[Obj]:
    limits = (body.get("spec") or {}).get("limits") or []
    return [item for item in limits if isinstance(item, dict)]


def admit_limit_range(body: Obj, source: str, node: yaml.Node | None, prefix: tuple[int | str, ...]) -> Obj:
    """A LimitRange validated (`spec.limits[i]…: Invalid value: …`) and defaulted: for a Container
    item, `default` from `max`, `defaultRequest` from `default`, then from `min`."""
    out = copy.deepcopy(body)
    seen: set[str] = set()
    for index, item in enumerate(_items(out)):
        at = (*prefix, "spec", "limits", index)

        def where(*path: str | int, _at: tuple[int | str, ...] = at) -> str:
            return locate(source, node, (*_at, *path))

        kind = item.get("type")
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{where('type')}: Required value")
        if kind in seen:
            raise InputError(f'{where("type")}: Duplicate value: "{kind}"')
        seen.add(kind)
        quantities: dict[str, dict[str, Quantity]] = {}
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            values = item.get(field) or {}
            if kind == "Pod" and field in ("default", "defaultRequest") and values:
                raise InputError(f"{where(field)}: Forbidden: may not be specified when `type` is 'Pod'")
            quantities[field] = {key: _quantity(value, f"{where(field)}[{key}]") for key, value in values.items()}
        if kind == "PersistentVolumeClaim" and not ({"storage"} & (set(quantities["min"]) | set(quantities["max"]))):
            raise InputError(
                f"{where('limits')}: Required value: either minimum or maximum storage value is required, but neither "
                "was provided"
            )
        if kind == "Container":
            _default_item(item, quantities)
        _check_item(quantities, where)
    return out


def _default_item(item: Obj, quantities: dict[str, dict[str, Quantity]]) -> None:
    """SetDefaults_LimitRangeItem: a Container's default limit is its max, its default request its
    default limit, else its min."""
    default, request = item.setdefault("default", {}), item.setdefault("defaultRequest", {})
    for key, value in quantities["max"].items():
        if key not in default:
            default[key], quantities["default"][key] = value.text, value
    for key, value in quantities["default"].items():
        if key not in request:
            request[key], quantities["defaultRequest"][key] = value.text, value
    for key, value in quantities["min"].items():
        if key not in request:
            request[key], quantities["defaultRequest"][key] = value.text, value
    for field in ("default", "defaultRequest"):
        if not item[field]:
            del item[field]


def _check_item(quantities: dict[str, dict[str, Quantity]], where: Any) -> None:
    minimum, maximum = quantities["min"], quantities["max"]
    default, request, ratio = quantities["default"], quantities["defaultRequest"], quantities["maxLimitRequestRatio"]
    keys = set(minimum) | set(maximum) | set(default) | set(request) | set(ratio)
    for key in sorted(keys):
        lo, hi, dflt, req, rat = (m.get(key) for m in (minimum, maximum, default, request, ratio))

        def invalid(field: str, value: Quantity, message: str, _key: str = key) -> InputError:
            # field.Path.Key: `defaultRequest[cpu]`
            return InputError(f'{where(field)}[{_key}]: Invalid value: "{value.text}": {message}')

        if lo and hi and lo.amount > hi.amount:
            raise invalid("min", lo, f"min value {lo} is greater than max value {hi}")
        if req and lo and lo.amount > req.amount:
            raise invalid("defaultRequest", req, f"min value {lo} is greater than default request value {req}")
        if req and hi and req.amount > hi.amount:
            raise invalid("defaultRequest", req, f"default request value {req} is greater than max value {hi}")
        if req and dflt and req.amount > dflt.amount:
            message = f"default request value {req} is greater than default limit value {dflt}"
            raise invalid("defaultRequest", req, message)
        if dflt and lo and lo.amount > dflt.amount:
            raise invalid("default", lo, f"min value {lo} is greater than default value {dflt}")
        if dflt and hi and dflt.amount > hi.amount:
            raise invalid("default", hi, f"default value {dflt} is greater than max value {hi}")
        if rat and rat.amount < 1:
            raise invalid("maxLimitRequestRatio", rat, f"ratio {rat} is less than 1")
        if rat and lo and hi and lo.amount > 0:
            limit = float(hi.amount / lo.amount)
            if float(rat.amount) > limit:
                raise invalid("maxLimitRequestRatio", rat, f"ratio {rat} is greater than max/min = {limit:f}")
        if not _overcommit_allowed(key) and dflt and req and dflt.amount != req.amount:
            message = f"default value {dflt} must equal to defaultRequest value {req} in {key}"
            raise invalid("defaultRequest", req, message)


# --- the LimitRanger admission plugin ------------------------------------------------------------


def limit_ranges_of(cluster: Cluster, namespace: str) -> list[Obj]:
    return store.list_objects(cluster, "LimitRange", namespace)


def _merge(container: Obj, limits: Obj, requests: Obj, what: str, notes: list[str]) -> None:
    """mergeContainerResources: the defaults for what the container does not set, noted."""
    resources = container.setdefault("resources", {})
    own_limits, own_requests = resources.get("limits") or {}, resources.get("requests") or {}
    set_limits = sorted(key for key in limits if key not in own_limits)
    set_requests = sorted(key for key in requests if key not in own_requests)
    for key in set_limits:
        own_limits[key] = limits[key]
    for key in set_requests:
        own_requests[key] = requests[key]
    if own_limits:
        resources["limits"] = own_limits
    if own_requests:
        resources["requests"] = own_requests
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {what} {container.get('name')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {what} {container.get('name')}")


def _defaults(limit_range: Obj) -> tuple[Obj, Obj]:
    limits: Obj = {}
    requests: Obj = {}
    for item in _items(limit_range):
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    return limits, requests


def _mutate(pod: Obj, limit_range: Obj) -> None:
    limits, requests = _defaults(limit_range)
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for container in spec.get("containers") or []:
        _merge(container, limits, requests, "container", notes)
    for container in spec.get("initContainers") or []:
        _merge(container, limits, requests, "init container", notes)
    if notes:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _values(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: milli-units where none overflows, else units."""
    zero = parse_quantity("0")
    req, lim = request or zero, limit or zero
    if max(req.value(), lim.value(), enforced.value()) <= MAX_MILLI_VALUE:
        return req.milli_value(), lim.milli_value(), enforced.milli_value()
    return req.value(), lim.value(), enforced.value()


def _constraints(item: Obj, kind: str, requests: dict[str, Quantity], limits: dict[str, Quantity]) -> list[str]:
    errors: list[str] = []
    for key, text in (item.get("min") or {}).items():
        enforced, req, lim = parse_quantity(text), requests.get(key), limits.get(key)
        observed_req, observed_lim, value = _values(req, lim, enforced)
        if req is None:
            errors.append(f"minimum {key} usage per {kind} is {enforced}.  No request is specified.")
        elif observed_req < value:
            errors.append(f"minimum {key} usage per {kind} is {enforced}, but request is {req}.")
        elif lim is not None and observed_lim < value:
            errors.append(f"minimum {key} usage per {kind} is {enforced}, but limit is {lim}.")
    for key, text in (item.get("max") or {}).items():
        enforced, req, lim = parse_quantity(text), requests.get(key), limits.get(key)
        observed_req, observed_lim, value = _values(req, lim, enforced)
        if lim is None:
            errors.append(f"maximum {key} usage per {kind} is {enforced}.  No limit is specified.")
        elif observed_lim > value:
            errors.append(f"maximum {key} usage per {kind} is {enforced}, but limit is {lim}.")
        elif req is not None and observed_req > value:
            errors.append(f"maximum {key} usage per {kind} is {enforced}, but request is {req}.")
    for key, text in (item.get("maxLimitRequestRatio") or {}).items():
        enforced, req, lim = parse_quantity(text), requests.get(key), limits.get(key)
        observed_req, observed_lim, _ = _values(req, lim, enforced)
        if req is None or observed_req == 0:
            errors.append(f"{key} max limit to request ratio per {kind} is {enforced}, {NO_REQUEST}")
            continue
        if lim is None or observed_lim == 0:
            errors.append(f"{key} max limit to request ratio per {kind} is {enforced}, {NO_LIMIT}")
            continue
        ratio = observed_lim / observed_req
        allowed = float(enforced.amount)
        if ratio > allowed:
            message = f"but provided ratio is {ratio:f}."
            errors.append(f"{key} max limit to request ratio per {kind} is {enforced}, {message}")
    return errors


def _resources(container: Obj, field: str) -> dict[str, Quantity]:
    return {key: parse_quantity(value) for key, value in ((container.get("resources") or {}).get(field) or {}).items()}


def _pod_total(spec: Obj, field: str) -> dict[str, Quantity]:
    """A pod's effective request (or limit): the containers' sum, or an init container's if larger."""
    totals: dict[str, Quantity] = {}
    for container in spec.get("containers") or []:
        for key, value in _resources(container, field).items():
            current = totals.get(key)
            amount = value.amount + (current.amount if current else 0)
            totals[key] = Quantity(_show(amount, key), amount)
    for container in spec.get("initContainers") or []:
        for key, value in _resources(container, field).items():
            if key not in totals or value.amount > totals[key].amount:
                totals[key] = value
    return totals


def _show(amount: Any, key: str) -> str:
    """A summed quantity as upstream prints it (cpu in milli-units unless whole, others whole units)."""
    if key == "cpu" and amount * 1000 % 1000:
        return f"{int(amount * 1000)}m"
    return str(int(amount))


def _violations(pod: Obj, limit_range: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    errors: list[str] = []
    for item in _items(limit_range):
        if item.get("type") == "Container":
            for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
                errors.extend(
                    _constraints(item, "Container", _resources(container, "requests"), _resources(container, "limits"))
                )
        elif item.get("type") == "Pod":
            errors.extend(_constraints(item, "Pod", _pod_total(spec, "requests"), _pod_total(spec, "limits")))
    return errors


def apply_limit_ranges(cluster: Cluster, pod: Obj, ranges: list[Obj] | None = None) -> Obj:
    """LimitRanger on a new pod: the namespace's defaults set (`ranges`: its LimitRanges, if the
    caller read them already), then every constraint checked; LimitRangeViolation (403) names the
    first LimitRange the pod breaks."""
    if ranges is None:
        ranges = limit_ranges_of(cluster, pod["metadata"].get("namespace") or "default")
    if not ranges:
        return pod
    out = copy.deepcopy(pod)
    for limit_range in ranges:
        _mutate(out, limit_range)
    for limit_range in ranges:
        errors = _violations(out, limit_range)
        if errors:
            name = out["metadata"].get("name") or out["metadata"].get("generateName") or ""
            reason = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise LimitRangeViolation(f'pods "{name}" is forbidden: {reason}')
    return out
