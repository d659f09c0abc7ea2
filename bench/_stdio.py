"""stdio round-trip benchmark: ``tools/call echo`` against real server processes.

All servers are spawned, handshaken and warmed up first; then, ``repeats`` times, each
server in turn (the order rotating) runs a sequential phase (one call in flight) and a
concurrent phase (``window`` calls in flight), all driven by
:class:`~bench._rawclient.RawServer`. Per phase: wall time per call, calls/s, server CPU
time per call (``/proc/<pid>/stat`` utime+stime; ``schedstat`` as a finer cross-check),
the client's own CPU time per call, and latency percentiles. Each metric is reported as the
median over the repeats.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._rawclient import CLK_TCK, PhaseResult, RawServer, build_calls
from ._servers import ECHO_TEXT, ROOT, SERVERS, expected_result_bytes

__all__ = ["StdioConfig", "run_stdio"]


@dataclass(frozen=True, slots=True)
class StdioConfig:
    sequential_calls: int
    concurrent_calls: int
    window: int
    warmup_calls: int
    repeats: int
    timeout_s: float


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _summarise(phases: list[PhaseResult]) -> dict[str, Any]:
    def med(get: Callable[[PhaseResult], float]) -> float:
        return statistics.median(get(p) for p in phases)

    sched = [p.server_cpu_sched_s for p in phases]
    calls = phases[0].calls
    wall = med(lambda p: p.wall_s / p.calls)
    return {
        "calls": calls,
        "window": phases[0].window,
        "repeats": len(phases),
        "wall_per_call_s": wall,
        "calls_per_s": 1.0 / wall,
        "server_cpu_per_call_s": med(lambda p: p.server_cpu_s / p.calls),
        "server_cpu_per_call_range_s": [
            min(p.server_cpu_s / p.calls for p in phases),
            max(p.server_cpu_s / p.calls for p in phases),
        ],
        "server_cpu_resolution_per_call_s": 1.0 / CLK_TCK / calls,
        "server_cpu_sched_per_call_s": (
            statistics.median(s / calls for s in sched if s is not None)
            if all(s is not None for s in sched)
            else None
        ),
        "client_cpu_per_call_s": med(lambda p: p.client_cpu_s / p.calls),
        "latency_p50_s": med(lambda p: _percentile(p.latencies_s, 0.50)),
        "latency_p99_s": med(lambda p: _percentile(p.latencies_s, 0.99)),
        "samples": [
            {
                "wall_s": p.wall_s,
                "server_cpu_s": p.server_cpu_s,
                "server_cpu_sched_s": p.server_cpu_sched_s,
                "client_cpu_s": p.client_cpu_s,
            }
            for p in phases
        ],
    }


def _log_server(name: str, result: dict[str, Any], log: Callable[[str], None]) -> None:
    seq, conc = result["sequential"], result["concurrent"]
    log(
        f"  {name:7} sequential {seq['wall_per_call_s'] * 1e6:8.1f} us/call, "
        f"{conc['window']} in flight {conc['wall_per_call_s'] * 1e6:8.1f} us/call "
        f"(server CPU {conc['server_cpu_per_call_s'] * 1e6:.1f} us/call)"
    )


def bench_servers(
    config: StdioConfig, cpu: int | None, log: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """Start every server, then measure them in turn, rotating the order each repeat, so
    that a slow spell of the (shared, virtual) machine hits all of them alike."""
    names = list(SERVERS)
    phases: dict[str, dict[str, list[PhaseResult]]] = {
        name: {"sequential": [], "concurrent": []} for name in names
    }
    next_id = dict.fromkeys(names, 1)
    with contextlib.ExitStack() as stack:
        servers: dict[str, RawServer] = {}
        for name in names:
            server = RawServer(SERVERS[name], timeout=config.timeout_s, cwd=str(ROOT), cpu=cpu)
            servers[name] = stack.enter_context(server)
        for name, server in servers.items():
            server.initialize()
            warm = build_calls(1, config.warmup_calls, ECHO_TEXT)
            server.call_many(warm, 1, min(8, config.window), expected_result_bytes(name))
            next_id[name] = 1 + config.warmup_calls
        for r in range(config.repeats):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                server, expect = servers[name], expected_result_bytes(name)
                for phase, count, window in (
                    ("sequential", config.sequential_calls, 1),
                    ("concurrent", config.concurrent_calls, config.window),
                ):
                    requests = build_calls(next_id[name], count, ECHO_TEXT)
                    result = server.call_many(requests, next_id[name], window, expect)
                    phases[name][phase].append(result)
                    next_id[name] += count
        pids = {name: server.pid for name, server in servers.items()}
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        proc = servers[name].proc
        results[name] = {
            "argv": SERVERS[name],
            "pid": pids[name],
            "exit_status": proc.returncode if proc is not None else None,
            "stderr_tail": servers[name].stderr_text,
            "sequential": _summarise(phases[name]["sequential"]),
            "concurrent": _summarise(phases[name]["concurrent"]),
        }
        _log_server(name, results[name], log)
    return results


def run_stdio(
    config: StdioConfig, *, cpu: int | None, log: Callable[[str], None]
) -> dict[str, Any]:
    """Run the stdio benchmark against every server; returns the JSON-ready section."""
    servers = bench_servers(config, cpu, log)
    ratios: dict[str, float] = {}
    for phase in ("sequential", "concurrent"):
        kit, mcp = servers["mcpkit"][phase], servers["mcp"][phase]
        ratios[f"{phase}: wall mcpkit/mcp"] = kit["wall_per_call_s"] / mcp["wall_per_call_s"]
        ratios[f"{phase}: server CPU mcpkit/mcp"] = (
            kit["server_cpu_per_call_s"] / mcp["server_cpu_per_call_s"]
        )
        if kit["server_cpu_sched_per_call_s"] and mcp["server_cpu_sched_per_call_s"]:
            ratios[f"{phase}: server CPU (schedstat) mcpkit/mcp"] = (
                kit["server_cpu_sched_per_call_s"] / mcp["server_cpu_sched_per_call_s"]
            )
    return {
        "method": (
            "one raw NDJSON client (bench/_rawclient.py) per server process; pre-encoded "
            "requests, answers matched by id; server CPU = utime+stime from /proc/<pid>/stat "
            "(SC_CLK_TCK ticks) over the measured phase, cross-checked with the sum of "
            "/proc/<pid>/task/*/schedstat; medians over repeats"
        ),
        "config": {
            "sequential_calls": config.sequential_calls,
            "concurrent_calls": config.concurrent_calls,
            "window": config.window,
            "warmup_calls": config.warmup_calls,
            "repeats": config.repeats,
            "timeout_s": config.timeout_s,
            "text": ECHO_TEXT,
            "clk_tck": CLK_TCK,
            "server_cpu_affinity": cpu,
        },
        "servers": servers,
        "ratios": ratios,
    }
