"""The run's environment, the targets, the printed tables and the JSON file."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from ._servers import ROOT

__all__ = ["environment", "evaluate_targets", "render", "source_digest", "write_json"]

_PACKAGES: Final = ("mcpkit", "msgspec", "anyio", "mcp", "mcp-types", "pydantic", "pydantic-core")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.rstrip()


def _tree_digest(package_dir: Path) -> str:
    """sha256 over the measured mcpkit package and the examples, to tie results to an exact
    (possibly uncommitted) state of the code."""
    digest = hashlib.sha256()
    for path in sorted([*package_dir.rglob("*.py"), *(ROOT / "examples").rglob("*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _package_dir() -> Path:
    import mcpkit

    return Path(mcpkit.__file__).resolve().parent


def source_digest() -> str:
    """The digest of the measured mcpkit sources, now."""
    return _tree_digest(_package_dir())


def environment() -> dict[str, Any]:
    package_dir = _package_dir()
    from_repo = package_dir == (ROOT / "src" / "mcpkit").resolve()
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain", "--", "src", "examples")
    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_average_at_start": list(os.getloadavg()),
        "packages": versions,
        "mcpkit_source": str(package_dir),
        "mcpkit_source_is_repo": from_repo,
        "mcpkit_tree_sha256": _tree_digest(package_dir),
        "repo_git_commit": _git("rev-parse", "--short", "HEAD"),
        "repo_src_uncommitted_changes": status.splitlines() if status is not None else None,
        "pythonpath": os.environ.get("PYTHONPATH"),
    }


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's stated targets, measured (reported, never asserted)."""
    targets: list[dict[str, Any]] = []
    codec = results.get("codec")
    if codec is not None:
        for payload, data in codec["payloads"].items():
            ratio = data["ratios"]["mcpkit-codec/bare"]
            targets.append(
                {
                    "target": f"codec ({payload}): mcpkit codec time within 2x of bare msgspec",
                    "ratio": "mcpkit-codec/bare",
                    "measured": ratio,
                    "limit": 2.0,
                    "met": ratio <= 2.0,
                }
            )
        counts = codec.get("instructions")
        if counts:
            ratio = counts["mcpkit-codec"] / counts["bare"]
            targets.append(
                {
                    "target": "codec (small): mcpkit codec instructions within 2x of bare msgspec",
                    "ratio": "mcpkit-codec/bare",
                    "measured": ratio,
                    "limit": 2.0,
                    "met": ratio <= 2.0,
                }
            )
    stdio = results.get("stdio")
    if stdio is not None:
        ratio = stdio["ratios"]["concurrent: server CPU mcpkit/mcp"]
        window = stdio["config"]["window"]
        targets.append(
            {
                "target": f"stdio: mcpkit server CPU/call at {window} in flight <= 1/10 of mcp's",
                "ratio": "mcpkit/mcp",
                "measured": ratio,
                "limit": 0.1,
                "met": ratio <= 0.1,
            }
        )
    startup = results.get("startup")
    if startup is not None:
        ratio = startup["ratios"]["first answer mcpkit/mcp"]
        targets.append(
            {
                "target": "startup: mcpkit start to first answer <= 1/4 of mcp's",
                "ratio": "mcpkit/mcp",
                "measured": ratio,
                "limit": 0.25,
                "met": ratio <= 0.25,
            }
        )
    if results.get("http") is not None:
        from ._httpreport import http_targets

        targets += http_targets(results["http"])
    return targets


# -- text rendering -------------------------------------------------------------------


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


def _cpu(seconds: float, resolution: float) -> str:
    """A /proc/<pid>/stat reading: below one clock tick it says so instead of 0."""
    return f"< {_us(resolution)}" if seconds < resolution else _us(seconds)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    line = fmt(header)
    return [line, "-" * len(line), *(fmt(row) for row in rows)]


def _render_codec(codec: dict[str, Any]) -> list[str]:
    lines = [
        f"== Codec: tools/call request decode + result encode, time per op "
        f"(best of {codec['repeats']}) ==",
    ]
    header = [
        "payload",
        "mcpkit",
        "codec",
        "bare",
        "mcp",
        "mcp-models",
        "mcpkit/bare",
        "codec/bare",
        "mcp/mcpkit",
    ]
    rows = []
    for payload, data in codec["payloads"].items():
        c = data["contenders"]
        r = data["ratios"]
        rows.append(
            [
                f"{payload} ({data['request_bytes']} B)",
                _us(c["mcpkit"]["best_s"]),
                _us(c["mcpkit-codec"]["best_s"]),
                _us(c["bare"]["best_s"]),
                _us(c["mcp"]["best_s"]),
                _us(c["mcp-models"]["best_s"]),
                f"{r['mcpkit/bare']:.2f}x",
                f"{r['mcpkit-codec/bare']:.2f}x",
                f"{r['mcp/mcpkit']:.2f}x",
            ]
        )
    lines += _table(header, rows)
    counts = codec.get("instructions")
    if counts:
        codec_ratio = counts["mcpkit-codec"] / counts["bare"]
        lines.append(
            "instructions per op (callgrind, small payload): "
            f"mcpkit {counts['mcpkit']:,.0f}, codec {counts['mcpkit-codec']:,.0f}, "
            f"bare {counts['bare']:,.0f}; codec/bare {codec_ratio:.2f}x, "
            f"mcpkit/bare {counts['mcpkit'] / counts['bare']:.2f}x"
        )
    lines.append(
        f"(harness overhead {_us(codec['loop_overhead_s'])}/op, not subtracted; "
        "mcpkit = the server's path incl. connection state, codec = decode_message + params "
        "+ encode_result, mcp = the SDK's full server path, mcp-models = its models only)"
    )
    return lines


