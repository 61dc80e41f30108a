"""Load benchmark of the clusterviz stream: prints figures (it is not a timed test).

It starts the server itself on 127.0.0.1 (free ports), with a fresh migrated SQLite (WAL) database:

- `--mode single`: one server process with the in-memory channel layer;
- `--mode redis`: a redis-server and two server processes sharing the database file (REDIS_URL),
  followers split across both, each presenter on one of them.

Scenarios (every follower and presenter is a WebSocket client, Origin = the server's URL):

- A (classroom): one cluster from the `demo` lesson, `--followers` followers, one presenter doing
  `--actions` actions (label/unlabel, taint/untaint, create/delete a pod, ~100 ms apart).
- B (many classes): `--clusters` clusters from `demo`, `--cluster-followers` followers each, every
  presenter doing `--cluster-actions` actions at the same time.
- C (reconnect): `--reconnectors` followers each drop their socket once mid-stream and reconnect with
  `?resourceVersion=<last seen>` (to the other server in redis mode).
- P (prediction, not run by default): `--followers` followers answer a prediction question within
  `--answer-window` seconds, then the presenter reveals (bench/load_predict.py has its figures).

For every follower and every `watch` change after its snapshot: delivered or missed, duplicated,
out of order, and its latency from the moment the presenter sent the action that caused it (the
presenter's own change: "direct"; every change, controllers' included, attributed to the latest
presenter change at or before it: "all"). The authoritative list of changes comes from the server's
watch log (a client resuming from the starting resourceVersion after the cluster went quiet).

With `--import-nodes N`, a generated N-node dump is imported through the HTTP background import
into another cluster of the same server while scenario A runs (bench/load_import.py).

Usage: .venv/bin/python bench/load.py [--mode single|redis] [--followers 200] [--actions 60]
       [--clusters 50] [--scenarios ABC] [--import-nodes 5000 [--import-pods-per-node 10]] [-o table|json]
Exit status 0 when every follower got every change exactly once and nothing failed, else 1.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import load_import
import load_predict
from load_procs import (
    Process,
    Registry,
    Usage,
    django_script,
    http_exchange,
    server_env,
    spawn_server,
    start_redis,
    wait_ready,
)
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

CONNECT_TIMEOUT = 15.0  # one WebSocket handshake + its first message
ACTION_TIMEOUT = 15.0  # one presenter action's reply
QUIET_TIMEOUT = 60.0  # bound on waiting for the controllers to finish after the last action
DRAIN_TIMEOUT = 15.0  # bound on waiting for the followers to receive the last change
CONCURRENT_HANDSHAKES = 25
MAX_SERVER_CLOSES = 5  # a follower gives up after the server closed its stream this often
SERVER_CLOSE_PAUSE = 0.5  # the page waits this long before reconnecting after a close
LESSON = "demo"
COMPONENT = "browser"  # what the server records as the writer of a presenter's action


# ---------------------------------------------------------------- small async HTTP client (no proxies)


# slug → owner token: the presenters hold each cluster's edit link; followers only watch.
TOKENS: dict[str, str] = {}


async def http_json(base: str, path: str, body: Any = None, timeout: float = 10.0) -> tuple[int, Any]:
    """GET (or POST a JSON body, with the cluster's owner token when the bench holds it)."""
    if body is None:
        return await http_exchange(base, "GET", path, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    slug = path.split("/api/clusters/", 1)[-1].split("/", 1)[0]
    if slug in TOKENS:
        headers["Authorization"] = f"Bearer {TOKENS[slug]}"
    return await http_exchange(base, "POST", path, json.dumps(body).encode(), headers, timeout)


def ws_url(base: str, slug: str, query: str = "") -> str:
    return base.replace("http://", "ws://", 1) + f"/ws/clusters/{slug}/" + (f"?{query}" if query else "")


async def open_stream(base: str, slug: str, query: str = "") -> tuple[ClientConnection, dict[str, Any]]:
    """A cluster stream (as a browser opens it) and its first message (snapshot or resumed)."""
    ws = await connect(ws_url(base, slug, query), origin=base, proxy=None, open_timeout=CONNECT_TIMEOUT, max_size=2**24)  # type: ignore[arg-type]
    try:
        first = json.loads(await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT))
    except BaseException:
        await ws.close()
        raise
    return ws, first


# ---------------------------------------------------------------- clients


@dataclass
class Follower:
    """A browser watching a cluster: records when each change (by resourceVersion) arrived.

    Like the page's ClusterSocket, when the server closes the stream (e.g. 4429, "resync": it fell
    behind) it reconnects with `?resourceVersion=<last seen>` (at most MAX_SERVER_CLOSES times).
    """

    name: str
    slug: str
    bases: list[str]  # the servers it uses, in turn (a planned drop reconnects to the next one)
    start_rv: int = -1
    last_rv: int = 0
    times: dict[int, float] = field(default_factory=dict)
    last_time: float = 0.0  # when the latest change arrived
    duplicates: int = 0
    out_of_order: int = 0
    frames: int = 0
    error: str | None = None
    ws: ClientConnection | None = None
    # planned drops: (seconds from the drop to the first message back, resumed count, first message type)
    reconnects: list[tuple[float, int, str]] = field(default_factory=list)
    server_closes: list[str] = field(default_factory=list)  # "code reason" of each close by the server
    snapshot_fallbacks: int = 0  # reconnections answered with a snapshot instead of the missed changes
    server_turn: int = 0

    async def open(self) -> None:
        self.ws, first = await open_stream(self.bases[0], self.slug)
        if first.get("type") != "snapshot":
            raise RuntimeError(f"{self.name}: first message {first.get('type')!r}, expected a snapshot")
        self.start_rv = self.last_rv = int(first["resourceVersion"])

    async def pump(self) -> None:
        """Receive until cancelled; reconnect (bounded) when the server closes the stream."""
        while True:
            assert self.ws is not None
            try:
                async for raw in self.ws:
                    now = time.monotonic()
                    self.frames += 1
                    message = json.loads(raw)
                    if message.get("type") == "watch":
                        self._watch(int(message["resourceVersion"]), now)
                    elif message.get("type") == "watch.batch":  # a bulk write: its changes, in order
                        for change in message["changes"]:
                            self._watch(int(change["resourceVersion"]), now)
                return
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
                self.server_closes.append(f"{code} {exc.rcvd.reason if exc.rcvd else ''}".strip())
                if code in (4403, 4404) or len(self.server_closes) > MAX_SERVER_CLOSES:
                    self.error = f"{self.name}: the server closed the stream: {exc}"
                    return
            try:
                await self._reopen(self.bases[self.server_turn % len(self.bases)], SERVER_CLOSE_PAUSE)
            except (OSError, TimeoutError, WebSocketException, ValueError) as exc:
                self.error = f"{self.name}: could not reconnect: {type(exc).__name__}: {exc}"
                return

    def _watch(self, rv: int, now: float) -> None:
        if rv in self.times or rv <= self.start_rv:
            self.duplicates += 1
            return
        if rv < self.last_rv:
            self.out_of_order += 1
        self.times[rv] = now
        self.last_time = now
        self.last_rv = max(self.last_rv, rv)

    async def _reopen(self, base: str, pause: float) -> dict[str, Any]:
        await asyncio.sleep(pause)
        self.ws, first = await open_stream(base, self.slug, f"resourceVersion={self.last_rv}")
        if first.get("type") == "snapshot":  # the log did not reach back: a fresh start
            self.snapshot_fallbacks += 1
            self.last_rv = max(self.last_rv, int(first["resourceVersion"]))
        return first

    async def drop_and_resume(self, pause: float) -> None:
        """Close the socket, wait, reconnect with ?resourceVersion=<last seen> (to the next server)."""
        assert self.ws is not None
        await self.ws.close()
        dropped = time.monotonic()
        self.server_turn += 1
        first = await self._reopen(self.bases[self.server_turn % len(self.bases)], pause)
        self.reconnects.append((time.monotonic() - dropped, int(first.get("count", -1)), str(first.get("type"))))

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)


