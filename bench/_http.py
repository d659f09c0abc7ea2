"""Streamable HTTP benchmark: ``tools/call echo`` under wrk, and memory per session.

Contenders (every one a separate process, all on the same uvicorn + httptools set-up):

* ``mcpkit``: ``python -m mcpkit run examples/echo.py --transport http`` in three modes:
  stateful with SSE answers (the default), stateful with ``--json-response``, and
  ``--stateless --json-response``; and a fourth, ``2026-07-28``: the same server with
  ``--json-response`` answering each call sent as a 2026-07-28 request (no session;
  ``_meta``, ``Mcp-Method`` and ``Mcp-Name``);
* ``mcp``: ``bench/official_http_server.py``, the official SDK, in the same four modes;
* ``bare``: ``bench/bare_http_server.py``, a bare ASGI app answering JSON (the floor);
* ``flat``: ``bench/flat_http_server.py``, the least work a stateful MCP endpoint does per
  call, written flat (a reference: how far a leaner request path could go).

All servers are started first, pinned to one CPU; wrk runs pinned to the other (when there
are two). Stateful servers get their sessions beforehand (:func:`~bench._httpload.open_sessions`),
as many as the most connections, passed to the Lua script in a file. Each server gets a
warm-up run, then for every repeat and every connection count the servers take turns
(the order rotating), one fixed-duration wrk run each. A run with any error (non-200, a
wrong body, a socket error or timeout) is reported as failed and not used.

Memory per session: fresh mcpkit and mcp stateful servers; after a warm-up (a few sessions
opened, used and deleted), ``VmRSS`` is read before and after opening ``memory_sessions``
sessions that stay open, and the difference is divided by their number.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import httpx

from ._httpload import (
    HttpServerProcess,
    call_echo,
    cpu_seconds,
    delete_sessions,
    open_sessions,
    rss_bytes,
    run_wrk,
    wrk_path,
)
from ._rawclient import CLK_TCK, ServerError
from ._servers import ECHO_TEXT, ROOT

__all__ = [
    "CONTENDERS",
    "MODES",
    "HttpConfig",
    "cpu_per_request",
    "cpus_for_load",
    "requests_per_s",
    "run_http",
]

_PY: Final = sys.executable
MODERN: Final = "2026-07-28"
MODES: Final = ("stateful+sse", "stateful+json", "stateless+json", MODERN)
_FLAGS: Final = {
    "stateful+sse": [],
    "stateful+json": ["--json-response"],
    "stateless+json": ["--stateless", "--json-response"],
    MODERN: ["--json-response"],
}
_BASE: Final = {
    "mcpkit": [
        _PY,
        "-m",
        "mcpkit",
        "run",
        "examples/echo.py",
        "--transport",
        "http",
        "--port",
        "0",
    ],
    "mcp": [_PY, str(ROOT / "bench" / "official_http_server.py")],
}
#: name -> (implementation, mode, command line)
CONTENDERS: Final[dict[str, tuple[str, str, list[str]]]] = {
    **{
        f"{impl} {mode}": (impl, mode, [*_BASE[impl], *_FLAGS[mode]])
        for mode in MODES
        for impl in ("mcpkit", "mcp")
    },
    "bare json": ("bare", "json", [_PY, str(ROOT / "bench" / "bare_http_server.py")]),
    "flat stateful+json": (
        "flat",
        "stateful+json",
        [_PY, str(ROOT / "bench" / "flat_http_server.py")],
    ),
}


@dataclass(frozen=True, slots=True)
class HttpConfig:
    connections: tuple[int, ...]
    duration_s: int
    warmup_s: int
    repeats: int
    memory_sessions: int
    timeout_s: float


def cpus_for_load() -> tuple[int | None, int | None]:
    """(load generator CPU, server CPU): one core each when there are at least two."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)


def _errors(run: dict[str, Any]) -> str | None:
    keys = ("bad", "status_errors", "connect_errors", "read_errors", "write_errors", "timeouts")
    counts = {k: run[k] for k in keys if run[k]}
    if not counts and run["window_requests"] > 0 and run["ok"] == run["requests"]:
        return None
    return f"{counts or 'no requests in the window'}; first bad answer: {run['first_bad']}"


def cpu_per_request(run: dict[str, Any]) -> float:
    """Server CPU time per request answered, over the run's measured window."""
    return float(run["server_cpu_s"] / run["window_requests"])


def requests_per_s(run: dict[str, Any]) -> float:
    return float(run["window_requests"] / run["window_s"])


