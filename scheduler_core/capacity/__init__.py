"""Capacity questions answered by the scheduler on a copy of the cluster: how many more fit (`fit`),
where everything goes when nodes drain (`drain`), what schedules once nodes are added (`add`)."""

from .add import AddReport, add_nodes, pending_pods, shape_of
from .drain import DrainReport, drain
from .evictions import DrainOptions
from .fit import FitReport, fit
from .nodes import NodeChoice
from .replay import Placement
from .templates import PodTemplate, pod_template, workload_template

__all__ = [
    "AddReport",
    "DrainOptions",
    "DrainReport",
    "FitReport",
    "NodeChoice",
    "Placement",
    "PodTemplate",
    "add_nodes",
    "drain",
    "fit",
    "pending_pods",
    "pod_template",
    "shape_of",
    "workload_template",
]