def action_plan(count: int) -> list[dict[str, Any]]:
    """Label, taint, create a pod, unlabel, untaint, delete the pod; each writes exactly one change."""
    plan: list[dict[str, Any]] = []
    for i in range(count):
        cycle, step = divmod(i, 6)
        pod = f"load-{cycle}"
        plan.append(
            [
                {"action": "label", "node": "node03", "key": "load", "value": f"v{cycle}"},
                {"action": "taint", "node": "node02", "key": "load", "value": "x", "effect": "NoSchedule"},
                {
                    "action": "create",
                    "yaml": f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {pod}}}\nspec:\n  containers: "
                    "[{name: app, image: nginx, resources: {requests: {cpu: 10m, memory: 16Mi}}}]\n",
                },
                {"action": "label", "node": "node03", "key": "load", "value": None},
                {"action": "taint", "node": "node02", "key": "load", "effect": "NoSchedule", "remove": True},
                {"action": "delete", "kind": "Pod", "name": pod},
            ][step]
        )
    return plan


@dataclass
class Presenter:
    """Drives one cluster: sends its actions over a WebSocket (as the page does) or the HTTP API."""

    slug: str
    base: str
    via: str
    spacing: float
    sent: list[float] = field(default_factory=list)  # send time of each action that succeeded
    round_trips: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def run(self, plan: list[dict[str, Any]]) -> None:
        ws = None
        if self.via == "ws":
            ws, _ = await open_stream(self.base, self.slug, f"key={TOKENS[self.slug]}" if self.slug in TOKENS else "")
        try:
            for number, action in enumerate(plan):
                started = time.monotonic()
                try:
                    ok, detail = await asyncio.wait_for(self._send(ws, {**action, "id": number}), ACTION_TIMEOUT)
                except (TimeoutError, OSError, ConnectionClosed) as exc:
                    ok, detail = False, f"{type(exc).__name__}: {exc}"
                if ok:
                    self.sent.append(started)
                    self.round_trips.append(time.monotonic() - started)
                else:
                    self.errors.append(f"{self.slug} action {number} ({action['action']}): {detail}")
                await asyncio.sleep(max(0.0, started + self.spacing - time.monotonic()))
        finally:
            if ws is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), 5)

    async def _send(self, ws: ClientConnection | None, action: dict[str, Any]) -> tuple[bool, str]:
        if ws is None:
            status, body = await http_json(self.base, f"/api/clusters/{self.slug}/actions", action)
            return status == 200, f"HTTP {status}: {body}"
        await ws.send(json.dumps(action))
        while True:  # the presenter's own stream: skip changes until the reply to this action
            message = json.loads(await ws.recv())
            if message.get("type") in ("result", "error") and message.get("id") == action["id"]:
                return message["type"] == "result", json.dumps(message)[:300]


