"""``python -m bench http-icount``: instructions per Streamable HTTP request, server side.

Wall-clock CPU times of HTTP servers on a shared VM move by 20 to 30 % between runs, as
much as most changes to the code. This counts instead, with valgrind's callgrind, the
instructions the whole server process executes (uvicorn, httptools, the event loop and
the app) per ``tools/call echo`` POST: each server answers ``N0`` and, in a fresh process,
``N`` sequential POSTs on one keep-alive connection after the same set-up (start-up,
``initialize`` for the stateful modes); the difference over ``N - N0`` requests is the cost
of one. ``PYTHONHASHSEED=0`` makes the counts repeatable to a few hundred instructions.
The contenders are those of ``python -m bench http`` without the official SDK (whose
servers do not exit cleanly on a signal under valgrind in time): the bare ASGI floor, the
flat reference endpoint and mcpkit's three modes.

The same is measured under concurrency: ``CONCURRENT`` keep-alive connections (stateful:
a session each), driven from one selector loop, each with one request in flight at a time,
as wrk keeps them (request ids ``connection * 1e9 + n``, as ``wrk_mcp.lua`` makes them).
Under valgrind the server is the bottleneck, so every event-loop pass finds many requests
ready: the per-pass costs (``epoll_wait``, the loop's bookkeeping) are shared, as under
wrk. This is what wall-clock CPU at 16 clients should be compared with; a 1-second wrk
run on a shared VM is not precise enough to tell modes apart. Takes about two minutes on
2 cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
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

__all__ = ["NAMES", "call_body", "run_http_icount"]

N0: Final = 300
N: Final = 1_300
#: Connections of the concurrent runs (each answers ``N0 // CONCURRENT`` or
#: ``N // CONCURRENT`` requests).
CONCURRENT: Final = 16
NAMES: Final = (
    "bare json",
    "flat stateful+json",
    "mcpkit stateful+json",
    "mcpkit stateful+sse",
    "mcpkit stateless+json",
)
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


def call_body(rid: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"%s"}}}' % (rid, ECHO_TEXT.encode())
    )


def _check(head: bytes, answer: bytes) -> None:
    if not head.startswith(b"HTTP/1.1 200") or ECHO_TEXT.encode() not in answer:
        raise ServerError(f"bad answer: {head[:100]!r} {answer[:200]!r}")


def _open_session(sock: socket.socket, host: str) -> bytes:
    """``initialize`` and ``notifications/initialized``; the ``Mcp-Session-Id`` header line."""
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
    return extra


def _drive(url: str, requests: int, stateful: bool) -> None:
    host = url.split("//", 1)[1].split("/", 1)[0]
    name, _, port = host.rpartition(":")
    with socket.create_connection((name, int(port)), timeout=_TIMEOUT) as sock:
        extra = _open_session(sock, host) if stateful else b""
        for rid in range(10, 10 + requests):
            _check(*_post(sock, host, call_body(rid), extra))


class _Client:
    """One keep-alive connection of a concurrent run: one request in flight at a time."""

    def __init__(self, sock: socket.socket, host: str, extra: bytes, index: int) -> None:
        self.sock = sock
        self.head = (
            b"POST /mcp HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream"
            b"\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n%s"
            % (host.encode(), extra)
        )
        self.rid = index * 1_000_000_000
        self.buffer = b""
        self.left = 0

    def send(self) -> None:
        self.rid += 1
        body = call_body(self.rid)
        self.sock.sendall(self.head + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def answers(self) -> int:
        """Take the complete answers out of the buffer (each checked); how many."""
        count = 0
        while True:
            head, found, rest = self.buffer.partition(b"\r\n\r\n")
            if not found:
                return count
            match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            if match is None:
                raise ServerError(f"an answer without Content-Length: {head[:200]!r}")
            length = int(match.group(1))
            if len(rest) < length:
                return count
            _check(head, rest[:length])
            self.buffer = rest[length:]
            count += 1


def _drive_concurrent(url: str, requests: int, stateful: bool) -> None:
    """``requests`` POSTs over ``CONCURRENT`` connections, each keeping one in flight."""
    host = url.split("//", 1)[1].split("/", 1)[0]
    name, _, port = host.rpartition(":")
    with contextlib.ExitStack() as stack, selectors.DefaultSelector() as selector:
        clients = []
        for index in range(CONCURRENT):
            sock = stack.enter_context(
                socket.create_connection((name, int(port)), timeout=_TIMEOUT)
            )
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            extra = _open_session(sock, host) if stateful else b""
            clients.append(_Client(sock, host, extra, index + 1))
        for client in clients:
            client.left = requests // CONCURRENT
            client.sock.setblocking(False)
            selector.register(client.sock, selectors.EVENT_READ, client)
            client.send()
        busy = len(clients)
        while busy:
            ready = selector.select(_TIMEOUT)
            if not ready:
                raise ServerError(f"no answer within {_TIMEOUT} s")
            for key, _ in ready:
                client = key.data
                chunk = client.sock.recv(65536)
                if not chunk:
                    raise ServerError("the server closed a connection")
                client.buffer += chunk
                client.left -= client.answers()
                if client.left > 0:
                    if not client.buffer:
                        client.send()
                else:
                    selector.unregister(client.sock)
                    busy -= 1


def _count(name: str, requests: int, concurrent: bool = False) -> int:
    _, mode, argv = CONTENDERS[name]
    server = HttpServerProcess(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=str(ROOT),
        timeout=_TIMEOUT,
    )
    os.environ["PYTHONHASHSEED"] = "0"  # inherited by the server
    with server:
        drive = _drive_concurrent if concurrent else _drive
        drive(server.url, requests, stateful=mode.startswith("stateful"))
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
    runs = [(name, n, together) for together in (False, True) for name in NAMES for n in (N0, N)]

    def answered(n: int, together: bool) -> int:
        return n // CONCURRENT * CONCURRENT if together else n

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = {run: pool.submit(_count, *run) for run in runs}
        per_request = {
            (name, together): (
                counts[name, N, together].result() - counts[name, N0, together].result()
            )
            / (answered(N, together) - answered(N0, together))
            for name, _, together in runs
        }
    sequential, concurrent = "1 connection", f"{CONCURRENT} connections"
    print(f"{'instructions/request':<24}{sequential:>14}{'/ bare':>8}{concurrent:>16}{'/ bare':>8}")
    print("-" * 70)
    for name in NAMES:
        row = f"{name:<24}"
        for together, width in ((False, 14), (True, 16)):
            value = per_request[name, together]
            row += f"{value:>{width},.0f}{value / per_request['bare json', together]:>8.3f}"
        print(row)
    log(f"http-icount took {time.perf_counter() - started:.0f} s")
    return 0