def _summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def med(values: Iterable[float]) -> float:
        return float(statistics.median(values))

    per_req = [cpu_per_request(r) for r in runs]
    return {
        "repeats": len(runs),
        "requests": sum(r["window_requests"] for r in runs),
        "requests_per_s": med(requests_per_s(r) for r in runs),
        "server_cpu_per_request_s": med(per_req),
        "server_cpu_per_request_range_s": [min(per_req), max(per_req)],
        "server_cpu_sched_per_request_s": med(
            r["server_cpu_sched_s"] / r["window_requests"] for r in runs
        ),
        "server_cpu_resolution_per_request_s": max(
            1.0 / CLK_TCK / r["window_requests"] for r in runs
        ),
        "server_cpu_utilisation": med(r["server_cpu_s"] / r["window_s"] for r in runs),
        "wrk_cpu_per_request_s": med(r["wrk_cpu_s"] / r["requests"] for r in runs),
        "wrk_cpu_utilisation": med(r["wrk_cpu_s"] / r["run_wall_s"] for r in runs),
        "latency_p50_s": med(r["p50_us"] for r in runs) / 1e6,
        "latency_p99_s": med(r["p99_us"] for r in runs) / 1e6,
        "samples": runs,
    }


def _load(
    config: HttpConfig, cpus: tuple[int | None, int | None], log: Callable[[str], None]
) -> dict[str, Any]:
    load_cpu, server_cpu = cpus
    names = list(CONTENDERS)
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {n: {} for n in names}
    failures: list[str] = []
    servers: dict[str, HttpServerProcess] = {}
    #: (server, connections) -> the file with that many of the server's session ids
    sessions: dict[tuple[str, int], Path | None] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcpkit-bench-")))
        client = stack.enter_context(httpx.Client(timeout=config.timeout_s))
        for name in names:
            server = HttpServerProcess(CONTENDERS[name][2], cwd=str(ROOT), cpu=server_cpu)
            servers[name] = stack.enter_context(server)
        warm_connections = min(16, max(config.connections))
        for index, (name, server) in enumerate(servers.items()):
            ids: list[str] = []
            stateful = CONTENDERS[name][1].startswith("stateful")
            if stateful:  # one session per connection: the row with c connections uses c
                ids = open_sessions(client, server.url, max(config.connections), server)
            for c in {*config.connections, warm_connections}:
                path = None
                if stateful:
                    path = tmp / f"sessions-{index}-{c}.txt"
                    path.write_text("\n".join(ids[:c]) + "\n")
                sessions[name, c] = path
            modern = CONTENDERS[name][1] == MODERN
            call_echo(client, server.url, ids[0] if ids else None, ECHO_TEXT, server, modern)
            warm = run_wrk(
                server.url,
                server.pid,
                connections=warm_connections,
                duration_s=config.warmup_s,
                sessions_file=sessions[name, warm_connections],
                text=ECHO_TEXT,
                cpu=load_cpu,
                modern=modern,
            )
            if (problem := _errors(warm)) is not None:
                failures.append(f"{name} warm-up: {problem}")
        turn = 0
        for r in range(config.repeats):
            for connections in config.connections:
                order = names[turn % len(names) :] + names[: turn % len(names)]
                turn += 1
                for name in order:
                    server = servers[name]
                    if server.proc is None or server.proc.poll() is not None:
                        raise server.fail("the server died")
                    run = run_wrk(
                        server.url,
                        server.pid,
                        connections=connections,
                        duration_s=config.duration_s,
                        sessions_file=sessions[name, connections],
                        text=ECHO_TEXT,
                        cpu=load_cpu,
                        modern=CONTENDERS[name][1] == MODERN,
                    )
                    if (problem := _errors(run)) is not None:
                        failures.append(f"{name}, {connections} connections: {problem}")
                        log(f"  {name:22} {connections:3} conn: FAILED {problem}")
                        continue
                    run["repeat"] = r
                    runs[name].setdefault(connections, []).append(run)
                    log(
                        f"  [{r + 1}/{config.repeats}] {name:22} {connections:3} conn: "
                        f"{requests_per_s(run):8,.0f} req/s, server CPU "
                        f"{cpu_per_request(run) * 1e6:6.1f} us/req, wrk CPU "
                        f"{run['wrk_cpu_s'] / run['requests'] * 1e6:5.1f} us/req"
                    )
    results: dict[str, Any] = {}
    for name in names:
        impl, mode, argv = CONTENDERS[name]
        results[name] = {
            "implementation": impl,
            "mode": mode,
            "argv": argv,
            "exit_status": servers[name].returncode,
            "stderr_tail": servers[name].stderr_text[-2000:],
            "rows": {
                str(c): _summarise(runs[name][c]) for c in config.connections if runs[name].get(c)
            },
        }
    return {"servers": results, "failures": failures}


