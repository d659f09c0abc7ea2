"""Start-to-first-answer benchmark: how long a fresh stdio server takes to be useful.

One run: start the clock, spawn the server (``subprocess.Popen``), write ``initialize`` at
once (a real client does not wait either: the bytes sit in the pipe until the server reads
them), read its answer, write ``notifications/initialized`` and one ``tools/call echo``,
read that answer, stop the clock. The server's CPU time at that moment
(``/proc/<pid>/stat``) is recorded too. Then stdin is closed and the exit awaited (bounded).

Runs are interleaved across servers (one of each in turn) after one untimed warm-up run
each (so every server starts with warm OS page caches); the median of the timed runs is
reported. mcpkit's package is byte-compiled first, as an installed wheel is: with
``PYTHONDONTWRITEBYTECODE`` set (as in this sandbox) an editable install would otherwise
compile every changed module at each start, which no user's install does. The official
SDK's files were compiled when pip installed them.
"""

from __future__ import annotations

import compileall
import importlib.util
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._rawclient import INIT_PARAMS, RawServer, ServerError
from ._servers import ECHO_TEXT, ROOT, SERVERS

__all__ = ["run_startup"]


def start_once(name: str, timeout: float, cpu: int | None) -> dict[str, float]:
    server = RawServer(SERVERS[name], timeout=timeout, cwd=str(ROOT), cpu=cpu)
    try:
        start = time.perf_counter()
        server.start()
        server.send_json({"id": "init", "method": "initialize", "params": INIT_PARAMS})
        server.receive_json("init")
        initialized = time.perf_counter() - start
        server.send_json({"method": "notifications/initialized"})
        server.send_json(
            {
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": ECHO_TEXT}},
            }
        )
        reply = server.receive_json(1)
        first_answer = time.perf_counter() - start
        cpu_s = server.cpu_seconds()
        if "result" not in reply:
            raise ServerError(f"{name}: first tools/call failed: {reply}")
    finally:
        server.close()
    return {"initialize_s": initialized, "first_answer_s": first_answer, "server_cpu_s": cpu_s}


def run_startup(
    *, runs: int, warmup: int, timeout: float, cpu: int | None, log: Callable[[str], None]
) -> dict[str, Any]:
    """Run the start-up benchmark; returns the JSON-ready section."""
    spec = importlib.util.find_spec("mcpkit")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(Path(spec.origin).parent, quiet=1)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
    for i in range(warmup + runs):
        for name in SERVERS:
            sample = start_once(name, timeout, cpu)
            if i >= warmup:
                samples[name].append(sample)
    servers: dict[str, Any] = {}
    for name, runs_of in samples.items():
        first = [s["first_answer_s"] for s in runs_of]
        servers[name] = {
            "argv": SERVERS[name],
            "first_answer_median_s": statistics.median(first),
            "first_answer_min_s": min(first),
            "first_answer_max_s": max(first),
            "initialize_median_s": statistics.median(s["initialize_s"] for s in runs_of),
            "server_cpu_median_s": statistics.median(s["server_cpu_s"] for s in runs_of),
            "samples": runs_of,
        }
        log(f"  {name:7} first answer after {servers[name]['first_answer_median_s'] * 1e3:7.1f} ms")
    return {
        "method": (
            "spawn -> initialize -> initialized -> one tools/call answered; median of runs, "
            "servers interleaved, after untimed warm-up runs"
        ),
        "runs": runs,
        "warmup_runs": warmup,
        "server_cpu_affinity": cpu,
        "servers": servers,
        "ratios": {
            "first answer mcpkit/mcp": (
                servers["mcpkit"]["first_answer_median_s"] / servers["mcp"]["first_answer_median_s"]
            ),
            "first answer mcpkit/bare": (
                servers["mcpkit"]["first_answer_median_s"]
                / servers["bare"]["first_answer_median_s"]
            ),
        },
    }
