"""The built-in runner's write deadline (``serve_http(write_timeout=...)``), over real
sockets on 127.0.0.1.

uvicorn alone waits for ever on a client that stops reading: the response's bytes stay
buffered in the server (past keep-alive: closing flushes first) and the app's next send
never returns, which holds its task and, for an MCP app, its session. The runner aborts
such a connection once nothing was taken for ``write_timeout`` seconds, and never cuts off
a client that reads slowly but steadily.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.transports import serve_http

from ._httpserver import running_server, serve_lifespan
from ._logseen import LogSeen, watching

#: Larger than what the kernel's socket buffers on loopback can absorb (a few MiB), so
#: that most of it waits in the server's own transport buffer.
BIG = 24 * 1024 * 1024
WAIT = 15.0  # the bound on every wait of these tests


class _App:
    """``GET /whole``: one response with a Content-Length, sent in one piece.
    ``GET /stream``: a chunked response in two pieces; ``second_sent`` is set once the
    second ``send`` returns (it waits while the client reads nothing)."""

    def __init__(self) -> None:
        self.second_sent = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["path"] == "/whole":
            headers = [(b"content-length", str(BIG).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"x" * BIG})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"y" * BIG, "more_body": True})
        await send({"type": "http.response.body", "body": b"z", "more_body": False})
        self.second_sent.set()


@pytest.fixture
def aborted() -> Iterator[LogSeen]:
    with watching("mcpkit.transports.http", "aborting a connection whose client read") as seen:
        yield seen


def _connect(port: int, path: str, *, small_window: bool = True) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if small_window:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connect)
    sock.settimeout(WAIT)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode())
    return sock


def _read_all(sock: socket.socket, pause: float = 0.0, until: int | None = None) -> int:
    """Read until the end of the connection, or ``until`` bytes; returns how many came."""
    total = 0
    while until is None or total < until:
        try:
            data = sock.recv(1 << 20)
        except ConnectionResetError:
            return total
        if not data:
            return total
        total += len(data)
        if pause:
            time.sleep(pause)  # pacing a slow reader, not a synchronisation
    return total


@pytest.mark.parametrize("path", ["/whole", "/stream"])
def test_a_client_that_reads_nothing_is_aborted(path: str, aborted: LogSeen) -> None:
    app = _App()
    with running_server(app, write_timeout=0.3) as http:
        with _connect(http.port, path) as sock:
            # The client reads nothing until the runner has given up on it.
            assert aborted.seen.wait(WAIT), "the runner kept a client that read nothing"
            if path == "/stream":
                # The app's waiting send returned: its task is free.
                assert app.second_sent.wait(WAIT)
            received = _read_all(sock)
        assert received < BIG, "the whole response arrived: nothing was aborted"


def test_a_slow_but_steady_reader_gets_everything(aborted: LogSeen) -> None:
    # 24 MiB taken at most 1 MiB every 30 ms: about 0.75 s in all, longer than the
    # deadline, but progress in every window of it.
    with (
        running_server(_App(), write_timeout=0.3) as http,
        _connect(http.port, "/whole", small_window=False) as sock,
    ):
        first = sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 ")
        length = first.index(b"\r\n\r\n") + 4 + BIG  # the head, then the whole body
        received = len(first) + _read_all(sock, pause=0.03, until=length - len(first))
        assert not aborted.seen.is_set()
    assert received == length


@pytest.mark.anyio
@pytest.mark.parametrize("option", ["write_timeout", "header_timeout"])
@pytest.mark.parametrize("value", [0.0, -1.0])
async def test_timeouts_must_be_positive(option: str, value: float) -> None:
    options: dict[str, Any] = {option: value}
    with pytest.raises(LocalProtocolError, match="must be positive"):
        await serve_http(_App(), port=0, **options)