def _paired(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str) -> list[float]:
    """a/b per repeat, over the repeats both measured: the servers of one repeat ran within
    seconds of each other, so a slow spell of the machine cancels out of their ratio."""
    if a is None or b is None:
        return []

    value = requests_per_s if key == "requests_per_s" else cpu_per_request

    theirs = {run["repeat"]: value(run) for run in b["samples"]}
    return [value(run) / theirs[run["repeat"]] for run in a["samples"] if run["repeat"] in theirs]


def _memory_one(
    name: str, config: HttpConfig, cpu: int | None, log: Callable[[str], None]
) -> dict[str, Any]:
    with (
        HttpServerProcess(CONTENDERS[name][2], cwd=str(ROOT), cpu=cpu) as server,
        httpx.Client(timeout=config.timeout_s) as client,
    ):
        warm = open_sessions(client, server.url, 10, server)
        for session in warm:
            call_echo(client, server.url, session, ECHO_TEXT, server)
        delete_sessions(client, server.url, warm)
        rss0, cpu0 = rss_bytes(server.pid), cpu_seconds(server.pid)
        ids = open_sessions(client, server.url, config.memory_sessions, server)
        rss1, cpu1 = rss_bytes(server.pid), cpu_seconds(server.pid)
        for session in ids:  # every session still open and working; then what a used one costs
            call_echo(client, server.url, session, ECHO_TEXT, server)
        rss2 = rss_bytes(server.pid)
        n = len(ids)
    result = {
        "sessions": n,
        "rss_before_bytes": rss0,
        "rss_after_bytes": rss1,
        "rss_per_session_bytes": (rss1 - rss0) / n,
        "rss_after_one_call_each_bytes": rss2,
        "rss_per_used_session_bytes": (rss2 - rss0) / n,
        "server_cpu_per_session_open_s": (cpu1 - cpu0) / n,
    }
    log(
        f"  {name:22} {n} sessions: RSS {rss0 / 2**20:.1f} -> {rss1 / 2**20:.1f} MiB, "
        f"{result['rss_per_session_bytes'] / 1024:.1f} KiB/session "
        f"({result['rss_per_used_session_bytes'] / 1024:.1f} KiB after one call each)"
    )
    return result


def run_http(config: HttpConfig, *, log: Callable[[str], None]) -> dict[str, Any]:
    """Run the HTTP benchmark; returns the JSON-ready section (``failures`` lists rows that
    saw errors; they carry no numbers)."""
    if wrk_path() is None:
        raise ServerError("wrk is not installed: `make bench` installs it (apt-get install wrk)")
    cpus = cpus_for_load()
    log(f"  servers on CPU {cpus[1]}, wrk on CPU {cpus[0]}")
    load = _load(config, cpus, log)
    memory = {
        name: _memory_one(name, config, cpus[1], log)
        for name in ("mcpkit stateful+sse", "mcp stateful+sse")
    }
    servers = load["servers"]
    ratios: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        for c in config.connections:
            kit = servers[f"mcpkit {mode}"]["rows"].get(str(c))
            entry: dict[str, Any] = {"mode": mode, "connections": c}
            for other, key in (
                (f"mcp {mode}", "mcpkit/mcp"),
                ("bare json", "mcpkit/bare"),
                ("flat stateful+json", "mcpkit/flat"),
            ):
                row = servers[other]["rows"].get(str(c))
                paired = _paired(kit, row, "server_cpu_per_request_s")
                entry[f"cpu {key}"] = statistics.median(paired) if paired else None
                entry[f"cpu {key} range"] = [min(paired), max(paired)] if paired else None
                entry[f"cpu {key} of medians"] = (
                    kit["server_cpu_per_request_s"] / row["server_cpu_per_request_s"]
                    if kit and row
                    else None
                )
            mcp = servers[f"mcp {mode}"]["rows"].get(str(c))
            paired = _paired(kit, mcp, "requests_per_s")
            entry["req/s mcpkit/mcp"] = statistics.median(paired) if paired else None
            ratios[f"{mode} {c}"] = entry
    kit_mem = memory["mcpkit stateful+sse"]["rss_per_session_bytes"]
    mcp_mem = memory["mcp stateful+sse"]["rss_per_session_bytes"]
    return {
        "method": (
            "wrk (bench/wrk_mcp.lua) for a fixed duration per row, threads = min(connections, "
            "2); server CPU = utime+stime from /proc/<pid>/stat over the run (schedstat as a "
            "cross-check) / completed requests; wrk CPU from wait4 rusage; memory = VmRSS "
            "delta over N open sessions / N"
        ),
        "config": {**asdict(config), "text": ECHO_TEXT, "clk_tck": CLK_TCK},
        "affinity": {"wrk_cpu": cpus[0], "server_cpu": cpus[1]},
        "wrk": wrk_path(),
        "servers": servers,
        "memory": memory,
        "ratios": ratios,
        "memory_ratio": kit_mem / mcp_mem if mcp_mem > 0 else None,
        "failures": load["failures"],
    }
