"""Real processes for the end-to-end tests: clusterviz servers (daphne, uvicorn), redis-server, PostgreSQL.

Every process is started in its own session (so a server's worker processes are stopped with it) and
registered with a `Processes` registry, whose `stop_all()` (called by the fixture's teardown, even when
a test fails) stops what is still running, by process id, and checks that nothing is left.

Clients: `http_json` (urllib, proxies bypassed) and `Stream` (the `websockets` sync client).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.serving import free_port, server_argv, wait_for
from tests.tools import missing_tool

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    # A zombie child counts as gone once reaped by its Popen; check /proc for others.
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state == "Z"
    return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Zombies keep a group "alive" for killpg; look for a live member.
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


@dataclass
class Process:
    """One started process (the leader of its own process group) and its log file."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def send_signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)

    def wait(self, timeout: float = 10.0) -> int:
        """The exit status once the process has exited (negative: killed by that signal)."""
        return self.popen.wait(timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Signal the process, wait for it; SIGKILL its whole group if it does not go (or leaves workers)."""
        self.send_signal(sig)
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            code = self.popen.wait(timeout=5)
        if _group_alive(self.pid):  # worker processes outliving their parent
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            wait_for(lambda: not _group_alive(self.pid), 5, f"the processes of {self.name} to exit")
        return code


@dataclass
class Processes:
    """The registry of everything a test started; `stop_all` is the safety net."""

    tmp: Path
    started: list[Process] = field(default_factory=list)
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None, port: int | None = None) -> Process:
        log = self.tmp / f"{name}-{len(self.started)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                argv,
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = Process(name, popen, log, port)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        errors: list[str] = []
        for process in reversed(self.started):
            try:
                process.stop(signal.SIGTERM, timeout=8)
            except Exception as exc:  # keep stopping the others
                errors.append(f"{process.name}: {exc!r}")
        for cleanup in reversed(self.cleanups):
            try:
                cleanup()
            except Exception as exc:
                errors.append(repr(exc))
        left = [p.name for p in self.started if p.popen.poll() is None or _group_alive(p.pid)]
        self.started.clear()
        self.cleanups.clear()
        if errors or left:
            raise AssertionError(f"processes left behind: {left}; errors while stopping: {errors}")


# ---------------------------------------------------------------- services


def start_redis(processes: Processes) -> str:
    """A private redis-server on a free port; returns its URL (see tests/tools.py when there is none)."""
    binary = shutil.which("redis-server")
    if binary is None:
        missing_tool("redis-server is not installed (apt-get install -y redis-server)")
    port = free_port()
    directory = processes.tmp / "redis"
    directory.mkdir()
    argv = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    redis = processes.spawn("redis", [*argv, "--dir", str(directory)], port=port)

    def ping() -> bool:
        assert redis.popen.poll() is None, f"redis-server exited:\n{redis.log_tail()}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    wait_for(ping, 10, "redis-server")
    return f"redis://127.0.0.1:{port}/0"


def _run(argv: list[str], timeout: float = 60) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"


def start_postgres(processes: Processes) -> str:
    """A private PostgreSQL cluster (initdb as the postgres user) on a free port; returns a DATABASE_URL.

    Without PostgreSQL, runuser or root: see tests/tools.py (a skip locally, a failure in CI).
    """
    pg_config = shutil.which("pg_config")
    runuser = shutil.which("runuser")
    if pg_config is None or runuser is None or os.geteuid() != 0:
        missing_tool("PostgreSQL needs pg_config, runuser and root (to run initdb as the postgres user)")
    try:
        import pwd

        postgres = pwd.getpwnam("postgres")
    except KeyError:
        missing_tool("there is no postgres user")
    bindir = Path(subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout.strip())
    if not (bindir / "initdb").exists():
        missing_tool(f"initdb not found in {bindir}")
    port = free_port()
    # The postgres user must reach the directory: pytest's own temp tree is private to root.
    directory = Path(tempfile.mkdtemp(prefix="clusterviz-pg-"))
    processes.cleanups.append(lambda: shutil.rmtree(directory, ignore_errors=True))
    directory.chmod(0o755)
    os.chown(directory, postgres.pw_uid, postgres.pw_gid)
    data = directory / "data"
    as_postgres = [runuser, "-u", "postgres", "--"]
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]
    _run([*as_postgres, *initdb])
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={directory} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )

    def stop_postgres() -> None:
        pid_file = data / "postmaster.pid"
        if not pid_file.exists():
            return
        pid = int(pid_file.read_text().split()[0])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)  # fast shutdown
        wait_for(lambda: _gone(pid), 15, "PostgreSQL to stop")

    processes.cleanups.append(stop_postgres)
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(directory / "pg.log"), "-w", "start", "-o", options]
    _run([*as_postgres, *pg_ctl])
    psql = [str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1"]
    _run([*psql, "-c", "create role app login createdb", "-c", "create database app owner app"])
    return f"postgres://app@127.0.0.1:{port}/app"


# ---------------------------------------------------------------- clusterviz


def server_env(database: str, redis_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a clusterviz process: `database` is a DATABASE_URL or a SQLite file path."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "SQLITE_PATH", "DJANGO_SETTINGS_MODULE")
        and not key.startswith(("PYTEST", "COV_"))
    }
    env.update(DJANGO_SETTINGS_MODULE="clusterviz.settings", PYTHONUNBUFFERED="1", LOG_LEVEL="WARNING")
    env["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    if "://" in database:
        env["DATABASE_URL"] = database
    else:
        env["SQLITE_PATH"] = database
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 60) -> str:
    result = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


# slug → owner token of the clusters prepared here: requests and streams act as their owner.
TOKENS: dict[str, str] = {}


def prepare_cluster(
    env: dict[str, str], slug: str, objects: str = "", *, migrate: bool = True, then: str = "", timeout: float = 60
) -> None:
    """Create a cluster (migrating the database first unless `migrate` is false), with objects, in one
    process (as `manage.py migrate` and `manage.py import_cluster` would); `then` is more code run with
    the new `cluster`. Requests and streams then act as its owner (TOKENS)."""
    code = "from django.core.management import call_command\nfrom clusterviz import services\n"
    if migrate:
        code += "call_command('migrate', verbosity=0, interactive=False)\n"
    code += f"cluster = services.create_cluster({slug!r})\n"
    if objects:
        code += f"services.create_from_yaml(cluster, {objects!r}, 'kubectl')\n"
    code += then + "print(cluster.owner_token)\n"
    TOKENS[slug] = django_script(env, code, timeout=timeout).strip().splitlines()[-1]


def django_script(env: dict[str, str], code: str, timeout: float = 60) -> str:
    """Run Python code with Django set up (as another client of the same database would)."""
    prelude = "import django\ndjango.setup()\n"
    result = subprocess.run(
        [PYTHON, "-c", prelude + code], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"script failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def start_server(
    processes: Processes, kind: str, env: dict[str, str], port: int | None = None, workers: int = 1
) -> Process:
    """`daphne` (manage.py runserver --noreload), `daphne-cli` (the daphne command) or `uvicorn` (optionally
    with workers), ready to serve."""
    server = spawn_server(processes, kind, env, port, workers)
    wait_ready(server)
    return server


def start_servers(processes: Processes, *specs: tuple[str, dict[str, str], int]) -> list[Process]:
    """Several servers, (kind, env, workers) each, started side by side."""
    servers = [spawn_server(processes, kind, env, None, workers) for kind, env, workers in specs]
    for server in servers:
        wait_ready(server)
    return servers


def spawn_server(
    processes: Processes, kind: str, env: dict[str, str], port: int | None = None, workers: int = 1
) -> Process:
    port = port or free_port()
    return processes.spawn(kind, server_argv(kind, port, workers=workers), env, port)


def wait_ready(server: Process, timeout: float = 30) -> None:
    def ready() -> bool:
        code = server.popen.poll()
        assert code is None, f"{server.name} exited with {code}:\n{server.log_tail()}"
        try:
            with _NO_PROXY.open(f"{server.base_url}/api/lessons", timeout=1) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    wait_for(ready, timeout, f"{server.name} on port {server.port}")


def http_json(url: str, body: Any = None, timeout: float = 10) -> tuple[int, Any]:
    """GET (or POST a JSON body); returns (status, decoded JSON)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    match = re.search(r"/api/clusters/([^/?]+)/", url)
    if match and match.group(1) in TOKENS:
        request.add_header("Authorization", f"Bearer {TOKENS[match.group(1)]}")
    try:
        with _NO_PROXY.open(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class Stream:
    """A WebSocket client of a cluster stream on a real server."""

    def __init__(self, server: Process, slug: str, query: str = "") -> None:
        from websockets.sync.client import connect

        if slug in TOKENS and "key=" not in query:
            query = "&".join(q for q in (query, f"key={TOKENS[slug]}") if q)
        url = f"ws://127.0.0.1:{server.port}/ws/clusters/{slug}/" + (f"?{query}" if query else "")
        # close_timeout: a stream of a server that has exited waits this long for the closing handshake
        self.connection = connect(url, origin=server.base_url, proxy=None, open_timeout=10, close_timeout=0.2)  # type: ignore[arg-type]
        self.received: list[dict[str, Any]] = []
        self._unpacked: list[dict[str, Any]] = []

    def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        if not self._unpacked:
            message = json.loads(self.connection.recv(timeout=timeout))
            # a `watch.batch` (`scheduler.cycles`) is read as the page reads it: change by change
            kind = message.get("type")
            packed = {"watch.batch": "changes", "scheduler.cycles": "cycles"}.get(kind or "")
            self._unpacked.extend(message[packed] if packed else [message])
        message = self._unpacked.pop(0)
        self.received.append(message)
        return dict(message)

    def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> list[dict[str, Any]]:
        """Messages up to and including the first that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        seen: list[dict[str, Any]] = []
        while True:
            left = deadline - time.monotonic()
            try:
                message = self.recv(timeout=max(left, 0.01))
            except TimeoutError:
                kinds = [m.get("type") for m in seen]
                raise AssertionError(f"no matching message within {timeout}s; got {kinds}") from None
            seen.append(message)
            if predicate(message):
                return seen

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def streams(*items: Stream) -> Iterator[tuple[Stream, ...]]:
    try:
        yield items
    finally:
        for item in items:
            item.close()
