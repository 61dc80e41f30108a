"""Scenario A with a big import running (bench/load.py `--import-nodes N`).

Before the scenario starts (outside the timed part) a `kubectl get nodes,pods -A -o json` dump of
N nodes and `--import-pods-per-node` Running pods each is generated (bench/cluster_dump.py) into the
bench's temporary directory. When scenario A's followers are connected, the dump is uploaded as its
owner does (`POST /api/clusters/<slug>/imports`, into an empty cluster of the same server) and the
presenter starts acting once the server accepted it (202); the job's progress is followed
(`GET <url>`) until it is done, and its duration and outcome are reported beside A's figures, with
the CPU the server process used meanwhile and the CPU of the import's worker process (the server's
child: counted once it has exited). A failed import, or one that did not finish within
`--import-timeout`, fails the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster_dump import dump_json
from load_procs import children_cpu_seconds, cpu_seconds, http_exchange, live_children, wait_for

SLUG = "load-import"
POLL_SECONDS = 0.5


def write_dump(path: Path, nodes: int, pods_per_node: int) -> int:
    """Write the generated dump; returns its size in bytes."""
    data = dump_json(nodes, pods_per_node)
    path.write_bytes(data)
    return len(data)


async def _request(base: str, method: str, path: str, token: str, body: bytes = b"", timeout: float = 60.0) -> Any:
    """One exchange as the cluster's owner (its bearer token); the status and the decoded JSON answer."""
    headers = {"Authorization": f"Bearer {token}"}
    if method == "POST":
        headers |= {"Content-Type": "application/json", "X-Filename": "load-dump.json"}
    return await http_exchange(base, method, path, body if method == "POST" else None, headers, timeout)


@dataclass
class ImportRun:
    """One background import into `SLUG`, followed from its upload to its end."""

    base: str
    token: str
    path: Path
    nodes: int
    pods_per_node: int
    size: int
    server_pid: int
    started: float = 0.0
    cpu_at_start: tuple[float, float] = (0.0, 0.0)  # the server's own CPU, its ended children's
    accepted: float = 0.0
    ended: float | None = None
    url: str = ""
    job: dict[str, Any] = field(default_factory=dict)
    at_actions_end: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    _follow: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Upload the dump; returns once the server accepted it (the job runs in the background)."""
        data = self.path.read_bytes()
        self.cpu_at_start = self._cpu()
        self.started = time.monotonic()
        status, answer = await _request(self.base, "POST", f"/api/clusters/{SLUG}/imports", self.token, data)
        self.accepted = time.monotonic()
        if status != 202:
            self.error = f"the import was refused: {status} {answer}"
            return
        self.url, self.job = answer["url"], answer["import"]
        self._follow = asyncio.create_task(self._poll())

    async def _poll(self) -> None:
        while self.job.get("state") == "running":
            await asyncio.sleep(POLL_SECONDS)
            status, answer = await _request(self.base, "GET", self.url, self.token)
            if status != 200:
                self.error = f"progress request: {status} {answer}"
                return
            self.job = answer["import"]
        self.ended = time.monotonic()

    def _cpu(self) -> tuple[float, float]:
        return cpu_seconds(self.server_pid), children_cpu_seconds(self.server_pid)

    def mark_actions_end(self) -> None:
        """Remember how far the import was when the presenter's actions were over (the overlap)."""
        self.at_actions_end = {k: self.job.get(k) for k in ("state", "phase", "read", "stored", "total")}

    async def finish(self, timeout: float) -> dict[str, Any]:
        """Wait (at most `timeout` s) for the import to end; its figures and problems."""
        if not self.at_actions_end:
            self.mark_actions_end()
        if self._follow is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._follow), timeout)
            except TimeoutError:
                self.error = f"the import did not finish within {timeout:g} s"
                self._follow.cancel()
                with contextlib.suppress(BaseException):
                    await self._follow
        server_cpu, worker_cpu = (0.0, 0.0)
        if self.ended is not None:
            wait_for(lambda: not live_children(self.server_pid), 30, "the import's worker process to exit")
            now = self._cpu()
            server_cpu, worker_cpu = (now[0] - self.cpu_at_start[0], now[1] - self.cpu_at_start[1])
        state = self.job.get("state")
        if self.error is None and state != "done":
            self.error = f"the import ended {state}: {self.job.get('error')}"
        return {
            "nodes": self.nodes,
            "podsPerNode": self.pods_per_node,
            "dumpMiB": round(self.size / 2**20, 1),
            "state": state,
            "stored": self.job.get("stored"),
            "total": self.job.get("total"),
            "uploadSeconds": round(self.accepted - self.started, 2),
            "seconds": round(self.ended - self.started, 2) if self.ended else None,
            "atActionsEnd": self.at_actions_end,
            "serverCpuSeconds": round(server_cpu, 2),
            "workerCpuSeconds": round(worker_cpu, 2),
            "problems": [self.error] if self.error else [],
        }


def table_lines(figures: dict[str, Any]) -> list[str]:
    end = figures["atActionsEnd"]
    return [
        f"  import during the run     {figures['nodes']} nodes x {figures['podsPerNode']} pods "
        f"({figures['dumpMiB']} MiB): {figures['state']}, {figures['stored']} / {figures['total']} stored, "
        f"{figures['seconds']} s (upload {figures['uploadSeconds']} s); when the actions ended: "
        f"{end.get('phase')}, {end.get('stored')} stored",
        f"  CPU during the import     server process {figures['serverCpuSeconds']} s, "
        f"import worker process {figures['workerCpuSeconds']} s",
    ]
