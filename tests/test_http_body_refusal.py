"""Streamable HTTP: what happens to the connection after a refused request body, over a
raw socket against uvicorn on 127.0.0.1 (the server's own behaviour, not a client's).

A body over the limit is answered 413 (RFC 9110 section 15.5.14). Where the rest of it is
not worth reading (announced, or already sent, at over twice the limit; a chunked body's
end is unknown) the answer says ``connection: close`` and the server closes the socket,
even while the client goes on sending: otherwise uvicorn reads and discards the rest for
as long as the client sends. A body just over the limit is read to its end and the
connection serves the next request (closing on unread input resets the connection, which
can destroy the answer an honest client is about to read, RFC 9112 section 9.6).
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable, Iterator
from typing import Final

import anyio
import pytest

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import ACCEPT_BOTH, request

pytestmark = pytest.mark.anyio

LIMIT: Final = 64 * 1024
#: Bound on each exchange; uvicorn's keep-alive timeout (5 s) never fires here (the client
#: keeps sending, or the connection is expected to end well before it).
WITHIN: Final = 4.0


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    app = build_server().streamable_http_app(max_body_bytes=LIMIT, body_timeout=0.5)
    with running_server(app) as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def head(port: int, framing: str) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        f"content-type: application/json\r\naccept: {ACCEPT_BOTH}\r\n{framing}\r\n\r\n"
    ).encode()


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def flood(port: int, start: bytes, piece: bytes) -> tuple[bytes, bool]:
    """Send ``start``, then ``piece`` over and over (the body never ends), reading what the
    server sends, until the server ends the connection or ``WITHIN`` seconds pass.
    Returns what the server sent and whether it ended the connection."""
    deadline = time.monotonic() + WITHIN
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=WITHIN) as sock:
        sock.sendall(start)
        sock.setblocking(False)
        pending, sending = piece, True
        while (left := deadline - time.monotonic()) > 0:
            readable, writable, _ = select.select([sock], [sock] if sending else [], [], left)
            if readable:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:  # closed with our bytes unread: a reset
                    return received, True
                if not data:
                    return received, True
                received += data
            elif writable:
                try:
                    pending = pending[sock.send(pending) :] or piece  # whole pieces only
                except (BrokenPipeError, ConnectionResetError):
                    sending = False  # the server is gone; read what it sent before
    return received, False


def exchange(sock: socket.socket, data: bytes) -> bytes:
    """Send ``data`` and read one whole response (headers and Content-Length body)."""
    sock.sendall(data)
    received = b""
    while b"\r\n\r\n" not in received:
        more = sock.recv(65536)
        assert more, f"the server closed the connection: {received!r}"
        received += more
    top, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in top.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        more = sock.recv(65536)
        assert more, "the server closed the connection mid-body"
        body += more
    return top


def header_block(answer: bytes) -> bytes:
    return answer.partition(b"\r\n\r\n")[0].lower()


@pytest.mark.parametrize(
    ("framing", "piece"),
    [
        # 1 GiB announced, a few KiB sent (then more, never the whole).
        (f"content-length: {1 << 30}", b"x" * 4096),
        # Chunked: no announced end, and the client never stops.
        ("transfer-encoding: chunked", chunk(b"x" * 4096)),
    ],
    ids=["declared-1GiB", "chunked-endless"],
)
async def test_a_body_far_over_the_limit_is_answered_and_the_connection_closed(
    http: RunningServer, framing: str, piece: bytes
) -> None:
    answer, ended = await anyio.to_thread.run_sync(
        flood, http.port, head(http.port, framing), piece
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"\r\nconnection: close" in header_block(answer), answer[:400]
    assert ended, f"the server kept reading a refused body for {WITHIN} s"


def ping(sock: socket.socket, port: int) -> bytes:
    """A second request on the connection (an unknown session: 404); its answer's headers."""
    message = request(1, "ping")
    framing = f"content-length: {len(message)}\r\nmcp-session-id: no-such-session"
    return exchange(sock, head(port, framing) + message)


def over_then_ping(port: int) -> tuple[bytes, bytes]:
    """A chunked body one byte over the limit, then a second request on the same
    connection; returns both answers' headers."""
    body = b" " * (LIMIT + 1)
    chunked = b"".join(chunk(body[i : i + 4096]) for i in range(0, len(body), 4096))
    with socket.create_connection(("127.0.0.1", port), timeout=WITHIN) as sock:
        first = exchange(sock, head(port, "transfer-encoding: chunked") + chunked + b"0\r\n\r\n")
        return first, ping(sock, port)


def over_then_stall(port: int) -> tuple[bytes, bool]:
    """A chunked body past the limit (not past twice it) that then stops arriving."""
    start = head(port, "transfer-encoding: chunked") + chunk(b" " * (LIMIT + 16))
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=WITHIN) as sock:
        sock.sendall(start)
        try:
            while data := sock.recv(65536):
                received += data
        except TimeoutError:
            return received, False
    return received, True


async def test_a_body_over_the_limit_that_stalls_is_413_and_closed(http: RunningServer) -> None:
    # After the body timeout (0.5 s): the size is the answer, and the rest is not awaited.
    answer, ended = await anyio.to_thread.run_sync(over_then_stall, http.port)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"\r\nconnection: close" in header_block(answer), answer[:400]
    assert ended, f"the server kept the stalled connection for {WITHIN} s"


def declared_over_then_ping(port: int) -> tuple[bytes, bytes]:
    """A declared body over the limit (not over twice it), answered before it is sent;
    then the whole body, then a second request on the same connection."""
    size = LIMIT + LIMIT // 2
    with socket.create_connection(("127.0.0.1", port), timeout=WITHIN) as sock:
        first = exchange(sock, head(port, f"content-length: {size}"))
        sock.sendall(b" " * size)  # far more than a header block may take (16 KiB)
        return first, ping(sock, port)


@pytest.mark.parametrize(
    "scenario", [over_then_ping, declared_over_then_ping], ids=["chunked", "declared"]
)
async def test_a_body_just_over_the_limit_is_read_to_its_end_and_keeps_the_connection(
    http: RunningServer, scenario: Callable[[int], tuple[bytes, bytes]]
) -> None:
    # Declared: the rest of the refused body was counted as the next request's headers;
    # past 16 KiB the server answered 431 and closed with the upload unread, and the
    # reset destroyed the 413 before clients (httpx, mcpkit's, the official SDK's) read it.
    first, second = await anyio.to_thread.run_sync(scenario, http.port)
    assert first.startswith(b"HTTP/1.1 413"), first
    assert b"connection: close" not in first.lower(), first
    # The same connection answers the next request (an unknown session: 404).
    assert second.startswith(b"HTTP/1.1 404"), second