# ---------------------------------------------------------------- one cluster's run and its figures


@dataclass
class ClusterRun:
    slug: str
    followers: list[Follower]
    presenter: Presenter
    actions: int
    drops: list[tuple[Follower, float]] = field(default_factory=list)  # (follower, seconds after start)
    base_rv: int = 0
    final_rv: int = 0
    log: dict[int, str] = field(default_factory=dict)  # rv → writer (component), from the watch log
    problems: list[str] = field(default_factory=list)


async def wait_quiet(run: ClusterRun, quiet_seconds: float) -> int:
    """The cluster's resourceVersion once nothing changed for `quiet_seconds` (bounded).

    Watched through the followers (no polling that would load the server): when none has received a
    change for `quiet_seconds`, one state request confirms that they have seen the latest version.
    """
    deadline = time.monotonic() + QUIET_TIMEOUT
    base, slug = run.presenter.base, run.slug
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        if run.followers:
            seen = max(f.last_rv for f in run.followers)
            if seen != last:
                last, since = seen, max(max(f.last_time for f in run.followers), time.monotonic() - quiet_seconds)
        if time.monotonic() - since >= quiet_seconds or not run.followers:
            status, state = await http_json(base, f"/api/clusters/{slug}/state")
            rv = int(state["resourceVersion"]) if status == 200 else -1
            if rv == last and time.monotonic() - since >= quiet_seconds:
                return rv
            if not run.followers and rv != last:
                last, since = rv, time.monotonic()
            elif run.followers:
                since = time.monotonic()  # the followers have not seen it all yet: wait for them
        await asyncio.sleep(min(0.1, quiet_seconds / 3) if run.followers else min(0.2, quiet_seconds / 3))
    raise RuntimeError(f"cluster {slug} still changing after {QUIET_TIMEOUT}s (last resourceVersion {last})")


async def read_watch_log(base: str, slug: str, since: int, until: int) -> dict[int, str]:
    """Every change after `since` up to `until`, from the server's watch log: rv → component."""
    ws, first = await open_stream(base, slug, f"resourceVersion={since}")
    log: dict[int, str] = {}
    try:
        if first.get("type") != "resumed":
            raise RuntimeError(f"{slug}: the watch log does not reach back to {since} ({first.get('type')})")
        deadline = time.monotonic() + 30
        while len(log) < int(first["count"]) and time.monotonic() < deadline:
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            for change in message["changes"] if message.get("type") == "watch.batch" else [message]:
                if change.get("type") == "watch" and int(change["resourceVersion"]) <= until:
                    log[int(change["resourceVersion"])] = str(change.get("component"))
    finally:
        await ws.close()
    return log


