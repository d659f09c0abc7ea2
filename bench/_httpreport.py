"""The HTTP section's printed tables and its targets."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["http_targets", "render_http"]

#: (ratio key, limit, wording)
_CPU_TARGETS: Final = (
    ("cpu mcpkit/mcp", 0.25, "server CPU/request <= 1/4 of mcp's"),
    ("cpu mcpkit/bare", 1.5, "server CPU/request <= 1.5x the bare ASGI floor's"),
)
_MEMORY_LIMIT: Final = 0.2
#: The modes the CPU targets are for (the handshake era's JSON and SSE answers).
_TARGET_MODES: Final = ("stateful+sse", "stateful+json", "stateless+json")


def _us(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    us = seconds * 1e6
    if us >= 1000:
        return f"{us:,.0f} us"
    if us >= 100:
        return f"{us:.0f} us"
    if us >= 10:
        return f"{us:.1f} us"
    return f"{us:.2f} us"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    line = fmt(header)
    return [line, "-" * len(line), *(fmt(row) for row in rows)]


def render_http(http: dict[str, Any]) -> list[str]:
    cfg = http["config"]
    aff = http["affinity"]
    lines = [
        f"== Streamable HTTP: tools/call echo under wrk ({cfg['duration_s']} s per run, median "
        f"of {cfg['repeats']}; servers on CPU {aff['server_cpu']}, wrk on CPU {aff['wrk_cpu']}) ==",
    ]
    header = [
        "server / mode",
        "clients",
        "req/s",
        "server CPU/req",
        "(schedstat)",
        "server CPU use",
        "wrk CPU/req",
        "wrk CPU use",
        "p50",
        "p99",
    ]
    rows = []
    for name, server in http["servers"].items():
        for c in cfg["connections"]:
            row = server["rows"].get(str(c))
            if row is None:
                rows.append([name, str(c), "FAILED", *[""] * 7])
                continue
            cpu = row["server_cpu_per_request_s"]
            res = row["server_cpu_resolution_per_request_s"]
            rows.append(
                [
                    name,
                    str(c),
                    f"{row['requests_per_s']:,.0f}",
                    f"< {_us(res)}" if cpu < res else _us(cpu),
                    _us(row["server_cpu_sched_per_request_s"]),
                    f"{100 * row['server_cpu_utilisation']:.0f} %",
                    _us(row["wrk_cpu_per_request_s"]),
                    f"{100 * row['wrk_cpu_utilisation']:.0f} %",
                    _us(row["latency_p50_s"]),
                    _us(row["latency_p99_s"]),
                ]
            )
    lines += _table(header, rows)
    lines.append(
        "(req/s and server CPU over a window inside each run: from 0.25 s after wrk starts to "
        "0.1 s before it stops; server CPU = /proc/<pid>/stat utime+stime / answers in the "
        "window; CPU use: share of one core; wrk CPU: its rusage over the run, both threads; "
        "p50/p99: wrk's, whole run)"
    )
    lines.append("")
    header = ["mode", "clients", "CPU mcpkit/mcp", "(range)", "CPU mcpkit/bare", "(range)"]
    header += ["CPU mcpkit/flat", "req/s mcpkit/mcp"]
    rows = []
    for r in http["ratios"].values():
        rows.append([r["mode"], str(r["connections"])])
        for key in ("cpu mcpkit/mcp", "cpu mcpkit/bare"):
            span = r[f"{key} range"]
            rows[-1] += [_ratio(r[key]), f"{span[0]:.2f}-{span[1]:.2f}" if span else ""]
        rows[-1] += [_ratio(r["cpu mcpkit/flat"]), _ratio(r["req/s mcpkit/mcp"])]
    lines += _table(header, rows)
    lines.append(
        "(ratios: the median over the repeats of the ratio within each repeat, and its range)"
    )
    lines.append("")
    header = [
        "server",
        "sessions",
        "RSS before",
        "RSS after",
        "per session",
        "after 1 call each",
        "per used session",
        "CPU per open",
    ]
    lines += _table(
        header,
        [
            [
                name,
                str(m["sessions"]),
                f"{m['rss_before_bytes'] / 2**20:.1f} MiB",
                f"{m['rss_after_bytes'] / 2**20:.1f} MiB",
                f"{m['rss_per_session_bytes'] / 1024:.1f} KiB",
                f"{m['rss_after_one_call_each_bytes'] / 2**20:.1f} MiB",
                f"{m['rss_per_used_session_bytes'] / 1024:.1f} KiB",
                _us(m["server_cpu_per_session_open_s"]),
            ]
            for name, m in http["memory"].items()
        ],
    )
    lines.append(f"  memory/session mcpkit/mcp: {_ratio(http['memory_ratio'])}")
    lines += [f"  FAILED: {failure}" for failure in http["failures"]]
    return lines


def http_targets(http: dict[str, Any]) -> list[dict[str, Any]]:
    """One target line per mode and ratio: the worst ratio over the connection counts."""
    targets: list[dict[str, Any]] = []
    ratios = list(http["ratios"].values())
    modes = list(dict.fromkeys(r["mode"] for r in ratios))
    for key, limit, wording in _CPU_TARGETS:
        for mode in modes:
            if mode not in _TARGET_MODES:
                continue  # (measured and shown, but not one of the targets)
            values = [(r["connections"], r[key]) for r in ratios if r["mode"] == mode]
            measured = [v for _, v in values if v is not None]
            if not measured:
                continue
            each = "/".join(f"{v:.2f}" if v is not None else "n/a" for _, v in values)
            clients = "/".join(str(c) for c, _ in values)
            worst = max(measured)
            targets.append(
                {
                    "target": f"http {mode}: mcpkit {wording} (at {clients} clients: {each}; "
                    "worst shown)",
                    "ratio": key.removeprefix("cpu "),
                    "measured": worst,
                    "limit": limit,
                    "met": worst <= limit and len(measured) == len(values),
                }
            )
    if http.get("memory_ratio") is not None:
        ratio = http["memory_ratio"]
        targets.append(
            {
                "target": "http: mcpkit memory per open session <= 1/5 of mcp's",
                "ratio": "mcpkit/mcp",
                "measured": ratio,
                "limit": _MEMORY_LIMIT,
                "met": ratio <= _MEMORY_LIMIT,
            }
        )
    return targets
