"""``python -m bench http-icount``: instructions per Streamable HTTP request, server side.

Wall-clock CPU times of HTTP servers on a shared VM move by 20 to 30 % between runs, as
much as most changes to the code. This counts instead, with valgrind's callgrind, the
instructions the whole server process executes (uvicorn, httptools, the event loop and
the app) per ``tools/call echo`` POST: each server answers ``N0`` and, in a fresh process,
``N`` sequential POSTs on one keep-alive connection after the same set-up (start-up,
``initialize`` for the stateful modes); the difference over ``N - N0`` requests is the cost
of one. ``PYTHONHASHSEED=0`` makes the counts repeatable to a few hundred instructions.
The contenders are those of ``python -m bench http`` without the official SDK (whose
servers do not exit cleanly on a signal under valgrind in time): the bare ASGI floor and
mcpkit's three modes. Takes about a minute on 2 cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from ._http import CONTENDERS
from ._httpload import HttpServerProcess
from ._rawclient import ServerError
from ._servers import ECHO_TEXT, ROOT

__all__ = ["run_http_icount"]

N0: Final = 300
N: Final = 1_300
NAMES: Final = ("bare json", "mcpkit stateful+json", "mcpkit stateful+sse", "mcpkit stateless+json")
_COLLECTED: Final = re.compile(r"Collected : (\d+)")
_TIMEOUT: Final = 120.0  # every step under valgrind (about 50 times slower)


def _post(sock: socket.socket, host: str, body: bytes, extra: bytes) -> tuple[bytes, bytes]:
    """One POST on a kept-alive connection; returns the headers and the body."""
    sock.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        b"%sContent-Length: %d\r\n\r\n%s" % (host.encode(), extra, len(body), body)
    )
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ServerError("the server closed the connection")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    length = int(match.group(1)) if match else 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ServerError("the server closed the connection mid-answer")
        rest += chunk
    return head, rest


def _drive(url: str, requests: int, stateful: bool) -> None:
    host = url.split("//", 1)[1].split("/", 1)[0]
    name, _, port = host.rpartition(":")
    with socket.create_connection((name, int(port)), timeout=_TIMEOUT) as sock:
        extra = b""
        if stateful:
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            }
            head, _ = _post(sock, host, json.dumps(init).encode(), b"")
            found = re.search(rb"(?i)\r\nmcp-session-id: *([!-~]+)", head)
            if found is None:
                raise ServerError(f"no session id in {head[:200]!r}")
            extra = b"Mcp-Session-Id: " + found.group(1) + b"\r\n"
            _post(sock, host, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', extra)
        for rid in range(10, 10 + requests):
            body = (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
                b'"arguments":{"text":"%s"}}}' % (rid, ECHO_TEXT.encode())
            )
            head, answer = _post(sock, host, body, extra)
            if not head.startswith(b"HTTP/1.1 200") or ECHO_TEXT.encode() not in answer:
                raise ServerError(f"bad answer: {head[:100]!r} {answer[:200]!r}")


def _count(name: str, requests: int) -> int:
    _, mode, argv = CONTENDERS[name]
    server = HttpServerProcess(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=str(ROOT),
        timeout=_TIMEOUT,
    )
    os.environ["PYTHONHASHSEED"] = "0"  # inherited by the server
    with server:
        _drive(server.url, requests, stateful=mode.startswith("stateful"))
        assert server.proc is not None
        # SIGINT: uvicorn shuts down gracefully and valgrind reports (stop() would send
        # SIGTERM and give up after 6 s, too soon under valgrind).
        server.proc.send_signal(signal.SIGINT)
        try:
            server.proc.wait(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise server.fail("the server did not stop within the timeout") from None
    found = _COLLECTED.findall(server.stderr_tail(100_000))
    if not found:
        raise server.fail("no instruction count in valgrind's output")
    return int(found[-1])


def run_http_icount(*, log: Callable[[str], None]) -> int:
    """Print instructions per request for each server and its ratio to the floor."""
    if shutil.which("valgrind") is None:
        log("http-icount needs valgrind (apt-get install valgrind)")
        return 2
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {(name, n): pool.submit(_count, name, n) for name in NAMES for n in (N0, N)}
        per_request = {
            name: (runs[name, N].result() - runs[name, N0].result()) / (N - N0) for name in NAMES
        }
    floor = per_request["bare json"]
    print(f"{'server':<24}{'instructions/request':>22}{'/ bare':>9}")
    print("-" * 55)
    for name in NAMES:
        print(f"{name:<24}{per_request[name]:>22,.0f}{per_request[name] / floor:>9.3f}")
    log(f"http-icount took {time.perf_counter() - started:.0f} s")
    return 0