async def drive(run: ClusterRun, pause: float, quiet_seconds: float) -> None:
    """The presenter's actions, with the scheduled drops of reconnecting followers alongside."""
    start = time.monotonic()

    async def dropper(follower: Follower, after: float, pump: asyncio.Task[None]) -> None:
        await asyncio.sleep(max(0.0, start + after - time.monotonic()))
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        await follower.drop_and_resume(pause)
        pumps[follower.name] = asyncio.create_task(follower.pump())

    pumps = {f.name: asyncio.create_task(f.pump()) for f in run.followers}
    droppers = [asyncio.create_task(dropper(f, after, pumps[f.name])) for f, after in run.drops]
    try:
        await run.presenter.run(action_plan(run.actions))
        for task in droppers:
            try:
                await task
            except Exception as exc:
                run.problems.append(f"reconnect failed: {type(exc).__name__}: {exc}")
        run.final_rv = await wait_quiet(run, quiet_seconds)
        run.log = await read_watch_log(run.presenter.base, run.slug, run.base_rv, run.final_rv)
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while time.monotonic() < deadline and any(f.last_rv < run.final_rv for f in run.followers):
            await asyncio.sleep(0.05)
    finally:
        for task in [*droppers, *pumps.values()]:
            task.cancel()
        for task in [*droppers, *pumps.values()]:
            with contextlib.suppress(BaseException):
                await task


def percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p99": None, "max": None}
    ordered = sorted(values)

    def rank(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.999999) - 1))]

    return {"n": len(ordered), "p50": round(rank(0.50), 1), "p99": round(rank(0.99), 1), "max": round(ordered[-1], 1)}


def figures(runs: list[ClusterRun]) -> dict[str, Any]:
    """Delivery, gaps and latency over every follower of every cluster."""
    expected = delivered = missed = duplicates = out_of_order = frames = gapped = 0
    direct: list[float] = []
    every: list[float] = []
    presenter_changes = changes = 0
    problems: list[str] = []
    for run in runs:
        problems += run.problems
        rvs = list(range(run.base_rv + 1, run.final_rv + 1))
        if sorted(run.log) != rvs:
            problems.append(f"{run.slug}: the watch log has {len(run.log)} changes for {len(rvs)} versions")
        changes += len(rvs)
        own = sorted(rv for rv, component in run.log.items() if component == COMPONENT)
        presenter_changes += len(own)
        sent = run.presenter.sent
        if len(own) != len(sent):
            problems.append(f"{run.slug}: {len(sent)} actions succeeded but {len(own)} presenter changes were logged")
        for follower in run.followers:
            frames += follower.frames
            duplicates += follower.duplicates
            out_of_order += follower.out_of_order
            wanted = range(follower.start_rv + 1, run.final_rv + 1)
            expected += len(wanted)
            got = [rv for rv in wanted if rv in follower.times]
            delivered += len(got)
            missing = len(wanted) - len(got)
            missed += missing
            if missing or follower.duplicates:
                gapped += 1
                lost = [rv for rv in wanted if rv not in follower.times][:8]
                problems.append(
                    f"{follower.name}: missed {missing} (first {lost}), duplicates {follower.duplicates}"
                    + (f" ({follower.error})" if follower.error else "")
                )
            for rv in got:
                index = bisect.bisect_right(own, rv) - 1
                if index < 0 or index >= len(sent):
                    continue  # before the first action: not caused by the presenter
                latency = (follower.times[rv] - sent[index]) * 1000
                every.append(latency)
                if own[index] == rv:
                    direct.append(latency)
    return {
        "changes": changes,
        "presenterChanges": presenter_changes,
        "controllerChanges": changes - presenter_changes,
        "deliveriesExpected": expected,
        "delivered": delivered,
        "missed": missed,
        "duplicates": duplicates,
        "outOfOrder": out_of_order,
        "followersWithGaps": gapped,
        "framesReceived": frames,
        "latencyDirectMs": percentiles(direct),
        "latencyAllMs": percentiles(every),
        "problems": problems,
    }


# ---------------------------------------------------------------- scenarios


