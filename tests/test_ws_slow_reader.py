"""A WebSocket client that stops reading is disconnected and its session released, once a
message has waited ``send_timeout`` to be written (``server/_ws_app.py``): the backed-up
socket held the session, its handlers and their results for as long as the TCP connection
lived, on every connection slot a peer cared to open."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import LowLevelServer, RequestContext, ServerSession, WebSocketApp
from mcpkit.transports import WebSocketTransport
from mcpkit.types import Tool

from ._httpserver import running_server
from ._wsraw import raw
from .test_http_sse_legacy import INITIALIZE, INITIALIZED, LIMIT, request

pytestmark = pytest.mark.anyio

MIB = "x" * (1024 * 1024)


def flooding_server() -> LowLevelServer:
    server = LowLevelServer("flood")

    async def big(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return MIB

    server.add_tool(Tool(name="big", input_schema={"type": "object"}), big)
    return server


async def test_a_client_that_stops_reading_is_let_go() -> None:
    app = WebSocketApp(flooding_server(), send_timeout=0.5)
    ended = threading.Event()

    def closed(session: ServerSession) -> None:
        ended.set()

    app.on_session_closed = closed
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with raw(running.port) as socket:
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1
            await socket.send(INITIALIZED)
            # 64 MiB of answers, never read: far more than the socket buffers hold.
            for rid in range(2, 66):
                await socket.send(request(rid, "tools/call", {"name": "big", "arguments": {}}))
            await anyio.to_thread.run_sync(ended.wait, abandon_on_cancel=True)
            assert running.call(lambda: len(app.connections)) == 0


def test_send_timeout_must_be_positive() -> None:
    with pytest.raises(LocalProtocolError):
        WebSocketApp(LowLevelServer("x"), send_timeout=0)


# -- the client facing a slow server -------------------------------------------------------

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3


def _accept(connection: socket.socket) -> None:
    """Answer a WebSocket opening handshake (subprotocol ``mcp``)."""
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(4096)
    key = re.search(rb"(?i)sec-websocket-key: *(\S+)", head)
    assert key is not None
    digest = hashlib.sha1(key[1] + _GUID.encode()).digest()
    connection.sendall(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Protocol: mcp\r\nSec-WebSocket-Accept: "
        + base64.b64encode(digest)
        + b"\r\n\r\n"
    )


@contextmanager
def slow_server(reads_per_second: float, until: int = 0) -> Iterator[tuple[int, threading.Event]]:
    """A WebSocket peer in a thread of its own, with plain blocking sockets (an event
    loop's transport would read ahead into memory), that reads 64 KiB at a time,
    ``reads_per_second`` times a second (0: never); yields its port and an event set once
    it has read ``until`` bytes."""
    got = [0]
    read_all = threading.Event()
    done = threading.Event()
    listener = socket.socket()
    # A small receive buffer (inherited by the accepted socket): the kernel would
    # otherwise absorb tens of MiB for a peer that never reads.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            _accept(connection)
            connection.settimeout(0.1)
            while not done.is_set():
                if reads_per_second:
                    with contextlib.suppress(TimeoutError):
                        got[0] += len(connection.recv(65536))
                    if got[0] >= until:
                        read_all.set()
                done.wait(1 / reads_per_second if reads_per_second else 0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], read_all
    finally:
        done.set()
        listener.close()
        thread.join(LIMIT)


def incompressible(size: int) -> bytes:
    """A message of about ``size`` bytes that permessage-deflate cannot shrink much."""
    text = base64.b64encode(os.urandom(size * 3 // 4))
    return b'{"jsonrpc":"2.0","method":"x/y","params":{"p":"' + text + b'"}}'


@pytest.mark.usefixtures("websocket_client")
async def test_a_large_message_on_a_slow_link_is_not_cut_off() -> None:
    # 2 MiB at about 3 MiB/s takes longer than close_timeout, which used to bound it.
    message = incompressible(2**21)
    with slow_server(50, until=len(message)) as (port, read_all):
        transport = WebSocketTransport(f"ws://127.0.0.1:{port}/ws", close_timeout=0.2)
        with anyio.fail_after(LIMIT):
            async with transport.connect() as channel:
                await channel.send(message)
                await anyio.to_thread.run_sync(read_all.wait, abandon_on_cancel=True)


@pytest.mark.usefixtures("websocket_client")
async def test_a_server_that_reads_nothing_is_given_up_after_send_timeout() -> None:
    # 16 MiB: more than the client's socket buffer (4 MiB at most) and the server's hold.
    message = incompressible(16 * 2**20)
    with slow_server(0) as (port, _):
        transport = WebSocketTransport(
            f"ws://127.0.0.1:{port}/ws", send_timeout=0.3, close_timeout=0.3
        )
        with anyio.fail_after(LIMIT):
            async with transport.connect() as channel:
                with pytest.raises(anyio.BrokenResourceError):
                    await channel.send(message)
