"""HTTP client benchmark (``python -m bench http-client``): serial ``tools/call echo``
from each client to the same server, client CPU and wall time per call.

Clients, each its own process, taking turns (the order rotating at each repeat):

* ``mcpkit``: ``mcpkit.client.Client(url, era="handshake")``: its own httpx client, on
  mcpkit's HTTP/1.1 connection layer (``HTTP1Transport``);
* ``mcp``: the official SDK's ``mcp.client.client.Client(url, mode="legacy")`` (pinned in
  ``dev``), the handshake era as well;
* ``mcpkit 2026``, ``mcp 2026``: the same clients speaking the 2026-07-28 revision (which
  both pick by themselves against a server offering it, as the echo example does): no
  session, each request with its ``_meta`` and ``Mcp-Method`` / ``Mcp-Name`` headers;
* ``httpx``: a bare ``httpx.AsyncClient`` (httpx's default connection layer, httpcore)
  POSTing the same request with the session's headers and decoding the JSON answer: not an
  MCP client, the cost of the HTTP stack alone that any client on httpx's defaults pays.

The server is mcpkit's echo example (stateful), once with JSON answers and once with SSE
answers, pinned to one CPU, the clients to the other (when there are two). Each client
makes ``warmup`` calls, then ``calls`` timed ones; reported: the medians over the repeats
of the client's own CPU time per call (``time.process_time``) and the wall time per call.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

from ._http import cpus_for_load
from ._httpload import HttpServerProcess
from ._rawclient import ServerError
from ._servers import ECHO_TEXT, ROOT

__all__ = ["run_http_client"]

CLIENTS: Final = ("mcpkit", "mcp", "mcpkit 2026", "mcp 2026", "httpx")
#: Each client's row is compared with the official SDK's in the same era.
_BASELINE: Final = {
    "mcpkit": "mcp",
    "mcp": "mcp",
    "mcpkit 2026": "mcp 2026",
    "mcp 2026": "mcp 2026",
    "httpx": "mcp",
}
SERVER_MODES: Final = {"json": ["--json-response"], "sse": []}
_SERVER: Final = [sys.executable, "-m", "mcpkit", "run", "examples/echo.py"]
_SERVER_ARGS: Final = ["--transport", "http", "--port", "0"]


async def _timed(
    call: Callable[[int], Awaitable[str]], calls: int, warmup: int
) -> tuple[str, float, float]:
    """(the last call's text, CPU seconds, wall seconds) of ``calls`` calls after
    ``warmup`` untimed ones."""
    for i in range(warmup):
        await call(i + 1)
    text = ""
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(calls):
        text = await call(warmup + i + 1)
    return text, time.process_time() - cpu, time.perf_counter() - wall


async def _drive(name: str, url: str, calls: int, warmup: int) -> dict[str, float]:
    arguments = {"text": ECHO_TEXT}
    if name.startswith("mcpkit"):
        from mcpkit.client import Client

        era: Literal["2026-07-28", "handshake"] = (
            "2026-07-28" if name.endswith("2026") else "handshake"
        )
        async with Client(url, era=era) as client:

            async def mcpkit_call(_: int) -> str:
                result = await client.call_tool("echo", arguments)
                return str(result.content[0].text)  # type: ignore[union-attr]

            text, cpu, wall = await _timed(mcpkit_call, calls, warmup)
    elif name.startswith("mcp"):
        from mcp.client.client import Client as OfficialClient

        mode = "2026-07-28" if name.endswith("2026") else "legacy"
        async with OfficialClient(url, mode=mode) as official:

            async def official_call(_: int) -> str:
                answer = await official.call_tool("echo", arguments)
                return str(answer.content[0].text)  # type: ignore[union-attr]

            text, cpu, wall = await _timed(official_call, calls, warmup)
    else:
        text, cpu, wall = await _drive_httpx(url, calls, warmup)
    if text != ECHO_TEXT:
        raise ServerError(f"{name}: the echo came back as {text!r}")
    return {"cpu_us": cpu / calls * 1e6, "wall_us": wall / calls * 1e6}


async def _drive_httpx(url: str, calls: int, warmup: int) -> tuple[str, float, float]:
    import httpx

    headers = {"accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(url, json=init, headers=headers)
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-06-18"
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post(url, json=done, headers=headers)

        async def call(i: int) -> str:
            request = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": ECHO_TEXT}},
            }
            response = await client.post(url, json=request, headers=headers)
            body = response.text
            if response.headers["content-type"].startswith("text/event-stream"):
                body = next(
                    line[5:] for line in body.splitlines() if line.startswith("data:") and line[5:]
                )
            return str(json.loads(body)["result"]["content"][0]["text"])

        return await _timed(call, calls, warmup)


def _one(name: str, url: str, calls: int, warmup: int, cpu: int | None) -> dict[str, float]:
    argv = [sys.executable, "-m", "bench._httpclient", name, url, str(calls), str(warmup)]
    proc = subprocess.Popen(
        argv, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if cpu is not None:
        os.sched_setaffinity(proc.pid, {cpu})
    try:
        out, err = proc.communicate(timeout=120 + calls * 0.01)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise ServerError(f"the {name} client did not finish within its bound") from None
    if proc.returncode != 0:
        raise ServerError(f"the {name} client failed (status {proc.returncode}):\n{err[-2000:]}")
    return dict(json.loads(out.strip().splitlines()[-1]))


def run_http_client(
    *, calls: int, warmup: int, repeats: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """Run every client against each server mode; print the table, return the figures.

    Raises:
        ServerError: a server or a client failed.
    """
    client_cpu, server_cpu = cpus_for_load()
    results: dict[str, Any] = {"calls": calls, "warmup": warmup, "repeats": repeats}
    for mode, flags in SERVER_MODES.items():
        with HttpServerProcess(
            [*_SERVER, *_SERVER_ARGS, *flags], cwd=str(ROOT), cpu=server_cpu
        ) as server:
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in CLIENTS}
            for repeat in range(repeats):
                turn = repeat % len(CLIENTS)
                order = CLIENTS[turn:] + CLIENTS[:turn]
                for name in order:
                    log(f"http-client: {mode} server, {name} client, repeat {repeat + 1} ...")
                    runs[name].append(_one(name, server.url, calls, warmup, client_cpu))
        results[mode] = {
            name: {
                key: statistics.median(run[key] for run in runs[name])
                for key in ("cpu_us", "wall_us")
            }
            for name in CLIENTS
        }
    _print(results)
    return results


def _print(results: dict[str, Any]) -> None:
    print(
        f"\nHTTP client: {results['calls']} serial tools/call echo, medians of "
        f"{results['repeats']} runs (client CPU and wall time per call, us)"
    )
    print("(the ratios against the official SDK's client in the same era)")
    print(f"{'server':<8}{'client':<13}{'CPU':>6}{'wall':>6}{'CPU / mcp':>11}{'wall / mcp':>12}")
    for mode in SERVER_MODES:
        rows = results[mode]
        for name in CLIENTS:
            row, base = rows[name], rows[_BASELINE[name]]
            print(
                f"{mode:<8}{name:<13}{row['cpu_us']:>6.0f}{row['wall_us']:>6.0f}"
                f"{row['cpu_us'] / base['cpu_us']:>11.3f}{row['wall_us'] / base['wall_us']:>12.3f}"
            )


if __name__ == "__main__":
    import anyio

    name, url, calls, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(anyio.run(_drive, name, url, calls, warmup)))
