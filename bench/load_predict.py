"""Scenario P of bench/load.py: a prediction round in a classroom (clusterviz/prediction.py).

One cluster from the `demo` lesson, one presenter and `--followers` students, each joining as a
browser does: the code read off the presenter's page, typed at `/join` with a nickname (its form and
CSRF token first), then the board's stream with the session that made:

1. the presenter poses "which node wins?" about a pod it then creates (held Pending by the scheduler);
2. every follower answers once, at a random moment within `--answer-window` seconds, and a tenth of
   them try a second answer (which must be refused);
3. the presenter reveals; every board must receive the revealed question with the class score.

Figures: join by code (GET /join → the board's stream open), question delivery (pose sent → each
follower has it), answer ack (answer sent → its result),
tally delivery (answer sent → the presenter holds a tally counting at least as many answers as had
been acknowledged when this one was: the k-th acknowledged answer is matched to the first tally with
`answered >= k`), reveal delivery (reveal sent → each follower has the outcome), server CPU and RSS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from load_procs import HOST, Usage
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

SLUG = "load-p"
POD = "quiz"
QUIZ_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: quiz}\nspec:\n  nodeSelector: {kgc: a}\n"
    "  containers: [{name: app, image: nginx, resources: {requests: {cpu: 10m}}}]\n"
)
TIMEOUT = 30.0


async def _http(base: str, request: str, body: bytes = b"") -> tuple[str, str]:
    """One HTTP/1.1 exchange (Connection: close) with the server at `base`: its head and body."""
    port = int(base.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        head = request.replace("\n", "\r\n") + f"Host: {HOST}:{port}\r\nConnection: close\r\n"
        if body:
            head += f"Content-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"\r\n" + body)
        raw = await asyncio.wait_for(reader.read(), TIMEOUT)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    head_bytes, _, rest = raw.partition(b"\r\n\r\n")
    return head_bytes.decode("latin-1"), rest.decode("utf-8", "replace")


def _cookie(head: str, name: str) -> str | None:
    for line in head.split("\r\n"):
        if line.lower().startswith("set-cookie:") and f"{name}=" in line:
            return line.split(f"{name}=", 1)[1].split(";", 1)[0]
    return None


async def join_code(base: str, slug: str, token: str) -> str:
    """The join code on the presenter's page (its edit link opened first, as the presenter does)."""
    head, _ = await _http(base, f"GET /clusters/{slug}/?key={token} HTTP/1.1\n")
    session = _cookie(head, "sessionid")
    if session is None:
        raise RuntimeError(f"the edit link set no session: {head[:200]!r}")
    _, page = await _http(base, f"GET /clusters/{slug}/ HTTP/1.1\nCookie: sessionid={session}\n")
    found = re.search(r'<strong class="join-code">([A-Z0-9 ]+)</strong>', page)
    if not found:
        raise RuntimeError("the presenter's page shows no join code")
    return found.group(1)


async def join(base: str, code: str, nickname: str) -> str:
    """A student at /join: the form (its CSRF token), then the code and a nickname, then the follower
    page it is sent to; the `sessionid` that made (their identity for answers)."""
    head, form = await _http(base, "GET /join HTTP/1.1\n")
    csrf = _cookie(head, "csrftoken")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    if csrf is None or token is None:
        raise RuntimeError(f"/join gave no CSRF token: {head[:200]!r}")
    fields = urlencode({"csrfmiddlewaretoken": token.group(1), "code": code.lower(), "nickname": nickname})
    head, body = await _http(
        base,
        f"POST /join HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\nCookie: csrftoken={csrf}\n",
        fields.encode(),
    )
    session = _cookie(head, "sessionid")
    if not head.startswith("HTTP/1.1 302") or session is None:
        error = re.search(r'id="join-error">([^<]*)', body)
        raise RuntimeError(f"{nickname}: join refused: {error.group(1) if error else head.splitlines()[0]}")
    location = next(
        line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("location:")
    )
    await _http(base, f"GET {location} HTTP/1.1\nCookie: sessionid={session}\n")  # the page it lands on
    return session


async def stream(base: str, query: str = "", cookie: str | None = None) -> ClientConnection:
    url = base.replace("http://", "ws://", 1) + f"/ws/clusters/{SLUG}/" + (f"?{query}" if query else "")
    headers = {"Cookie": f"sessionid={cookie}"} if cookie else None
    ws = await connect(url, origin=base, proxy=None, open_timeout=TIMEOUT, max_size=2**24, additional_headers=headers)  # type: ignore[arg-type]
    first = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    if first.get("type") != "snapshot":
        raise RuntimeError(f"first message {first.get('type')!r}, expected a snapshot")
    return ws


