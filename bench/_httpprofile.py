"""``python -m bench profile-http``: where the mcpkit Streamable HTTP server spends its CPU.

For each mode (stateful with SSE answers, stateful with JSON, stateless with JSON) this
starts the mcpkit server, loads it with wrk (16 connections, as in ``python -m bench http``)
and samples it meanwhile with py-spy (``py-spy record --format raw``; idle samples, where
the event loop waits in ``epoll``, are left out). It prints own time by component, the top
functions by own time, and the inclusive share of mcpkit's functions, each also in
microseconds per request (share x the server's measured CPU time per request). The raw
stacks are kept in ``bench/results/http-profile-<mode>.txt``.

py-spy is not a project dependency: ``.venv/bin/pip install py-spy`` first. A sampling
profiler leaves the server's code unchanged, so, unlike cProfile, it does not inflate small
Python functions; shares under about 1 % are noise.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import httpx

from ._http import CONTENDERS, MODES, cpu_per_request, cpus_for_load, requests_per_s
from ._httpload import HttpServerProcess, open_sessions, run_wrk
from ._rawclient import ServerError
from ._servers import ECHO_TEXT, ROOT

__all__ = ["run_http_profile"]

_COMPONENTS: Final = (
    ("/mcpkit/", "mcpkit"),
    ("/bench/", "bench"),
    ("/uvicorn/", "uvicorn"),
    ("/anyio/", "anyio (+ sniffio)"),
    ("/sniffio/", "anyio (+ sniffio)"),
    ("/asyncio/", "asyncio (stdlib; socket writes included)"),
    ("selectors.py", "asyncio (stdlib; socket writes included)"),
    ("ipaddress.py", "ipaddress (stdlib)"),
)
_FRAME: Final = re.compile(r"^(?P<func>.*) \((?P<path>.*):(?P<line>\d+)\)$")


def _py_spy() -> str | None:
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


def _split(frame: str) -> tuple[str, str]:
    """(function, path) of a py-spy frame ``func (path:line)``."""
    match = _FRAME.match(frame)
    return (match["func"], match["path"]) if match else (frame, "")


def _component(path: str) -> str:
    path = "/" + path  # py-spy shows paths relative to sys.path: "mcpkit/server/x.py"
    for needle, name in _COMPONENTS:
        if needle in path:
            return name
    return "other"


_ENTRY: Final = ("run", "main", "<module>", "LowLevelServer.run")
_SEND: Final = ("_SelectorSocketTransport.write", "asyncio/selector_events.py")


def _responsible(frames: list[tuple[str, str]]) -> str:
    """The innermost mcpkit function of a stack (the mcpkit code that caused the sample),
    with socket writes and the code below mcpkit (uvicorn, the event loop) apart."""
    if (frames[-1][0], frames[-1][1].split("site-packages/")[-1]) == _SEND:
        return "[socket writes: the send syscalls]"
    for func, path in reversed(frames):
        if _component(path) == "mcpkit" and func not in _ENTRY and "/_uvicorn.py" not in path:
            return f"{func} ({path.rsplit('mcpkit/', 1)[1]})"
    return "[no mcpkit frame: uvicorn, httptools, the event loop]"


def summarise(raw: str, cpu_per_request_s: float, top: int) -> str:
    """Own time by component, top own-time functions, time by responsible mcpkit function,
    inclusive mcpkit functions."""
    own: Counter[str] = Counter()
    components: Counter[str] = Counter()
    responsible: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [_split(frame) for frame in stack.split(";")]
        func, path = frames[-1]
        own[f"{func} ({path.split('site-packages/')[-1]})"] += count
        components[_component(path)] += count
        responsible[_responsible(frames)] += count
        seen = set()
        for func, path in frames:
            if _component(path) == "mcpkit" and func not in seen and func not in _ENTRY:
                seen.add(func)
                inclusive[f"{func} ({path.rsplit('mcpkit/', 1)[1]})"] += count
    if not total:
        return "  (no samples)"
    us = cpu_per_request_s * 1e6 / total

    def rows(counts: Counter[str], limit: int | None = None) -> list[str]:
        return [
            f"    {100 * n / total:5.1f} %  {n * us:6.1f} us/req  {name}"
            for name, n in counts.most_common(limit)
        ]

    return "\n".join(
        [
            f"  {total} samples; server CPU {cpu_per_request_s * 1e6:.0f} us/request",
            "  own time by component:",
            *rows(components),
            "  top functions by own time:",
            *rows(own, top),
            "  time by the innermost mcpkit function on the stack (what mcpkit code caused it):",
            *rows(responsible, top),
            "  mcpkit functions, inclusive:",
            *rows(inclusive, top),
        ]
    )


def _profile_mode(
    mode: str, spy: str, duration_s: int, out: Path, log: Callable[[str], None]
) -> str:
    load_cpu, server_cpu = cpus_for_load()
    argv = CONTENDERS[f"mcpkit {mode}"][2]
    with (
        HttpServerProcess(argv, cwd=str(ROOT), cpu=server_cpu) as server,
        httpx.Client(timeout=10.0) as client,
        tempfile.TemporaryDirectory(prefix="mcpkit-bench-") as tmp,
    ):
        sessions = None
        if mode.startswith("stateful"):
            sessions = Path(tmp) / "sessions.txt"
            sessions.write_text("\n".join(open_sessions(client, server.url, 16, server)) + "\n")

        def load(seconds: int) -> dict[str, Any]:
            return run_wrk(
                server.url,
                server.pid,
                connections=16,
                duration_s=seconds,
                sessions_file=sessions,
                text=ECHO_TEXT,
                cpu=load_cpu,
            )

        load(1)  # warm-up
        spy_argv = [spy, "record", "--pid", str(server.pid), "--duration", str(duration_s)]
        spy_argv += ["--rate", "250", "--nonblocking", "--format", "raw", "--output", str(out)]
        profiler = subprocess.Popen(
            spy_argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            run = load(duration_s + 2)
            _, err = profiler.communicate(timeout=30)
        finally:
            with contextlib.suppress(OSError):
                profiler.kill()
            profiler.wait(timeout=10)
    if profiler.returncode != 0 or not out.exists():
        raise ServerError(f"py-spy failed ({profiler.returncode}): {err.decode()[-1000:]}")
    log(f"  {mode}: {requests_per_s(run):,.0f} req/s while sampled")
    return summarise(out.read_text(), cpu_per_request(run), top=25)


def run_http_profile(results_dir: Path, *, duration_s: int, log: Callable[[str], None]) -> int:
    spy = _py_spy()
    if spy is None:
        log("profile-http needs py-spy: .venv/bin/pip install py-spy (not a project dependency)")
        return 2
    results_dir.mkdir(parents=True, exist_ok=True)
    for mode in MODES:
        out = results_dir / f"http-profile-{mode.replace('+', '-')}.txt"
        log(f"== py-spy: mcpkit Streamable HTTP server, {mode}, 16 connections ==")
        print(_profile_mode(mode, spy, duration_s, out, log), flush=True)
        log(f"  (raw stacks in {out})")
    return 0
