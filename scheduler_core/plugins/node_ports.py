"""NodePorts (plugins/nodeports/node_ports.go)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from .names import NODE_PORTS

NAME = NODE_PORTS
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
WILDCARD = "0.0.0.0"


def ports_conflict(used: list[tuple[str, str, int]], ip: str, protocol: str, port: int) -> bool:
    """`HostPortInfo.CheckConflict`: same protocol and port, and either side on 0.0.0.0 or the same IP."""
    for used_ip, used_protocol, used_port in used:
        if used_protocol == protocol and used_port == port and (ip == WILDCARD or used_ip in (WILDCARD, ip)):
            return True
    return False


class NodePorts:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        if not pod.host_ports:
            return None, SKIP
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        conflict = np.zeros(table.n, dtype=bool)
        for ip, protocol, port in pod.host_ports:
            for i in table.port_users.get((protocol, port), ()):
                if not conflict[i] and ports_conflict(table.used_ports[i], ip, protocol, port):
                    conflict[i] = True
        return NodeVerdicts.reject_where(conflict, Code.UNSCHEDULABLE, ERR_REASON)


def new(args: dict[str, Any], handle: object) -> NodePorts:
    return NodePorts()