@dataclass
class Board:
    """One follower's stream: when the question and its reveal arrived, and its answers' replies."""

    name: str
    ws: ClientConnection
    question_at: float | None = None
    revealed_at: float | None = None
    revealed: dict[str, Any] | None = None
    tallies_seen: int = 0  # a follower must never get one
    replies: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)
    waiters: dict[str, asyncio.Future[None]] = field(default_factory=dict)

    async def pump(self) -> None:
        async for raw in self.ws:
            now = time.monotonic()
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "prediction.question":
                state = message["question"]["state"]
                if state == "open" and self.question_at is None:
                    self.question_at = now
                elif state == "revealed":
                    self.revealed_at, self.revealed = now, message["question"]
            elif kind == "prediction.tally":
                self.tallies_seen += 1
            elif kind in ("result", "error") and message.get("id") in self.waiters:
                self.replies[message["id"]] = (now, message)
                self.waiters.pop(message["id"]).set_result(None)

    async def ask(self, action: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Send an action; (seconds to its reply, the reply)."""
        key = action["id"]
        self.waiters[key] = asyncio.get_running_loop().create_future()
        started = time.monotonic()
        await self.ws.send(json.dumps(action))
        try:
            await asyncio.wait_for(self.waiters[key], TIMEOUT)
        except TimeoutError:
            raise RuntimeError(f"{self.name}: no reply to {action['action']} within {TIMEOUT:g} s") from None
        at, reply = self.replies[key]
        return at - started, reply


async def scenario_p(
    bench: Any, token: str, percentiles: Callable[[list[float]], dict[str, Any]], own_cpu: Callable[[], float]
) -> dict[str, Any]:
    """The prediction round; `bench` is load.py's Bench (servers, options), `token` the cluster's owner
    token (the presenter's), `percentiles` and `own_cpu` load.py's figures."""

    def _ms(values: list[float]) -> dict[str, Any]:
        return percentiles([v * 1000 for v in values])

    _own_cpu = own_cpu
    o = bench.options
    bases = bench.bases
    usage = Usage([*bench.servers, *bench.others])
    client_cpu = _own_cpu()
    gate = asyncio.Semaphore(25)
    problems: list[str] = []

    code = await join_code(bases[0], SLUG, token)
    joins: list[float] = []  # seconds from a student's GET /join to their board's first message

    async def open_board(i: int) -> Board:
        base = bases[i % len(bases)]
        async with gate:
            started = time.monotonic()
            cookie = await join(base, code, f"student-{i}")
            board = Board(f"student-{i}", await stream(base, cookie=cookie))
            joins.append(time.monotonic() - started)
            return board

    connect_started = time.monotonic()
    boards = list(await asyncio.gather(*(open_board(i) for i in range(o.followers))))
    connect_seconds = time.monotonic() - connect_started
    presenter = Board("presenter", await stream(bases[0], f"key={token}"))
    tallies: list[tuple[float, int]] = []  # (when, answered) as the presenter got them
    kinds: dict[str, int] = {}  # messages the presenter got, by type

    async def presenter_pump() -> None:
        try:
            await read_presenter()
        except ConnectionClosed as exc:
            problems.append(f"the presenter's stream was closed: {exc}")

    async def read_presenter() -> None:
        async for raw in presenter.ws:
            message = json.loads(raw)
            kinds[message.get("type")] = kinds.get(message.get("type"), 0) + 1
            if message.get("type") == "prediction.tally":
                tallies.append((time.monotonic(), int(message["answered"])))
            elif message.get("type") in ("result", "error") and message.get("id") in presenter.waiters:
                presenter.replies[message["id"]] = (time.monotonic(), message)
                presenter.waiters.pop(message["id"]).set_result(None)
            elif message.get("type") == "prediction.question" and message["question"]["state"] == "revealed":
                presenter.revealed_at, presenter.revealed = time.monotonic(), message["question"]

    pumps = [asyncio.create_task(b.pump()) for b in boards] + [asyncio.create_task(presenter_pump())]
    usage.start()
    wall = time.monotonic()
    try:
        pose_sent = time.monotonic()
        _, posed = await presenter.ask({"action": "predict.pose", "pod": POD, "id": "pose"})
        if posed["type"] != "result":
            raise RuntimeError(f"pose refused: {posed}")
        options = posed["question"]["options"]
        _, created = await presenter.ask({"action": "create", "yaml": QUIZ_POD, "id": "create"})
        if created["type"] != "result":
            raise RuntimeError(f"create refused: {created}")
        rng = random.Random(0)
        acks: list[tuple[float, float]] = []  # (sent, acknowledged)

        async def answer(board: Board, index: int) -> None:
            await asyncio.sleep(rng.uniform(0, o.answer_window))
            pick = options[index % len(options)]
            sent = time.monotonic()
            try:
                took, reply = await board.ask(
                    {"action": "predict.answer", "pick": pick, "name": board.name, "id": "a1"}
                )
            except RuntimeError as exc:
                problems.append(str(exc))
                return
            if reply["type"] != "result":
                problems.append(f"{board.name}: answer refused: {reply.get('message')}")
                return
            acks.append((sent, sent + took))
            if index % 10 == 0:  # a second answer must be refused
                try:
                    _, again = await board.ask({"action": "predict.answer", "pick": pick, "id": "a2"})
                except RuntimeError as exc:
                    problems.append(str(exc))
                    return
                if again.get("reason") != "Conflict":
                    problems.append(f"{board.name}: a second answer was not refused: {again}")

        await asyncio.gather(*(answer(b, i) for i, b in enumerate(boards)))
        deadline = time.monotonic() + TIMEOUT
        while (not tallies or tallies[-1][1] < len(acks)) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        reveal_sent = time.monotonic()
        _, revealed = await presenter.ask({"action": "predict.reveal", "id": "reveal"})
        if revealed["type"] != "result":
            raise RuntimeError(f"reveal refused: {revealed}")
        deadline = time.monotonic() + TIMEOUT
        while any(b.revealed_at is None for b in boards) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        run_seconds = time.monotonic() - wall
    finally:
        for task in pumps:
            task.cancel()
        for task in pumps:
            with contextlib.suppress(BaseException):
                await task
        for b in [*boards, presenter]:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(b.ws.close(), 5)

    # The k-th acknowledged answer is counted by the first tally with answered >= k.
    tally_delays = []
    for k, (sent, _) in enumerate(sorted(acks, key=lambda a: a[1]), 1):
        first = next((at for at, answered in tallies if answered >= k), None)
        if first is None:
            problems.append(f"no tally counted {k} answers")
            break
        tally_delays.append(first - sent)
    outcome = presenter.revealed or {}
    if outcome.get("score", {}).get("answered") != len(acks):
        problems.append(f"the revealed score counts {outcome.get('score')} for {len(acks)} answers")
    missing = [b.name for b in boards if b.revealed is None or b.question_at is None]
    if missing:
        problems.append(f"{len(missing)} followers missed the question or the reveal (first {missing[:5]})")
    leaked = sum(b.tallies_seen for b in boards)
    if leaked:
        problems.append(f"followers received {leaked} tallies (only the presenter may)")
    return {
        "scenario": "P",
        "title": f"prediction round: {len(boards)} followers answer within {o.answer_window:g} s, then the reveal",
        "followers": len(boards),
        "answers": len(acks),
        "outcome": outcome.get("outcome"),
        "score": outcome.get("score"),
        "talliesToPresenter": len(tallies),
        "talliesToFollowers": leaked,
        "presenterMessages": kinds,
        "questionDeliveryMs": _ms([b.question_at - pose_sent for b in boards if b.question_at]),
        "answerAckMs": _ms([ack - sent for sent, ack in acks]),
        "tallyDeliveryMs": _ms(tally_delays),
        "revealDeliveryMs": _ms([b.revealed_at - reveal_sent for b in boards if b.revealed_at]),
        "joinMs": _ms(joins),
        "connectSeconds": round(connect_seconds, 2),
        "wallSeconds": round(run_seconds, 2),
        "processes": usage.finish(),
        "benchClientCpuSeconds": round(_own_cpu() - client_cpu, 2),
        "problems": problems,
    }


def table_lines(r: dict[str, Any], ms: Any) -> list[str]:
    lines = [
        "",
        f"Scenario P: {r['title']}",
        f"  answers                   {r['answers']} of {r['followers']}; outcome {r['outcome']}, score {r['score']}",
        f"  tallies                   {r['talliesToPresenter']} to the presenter, "
        f"{r['talliesToFollowers']} to followers",
        f"  join by code (ms)         {ms(r['joinMs'])}  (GET /join, POST the code, the board's stream)",
        f"  question delivery (ms)    {ms(r['questionDeliveryMs'])}",
        f"  answer ack (ms)           {ms(r['answerAckMs'])}",
        f"  tally delivery (ms)       {ms(r['tallyDeliveryMs'])}",
        f"  reveal delivery (ms)      {ms(r['revealDeliveryMs'])}",
        f"  time                      all joined in {r['connectSeconds']} s, run {r['wallSeconds']} s, "
        f"bench client CPU {r['benchClientCpuSeconds']} s",
    ]
    for p in r["processes"]:
        lines.append(
            f"  {p['name'] + '[' + str(p['pid']) + ']':<25} CPU {p['cpuSeconds']:>6} s   peak RSS {p['peakRssMiB']} MiB"
        )
    lines += [f"  ! {problem}" for problem in r["problems"][:12]]
    return lines


def passed(r: dict[str, Any]) -> bool:
    return not r["problems"] and all(p["alive"] for p in r["processes"])
