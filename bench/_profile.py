"""``python -m bench profile``: where the mcpkit server spends its CPU time.

Two profiles, printed as the top functions by own time (``tottime``):

1. the mcpkit stdio server (``mcpkit run examples/echo.py``) under cProfile while it answers
   ``tools/call echo`` with ``window`` calls in flight; profiling is switched on after the
   warm-up and off before shutdown with signals (see :mod:`bench._profiled_server`), so
   start-up is not in it. The stats file is kept in ``bench/results/``.
2. the in-process codec op of the codec benchmark (mcpkit contender).

cProfile adds a fixed cost per Python call, so it over-weights many small functions; use the
shares to rank hot spots, not as absolute times.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._codec import PAYLOADS, mcpkit_op, request_bytes
from ._rawclient import RawServer, ServerError, build_calls
from ._servers import ECHO_TEXT, ROOT, SERVERS, expected_result_bytes

__all__ = ["run_profile"]


def _top(stats: pstats.Stats, limit: int) -> str:
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(limit)
    text = out.getvalue()
    return text[text.find("   ncalls") :] if "   ncalls" in text else text


def _component(key: tuple[str, int, str]) -> str:
    path, _, name = key
    if path == "~":
        if any(call in name for call in ("posix.write", "posix.read", "epoll", "select.")):
            return "system calls (write/read/epoll)"
        if "msgspec" in name:
            return "msgspec (C)"
        return "other built-ins"
    if "/mcpkit/" in path:
        return "mcpkit"
    if "/anyio/" in path or "/sniffio/" in path:
        return "anyio (+ sniffio)"
    if "/asyncio/" in path or path.endswith(("selectors.py", "contextvars.py")):
        return "asyncio (stdlib)"
    return "other Python"


def _by_component(stats: pstats.Stats) -> str:
    """Own time (tottime) summed by library: where the CPU goes, coarsely."""
    totals: dict[str, float] = {}
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    for key, (_, _, tottime, _, _) in raw.items():
        component = _component(key)
        totals[component] = totals.get(component, 0.0) + tottime
    grand = sum(totals.values()) or 1.0
    lines = ["   own time by component (share of the profiled total):"]
    for component, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        lines.append(f"     {component:34} {seconds:7.3f} s  {100 * seconds / grand:5.1f} %")
    return "\n".join(lines)


def _wait_for_file(path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    size = -1
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size == size and size > 0:
            return
        size = path.stat().st_size if path.exists() else -1
        time.sleep(0.1)
    raise ServerError(f"the profiled server wrote no stats to {path} within {timeout} s")


def profile_server(
    out: Path, calls: int, window: int, timeout: float, log: Callable[[str], None]
) -> str:
    argv = [sys.executable, "-m", "bench._profiled_server", str(out), *SERVERS["mcpkit"][1:]]
    if out.exists():
        out.unlink()
    with RawServer(argv, timeout=timeout, cwd=str(ROOT)) as server:
        server.initialize()
        expect = expected_result_bytes("mcpkit")
        server.call_many(build_calls(1, 300, ECHO_TEXT), 1, 8, expect)
        os.kill(server.pid, signal.SIGUSR1)
        time.sleep(0.1)
        phase = server.call_many(build_calls(1000, calls, ECHO_TEXT), 1000, window, expect)
        os.kill(server.pid, signal.SIGUSR2)
        _wait_for_file(out, timeout)
    log(
        f"  profiled phase: {calls} calls, {window} in flight, server CPU "
        f"{phase.server_cpu_s / calls * 1e6:.1f} us/call under cProfile"
    )
    stats = pstats.Stats(str(out))
    return _by_component(stats) + "\n\n" + _top(stats, 35)


def profile_codec(loops: int) -> str:
    op = mcpkit_op(request_bytes(*PAYLOADS["small"]))
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(loops):
        op()
    profiler.disable()
    return _top(pstats.Stats(profiler), 25)


def run_profile(
    results_dir: Path, *, calls: int, window: int, timeout: float, log: Callable[[str], None]
) -> None:
    results_dir.mkdir(parents=True, exist_ok=True)
    out = results_dir / "mcpkit_server.prof"
    log(f"== cProfile: mcpkit server, tools/call echo, {window} in flight ==")
    log(profile_server(out, calls, window, timeout, log))
    log(f"  (stats kept in {out}; browse with: python -m pstats {out})")
    log("== cProfile: mcpkit codec op (decode request + encode result), small payload ==")
    log(profile_codec(20_000))