@dataclass
class Bench:
    options: argparse.Namespace
    servers: list[Process]
    others: list[Process]  # redis-server
    base_rvs: dict[str, int]
    importer: load_import.ImportRun | None = None  # --import-nodes: the import running during scenario A

    @property
    def bases(self) -> list[str]:
        return [server.base_url for server in self.servers]

    def followers_for(self, slug: str, count: int, prefix: str) -> list[Follower]:
        """Followers spread over the servers (follower i starts on server i mod n)."""
        bases = self.bases
        return [
            Follower(f"{prefix}{i}", slug, [bases[(i + k) % len(bases)] for k in range(len(bases))])
            for i in range(count)
        ]

    async def connect_all(self, followers: list[Follower]) -> list[str]:
        """Open every follower's stream (a bounded number of handshakes at a time); returns the failures."""
        gate = asyncio.Semaphore(CONCURRENT_HANDSHAKES)

        async def one(follower: Follower) -> str | None:
            async with gate:
                try:
                    await follower.open()
                except (OSError, TimeoutError, WebSocketException, RuntimeError, ValueError) as exc:
                    follower.error = f"{follower.name}: could not connect: {type(exc).__name__}: {exc}"
                    return follower.error
            return None

        return [error for error in await asyncio.gather(*(one(f) for f in followers)) if error]

    async def scenario(
        self,
        name: str,
        title: str,
        runs: list[ClusterRun],
        pause: float = 0.0,
        before_acting: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        usage = Usage([*self.servers, *self.others])
        log_marks = {server.pid: server.log.stat().st_size for server in self.servers}
        client_cpu = _own_cpu()
        wall = time.monotonic()
        followers = [f for run in runs for f in run.followers]
        try:
            connect_started = time.monotonic()
            connect_failures = await self.connect_all(followers)
            connect_seconds = time.monotonic() - connect_started
            for run in runs:
                run.followers = [f for f in run.followers if f.start_rv >= 0]
                run.base_rv = min((f.start_rv for f in run.followers), default=self.base_rvs[run.slug])
            usage.start()
            if before_acting is not None:
                await before_acting()
            print(
                f"[load] scenario {name}: {len(followers)} followers connected, presenters acting",
                file=sys.stderr,
                flush=True,
            )
            outcomes = await asyncio.gather(
                *(drive(run, pause, self.options.quiet_seconds) for run in runs), return_exceptions=True
            )
            for run, outcome in zip(runs, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    run.problems.append(f"{run.slug}: the run failed: {type(outcome).__name__}: {outcome}")
        finally:
            await asyncio.gather(*(f.close() for f in followers))
        result: dict[str, Any] = {
            "scenario": name,
            "title": title,
            "clusters": len(runs),
            "followers": len(followers),
            "connectFailures": len(connect_failures),
            "actionsPlanned": sum(run.actions for run in runs),
            "actionsOk": sum(len(run.presenter.sent) for run in runs),
            "actionErrors": [e for run in runs for e in run.presenter.errors][:10],
            "actionRoundTripMs": percentiles([t * 1000 for run in runs for t in run.presenter.round_trips]),
            "connectSeconds": round(connect_seconds, 2),
            "wallSeconds": round(time.monotonic() - wall, 2),
            **figures(runs),
            "processes": usage.finish(),
            "benchClientCpuSeconds": round(_own_cpu() - client_cpu, 2),
            "serverLogProblems": _log_problems(self.servers, log_marks),
        }
        result["problems"] = connect_failures[:5] + result["problems"]
        closes = [c for f in followers for c in f.server_closes]
        result["serverCloses"] = len(closes)
        result["serverCloseCodes"] = {code: closes.count(code) for code in sorted(set(closes))}
        result["snapshotFallbacks"] = sum(f.snapshot_fallbacks for f in followers)
        reconnects = [r for f in followers for r in f.reconnects]
        if reconnects:
            result["reconnects"] = len(reconnects)
            result["resumed"] = sum(1 for r in reconnects if r[2] == "resumed")
            result["resumeBacklog"] = sum(r[1] for r in reconnects if r[2] == "resumed")
            result["reconnectMs"] = percentiles([r[0] * 1000 for r in reconnects])
        return result

    async def scenario_a(self) -> dict[str, Any]:
        o = self.options
        slug = "load-a"
        run = ClusterRun(
            slug, self.followers_for(slug, o.followers, "a-follower-"), self._presenter(slug, 0), o.actions
        )
        title = f"classroom: 1 cluster, {o.followers} followers, {o.actions} actions"
        importer = self.importer
        if importer is None:
            return await self.scenario("A", title, [run])
        title += f", while {importer.nodes} nodes are imported"
        try:
            result = await self.scenario("A", title, [run], before_acting=importer.start)
        finally:
            importer.mark_actions_end()
        result["import"] = await importer.finish(o.import_timeout)
        result["problems"] += result["import"]["problems"]
        return result

    async def scenario_b(self) -> dict[str, Any]:
        o = self.options
        runs = []
        for k in range(o.clusters):
            slug = f"load-b-{k:03d}"
            followers = self.followers_for(slug, o.cluster_followers, f"b{k}-follower-")
            runs.append(ClusterRun(slug, followers, self._presenter(slug, k), o.cluster_actions))
        title = f"{o.clusters} clusters at once, {o.cluster_followers} followers and {o.cluster_actions} actions each"
        return await self.scenario("B", title, runs)

    async def scenario_c(self) -> dict[str, Any]:
        o = self.options
        slug = "load-c"
        followers = self.followers_for(slug, o.reconnectors, "c-follower-")
        duration = o.actions * o.spacing
        drops = [(f, duration * (i + 1) / (len(followers) + 1)) for i, f in enumerate(followers)]
        run = ClusterRun(slug, followers, self._presenter(slug, 0), o.actions, drops)
        title = (
            f"reconnect: {o.reconnectors} followers each drop once mid-stream, "
            f"{o.reconnect_pause * 1000:.0f} ms away, and resume"
        )
        return await self.scenario("C", title, [run], pause=o.reconnect_pause)

    def _presenter(self, slug: str, index: int) -> Presenter:
        return Presenter(slug, self.bases[index % len(self.bases)], self.options.via, self.options.spacing)


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_PROBLEM = re.compile(r"Traceback|ERROR|Error|Exception|WARNING|Warning|full", re.IGNORECASE)


def _log_problems(servers: list[Process], marks: dict[int, int]) -> list[str]:
    lines: list[str] = []
    for server in servers:
        with contextlib.suppress(OSError), server.log.open("rb") as log:
            log.seek(marks.get(server.pid, 0))
            for line in log.read().decode(errors="replace").splitlines():
                if _PROBLEM.search(line):
                    lines.append(f"{server.name}[{server.pid}]: {line.strip()[:200]}")
    return lines[:20] + ([f"... and {len(lines) - 20} more"] if len(lines) > 20 else [])


# ---------------------------------------------------------------- setup, output, main

SETUP = """
import json
from django.core.management import call_command
from clusterviz import services
from clusterviz.controllers.runner import reconcile
from clusterviz.lessons import load_lesson
call_command("migrate", verbosity=0, interactive=False)
out = {}
for slug in SLUGS:
    cluster = services.create_cluster(slug)
    load_lesson(cluster, LESSON)
    reconcile(cluster)  # quiet before the clients come
    cluster.refresh_from_db()
    out[slug] = [cluster.resource_version, cluster.owner_token]
for slug in EMPTY:
    cluster = services.create_cluster(slug)
    out[slug] = [cluster.resource_version, cluster.owner_token]
print(json.dumps(out))
"""


def cluster_slugs(options: argparse.Namespace) -> list[str]:
    slugs = []
    if "A" in options.scenarios:
        slugs.append("load-a")
    if "B" in options.scenarios:
        slugs += [f"load-b-{k:03d}" for k in range(options.clusters)]
    if "C" in options.scenarios:
        slugs.append("load-c")
    if "P" in options.scenarios:
        slugs.append(load_predict.SLUG)
    return slugs


def empty_slugs(options: argparse.Namespace) -> list[str]:
    """Clusters created empty (an import's target)."""
    return [load_import.SLUG] if options.import_nodes and "A" in options.scenarios else []


def start(registry: Registry, options: argparse.Namespace, say: Callable[[str], None]) -> Bench:
    database = registry.tmp / "db.sqlite3"
    others: list[Process] = []
    redis_url = None
    if options.mode == "redis":
        redis, redis_url = start_redis(registry)
        others.append(redis)
        say(f"redis-server pid {redis.pid} on {redis_url}")
    env = server_env(database, redis_url)
    slugs = cluster_slugs(options)
    say(f"migrating a fresh database and loading {len(slugs)} clusters from the {LESSON!r} lesson ...")
    empty = empty_slugs(options)
    code = f"SLUGS = {slugs!r}\nEMPTY = {empty!r}\nLESSON = {LESSON!r}\n" + SETUP
    prepared = json.loads(django_script(env, code).strip().splitlines()[-1])
    base_rvs = {slug: rv for slug, (rv, _) in prepared.items()}
    TOKENS.update({slug: token for slug, (_, token) in prepared.items()})  # presenters act as the owner
    count = 2 if options.mode == "redis" else 1
    servers = [spawn_server(registry, options.server, env, options.asgi_app, options.server_arg) for _ in range(count)]
    for server in servers:
        wait_ready(server)
    say(f"{count} {options.server} process(es): " + ", ".join(f"{s.base_url} (pid {s.pid})" for s in servers))
    importer = None
    if empty:
        path = registry.tmp / "import-dump.json"
        size = load_import.write_dump(path, options.import_nodes, options.import_pods_per_node)
        say(f"generated a {options.import_nodes}-node dump ({size / 2**20:.1f} MiB) to import during scenario A")
        importer = load_import.ImportRun(
            servers[0].base_url,
            TOKENS[load_import.SLUG],
            path,
            options.import_nodes,
            options.import_pods_per_node,
            size,
            servers[0].pid,
        )
    return Bench(options, servers, others, base_rvs, importer)


def _ms(stats: dict[str, Any]) -> str:
    if not stats.get("n"):
        return "-"
    return f"p50 {stats['p50']:>7}  p99 {stats['p99']:>7}  max {stats['max']:>7}  (n={stats['n']})"


def table(report: dict[str, Any]) -> str:
    lines = [
        f"clusterviz load benchmark: mode {report['mode']} ({report['servers']} {report['server']} process(es)"
        f"{', redis-server' if report['mode'] == 'redis' else ''}), presenter via {report['via']}, "
        f"{report['cpus']} CPUs, total {report['totalSeconds']} s"
    ]
    for r in report["scenarios"]:
        if "failed" in r:
            lines += ["", f"Scenario {r['scenario']}: FAILED: {r['failed']}"]
            continue
        if r["scenario"] == "P":
            lines += load_predict.table_lines(r, _ms)
            continue
        lines += [
            "",
            f"Scenario {r['scenario']}: {r['title']}",
            f"  actions ok / planned      {r['actionsOk']} / {r['actionsPlanned']}   "
            f"round trip ms {_ms(r['actionRoundTripMs'])}",
            f"  changes                   {r['changes']} ({r['presenterChanges']} by presenters, "
            f"{r['controllerChanges']} by controllers)",
            f"  watch deliveries          {r['delivered']} / {r['deliveriesExpected']}   missed {r['missed']}   "
            f"duplicates {r['duplicates']}   out of order {r['outOfOrder']}   followers with gaps "
            f"{r['followersWithGaps']}",
            f"  frames received           {r['framesReceived']}",
            f"  latency direct (ms)       {_ms(r['latencyDirectMs'])}",
            f"  latency all (ms)          {_ms(r['latencyAllMs'])}",
        ]
        if "import" in r:
            lines += load_import.table_lines(r["import"])
        if "reconnects" in r:
            lines.append(
                f"  planned reconnects        {r['reconnects']}: resumed {r['resumed']}, "
                f"backlog {r['resumeBacklog']} changes, reconnect ms {_ms(r['reconnectMs'])}"
            )
        lines.append(
            f"  closed by the server      {r['serverCloses']} {r['serverCloseCodes'] or ''}   "
            f"snapshot fallbacks {r['snapshotFallbacks']}"
        )
        lines.append(
            f"  time                      connect {r['connectSeconds']} s ({r['connectFailures']} failed), "
            f"run {r['wallSeconds']} s, "
            f"bench client CPU {r['benchClientCpuSeconds']} s"
        )
        for p in r["processes"]:
            if not p["alive"]:
                lines.append(f"  {p['name']}[{p['pid']}]  DIED")
                continue
            peak = "peak RSS" + (" (since start)" if p["peakSinceStart"] else "")
            lines.append(
                f"  {p['name'] + '[' + str(p['pid']) + ']':<25} CPU {p['cpuSeconds']:>6} s   {peak} "
                f"{p['peakRssMiB']} MiB   RSS now {p['rssMiB']} MiB"
            )
        for problem in (r["actionErrors"] + r["problems"])[:12]:
            lines.append(f"  ! {problem}")
        for line in r["serverLogProblems"][:8]:
            lines.append(f"  log: {line}")
    return "\n".join(lines)


def passed(report: dict[str, Any]) -> bool:
    return all(_scenario_passed(r) for r in report["scenarios"])


def _scenario_passed(r: dict[str, Any]) -> bool:
    if "failed" in r:
        return False
    if r["scenario"] == "P":
        return load_predict.passed(r)
    return (
        not r["missed"]
        and not r["duplicates"]
        and not r["problems"]
        and not r["actionErrors"]
        and all(p["alive"] for p in r["processes"])
        and r["snapshotFallbacks"] == 0
    )


async def run_scenarios(bench: Bench, say: Callable[[str], None]) -> list[dict[str, Any]]:
    plan: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
        "A": bench.scenario_a,
        "B": bench.scenario_b,
        "C": bench.scenario_c,
        "P": lambda: load_predict.scenario_p(bench, TOKENS[load_predict.SLUG], percentiles, _own_cpu),
    }
    results = []
    for name in "ABCP":
        if name in bench.options.scenarios:
            say(f"scenario {name} ...")
            try:
                bound = bench.options.timeout + (bench.options.import_timeout if name == "A" and bench.importer else 0)
                results.append(await asyncio.wait_for(plan[name](), bound))
            except Exception as exc:  # a figure-less scenario is reported, and the others still run
                results.append({"scenario": name, "failed": f"{type(exc).__name__}: {exc}"[:2000]})
            if not all(server.alive() for server in bench.servers):
                say("a server process died; stopping")
                break
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["single", "redis"], default="single")
    parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
    parser.add_argument("--asgi-app", default="clusterviz.asgi:application", help="uvicorn: the ASGI application")
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="an extra argument for the server command (repeatable), e.g. --server-arg=--ws-per-message-deflate=false",
    )
    parser.add_argument("--followers", type=int, default=200, help="scenario A: followers of the one cluster")
    parser.add_argument("--actions", type=int, default=60, help="scenarios A and C: the presenter's actions")
    parser.add_argument("--clusters", type=int, default=50, help="scenario B: clusters at once")
    parser.add_argument("--cluster-followers", type=int, default=4, help="scenario B: followers per cluster")
    parser.add_argument("--cluster-actions", type=int, default=20, help="scenario B: actions per presenter")
    parser.add_argument("--reconnectors", type=int, default=10, help="scenario C: followers that drop and resume")
    parser.add_argument("--reconnect-pause", type=float, default=0.3, help="scenario C: seconds away")
    parser.add_argument("--spacing", type=float, default=0.1, help="seconds between a presenter's actions")
    parser.add_argument(
        "--quiet-seconds", type=float, default=1.0, help="a cluster is done when nothing changed for this long"
    )
    parser.add_argument("--via", choices=["ws", "http"], default="ws", help="how presenters send actions")
    parser.add_argument("--scenarios", default="ABC", help="which scenarios to run (e.g. AC, or P)")
    parser.add_argument("--answer-window", type=float, default=2.0, help="scenario P: seconds the answers spread over")
    parser.add_argument(
        "--import-nodes", type=int, default=0, help="scenario A: import a generated dump of this many nodes meanwhile"
    )
    parser.add_argument("--import-pods-per-node", type=int, default=10, help="the imported dump's pods per node")
    parser.add_argument("--import-timeout", type=float, default=600.0, help="bound on the import (seconds)")
    parser.add_argument("--timeout", type=float, default=150.0, help="bound on each scenario (seconds)")
    parser.add_argument("-o", "--output", choices=["table", "json"], default="table")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database, logs)")
    options = parser.parse_args(argv)
    options.scenarios = options.scenarios.upper()
    for name in ("followers", "actions", "clusters", "cluster_followers", "cluster_actions", "reconnectors"):
        if getattr(options, name) < (0 if name == "reconnectors" else 1):
            parser.error(f"--{name.replace('_', '-')} must be positive")
    for name in ("import_nodes", "import_pods_per_node"):
        if getattr(options, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must not be negative")
    if not set(options.scenarios) <= set("ABCP") or not options.scenarios:
        parser.error("--scenarios: letters among A, B, C, P")
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)

    def say(text: str) -> None:
        print(f"[load] {text}", file=sys.stderr, flush=True)

    signalled: list[int] = []

    def terminate(signum: int, frame: Any) -> None:
        # remembered too: raised inside a transport's callback, uvloop reports the interrupt as a
        # "Fatal error on transport" and the run goes on; it ends as interrupted all the same
        signalled.append(signum)
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    # Ctrl-C as SIGTERM: raised where the loop waits. asyncio.run's own SIGINT handling only cancels
    # the main task, which a scenario's task juggling (a follower's dropped pump) can absorb.
    signal.signal(signal.SIGINT, terminate)
    tmp = Path(tempfile.mkdtemp(prefix="clusterviz-load-"))
    registry = Registry(tmp)
    started = time.monotonic()
    report: dict[str, Any] | None = None
    try:
        bench = start(registry, options, say)
        results = _run(run_scenarios(bench, say))
        if signalled:
            raise KeyboardInterrupt(f"signal {signalled[0]}")
        report = {
            "mode": options.mode,
            "server": options.server,
            "servers": len(bench.servers),
            "via": options.via,
            "cpus": _cpus(),
            "options": {k: v for k, v in vars(options).items() if k not in ("output", "keep")},
            "totalSeconds": round(time.monotonic() - started, 1),
            "scenarios": results,
        }
        for server in bench.servers:
            if not server.alive():
                say(f"{server.name} died; its log ends with:\n{server.log_tail()}")
    except KeyboardInterrupt:
        say("interrupted; stopping the processes it started")
        return 130
    except Exception as exc:
        say(f"failed: {type(exc).__name__}: {exc}")
        for process in registry.started:
            say(f"{process.name}[{process.pid}] log ends with:\n{process.log_tail()}")
        return 2
    finally:
        left = registry.stop_all()
        if left:
            say(f"could not stop: {left}")
        if options.keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    report["passed"] = passed(report)
    print(json.dumps(report, indent=2) if options.output == "json" else table(report))
    return 0 if report["passed"] else 1


def _run(coroutine: Awaitable[Any]) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)  # type: ignore[arg-type]
    return asyncio.run(coroutine, loop_factory=uvloop.new_event_loop)  # type: ignore[arg-type]


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    sys.exit(main())