def _render_stdio(stdio: dict[str, Any]) -> list[str]:
    cfg = stdio["config"]
    lines = [
        f"== stdio tools/call echo round trips (median of {cfg['repeats']} repeats; "
        f"sequential {cfg['sequential_calls']} calls, {cfg['window']} in flight "
        f"{cfg['concurrent_calls']} calls) ==",
    ]
    header = [
        "server / mode",
        "wall/call",
        "calls/s",
        "server CPU/call",
        "(schedstat)",
        "client CPU/call",
        "p50",
        "p99",
    ]
    rows = []
    for name, server in stdio["servers"].items():
        for phase, label in (("sequential", "1 in flight"), ("concurrent", "")):
            p = server[phase]
            rows.append(
                [
                    f"{name} {label or str(p['window']) + ' in flight'}",
                    _us(p["wall_per_call_s"]),
                    f"{p['calls_per_s']:,.0f}",
                    _cpu(p["server_cpu_per_call_s"], p["server_cpu_resolution_per_call_s"]),
                    _us(p["server_cpu_sched_per_call_s"]),
                    _us(p["client_cpu_per_call_s"]),
                    _us(p["latency_p50_s"]),
                    _us(p["latency_p99_s"]),
                ]
            )
    lines += _table(header, rows)
    seq_res = stdio["servers"]["mcpkit"]["sequential"]["server_cpu_resolution_per_call_s"]
    conc_res = stdio["servers"]["mcpkit"]["concurrent"]["server_cpu_resolution_per_call_s"]
    lines.append(
        f"(server CPU: /proc/<pid>/stat utime+stime, resolution {_us(seq_res)}/call sequential, "
        f"{_us(conc_res)}/call in flight; schedstat: ns, live threads)"
    )
    lines += [f"  {name}: {value:.3f}" for name, value in stdio["ratios"].items()]
    spread = ", ".join(
        f"{name} {_us(lo)} - {_us(hi)}"
        for name, server in stdio["servers"].items()
        for lo, hi in [server["concurrent"]["server_cpu_per_call_range_s"]]
    )
    lines.append(f"  (server CPU/call in flight, min - max over repeats: {spread})")
    return lines


def _render_startup(startup: dict[str, Any]) -> list[str]:
    lines = [
        f"== Start to first tools/call answer (median of {startup['runs']} runs, "
        f"after {startup['warmup_runs']} warm-up) ==",
    ]
    header = ["server", "first answer", "min", "max", "initialize answer", "server CPU"]
    rows = [
        [
            name,
            _ms(s["first_answer_median_s"]),
            _ms(s["first_answer_min_s"]),
            _ms(s["first_answer_max_s"]),
            _ms(s["initialize_median_s"]),
            _ms(s["server_cpu_median_s"]),
        ]
        for name, s in startup["servers"].items()
    ]
    lines += _table(header, rows)
    lines += [f"  {name}: {value:.3f}" for name, value in startup["ratios"].items()]
    return lines


def _render_http(http: dict[str, Any]) -> list[str]:
    from ._httpreport import render_http

    return render_http(http)


def render(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [
        f"mcpkit benchmarks, {env['date']}: Python {env['python']}, {env['cpu_count']} CPUs "
        f"({env['cpu_model']}), {env['platform']}",
        "packages: " + ", ".join(f"{k} {v}" for k, v in env["packages"].items()),
        (
            f"mcpkit from the repo at {env['repo_git_commit']}"
            + (" + uncommitted changes" if env["repo_src_uncommitted_changes"] else "")
            if env["mcpkit_source_is_repo"]
            else f"mcpkit from {env['mcpkit_source']} (not the repo's src/)"
        )
        + f", sources sha256 {env['mcpkit_tree_sha256']}",
        "",
    ]
    for key, render_section in (
        ("codec", _render_codec),
        ("stdio", _render_stdio),
        ("startup", _render_startup),
        ("http", _render_http),
    ):
        if key in results:
            lines += [*render_section(results[key]), ""]
    if results.get("targets"):
        lines.append("== Targets (ratios; reported, not asserted) ==")
        for t in results["targets"]:
            verdict = "met" if t["met"] else "MISSED"
            lines.append(
                f"  {t['target']}: {t['ratio']} = {t['measured']:.3f} "
                f"(target <= {t['limit']:g}) -> {verdict}"
            )
    lines.append(f"total run time {results['elapsed_s']:.1f} s")
    return "\n".join(lines)


def write_json(results: dict[str, Any], path: Path) -> list[Path]:
    """Write ``path`` and a timestamped copy next to it; return both paths."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=2, sort_keys=False) + "\n"
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    copy = path.parent / f"{'run' if path.stem == 'latest' else path.stem}-{stamp}.json"
    for target in (path, copy):
        target.write_text(text, encoding="utf-8")
    return [path, copy]
