"""Command line: ``python -m bench [SECTION ...] [--quick] [--pin] [--output PATH] ...``.

Sections: ``codec``, ``stdio``, ``startup``, ``http`` (default: all four; ``http`` needs
``wrk``, and is skipped with a warning from ``all`` when it is missing), ``profile``
(cProfile of the mcpkit stdio server and codec), ``profile-http`` (py-spy on the mcpkit
Streamable HTTP server under wrk), ``http-icount`` (instructions per HTTP request with
valgrind) and ``http-client`` (the HTTP clients' CPU per call against one server), each run
on its own. Prints a table to stdout
(progress goes to stderr) and writes JSON results. The exit status is 0 whatever the ratios
are (they are reported, not asserted); 1 if a server failed (timed out, exited, answered
wrongly).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Final

from ._rawclient import ServerError
from ._servers import ROOT

SECTIONS: Final = ("codec", "stdio", "startup", "http")
#: Sections that run on their own.
_SOLO: Final = ("profile-http", "http-icount", "http-inprocess", "http-client")
DEFAULT_OUTPUT: Final = ROOT / "bench" / "results" / "latest.json"

# name: (full, quick)
COUNTS: Final[dict[str, tuple[Any, Any]]] = {
    "codec_sample_s": (0.1, 0.02),
    "codec_repeats": (7, 3),
    "stdio_sequential": (2000, 200),
    "stdio_concurrent": (5000, 500),
    "stdio_warmup": (300, 50),
    "stdio_repeats": (5, 1),
    "startup_runs": (7, 3),
    "startup_warmup": (1, 1),
    "profile_calls": (5000, 1000),
    "http_connections": ((1, 16, 64), (1, 16, 64)),
    "http_duration_s": (1, 1),
    "http_warmup_s": (1, 1),
    "http_repeats": (5, 1),
    "http_memory_sessions": (1000, 200),
    "http_client_calls": (3000, 300),
    "http_client_repeats": (3, 1),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="mcpkit vs bare msgspec vs the official MCP SDK, side by side.",
    )
    parser.add_argument(
        "sections",
        nargs="*",
        default="all",  # a string: argparse checks a list default against the choices
        choices=[*SECTIONS, "all", *_SOLO, "profile"],
        help="what to run (default: all = codec stdio startup http; profile runs cProfile, "
        "profile-http py-spy on the HTTP server, http-icount counts the HTTP servers' "
        "instructions per request with valgrind, http-inprocess drives the HTTP apps in "
        "process, http-client times the HTTP clients against one server)",
    )
    parser.add_argument("--quick", action="store_true", help="small counts, for smoke runs")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"JSON results file (default: {DEFAULT_OUTPUT.relative_to(ROOT)}); a timestamped "
        "copy is written next to it",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="bound on every server read/write (s)"
    )
    parser.add_argument(
        "--window", type=int, default=32, help="calls in flight in the concurrent phase"
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="pin the client to one CPU and every server to another (default: let the OS "
        "schedule, as in real use; see bench/README.md for why this changes the numbers)",
    )
    return parser


def _pin(enabled: bool) -> tuple[int | None, int | None]:
    """(client CPU, server CPU): one core each when there are at least two."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not enabled or len(cpus) < 2:
        return None, None
    os.sched_setaffinity(0, {cpus[0]})
    return cpus[0], cpus[1]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run_solo(name: str, results: Path, n: dict[str, Any]) -> int:
    """One of the HTTP measurements that run on their own."""
    if name == "http-client":
        from ._httpclient import run_http_client

        run_http_client(
            calls=n["http_client_calls"],
            warmup=n["http_client_calls"] // 10,
            repeats=n["http_client_repeats"],
            log=_log,
        )
        return 0
    if name == "profile-http":
        from ._httpprofile import run_http_profile

        return run_http_profile(results, duration_s=8, log=_log)
    if name == "http-icount":
        from ._httpicount import run_http_icount

        return run_http_icount(log=_log)
    from ._httpinproc import run_http_inprocess

    return run_http_inprocess(log=_log)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    requested = [args.sections] if isinstance(args.sections, str) else args.sections
    n = {name: values[1 if args.quick else 0] for name, values in COUNTS.items()}
    if "profile" in requested:
        if len(requested) > 1:
            _log("`profile` runs on its own")
            return 2
        from ._profile import run_profile

        try:
            run_profile(
                args.output.parent,
                calls=n["profile_calls"],
                window=args.window,
                timeout=args.timeout,
                log=print,
            )
        except ServerError as exc:
            _log(f"benchmark failed: {exc}")
            return 1
        return 0
    for solo in _SOLO:
        if solo in requested:
            if len(requested) > 1:
                _log(f"`{solo}` runs on its own")
                return 2
            try:
                return _run_solo(solo, args.output.parent, n)
            except ServerError as exc:
                _log(f"benchmark failed: {exc}")
                return 1
    sections = list(SECTIONS) if "all" in requested else [s for s in SECTIONS if s in requested]

    from ._report import environment, evaluate_targets, render, source_digest, write_json

    started = time.perf_counter()
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    client_cpu, server_cpu = _pin(args.pin)
    results: dict[str, Any] = {
        "schema": 1,
        "quick": args.quick,
        "sections": sections,
        "environment": environment(),
        "affinity": {"client_cpu": client_cpu, "server_cpu": server_cpu},
    }
    try:
        if "codec" in sections:
            from ._codec import run_codec

            _log("codec ...")
            results["codec"] = run_codec(
                sample_s=n["codec_sample_s"],
                repeats=n["codec_repeats"],
                instructions=not args.quick,
            )
        if "stdio" in sections:
            from ._stdio import StdioConfig, run_stdio

            _log("stdio round trips ...")
            config = StdioConfig(
                sequential_calls=n["stdio_sequential"],
                concurrent_calls=n["stdio_concurrent"],
                window=args.window,
                warmup_calls=n["stdio_warmup"],
                repeats=n["stdio_repeats"],
                timeout_s=args.timeout,
            )
            results["stdio"] = run_stdio(config, cpu=server_cpu, log=_log)
        if "startup" in sections:
            from ._startup import run_startup

            _log("start to first answer ...")
            results["startup"] = run_startup(
                runs=n["startup_runs"],
                warmup=n["startup_warmup"],
                timeout=max(args.timeout, 30.0),
                cpu=server_cpu,
                log=_log,
            )
        if "http" in sections:
            from ._http import HttpConfig, run_http
            from ._httpload import wrk_path

            if wrk_path() is None and "all" in requested:
                _log("http: skipped, wrk is not installed (`make bench` installs it)")
                sections.remove("http")
            else:
                if affinity is not None:  # undo --pin: the HTTP section places its own
                    os.sched_setaffinity(0, affinity)
                _log("Streamable HTTP under wrk ...")
                http_config = HttpConfig(
                    connections=n["http_connections"],
                    duration_s=n["http_duration_s"],
                    warmup_s=n["http_warmup_s"],
                    repeats=n["http_repeats"],
                    memory_sessions=n["http_memory_sessions"],
                    timeout_s=args.timeout,
                )
                results["http"] = run_http(http_config, log=_log)
    except ServerError as exc:
        _log(f"benchmark failed: {exc}")
        return 1
    results["targets"] = evaluate_targets(results)
    results["elapsed_s"] = time.perf_counter() - started
    env = results["environment"]
    env["load_average_at_end"] = list(os.getloadavg())
    env["mcpkit_changed_during_run"] = source_digest() != env["mcpkit_tree_sha256"]
    if env["mcpkit_changed_during_run"]:
        _log("warning: mcpkit's sources changed while the benchmarks ran")
    print(render(results))
    for path in write_json(results, args.output):
        _log(f"wrote {path}")
    if results.get("http", {}).get("failures"):
        _log("http: some runs saw errors (see FAILED above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
