"""The machinery of the HTTP benchmark: server processes, sessions, and the wrk runs.

* :class:`HttpServerProcess` starts a server that prints its URL on stderr, pins it to a
  CPU, and stops it (SIGTERM, then SIGKILL), every wait bounded.
* :func:`open_sessions` opens MCP sessions with httpx (``initialize``, then
  ``notifications/initialized``) and returns their ``Mcp-Session-Id`` values.
* :func:`run_wrk` runs ``wrk`` with ``bench/wrk_mcp.lua`` for a fixed duration and returns
  its summary, the server's CPU time and the answers counted over a window inside the run,
  and wrk's own CPU time (from ``wait4``'s rusage), so the report can show the load
  generator is not the bottleneck.

Server CPU time is ``utime + stime`` from ``/proc/<pid>/stat`` (all threads, clock ticks),
with the per-thread ``schedstat`` sum (ns, live threads) as a cross-check; memory is
``VmRSS`` from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Final

import httpx

from ._rawclient import CLK_TCK, INIT_PARAMS, PROTOCOL_VERSION, ServerError

__all__ = [
    "HttpServerProcess",
    "cpu_seconds",
    "cpu_seconds_sched",
    "open_sessions",
    "rss_bytes",
    "run_wrk",
    "wrk_path",
]

LUA_SCRIPT: Final = Path(__file__).resolve().parent / "wrk_mcp.lua"
HEADERS: Final = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
}
#: A 2026-07-28 ``tools/call echo``: its headers (over ``HEADERS``) and its ``_meta``.
MODERN_HEADERS: Final = {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}
MODERN_META: Final = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def wrk_path() -> str | None:
    return shutil.which("wrk")


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process so far (all threads, tick resolution)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_seconds_sched(pid: int) -> float:
    """Sum of the live threads' run time from ``schedstat`` (ns resolution)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with (
            contextlib.suppress(FileNotFoundError, ProcessLookupError),
            open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f,
        ):
            total += int(f.read().split()[0])
    return total / 1e9


def rss_bytes(pid: int) -> int:
    """The process's resident set size (``VmRSS``)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise ServerError(f"no VmRSS for process {pid}")


class HttpServerProcess:
    """A server process that announces ``... on http://...`` on stderr when it listens.

    Args:
        argv: the command line (run in ``cwd``).
        cpu: pin the process (and every thread it starts) to this CPU, if given.
        timeout: bound on the start-up and on the stop.
    """

    def __init__(
        self, argv: Sequence[str], *, cwd: str, cpu: int | None = None, timeout: float = 30.0
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.cpu = cpu
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self._stderr: IO[bytes] | None = None
        self.stderr_text = ""

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.returncode

    def stderr_tail(self, limit: int = 2000) -> str:
        if self._stderr is None:
            return self.stderr_text
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            return self._stderr.read()[-limit:].decode("utf-8", "replace")
        return ""

    def fail(self, what: str) -> ServerError:
        status = self.proc.poll() if self.proc is not None else None
        state = "running" if status is None else f"exited with status {status}"
        return ServerError(f"{what} ({' '.join(self.argv)}: {state})\n{self.stderr_tail()}")

    def start(self) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            cwd=self.cwd,
        )
        if self.cpu is not None:
            # Right after the fork: no thread has started yet, and threads inherit it.
            os.sched_setaffinity(self.proc.pid, {self.cpu})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for line in self.stderr_tail(10_000).splitlines():
                if " on http://" in line:
                    self.url = line.rsplit(" on ", 1)[1].strip()
                    return
            if self.proc.poll() is not None:
                raise self.fail("the server exited before listening")
            time.sleep(0.05)
        raise self.fail(f"the server announced no URL within {self.timeout} s")

    def stop(self) -> int | None:
        """SIGTERM (uvicorn shuts down gracefully), SIGKILL if it lingers; always reaped."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=6)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=self.timeout)
        if self._stderr is not None:
            self.stderr_text = self.stderr_tail()
            self._stderr.close()
            self._stderr = None
        return proc.returncode

    def __enter__(self) -> HttpServerProcess:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def open_sessions(
    client: httpx.Client, url: str, count: int, server: HttpServerProcess
) -> list[str]:
    """Open ``count`` sessions (``initialize`` + ``notifications/initialized``); returns
    their ids. Every answer is checked; a failure raises :class:`ServerError`."""
    ids: list[str] = []
    init = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}
    ).encode()
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    for _ in range(count):
        reply = client.post(url, content=init, headers=HEADERS)
        session = reply.headers.get("mcp-session-id")
        if reply.status_code != 200 or not session or '"result"' not in reply.text:
            raise server.fail(f"initialize: {reply.status_code} {reply.text[:300]!r}")
        reply = client.post(
            url, content=initialized, headers={**HEADERS, "Mcp-Session-Id": session}
        )
        if reply.status_code != 202:
            raise server.fail(
                f"notifications/initialized: {reply.status_code} {reply.text[:300]!r}"
            )
        ids.append(session)
    return ids


