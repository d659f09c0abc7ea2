"""An SSE stream whose client takes nothing is ended by the app itself, whatever ASGI
server runs it: a write that waits longer than twice ``keepalive`` lets the stream go (its
events stay in the event store), over a real socket on 127.0.0.1.

The built-in runner's own write deadline is set out of reach here, so that only the app's
bound can end the stream (the runner's: test_http_runner_writes.py).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from mcpkit import RequestContext, Server

from ._http_testserver import GATES
from ._httpserver import running_server
from ._logseen import LogSeen, watching
from ._mcphttp import ACCEPT_BOTH, RawSession, call

pytestmark = pytest.mark.anyio

WAIT = 15.0  # the bound on every wait of these tests
#: One log message this large leaves megabytes in the server's transport buffer when the
#: client reads nothing (the kernel's socket buffers on loopback take a few).
FLOOD = 12 * 1024 * 1024


def _server() -> Server:
    server = Server("stuck-streams", "1.0")

    @server.tool()
    async def flood(ctx: RequestContext, key: str) -> str:
        """Send one very large log message on this request's stream, then wait for gate
        ``key`` (the stream stays open meanwhile)."""
        GATES.open(f"{key}:started")  # (the tool waits below: the answer is a stream)
        await GATES.wait(f"{key}:go")
        await ctx.log("error", "x" * FLOOD)
        await GATES.wait(key)
        return "flooded"

    return server


@pytest.fixture
def ended() -> Iterator[LogSeen]:
    with watching("mcpkit.server.http", "SSE client took nothing for") as seen:
        yield seen


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


async def test_a_stream_whose_client_takes_nothing_is_ended(ended: LogSeen) -> None:
    app = _server().streamable_http_app(keepalive=0.2, max_stream_buffer=64 * 1024 * 1024)
    key = "stuck-stream"
    GATES.forget(key, f"{key}:started", f"{key}:go")
    with running_server(app, write_timeout=3600) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            session = RawSession(client, url)
            await session.open()
            assert session.session_id is not None
            assert session.version is not None
            body = call(2, "flood", key=key)
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                f"accept: {ACCEPT_BOTH}\r\nmcp-session-id: {session.session_id}\r\n"
                f"mcp-protocol-version: {session.version}\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            ).encode()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connect)
                sock.settimeout(WAIT)
                sock.connect(("127.0.0.1", http.port))
                sock.sendall(head + body)
                assert GATES.get(f"{key}:started").wait(WAIT)
                GATES.open(f"{key}:go")
                # The client reads nothing: the app lets the stream go by itself.
                assert ended.seen.wait(WAIT), "the app kept a stream whose client took nothing"
            # The session and the server carry on.
            GATES.open(key)
            pong = await session.post(
                json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}).encode()
            )
            assert pong.status_code == 200
