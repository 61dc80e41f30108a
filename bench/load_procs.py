"""Processes for the load benchmark: clusterviz servers and redis-server on 127.0.0.1, their CPU and memory.

Every process is started in its own session (Ctrl-C at the terminal reaches only the benchmark, which
then stops them) with a parent-death signal (so they go even if the benchmark is killed), registered
with a `Registry` whose `stop_all()` stops each one by its process id.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from serving import HOST, free_port, server_argv, wait_for

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the benchmark dies, however it dies (Linux only)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, timeout: float = 8.0) -> None:
        """SIGTERM, then SIGKILL to its process group if it does not exit in time."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.popen.wait(timeout=5)


@dataclass
class Registry:
    """Everything the benchmark started, stopped in reverse order by `stop_all`."""

    tmp: Path
    started: list[Process] = field(default_factory=list)

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
                preexec_fn=_die_with_parent,  # before any thread exists
            )
        process = Process(name, popen, log, port)
        self.started.append(process)
        return process

    def stop_all(self) -> list[str]:
        """Stop every process; returns the names of those that would not stop (normally none)."""
        left: list[str] = []
        for process in reversed(self.started):
            try:
                process.stop()
            except Exception:
                left.append(process.name)
        self.started.clear()
        return left


def start_redis(registry: Registry) -> tuple[Process, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (apt-get install -y redis-server)")
    port = free_port()
    directory = registry.tmp / "redis"
    directory.mkdir(exist_ok=True)
    argv = [binary, "--bind", HOST, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(directory)]
    redis = registry.spawn("redis", argv, port=port)

    def ping() -> bool:
        if not redis.alive():
            raise RuntimeError(f"redis-server exited:\n{redis.log_tail()}")
        try:
            with socket.create_connection((HOST, port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    wait_for(ping, 10, "redis-server")
    return redis, f"redis://{HOST}:{port}/0"


def server_env(sqlite_path: Path, redis_url: str | None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in ("DATABASE_URL", "REDIS_URL", "SQLITE_PATH", "DJANGO_SETTINGS_MODULE", "http_proxy", "https_proxy")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="clusterviz.settings",
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="WARNING",
        ALLOWED_HOSTS=f"{HOST},localhost",
        SQLITE_PATH=str(sqlite_path),
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def django_script(env: dict[str, str], code: str, timeout: float = 300) -> str:
    """Run Python code with Django set up (as `manage.py` would), in the repository."""
    prelude = "import django\ndjango.setup()\n"
    result = subprocess.run(
        [PYTHON, "-c", prelude + code], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"setup script failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def spawn_server(
    registry: Registry,
    kind: str,
    env: dict[str, str],
    app: str = "clusterviz.asgi:application",
    extra: Sequence[str] = (),
) -> Process:
    """`daphne` (manage.py runserver --noreload: settings.ASGI_APPLICATION) or `uvicorn` (`app`), plus `extra`."""
    port = free_port()
    argv = server_argv(kind, port, app=app)
    if kind == "uvicorn":
        argv += ["--log-level", "warning"]
    return registry.spawn(kind, [*argv, *extra], env, port)


def wait_ready(server: Process, timeout: float = 30) -> None:
    def ready() -> bool:
        if not server.alive():
            raise RuntimeError(f"{server.name} exited with {server.popen.returncode}:\n{server.log_tail()}")
        try:
            with NO_PROXY.open(f"{server.base_url}/api/lessons", timeout=1) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    wait_for(ready, timeout, f"{server.name} on port {server.port}")


# ---------------------------------------------------------------- CPU and memory from /proc


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14, 15 of stat)


def children_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process's children that have ended and been waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / CLOCK_TICKS  # cutime, cstime (fields 16, 17 of stat)


def live_children(pid: int) -> list[int]:
    """The process ids of a process's running children."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak resident set) in KiB."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (writing 5 to clear_refs; Linux >= 4.0, same user or root)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass
class Usage:
    """CPU seconds and peak RSS of some processes over one scenario."""

    processes: list[Process]
    cpu_start: dict[int, float] = field(default_factory=dict)
    peak_reset: bool = True

    def start(self) -> None:
        for process in self.processes:
            self.cpu_start[process.pid] = cpu_seconds(process.pid)
            self.peak_reset = reset_peak_rss(process.pid) and self.peak_reset

    def finish(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for process in self.processes:
            if not process.alive():
                rows.append({"name": process.name, "pid": process.pid, "alive": False})
                continue
            memory = memory_kib(process.pid)
            rows.append(
                {
                    "name": process.name,
                    "pid": process.pid,
                    "alive": True,
                    "cpuSeconds": round(cpu_seconds(process.pid) - self.cpu_start.get(process.pid, 0.0), 2),
                    "peakRssMiB": round(memory.get("VmHWM", 0) / 1024, 1),
                    "rssMiB": round(memory.get("VmRSS", 0) / 1024, 1),
                    "peakSinceStart": not self.peak_reset,
                }
            )
        return rows


# ---------------------------------------------------------------- one async HTTP/1.1 exchange (no proxies)


def _dechunk(data: bytes) -> bytes:
    out, rest = b"", data
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out


async def http_exchange(
    base: str,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
) -> tuple[int, Any]:
    """One request over a fresh connection to a server on 127.0.0.1; returns (status, decoded JSON)."""
    port = int(base.rsplit(":", 1)[1])

    async def exchange() -> tuple[int, Any]:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            for name, value in (headers or {}).items():
                head += f"{name}: {value}\r\n"
            if body is not None:
                head += f"Content-Length: {len(body)}\r\n"
            writer.write((head + "Connection: close\r\n\r\n").encode() + (body or b""))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        header, _, payload = raw.partition(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        if any(line.lower().startswith("transfer-encoding:") and "chunked" in line.lower() for line in lines):
            payload = _dechunk(payload)
        return status, json.loads(payload or b"null")

    return await asyncio.wait_for(exchange(), timeout)