def call_echo(
    client: httpx.Client,
    url: str,
    session: str | None,
    text: str,
    server: HttpServerProcess,
    modern: bool = False,
) -> None:
    """One checked ``tools/call echo`` (on ``session``, if given; ``modern``: as a
    2026-07-28 request)."""
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    headers = HEADERS if session is None else {**HEADERS, "Mcp-Session-Id": session}
    if modern:
        params["_meta"] = MODERN_META
        headers = {**HEADERS, **MODERN_HEADERS}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    reply = client.post(url, content=body, headers=headers)
    if reply.status_code != 200 or json.dumps(text) not in reply.text or '"error"' in reply.text:
        raise server.fail(f"tools/call echo: {reply.status_code} {reply.text[:300]!r}")


def delete_sessions(client: httpx.Client, url: str, sessions: Sequence[str]) -> None:
    for session in sessions:
        client.delete(url, headers={**HEADERS, "Mcp-Session-Id": session})


#: The measured window inside each wrk run: from this long after wrk starts...
WINDOW_HEAD_S: Final = 0.25
#: ... to this long before it stops.
WINDOW_TAIL_S: Final = 0.1


def _wait_until(moment: float) -> None:
    while (left := moment - time.monotonic()) > 0:
        time.sleep(min(left, 0.05))


def run_wrk(
    url: str,
    server_pid: int,
    *,
    connections: int,
    duration_s: int,
    sessions_file: Path | None,
    text: str,
    cpu: int | None,
    modern: bool = False,
) -> dict[str, Any]:
    """One fixed-duration wrk run: wrk's summary plus CPU accounting on both sides
    (``modern``: every call a 2026-07-28 request, without a session).

    The server's CPU time is read at two fixed instants inside the run (``WINDOW_HEAD_S``
    after the start, ``WINDOW_TAIL_S`` before the end), and the Lua script counts the
    answers completed between the same two instants (both use CLOCK_MONOTONIC), so the
    ramp-up and the requests still in flight when wrk stops (processed by the server but
    never counted by wrk) stay out of the per-request figure. ``window_*`` keys hold that;
    ``run_*`` the whole run, for reference.

    wrk runs with ``min(connections, 2)`` threads, pinned to ``cpu`` when given. The run
    is bounded (wrk's own ``--timeout 5s`` per request; the process is killed 20 s past
    its duration).
    """
    wrk = wrk_path()
    if wrk is None:
        raise ServerError("wrk is not installed (make bench installs it: apt-get install wrk)")
    threads = min(connections, 2)
    started = time.monotonic()
    window = (started + WINDOW_HEAD_S, started + duration_s - WINDOW_TAIL_S)
    argv = [
        *(["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []),
        wrk,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{duration_s}s",
        "--timeout",
        "5s",
        "-s",
        str(LUA_SCRIPT),
        url,
        "--",
        "2026-07-28" if modern else str(sessions_file) if sessions_file is not None else "-",
        str(threads),
        text,
        *(str(round(moment * 1e9)) for moment in window),
    ]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        run0 = cpu_seconds(server_pid)
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        usage = None
        try:
            _wait_until(window[0])
            cpu0, sched0 = cpu_seconds(server_pid), cpu_seconds_sched(server_pid)
            _wait_until(window[1])
            cpu1, sched1 = cpu_seconds(server_pid), cpu_seconds_sched(server_pid)
            deadline = started + duration_s + 20
            while time.monotonic() < deadline:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    break
                time.sleep(0.02)
            else:
                raise ServerError(f"wrk did not finish within {duration_s + 20} s")
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait(timeout=10)
        wall = time.monotonic() - started
        run1 = cpu_seconds(server_pid)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    summary = next(
        (json.loads(line[8:]) for line in stdout.splitlines() if line.startswith("WRKJSON ")),
        None,
    )
    if proc.returncode != 0 or summary is None:
        raise ServerError(f"wrk failed ({proc.returncode}): {stdout[-1000:]} {stderr[-1000:]}")
    bad = [line[7:] for line in stdout.splitlines() if line.startswith("WRKBAD ")]
    assert usage is not None
    return {
        **summary,
        "threads": threads,
        "first_bad": bad[0] if bad else None,
        "window_s": window[1] - window[0],
        "server_cpu_s": cpu1 - cpu0,
        "server_cpu_sched_s": sched1 - sched0,
        "run_wall_s": wall,
        "run_server_cpu_s": run1 - run0,
        "wrk_cpu_s": usage.ru_utime + usage.ru_stime,
    }
